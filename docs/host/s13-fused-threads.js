// Fused host replay, 1 thread vs all, interleaved in one process (4B layout, T = 256, bf16).
const { Backend } = require(require('path').resolve(__dirname, '../../dist/') + '/lib/backend');
const { Tensor } = require(require('path').resolve(__dirname, '../../dist/') + '/lib/tensor');
const fused = require(require('path').resolve(__dirname, '../../dist/') + '/lib/ops/fused');
const b = Backend.open('host');
const Hk = 16, Hv = 32, D = 128, T = 256, C = 2 * Hk * D + Hv * D;
const packed = Tensor.random([T, 2 * Hv], 'bf16', { seed: 1 });
const inp = { x: Tensor.random([T, C], 'bf16', { seed: 2 }).to(b), weight: Tensor.random([C, 4], 'bf16', { seed: 3, scale: 0.5 }).to(b),
  queryStartLoc: [0, T], convState: Tensor.random([1, C, 3], 'f32', { seed: 4 }).to(b), a: packed.sliceCols(0, Hv).to(b), b: packed.sliceCols(Hv, Hv).to(b),
  ALog: Tensor.random([Hv], 'f32', { seed: 5 }).to(b), dtBias: Tensor.random([Hv], 'f32', { seed: 6 }).to(b) };
const res = {};
for (const arm of ['head-tile', 'stream']) {
  const t = { 1: [], 0: [] }; let ref = null, mism = 0;
  for (let r = 0; r < 7; r++) for (const n of (r % 2 ? [1, 0] : [0, 1])) {
    b.setHostThreads(n); const t0 = process.hrtime.bigint();
    const o = fused.forwardSync(inp, { Hk, Hv, Dk: D, Dv: D, arm, convDtype: 'bf16', qkvDtype: 'bf16', backend: b });
    t[n].push(Number(process.hrtime.bigint() - t0) / 1e6);
    const bits = [o.q, o.k, o.v, o.g, o.beta, o.convState].map((x) => Array.from(x.bits()));
    if (!ref) ref = bits; else bits.forEach((a, i) => a.forEach((v, j) => { if (v !== ref[i][j]) mism++; }));
    o.release();
  }
  const med = (a) => a.slice().sort((x, y) => x - y)[a.length >> 1];
  res[arm] = { serial_ms: med(t[1]).toFixed(2), all_threads_ms: med(t[0]).toFixed(2), ratio: (med(t[1]) / med(t[0])).toFixed(2), mismatching_words_vs_first_run: mism };
}
b.setHostThreads(0);
console.log(JSON.stringify({ cpu: require('os').cpus()[0].model, logicalCpus: require('os').cpus().length, threads: b.hostThreads(), revision: require('child_process').execSync('git -C ' + JSON.stringify(require('path').resolve(__dirname, '../..')) + ' rev-parse --short HEAD').toString().trim(), load: require('os').loadavg(), res }, null, 1));
