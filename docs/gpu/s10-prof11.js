// Session 10: one launch each of the fused arms stream and head-tile at Qwen3.5-4B (Hk = 16, Hv = 32),
// T = 8192 and T = 2048, bf16 throughout, K = 4, for ncu.
const fused = require('../dist/lib/ops/fused');
const { makeFusedInputs, fusedOptions } = require('../dist/lib/check/fused');
const { Backend } = require('../dist/lib/backend');
const backend = Backend.open(process.env.GDN_BACKEND || 'cuda');
for (const T of [8192, 2048])
  for (const arm of ['stream', 'head-tile']) {
    const c = { name: 'prof', Hk: 16, Hv: 32, K: 4, lengths: [T], initialState: null, maskDtype: 'i8', bias: false,
      xDtype: 'bf16', convDtype: 'bf16', qkvDtype: 'bf16', gateDtype: 'bf16', xRowStride: (2 * 16 + 32) * 128,
      packedWidth: 64, bOffset: 0, aOffset: 32, seed: 7 };
    const inputs = makeFusedInputs(c);
    const r = fused.forwardSync(inputs, fusedOptions(c, backend, null, arm));
    r.release?.();
  }
backend.synchronize?.();
console.log('profiled launches done');
