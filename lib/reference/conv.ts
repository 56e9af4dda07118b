// An independent float64 reference of the causal conv (docs/SPEC.md §3), written from the
// specification in plain TypeScript. It shares no code with libgdn: it is what the arms'
// accuracy is measured against (the arms themselves are compared with each other bit for bit).

import { Tensor } from '../tensor';

export interface ConvReferenceInputs {
  x: Tensor;
  weight: Tensor;
  bias?: Tensor | null;
  queryStartLoc: readonly number[] | Int32Array;
  hasInitialState?: readonly (number | boolean)[] | Int32Array | Int8Array | null;
  convState: Tensor;
}

export interface ConvReference {
  /** [T, C] row-major, float64. */
  out: Float64Array;
  /** [N, C, K-1] float64 (exact copies of inputs, so comparable bit for bit after rounding to f32). */
  convState: Float64Array;
}

export function convReference(inp: ConvReferenceInputs): ConvReference {
  const [T, C] = inp.x.shape;
  const K = inp.weight.shape[1];
  const x = inp.x.toFloat64();
  const w = inp.weight.toFloat64();
  const bias = inp.bias ? inp.bias.toFloat64() : null;
  const state0 = inp.convState.toFloat64();
  const qsl = Array.from(inp.queryStartLoc);
  const N = qsl.length - 1;
  const out = new Float64Array(T * C);
  const state = Float64Array.from(state0);
  for (let s = 0; s < N; s++) {
    const begin = qsl[s];
    const len = qsl[s + 1] - begin;
    const withState = !!(inp.hasInitialState && Number(inp.hasInitialState[s]));
    for (let c = 0; c < C; c++) {
      const stateBase = (s * C + c) * (K - 1);
      // Position p of the sequence: p >= 0 is token begin+p, p < 0 the old state (or zero).
      const at = (p: number): number => {
        if (p >= 0) return x[(begin + p) * C + c];
        return withState ? state0[stateBase + (K - 1) + p] : 0;
      };
      for (let t = 0; t < len; t++) {
        let acc = bias ? bias[c] : 0;
        for (let j = 0; j < K; j++) acc += w[c * K + j] * at(t - (K - 1) + j);
        out[(begin + t) * C + c] = acc / (1 + Math.exp(-acc));
      }
      if (len > 0) {
        for (let j = 0; j < K - 1; j++) state[stateBase + j] = at(len - (K - 1) + j);
      }
    }
  }
  return { out, convState: state };
}

/** Max |a - ref| and whether every element satisfies |a - ref| <= atol + rtol·|ref| (torch.allclose). */
export function maxError(actual: Float32Array | Float64Array, ref: Float64Array, rtol: number, atol: number): { maxAbs: number; maxRel: number; withinTolerance: boolean; violations: number } {
  let maxAbs = 0;
  let maxRel = 0;
  let violations = 0;
  for (let i = 0; i < ref.length; i++) {
    const d = Math.abs(actual[i] - ref[i]);
    if (!(d <= atol + rtol * Math.abs(ref[i]))) violations++;
    if (d > maxAbs || Number.isNaN(d)) maxAbs = Number.isNaN(d) ? NaN : d;
    const r = ref[i] !== 0 ? d / Math.abs(ref[i]) : 0;
    if (r > maxRel) maxRel = r;
  }
  return { maxAbs, maxRel, withinTolerance: violations === 0, violations };
}

/** Upstream causal-conv1d test tolerances (docs/DOMAIN.md §3). */
export const CONV_TOLERANCE = {
  bf16: { rtol: 1e-2, atol: 5e-2 },
  f32: { rtol: 1e-5, atol: 1e-5 },
} as const;
