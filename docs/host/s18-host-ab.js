// Session 18's single-thread A/B of the host replay (docs/BENCHMARKS.md, "Session 18"): one op called in a loop
// for a fixed time through the library in dist/ and the libgdn named by GDN_LIBRARY, on one replay thread
// (GDN_HOST_THREADS=1 keeps the other core's noise out). Qwen3.5-4B layout, T tokens, bf16. The arm's bits are
// compared with the op's reference first; an arm that differs is not timed.
//   GDN_HOST_THREADS=1 GDN_LIBRARY=... node docs/host/s18-host-ab.js postconv|fused|conv|update ARM [T] [seconds]
// update: the decode update of T sequences (B = T) over C = 8192 channels, a 16-slot f32 pool, in place, slots as numbers.
'use strict';
const lib = require('path').resolve(__dirname, '../../dist/lib');
const { Tensor } = require(lib + '/tensor');
const { Backend } = require(lib + '/backend');
const ops = { postconv: require(lib + '/ops/postconv'), fused: require(lib + '/ops/fused'), conv: require(lib + '/ops/conv') };
const [op, arm, T = 256, secs = 2] = [process.argv[2], process.argv[3], +(process.argv[4] || 256), +(process.argv[5] || 2)];
const backend = Backend.open('host');
const dims = { Hk: 16, Hv: 32, Dk: 128, Dv: 128 };
const C = 2 * dims.Hk * dims.Dk + dims.Hv * dims.Dv, K = 4;
const rand = (shape, dtype, seed, scale) => Tensor.random(shape, dtype, scale ? { seed, scale } : { seed }).to(backend);
const packed = rand([T, 2 * dims.Hv], 'bf16', 5);
const gates = { b: packed.sliceCols(0, dims.Hv), a: packed.sliceCols(dims.Hv, dims.Hv), ALog: rand([dims.Hv], 'f32', 6), dtBias: rand([dims.Hv], 'f32', 7) };
const convIn = { x: rand([T, C], 'bf16', 8), weight: rand([C, K], 'bf16', 2, 0.5), queryStartLoc: [0, T], hasInitialState: [1], convState: rand([1, C, K - 1], 'f32', 3) };
const postIn = { convOut: rand([T, C], 'bf16', 4), ...gates };
const slots = Array.from({ length: T }, (_, i) => (i * 5 + 3) % 16);
const updIn = op === 'update' ? { x: rand([T, 8192], 'bf16', 4), weight: rand([8192, K], 'bf16', 2), state: rand([16, 8192, K - 1], 'f32', 5), stateIndices: slots } : null;
const updOut = op === 'update' ? { out: Tensor.empty([T, 8192], 'bf16', { backend }) } : null;
const call = {
  postconv: () => ops.postconv.forwardSync(postIn, { ...dims, arm, qkvDtype: 'bf16', backend }),
  fused: () => ops.fused.forwardSync({ ...convIn, ...gates }, { ...dims, arm, convDtype: 'bf16', qkvDtype: 'bf16', backend }),
  conv: () => ops.conv.forwardSync(convIn, { arm, mapping: 'exact', outDtype: 'bf16', backend }),
  update: () => ops.conv.updateSync(updIn, { arm, outDtype: 'bf16', backend, inPlace: true, out: updOut }),
}[op];
if (!call) throw new Error(`op: must be postconv, fused, conv or update, got ${op}`);

// Before timing: the arm's bits against the op's reference (conv scalar; post-conv tree; fused the chain conv
// scalar -> post-conv tree; update reference, both on fresh outputs so the timed in-place pool is untouched).
const { countDifferingWords } = require(lib + '/check/bits');
const bitsOf = (r, names) => names.map((k) => r[k].bits());
const compare = (got, ref, names) => {
  const a = bitsOf(got, names), b = bitsOf(ref, names);
  got.release();
  ref.release();
  return { bad: a.reduce((m, x, i) => m + countDifferingWords(x, b[i]), 0), words: a.reduce((m, x) => m + x.length, 0) };
};
const qkvgb = ['q', 'k', 'v', 'g', 'beta'];
const check = {
  postconv: () => compare(call(), ops.postconv.forwardSync(postIn, { ...dims, arm: 'tree', qkvDtype: 'bf16', backend }), qkvgb),
  fused: () => {
    const fin = { ...convIn, ...gates }, fo = { ...dims, convDtype: 'bf16', qkvDtype: 'bf16', backend };
    return ops.fused.chain(fin, fo).then((ref) => compare(ops.fused.forwardSync(fin, { ...fo, arm }), ref, [...qkvgb, 'convState']));
  },
  conv: () => compare(call(), ops.conv.forwardSync(convIn, { arm: 'scalar', mapping: 'sequence', outDtype: 'bf16', backend }), ['out', 'convState']),
  update: () =>
    compare(ops.conv.updateSync(updIn, { arm, outDtype: 'bf16', backend }), ops.conv.updateSync(updIn, { arm: 'reference', outDtype: 'bf16', backend }), ['out', 'state']),
}[op];
Promise.resolve(check()).then(({ bad, words }) => {
  if (bad !== 0) throw new Error(`${op} ${arm}: ${bad} of ${words} words differ from the reference; not timed`);
  time(`0 of ${words} words differ from the reference`);
});

function time(checked) {
  let n = 0;
  const t0 = process.hrtime.bigint();
  while (Number(process.hrtime.bigint() - t0) < secs * 1e9) {
    call().release();
    n++;
  }
  console.log(`${op} ${arm} T=${T}: ${(Number(process.hrtime.bigint() - t0) / 1e6 / n).toFixed(3)} ms per call over ${n} calls (${checked})`);
}
