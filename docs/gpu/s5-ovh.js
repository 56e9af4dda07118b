// Where a small op's time goes on a backend: the TypeScript call, the native call alone (pre-encoded
// arguments), an empty synchronize, a trivial ABI call, and the kernel (gdn_time_ops). Session 5.
const L = require('path').join(__dirname, '..', '..', 'dist', 'lib') + '/';  // run from docs/gpu or .gpu-run
const { useBackend } = require(L + 'backend');
const { Tensor } = require(L + 'tensor');
const postconv = require(L + 'ops/postconv');
const conv = require(L + 'ops/conv');
const G = require(L + 'native/gdn');
const backend = useBackend(process.env.GDN_BACKEND || 'cuda');
const N = +(process.env.N || 2000);
const med = (a) => { const s = [...a].sort((x, y) => x - y); return s[s.length >> 1]; };
function time(label, f) {
  for (let i = 0; i < 200; i++) f();
  const ts = [];
  for (let r = 0; r < 20; r++) { const t0 = performance.now(); for (let i = 0; i < N / 20; i++) f(); ts.push((performance.now() - t0) / (N / 20) * 1e3); }
  console.log(`${label.padEnd(58)} ${med(ts).toFixed(2).padStart(8)} us/call`);
}
async function kernel(label, op) { const t = await backend.timeOps([op], { rounds: 200, flushL2: false }); console.log(`${label.padEnd(58)} ${med(t).toFixed(2).padStart(8)} us (gdn_time_ops)`); }
(async () => {
  console.log(`backend ${backend.kind}`);
  time('empty synchronize', () => backend.synchronize());
  const a = [0], b2 = [0];
  time('trivial ABI call (gdn_buffer_stats)', () => backend.lib.bufferStats(backend.native, a, b2));
  for (const [Hk, Hv] of [[1, 1], [16, 32]]) {
    const T = 8, dims = { Hk, Hv, Dk: 128, Dv: 128 }, C = 2 * Hk * 128 + Hv * 128;
    const packed = Tensor.random([T, 2 * Hv], 'bf16', { seed: 6 }).to(backend);
    const inp = { convOut: Tensor.random([T, C], 'bf16', { seed: 7 }).to(backend), b: packed.sliceCols(0, Hv), a: packed.sliceCols(Hv, Hv),
      ALog: Tensor.random([Hv], 'f32', { seed: 8 }).to(backend), dtBias: Tensor.random([Hv], 'f32', { seed: 9 }).to(backend) };
    const opts = { ...dims, arm: 'token-tile', qkvDtype: 'bf16', backend };
    const out = { q: Tensor.empty([T, Hk, 128], 'bf16', { backend }), k: Tensor.empty([T, Hk, 128], 'bf16', { backend }),
      v: Tensor.empty([T, Hv, 128], 'bf16', { backend }), g: Tensor.empty([T, Hv], 'f32', { backend }), beta: Tensor.empty([T, Hv], 'f32', { backend }) };
    const op = postconv.prepareTimed(inp, opts);
    const bytes = G.postconvArgsCodec.encode(op.args), res = G.postconvResultCodec.fresh();
    const tag = `postconv token-tile T=8 Hk=${Hk} Hv=${Hv}`;
    time(`${tag}: forwardSync, out reused`, () => postconv.forwardSync(inp, { ...opts, out }).release());
    time(`${tag}: native call only`, () => backend.check(backend.lib.postconvForwardRaw(backend.native, bytes, res), 'x'));
    await kernel(`${tag}: kernel`, op);
  }
  for (const C of [256, 8192]) {
    const T = 8, K = 4;
    const inp = { x: Tensor.random([T, C], 'bf16', { seed: 1 }).to(backend), weight: Tensor.random([C, K], 'bf16', { seed: 2 }).to(backend) };
    const full = { x: inp.x, weight: inp.weight, bias: null, queryStartLoc: [0, T], hasInitialState: null, convState: Tensor.zeros([1, C, K - 1], 'f32').to(backend) };
    const opts = { arm: 'vec', mapping: 'exact', outDtype: 'bf16', backend };
    const o = { out: Tensor.empty([T, C], 'bf16', { backend }), convState: Tensor.empty([1, C, K - 1], 'f32', { backend }) };
    const op = conv.prepareTimed(full, opts);
    const bytes = G.convArgsCodec.encode(op.args), res = G.launchContractCodec.fresh();
    const tag = `conv vec T=8 C=${C}`;
    time(`${tag}: forwardSync, out reused`, () => conv.forwardSync(full, { ...opts, out: o }).release());
    time(`${tag}: native call only`, () => backend.check(backend.lib.convForwardRaw(backend.native, bytes, res), 'x'));
    await kernel(`${tag}: kernel`, op);
  }
})().catch((e) => { console.error(e); process.exit(1); });
