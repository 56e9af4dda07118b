// Session 8: one launch each of the post-conv arms named on the command line (default token-tile, vec-tile) at the Qwen3.5-4B (Hk 16, Hv 32) and 27B (Hk 16, Hv 48) head
// layouts, T = 2048 and 8192 (bf16 conv_out, gates and q/k/v; f32 g and beta), for ncu.
const postconv = require('../dist/lib/ops/postconv');
const { Backend } = require('../dist/lib/backend');
const { Tensor } = require('../dist/lib/tensor');
const armsToRun = process.argv.slice(2).length ? process.argv.slice(2) : ["token-tile", "vec-tile"];
const backend = Backend.open(process.env.GDN_BACKEND || 'cuda');
for (const Hv of [32, 48]) for (const T of [2048, 8192]) {
  const dims = { Hk: 16, Hv, Dk: 128, Dv: 128 };
  const C = 2 * dims.Hk * 128 + Hv * 128;
  const packed = Tensor.random([T, 2 * Hv], 'bf16', { seed: 5 }).to(backend);
  const inputs = { convOut: Tensor.random([T, C], 'bf16', { seed: 4 }).to(backend), b: packed.sliceCols(0, Hv), a: packed.sliceCols(Hv, Hv),
    ALog: Tensor.random([Hv], 'f32', { seed: 6 }).to(backend), dtBias: Tensor.random([Hv], 'f32', { seed: 7 }).to(backend) };
  for (const arm of armsToRun) {
    const r = postconv.forwardSync(inputs, { ...dims, arm, qkvDtype: 'bf16', backend });
    console.log(`Hv ${Hv} T ${T}: ${arm} ran ${r.arm}`);
    r.release();
  }
  for (const t of [packed, inputs.convOut, inputs.ALog, inputs.dtBias]) t.release();
}
backend.synchronize?.();
console.log('profiled launches done');
