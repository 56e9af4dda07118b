// The one primitive every exactness check rests on: how many elements differ in their raw bits
// (`countMismatches` of diff.ts beside it is this same counter behind diff's argument checks);
// and the check of a rounding store against float64 rounded to nearest even (docs/TESTING.md).

import { Tensor } from '../tensor';

/** Number of positions at which two equally long word arrays differ (whole words: every bit counts). */
export function countDifferingWords(x: ArrayLike<number>, y: ArrayLike<number>): number {
  if (x.length !== y.length) throw new RangeError(`countDifferingWords: lengths differ (${x.length} vs ${y.length})`);
  let n = 0;
  for (let i = 0; i < x.length; i++) if (x[i] !== y[i]) n++;
  return n;
}

/** Number of elements whose raw bits differ (never bytes). Shapes and dtypes must match. */
export function countBitMismatches(a: Tensor, b: Tensor): number {
  if (a.dtype !== b.dtype) throw new TypeError(`countBitMismatches: dtypes differ (${a.dtype} vs ${b.dtype})`);
  if (a.shape.length !== b.shape.length || a.shape.some((d, i) => d !== b.shape[i])) {
    throw new RangeError(`countBitMismatches: shapes differ ([${a.shape}] vs [${b.shape}])`);
  }
  return countDifferingWords(a.bits(), b.bits());
}

// ------------------------------------------------------------------ rounding stores

/** Significant bits (implicit one included) and the smallest exponents of the stored formats. */
const FORMATS = {
  bf16: { precision: 8, minExp: -126, maxFinite: (2 - 2 ** -7) * 2 ** 127 },
  f16: { precision: 11, minExp: -14, maxFinite: 65504 },
  f32: { precision: 24, minExp: -126, maxFinite: (2 - 2 ** -23) * 2 ** 127 },
} as const;
export type StoredFloat = keyof typeof FORMATS;

/**
 * x (a float64) rounded to nearest, ties to even, in a float format — computed directly from the
 * double, not through f32 and not with lib/dtype's converters, so it can check them.
 * Overflow gives ±Infinity, NaN stays NaN, the sign of zero is kept.
 */
export function roundNearestEven(x: number, format: StoredFloat): number {
  if (!Number.isFinite(x) || x === 0) return x;
  const f = FORMATS[format];
  const ax = Math.abs(x);
  let e = Math.floor(Math.log2(ax));
  // log2 can be off by one near powers of two: fix e so that 2^e <= ax < 2^(e+1).
  if (2 ** e > ax) e--;
  else if (2 ** (e + 1) <= ax) e++;
  const quantumExp = Math.max(e, f.minExp) - (f.precision - 1);
  const q = ax / 2 ** quantumExp; // exact: a power-of-two scaling
  let r = Math.floor(q);
  const frac = q - r; // exact
  if (frac > 0.5 || (frac === 0.5 && r % 2 === 1)) r += 1;
  const y = r * 2 ** quantumExp;
  // Beyond the largest finite value by half an ulp or more: infinity (IEEE overflow under RNE).
  const maxUlp = 2 ** (Math.floor(Math.log2(f.maxFinite)) - (f.precision - 1));
  const out = ax >= f.maxFinite + maxUlp / 2 ? Infinity : y;
  return x < 0 ? -out : out;
}

export interface RoundingCheck {
  /** Elements whose stored value is outside [rne(ref − tol), rne(ref + tol)]. */
  violations: number;
  /** Elements equal to rne(ref) exactly. */
  exact: number;
  /** The first violations: index, stored, reference, and what rounding to nearest even gives. */
  first: { index: number; stored: number; reference: number; nearestEven: number }[];
}

/**
 * Checks a rounding store: `stored` (the values read back from a bf16/f16 output) against the
 * float64 reference rounded to nearest even. The kernels compute in f32, so their unrounded value
 * lies within tol = atol + rtol·|ref| of the reference; the store may then give any value between
 * rne(ref − tol) and rne(ref + tol) and nothing else. With tol far below the format's ulp (f32
 * errors against a bf16 ulp) that window is a single value for almost every element, so a store
 * that truncates, rounds up or rounds ties away fails on about half of them.
 */
export function checkRoundingStore(stored: ArrayLike<number>, ref: ArrayLike<number>, format: StoredFloat, rtol: number, atol: number, firstN = 5): RoundingCheck {
  if (stored.length !== ref.length) throw new RangeError(`checkRoundingStore: lengths differ (${stored.length} vs ${ref.length})`);
  const res: RoundingCheck = { violations: 0, exact: 0, first: [] };
  for (let i = 0; i < ref.length; i++) {
    const r = ref[i];
    const s = stored[i];
    const ne = roundNearestEven(r, format);
    // Object.is: the same value, NaN for NaN (a NaN reference must be stored as NaN), and -0 apart from +0
    // (a zero of the wrong sign is not exact; the window below then judges it).
    if (Object.is(s, ne)) {
      res.exact++;
      continue;
    }
    const tol = atol + rtol * Math.abs(r);
    const lo = roundNearestEven(r - tol, format);
    const hi = roundNearestEven(r + tol, format);
    if (!(s >= lo && s <= hi)) {
      res.violations++;
      if (res.first.length < firstN) res.first.push({ index: i, stored: s, reference: r, nearestEven: ne });
    }
  }
  return res;
}
