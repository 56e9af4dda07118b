// Session 14: the host replay's warp-at-a-time fibers (shuffle-only arms), A/B. One process per library;
// GDNLAB_DIST names the dist/ whose TypeScript matches it (ABI). Qwen3.5-4B layout, T = 512, bf16, one
// replay thread and all threads; median of 3 runs per arm; a hash of every output's bits, which must be
// the same in A and B. Prints one JSON line.
const path = require('path');
const crypto = require('crypto');
const D = path.resolve(process.env.GDNLAB_DIST || path.resolve(__dirname, '../../dist')) + '/lib/';
const { Backend, buildInfo } = require(D + 'backend');
const { Tensor } = require(D + 'tensor');
const fused = require(D + 'ops/fused');
const postconv = require(D + 'ops/postconv');
const b = Backend.open('host');
const Hk = 16, Hv = 32, Dd = 128, T = 512, C = 2 * Hk * Dd + Hv * Dd;
const packed = Tensor.random([T, 2 * Hv], 'bf16', { seed: 1 });
const inp = { x: Tensor.random([T, C], 'bf16', { seed: 2 }).to(b), weight: Tensor.random([C, 4], 'bf16', { seed: 3, scale: 0.5 }).to(b), queryStartLoc: [0, T],
  convState: Tensor.random([1, C, 3], 'f32', { seed: 4 }).to(b), a: packed.sliceCols(0, Hv).to(b), b: packed.sliceCols(Hv, Hv).to(b),
  ALog: Tensor.random([Hv], 'f32', { seed: 5 }).to(b), dtBias: Tensor.random([Hv], 'f32', { seed: 6 }).to(b) };
const pcIn = { convOut: Tensor.random([T, C], 'bf16', { seed: 7 }).to(b), a: inp.a, b: inp.b, ALog: inp.ALog, dtBias: inp.dtBias };
const med = (a) => a.slice().sort((x, y) => x - y)[a.length >> 1];
const res = {};
for (const threads of [1, 0]) {
  b.setHostThreads(threads);
  for (const [op, arm] of [['postconv', 'token-tile'], ['postconv', 'vec-tile'], ['fused', 'head-tile'], ['fused', 'stream']]) {
    const ts = [];
    let hash = '';
    for (let r = 0; r < 3; r++) {
      const t0 = process.hrtime.bigint();
      const o = op === 'fused'
        ? fused.forwardSync(inp, { Hk, Hv, Dk: Dd, Dv: Dd, arm, convDtype: 'bf16', qkvDtype: 'bf16', backend: b })
        : postconv.forwardSync(pcIn, { Hk, Hv, Dk: Dd, Dv: Dd, arm, qkvDtype: 'bf16', backend: b });
      ts.push(Number(process.hrtime.bigint() - t0) / 1e6);
      const h = crypto.createHash('sha256');
      for (const n of op === 'fused' ? ['q', 'k', 'v', 'g', 'beta', 'convState'] : ['q', 'k', 'v', 'g', 'beta']) h.update(Buffer.from(o[n].bits().buffer));
      hash = h.digest('hex').slice(0, 16);
      o.release();
    }
    res[`${op} ${arm}, ${threads === 1 ? '1 thread' : b.hostThreads() + ' threads'}`] = { ms: +med(ts).toFixed(2), bits: hash };
  }
}
console.log(JSON.stringify({ build: buildInfo().build, cpu: require('os').cpus()[0].model, load: require('os').loadavg().map((x) => +x.toFixed(2)), res }));
