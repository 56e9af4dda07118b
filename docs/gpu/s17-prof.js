// Session 17: one launch each, for ncu, of the kernels whose targets are missed (docs/BENCHMARKS.md, "Where issue 10
// stands"): fused stream-mufu and stream at Qwen3.5-4B (Hk = 16, Hv = 32), T = 8192 and 2048; conv stream-mufu
// (exact) at 4B T = 2048 and on bench conv's 32-sequence varlen batch. bf16 throughout, K = 4.
const fused = require('../../dist/lib/ops/fused');
const conv = require('../../dist/lib/ops/conv');
const { makeFusedInputs, fusedOptions } = require('../../dist/lib/check/fused');
const { varlenLengths } = require('../../dist/lib/bench/bench');
const { Backend } = require('../../dist/lib/backend');
const { Tensor } = require('../../dist/lib/tensor');
const backend = Backend.open(process.env.GDN_BACKEND || 'cuda');
for (const T of [8192, 2048])
  for (const arm of ['stream-mufu', 'stream']) {
    const c = { name: 'prof', Hk: 16, Hv: 32, K: 4, lengths: [T], initialState: null, maskDtype: 'i8', bias: false,
      xDtype: 'bf16', convDtype: 'bf16', qkvDtype: 'bf16', gateDtype: 'bf16', xRowStride: (2 * 16 + 32) * 128,
      packedWidth: 64, bOffset: 0, aOffset: 32, seed: 7 };
    const r = fused.forwardSync(makeFusedInputs(c), fusedOptions(c, backend, null, arm));
    r.release?.();
  }
const C = 8192, K = 4;
function runConv(qsl, arm) {
  const T = qsl[qsl.length - 1];
  const x = Tensor.random([T, C], 'bf16', { seed: 1 }).to(backend);
  const weight = Tensor.random([C, K], 'bf16', { seed: 2, scale: 0.5 }).to(backend);
  const convState = Tensor.zeros([qsl.length - 1, C, K - 1], 'f32').to(backend);
  const r = conv.forwardSync({ x, weight, queryStartLoc: qsl, convState }, { arm, mapping: 'exact', outDtype: 'bf16', backend });
  r.release?.();
  for (const t of [x, weight, convState]) t.release?.();
}
runConv([0, 2048], 'stream-mufu');
const qsl = [0];
for (const n of varlenLengths()) qsl.push(qsl[qsl.length - 1] + n);
runConv(qsl, 'stream-mufu');
backend.synchronize?.();
console.log('profiled launches done; varlen offsets', qsl.join(','));
