// Element types and the exact conversions between them.
//
// bf16 and f16 are stored as their raw 16-bit patterns. Conversions to them round to nearest,
// ties to even (the same rule the native kernels use for their stores); conversions from them
// are exact. NaN stays NaN (quiet), ±Inf and −0 are kept.

export type DType = 'f32' | 'bf16' | 'f16' | 'i32' | 'i8';

export const DTYPES: readonly DType[] = ['f32', 'bf16', 'f16', 'i32', 'i8'];

/** Bytes per element. */
export function dtypeSize(dtype: DType): number {
  switch (dtype) {
    case 'f32':
    case 'i32':
      return 4;
    case 'bf16':
    case 'f16':
      return 2;
    case 'i8':
      return 1;
  }
}

export function isFloat(dtype: DType): boolean {
  return dtype === 'f32' || dtype === 'bf16' || dtype === 'f16';
}

/** Throws unless `value` names a dtype; `what` names the argument in the message. */
export function checkDType(value: unknown, what: string, allowed: readonly DType[] = DTYPES): DType {
  if (typeof value !== 'string' || !(allowed as readonly string[]).includes(value)) {
    throw new TypeError(`${what}: expected one of ${allowed.map((d) => `'${d}'`).join(', ')}, got ${describe(value)}`);
  }
  return value as DType;
}

/** A short description of a value for error messages. */
export function describe(value: unknown): string {
  if (typeof value === 'string') return `'${value}'`;
  if (Array.isArray(value)) return `[${value.slice(0, 8).map(describe).join(', ')}${value.length > 8 ? ', …' : ''}]`;
  if (value === null) return 'null';
  if (value === undefined) return 'undefined';
  if (typeof value === 'object') return (value as object).constructor?.name ?? 'object';
  return String(value);
}

// One scratch word viewed as f32 and u32 for bit casts.
const scratchF32 = new Float32Array(1);
const scratchU32 = new Uint32Array(scratchF32.buffer);

/** The IEEE-754 binary32 bits of x (x is first rounded to f32). */
export function f32Bits(x: number): number {
  scratchF32[0] = x;
  return scratchU32[0];
}

/** The f32 value with these bits. */
export function f32FromBits(bits: number): number {
  scratchU32[0] = bits >>> 0;
  return scratchF32[0];
}

/** f32 → bf16 bits, round to nearest even. NaN maps to a quiet NaN with the sign kept. */
export function f32ToBf16Bits(x: number): number {
  const u = f32Bits(x);
  if ((u & 0x7f800000) === 0x7f800000 && (u & 0x007fffff) !== 0) {
    return ((u >>> 16) | 0x0040) & 0xffff; // quiet NaN, top payload bits kept
  }
  const lsb = (u >>> 16) & 1;
  return ((u + 0x7fff + lsb) >>> 16) & 0xffff;
}

/** bf16 bits → the exact f32 value. */
export function bf16BitsToF32(bits: number): number {
  return f32FromBits((bits & 0xffff) << 16);
}

/**
 * bf16 bits → f32 values, a whole array at once. bf16 is the top half of an f32, so widening is a shift and exact;
 * a signalling NaN comes back quiet, with its sign and payload, always (a NaN that passes through a JS number is
 * quieted or not depending on how V8 compiled the code). A plain loop over the bits: TypedArray.from with a
 * mapping function took 24 times as long for 4M values.
 */
export function bf16ToFloat32(bits: Uint16Array): Float32Array {
  const out = new Float32Array(bits.length);
  const words = new Uint32Array(out.buffer);
  for (let i = 0; i < bits.length; i++) {
    let w = bits[i] << 16;
    if ((w & 0x7f800000) === 0x7f800000 && (w & 0x007fffff) !== 0) w |= 0x00400000;
    words[i] = w;
  }
  return out;
}

/** f32 → f16 bits, round to nearest even, with subnormals, overflow to ±Inf and quiet NaN. */
export function f32ToF16Bits(x: number): number {
  const u = f32Bits(x);
  const sign = (u >>> 16) & 0x8000;
  const exp = (u >>> 23) & 0xff;
  let mant = u & 0x007fffff;
  if (exp === 0xff) return sign | 0x7c00 | (mant !== 0 ? 0x0200 | (mant >>> 13) : 0);
  // Unbiased exponent; f16 normal range is 2^-14 .. 2^15.
  const e = exp - 127;
  if (e > 15) return sign | 0x7c00;
  if (e >= -14) {
    // Normal f16: keep 10 mantissa bits, round the 13 dropped ones to nearest even.
    let half = ((e + 15) << 10) | (mant >>> 13);
    const rest = mant & 0x1fff;
    if (rest > 0x1000 || (rest === 0x1000 && (half & 1) === 1)) half += 1; // may carry into the exponent: correct
    return sign | half;
  }
  if (e < -25) return sign; // below half the smallest subnormal: ±0
  // Subnormal f16: value = mant' · 2^-24 with the implicit bit restored.
  mant |= 0x00800000;
  const drop = -e - 1; // bits of the 24-bit significand that fall below 2^-24 (14..24)
  const kept = mant >>> drop;
  const rest = mant & ((1 << drop) - 1);
  const halfway = 1 << (drop - 1);
  let half = kept;
  if (rest > halfway || (rest === halfway && (kept & 1) === 1)) half += 1;
  return sign | half;
}

/**
 * f16 bits → f32, exact, for a whole array. Built from the bits, not through f16BitsToF32's arithmetic: a normal
 * f16 is the same sign and mantissa under an exponent rebiased from 15 to 127, a subnormal (or zero) is mant · 2^-24,
 * which f32 holds exactly; a NaN comes back quiet, with its sign and payload, the value f16BitsToF32 gives.
 */
export function f16ToFloat32(bits: Uint16Array): Float32Array {
  const out = new Float32Array(bits.length);
  const words = new Uint32Array(out.buffer);
  for (let i = 0; i < bits.length; i++) {
    const h = bits[i];
    const sign = (h & 0x8000) << 16;
    const exp = (h >>> 10) & 0x1f;
    const mant = h & 0x3ff;
    if (exp === 0x1f) words[i] = sign | 0x7f800000 | (mant !== 0 ? 0x00400000 | (mant << 13) : 0);
    else if (exp !== 0) words[i] = sign | ((exp + 112) << 23) | (mant << 13);
    else out[i] = (sign ? -mant : mant) * 2 ** -24;
  }
  return out;
}

/** f16 bits → the exact f32 value. */
export function f16BitsToF32(bits: number): number {
  const sign = bits & 0x8000 ? -1 : 1;
  const exp = (bits >>> 10) & 0x1f;
  const mant = bits & 0x3ff;
  if (exp === 0) return sign * mant * 2 ** -24;
  if (exp === 0x1f) return mant === 0 ? sign * Infinity : f32FromBits(((bits & 0x8000) << 16) | 0x7fc00000 | (mant << 13));
  return sign * (1 + mant / 1024) * 2 ** (exp - 15);
}

/** Rounds a number to the nearest value representable in dtype (floats) or checks it is an integer in range. */
export function roundTo(dtype: DType, x: number): number {
  switch (dtype) {
    case 'f32':
      return Math.fround(x);
    case 'bf16':
      return bf16BitsToF32(f32ToBf16Bits(x));
    case 'f16':
      return f16BitsToF32(f32ToF16Bits(x));
    case 'i32':
      return x | 0;
    case 'i8':
      return (x << 24) >> 24;
  }
}
