// Edge tests for lib/ops/fused.ts on the host backend at the smallest shape the op takes (Hk = Hv = 1,
// Dk = Dv = 128: C = 384) and T <= 5, so that Stryker can take the file in (docs/TESTING.md, "Mutation
// testing"): every argument check with its exact message, the out buffers, what reaches libgdn (the
// recording backend of ./recording-backend.ts), exact outputs, chain(), and what a failed call leaves
// behind.
//
// Exact outputs: the conv's pre-activations are 64 plus small integers (SiLU is then the identity in f32
// and bf16), so the conv output is integer arithmetic; the squares of the q and k heads then sum exactly
// in any order, and q = x · inv with inv = 1 / sqrt(ss + 1e-6) in f32 (Math.fround below); v is the conv
// output; g = -(a + dt_bias) for a + dt_bias >= 18 with A_log = 0; beta is 0.5, 0 or 1 at b = 0, -100, 100.

import { strict as assert } from 'assert';
import { Tensor } from '../../lib/tensor';
import { Backend, GdnError } from '../../lib/backend';
import * as fused from '../../lib/ops/fused';
import * as conv from '../../lib/ops/conv';
import { FusedArgs } from '../../lib/native/gdn';
import { armNames } from '../../lib/arms/table';
import { Seen, assertArgumentBytes, recordingBackend } from './recording-backend';
import { throwsExactly } from '../stand-ins';


const D = 128;
const C = 3 * D;
const K = 3;
const S = { Hk: 1, Hv: 1, Dk: D, Dv: D };
const T = 5;
const QSL = [0, 2, 5];
const HIS = [1, 0];

// Small integers by position, so that every channel and token differs.
const xAt = (t: number, c: number) => ((t * 7 + c * 3) % 9) - 4;
const X = Array.from({ length: T }, (_, t) => Array.from({ length: C }, (_, c) => xAt(t, c)));
const W = Array.from({ length: C }, (_, c) => [c % 2, (c % 3) - 1, 1]);
const BIAS = Array.from({ length: C }, () => 64);
const STATE = Array.from({ length: 2 }, (_, s) => Array.from({ length: C }, (_, c) => [s + 1, (c % 5) - 2]));
const A = [[30], [25], [20], [18], [40]];
const B = [[0], [100], [-100], [0], [100]];
const DT = [0];

const f = Math.fround;
const flat = (m: unknown): number[] => (Array.isArray(m) ? m.flatMap(flat) : [m as number]);

/** The chain's bits, worked by hand: conv (the identity SiLU), then q, k L2-normalised, v copied, the gates. */
function expected(his: number[] | null, qsl = QSL, bias = BIAS, store: (x: number) => number = (x) => x): { q: number[]; k: number[]; v: number[]; g: number[]; beta: number[]; state: number[][][] } {
  const out = X.map((r) => r.map(() => NaN));
  const state = STATE.map((s) => s.map((r) => [...r]));
  for (let s = 0; s + 1 < qsl.length; s++) {
    const v = (p: number, c: number) => (p >= 0 ? X[qsl[s] + p][c] : his && his[s] ? STATE[s][c][K - 1 + p] : 0);
    const L = qsl[s + 1] - qsl[s];
    for (let t = 0; t < L; t++) for (let c = 0; c < C; c++) out[qsl[s] + t][c] = store(bias[c] + W[c].reduce((acc, w, j) => acc + w * v(t - (K - 1) + j, c), 0));
    if (L > 0) for (let c = 0; c < C; c++) for (let j = 0; j < K - 1; j++) state[s][c][j] = v(L - (K - 1) + j, c);
  }
  const l2 = (row: number[]) => {
    const inv = f(1 / f(Math.sqrt(f(row.reduce((a, x) => a + x * x, 0) + f(1e-6)))));
    return row.map((x) => f(x * inv));
  };
  return {
    q: out.flatMap((r) => l2(r.slice(0, D))),
    k: out.flatMap((r) => l2(r.slice(D, 2 * D))),
    v: out.flatMap((r) => r.slice(2 * D)),
    g: A.map((a) => -(a[0] + DT[0])),
    beta: B.map((b) => (b[0] === 0 ? 0.5 : b[0] > 0 ? 1 : 0)),
    state,
  };
}
const WANT = expected(HIS);
const OUTS = ['q', 'k', 'v', 'g', 'beta'] as const;

const inputs = (dt: 'f32' | 'bf16' = 'f32', over: Partial<fused.FusedInputs> = {}): fused.FusedInputs => ({
  x: Tensor.from(flat(X), [T, C], dt),
  weight: Tensor.from(flat(W), [C, K], dt),
  bias: Tensor.from(BIAS, [C], dt),
  queryStartLoc: QSL,
  hasInitialState: HIS,
  convState: Tensor.from(flat(STATE), [2, C, K - 1]),
  a: Tensor.from(flat(A), [T, 1], dt),
  b: Tensor.from(flat(B), [T, 1], dt),
  ALog: Tensor.from([0], [1]),
  dtBias: Tensor.from(DT, [1]),
  ...over,
});

describe('ops/fused edges', function () {
  this.timeout(20000);
  let b: Backend;
  let seen: Seen;
  before(() => {
    ({ b, seen } = recordingBackend());
  });
  beforeEach(() => seen.clear());
  afterEach(function () {
    if (this.currentTest?.state === 'failed') return;
    assert.deepEqual(b.stats(), { liveBuffers: 0, liveBytes: 0 }, 'the recording backend holds no buffer after a test');
  });
  after(() => b.close());

  const same = (r: fused.FusedOutputs, want = WANT, qkv: (x: number) => number = (x) => x) => {
    assert.deepEqual(Array.from(r.q.toFloat32()), want.q.map(qkv), 'q');
    assert.deepEqual(Array.from(r.k.toFloat32()), want.k.map(qkv), 'k');
    assert.deepEqual(Array.from(r.v.toFloat32()), want.v, 'v');
    assert.deepEqual(Array.from(r.g.toFloat32()), want.g, 'g');
    assert.deepEqual(Array.from(r.beta.toFloat32()), want.beta, 'beta');
    assert.deepEqual(r.convState.toArray(), want.state, 'convState');
  };
  const bf = (x: number) => Tensor.from([x], [1], 'bf16').toFloat32()[0];

  it('fusedArms, the default arm, fusedBytes', () => {
    assert.deepEqual(fused.fusedArms(), armNames('fused'));
    assert.deepEqual(fused.fusedArms().slice(0, 3), ['head-tile', 'stream', 'stream-mufu']);
    assert.equal(fused.DEFAULT_FUSED_ARM, 'stream-mufu');
    // T = 2, C = 2·2·3 + 4·5 = 32, Hv = 4; N = 3 states written, nInitial 1 read, K = 4
    const s = { Hk: 2, Hv: 4, Dk: 3, Dv: 5 };
    assert.equal(fused.fusedBytes(2, s, { xBytes: 2, qkvBytes: 4, gateBytes: 2, N: 3, nInitial: 1, K: 4 }), 2 * (32 * 2 + 2 * 4 * 2 + 32 * 4 + 2 * 4 * 4) + (3 + 1) * 32 * 3 * 4);
    assert.equal(fused.fusedBytes(2, s, { xBytes: 2, qkvBytes: 4, gateBytes: 2, N: 3, K: 4 }), 2 * (32 * 2 + 2 * 4 * 2 + 32 * 4 + 2 * 4 * 4) + (3 + 3) * 32 * 3 * 4);
  });

  it('exact outputs and state; the input state untouched; the default arm; what reached libgdn', () => {
    const inp = inputs();
    const r = fused.forwardSync(inp, { ...S, backend: b });
    same(r);
    assert.deepEqual(inp.convState.toArray(), STATE);
    assert.deepEqual([r.requested, r.mutant, r.backend], ['stream-mufu', null, 'host']);
    assert.deepEqual(r.launch, { arm: 'stream-mufu', threadsPerBlock: 128, grid: [4, 2], tokensPerProgram: 64 });
    assert.deepEqual([r.q.shape, r.k.shape, r.v.shape, r.g.shape, r.beta.shape, r.convState.shape], [[T, 1, D], [T, 1, D], [T, 1, D], [T, 1], [T, 1], [2, C, K - 1]]);
    assert.deepEqual(r.q.coordinates?.names([T, 1, D]), ['token', 'head', 'feature']);
    assert.deepEqual(r.beta.coordinates?.names([T, 1]), ['token', 'head']);
    assert.equal(r.convState.coordinates, conv.CONV_STATE_COORDINATES);
    const a = seen.fused[0];
    assert.deepEqual([a.T, a.Hk, a.Hv, a.Dk, a.Dv, a.K, a.num_seqs], [T, 1, 1, D, D, K, 2]);
    assert.deepEqual([a.x_dtype, a.conv_dtype, a.qkv_dtype, a.gate_dtype, a.his_dtype, a.arm, a.mutant], [0, 0, 0, 0, 3, 2, 0]);
    assert.deepEqual([a.x_row_stride, a.a_row_stride, a.b_row_stride], [C, 1, 1]);
    assert.deepEqual([a.q, a.k, a.v, a.g, a.beta, a.conv_state], [r.q.addr, r.k.addr, r.v.addr, r.g.addr, r.beta.addr, r.convState.addr]);
    assert.equal(a.query_start_loc, 0);
    assert.notEqual(a.query_start_loc_host, 0);
    assert.ok(a.bias !== 0 && a.has_initial_state !== 0);
    r.release();
    assert.ok([...OUTS.map((k) => r[k]), r.convState].every((t) => t.released));
  });

  it('bf16 x, conv and qkv dtypes; other arms; no bias and no initial state; padded rows of x', () => {
    const r = fused.forwardSync(inputs('bf16'), { ...S, backend: b, arm: 'head-tile', convDtype: 'bf16', qkvDtype: 'bf16' });
    same(r, WANT, bf);
    assert.deepEqual(OUTS.map((k) => r[k].dtype), ['bf16', 'bf16', 'bf16', 'f32', 'f32']);
    assert.deepEqual([r.requested, r.launch.arm], ['head-tile', 'head-tile']);
    r.release();
    const noInit = expected(null);
    const padded = Tensor.from(flat(X), [T, C], 'f32', { rowStride: C + 4 });
    const r2 = fused.forwardSync(inputs('f32', { x: padded, hasInitialState: undefined }), { ...S, backend: b, arm: 'stream' });
    same(r2, noInit);
    r2.release();
    assert.deepEqual(seen.fused.map((a) => [a.x_dtype, a.conv_dtype, a.qkv_dtype, a.gate_dtype, a.arm, a.x_row_stride, a.has_initial_state === 0, a.his_dtype]),
      [[1, 1, 1, 1, 0, C, false, 3], [0, 0, 0, 0, 1, C + 4, true, 4]]);
    // the flags as an i8 tensor
    const r3 = fused.forwardSync(inputs('f32', { hasInitialState: Tensor.from(HIS, [2], 'i8') }), { ...S, backend: b });
    same(r3);
    assert.equal(seen.fused[2].his_dtype, 4);
    r3.release();
  });

  it('planted mutants: codes by name, null or none is 0, another name refused', () => {
    const codes = [...fused.FUSED_MUTANTS, null, undefined].map((mutant) => {
      const r = fused.forwardSync(inputs(), { ...S, backend: b, mutant });
      const code = seen.fused[seen.fused.length - 1].mutant;
      assert.equal(r.mutant, mutant ?? null);
      r.release();
      return code;
    });
    assert.deepEqual(codes, [1, 2, 0, 0]);
    throwsExactly(() => fused.forwardSync(inputs(), { ...S, backend: b, mutant: 'seq' as never }), TypeError, "mutant: expected one of 'seq-fold', 'no-round', got 'seq'");
  });

  it('async: the same bits, argument bytes of its own, its host copy of the offsets freed', async () => {
    const r1 = fused.forwardSync(inputs(), { ...S, backend: b });
    const r2 = fused.forwardSync(inputs(), { ...S, backend: b });
    const r3 = await fused.forward(inputs(), { ...S, backend: b });
    const r4 = await fused.forward(inputs(), { ...S, backend: b });
    same(r3);
    assertArgumentBytes(seen, 2);
    assert.ok(seen.fused[2].query_start_loc_host !== 0 && seen.fused[2].query_start_loc_host !== seen.fused[0].query_start_loc_host);
    for (const r of [r1, r2, r3, r4]) r.release();
    // offsets on the device: staged as they are
    const dq = Tensor.from(QSL, [3], 'i32').to(b);
    const r5 = fused.forwardSync(inputs('f32', { queryStartLoc: dq }), { ...S, backend: b });
    same(r5);
    assert.deepEqual([seen.fused[4].query_start_loc, seen.fused[4].query_start_loc_host], [dq.addr, 0]);
    r5.release();
    dq.release();
  });

  it('inPlace: the state must be on the backend; it is then updated and kept by release()', async () => {
    throwsExactly(() => fused.forwardSync(inputs(), { ...S, backend: b, inPlace: true }), Error,
      'inPlace: convState must already be on the backend (convState.to(backend)) to be updated in place');
    const other = Backend.open('host');
    const elsewhere = Tensor.from(flat(STATE), [2, C, K - 1]).to(other);
    throwsExactly(() => fused.forwardSync(inputs('f32', { convState: elsewhere }), { ...S, backend: b, inPlace: true }), Error,
      'inPlace: convState must already be on the backend (convState.to(backend)) to be updated in place');
    other.close();
    const st = Tensor.from(flat(STATE), [2, C, K - 1]).to(b);
    const r = fused.forwardSync(inputs('f32', { convState: st }), { ...S, backend: b, inPlace: true });
    assert.equal(r.convState, st);
    same(r);
    r.release();
    assert.equal(st.released, false);
    assert.ok(r.q.released);
    // the chain in place too
    b.upload(st.addr, new Uint8Array(new Float32Array(flat(STATE)).buffer));
    const c = await fused.chain(inputs('f32', { convState: st }), { ...S, backend: b, inPlace: true });
    assert.equal(c.convState, st);
    same(c);
    c.release();
    assert.equal(st.released, false);
    assert.ok(c.q.released);
    const t = fused.prepareTimed(inputs('f32', { convState: st }), { ...S, backend: b, inPlace: true });
    assert.equal((t.args as FusedArgs).conv_state, st.addr);
    t.release();
    assert.equal(st.released, false);
    st.release();
  });

  it('a failed native call, sync or async, releases ours and keeps the caller\'s', async () => {
    seen.failWith = 1;
    assert.throws(() => fused.forwardSync(inputs(), { ...S, backend: b }), (e: Error) => e instanceof GdnError && e.message.startsWith('fused.forward: '));
    await assert.rejects(fused.forward(inputs(), { ...S, backend: b }), GdnError);
    assert.equal(b.stats().liveBuffers, 0);
    const st = Tensor.from(flat(STATE), [2, C, K - 1]).to(b);
    const v = Tensor.empty([T, 1, D], 'f32', { backend: b });
    assert.throws(() => fused.forwardSync(inputs('f32', { convState: st }), { ...S, backend: b, inPlace: true, out: { v } }), GdnError);
    assert.ok(!st.released && !v.released);
    assert.equal(b.stats().liveBuffers, 2);
    st.release();
    v.release();
  });

  it('an input that cannot be staged (its backend closed) fails after allocation: ours released, the caller\'s kept', () => {
    const gone = Backend.open('host');
    const x = Tensor.from(flat(X), [T, C]).to(gone);
    gone.close();
    const msg = 'backend: the host backend was closed';
    throwsExactly(() => fused.forwardSync(inputs('f32', { x }), { ...S, backend: b }), Error, msg);
    assert.equal(b.stats().liveBuffers, 0);
    const st = Tensor.from(flat(STATE), [2, C, K - 1]).to(b);
    const g = Tensor.empty([T, 1], 'f32', { backend: b });
    throwsExactly(() => fused.forwardSync(inputs('f32', { x, convState: st }), { ...S, backend: b, inPlace: true, out: { g } }), Error, msg);
    assert.ok(!st.released && !g.released);
    assert.equal(b.stats().liveBuffers, 2);
    st.release();
    g.release();
  });

  describe('argument checks', () => {
    const refuses = (over: Partial<fused.FusedInputs>, type: Function, m: string, opts: Partial<fused.FusedOptions> = {}) =>
      throwsExactly(() => fused.forwardSync(inputs('f32', over), { ...S, backend: b, ...opts }), type, m);

    it('inputs, arm, dtypes, head counts and sizes', () => {
      throwsExactly(() => fused.forwardSync(null as never, { ...S, backend: b }), TypeError, 'inputs: expected { x, weight, queryStartLoc, convState, a, b, ALog, dtBias, … }, got null');
      throwsExactly(() => fused.forwardSync('x' as never, { ...S, backend: b }), TypeError, "inputs: expected { x, weight, queryStartLoc, convState, a, b, ALog, dtBias, … }, got 'x'");
      refuses({}, TypeError, "arm: expected one of 'head-tile', 'stream', 'stream-mufu', got 'tree'", { arm: 'tree' });
      refuses({}, TypeError, "convDtype: expected one of 'f32', 'bf16', got 'f16'", { convDtype: 'f16' as never });
      refuses({}, TypeError, "qkvDtype: expected one of 'f32', 'bf16', got 'i8'", { qkvDtype: 'i8' as never });
      refuses({}, RangeError, 'Hk: expected an integer >= 1, got 0', { Hk: 0 });
      refuses({}, RangeError, 'Hv: expected an integer >= 1, got 1.5', { Hv: 1.5 });
      refuses({}, RangeError, 'Dk: expected an integer >= 1, got 0', { Dk: 0 });
      refuses({}, RangeError, 'Dv: expected an integer >= 1, got -128', { Dv: -128 });
      const heads = (Dk: number, Dv: number) => `Dk, Dv: the fused op needs Dk = Dv = 128 (every Qwen3.5 model), got Dk = ${Dk}, Dv = ${Dv}; run conv.forward then postconv.forward for other sizes`;
      refuses({}, RangeError, heads(64, 128), { Dk: 64 });
      refuses({}, RangeError, heads(128, 256), { Dv: 256 });
      refuses({}, RangeError, 'Hv: expected a multiple of Hk = 2 (grouped value heads), got 3', { Hk: 2, Hv: 3 });
      refuses({}, RangeError, `x: expected shape [T, C=${2 * 2 * D + 2 * D}] (2·Hk·Dk + Hv·Dv), got [${T}, ${C}]`, { Hk: 2, Hv: 2 });
      refuses({}, RangeError, `x: expected shape [T, C=${2 * D + 2 * D}] (2·Hk·Dk + Hv·Dv), got [${T}, ${C}]`, { Hv: 2 });
    });

    it('x: tensor, dtype, shape, a row stride of whole 4-element vectors', () => {
      refuses({ x: 1 as never }, TypeError, 'x: expected a Tensor, got 1');
      refuses({ x: Tensor.zeros([T, C], 'i8') }, TypeError, 'x: expected dtype f32 or bf16, got i8');
      refuses({ x: Tensor.zeros([T * C]) }, RangeError, `x: expected shape [T, C=${C}] (2·Hk·Dk + Hv·Dv), got [${T * C}]`);
      refuses({ x: Tensor.zeros([1, T, C]) }, RangeError, `x: expected shape [T, C=${C}] (2·Hk·Dk + Hv·Dv), got [1, ${T}, ${C}]`);
      refuses({ x: Tensor.zeros([T, C, 4]) }, RangeError, `x: expected shape [T, C=${C}] (2·Hk·Dk + Hv·Dv), got [${T}, ${C}, 4]`);
      refuses({ x: Tensor.zeros([T, C], 'f32', { rowStride: C + 2 }) }, RangeError, `x: expected a row stride that is a multiple of 4 elements (rows are read in 4-element vectors), got ${C + 2}`);
      refuses({ x: Tensor.zeros([T, C], 'f32', { rowStride: C + 1 }) }, RangeError, `x: expected a row stride that is a multiple of 4 elements (rows are read in 4-element vectors), got ${C + 1}`);
      // the taps and offsets are the conv's own checks, named as there
      refuses({ weight: Tensor.zeros([C, K], 'bf16') }, TypeError, 'weight: expected dtype f32 (the dtype of x), got bf16');
      refuses({ queryStartLoc: [0, 4] }, RangeError, `queryStartLoc: must end at T = ${T} (rows of x), got 4`);
    });

    it('hasInitialState, convState, the gate inputs', () => {
      refuses({ hasInitialState: [1] }, RangeError, 'hasInitialState: expected shape [N=2], got [1]');
      refuses({ hasInitialState: Tensor.from([1, 0], [2], 'bf16') }, TypeError, 'hasInitialState: expected dtype i8 or i32, got bf16');
      refuses({ hasInitialState: {} as never }, TypeError, 'hasInitialState: expected a Tensor or an array of integers, got Object');
      refuses({ convState: null as never }, TypeError, 'convState: expected a Tensor, got null');
      refuses({ convState: Tensor.zeros([2, C, K - 1], 'bf16') }, TypeError, 'convState: expected dtype f32, got bf16');
      refuses({ convState: Tensor.zeros([2, C, K]) }, RangeError, `convState: expected shape [N=2, C=${C}, K-1=2], got [2, ${C}, 3]`);
      refuses({ convState: Tensor.zeros([2, C, K - 1], 'f32', { rowStride: 4 }) }, RangeError, 'convState: expected a contiguous tensor, got row stride 4 for rows of 2');
      refuses({ a: Tensor.zeros([T, 2]) }, RangeError, `a: expected shape [T=${T}, Hv=1], got [${T}, 2]`);
      refuses({ b: Tensor.zeros([T, 1], 'bf16') }, TypeError, 'b: expected dtype f32 (the dtype of a), got bf16');
      refuses({ ALog: Tensor.zeros([2]) }, RangeError, 'ALog: expected shape [Hv=1], got [2]');
      refuses({ dtBias: Tensor.zeros([1], 'i32') }, TypeError, 'dtBias: expected dtype f32, got i32');
    });
  });

  describe('out buffers', () => {
    it('refused by name for fused.forward; any subset written in place and kept', () => {
      throwsExactly(() => fused.forwardSync(inputs(), { ...S, backend: b, out: 4 as never }), TypeError, 'out: expected { q?, k?, v?, g?, beta? } (output buffers), got 4');
      throwsExactly(() => fused.forwardSync(inputs(), { ...S, backend: b, out: { convState: 1 } as never }), TypeError, 'out.convState: not an output of fused.forward (expected q, k, v, g or beta)');
      const q = Tensor.empty([T, 1, D], 'bf16', { backend: b });
      throwsExactly(() => fused.forwardSync(inputs(), { ...S, backend: b, out: { q } }), TypeError, 'out.q: expected dtype f32, got bf16');
      const beta = Tensor.empty([T, 1], 'f32', { backend: b });
      const r = fused.forwardSync(inputs(), { ...S, backend: b, qkvDtype: 'bf16', out: { q, beta } });
      assert.ok(r.q === q && r.beta === beta);
      same(r, WANT, bf);
      r.release();
      assert.ok(!q.released && !beta.released && r.k.released && r.convState.released);
      q.release();
      beta.release();
    });

    it('an out buffer sharing a byte with any input is refused, naming it', () => {
      const arena = Tensor.empty([4 * T * C], 'f32', { backend: b });
      const at = (off: number, shape: number[], dt: 'f32' | 'i32' = 'f32') => new Tensor(shape, dt, arena.storage, { offset: off });
      const put = (t: Tensor, v: number[]) => b.upload(t.addr, new Uint8Array((t.dtype === 'i32' ? new Int32Array(v) : new Float32Array(v)).buffer));
      // x, weight, bias, offsets, flags, state, a, b, ALog, dtBias laid end to end
      let off = 0;
      const place = (shape: number[], v: number[], dt: 'f32' | 'i32' = 'f32') => {
        const t = at(off, shape, dt);
        put(t, v);
        off += v.length;
        return t;
      };
      const inp: fused.FusedInputs = {
        x: place([T, C], flat(X)), weight: place([C, K], flat(W)), bias: place([C], BIAS), queryStartLoc: place([3], QSL, 'i32'),
        hasInitialState: place([2], HIS, 'i32'), convState: place([2, C, K - 1], flat(STATE)), a: place([T, 1], flat(A)), b: place([T, 1], flat(B)),
        ALog: place([1], [0]), dtBias: place([1], DT),
      };
      const ends: Record<string, number> = {};
      let e = 0;
      for (const [name, t] of Object.entries(inp)) {
        e += (t as Tensor).numel;
        ends[name] = e;
      }
      const alias = (name: string) => `out.g: shares memory with ${name} (an output must not alias an input or another output)`;
      // g [T, 1] placed to end on the last element of each input in turn
      for (const name of Object.keys(inp)) {
        throwsExactly(() => fused.forwardSync(inp, { ...S, backend: b, out: { g: at(ends[name] - 1, [T, 1]) } }), RangeError, alias(name));
      }
      const r = fused.forwardSync(inp, { ...S, backend: b, out: { g: at(off, [T, 1]) } });
      same(r);
      r.release();
      arena.release();
    });
  });

  describe('prepareTimed and chain', () => {
    it('prepareTimed stages everything, labels, and releases ours', () => {
      const inp = inputs();
      const t = fused.prepareTimed(inp, { ...S, backend: b, arm: 'stream' });
      assert.equal(t.kind, 'fused');
      assert.equal(t.label, 'fused stream');
      assert.deepEqual(t.source, { op: 'fused', inputs: inp, opts: { ...S, backend: b, arm: 'stream' } });
      const a = t.args as FusedArgs;
      assert.equal(a.query_start_loc_host, 0);
      const q = new Int32Array(3);
      b.download(new Uint8Array(q.buffer), a.query_start_loc);
      assert.deepEqual(Array.from(q), QSL);
      t.release();
      assert.equal(b.stats().liveBuffers, 0);
      const named = fused.prepareTimed(inputs(), { ...S, backend: b }, 'mine');
      assert.equal(named.label, 'mine');
      named.release();
      const plain = fused.prepareTimed(inputs(), { ...S, backend: b });
      assert.equal(plain.label, 'fused stream-mufu');
      plain.release();
    });

    it('chain: conv (scalar) then post-conv (tree) gives the same bits; the conv output is freed', async () => {
      const c = await fused.chain(inputs(), { ...S, backend: b });
      same(c);
      assert.equal(b.stats().liveBuffers, 6);
      c.release();
      const c16 = await fused.chain(inputs('bf16'), { ...S, backend: b, convDtype: 'bf16', qkvDtype: 'bf16' });
      same(c16, WANT, bf);
      assert.equal(c16.q.dtype, 'bf16');
      c16.release();
    });

    it('chain and the op store the conv output in convDtype: bf16 rounds pre-activations above 256 to even steps of 2', async () => {
      const bias = Array.from({ length: C }, () => 255);  // 255 plus -12..12: 257, 259, ... are not bf16 values
      const round16 = expected(HIS, QSL, bias, bf);
      const asF32 = expected(HIS, QSL, bias);
      assert.notDeepEqual(round16.v, asF32.v);
      const inp = () => inputs('f32', { bias: Tensor.from(bias, [C]) });
      const c = await fused.chain(inp(), { ...S, backend: b, convDtype: 'bf16' });
      same(c, round16);
      c.release();
      const r = fused.forwardSync(inp(), { ...S, backend: b, convDtype: 'bf16' });
      same(r, round16);
      r.release();
      const c32 = await fused.chain(inp(), { ...S, backend: b });
      same(c32, asF32);
      c32.release();
    });

    it('chain: a post-conv refusal releases the conv\'s result', async () => {
      await assert.rejects(fused.chain(inputs(), { ...S, backend: b, Hk: 2 }), (e: Error) => e.message === 'Hv: expected a multiple of Hk = 2 (grouped value heads), got 1');
      await assert.rejects(fused.chain(inputs(), { ...S, backend: b, qkvDtype: 'f16' as never }), TypeError);
    });
  });
});
