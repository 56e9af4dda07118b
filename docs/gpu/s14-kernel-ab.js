// Session 14: kernel times of one libgdn (GDN_LIBRARY) for the A/B of the plan lists in the launch
// parameters: conv stream-mufu/exact and fused stream at Qwen3.5-4B T = 8 (lists inline in the new
// library), 2048 and 8192 (lists in device memory in both), bf16, K = 4, offsets as host numbers,
// L2 flushed, ops interleaved with their order rotated, 60 rounds. Each op's bits are compared with its
// reference (conv scalar/sequence, the fused chain) before timing. Prints one JSON line.
const path = require('path');
const D = path.resolve(__dirname, '../../dist/lib') + '/';
const { Backend } = require(D + 'backend');
const { Tensor } = require(D + 'tensor');
const conv = require(D + 'ops/conv');
const fused = require(D + 'ops/fused');
const { countDifferingWords } = require(D + 'check/bits');
async function main() {
  const b = Backend.open('cuda');
  const Hk = 16, Hv = 32, Dd = 128, C = 2 * Hk * Dd + Hv * Dd;
  const ops = [], labels = [], keep = [];
  const checks = {};
  for (const T of [8, 2048, 8192]) {
    const x = Tensor.random([T, C], 'bf16', { seed: 1 }).to(b), w = Tensor.random([C, 4], 'bf16', { seed: 2, scale: 0.5 }).to(b);
    const st = Tensor.random([1, C, 3], 'f32', { seed: 3 }).to(b);
    const packed = Tensor.random([T, 2 * Hv], 'bf16', { seed: 4 }).to(b);
    const ALog = Tensor.random([Hv], 'f32', { seed: 5 }).to(b), dtBias = Tensor.random([Hv], 'f32', { seed: 6 }).to(b);
    keep.push(x, w, st, packed, ALog, dtBias);
    const cin = { x, weight: w, queryStartLoc: [0, T], convState: st };
    const copt = { arm: 'stream-mufu', mapping: 'exact', outDtype: 'bf16', backend: b };
    const ref = conv.forwardSync(cin, { ...copt, arm: 'scalar', mapping: 'sequence' }), got = conv.forwardSync(cin, copt);
    checks[`conv T=${T}`] = countDifferingWords(got.out.bits(), ref.out.bits()) + countDifferingWords(got.convState.bits(), ref.convState.bits());
    ref.release(); got.release();
    ops.push(conv.prepareTimed(cin, copt)); labels.push(`conv stream-mufu/exact T=${T}`);
    const fin = { x, weight: w, queryStartLoc: [0, T], convState: st, a: packed.sliceCols(0, Hv), b: packed.sliceCols(Hv, Hv), ALog, dtBias };
    const fopt = { Hk, Hv, Dk: Dd, Dv: Dd, arm: 'stream', convDtype: 'bf16', qkvDtype: 'bf16', backend: b };
    const fr = await fused.chain(fin, fopt), fg = fused.forwardSync(fin, fopt);
    checks[`fused T=${T}`] = ['q', 'k', 'v', 'g', 'beta', 'convState'].reduce((n, k) => n + countDifferingWords(fg[k].bits(), fr[k].bits()), 0);
    fr.release(); fg.release();
    ops.push(fused.prepareTimed(fin, fopt)); labels.push(`fused stream T=${T}`);
  }
  const rounds = 60;
  const s = await b.timeOps(ops, { rounds, flushL2: true, rotateOrder: true });
  const med = {};
  labels.forEach((l, i) => {
    const v = []; for (let r = 5; r < rounds; r++) v.push(s[r * ops.length + i]);
    v.sort((p, q) => p - q); med[l] = +v[v.length >> 1].toFixed(2);
  });
  console.log(JSON.stringify({ library: process.env.GDN_LIBRARY, build: require(D + 'backend').buildInfo().build, mismatching: checks, medianUs: med }));
  for (const o of ops) o.release();
  for (const t of keep) t.release();
}
main().catch((e) => { console.error(e); process.exit(1); });
