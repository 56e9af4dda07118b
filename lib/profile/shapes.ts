// The inputs `gdnlab profile` makes for an op when none are given: Qwen3.5-4B's layer (C = 8192 channels,
// Hk = 16 key heads and Hv = 32 value heads of 128), one sequence of T tokens without initial state, bf16
// activations; the shapes gdnlab bench times (lib/bench/bench.ts, "Qwen3.5-4B T=…").

import { Tensor } from '../tensor';
import { ProfileOp } from './job';

export const QWEN35_4B = { C: 8192, K: 4, Hk: 16, Hv: 32, Dk: 128, Dv: 128 } as const;

/** Inputs and forward options of `op` at T tokens (random values from fixed seeds). */
export function syntheticInputs(op: ProfileOp, T: number): { inputs: Record<string, unknown>; forward: Record<string, unknown> } {
  const { C, K, Hk, Hv, Dk, Dv } = QWEN35_4B;
  const seq = { queryStartLoc: [0, T], hasInitialState: [false], convState: Tensor.random([1, C, K - 1], 'f32', { seed: 3 }) };
  const gates = { a: Tensor.random([T, Hv], 'bf16', { seed: 4 }), b: Tensor.random([T, Hv], 'bf16', { seed: 5 }), ALog: Tensor.random([Hv], 'f32', { seed: 6 }), dtBias: Tensor.random([Hv], 'f32', { seed: 7 }) };
  const dims = { Hk, Hv, Dk, Dv, qkvDtype: 'bf16' };
  if (op === 'conv') return { inputs: { x: Tensor.random([T, C], 'bf16', { seed: 1 }), weight: Tensor.random([C, K], 'bf16', { seed: 2 }), ...seq }, forward: { outDtype: 'bf16' } };
  if (op === 'postconv') return { inputs: { convOut: Tensor.random([T, C], 'bf16', { seed: 1 }), ...gates }, forward: dims };
  return { inputs: { x: Tensor.random([T, C], 'bf16', { seed: 1 }), weight: Tensor.random([C, K], 'bf16', { seed: 2 }), ...seq, ...gates }, forward: { ...dims, convDtype: 'bf16' } };
}
