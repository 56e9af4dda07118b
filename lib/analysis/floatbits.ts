// Bit-level facts about the three float formats the kernels store: f32, bf16 and f16.
//
// The ordered-integer line: a float's magnitude bits, negated when the sign bit is set. Adjacent
// representable values are adjacent integers on it, so the ulp distance between two non-NaN
// values is the difference of their keys. +0 and −0 both map to 0 (0 ulp apart though their
// bits differ); the smallest subnormal is 1; ±Inf sits one step beyond ±max finite.

import { bf16BitsToF32, f16BitsToF32, f32FromBits } from '../dtype';

export type FloatDType = 'f32' | 'bf16' | 'f16';

export interface FloatFormat {
  readonly dtype: FloatDType;
  readonly bits: 16 | 32;
  readonly signMask: number;
  /** Mask of everything but the sign. */
  readonly magMask: number;
  /** Magnitude bits of Inf (exponent all ones, mantissa 0); larger magnitudes are NaN. */
  readonly infMag: number;
  readonly mantissaBits: number;
  /** The exact f32 value of a bit pattern. */
  readonly value: (bits: number) => number;
}

export const FLOAT_FORMATS: Readonly<Record<FloatDType, FloatFormat>> = {
  f32: { dtype: 'f32', bits: 32, signMask: 0x80000000, magMask: 0x7fffffff, infMag: 0x7f800000, mantissaBits: 23, value: f32FromBits },
  bf16: { dtype: 'bf16', bits: 16, signMask: 0x8000, magMask: 0x7fff, infMag: 0x7f80, mantissaBits: 7, value: bf16BitsToF32 },
  f16: { dtype: 'f16', bits: 16, signMask: 0x8000, magMask: 0x7fff, infMag: 0x7c00, mantissaBits: 10, value: f16BitsToF32 },
};

export function isFloatDType(dtype: string): dtype is FloatDType {
  return dtype === 'f32' || dtype === 'bf16' || dtype === 'f16';
}

/** Position on the ordered-integer line (meaningless for NaN patterns). */
export function orderedKey(fmt: FloatFormat, bits: number): number {
  const mag = bits & fmt.magMask;
  return (bits & fmt.signMask) !== 0 ? -mag : mag;
}

export function isNaNBits(fmt: FloatFormat, bits: number): boolean {
  return (bits & fmt.magMask) > fmt.infMag;
}

export function isInfBits(fmt: FloatFormat, bits: number): boolean {
  return (bits & fmt.magMask) === fmt.infMag;
}

/** Ulp distance between two non-NaN patterns (0 for ±0; always < 2^32, exact as a double). */
export function ulpDistance(fmt: FloatFormat, a: number, b: number): number {
  return Math.abs(orderedKey(fmt, a) - orderedKey(fmt, b));
}

/** The bit pattern as 0x-prefixed hex of the format's width. */
export function hexBits(fmt: FloatFormat, bits: number): string {
  return '0x' + (bits >>> 0).toString(16).padStart(fmt.bits / 4, '0');
}
