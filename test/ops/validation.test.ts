// Validation tested (docs/TESTING.md): written buffers that alias an input (or another output) are
// refused by every op with both argument names in the message, and every documented bound is
// tested at and just past its edge, in the library and in launchContract.

import { strict as assert } from 'assert';
import { Tensor } from '../../lib/tensor';
import { Backend } from '../../lib/backend';
import * as conv from '../../lib/ops/conv';
import * as postconv from '../../lib/ops/postconv';
import { matmulNT } from '../../lib/ops/matmul';
import { DTYPE_CODE } from '../../lib/ops/common';
import { forEachBackend } from '../backends';

interface Field {
  name: string;
  bytes: number;
  written: boolean;
}

/**
 * Lays every buffer of an op apart inside one allocation (contents copied from the real staged
 * arguments), checks that this layout runs, then moves each written buffer onto each other
 * buffer and expects a refusal naming both.
 */
function checkAliasing(b: Backend, args: Record<string, unknown>, fields: Field[], call: (args: Record<string, unknown>) => number, context: string): number {
  // One slot per buffer, each as large as the largest buffer: a written buffer moved to the start
  // of another one's slot overlaps that buffer and nothing else.
  const slot = Math.ceil(Math.max(...fields.map((f) => f.bytes)) / 256) * 256;
  const offsets = fields.map((_, i) => i * slot);
  const arena = b.alloc(fields.length * slot);
  let refused = 0;
  try {
    const apart: Record<string, unknown> = { ...args };
    fields.forEach((f, i) => {
      const src = args[f.name] as number;
      if (f.bytes > 0) b.copy(arena + offsets[i], src, f.bytes);
      apart[f.name] = arena + offsets[i];
    });
    b.check(call(apart), `${context} with every buffer apart`);
    for (const w of fields.filter((f) => f.written)) {
      for (const r of fields) {
        if (r === w || r.bytes === 0) continue;
        const aliased = { ...apart, [w.name]: apart[r.name] };
        const st = call(aliased);
        assert.notEqual(st, 0, `${context}: ${w.name} placed on ${r.name} was accepted`);
        const msg = b.lib.lastError() as string;
        assert.ok(msg.includes(w.name) && msg.includes(r.name), `${context}: ${w.name} on ${r.name}: the message does not name both: ${msg}`);
        assert.match(msg, /overlap|alias|apart/);
        refused++;
      }
    }
  } finally {
    b.free(arena);
  }
  return refused;
}

forEachBackend((backend) => {
  describe('aliasing between written buffers and inputs is refused by every op, naming both', function () {
    this.timeout(60000);

    it('conv.forward: conv_state and out against x, weight, bias, query_start_loc, has_initial_state and each other', () => {
      const b = backend();
      const C = 40;
      const K = 4;
      const inputs = {
        x: Tensor.random([12, C], 'f32', { seed: 1 }), weight: Tensor.random([C, K], 'f32', { seed: 2 }), bias: Tensor.random([C], 'f32', { seed: 3 }),
        queryStartLoc: [0, 5, 12], hasInitialState: Tensor.from([1, 0], [2], 'i32'), convState: Tensor.random([2, C, K - 1], 'f32', { seed: 4 }),
      };
      const op = conv.prepareTimed(inputs, { backend: b });
      try {
        const fields: Field[] = [
          { name: 'x', bytes: 12 * C * 4, written: false }, { name: 'weight', bytes: C * K * 4, written: false },
          { name: 'bias', bytes: C * 4, written: false }, { name: 'query_start_loc', bytes: 3 * 4, written: false },
          { name: 'has_initial_state', bytes: 2 * 4, written: false }, { name: 'conv_state', bytes: 2 * C * (K - 1) * 4, written: true },
          { name: 'out', bytes: 12 * C * 4, written: true },
        ];
        const out = [{}];
        const n = checkAliasing(b, op.args as unknown as Record<string, unknown>, fields, (a) => b.lib.convForward(b.native, a, out) as number, 'conv.forward');
        assert.equal(n, 2 * 6);
      } finally {
        op.release();
      }
    });

    it('conv.update: state and out against x, weight, bias, state_indices and each other', () => {
      const b = backend();
      const [B, C, K, slots] = [3, 40, 4, 5];
      const ts = [Tensor.random([B, C], 'f32', { seed: 5 }), Tensor.random([C, K], 'f32', { seed: 6 }), Tensor.random([C], 'f32', { seed: 7 }),
        Tensor.random([slots, C, K - 1], 'f32', { seed: 8 }), Tensor.from([4, 0, 2], [B], 'i32'), Tensor.zeros([B, C], 'f32')].map((t) => t.to(b));
      try {
        const args = {
          B, C, K, x_dtype: DTYPE_CODE.f32, out_dtype: DTYPE_CODE.f32, state_dtype: DTYPE_CODE.f32, arm: 0, num_slots: slots,
          x: ts[0].addr, weight: ts[1].addr, bias: ts[2].addr, state: ts[3].addr, state_indices: ts[4].addr, out: ts[5].addr, state_indices_host: 0,
        };
        const fields: Field[] = [
          { name: 'x', bytes: B * C * 4, written: false }, { name: 'weight', bytes: C * K * 4, written: false }, { name: 'bias', bytes: C * 4, written: false },
          { name: 'state', bytes: slots * C * (K - 1) * 4, written: true }, { name: 'state_indices', bytes: B * 4, written: false }, { name: 'out', bytes: B * C * 4, written: true },
        ];
        assert.equal(checkAliasing(b, args, fields, (a) => b.lib.convUpdate(b.native, a) as number, 'conv.update'), 2 * 5);
      } finally {
        for (const t of ts) t.release();
      }
    });

    it('post-conv: q, k, v, g, beta against conv_out, a, b, A_log, dt_bias and each other', () => {
      const b = backend();
      const s = { Hk: 1, Hv: 2, Dk: 16, Dv: 8 };
      const T = 4;
      const C = 2 * 16 + 2 * 8;
      const inputs: postconv.PostconvInputs = {
        convOut: Tensor.random([T, C], 'f32', { seed: 9 }), a: Tensor.random([T, 2], 'f32', { seed: 10 }), b: Tensor.random([T, 2], 'f32', { seed: 11 }),
        ALog: Tensor.random([2], 'f32', { seed: 12 }), dtBias: Tensor.random([2], 'f32', { seed: 13 }),
      };
      const op = postconv.prepareTimed(inputs, { ...s, backend: b });
      try {
        const fields: Field[] = [
          { name: 'conv_out', bytes: T * C * 4, written: false }, { name: 'a', bytes: T * 2 * 4, written: false }, { name: 'b', bytes: T * 2 * 4, written: false },
          { name: 'A_log', bytes: 8, written: false }, { name: 'dt_bias', bytes: 8, written: false },
          { name: 'q', bytes: T * 16 * 4, written: true }, { name: 'k', bytes: T * 16 * 4, written: true }, { name: 'v', bytes: T * 2 * 8 * 4, written: true },
          { name: 'g', bytes: T * 2 * 4, written: true }, { name: 'beta', bytes: T * 2 * 4, written: true },
        ];
        const out = [{}];
        assert.equal(checkAliasing(b, op.args as unknown as Record<string, unknown>, fields, (a) => b.lib.postconvForward(b.native, a, out) as number, 'postconv.forward'), 5 * 9);
      } finally {
        op.release();
      }
    });

    it('matmulNT: out against a and b', () => {
      const b = backend();
      const ts = [Tensor.random([3, 8], 'f32', { seed: 14 }), Tensor.random([5, 8], 'f32', { seed: 15 }), Tensor.zeros([3, 5], 'f32')].map((t) => t.to(b));
      try {
        const args = { M: 3, N: 5, Kd: 8, in_dtype: 0, out_dtype: 0, a: ts[0].addr, b: ts[1].addr, out: ts[2].addr };
        const fields: Field[] = [{ name: 'a', bytes: 96, written: false }, { name: 'b', bytes: 160, written: false }, { name: 'out', bytes: 60, written: true }];
        assert.equal(checkAliasing(b, args, fields, (a) => b.lib.matmulNT(b.native, a) as number, 'matmulNT'), 2);
      } finally {
        for (const t of ts) t.release();
      }
    });
  });

  describe('documented bounds, at and just past each edge', function () {
    this.timeout(60000);
    const convInputs = (K: number, C = 6) => ({
      x: Tensor.random([5, C], 'f32', { seed: 20 }), weight: Tensor.random([C, K], 'f32', { seed: 21 }),
      queryStartLoc: [0, 5], convState: Tensor.zeros([1, C, Math.max(K - 1, 0)], 'f32'),
    });

    it('conv.forward K: 2 and MAX_K = 8 run, 1 and 9 are refused naming weight', () => {
      for (const K of [2, conv.MAX_K]) conv.forwardSync(convInputs(K), { backend: backend() }).release();
      for (const K of [1, conv.MAX_K + 1]) assert.throws(() => conv.forwardSync(convInputs(K), { backend: backend() }), new RegExp(`weight: K = ${K} is outside the supported range 2\\.\\.8`));
    });

    it('conv.update K: 2 and 8 run, 1 and 9 are refused', async () => {
      const upd = (K: number) => conv.update({
        x: Tensor.random([2, 6], 'f32', { seed: 22 }), weight: Tensor.random([6, K], 'f32', { seed: 23 }),
        state: Tensor.zeros([2, 6, Math.max(K - 1, 0)], 'f32'), stateIndices: [1, 0],
      }, { backend: backend() });
      for (const K of [2, 8]) (await upd(K)).release();
      for (const K of [1, 9]) await assert.rejects(upd(K), /weight: K = \d is outside the supported range 2\.\.8/);
    });

    it('conv.update stateIndices: slot slots-1 and -1 run, slot = slots is refused', async () => {
      const upd = (idx: number[]) => conv.update({ x: Tensor.random([2, 6], 'f32', { seed: 24 }), weight: Tensor.random([6, 3], 'f32', { seed: 25 }), state: Tensor.zeros([3, 6, 2], 'f32'), stateIndices: idx }, { backend: backend() });
      (await upd([2, -1])).release();
      await assert.rejects(upd([3, 0]), /stateIndices\[0\]: slot 3 is outside the pool of 3 slots/);
    });

    // The host check of the slots (numbers or a host tensor) pairs a short batch's slots directly and a
    // long one's through a map: both branches, and -1 (skip) may repeat.
    it('conv.update stateIndices: a slot named twice is refused in short and long batches, as numbers or a host tensor', async () => {
      const upd = (idx: number[] | Tensor, B: number) => conv.update({
        x: Tensor.random([B, 6], 'f32', { seed: 26 }), weight: Tensor.random([6, 3], 'f32', { seed: 27 }),
        state: Tensor.zeros([40, 6, 2], 'f32'), stateIndices: idx,
      }, { backend: backend() });
      await assert.rejects(upd([4, 7, 4], 3), /stateIndices\[2\]: slot 4 is also used by sequence 0 \(two sequences cannot update one slot\)/);
      await assert.rejects(upd(Tensor.from([4, 7, 4], [3], 'i32'), 3), /stateIndices\[2\]: slot 4 is also used by sequence 0/);
      const long = Array.from({ length: 20 }, (_, i) => i);
      long[19] = 5;
      await assert.rejects(upd(long, 20), /stateIndices\[19\]: slot 5 is also used by sequence 5/);
      await assert.rejects(upd([1, 2], 3), /stateIndices: expected shape \[B=3\], got \[2\]/);
      (await upd([-1, 3, -1], 3)).release();
      long[19] = -1;
      long[18] = -1;
      (await upd(long, 20)).release();
    });

    it('conv.forward queryStartLoc: must start at 0, not decrease, end at T', () => {
      const base = convInputs(3);
      conv.forwardSync({ ...base, queryStartLoc: [0, 0, 5], convState: Tensor.zeros([2, 6, 2], 'f32') }, { backend: backend() }).release();
      assert.throws(() => conv.forwardSync({ ...base, queryStartLoc: [1, 5] }, { backend: backend() }), /queryStartLoc: must start at 0, got 1/);
      assert.throws(() => conv.forwardSync({ ...base, queryStartLoc: [0, 3, 2, 5], convState: Tensor.zeros([3, 6, 2], 'f32') }, { backend: backend() }), /queryStartLoc: must not decrease/);
      assert.throws(() => conv.forwardSync({ ...base, queryStartLoc: [0, 4] }, { backend: backend() }), /queryStartLoc: must end at T = 5/);
      // Integers outside i32 are refused by index, not wrapped (2^32 + 5 would wrap to 5, a valid end).
      assert.throws(() => conv.forwardSync({ ...base, queryStartLoc: [0, 2 ** 32 + 5] }, { backend: backend() }), /queryStartLoc\[1\]: expected an integer, got 4294967301/);
      assert.throws(() => conv.forwardSync({ ...base, hasInitialState: [2 ** 32 + 1] }, { backend: backend() }), /hasInitialState\[0\]: expected an integer, got 4294967297/);
    });

    it('post-conv Dk and Dv: 1 and 1024 run, 0 and 1025 are refused naming the argument', async () => {
      const run = (Dk: number, Dv: number) => {
        const C = 2 * Dk + Dv;
        return postconv.forward({
          convOut: Tensor.random([1, C], 'f32', { seed: 26 }), a: Tensor.zeros([1, 1], 'f32'), b: Tensor.zeros([1, 1], 'f32'),
          ALog: Tensor.zeros([1], 'f32'), dtBias: Tensor.zeros([1], 'f32'),
        }, { Hk: 1, Hv: 1, Dk, Dv, backend: backend() });
      };
      for (const [Dk, Dv] of [[1, 1], [1024, 1024]]) (await run(Dk, Dv)).release();
      await assert.rejects(run(0, 8), /Dk: expected an integer in 1\.\.1024, got 0/);
      await assert.rejects(run(8, 1025), /Dv: expected an integer in 1\.\.1024, got 1025/);
      await assert.rejects(run(1025, 8), /Dk: expected an integer in 1\.\.1024, got 1025/);
    });

    it('matmulNT: K of b must equal K of a; dtypes must agree', () => {
      const a = Tensor.random([2, 8], 'f32', { seed: 27 });
      matmulNT(a, Tensor.random([3, 8], 'f32', { seed: 28 }), { backend: backend() }).release();
      assert.throws(() => matmulNT(a, Tensor.random([3, 9], 'f32', { seed: 29 }), { backend: backend() }), /b: expected shape \[N, K=8\], got \[3, 9\]/);
      assert.throws(() => matmulNT(a, Tensor.random([3, 8], 'bf16', { seed: 30 }), { backend: backend() }), /b: expected dtype f32 \(the dtype of a\), got bf16/);
    });
  });
});

describe('launchContract bounds, at and just past each edge', () => {
  it('K: 2 and MAX_K = 8 give a contract; 1 and 9 are refused naming K', () => {
    for (const K of [2, conv.MAX_K]) assert.equal(conv.launchContract('reg', 'exact', 64, K, [0, 9]).programs, 2);
    for (const K of [1, conv.MAX_K + 1]) assert.throws(() => conv.launchContract('reg', 'exact', 64, K, [0, 9]), new RegExp(`K: expected an integer in 2\\.\\.8, got ${K}`));
    assert.throws(() => conv.launchContract('reg', 'exact', 64, 4.5, [0, 9]), /K: expected an integer/);
  });

  it('C: 1 gives a contract, 0 is refused; queryStartLoc needs two offsets', () => {
    assert.equal(conv.launchContract('scalar', 'sequence', 1, 4, [0, 3]).programs, 1);
    assert.throws(() => conv.launchContract('scalar', 'sequence', 0, 4, [0, 3]), /C: expected an integer >= 1, got 0/);
    assert.throws(() => conv.launchContract('scalar', 'sequence', 8, 4, [0]), /queryStartLoc: expected at least 2 offsets/);
    assert.throws(() => conv.launchContract('nope' as conv.ConvArm, 'exact', 8, 4, [0, 3]), /arm: expected one of 'scalar'/);
  });
});

describe('conv: a mapping the arm does not run is refused, not replaced', () => {
  const inputs = () => ({ x: Tensor.random([8, 64], 'f32', { seed: 1 }), weight: Tensor.random([64, 4], 'f32', { seed: 2 }), queryStartLoc: [0, 8], convState: Tensor.random([1, 64, 3], 'f32', { seed: 3 }) });

  it("arm 'scalar' with mapping 'exact' names the arm and the mappings it has (forward and launchContract)", () => {
    const msg = "mapping: arm 'scalar' runs 'sequence', not 'exact' (it owns whole sequences; omit mapping or pass 'sequence')";
    assert.throws(() => conv.forwardSync(inputs(), { arm: 'scalar', mapping: 'exact' }), (e: unknown) => e instanceof RangeError && e.message === msg);
    assert.throws(() => conv.launchContract('tiled', 'exact-racy', 64, 4, [0, 8]), /mapping: arm 'tiled' runs 'sequence', not 'exact-racy'/);
  });

  it("without a mapping an arm runs its own: scalar 'sequence', vec 'exact' (requested says which)", () => {
    const s = conv.forwardSync(inputs(), { arm: 'scalar' });
    assert.deepEqual([s.requested.mapping, s.contract.mapping], ['sequence', 'sequence']);
    s.release();
    const v = conv.forwardSync(inputs(), { arm: 'vec' });
    assert.deepEqual([v.requested.mapping, v.contract.mapping], ['exact', 'exact']);
    v.release();
  });
});
