// Launches the fastest exact arm of each op N times, untimed, at one bench shape (Qwen3.5-4B, T = 8192),
// so that a profiler (Nsight Compute) can report their kernel durations beside the bench's event medians
// (bench/gpu-session.sh, stage crosscheck; docs/BENCHMARKS.md, "Method"). The inputs are the bench's own
// (lib/bench/bench.ts: same seeds and layouts).
//
//   node dist/bench/launch-arms.js [N]     (GDN_BACKEND=cuda)

import { Backend } from '../lib/backend';
import { Tensor } from '../lib/tensor';
import * as conv from '../lib/ops/conv';
import * as postconv from '../lib/ops/postconv';
import * as fused from '../lib/ops/fused';

async function main(): Promise<void> {
  const n = Number(process.argv[2] ?? 10);
  if (!Number.isInteger(n) || n < 1) throw new RangeError(`N: expected a positive integer, got '${process.argv[2]}'`);
  const backend = Backend.open(process.env.GDN_BACKEND === 'host' ? 'host' : 'cuda');
  const T = 8192, Hk = 16, Hv = 32, D = 128, K = 4;
  const C = (2 * Hk + Hv) * D;
  const dims = { Hk, Hv, Dk: D, Dv: D };
  const x = Tensor.random([T, C], 'bf16', { seed: 1 }).to(backend);
  const weight = Tensor.random([C, K], 'bf16', { seed: 2, scale: 0.5 }).to(backend);
  const convState = Tensor.random([1, C, K - 1], 'f32', { seed: 3 }).to(backend);
  const packed = Tensor.random([T, 2 * Hv], 'bf16', { seed: 5 }).to(backend);
  const gates = { b: packed.sliceCols(0, Hv), a: packed.sliceCols(Hv, Hv), ALog: Tensor.random([Hv], 'f32', { seed: 6 }).to(backend), dtBias: Tensor.random([Hv], 'f32', { seed: 7 }).to(backend) };
  const convInputs = { x, weight, queryStartLoc: [0, T], hasInitialState: [false], convState };
  // Synchronous launches, from this thread: ncu 2025.3.1 could not profile a kernel launched from koffi's worker
  // thread (the async forward), as lib/profile/child.ts says.
  const runs: [string, () => { release(): void }][] = [
    ['conv stream-mufu/exact', () => conv.forwardSync(convInputs, { arm: 'stream-mufu', mapping: 'exact', outDtype: 'bf16', backend })],
    ['postconv vec-tile', () => postconv.forwardSync({ convOut: x, ...gates }, { ...dims, arm: 'vec-tile', qkvDtype: 'bf16', backend })],
    ['fused stream-mufu', () => fused.forwardSync({ ...convInputs, ...gates }, { ...dims, arm: 'stream-mufu', convDtype: 'bf16', qkvDtype: 'bf16', backend })],
  ];
  for (const [label, run] of runs) {
    for (let i = 0; i < n; i++) run().release();
    console.log(`${label}: ${n} launches at Qwen3.5-4B T=${T} on ${backend.info().name}`);
  }
}

main().catch((e) => {
  console.error(e instanceof Error ? e.message : e);
  process.exitCode = 1;
});
