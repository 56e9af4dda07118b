// The host backend replays blocks on several threads where the order cannot matter (the forward
// schedule of correct arms; docs/BENCHMARKS.md, "Host backend"). Here: every correct conv arm and
// mapping, every update, post-conv and fused arm, gives the same bits (f32 and bf16 outputs, final state)
// on 1 thread and on 2, 3 and 8 threads; the racy mapping and explicit schedules keep their serial
// results exactly.

import { strict as assert } from 'assert';
import { Backend } from '../../lib/backend';
import { Tensor } from '../../lib/tensor';
import * as conv from '../../lib/ops/conv';
import * as postconv from '../../lib/ops/postconv';
import * as fused from '../../lib/ops/fused';
import { makeFusedInputs } from '../../lib/check/fused';
import { arms } from '../../lib/arms/table';

describe('host backend: parallel replay gives the serial bits', function () {
  this.timeout(300000);
  let b: Backend;
  before(() => {
    b = Backend.open('host');
  });
  after(() => b.close());

  const threadCounts = [2, 3, 8];
  const bits = (t: Tensor) => Array.from(t.bits());
  function mismatches(a: number[], c: number[]): number {
    let n = Math.abs(a.length - c.length);
    for (let i = 0; i < Math.min(a.length, c.length); i++) if (a[i] !== c[i]) n++;
    return n;
  }
  function withThreads<R>(n: number, f: () => R): R {
    b.setHostThreads(n);
    try {
      return f();
    } finally {
      b.setHostThreads(0);
    }
  }

  it('reports and sets its thread count', () => {
    withThreads(1, () => assert.equal(b.hostThreads(), 1));
    withThreads(2, () => assert.ok(b.hostThreads() >= 1 && b.hostThreads() <= 2));
    assert.ok(b.hostThreads() >= 1);
    assert.throws(() => b.setHostThreads(-1), /threads: expected 0/);
  });

  // Many blocks (a varlen batch, two channel tiles, a partial one) so every worker gets several.
  const lengths = [700, 1, 0, 129, 64, 65, 300];
  const T = lengths.reduce((a, x) => a + x, 0);
  const C = 1032; // vec tiles of 1024 channels: one full, one partial
  const qsl = [0];
  for (const l of lengths) qsl.push(qsl[qsl.length - 1] + l);
  const inputs = () => ({
    x: Tensor.random([T, C], 'bf16', { seed: 21 }).to(b),
    weight: Tensor.random([C, 4], 'bf16', { seed: 22, scale: 0.5 }).to(b),
    bias: Tensor.random([C], 'bf16', { seed: 23 }).to(b),
    queryStartLoc: qsl,
    hasInitialState: lengths.map((_, i) => i % 2),
    convState: Tensor.random([lengths.length, C, 3], 'f32', { seed: 24 }).to(b),
  });

  it('every correct conv arm and mapping: parallel == serial (bf16 and f32 out, final state)', () => {
    const inp = inputs();
    let checked = 0;
    for (const a of arms('conv').filter((x) => !x.mutant && !x.user)) {
      for (const mapping of a.mappings.filter((m) => m !== 'exact-racy')) {
        for (const outDtype of ['bf16', 'f32'] as const) {
          const run = () => {
            const r = conv.forwardSync(inp, { arm: a.name, mapping, outDtype, backend: b });
            const out = { out: bits(r.out), state: bits(r.convState) };
            r.release();
            return out;
          };
          const serial = withThreads(1, run);
          for (const n of threadCounts) {
            const par = withThreads(n, run);
            assert.equal(mismatches(par.out, serial.out), 0, `${a.name}/${mapping} ${outDtype} on ${n} threads: out`);
            assert.equal(mismatches(par.state, serial.state), 0, `${a.name}/${mapping} ${outDtype} on ${n} threads: state`);
          }
          checked++;
        }
      }
    }
    assert.ok(checked >= 10, `${checked} arm/mapping/dtype cases`);
    for (const t of [inp.x, inp.weight, inp.bias, inp.convState]) t.release();
  });

  it('every update arm: parallel == serial', () => {
    const B = 40;
    const x = Tensor.random([B, C], 'f32', { seed: 31 }).to(b);
    const weight = Tensor.random([C, 4], 'f32', { seed: 32 }).to(b);
    const state = Tensor.random([64, C, 3], 'f32', { seed: 33 }).to(b);
    const idx = Array.from({ length: B }, (_, i) => (i % 7 === 3 ? -1 : (i * 13) % 64));
    for (const a of arms('conv-update').filter((u) => !u.user)) {
      const run = () => {
        const r = conv.updateSync({ x, weight, state, stateIndices: idx }, { arm: a.name, outDtype: 'bf16', backend: b });
        const o = { out: bits(r.out), state: bits(r.state) };
        r.release();
        return o;
      };
      const serial = withThreads(1, run);
      for (const n of threadCounts) {
        const par = withThreads(n, run);
        assert.equal(mismatches(par.out, serial.out), 0, `update ${a.name} on ${n} threads: out`);
        assert.equal(mismatches(par.state, serial.state), 0, `update ${a.name} on ${n} threads: state`);
      }
    }
    for (const t of [x, weight, state]) t.release();
  });

  it('every post-conv arm: parallel == serial (f32 q/k/v, g, beta)', () => {
    const dims = { Hk: 2, Hv: 4, Dk: 128, Dv: 128 };
    const Tp = 200;
    const Cp = 2 * dims.Hk * dims.Dk + dims.Hv * dims.Dv;
    const pin = {
      convOut: Tensor.random([Tp, Cp], 'bf16', { seed: 41 }).to(b),
      a: Tensor.random([Tp, dims.Hv], 'f32', { seed: 42 }).to(b),
      b: Tensor.random([Tp, dims.Hv], 'f32', { seed: 43 }).to(b),
      ALog: Tensor.random([dims.Hv], 'f32', { seed: 44 }).to(b),
      dtBias: Tensor.random([dims.Hv], 'f32', { seed: 45 }).to(b),
    };
    for (const a of arms('postconv').filter((p) => !p.user)) {
      const run = () => {
        const r = postconv.forwardSync(pin, { ...dims, arm: a.name, qkvDtype: 'f32', backend: b });
        const o = [r.q, r.k, r.v, r.g, r.beta].map(bits);
        r.release();
        return o;
      };
      const serial = withThreads(1, run);
      for (const n of threadCounts) {
        const par = withThreads(n, run);
        par.forEach((p, i) => assert.equal(mismatches(p, serial[i]), 0, `post-conv ${a.name} on ${n} threads: output ${i}`));
      }
    }
    for (const t of Object.values(pin)) t.release();
  });

  it('every fused arm: parallel == serial (f32 q/k, bf16 conv rounding, g, beta, final state of a varlen batch)', () => {
    // Sequences of 0, 1, 2 (shorter than K-1) and several chunks: chunk 0's thread alone owns each
    // sequence's state (common/arms/fused_common.h), whatever block runs first.
    const c = {
      name: 'parallel', Hk: 2, Hv: 4, K: 4, lengths: [150, 0, 1, 2, 64, 65], initialState: [true, true, false, true, true, false], maskDtype: 'i8' as const, bias: true,
      xDtype: 'bf16' as const, convDtype: 'bf16' as const, qkvDtype: 'f32' as const, gateDtype: 'bf16' as const, xRowStride: 1024, packedWidth: 8, bOffset: 0, aOffset: 4, seed: 46,
    };
    const inputs = makeFusedInputs(c);
    for (const a of arms('fused').filter((p) => !p.user && !p.mutant)) {
      const run = () => {
        const r = fused.forwardSync(inputs, { Hk: c.Hk, Hv: c.Hv, Dk: 128, Dv: 128, arm: a.name, convDtype: 'bf16', qkvDtype: 'f32', backend: b });
        const o = [r.q, r.k, r.v, r.g, r.beta, r.convState].map(bits);
        r.release();
        return o;
      };
      const serial = withThreads(1, run);
      for (const n of threadCounts) {
        const par = withThreads(n, run);
        par.forEach((p, i) => assert.equal(mismatches(p, serial[i]), 0, `fused ${a.name} on ${n} threads: output ${i}`));
      }
    }
  });

  it('the racy mapping and explicit / reverse / shuffled schedules keep their serial bits', () => {
    const inp = inputs();
    const cases: conv.ConvOptions[] = [
      { arm: 'reg', mapping: 'exact-racy' },
      { arm: 'reg', mapping: 'exact-racy', schedule: 'reverse' },
      { arm: 'reg', mapping: 'exact', schedule: 'reverse' },
      { arm: 'vec', mapping: 'exact', schedule: { shuffle: 5 } },
    ];
    for (const o of cases) {
      const run = () => {
        const r = conv.forwardSync(inp, { ...o, outDtype: 'f32', backend: b });
        const out = { out: bits(r.out), state: bits(r.convState), blocks: r.contract.grid[0] * r.contract.grid[1] };
        r.release();
        return out;
      };
      const serial = withThreads(1, run);
      for (const n of [2, 8]) {
        for (let rep = 0; rep < 3; rep++) {
          const par = withThreads(n, run);
          assert.equal(mismatches(par.out, serial.out) + mismatches(par.state, serial.state), 0, `${JSON.stringify(o)} on ${n} threads, repeat ${rep}`);
        }
      }
      // An explicit order: the identity's reverse, given as a list.
      const blocks = serial.blocks;
      const order = Array.from({ length: blocks }, (_, i) => blocks - 1 - i);
      const explicit = () => {
        const r = conv.forwardSync(inp, { ...o, schedule: order, outDtype: 'f32', backend: b });
        const out = bits(r.convState);
        r.release();
        return out;
      };
      assert.deepEqual(withThreads(8, explicit), withThreads(1, explicit), `${JSON.stringify(o)} explicit order`);
    }
    // And the race is still there to find: under reverse, the last chunk of a sequence with initial
    // state overwrites the state before chunk 0 reads it as history (#305), so exact-racy's output
    // differs from exact's — on 8 threads as on 1.
    const outOf = (o: conv.ConvOptions) => withThreads(8, () => {
      const r = conv.forwardSync(inp, { ...o, outDtype: 'f32', backend: b });
      const s = bits(r.out);
      r.release();
      return s;
    });
    assert.ok(mismatches(outOf({ arm: 'reg', mapping: 'exact-racy', schedule: 'reverse' }), outOf({ arm: 'reg', mapping: 'exact' })) > 0, 'the #305 race still corrupts chunk 0 under reverse');
    for (const t of [inp.x, inp.weight, inp.bias, inp.convState]) t.release();
  });
});
