// The one primitive every exactness check rests on: how many elements differ in their raw bits.

import { Tensor } from '../tensor';

/** Number of elements whose raw bits differ (never bytes). Shapes and dtypes must match. */
export function countBitMismatches(a: Tensor, b: Tensor): number {
  if (a.dtype !== b.dtype) throw new TypeError(`countBitMismatches: dtypes differ (${a.dtype} vs ${b.dtype})`);
  if (a.shape.length !== b.shape.length || a.shape.some((d, i) => d !== b.shape[i])) {
    throw new RangeError(`countBitMismatches: shapes differ ([${a.shape}] vs [${b.shape}])`);
  }
  const x = a.bits();
  const y = b.bits();
  let n = 0;
  for (let i = 0; i < x.length; i++) if (x[i] !== y[i]) n++;
  return n;
}
