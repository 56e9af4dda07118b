// An independent float64 reference of the post-conv step (docs/SPEC.md §6), written from the
// specification in plain TypeScript: what the arms' accuracy is measured against.

import { Tensor } from '../tensor';
import type { PostconvShape } from '../ops/postconv';

export interface PostconvReference {
  q: Float64Array;
  k: Float64Array;
  v: Float64Array;
  g: Float64Array;
  beta: Float64Array;
}

export function postconvReference(
  inp: { convOut: Tensor; a: Tensor; b: Tensor; ALog: Tensor; dtBias: Tensor },
  s: PostconvShape,
): PostconvReference {
  const T = inp.convOut.shape[0];
  const C = 2 * s.Hk * s.Dk + s.Hv * s.Dv;
  const x = inp.convOut.toFloat64();
  const a = inp.a.toFloat64();
  const b = inp.b.toFloat64();
  const ALog = inp.ALog.toFloat64();
  const dtBias = inp.dtBias.toFloat64();
  const q = new Float64Array(T * s.Hk * s.Dk);
  const k = new Float64Array(T * s.Hk * s.Dk);
  const v = new Float64Array(T * s.Hv * s.Dv);
  const g = new Float64Array(T * s.Hv);
  const beta = new Float64Array(T * s.Hv);
  const normalise = (dst: Float64Array, dstBase: number, srcBase: number, D: number) => {
    let sumsq = 0;
    for (let i = 0; i < D; i++) sumsq += x[srcBase + i] * x[srcBase + i];
    const inv = 1 / Math.sqrt(sumsq + 1e-6);
    for (let i = 0; i < D; i++) dst[dstBase + i] = x[srcBase + i] * inv;
  };
  for (let t = 0; t < T; t++) {
    for (let h = 0; h < s.Hk; h++) {
      normalise(q, (t * s.Hk + h) * s.Dk, t * C + h * s.Dk, s.Dk);
      normalise(k, (t * s.Hk + h) * s.Dk, t * C + s.Hk * s.Dk + h * s.Dk, s.Dk);
    }
    for (let h = 0; h < s.Hv; h++) {
      for (let i = 0; i < s.Dv; i++) v[(t * s.Hv + h) * s.Dv + i] = x[t * C + 2 * s.Hk * s.Dk + h * s.Dv + i];
      const z = a[t * s.Hv + h] + dtBias[h];
      const softplus = z > 20 ? z : Math.log1p(Math.exp(z));
      g[t * s.Hv + h] = -Math.exp(ALog[h]) * softplus;
      beta[t * s.Hv + h] = 1 / (1 + Math.exp(-b[t * s.Hv + h]));
    }
  }
  return { q, k, v, g, beta };
}
