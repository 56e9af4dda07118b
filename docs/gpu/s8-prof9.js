// Session 8: one launch each of the conv arms stream and stream-mufu (exact mapping) at Qwen3.5-4B T = 8192 and
// T = 2048, and stream-mufu (exact) on the 32-sequence varlen batch of 2048 tokens (bf16, K = 4), for ncu.
const conv = require('../dist/lib/ops/conv');
const { varlenLengths } = require('../dist/lib/bench/bench');
const { Backend } = require('../dist/lib/backend');
const { Tensor } = require('../dist/lib/tensor');
const backend = Backend.open(process.env.GDN_BACKEND || 'cuda');
const C = 8192, K = 4;
function run(T, qsl, arm, mapping) {
  const x = Tensor.random([T, C], 'bf16', { seed: 1 }).to(backend);
  const weight = Tensor.random([C, K], 'bf16', { seed: 2, scale: 0.5 }).to(backend);
  const convState = Tensor.zeros([qsl.length - 1, C, K - 1], 'f32').to(backend);
  const r = conv.forwardSync({ x, weight, queryStartLoc: qsl, convState }, { arm, mapping, outDtype: 'bf16', backend });
  r.release?.();
  for (const t of [x, weight, convState]) t.release?.();
}
for (const T of [8192, 2048]) for (const arm of ['stream', 'stream-mufu']) run(T, [0, T], arm, 'exact');
const lengths = varlenLengths();  // bench conv's batch: 32 sequences, 2048 tokens
const qsl = [0];
for (const n of lengths) qsl.push(qsl[qsl.length - 1] + n);
run(qsl[qsl.length - 1], qsl, 'stream-mufu', 'exact');
backend.synchronize?.();
console.log('profiled launches done; varlen offsets', qsl.join(','));
