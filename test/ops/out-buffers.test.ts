// Output buffers given through the ops' `out` option: the same bits as fresh outputs, the caller's
// tensors returned and left alive by release(), and bad buffers refused with the argument named.

import { strict as assert } from 'assert';
import { Backend } from '../../lib/backend';
import { Tensor } from '../../lib/tensor';
import * as conv from '../../lib/ops/conv';
import * as postconv from '../../lib/ops/postconv';
import * as fused from '../../lib/ops/fused';
import { matmulNT } from '../../lib/ops/matmul';
import { forEachBackend } from '../backends';

const same = (a: Tensor, b: Tensor) => assert.deepEqual(Array.from(a.bits()), Array.from(b.bits()));

forEachBackend((backendOf) => {
  describe('ops: out buffers', () => {
    let b: Backend;
    before(() => {
      b = backendOf();
    });

    const T = 24;
    const C = 64;
    const convInputs = () => ({
      x: Tensor.random([T, C], 'bf16', { seed: 1 }).to(b),
      weight: Tensor.random([C, 4], 'bf16', { seed: 2 }).to(b),
      queryStartLoc: Tensor.from([0, 10, T], [3], 'i32').to(b),
      hasInitialState: [1, 0],
      convState: Tensor.random([2, C, 3], 'f32', { seed: 3 }).to(b),
    });

    it('conv.forward writes into out.out and out.convState: fresh-output bits, caller keeps them', async () => {
      const inputs = convInputs();
      const out = Tensor.empty([T, C], 'bf16', { backend: b });
      const convState = Tensor.empty([2, C, 3], 'f32', { backend: b });
      const fresh = conv.forwardSync(inputs, { arm: 'vec', outDtype: 'bf16', backend: b });
      for (const call of ['sync', 'async', 'sync again'] as const) {
        const opts = { arm: 'vec' as const, outDtype: 'bf16' as const, backend: b, out: { out, convState } };
        const r = call === 'async' ? await conv.forward(inputs, opts) : conv.forwardSync(inputs, opts);
        assert.equal(r.out, out, `${call}: the result's out is the given tensor`);
        assert.equal(r.convState, convState);
        same(r.out, fresh.out);
        same(r.convState, fresh.convState);
        r.release();
        assert.equal(out.released, false, 'release() leaves the caller\'s buffers');
        assert.equal(convState.released, false);
      }
      same(inputs.convState, Tensor.random([2, C, 3], 'f32', { seed: 3 })); // the input state is untouched
      // Only out given: a fresh state comes back and is released by release().
      const r2 = conv.forwardSync(inputs, { arm: 'reg', outDtype: 'bf16', backend: b, out: { out } });
      same(r2.out, fresh.out);
      same(r2.convState, fresh.convState);
      r2.release();
      assert.equal(r2.convState.released, true);
      assert.equal(out.released, false);
      fresh.release();
      for (const t of [out, convState, inputs.x, inputs.weight, inputs.queryStartLoc, inputs.convState]) t.release();
    });

    it('conv.forward refuses bad out buffers, naming them', () => {
      const inputs = convInputs();
      const o = { arm: 'vec' as const, outDtype: 'bf16' as const, backend: b };
      const tryOut = (out: Record<string, unknown>, re: RegExp) => assert.throws(() => conv.forwardSync(inputs, { ...o, out: out as never }), re);
      tryOut({ out: Tensor.empty([T, C + 8], 'bf16', { backend: b }) }, /out\.out: expected shape \[24, 64\], got \[24, 72\]/);
      tryOut({ out: Tensor.empty([T, C], 'f32', { backend: b }) }, /out\.out: expected dtype bf16, got f32/);
      tryOut({ out: Tensor.zeros([T, C], 'bf16') }, /out\.out: expected a tensor on the \w+ backend of this call.*got a host tensor/);
      tryOut({ out: 5 }, /out\.out: expected a Tensor/);
      tryOut({ convState: inputs.convState }, /out\.convState: shares memory with convState/);
      tryOut({ out: inputs.x }, /out\.out: shares memory with x/);
      const both = Tensor.empty([T * C], 'bf16', { backend: b });
      const stateView = Tensor.empty([2, C, 3], 'f32', { backend: b });
      tryOut({ outs: both }, /out\.outs: not an output of conv\.forward/);
      assert.throws(() => conv.forwardSync(inputs, { ...o, inPlace: true, out: { convState: stateView } }), /out\.convState: cannot be combined with inPlace/);
      const dead = Tensor.empty([T, C], 'bf16', { backend: b });
      dead.release();
      tryOut({ out: dead }, /out\.out: tensor \[24, 64\] bf16 was released/);
      for (const t of [both, stateView, inputs.x, inputs.weight, inputs.queryStartLoc, inputs.convState]) t.release();
    });

    it('conv.update writes into out.out and out.state; a Tensor out still means initial contents', async () => {
      const B = 3;
      const x = Tensor.random([B, C], 'f32', { seed: 4 }).to(b);
      const weight = Tensor.random([C, 4], 'f32', { seed: 5 }).to(b);
      const state = Tensor.random([5, C, 3], 'f32', { seed: 6 }).to(b);
      const stateIndices = Tensor.from([4, -1, 1], [B], 'i32').to(b);
      const initial = Tensor.random([B, C], 'f32', { seed: 7 }).to(b);
      const fresh = conv.updateSync({ x, weight, state, stateIndices }, { arm: 'reg', backend: b, out: initial });
      const out = Tensor.empty([B, C], 'f32', { backend: b });
      b.copy(out.addr, initial.addr, initial.extentBytes); // the skipped row keeps what the buffer held
      const pool = Tensor.empty([5, C, 3], 'f32', { backend: b });
      const r = await conv.update({ x, weight, state, stateIndices }, { arm: 'reg', backend: b, out: { out, state: pool } });
      assert.equal(r.out, out);
      assert.equal(r.state, pool);
      same(r.out, fresh.out);
      same(r.state, fresh.state);
      r.release();
      assert.equal(out.released || pool.released, false);
      assert.throws(() => conv.updateSync({ x, weight, state, stateIndices }, { backend: b, out: { state: Tensor.empty([4, C, 3], 'f32', { backend: b }) } }), /out\.state: expected shape \[5, 64, 3\]/);
      assert.throws(() => conv.updateSync({ x, weight, state, stateIndices }, { backend: b, out: { out: x } }), /out\.out: shares memory with x/);
      fresh.release();
      for (const t of [x, weight, state, stateIndices, initial, out, pool]) t.release();
    });

    it('postconv.forward writes into any subset of q, k, v, g, beta; refuses aliasing outputs', async () => {
      const dims = { Hk: 2, Hv: 4, Dk: 16, Dv: 16 };
      const Cp = 2 * dims.Hk * dims.Dk + dims.Hv * dims.Dv;
      const inputs = {
        convOut: Tensor.random([T, Cp], 'bf16', { seed: 8 }).to(b),
        a: Tensor.random([T, dims.Hv], 'bf16', { seed: 9 }).to(b),
        b: Tensor.random([T, dims.Hv], 'bf16', { seed: 10 }).to(b),
        ALog: Tensor.random([dims.Hv], 'f32', { seed: 11 }).to(b),
        dtBias: Tensor.random([dims.Hv], 'f32', { seed: 12 }).to(b),
      };
      const opts = { ...dims, arm: 'tree' as const, qkvDtype: 'bf16' as const, backend: b };
      const fresh = await postconv.forward(inputs, opts);
      const k = Tensor.empty([T, dims.Hk, dims.Dk], 'bf16', { backend: b });
      const g = Tensor.empty([T, dims.Hv], 'f32', { backend: b });
      const r = postconv.forwardSync(inputs, { ...opts, out: { k, g } });
      assert.equal(r.k, k);
      assert.equal(r.g, g);
      for (const name of ['q', 'k', 'v', 'g', 'beta'] as const) same(r[name], fresh[name]);
      r.release();
      assert.equal(k.released || g.released, false);
      assert.equal(r.q.released, true, 'outputs the op allocated are released');
      assert.throws(() => postconv.forwardSync(inputs, { ...opts, out: { q: k, k } }), /out\.q: shares memory with out\.k/);
      assert.throws(() => postconv.forwardSync(inputs, { ...opts, out: { beta: Tensor.empty([T, dims.Hv], 'bf16', { backend: b }) } }), /out\.beta: expected dtype f32, got bf16/);
      assert.throws(() => postconv.forwardSync(inputs, { ...opts, out: { z: g } as never }), /out\.z: not an output of postconv\.forward/);
      fresh.release();
      for (const t of [k, g, ...Object.values(inputs)]) t.release();
    });

    it('fused.forward writes into any subset of q, k, v, g, beta: the fresh bits, sync and async; refuses bad buffers', async () => {
      const dims = { Hk: 1, Hv: 2, Dk: 128, Dv: 128 };
      const Cf = 2 * dims.Hk * dims.Dk + dims.Hv * dims.Dv;
      const packed = Tensor.random([T, 2 * dims.Hv], 'bf16', { seed: 20 }).to(b);
      const inputs = {
        x: Tensor.random([T, Cf], 'bf16', { seed: 21 }).to(b),
        weight: Tensor.random([Cf, 4], 'bf16', { seed: 22, scale: 0.5 }).to(b),
        queryStartLoc: Tensor.from([0, 10, T], [3], 'i32').to(b),
        hasInitialState: [1, 0],
        convState: Tensor.random([2, Cf, 3], 'f32', { seed: 23 }).to(b),
        a: packed.sliceCols(0, dims.Hv), b: packed.sliceCols(dims.Hv, dims.Hv),
        ALog: Tensor.random([dims.Hv], 'f32', { seed: 24 }).to(b),
        dtBias: Tensor.random([dims.Hv], 'f32', { seed: 25 }).to(b),
      };
      const opts = { ...dims, arm: 'stream', convDtype: 'bf16' as const, qkvDtype: 'bf16' as const, backend: b };
      const fresh = fused.forwardSync(inputs, opts);
      const q = Tensor.empty([T, dims.Hk, dims.Dk], 'bf16', { backend: b });
      const v = Tensor.empty([T, dims.Hv, dims.Dv], 'bf16', { backend: b });
      const beta = Tensor.empty([T, dims.Hv], 'f32', { backend: b });
      for (const call of ['sync', 'async'] as const) {
        const o = { ...opts, out: { q, v, beta } };
        const r = call === 'async' ? await fused.forward(inputs, o) : fused.forwardSync(inputs, o);
        assert.equal(r.q, q);
        assert.equal(r.v, v);
        assert.equal(r.beta, beta);
        for (const name of ['q', 'k', 'v', 'g', 'beta', 'convState'] as const) same(r[name], fresh[name]);
        r.release();
        assert.equal(q.released || v.released || beta.released, false, `${call}: release() leaves the caller's buffers`);
        assert.equal(r.k.released && r.g.released, true, `${call}: outputs the op allocated are released`);
      }
      assert.throws(() => fused.forwardSync(inputs, { ...opts, out: { k: q, q } }), /out\.q: shares memory with out\.k/);
      assert.throws(() => fused.forwardSync(inputs, { ...opts, out: { g: inputs.convState } }), /out\.g: expected shape \[24, 2\]/);
      assert.throws(() => fused.forwardSync(inputs, { ...opts, out: { beta: inputs.ALog } }), /out\.beta: expected shape/);
      const alias = Tensor.empty([T, dims.Hv], 'f32', { backend: b });
      assert.throws(() => fused.forwardSync(inputs, { ...opts, out: { z: alias } as never }), /out\.z: not an output of fused\.forward/);
      fresh.release();
      for (const t of [q, v, beta, alias, packed, inputs.x, inputs.weight, inputs.queryStartLoc, inputs.convState, inputs.ALog, inputs.dtBias]) t.release();
    });

    it('matmulNT writes into out.out', () => {
      const a = Tensor.random([4, 32], 'bf16', { seed: 13 }).to(b);
      const w = Tensor.random([8, 32], 'bf16', { seed: 14 }).to(b);
      const fresh = matmulNT(a, w, { backend: b });
      const out = Tensor.empty([4, 8], 'f32', { backend: b });
      const r = matmulNT(a, w, { backend: b, out: { out } });
      assert.equal(r, out);
      same(r, fresh);
      assert.throws(() => matmulNT(a, w, { backend: b, out: { out: Tensor.empty([4, 9], 'f32', { backend: b }) } }), /out\.out: expected shape \[4, 8\], got \[4, 9\]/);
      assert.throws(() => matmulNT(a, w, { backend: b, outDtype: 'bf16', out: { out } }), /out\.out: expected dtype bf16, got f32/);
      for (const t of [a, w, fresh, out]) t.release();
    });
  });
});
