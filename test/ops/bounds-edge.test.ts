// Every bound of the ops' validation at its edge (docs/TESTING.md, "Every bound at its edge"): each
// buffer argument of conv.forward, conv.update, post-conv, fused, matmul and copy is given a buffer of
// exactly the bytes its formula needs (accepted) and one element shorter (refused, naming the argument and
// the byte count); each written buffer is placed exactly touching each other argument (accepted) and one
// element into it (refused, naming both); each size and stride limit is tried at its last valid value
// (refused, if at all, for another argument) and one past (refused naming it). Strided rows (x, a, b)
// are padded, so a formula that drops the stride or counts T full rows is off by more than nothing.

import { strict as assert } from 'assert';
import { Tensor } from '../../lib/tensor';
import { Backend } from '../../lib/backend';
import * as conv from '../../lib/ops/conv';
import * as postconv from '../../lib/ops/postconv';
import * as fused from '../../lib/ops/fused';
import { DTYPE_CODE } from '../../lib/ops/common';
import { forEachBackend } from '../backends';

interface Field {
  name: string;
  bytes: number;
  /** The element size. */
  unit: number;
  written: boolean;
  /** The alignment the field needs (default its element size): fused x, q, k and v are read in 4-element vectors. */
  align?: number;
}

type Args = Record<string, unknown>;
type Call = (a: Args) => number;

/** Status and message of one raw call. */
function attempt(b: Backend, call: Call, args: Args): { ok: boolean; msg: string } {
  const st = call(args);
  return { ok: st === 0, msg: st === 0 ? '' : (b.lib.lastError() as string) };
}

/**
 * Each field alone in a buffer of exactly its bytes (accepted) and one element further in (refused with
 * "args.<name>: ... + <bytes> bytes runs past the end"). Returns the number of refusals seen.
 */
function checkExtents(b: Backend, args: Args, fields: Field[], call: Call, context: string): number {
  let refused = 0;
  for (const f of fields) {
    if (f.bytes === 0) continue;
    const exact = b.alloc(f.bytes);
    try {
      b.copy(exact, args[f.name] as number, f.bytes);
      const at = attempt(b, call, { ...args, [f.name]: exact });
      assert.equal(at.ok, true, `${context}: ${f.name} in a buffer of exactly ${f.bytes} bytes was refused: ${at.msg}`);
      // The same buffer, the argument starting one element in: its last element is one past the end.
      const past = attempt(b, call, { ...args, [f.name]: exact + f.unit });
      assert.equal(past.ok, false, `${context}: ${f.name} starting one element into a buffer of exactly ${f.bytes} bytes was accepted`);
      // A one-element buffer: the start is then the buffer's end, no longer inside it.
      const named = past.msg.includes(` + ${f.bytes} bytes runs past the end`) || (f.bytes === f.unit && past.msg.includes(`too short: need ${f.bytes} bytes`));
      assert.ok(past.msg.includes(`args.${f.name}: `) && named, `${context}: ${f.name} one element past: ${past.msg}`);
      refused++;
    } finally {
      b.free(exact);
    }
  }
  return refused;
}

/**
 * Each written field and each other field side by side in one arena, in both orders: touching
 * (accepted) and overlapping by one unit (refused naming both). Returns the refusals seen.
 */
function checkTouching(b: Backend, args: Args, fields: Field[], call: Call, context: string): number {
  let refused = 0;
  for (const w of fields.filter((f) => f.written && f.bytes > 0)) {
    for (const r of fields) {
      if (r === w || r.bytes === 0) continue;
      for (const [first, second] of [[w, r], [r, w]]) {
        // The boundary on a 16-byte multiple, so that both fields keep their alignment; the second moves
        // into the first by one aligned position (an element, or a 4-element vector).
        const end = Math.ceil(first.bytes / 16) * 16;
        const arena = b.alloc(end + second.bytes);
        try {
          const at = arena + end - first.bytes;
          b.copy(at, args[first.name] as number, first.bytes);
          b.copy(arena + end, args[second.name] as number, second.bytes);
          const touching = attempt(b, call, { ...args, [first.name]: at, [second.name]: arena + end });
          assert.equal(touching.ok, true, `${context}: ${first.name} ending where ${second.name} begins was refused: ${touching.msg}`);
          const into = attempt(b, call, { ...args, [first.name]: at, [second.name]: arena + end - (second.align ?? second.unit) });
          assert.equal(into.ok, false, `${context}: ${second.name} starting one element inside ${first.name} was accepted`);
          assert.ok(into.msg.includes(w.name) && into.msg.includes(r.name) && /overlap/.test(into.msg), `${context}: ${second.name} one element into ${first.name}: ${into.msg}`);
          refused++;
        } finally {
          b.free(arena);
        }
      }
    }
  }
  return refused;
}

/**
 * A size or stride limit: `last` passes this check (the call may still be refused, for another
 * argument, as a huge size is), `past` is refused naming `name`.
 */
function checkLimit(b: Backend, call: Call, args: Args, name: string, patch: (v: number) => Args, last: number, past: number, context: string): void {
  const at = attempt(b, call, { ...args, ...patch(last) });
  assert.ok(at.ok || !at.msg.startsWith(`args.${name}:`), `${context}: ${name} = ${last} (its last valid value) was refused for itself: ${at.msg}`);
  const beyond = attempt(b, call, { ...args, ...patch(past) });
  assert.equal(beyond.ok, false, `${context}: ${name} = ${past} was accepted`);
  assert.ok(beyond.msg.includes(`args.${name}`), `${context}: ${name} = ${past}: the message does not name args.${name}: ${beyond.msg}`);
}

forEachBackend((backend, kind) => {
  describe('op validation at the edge of every bound', function () {
    this.timeout(120000);

    for (const dt of ['f32', 'bf16'] as const) {
      it(`conv.forward (${dt}): every buffer's extent with a padded x row stride, every overlap, every limit`, () => {
        const b = backend();
        const [T, S, C, K, N] = [5, 9, 6, 4, 2];
        const es = dt === 'f32' ? 4 : 2;
        const inputs: conv.ConvInputs = {
          x: Tensor.random([T, S], dt, { seed: 1 }).sliceCols(0, C), weight: Tensor.random([C, K], dt, { seed: 2 }), bias: Tensor.random([C], dt, { seed: 3 }),
          queryStartLoc: Tensor.from([0, 2, T], [N + 1], 'i32'), hasInitialState: Tensor.from([1, 0], [N], 'i32'), convState: Tensor.random([N, C, K - 1], 'f32', { seed: 4 }),
        };
        const op = conv.prepareTimed(inputs, { backend: b, outDtype: dt });
        try {
          const args = op.args as unknown as Args;
          assert.equal(args.x_row_stride, S);
          const fields: Field[] = [
            { name: 'x', bytes: ((T - 1) * S + C) * es, unit: es, written: false }, { name: 'weight', bytes: C * K * es, unit: es, written: false },
            { name: 'bias', bytes: C * es, unit: es, written: false }, { name: 'query_start_loc', bytes: args.query_start_loc ? (N + 1) * 4 : 0, unit: 4, written: false },
            { name: 'has_initial_state', bytes: N * 4, unit: 4, written: false }, { name: 'conv_state', bytes: N * C * (K - 1) * 4, unit: 4, written: true },
            { name: 'out', bytes: T * C * es, unit: es, written: true },
          ];
          const out = [{}];
          const call: Call = (a) => b.lib.convForward(b.native, a, out) as number;
          assert.equal(checkExtents(b, args, fields, call, 'conv.forward'), fields.filter((f) => f.bytes > 0).length);
          assert.equal(checkTouching(b, args, fields, call, 'conv.forward'), 2 * 2 * (fields.filter((f) => f.bytes > 0).length - 1));
          if (dt === 'bf16') return;
          checkLimit(b, call, args, 'x_row_stride', (v) => ({ x_row_stride: v }), C, C - 1, 'conv.forward');
          checkLimit(b, call, args, 'x_row_stride', (v) => ({ x_row_stride: v }), 2 ** 31, 2 ** 31 + 1, 'conv.forward');
          checkLimit(b, call, args, 'K', (v) => ({ K: v }), 2, 1, 'conv.forward');
          checkLimit(b, call, args, 'K', (v) => ({ K: v }), conv.MAX_K, conv.MAX_K + 1, 'conv.forward');
          checkLimit(b, call, args, 'C', (v) => ({ C: v, x_row_stride: Math.max(v, 1) }), 1, 0, 'conv.forward');
          checkLimit(b, call, args, 'C', (v) => ({ C: v, x_row_stride: v }), 2 ** 30, 2 ** 30 + 1, 'conv.forward');
          checkLimit(b, call, args, 'T', (v) => ({ T: v }), 0, -1, 'conv.forward');
          checkLimit(b, call, args, 'T', (v) => ({ T: v }), 2 ** 31 - 1, 2 ** 31, 'conv.forward');
          checkLimit(b, call, args, 'num_seqs', (v) => ({ num_seqs: v }), 1, 0, 'conv.forward');
          checkLimit(b, call, args, 'widen_cycles', (v) => ({ widen_cycles: v }), 0, -1, 'conv.forward');
          checkLimit(b, call, args, 'mapping', (v) => ({ mapping: v }), 2, 3, 'conv.forward');
          // The host replays blocks in any order (0 forward … 3 explicit; 3 needs an order, so 2 is the last a bare
          // schedule can name); the CUDA backend runs them in the hardware's order and takes FORWARD (0) only.
          const [lastKind, pastKind] = kind === 'cuda' ? [0, 1] : [2, 4];
          checkLimit(b, call, args, 'schedule.kind', (v) => ({ schedule: { kind: v, order_len: 0, seed: 0, order: 0 } }), lastKind, pastKind, 'conv.forward');
        } finally {
          op.release();
        }
      });
    }

    it('conv.update: every buffer\'s extent, every overlap, B, num_slots and the slots at their edges', () => {
      const b = backend();
      const [B, C, K, slots] = [3, 6, 4, 5];
      const ts = [Tensor.random([B, C], 'f32', { seed: 5 }), Tensor.random([C, K], 'f32', { seed: 6 }), Tensor.random([C], 'f32', { seed: 7 }),
        Tensor.random([slots, C, K - 1], 'f32', { seed: 8 }), Tensor.from([4, 0, 2], [B], 'i32'), Tensor.zeros([B, C], 'f32')].map((t) => t.to(b));
      try {
        const args: Args = {
          B, C, K, x_dtype: DTYPE_CODE.f32, out_dtype: DTYPE_CODE.f32, state_dtype: DTYPE_CODE.f32, arm: 0, num_slots: slots,
          x: ts[0].addr, weight: ts[1].addr, bias: ts[2].addr, state: ts[3].addr, state_indices: ts[4].addr, out: ts[5].addr, state_indices_host: 0,
        };
        const fields: Field[] = [
          { name: 'x', bytes: B * C * 4, unit: 4, written: false }, { name: 'weight', bytes: C * K * 4, unit: 4, written: false }, { name: 'bias', bytes: C * 4, unit: 4, written: false },
          { name: 'state', bytes: slots * C * (K - 1) * 4, unit: 4, written: true }, { name: 'state_indices', bytes: B * 4, unit: 4, written: false }, { name: 'out', bytes: B * C * 4, unit: 4, written: true },
        ];
        const call: Call = (a) => b.lib.convUpdate(b.native, a) as number;
        assert.equal(checkExtents(b, args, fields, call, 'conv.update'), 6);
        assert.equal(checkTouching(b, args, fields, call, 'conv.update'), 2 * 2 * 5);
        checkLimit(b, call, args, 'B', (v) => ({ B: v }), 1, 0, 'conv.update');
        checkLimit(b, call, args, 'B', (v) => ({ B: v }), 65535, 65536, 'conv.update');
        checkLimit(b, call, args, 'num_slots', (v) => ({ num_slots: v }), 1, 0, 'conv.update');
        checkLimit(b, call, args, 'num_slots', (v) => ({ num_slots: v }), 2 ** 31 - 1, 2 ** 31, 'conv.update');
        checkLimit(b, call, args, 'C', (v) => ({ C: v }), 2 ** 30, 2 ** 30 + 1, 'conv.update');
        // The slots: num_slots - 1 is a slot of the pool, num_slots is not.
        b.upload(ts[4].addr, new Uint8Array(new Int32Array([slots - 1, 0, 2]).buffer));
        assert.equal(attempt(b, call, args).ok, true);
        b.upload(ts[4].addr, new Uint8Array(new Int32Array([slots, 0, 2]).buffer));
        const bad = attempt(b, call, args);
        assert.equal(bad.ok, false);
        assert.match(bad.msg, new RegExp(`args\\.state_indices: entry 0 = ${slots} is not a slot of the pool \\(num_slots = ${slots}\\)`));
      } finally {
        for (const t of ts) t.release();
      }
    });

    it('post-conv: every buffer\'s extent with padded a and b rows, every overlap, every limit', () => {
      const b = backend();
      const s = { Hk: 1, Hv: 2, Dk: 16, Dv: 8 };
      const [T, AS, BS] = [4, 7, 5];
      const C = 2 * s.Hk * s.Dk + s.Hv * s.Dv;
      const inputs: postconv.PostconvInputs = {
        convOut: Tensor.random([T, C], 'f32', { seed: 9 }), a: Tensor.random([T, AS], 'f32', { seed: 10 }).sliceCols(0, s.Hv),
        b: Tensor.random([T, BS], 'f32', { seed: 11 }).sliceCols(0, s.Hv), ALog: Tensor.random([s.Hv], 'f32', { seed: 12 }), dtBias: Tensor.random([s.Hv], 'f32', { seed: 13 }),
      };
      const op = postconv.prepareTimed(inputs, { ...s, backend: b });
      try {
        const args = op.args as unknown as Args;
        assert.deepEqual([args.a_row_stride, args.b_row_stride], [AS, BS]);
        const fields: Field[] = [
          { name: 'conv_out', bytes: T * C * 4, unit: 4, written: false }, { name: 'a', bytes: ((T - 1) * AS + s.Hv) * 4, unit: 4, written: false },
          { name: 'b', bytes: ((T - 1) * BS + s.Hv) * 4, unit: 4, written: false }, { name: 'A_log', bytes: s.Hv * 4, unit: 4, written: false },
          { name: 'dt_bias', bytes: s.Hv * 4, unit: 4, written: false }, { name: 'q', bytes: T * s.Hk * s.Dk * 4, unit: 4, written: true },
          { name: 'k', bytes: T * s.Hk * s.Dk * 4, unit: 4, written: true }, { name: 'v', bytes: T * s.Hv * s.Dv * 4, unit: 4, written: true },
          { name: 'g', bytes: T * s.Hv * 4, unit: 4, written: true }, { name: 'beta', bytes: T * s.Hv * 4, unit: 4, written: true },
        ];
        const out = [{}];
        const call: Call = (a) => b.lib.postconvForward(b.native, a, out) as number;
        assert.equal(checkExtents(b, args, fields, call, 'postconv'), 10);
        assert.equal(checkTouching(b, args, fields, call, 'postconv'), 5 * 2 * 9);
        checkLimit(b, call, args, 'a_row_stride', (v) => ({ a_row_stride: v }), s.Hv, s.Hv - 1, 'postconv');
        checkLimit(b, call, args, 'b_row_stride', (v) => ({ b_row_stride: v }), s.Hv, s.Hv - 1, 'postconv');
        checkLimit(b, call, args, 'T', (v) => ({ T: v }), 0, -1, 'postconv');
        checkLimit(b, call, args, 'T', (v) => ({ T: v }), 2 ** 31 - 1, 2 ** 31, 'postconv');
        checkLimit(b, call, args, 'Hk', (v) => ({ Hk: v, Hv: 2 * Math.max(v, 1) }), 1, 0, 'postconv');
        checkLimit(b, call, args, 'Hv', (v) => ({ Hv: v }), 1, 0, 'postconv');
        // 2·Hk + Hv + 1 head slots fit one grid dimension (65535): Hk = 1, Hv = 65532 is the last.
        checkLimit(b, call, args, 'Hk, args.Hv', (v) => ({ Hv: v, a_row_stride: v, b_row_stride: v }), 65532, 65533, 'postconv');
        checkLimit(b, call, args, 'Dk', (v) => ({ Dk: v }), 1024, 1025, 'postconv');
        checkLimit(b, call, args, 'Dv', (v) => ({ Dv: v }), 1, 0, 'postconv');
      } finally {
        op.release();
      }
    });

    it('fused: every buffer\'s extent with a padded x row stride, every overlap, every limit', () => {
      const b = backend();
      const s = { Hk: 1, Hv: 1, Dk: 128, Dv: 128 };
      const C = 3 * 128;
      const [T, XS, AS, BS, K, N] = [3, C + 4, 3, 2, 4, 2];
      const inputs: fused.FusedInputs = {
        x: Tensor.random([T, XS], 'f32', { seed: 14 }).sliceCols(0, C), weight: Tensor.random([C, K], 'f32', { seed: 15 }), bias: Tensor.random([C], 'f32', { seed: 16 }),
        queryStartLoc: Tensor.from([0, 1, T], [N + 1], 'i32'), hasInitialState: Tensor.from([1, 0], [N], 'i32'), convState: Tensor.random([N, C, K - 1], 'f32', { seed: 17 }),
        a: Tensor.random([T, AS], 'f32', { seed: 18 }).sliceCols(0, 1), b: Tensor.random([T, BS], 'f32', { seed: 19 }).sliceCols(0, 1),
        ALog: Tensor.random([1], 'f32', { seed: 20 }), dtBias: Tensor.random([1], 'f32', { seed: 21 }),
      };
      const op = fused.prepareTimed(inputs, { ...s, backend: b });
      try {
        const args = op.args as unknown as Args;
        assert.deepEqual([args.x_row_stride, args.a_row_stride, args.b_row_stride], [XS, AS, BS]);
        const fields: Field[] = [
          { name: 'x', bytes: ((T - 1) * XS + C) * 4, unit: 4, align: 16, written: false }, { name: 'weight', bytes: C * K * 4, unit: 4, written: false },
          { name: 'bias', bytes: C * 4, unit: 4, written: false }, { name: 'query_start_loc', bytes: args.query_start_loc ? (N + 1) * 4 : 0, unit: 4, written: false },
          { name: 'has_initial_state', bytes: N * 4, unit: 4, written: false }, { name: 'a', bytes: ((T - 1) * AS + 1) * 4, unit: 4, written: false },
          { name: 'b', bytes: ((T - 1) * BS + 1) * 4, unit: 4, written: false }, { name: 'A_log', bytes: 4, unit: 4, written: false },
          { name: 'dt_bias', bytes: 4, unit: 4, written: false }, { name: 'conv_state', bytes: N * C * (K - 1) * 4, unit: 4, written: true },
          { name: 'q', bytes: T * 128 * 4, unit: 4, align: 16, written: true }, { name: 'k', bytes: T * 128 * 4, unit: 4, align: 16, written: true },
          { name: 'v', bytes: T * 128 * 4, unit: 4, align: 16, written: true }, { name: 'g', bytes: T * 4, unit: 4, written: true }, { name: 'beta', bytes: T * 4, unit: 4, written: true },
        ];
        const out = [{}];
        const call: Call = (a) => b.lib.fusedForward(b.native, a, out) as number;
        const live = fields.filter((f) => f.bytes > 0).length;
        assert.equal(checkExtents(b, args, fields, call, 'fused'), live);
        // Every written field against every other, in both orders.
        assert.equal(checkTouching(b, args, fields, call, 'fused'), 6 * 2 * (live - 1));
        checkLimit(b, call, args, 'x_row_stride', (v) => ({ x_row_stride: v }), C, C - 4, 'fused');
        checkLimit(b, call, args, 'x_row_stride', (v) => ({ x_row_stride: v }), 2 ** 31, 2 ** 31 + 4, 'fused');
        checkLimit(b, call, args, 'x_row_stride', (v) => ({ x_row_stride: v }), C + 4, C + 1, 'fused');
        checkLimit(b, call, args, 'a_row_stride', (v) => ({ a_row_stride: v }), 1, 0, 'fused');
        checkLimit(b, call, args, 'b_row_stride', (v) => ({ b_row_stride: v }), 1, 0, 'fused');
        checkLimit(b, call, args, 'K', (v) => ({ K: v }), 8, 9, 'fused');
        checkLimit(b, call, args, 'K', (v) => ({ K: v }), 2, 1, 'fused');
        checkLimit(b, call, args, 'T', (v) => ({ T: v }), 2 ** 31 - 1, 2 ** 31, 'fused');
        checkLimit(b, call, args, 'num_seqs', (v) => ({ num_seqs: v }), 1, 0, 'fused');
        checkLimit(b, call, args, 'Hk, args.Hv', (v) => ({ Hv: v }), 65532, 65533, 'fused');
        checkLimit(b, call, args, 'Dk', (v) => ({ Dk: v }), 128, 127, 'fused');
        checkLimit(b, call, args, 'Dv', (v) => ({ Dv: v }), 128, 129, 'fused');
      } finally {
        op.release();
      }
    });

    it('matmulNT: a, b and out extents, out touching a and b, M, N and Kd limits', () => {
      const b = backend();
      const [M, N, Kd] = [3, 5, 8];
      const ts = [Tensor.random([M, Kd], 'f32', { seed: 22 }), Tensor.random([N, Kd], 'f32', { seed: 23 }), Tensor.zeros([M, N], 'f32')].map((t) => t.to(b));
      try {
        const args: Args = { M, N, Kd, in_dtype: 0, out_dtype: 0, a: ts[0].addr, b: ts[1].addr, out: ts[2].addr };
        const fields: Field[] = [{ name: 'a', bytes: M * Kd * 4, unit: 4, written: false }, { name: 'b', bytes: N * Kd * 4, unit: 4, written: false }, { name: 'out', bytes: M * N * 4, unit: 4, written: true }];
        const call: Call = (a) => b.lib.matmulNT(b.native, a) as number;
        assert.equal(checkExtents(b, args, fields, call, 'matmulNT'), 3);
        assert.equal(checkTouching(b, args, fields, call, 'matmulNT'), 4);
        for (const dim of ['M', 'N', 'Kd']) checkLimit(b, call, args, dim, (v) => ({ [dim]: v }), 1, 0, 'matmulNT');
        for (const dim of ['N', 'Kd']) checkLimit(b, call, args, dim, (v) => ({ [dim]: v }), 2 ** 24, 2 ** 24 + 1, 'matmulNT');
        // M is bounded by the grid first: 65535 row tiles of 16.
        checkLimit(b, call, args, 'M', (v) => ({ M: v }), 65535 * 16, 65535 * 16 + 1, 'matmulNT');
      } finally {
        for (const t of ts) t.release();
      }
    });

    it('copy (timed op): src and dst at their buffers\' ends, touching, and one byte into each other', async () => {
      const b = backend();
      const bytes = 64;
      const arena = b.alloc(2 * bytes);
      const copyOp = (src: number, dst: number, n = bytes) => b.timeOps([{ kind: 'copy', args: { src, dst, bytes: n }, label: 'copy' }], { rounds: 1, flushL2: false });
      try {
        await copyOp(arena, arena + bytes);
        await copyOp(arena + bytes, arena);
        await assert.rejects(copyOp(arena, arena + bytes + 1), /copy\.dst: .* \+ 64 bytes runs past the end/);
        await assert.rejects(copyOp(arena + bytes + 1, arena), /copy\.src: .* \+ 64 bytes runs past the end/);
        await assert.rejects(copyOp(arena, arena + bytes - 1), /ops\[0\]\.copy: dst and src overlap/);
        await assert.rejects(copyOp(arena + bytes - 1, arena), /ops\[0\]\.copy: dst and src overlap/);
      } finally {
        b.free(arena);
      }
    });
  });
});
