// Edge tests for lib/ops/postconv.ts on the host backend with T = 2 and heads of 1 or 2 features (and
// one case at Dk = Dv = 128, T = 1, for the arms that need it), so that Stryker can take the file in
// (docs/TESTING.md, "Mutation testing"): every argument check with its exact message, the out buffers
// (each refusal, aliasing, any subset given), exact outputs, what reaches libgdn (the recording backend of
// ./recording-backend.ts), and what a failed call leaves behind (nothing of ours, all of the caller's).
//
// Exact outputs: the squares of small integers sum exactly in any order, so q and k are x · inv with
// inv = 1 / sqrt(ss + 1e-6) in f32 (IEEE square root and division, worked below with Math.fround); v is a
// copy; g = -exp(0) · softplus(a + dt_bias) = -(a + dt_bias) for a + dt_bias >= 18 (softplus(18) rounds to 18
// in f32, and softplus(x) = x above 20); beta = sigmoid(b) is 0.5, 0 and 1 at b = 0, -100 and 100.

import { strict as assert } from 'assert';
import { Tensor } from '../../lib/tensor';
import { Backend, GdnError } from '../../lib/backend';
import * as postconv from '../../lib/ops/postconv';
import { Staging } from '../../lib/ops/common';
import { PostconvArgs } from '../../lib/native/gdn';
import { armNames } from '../../lib/arms/table';
import { forgetArm, registerArm } from '../../lib/arms/registry';
import { Seen, assertArgumentBytes, recordingBackend } from './recording-backend';
import { throwsExactly } from '../stand-ins';


const f = Math.fround;
const inv = (ss: number) => f(1 / f(Math.sqrt(f(ss + f(1e-6)))));
const l2 = (row: number[]) => {
  const s = inv(row.reduce((acc, v) => acc + v * v, 0));
  return row.map((v) => f(v * s));
};

// Hk = 1, Hv = 2, Dk = 2, Dv = 1: C = 2·1·2 + 2·1 = 6; channels [q0 q1 | k0 k1 | v(h0) v(h1)].
const SHAPE = { Hk: 1, Hv: 2, Dk: 2, Dv: 1 };
const CONV = [[3, 4, 0, 5, 7, 8], [1, 2, 6, 8, -1, -2]];
const A = [[30, 1], [25, -3]];
const B = [[0, 100], [-100, 0]];
const DT_BIAS = [0, 21];
const WANT = {
  q: [[l2([3, 4])], [l2([1, 2])]],
  k: [[l2([0, 5])], [l2([6, 8])]],
  v: [[[7], [8]], [[-1], [-2]]],
  g: [[-30, -22], [-25, -18]],
  beta: [[0.5, 1], [0, 0.5]],
};
const OUTS = ['q', 'k', 'v', 'g', 'beta'] as const;

const inputs = (dt: 'f32' | 'bf16' = 'f32', over: Partial<postconv.PostconvInputs> = {}): postconv.PostconvInputs => ({
  convOut: Tensor.from(CONV.flat(), [2, 6], dt),
  a: Tensor.from(A.flat(), [2, 2], dt),
  b: Tensor.from(B.flat(), [2, 2], dt),
  ALog: Tensor.from([0, 0], [2]),
  dtBias: Tensor.from(DT_BIAS, [2]),
  ...over,
});

describe('ops/postconv edges', () => {
  let b: Backend;
  let seen: Seen;
  let other: Backend;
  before(() => {
    ({ b, seen } = recordingBackend());
    other = Backend.open('host');
  });
  beforeEach(() => seen.clear());
  afterEach(function () {
    if (this.currentTest?.state === 'failed') return;
    assert.deepEqual(b.stats(), { liveBuffers: 0, liveBytes: 0 }, 'the recording backend holds no buffer after a test');
    assert.equal(other.stats().liveBuffers, 0);
  });
  after(() => {
    b.close();
    other.close();
  });

  const same = (r: postconv.PostconvResult, want = WANT) => {
    for (const k of OUTS) assert.deepEqual(r[k].toArray(), want[k], k);
  };

  it('postconvArms is libgdn\'s list; postconvBytes counts each buffer once', () => {
    assert.deepEqual(postconv.postconvArms(), armNames('postconv'));
    assert.deepEqual(postconv.postconvArms().slice(0, 4), ['tree', 'token-tile', 'seq4', 'vec-tile']);
    // T = 3, C = 2·1·4 + 2·3 = 14, Hv = 2: conv 14·2, gates 2·2·4 read; qkv 14·1, g and beta 2·2·4 written
    assert.equal(postconv.postconvBytes(3, { Hk: 1, Hv: 2, Dk: 4, Dv: 3 }, 2, 4, 1), 3 * (14 * 2 + 2 * 2 * 4 + 14 * 1 + 2 * 2 * 4));
    assert.equal(postconv.postconvBytes(1, { Hk: 2, Hv: 1, Dk: 1, Dv: 5 }, 1, 2, 4), 1 * (9 * 1 + 2 * 1 * 2 + 9 * 4 + 2 * 1 * 4));
  });

  it('defineArm hands the spec to the definer (its own checks answer)', () => {
    throwsExactly(() => postconv.defineArm({} as never), TypeError, "name: expected 1..31 of a-z, 0-9, '-', '_', '.', starting with a letter, got undefined");
  });

  it('exact outputs, shapes and dtypes; the tree by default; coordinates; release frees them all', () => {
    const r = postconv.forwardSync(inputs(), { ...SHAPE, backend: b });
    same(r);
    assert.deepEqual([r.q.shape, r.k.shape, r.v.shape, r.g.shape, r.beta.shape], [[2, 1, 2], [2, 1, 2], [2, 2, 1], [2, 2], [2, 2]]);
    assert.deepEqual(OUTS.map((k) => r[k].dtype), ['f32', 'f32', 'f32', 'f32', 'f32']);
    assert.deepEqual([r.requested, r.arm, r.mutant, r.backend], ['tree', 'tree', false, 'host']);
    assert.deepEqual(r.q.coordinates?.names([2, 1, 2]), ['token', 'head', 'feature']);
    assert.deepEqual(r.v.coordinates?.names([2, 2, 1]), ['token', 'head', 'feature']);
    assert.deepEqual(r.g.coordinates?.names([2, 2]), ['token', 'head']);
    assert.deepEqual(r.beta.coordinates?.names([2, 2]), ['token', 'head']);
    const a = seen.postconv[0];
    assert.deepEqual([a.T, a.Hk, a.Hv, a.Dk, a.Dv, a.conv_dtype, a.gate_dtype, a.qkv_dtype, a.arm, a.a_row_stride, a.b_row_stride], [2, 1, 2, 2, 1, 0, 0, 0, 0, 2, 2]);
    assert.deepEqual([a.q, a.k, a.v, a.g, a.beta], OUTS.map((k) => r[k].addr));
    r.release();
    assert.ok(OUTS.every((k) => r[k].released));
  });

  it('bf16 inputs and q, k, v; g and beta stay f32', () => {
    const r = postconv.forwardSync(inputs('bf16'), { ...SHAPE, backend: b, qkvDtype: 'bf16' });
    assert.deepEqual(OUTS.map((k) => r[k].dtype), ['bf16', 'bf16', 'bf16', 'f32', 'f32']);
    const bf = (x: number) => Tensor.from([x], [1], 'bf16').toFloat32()[0];
    assert.deepEqual(r.q.toArray(), WANT.q.map((h) => h.map((row) => row.map(bf))));
    assert.deepEqual(r.v.toArray(), WANT.v);
    assert.deepEqual(r.g.toArray(), WANT.g);
    assert.deepEqual(r.beta.toArray(), WANT.beta);
    const a = seen.postconv[0];
    assert.deepEqual([a.conv_dtype, a.gate_dtype, a.qkv_dtype], [1, 1, 1]);
    r.release();
    // f32 conv_out with bf16 gates
    const m = postconv.forwardSync(inputs('f32', { a: Tensor.from(A.flat(), [2, 2], 'bf16'), b: Tensor.from(B.flat(), [2, 2], 'bf16') }), { ...SHAPE, backend: b });
    same(m);
    assert.deepEqual([seen.postconv[1].conv_dtype, seen.postconv[1].gate_dtype, seen.postconv[1].qkv_dtype], [0, 1, 0]);
    m.release();
  });

  it('a and b as column views of one packed projection keep their row stride', () => {
    // [T, 5]: columns 0..1 = a, 2..3 = b, 4 = padding
    const packed = Tensor.from([30, 1, 0, 100, 9, 25, -3, -100, 0, 9], [2, 5]);
    const r = postconv.forwardSync(inputs('f32', { a: packed.sliceCols(0, 2), b: packed.sliceCols(2, 2) }), { ...SHAPE, backend: b });
    same(r);
    assert.deepEqual([seen.postconv[0].a_row_stride, seen.postconv[0].b_row_stride], [5, 5]);
    r.release();
    const dp = packed.to(b);
    const r2 = postconv.forwardSync(inputs('f32', { a: dp.sliceCols(0, 2), b: dp.sliceCols(2, 2) }), { ...SHAPE, backend: b });
    same(r2);
    assert.deepEqual([seen.postconv[1].a, seen.postconv[1].b], [dp.addr, dp.addr + 8]);
    r2.release();
    dp.release();
  });

  it('arms that need Dk = Dv = 128 fall back to tree elsewhere; seq4 running is reported as a mutant', () => {
    const fb = postconv.forwardSync(inputs(), { ...SHAPE, backend: b, arm: 'seq4' });
    assert.deepEqual([fb.requested, fb.arm, fb.mutant], ['seq4', 'tree', false]);
    same(fb);
    fb.release();
    const C = 2 * 128 + 128;
    const big = { convOut: Tensor.random([1, C], 'f32', { seed: 1 }), a: Tensor.zeros([1, 1]), b: Tensor.zeros([1, 1]), ALog: Tensor.zeros([1]), dtBias: Tensor.zeros([1]) };
    const s4 = postconv.forwardSync(big, { Hk: 1, Hv: 1, Dk: 128, Dv: 128, backend: b, arm: 'seq4' });
    assert.deepEqual([s4.requested, s4.arm, s4.mutant], ['seq4', 'seq4', true]);
    s4.release();
    const tt = postconv.forwardSync(big, { Hk: 1, Hv: 1, Dk: 128, Dv: 128, backend: b, arm: 'token-tile' });
    assert.deepEqual([tt.requested, tt.arm, tt.mutant], ['token-tile', 'token-tile', false]);
    tt.release();
    assert.deepEqual(seen.postconv.map((a) => a.arm), [2, 2, 1]);
  });

  it('async runs the same, with argument bytes of its own; sync calls share the scratch bytes', async () => {
    const r1 = postconv.forwardSync(inputs(), { ...SHAPE, backend: b });
    const r2 = postconv.forwardSync(inputs(), { ...SHAPE, backend: b });
    const r3 = await postconv.forward(inputs(), { ...SHAPE, backend: b });
    const r4 = await postconv.forward(inputs(), { ...SHAPE, backend: b });
    same(r3);
    assertArgumentBytes(seen, 2);
    for (const r of [r1, r2, r3, r4]) r.release();
  });

  it('a failed native call releases our outputs and staged inputs, not the caller\'s buffers', async () => {
    seen.failWith = 1;
    assert.throws(() => postconv.forwardSync(inputs(), { ...SHAPE, backend: b }), (e: Error) => e instanceof GdnError && e.message.startsWith('postconv.forward: '));
    await assert.rejects(postconv.forward(inputs(), { ...SHAPE, backend: b }), GdnError);
    assert.equal(b.stats().liveBuffers, 0);
    const q = Tensor.empty([2, 1, 2], 'f32', { backend: b });
    const beta = Tensor.empty([2, 2], 'f32', { backend: b });
    assert.throws(() => postconv.forwardSync(inputs(), { ...SHAPE, backend: b, out: { q, beta } }), GdnError);
    assert.ok(!q.released && !beta.released);
    assert.equal(b.stats().liveBuffers, 2);
    q.release();
    beta.release();
  });

  it('an input that cannot be staged (its backend closed) fails after the outputs exist: ours released, the caller\'s kept', () => {
    const gone = Backend.open('host');
    const convOut = Tensor.from(CONV.flat(), [2, 6]).to(gone);
    gone.close();
    const g = Tensor.empty([2, 2], 'f32', { backend: b });
    throwsExactly(() => postconv.forwardSync(inputs('f32', { convOut }), { ...SHAPE, backend: b, out: { g } }), Error, 'backend: the host backend was closed');
    assert.equal(g.released, false);
    assert.equal(b.stats().liveBuffers, 1);
    g.release();
  });

  describe('argument checks', () => {
    const refuses = (over: Partial<postconv.PostconvInputs>, type: Function, m: string | RegExp, opts: Partial<postconv.PostconvOptions> = {}) =>
      throwsExactly(() => postconv.forwardSync(inputs('f32', over), { ...SHAPE, backend: b, ...opts }), type, m);

    it('arm, qkvDtype and the head sizes, at and past their edges', () => {
      // The built-ins in order, then any user arms another test file in this process defined.
      refuses({}, TypeError, /^arm: expected one of 'tree', 'token-tile', 'seq4', 'vec-tile'(, '[a-z0-9-]+')*, got 'reg'$/, { arm: 'reg' });
      refuses({}, TypeError, "qkvDtype: expected one of 'f32', 'bf16', got 'f16'", { qkvDtype: 'f16' as never });
      refuses({}, RangeError, 'Hk: expected an integer >= 1, got 0', { Hk: 0 });
      refuses({}, RangeError, 'Hk: expected an integer >= 1, got undefined', { Hk: undefined as never });
      refuses({}, RangeError, 'Hv: expected an integer >= 1, got 0', { Hv: 0 });
      refuses({}, RangeError, 'Dk: expected an integer in 1..1024, got 0', { Dk: 0 });
      refuses({}, RangeError, 'Dk: expected an integer in 1..1024, got 1025', { Dk: 1025 });
      refuses({}, RangeError, 'Dv: expected an integer in 1..1024, got 0', { Dv: 0 });
      refuses({}, RangeError, 'Dv: expected an integer in 1..1024, got 1025', { Dv: 1025 });
      refuses({}, RangeError, 'Hv: expected a multiple of Hk = 2 (grouped value heads), got 3', { Hk: 2, Hv: 3 });
      // Hk = 2 divides Hv = 2: then C = 2·2·2 + 2·1 = 10 is what convOut must have
      refuses({}, RangeError, 'convOut: expected shape [T, C=10] (2·Hk·Dk + Hv·Dv), got [2, 6]', { Hk: 2 });
      refuses({}, RangeError, 'convOut: expected shape [T, C=2050] (2·Hk·Dk + Hv·Dv), got [2, 6]', { Dk: 1024 });
      refuses({}, RangeError, 'convOut: expected shape [T, C=2052] (2·Hk·Dk + Hv·Dv), got [2, 6]', { Dv: 1024 });
      refuses({}, RangeError, 'convOut: expected shape [T, C=8] (2·Hk·Dk + Hv·Dv), got [2, 6]', { Hv: 4, Dv: 1 });
    });

    it('convOut', () => {
      refuses({ convOut: 'x' as never }, TypeError, "convOut: expected a Tensor, got 'x'");
      refuses({ convOut: Tensor.zeros([2, 6], 'i32') }, TypeError, 'convOut: expected dtype f32 or bf16, got i32');
      refuses({ convOut: Tensor.zeros([12]) }, RangeError, 'convOut: expected shape [T, C=6] (2·Hk·Dk + Hv·Dv), got [12]');
      refuses({ convOut: Tensor.zeros([2, 6, 1]) }, RangeError, 'convOut: expected shape [T, C=6] (2·Hk·Dk + Hv·Dv), got [2, 6, 1]');
      refuses({ convOut: Tensor.zeros([2, 6], 'f32', { rowStride: 8 }) }, RangeError, 'convOut: expected a contiguous tensor, got row stride 8 for rows of 6');
    });

    it('the gate inputs a, b, ALog, dtBias', () => {
      refuses({ a: null as never }, TypeError, 'a: expected a Tensor, got null');
      refuses({ b: [1] as never }, TypeError, 'b: expected a Tensor, got [1]');
      refuses({ a: Tensor.zeros([2, 2], 'f16'), b: Tensor.zeros([2, 2], 'f16') }, TypeError, 'a: expected dtype f32 or bf16, got f16');
      refuses({ b: Tensor.zeros([2, 2], 'bf16') }, TypeError, 'b: expected dtype f32 (the dtype of a), got bf16');
      refuses({ a: Tensor.zeros([3, 2]) }, RangeError, 'a: expected shape [T=2, Hv=2], got [3, 2]');
      refuses({ b: Tensor.zeros([2, 1]) }, RangeError, 'b: expected shape [T=2, Hv=2], got [2, 1]');
      refuses({ ALog: 0 as never }, TypeError, 'ALog: expected a Tensor, got 0');
      refuses({ dtBias: undefined as never }, TypeError, 'dtBias: expected a Tensor, got undefined');
      refuses({ ALog: Tensor.zeros([2], 'bf16') }, TypeError, 'ALog: expected dtype f32, got bf16');
      refuses({ dtBias: Tensor.zeros([2], 'bf16') }, TypeError, 'dtBias: expected dtype f32, got bf16');
      refuses({ ALog: Tensor.zeros([3]) }, RangeError, 'ALog: expected shape [Hv=2], got [3]');
      refuses({ dtBias: Tensor.zeros([2, 1]) }, RangeError, 'dtBias: expected shape [Hv=2], got [2, 1]');
    });

    it('expectGateInputs returns the four tensors as given', () => {
      const inp = inputs();
      const got = postconv.expectGateInputs(inp, 2, 2);
      assert.ok(got.a === inp.a && got.b === inp.b && got.ALog === inp.ALog && got.dtBias === inp.dtBias);
    });
  });

  describe('out buffers', () => {
    it('each refusal names the buffer: not an object, unknown key, place, shape, dtype', () => {
      const refuses = (out: unknown, type: Function, m: string) =>
        throwsExactly(() => postconv.forwardSync(inputs(), { ...SHAPE, backend: b, out: out as never }), type, m);
      refuses(3, TypeError, 'out: expected { q?, k?, v?, g?, beta? } (output buffers), got 3');
      refuses({ q: undefined, z: 1 }, TypeError, 'out.z: not an output of postconv.forward (expected q, k, v, g or beta)');
      refuses({ v: Tensor.zeros([2, 2, 1]) }, TypeError,
        'out.v: expected a tensor on the host backend of this call (Tensor.empty(shape, dtype, { backend })), got a host tensor');
      const elsewhere = Tensor.empty([2, 2], 'f32', { backend: other });
      refuses({ g: elsewhere }, TypeError,
        'out.g: expected a tensor on the host backend of this call (Tensor.empty(shape, dtype, { backend })), got a tensor of another host backend');
      elsewhere.release();
      const t = (shape: number[], dt: 'f32' | 'bf16' = 'f32') => Tensor.empty(shape, dt, { backend: b });
      const made = [t([2, 2, 1]), t([2, 1, 2], 'bf16'), t([2, 1, 2]), t([2, 2], 'bf16'), t([2, 2, 1])];
      refuses({ q: made[0] }, RangeError, 'out.q: expected shape [2, 1, 2], got [2, 2, 1]');
      refuses({ k: made[0] }, RangeError, 'out.k: expected shape [2, 1, 2], got [2, 2, 1]');
      refuses({ v: made[2] }, RangeError, 'out.v: expected shape [2, 2, 1], got [2, 1, 2]');
      refuses({ g: made[0] }, RangeError, 'out.g: expected shape [2, 2], got [2, 2, 1]');
      refuses({ beta: made[2] }, RangeError, 'out.beta: expected shape [2, 2], got [2, 1, 2]');
      refuses({ q: made[1] }, TypeError, 'out.q: expected dtype f32, got bf16');
      refuses({ beta: made[3] }, TypeError, 'out.beta: expected dtype f32, got bf16');
      throwsExactly(() => postconv.forwardSync(inputs(), { ...SHAPE, backend: b, qkvDtype: 'bf16', out: { k: made[2] } }), TypeError, 'out.k: expected dtype bf16, got f32');
      throwsExactly(() => postconv.forwardSync(inputs(), { ...SHAPE, backend: b, qkvDtype: 'bf16', out: { g: made[3] } }), TypeError, 'out.g: expected dtype f32, got bf16');
      for (const x of made) x.release();
    });

    it('any subset given: written in place, returned, kept by release(); the rest fresh and poisoned-then-written', async () => {
      const k = Tensor.empty([2, 1, 2], 'f32', { backend: b });
      const beta = Tensor.empty([2, 2], 'f32', { backend: b });
      for (const run of [() => Promise.resolve(postconv.forwardSync(inputs(), { ...SHAPE, backend: b, out: { k, beta } })), () => postconv.forward(inputs(), { ...SHAPE, backend: b, out: { k, beta } })]) {
        const r = await run();
        assert.ok(r.k === k && r.beta === beta);
        same(r);
        const a = seen.postconv[seen.postconv.length - 1];
        assert.deepEqual([a.k, a.beta], [k.addr, beta.addr]);
        r.release();
        assert.ok(!k.released && !beta.released);
        assert.ok(r.q.released && r.v.released && r.g.released);
      }
      const all = Object.fromEntries(OUTS.map((n) => [n, Tensor.empty(n === 'q' || n === 'k' ? [2, 1, 2] : n === 'v' ? [2, 2, 1] : [2, 2], 'f32', { backend: b })])) as Required<postconv.PostconvOutBuffers>;
      const r = postconv.forwardSync(inputs(), { ...SHAPE, backend: b, out: all });
      for (const n of OUTS) assert.equal(r[n], all[n]);
      same(r);
      r.release();
      assert.equal(b.stats().liveBuffers, 7);
      for (const x of [k, beta, ...Object.values(all)]) x.release();
      for (const given of [{}, { q: undefined }, null]) {
        const f2 = postconv.forwardSync(inputs(), { ...SHAPE, backend: b, out: given as never });
        same(f2);
        f2.release();
      }
    });

    it('a buffer sharing a byte with an input or another buffer is refused, each named', () => {
      const arena = Tensor.empty([64], 'f32', { backend: b });
      const at = (off: number, shape: number[]) => new Tensor(shape, 'f32', arena.storage, { offset: off });
      const put = (t: Tensor, v: number[]) => b.upload(t.addr, new Uint8Array(new Float32Array(v).buffer));
      // convOut 0..11, a 12..15, b 16..19, ALog 20..21, dtBias 22..23
      const inp = { convOut: at(0, [2, 6]), a: at(12, [2, 2]), b: at(16, [2, 2]), ALog: at(20, [2]), dtBias: at(22, [2]) };
      put(inp.convOut, CONV.flat()); put(inp.a, A.flat()); put(inp.b, B.flat()); put(inp.ALog, [0, 0]); put(inp.dtBias, DT_BIAS);
      const alias = (what: string, name: string) => `${what}: shares memory with ${name} (an output must not alias an input or another output)`;
      const refuses = (out: postconv.PostconvOutBuffers, m: string) => throwsExactly(() => postconv.forwardSync(inp, { ...SHAPE, backend: b, out }), RangeError, m);
      refuses({ q: at(11, [2, 1, 2]) }, alias('out.q', 'convOut'));
      refuses({ k: at(15, [2, 1, 2]) }, alias('out.k', 'a'));
      refuses({ v: at(19, [2, 2, 1]) }, alias('out.v', 'b'));
      refuses({ g: at(21, [2, 2]) }, alias('out.g', 'ALog'));
      refuses({ beta: at(23, [2, 2]) }, alias('out.beta', 'dtBias'));
      refuses({ q: at(24, [2, 1, 2]), k: at(27, [2, 1, 2]) }, alias('out.q', 'out.k'));
      refuses({ v: at(24, [2, 2, 1]), beta: at(24, [2, 2]) }, alias('out.v', 'out.beta'));
      refuses({ g: at(30, [2, 2]), k: at(24, [2, 1, 2]), beta: at(33, [2, 2]) }, alias('out.g', 'out.beta'));
      refuses({ g: at(30, [2, 2]), q: at(27, [2, 1, 2]) }, alias('out.q', 'out.g'));
      // all five, each touching the next
      const out = { q: at(24, [2, 1, 2]), k: at(28, [2, 1, 2]), v: at(32, [2, 2, 1]), g: at(36, [2, 2]), beta: at(40, [2, 2]) };
      const r = postconv.forwardSync(inp, { ...SHAPE, backend: b, out });
      same(r);
      r.release();
      arena.release();
    });

    it('qkvgbOutputs checks at once and allocates later, in q, k, v, g, beta order, fresh ones owned', () => {
      const k = Tensor.empty([1, 1, 1], 'bf16', { backend: b });
      const outs = postconv.qkvgbOutputs('my.op', { k }, { T: 1, Hk: 1, Hv: 2, Dk: 1, Dv: 3 }, 'bf16', [], b);
      assert.equal(b.stats().liveBuffers, 1);
      const st = new Staging(b);
      const outputs: Tensor[] = [];
      const owned: Tensor[] = [];
      outs.allocate(st, outputs, owned);
      assert.deepEqual(outputs.map((t) => [t.dtype, ...t.shape]), [['bf16', 1, 1, 1], ['bf16', 1, 1, 1], ['bf16', 1, 2, 3], ['f32', 1, 2], ['f32', 1, 2]]);
      assert.equal(outputs[1], k);
      assert.deepEqual(owned, [outputs[0], outputs[2], outputs[3], outputs[4]]);
      assert.deepEqual(Array.from(outputs[2].bits()), [0x7fc1, 0x7fc1, 0x7fc1, 0x7fc1, 0x7fc1, 0x7fc1]);
      assert.deepEqual(Array.from(outputs[3].bits()), [0x7fc0dead, 0x7fc0dead]);
      for (const t of [...owned, k]) t.release();
      throwsExactly(() => postconv.qkvgbOutputs('my.op', { w: 1 }, { T: 1, Hk: 1, Hv: 1, Dk: 1, Dv: 1 }, 'f32', [], b), TypeError,
        'out.w: not an output of my.op (expected q, k, v, g or beta)');
      // the inputs given are checked against: an input named by the caller
      const x = Tensor.empty([4], 'f32', { backend: b });
      const g = new Tensor([1, 1], 'f32', x.storage, { offset: 3 });
      throwsExactly(() => postconv.qkvgbOutputs('my.op', { g }, { T: 1, Hk: 1, Hv: 1, Dk: 1, Dv: 1 }, 'f32', [['mine', x]], b), RangeError,
        'out.g: shares memory with mine (an output must not alias an input or another output)');
      x.release();
      // nothing given: no ranges needed, all five fresh
      const none = postconv.qkvgbOutputs('my.op', undefined, { T: 1, Hk: 1, Hv: 1, Dk: 1, Dv: 1 }, 'f32', [], b);
      const o2: Tensor[] = [];
      const w2: Tensor[] = [];
      none.allocate(st, o2, w2);
      assert.equal(o2.length, 5);
      assert.deepEqual(w2, o2);
      for (const t of w2) t.release();
    });

    it('qkvgbCoordinates: q, k, v by (token, head, feature), the rest by (token, head)', () => {
      const ts = [Tensor.zeros([1, 1, 1]), Tensor.zeros([1, 1, 1]), Tensor.zeros([1, 1, 1]), Tensor.zeros([1, 1]), Tensor.zeros([1, 1])];
      postconv.qkvgbCoordinates(ts);
      assert.deepEqual(ts.map((t) => t.coordinates?.names(t.shape).length), [3, 3, 3, 2, 2]);
    });
  });

  describe('prepareTimed', () => {
    it('stages the inputs once, labels, and releases ours (not the caller\'s)', () => {
      const inp = inputs();
      const t = postconv.prepareTimed(inp, { ...SHAPE, backend: b, arm: 'token-tile' });
      assert.equal(t.kind, 'postconv');
      assert.equal(t.label, 'token-tile');
      assert.deepEqual(t.source, { op: 'postconv', inputs: inp, opts: { ...SHAPE, backend: b, arm: 'token-tile' } });
      assert.equal((t.args as PostconvArgs).arm, 1);
      assert.equal(b.stats().liveBuffers, 10);
      t.release();
      assert.equal(b.stats().liveBuffers, 0);
      const named = postconv.prepareTimed(inputs(), { ...SHAPE, backend: b }, 'mine');
      assert.equal(named.label, 'mine');
      named.release();
      const plain = postconv.prepareTimed(inputs(), { ...SHAPE, backend: b });
      assert.equal(plain.label, 'tree');
      plain.release();
      const g = Tensor.empty([2, 2], 'f32', { backend: b });
      const withOut = postconv.prepareTimed(inputs(), { ...SHAPE, backend: b, out: { g } });
      assert.equal((withOut.args as PostconvArgs).g, g.addr);
      withOut.release();
      assert.equal(g.released, false);
      g.release();
    });

    it('a defined arm is got ready for timing first (a registry entry of the test\'s own)', () => {
      const prepared: string[] = [];
      registerArm({ op: 'postconv', name: 'edge-timed', id: 999, mappings: [], description: 'test', prepareTiming: () => prepared.push('edge-timed') });
      try {
        assert.throws(() => postconv.prepareTimed(inputs(), { ...SHAPE, backend: b, arm: 'edge-timed' }), /arm: expected one of .*got 'edge-timed'/);
        assert.deepEqual(prepared, ['edge-timed']);
      } finally {
        forgetArm('postconv', 'edge-timed');
      }
    });
  });
});
