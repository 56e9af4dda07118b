// Edge tests for lib/ops/conv.ts on the host backend with a few channels and tokens (T <= 8, C <= 8), so
// that Stryker can take the file in (docs/TESTING.md, "Mutation testing"):
// - every argument check of conv.forward, conv.update and launchContract, with its exact message;
// - exact outputs: every pre-activation is bias 64 (or 48) plus a small integer sum, and SiLU(v) = v
//   exactly in f32 and bf16 for v >= 17, so the expected out is plain integer arithmetic in the test;
// - what reaches libgdn: the op's backend here is a host backend whose lib records the decoded argument
//   struct of every conv call before making it (./recording-backend.ts: the offsets' and slots' routes,
//   schedule, dtype codes, the scratch or the call's own argument bytes);
// - CUDA-only options (widenCycles, schedules refused off the host) on a host backend that calls itself
//   'cuda': only the TypeScript branches are exercised there, nothing runs a CUDA kernel;
// - nothing left behind: after each test the recording backend holds no live buffer, and native int32
//   copies are counted by replacing allocInt32 / freeNative on lib/native/gdn's exports.

import { strict as assert } from 'assert';
import koffi from 'koffi';
import { Tensor } from '../../lib/tensor';
import { Backend, GdnError } from '../../lib/backend';
import * as conv from '../../lib/ops/conv';
import { Staging } from '../../lib/ops/common';
import { ConvArgs, ConvUpdateArgs, Fn, OP_KIND, gdnLib } from '../../lib/native/gdn';
import { Seen, assertArgumentBytes, recordingBackend } from './recording-backend';
import { armNames, armsChanged } from '../../lib/arms/table';
import { forgetArm, registerArm } from '../../lib/arms/registry';
import { throwsExactly } from '../stand-ins';

/**
 * The arm refusal as the library words it: every built-in conv arm, in order, then any user arms other test files
 * in this process defined (the list is whatever is registered when the test runs), then the name refused.
 */
const BUILT_IN_CONV = ['scalar', 'tiled', 'reg', 'reg-k4', 'reg-k4x2', 'vec', 'reg-k4-c16', 'tile', 'stream', 'stream-mufu'];
const convArmRefusal = (got: string): RegExp =>
  new RegExp(`^arm: expected one of ${BUILT_IN_CONV.map((n) => `'${n}'`).join(', ')}(, '[a-z0-9-]+')*, got '${got}'$`);

// eslint-disable-next-line @typescript-eslint/no-var-requires
const native = require('../../lib/native/gdn') as {
  allocInt32: (v: ArrayLike<number>) => { mem: unknown; addr: number };
  freeNative: (m: unknown) => void;
  gdnLib: () => unknown;
};


// ---------------------------------------------------------------------------------------- the reference

type M2 = number[][];
type M3 = number[][][];

/** The conv of docs/SPEC.md §3.2 (without the SiLU, which is the identity on these pre-activations) and §3.3. */
function expected(x: M2, w: M2, bias: number[] | null, qsl: number[], his: number[] | null, state: M3): { out: M2; state: M3 } {
  const C = w.length;
  const K = w[0].length;
  const out = x.map((r) => r.map(() => NaN));
  const fin = state.map((s) => s.map((r) => [...r]));
  for (let s = 0; s + 1 < qsl.length; s++) {
    const v = (p: number, c: number) => (p >= 0 ? x[qsl[s] + p][c] : his && his[s] ? state[s][c][K - 1 + p] : 0);
    const L = qsl[s + 1] - qsl[s];
    for (let t = 0; t < L; t++) {
      for (let c = 0; c < C; c++) {
        let acc = bias ? bias[c] : 0;
        for (let j = 0; j < K; j++) acc += w[c][j] * v(t - (K - 1) + j, c);
        out[qsl[s] + t][c] = acc;
      }
    }
    if (L > 0) for (let c = 0; c < C; c++) for (let j = 0; j < K - 1; j++) fin[s][c][j] = v(L - (K - 1) + j, c);
  }
  return { out, state: fin };
}

// Two sequences (3 and 2 tokens), C = 2, K = 3, the first continuing from its state.
const X: M2 = [[1, 2], [3, -1], [0, 4], [2, 2], [-3, 1]];
const W: M2 = [[1, 0, 2], [-1, 1, 1]];
const BIAS = [64, 48];
const QSL = [0, 3, 5];
const HIS = [1, 0];
const STATE: M3 = [[[5, 6], [7, 8]], [[9, 10], [11, 12]]];
const WANT = expected(X, W, BIAS, QSL, HIS, STATE);

const flat = (m: unknown): number[] => (Array.isArray(m) ? m.flatMap(flat) : [m as number]);
const inputs = (dt: 'f32' | 'bf16' = 'f32', over: Partial<conv.ConvInputs> = {}): conv.ConvInputs => ({
  x: Tensor.from(flat(X), [5, 2], dt),
  weight: Tensor.from(flat(W), [2, 3], dt),
  bias: Tensor.from(BIAS, [2], dt),
  queryStartLoc: QSL,
  hasInitialState: HIS,
  convState: Tensor.from(flat(STATE), [2, 2, 2], 'f32'),
  ...over,
});

describe('ops/conv edges', () => {
  let b: Backend;
  let seen: Seen;
  let cuda: Backend;
  let cudaSeen: Seen;
  let other: Backend;
  before(() => {
    ({ b, seen } = recordingBackend());
    ({ b: cuda, seen: cudaSeen } = recordingBackend('cuda'));
    other = Backend.open('host');
  });
  beforeEach(() => {
    seen.clear();
    cudaSeen.clear();
  });
  afterEach(function () {
    if (this.currentTest?.state === 'failed') return;
    assert.deepEqual(b.stats(), { liveBuffers: 0, liveBytes: 0 }, 'the recording backend holds no buffer after a test');
    assert.equal(cuda.stats().liveBuffers, 0);
    assert.equal(other.stats().liveBuffers, 0);
  });
  after(() => {
    b.close();
    cuda.close();
    other.close();
  });

  /** Counts the native int32 copies made and freed from now until stop() (afterEach stops a forgotten one). */
  let stopCounting: (() => void) | null = null;
  function countNatives(): { made: number; freed: number; stop(): void } {
    const { allocInt32, freeNative } = native;
    const c = {
      made: 0,
      freed: 0,
      stop() {
        native.allocInt32 = allocInt32;
        native.freeNative = freeNative;
        stopCounting = null;
      },
    };
    native.allocInt32 = (v) => {
      c.made++;
      return allocInt32(v);
    };
    native.freeNative = (m) => {
      c.freed++;
      freeNative(m);
    };
    stopCounting = c.stop;
    return c;
  }
  afterEach(() => stopCounting?.());

  describe('arms, bytes, defineArm', () => {
    it('convArms and updateArms are libgdn\'s lists', () => {
      assert.deepEqual(conv.convArms(), armNames('conv'));
      assert.ok(conv.convArms().includes('scalar') && conv.convArms().includes('stream'));
      assert.deepEqual(conv.updateArms(), ['reference', 'reg']);
      assert.deepEqual(conv.CONV_MAPPINGS, ['exact', 'exact-racy', 'sequence']);
      assert.equal(conv.MAX_K, 8);
      assert.equal(conv.CHUNK, 8);
    });

    it('stateBytes and convBytes: f32 state written for N sequences, read for nInitial', () => {
      assert.equal(conv.stateBytes(2, 1, 5, 4), (2 + 1) * 5 * 3 * 4);
      assert.equal(conv.stateBytes(3, 0, 2, 2), 3 * 2 * 1 * 4);
      assert.equal(conv.convBytes({ T: 3, C: 5, K: 4, N: 2, nInitial: 1, xBytes: 2, outBytes: 4 }), 3 * 5 * (2 + 4) + 180);
    });

    it('defineArm hands the spec to the definer (its own checks answer)', () => {
      throwsExactly(() => conv.defineArm({} as never), TypeError, "name: expected 1..31 of a-z, 0-9, '-', '_', '.', starting with a letter, got undefined");
    });
  });

  describe('launchContract', () => {
    let calls: number[];
    let realAsk: Fn;
    before(() => {
      const lib = gdnLib();
      realAsk = lib.convLaunchContract;
      lib.convLaunchContract = ((...a: unknown[]) => {
        calls.push(a[8] as number);
        return realAsk(...a);
      }) as Fn;
    });
    beforeEach(() => {
      calls = [];
    });
    after(() => {
      gdnLib().convLaunchContract = realAsk;
    });

    it('the exact mapping: programs per (sequence, 8-token chunk), listed; room for them at the first ask', () => {
      const c = conv.launchContract('reg', 'exact', 5, 4, [0, 5, 6, 15]);
      assert.deepEqual(c, {
        arm: 'reg', mapping: 'exact', threadsPerBlock: 128, channelsPerBlock: 128, channelTiles: 1, programs: 4, grid: [1, 4, 1],
        sharedBytes: 0, tokensPerProgram: 8, programList: [[0, 0], [1, 0], [2, 0], [2, 1]],
      });
      assert.deepEqual(calls, [Math.ceil(15 / 8) + 4]);
      // An Int32Array of offsets is read the same way.
      assert.deepEqual(conv.launchContract('reg', 'exact', 5, 4, Int32Array.from([0, 5, 6, 15])).programList, c.programList);
    });

    it('whole sequences: no program list; the chunk of an arm without one is 8 for the room', () => {
      const c = conv.launchContract('tiled', 'sequence', 40, 4, [0, 5, 6, 15]);
      assert.deepEqual(c, {
        arm: 'tiled', mapping: 'sequence', threadsPerBlock: 128, channelsPerBlock: 32, channelTiles: 2, programs: 3, grid: [2, 3, 1],
        sharedBytes: 2432, tokensPerProgram: 0, programList: [],
      });
      assert.deepEqual(calls, [2 + 4]);
      const r = conv.launchContract('reg', 'sequence', 5, 4, [0, 5, 6, 15]);
      assert.equal(r.mapping, 'sequence');
      assert.deepEqual(r.programList, []);
      assert.equal(r.programs, 3);
      // Offsets ending below 0 leave room for the offsets alone (libgdn refuses them).
      assert.throws(() => conv.launchContract('reg', 'exact', 5, 4, [0, -9]), /^Error: launchContract: query_start_loc: /);
      assert.deepEqual(calls.slice(2), [2]);
    });

    it('a batch of short sequences runs shorter programs: asked again with room for all of them', () => {
      // stream's chunk is 64; sequences of 33 tokens average less than 2 x 64, so its programs take 32 tokens.
      const four = conv.launchContract('stream', 'exact', 8, 4, [0, 33, 66, 99, 132]);
      assert.equal(four.tokensPerProgram, 32);
      assert.equal(four.programs, 8);
      assert.deepEqual(calls, [8]);  // exactly the room: one ask
      assert.deepEqual(four.programList, [[0, 0], [0, 1], [1, 0], [1, 1], [2, 0], [2, 1], [3, 0], [3, 1]]);
      calls = [];
      const five = conv.launchContract('stream', 'exact', 8, 4, [0, 33, 66, 99, 132, 165]);
      assert.deepEqual(calls, [Math.ceil(165 / 64) + 6, 10]);
      assert.equal(five.programs, 10);
      assert.deepEqual(five.programList, [[0, 0], [0, 1], [1, 0], [1, 1], [2, 0], [2, 1], [3, 0], [3, 1], [4, 0], [4, 1]]);
      // exact-racy keeps the declared length; an empty sequence has no program; two channel tiles.
      const racy = conv.launchContract('reg-k4x2', 'exact-racy', 300, 4, [0, 0, 17]);
      assert.deepEqual(racy, {
        arm: 'reg-k4x2', mapping: 'exact-racy', threadsPerBlock: 128, channelsPerBlock: 256, channelTiles: 2, programs: 3, grid: [2, 3, 1],
        sharedBytes: 0, tokensPerProgram: 8, programList: [[1, 0], [1, 1], [1, 2]],
      });
    });

    it('an arm that falls back reports what ran', () => {
      const c = conv.launchContract('reg-k4', 'exact', 5, 3, [0, 9]);
      assert.equal(c.arm, 'reg');
      assert.equal(c.mapping, 'exact');
      assert.deepEqual(c.programList, [[0, 0], [0, 1]]);
    });

    it('arguments refused with their names, at and one past each edge', () => {
      throwsExactly(() => conv.launchContract('nope', 'exact', 4, 4, [0, 1]), TypeError, convArmRefusal('nope'));
      throwsExactly(() => conv.launchContract('scalar', 'exact', 4, 4, [0, 1]), RangeError,
        "mapping: arm 'scalar' runs 'sequence', not 'exact' (it owns whole sequences; omit mapping or pass 'sequence')");
      throwsExactly(() => conv.launchContract('reg', 'diagonal' as never, 4, 4, [0, 1]), TypeError,
        "mapping: expected one of 'exact', 'exact-racy', 'sequence', got 'diagonal'");
      throwsExactly(() => conv.launchContract('reg', 'exact', 0, 4, [0, 1]), RangeError, 'C: expected an integer >= 1, got 0');
      throwsExactly(() => conv.launchContract('reg', 'exact', 4, 1, [0, 1]), RangeError, 'K: expected an integer in 2..8, got 1');
      throwsExactly(() => conv.launchContract('reg', 'exact', 4, 9, [0, 1]), RangeError, 'K: expected an integer in 2..8, got 9');
      throwsExactly(() => conv.launchContract('reg', 'exact', 4, 4, [0]), RangeError, 'queryStartLoc: expected at least 2 offsets (one sequence), got 1');
      assert.deepEqual(calls, []);
      for (const [C, K] of [[1, 2], [1, 8]]) assert.equal(conv.launchContract('reg', 'exact', C, K, [0, 1]).programs, 1);
      throwsExactly(() => conv.launchContract('reg', 'exact', 4, 4, [1, 5]), Error, 'launchContract: query_start_loc: must start at 0, got 1');
    });
  });

  describe('conv.forward: results', () => {
    it('f32: exact outputs and final state, the input state untouched, the arm and mapping asked and run', () => {
      const inp = inputs();
      const r = conv.forwardSync(inp, { backend: b });
      assert.deepEqual(r.out.toArray(), WANT.out);
      assert.deepEqual(r.convState.toArray(), WANT.state);
      assert.deepEqual(inp.convState.toArray(), STATE);
      assert.deepEqual(r.requested, { arm: 'scalar', mapping: 'sequence' });
      assert.equal(r.contract.arm, 'scalar');
      assert.equal(r.contract.mapping, 'sequence');
      assert.equal(r.contract.programs, 2);
      assert.equal(r.backend, 'host');
      assert.equal(r.out.dtype, 'f32');
      assert.equal(r.out.backend, b);
      // What the elements are: (sequence, token, channel) of out, (sequence, channel, tap) of the state.
      assert.deepEqual(r.out.coordinates?.at(7, [5, 2]), [1, 0, 1]);
      assert.equal(r.convState.coordinates, conv.CONV_STATE_COORDINATES);
      assert.deepEqual(conv.CONV_STATE_COORDINATES.names([2, 2, 2]), ['sequence', 'channel', 'tap']);
      const a = seen.conv[0];
      assert.equal(seen.conv.length, 1);
      assert.deepEqual([a.T, a.C, a.K, a.num_seqs, a.x_dtype, a.out_dtype, a.his_dtype, a.x_row_stride], [5, 2, 3, 2, 0, 0, 3, 2]);
      assert.deepEqual([a.arm, a.mapping, a.mutant, a.widen_cycles], [0, 2, 0, 0]);
      assert.deepEqual(a.schedule, { kind: 0, order_len: 0, seed: 0, order: 0 });
      assert.ok(a.bias !== 0 && a.has_initial_state !== 0 && a.x !== 0 && a.weight !== 0);
      // Offsets as numbers travel as the shared host copy: nothing staged on the backend.
      assert.equal(a.query_start_loc, 0);
      assert.notEqual(a.query_start_loc_host, 0);
      r.release();
      assert.ok(r.out.released && r.convState.released);
    });

    it('bf16 inputs and out, every mapping of reg, the same values', () => {
      for (const mapping of conv.CONV_MAPPINGS) {
        const r = conv.forwardSync(inputs('bf16'), { backend: b, arm: 'reg', mapping, outDtype: 'bf16' });
        assert.equal(r.out.dtype, 'bf16');
        assert.deepEqual(r.out.toArray(), WANT.out, mapping);
        assert.deepEqual(r.convState.toArray(), WANT.state);
        assert.deepEqual(r.requested, { arm: 'reg', mapping });
        r.release();
      }
      assert.deepEqual(seen.conv.map((a) => [a.x_dtype, a.out_dtype, a.arm, a.mapping]), [[1, 1, 2, 0], [1, 1, 2, 1], [1, 1, 2, 2]]);
    });

    it('without a mapping: exact where the arm lists it', () => {
      const r = conv.forwardSync(inputs(), { backend: b, arm: 'reg' });
      assert.deepEqual(r.requested, { arm: 'reg', mapping: 'exact' });
      assert.equal(r.contract.mapping, 'exact');
      assert.deepEqual(r.contract.grid, [1, 2, 1]);
      r.release();
    });

    it('no bias, no initial state, padded rows of x', () => {
      const x = Tensor.from([40, 41, 42], [3, 1], 'f32', { rowStride: 3 });
      const r = conv.forwardSync({ x, weight: Tensor.from([0, 1], [1, 2]), queryStartLoc: [0, 3], convState: Tensor.from([9], [1, 1, 1]) }, { backend: b });
      assert.deepEqual(r.out.toArray(), [[40], [41], [42]]);
      assert.deepEqual(r.convState.toArray(), [[[42]]]);
      const a = seen.conv[0];
      assert.deepEqual([a.bias, a.has_initial_state, a.his_dtype, a.x_row_stride], [0, 0, 4, 3]);
      r.release();
    });

    it('hasInitialState as booleans, an i8 tensor or an i32 tensor (read as i32)', () => {
      const bools = conv.forwardSync(inputs('f32', { hasInitialState: [true, false] }), { backend: b });
      assert.deepEqual(bools.out.toArray(), WANT.out);
      bools.release();
      const i8 = conv.forwardSync(inputs('f32', { hasInitialState: Tensor.from(HIS, [2], 'i8') }), { backend: b });
      assert.deepEqual(i8.out.toArray(), WANT.out);
      i8.release();
      // [0, 1] as i32: read as i8 its bytes would say [0, 0].
      const want = expected(X, W, BIAS, QSL, [0, 1], STATE);
      const i32 = conv.forwardSync(inputs('f32', { hasInitialState: Tensor.from([0, 1], [2], 'i32') }), { backend: b });
      assert.deepEqual(i32.out.toArray(), want.out);
      i32.release();
      assert.deepEqual(seen.conv.map((a) => a.his_dtype), [3, 4, 3]);
      const none = conv.forwardSync(inputs('f32', { hasInitialState: null }), { backend: b });
      assert.deepEqual(none.out.toArray(), expected(X, W, BIAS, QSL, null, STATE).out);
      none.release();
    });

    it('an empty sequence keeps its state; the coordinates skip it', () => {
      const r = conv.forwardSync(inputs('f32', { queryStartLoc: [0, 0, 5], hasInitialState: [1, 1], convState: Tensor.from(flat(STATE), [2, 2, 2]) }), { backend: b });
      const want = expected(X, W, BIAS, [0, 0, 5], [1, 1], STATE);
      assert.deepEqual(r.out.toArray(), want.out);
      assert.deepEqual(r.convState.toArray(), want.state);
      assert.deepEqual((r.convState.toArray() as M3)[0], STATE[0]);
      assert.deepEqual(r.out.coordinates?.at(0, [5, 2]), [1, 0, 0]);
      r.release();
    });

    it('the three offset routes give the same bits: numbers, a host tensor (host copies), a device tensor (staged as is)', async () => {
      const dq = Tensor.from(QSL, [3], 'i32').to(b);
      for (const q of [QSL, Tensor.from(QSL, [3], 'i32'), dq]) {
        const r = conv.forwardSync(inputs('f32', { queryStartLoc: q }), { backend: b });
        assert.deepEqual(r.out.toArray(), WANT.out);
        assert.deepEqual(r.out.coordinates?.at(7, [5, 2]), [1, 0, 1]);
        r.release();
      }
      const [n, h, d] = seen.conv;
      assert.deepEqual([n.query_start_loc, h.query_start_loc, d.query_start_loc], [0, 0, dq.addr]);
      assert.ok(n.query_start_loc_host !== 0 && n.query_start_loc_host === h.query_start_loc_host, 'sync calls share the scratch copy');
      assert.equal(d.query_start_loc_host, 0);
      // async: a fresh copy of the call's own, freed after the call
      const count = countNatives();
      const r = await conv.forward(inputs(), { backend: b });
      count.stop();
      assert.deepEqual([count.made, count.freed], [1, 1]);
      assert.deepEqual(r.out.toArray(), WANT.out);
      const a = seen.conv[3];
      assert.equal(a.query_start_loc, 0);
      assert.ok(a.query_start_loc_host !== 0 && a.query_start_loc_host !== n.query_start_loc_host);
      r.release();
      // async with a device tensor: nothing to copy
      const dc = countNatives();
      (await conv.forward(inputs('f32', { queryStartLoc: dq }), { backend: b })).release();
      dc.stop();
      assert.deepEqual([dc.made, dc.freed], [0, 0]);
      dq.release();
    });

    it('a device tensor of offsets is checked by libgdn, and the failed call leaves nothing behind', async () => {
      const dq = Tensor.from([1, 3, 5], [3], 'i32').to(b);
      assert.throws(() => conv.forwardSync(inputs('f32', { queryStartLoc: dq }), { backend: b }),
        (e: Error) => e instanceof GdnError && e.message === 'conv.forward: args.query_start_loc: must start at 0, got 1');
      await assert.rejects(conv.forward(inputs('f32', { queryStartLoc: dq }), { backend: b }),
        (e: Error) => e instanceof GdnError && e.message === 'conv.forward: args.query_start_loc: must start at 0, got 1');
      // given buffers stay the caller's
      const out = Tensor.empty([5, 2], 'f32', { backend: b });
      const convState = Tensor.empty([2, 2, 2], 'f32', { backend: b });
      assert.throws(() => conv.forwardSync(inputs('f32', { queryStartLoc: dq }), { backend: b, out: { out, convState } }), GdnError);
      assert.ok(!out.released && !convState.released);
      assert.equal(b.stats().liveBuffers, 3);
      const st = Tensor.from(flat(STATE), [2, 2, 2]).to(b);
      assert.throws(() => conv.forwardSync(inputs('f32', { queryStartLoc: dq, convState: st }), { backend: b, inPlace: true }), GdnError);
      assert.equal(st.released, false);
      for (const t of [dq, out, convState, st]) t.release();
    });

    it('schedules: forward, reverse, a shuffle seed, an explicit order (a native copy, freed)', () => {
      const run = (schedule: conv.Schedule | undefined) => {
        const c = countNatives();
        const r = conv.forwardSync(inputs(), { backend: b, arm: 'reg', schedule });
        c.stop();
        assert.deepEqual(r.out.toArray(), WANT.out);
        r.release();
        return [c.made, c.freed];
      };
      assert.deepEqual(run(undefined), [0, 0]);
      assert.deepEqual(run('forward'), [0, 0]);
      assert.deepEqual(run('reverse'), [0, 0]);
      assert.deepEqual(run({ shuffle: 7 }), [0, 0]);
      assert.deepEqual(run({ shuffle: 0 }), [0, 0]);
      assert.deepEqual(run([1, 0]), [1, 1]);
      const s = seen.conv.map((a) => a.schedule);
      assert.deepEqual(s.slice(0, 5), [
        { kind: 0, order_len: 0, seed: 0, order: 0 }, { kind: 0, order_len: 0, seed: 0, order: 0 }, { kind: 1, order_len: 0, seed: 0, order: 0 },
        { kind: 2, order_len: 0, seed: 7, order: 0 }, { kind: 2, order_len: 0, seed: 0, order: 0 },
      ]);
      assert.equal(s[5].kind, 3);
      assert.equal(s[5].order_len, 2);
      assert.notEqual(s[5].order, 0);
    });

    it('a bad schedule is refused by name, and what was allocated for the call is released', () => {
      const msg = (s: unknown, m: string, type: Function = TypeError) => throwsExactly(() => conv.forwardSync(inputs(), { backend: b, schedule: s as never }), type, m);
      msg('sideways', "schedule: expected 'forward', 'reverse', { shuffle: seed } or an array of block indices, got 'sideways'");
      msg(null, "schedule: expected 'forward', 'reverse', { shuffle: seed } or an array of block indices, got null");
      msg({ seed: 3 }, "schedule: expected 'forward', 'reverse', { shuffle: seed } or an array of block indices, got Object");
      msg(4, "schedule: expected 'forward', 'reverse', { shuffle: seed } or an array of block indices, got 4");
      msg({ shuffle: -1 }, 'schedule.shuffle: expected an integer >= 0, got -1', RangeError);
      msg({ shuffle: 1.5 }, 'schedule.shuffle: expected an integer >= 0, got 1.5', RangeError);
      // (afterEach: no buffer left on the backend)
    });

    it('CUDA-only options: widenCycles refused on the host, schedules refused off it (a host backend calling itself cuda)', () => {
      throwsExactly(() => conv.forwardSync(inputs(), { backend: b, widenCycles: 1 }), Error,
        "widenCycles: runs on the CUDA backend only (the host backend reproduces the race with schedule: 'reverse')");
      throwsExactly(() => conv.forwardSync(inputs(), { backend: b, widenCycles: -1 }), RangeError, 'widenCycles: expected an integer in 0..2147483647, got -1');
      throwsExactly(() => conv.forwardSync(inputs(), { backend: b, widenCycles: 2 ** 31 }), RangeError, 'widenCycles: expected an integer in 0..2147483647, got 2147483648');
      conv.forwardSync(inputs(), { backend: b, widenCycles: 0 }).release();
      for (const schedule of ['reverse', { shuffle: 1 }, [0]] as conv.Schedule[]) {
        throwsExactly(() => conv.forwardSync(inputs(), { backend: cuda, schedule }), Error,
          "schedule: block orders other than 'forward' run on the host backend only (this is cuda); on the GPU use widenCycles");
      }
      // On 'cuda' the spin count reaches the arguments (this host library then refuses it: it has no spin).
      const t = conv.prepareTimed(inputs(), { backend: cuda, arm: 'reg', schedule: 'forward', widenCycles: 2 ** 31 - 1 });
      assert.equal((t.args as ConvArgs).widen_cycles, 2 ** 31 - 1);
      t.release();
      assert.throws(() => conv.forwardSync(inputs(), { backend: cuda, arm: 'reg', widenCycles: 5 }), /args\.widen_cycles: the spin before chunk 0's state read exists on the CUDA backend only/);
      assert.equal(cudaSeen.conv[0].widen_cycles, 5);
    });

    it('planted mutants: codes 1..4 by name, none by default or null; a name not in the list is refused', () => {
      const codes = [...conv.CONV_MUTANTS, null, undefined].map((mutant) => {
        const t = conv.prepareTimed(inputs(), { backend: b, mutant });
        const code = (t.args as ConvArgs).mutant;
        t.release();
        return code;
      });
      assert.deepEqual(codes, [1, 2, 3, 4, 0, 0]);
      throwsExactly(() => conv.forwardSync(inputs(), { backend: b, mutant: 'taps' as never }), TypeError,
        "mutant: expected one of 'taps-reversed', 'state-from-output', 'no-tail-guard', 'chunk-off-by-one', got 'taps'");
    });
  });

  describe('conv.forward: argument checks', () => {
    const refuses = (over: Partial<conv.ConvInputs>, type: Function, m: string | RegExp, opts: conv.ConvOptions = {}) =>
      throwsExactly(() => conv.forwardSync(inputs('f32', over), { backend: b, ...opts }), type, m);

    it('inputs, arm, mapping, outDtype', () => {
      throwsExactly(() => conv.forwardSync(null as never, { backend: b }), TypeError, 'inputs: expected { x, weight, queryStartLoc, convState, … }, got null');
      throwsExactly(() => conv.forwardSync(5 as never, { backend: b }), TypeError, 'inputs: expected { x, weight, queryStartLoc, convState, … }, got 5');
      refuses({}, TypeError, convArmRefusal('nope'), { arm: 'nope' });
      refuses({}, RangeError, "mapping: arm 'tiled' runs 'sequence', not 'exact-racy' (it owns whole sequences; omit mapping or pass 'sequence')", { arm: 'tiled', mapping: 'exact-racy' });
      refuses({}, TypeError, "mapping: expected one of 'exact', 'exact-racy', 'sequence', got 'racy'", { arm: 'reg', mapping: 'racy' as never });
      refuses({}, TypeError, "outDtype: expected one of 'f32', 'bf16', got 'f16'", { outDtype: 'f16' as never });
    });

    it('x, weight, bias', () => {
      refuses({ x: [1, 2] as never }, TypeError, 'x: expected a Tensor, got [1, 2]');
      refuses({ x: Tensor.zeros([5, 2], 'i32') }, TypeError, 'x: expected dtype f32 or bf16, got i32');
      refuses({ x: Tensor.zeros([10]) }, RangeError, 'x: expected shape [T, C], got [10]');
      refuses({ x: Tensor.zeros([5, 2, 1]) }, RangeError, 'x: expected shape [T, C], got [5, 2, 1]');
      refuses({ weight: undefined as never }, TypeError, 'weight: expected a Tensor, got undefined');
      refuses({ weight: Tensor.zeros([2, 3], 'bf16') }, TypeError, 'weight: expected dtype f32 (the dtype of x), got bf16');
      refuses({ weight: Tensor.zeros([3, 3]) }, RangeError, 'weight: expected shape [C=2, K], got [3, 3]');
      refuses({ weight: Tensor.zeros([2, 3, 1]) }, RangeError, 'weight: expected shape [C=2, K], got [2, 3, 1]');
      refuses({ weight: Tensor.zeros([6]) }, RangeError, 'weight: expected shape [C=2, K], got [6]');
      refuses({ weight: Tensor.zeros([2, 3], 'f32', { rowStride: 4 }) }, RangeError, 'weight: expected a contiguous tensor, got row stride 4 for rows of 3');
      refuses({ weight: Tensor.zeros([2, 1]) }, RangeError, 'weight: K = 1 is outside the supported range 2..8');
      refuses({ weight: Tensor.zeros([2, 9]) }, RangeError, 'weight: K = 9 is outside the supported range 2..8');
      refuses({ bias: 3 as never }, TypeError, 'bias: expected a Tensor, got 3');
      refuses({ bias: Tensor.zeros([2], 'bf16') }, TypeError, 'bias: expected dtype f32 (the dtype of x), got bf16');
      refuses({ bias: Tensor.zeros([3]) }, RangeError, 'bias: expected shape [C=2], got [3]');
      // K at both ends runs
      for (const K of [2, 8]) {
        conv.forwardSync({ x: Tensor.zeros([2, 1]), weight: Tensor.zeros([1, K]), queryStartLoc: [0, 2], convState: Tensor.zeros([1, 1, K - 1]) }, { backend: b }).release();
      }
    });

    it('queryStartLoc: numbers, host tensors, device tensors', () => {
      refuses({ queryStartLoc: [0] }, RangeError, 'queryStartLoc: expected shape [N+1] with N >= 1, got [1]');
      refuses({ queryStartLoc: [0, 2.5, 5] }, TypeError, 'queryStartLoc[1]: expected an integer, got 2.5');
      refuses({ queryStartLoc: [0, 2 ** 31, 5] }, TypeError, 'queryStartLoc[1]: expected an integer, got 2147483648');
      refuses({ queryStartLoc: [-(2 ** 31) - 1, 5] }, TypeError, 'queryStartLoc[0]: expected an integer, got -2147483649');
      refuses({ queryStartLoc: [-(2 ** 31), 5] }, RangeError, 'queryStartLoc: must start at 0, got -2147483648');
      refuses({ queryStartLoc: [0, 2 ** 31 - 1] }, RangeError, 'queryStartLoc: must end at T = 5 (rows of x), got 2147483647');
      refuses({ queryStartLoc: [0, '5'] as never }, TypeError, "queryStartLoc[1]: expected an integer, got '5'");
      refuses({ queryStartLoc: 5 as never }, TypeError, 'queryStartLoc: expected a Tensor or an array of integers, got 5');
      refuses({ queryStartLoc: Tensor.from([0, 5], [2], 'i8') }, TypeError, 'queryStartLoc: expected dtype i32, got i8');
      refuses({ queryStartLoc: Tensor.from([0, 5], [1, 2], 'i32') }, RangeError, 'queryStartLoc: expected shape [N+1] with N >= 1, got [1, 2]');
      refuses({ queryStartLoc: Tensor.from([0], [1], 'i32') }, RangeError, 'queryStartLoc: expected shape [N+1] with N >= 1, got [1]');
      refuses({ queryStartLoc: [1, 5] }, RangeError, 'queryStartLoc: must start at 0, got 1');
      refuses({ queryStartLoc: Tensor.from([1, 5], [2], 'i32') }, RangeError, 'queryStartLoc: must start at 0, got 1');
      refuses({ queryStartLoc: [0, 4, 3, 5], hasInitialState: null, convState: Tensor.zeros([3, 2, 2]) }, RangeError, 'queryStartLoc: must not decrease, but [1] = 4 > [2] = 3');
      refuses({ queryStartLoc: [0, 6, 5] }, RangeError, 'queryStartLoc: must not decrease, but [1] = 6 > [2] = 5');
      refuses({ queryStartLoc: [0, 4] , hasInitialState: [1] }, RangeError, 'queryStartLoc: must end at T = 5 (rows of x), got 4');
      refuses({ queryStartLoc: Tensor.from([0, 6], [2], 'i32'), hasInitialState: [1] }, RangeError, 'queryStartLoc: must end at T = 5 (rows of x), got 6');
      const released = Tensor.from(QSL, [3], 'i32');
      released.release();
      refuses({ queryStartLoc: released }, Error, 'queryStartLoc: tensor [3] i32 was released');
    });

    it('hasInitialState and convState', () => {
      refuses({ hasInitialState: [1, 0, 1] }, RangeError, 'hasInitialState: expected shape [N=2], got [3]');
      refuses({ hasInitialState: [1, 0.5] }, TypeError, 'hasInitialState[1]: expected an integer, got 0.5');
      refuses({ hasInitialState: 'yes' as never }, TypeError, "hasInitialState: expected a Tensor or an array of integers, got 'yes'");
      refuses({ hasInitialState: Tensor.from([1, 0], [2], 'f32') }, TypeError, 'hasInitialState: expected dtype i8 or i32, got f32');
      refuses({ convState: {} as never }, TypeError, 'convState: expected a Tensor, got Object');
      refuses({ convState: Tensor.zeros([2, 2, 2], 'bf16') }, TypeError, 'convState: expected dtype f32, got bf16');
      refuses({ convState: Tensor.zeros([2, 2, 3]) }, RangeError, 'convState: expected shape [N=2, C=2, K-1=2], got [2, 2, 3]');
      refuses({ convState: Tensor.zeros([1, 2, 2]) }, RangeError, 'convState: expected shape [N=2, C=2, K-1=2], got [1, 2, 2]');
      const padded = Tensor.zeros([2, 2, 2], 'f32', { rowStride: 3 });
      refuses({ convState: padded }, RangeError, 'convState: expected a contiguous tensor, got row stride 3 for rows of 2');
    });

    it('inPlace: the state must be on the backend; it is then the result\'s, updated, and kept by release()', () => {
      const msg = 'inPlace: convState must already be on the backend (convState.to(backend)) to be updated in place';
      refuses({}, Error, msg, { inPlace: true });
      const elsewhere = Tensor.from(flat(STATE), [2, 2, 2]).to(other);
      refuses({ convState: elsewhere }, Error, msg, { inPlace: true });
      elsewhere.release();
      const st = Tensor.from(flat(STATE), [2, 2, 2]).to(b);
      const given = Tensor.empty([2, 2, 2], 'f32', { backend: b });
      refuses({ convState: st }, Error, 'out.convState: cannot be combined with inPlace (inPlace already updates convState itself)', { inPlace: true, out: { convState: given } });
      given.release();
      const r = conv.forwardSync(inputs('f32', { convState: st }), { backend: b, inPlace: true });
      assert.equal(r.convState, st);
      assert.deepEqual(st.toArray(), WANT.state);
      assert.deepEqual(r.out.toArray(), WANT.out);
      r.release();
      assert.equal(st.released, false);
      assert.equal(r.out.released, true);
      // not inPlace: the device state is copied, not written
      const r2 = conv.forwardSync(inputs('f32', { convState: st }), { backend: b, inPlace: false });
      assert.notEqual(r2.convState, st);
      r2.release();
      st.release();
    });
  });

  describe('conv.forward: out buffers', () => {
    it('refused by name: not an object, unknown keys, wrong place, shape or dtype', () => {
      const refuses = (out: unknown, type: Function, m: string) =>
        throwsExactly(() => conv.forwardSync(inputs(), { backend: b, out: out as never }), type, m);
      refuses(7, TypeError, 'out: expected { out?, convState? } (output buffers), got 7');
      refuses('out', TypeError, "out: expected { out?, convState? } (output buffers), got 'out'");
      refuses({ state: 1 }, TypeError, 'out.state: not an output of conv.forward (expected out or convState)');
      refuses({ out: Tensor.zeros([5, 2]) }, TypeError,
        'out.out: expected a tensor on the host backend of this call (Tensor.empty(shape, dtype, { backend })), got a host tensor');
      const wrong = Tensor.empty([5, 3], 'f32', { backend: b });
      refuses({ out: wrong }, RangeError, 'out.out: expected shape [5, 2], got [5, 3]');
      const o16 = Tensor.empty([5, 2], 'bf16', { backend: b });
      refuses({ out: o16 }, TypeError, 'out.out: expected dtype f32, got bf16');
      const s16 = Tensor.empty([2, 2, 2], 'bf16', { backend: b });
      refuses({ convState: s16 }, TypeError, 'out.convState: expected dtype f32, got bf16');
      refuses({ convState: wrong }, RangeError, 'out.convState: expected shape [2, 2, 2], got [5, 3]');
      for (const t of [wrong, o16, s16]) t.release();
    });

    it('written in place and returned, kept by release(); the given state receives the input state first', async () => {
      const out = Tensor.empty([5, 2], 'f32', { backend: b });
      const convState = Tensor.empty([2, 2, 2], 'f32', { backend: b });
      for (const run of [() => Promise.resolve(conv.forwardSync(inputs(), { backend: b, out: { out, convState } })), () => conv.forward(inputs(), { backend: b, out: { out, convState } })]) {
        const r = await run();
        assert.equal(r.out, out);
        assert.equal(r.convState, convState);
        assert.deepEqual(out.toArray(), WANT.out);
        assert.deepEqual(convState.toArray(), WANT.state);
        r.release();
        assert.ok(!out.released && !convState.released);
      }
      // An empty first sequence: its slot of the given state is the input state.
      const r = conv.forwardSync(inputs('f32', { queryStartLoc: [0, 0, 5] }), { backend: b, out: { convState } });
      assert.deepEqual((convState.toArray() as M3)[0], STATE[0]);
      assert.notEqual(r.out, out);
      r.release();
      assert.ok(r.out.released && !convState.released);
      // Only out: a fresh state, released by release().
      const r2 = conv.forwardSync(inputs(), { backend: b, out: { out } });
      assert.notEqual(r2.convState, convState);
      r2.release();
      assert.ok(r2.convState.released && !out.released);
      // out: {} and { out: undefined } allocate as usual.
      for (const given of [{}, { out: undefined, convState: undefined }]) {
        const r3 = conv.forwardSync(inputs(), { backend: b, out: given });
        assert.deepEqual(r3.out.toArray(), WANT.out);
        r3.release();
      }
      out.release();
      convState.release();
    });

    it('an out buffer must not share a byte with an input or the other output, each named', () => {
      // One arena: x [5, 2] at 0..9, weight [2, 3] at 10..15, bias [2] at 16..17, offsets (i32) at 18..20, flags (i32) at 21..22, state at 24..31.
      const arena = Tensor.empty([64], 'f32', { backend: b });
      const at = (off: number, shape: number[], dt: 'f32' | 'i32' = 'f32') => new Tensor(shape, dt, arena.storage, { offset: off });
      const put = (t: Tensor, v: number[]) => b.upload(t.addr, new Uint8Array((t.dtype === 'i32' ? new Int32Array(v) : new Float32Array(v)).buffer));
      const x = at(0, [5, 2]);
      const weight = at(10, [2, 3]);
      const bias = at(16, [2]);
      const q = at(18, [3], 'i32');
      const his = at(21, [2], 'i32');
      const st = at(24, [2, 2, 2]);
      put(x, flat(X)); put(weight, flat(W)); put(bias, BIAS); put(q, QSL); put(his, HIS); put(st, flat(STATE));
      const inp = { x, weight, bias, queryStartLoc: q, hasInitialState: his, convState: st };
      const alias = (what: string, name: string) => `${what}: shares memory with ${name} (an output must not alias an input or another output)`;
      const refuses = (out: conv.ConvOutBuffers, m: string) => throwsExactly(() => conv.forwardSync(inp, { backend: b, out }), RangeError, m);
      refuses({ out: at(9, [5, 2]) }, alias('out.out', 'x'));
      refuses({ out: at(10, [5, 2]) }, alias('out.out', 'weight'));
      refuses({ convState: at(15, [2, 2, 2]) }, alias('out.convState', 'weight'));
      refuses({ convState: at(17, [2, 2, 2]) }, alias('out.convState', 'bias'));
      refuses({ convState: at(20, [2, 2, 2]) }, alias('out.convState', 'queryStartLoc'));
      refuses({ out: at(21, [5, 2]) }, alias('out.out', 'hasInitialState'));
      refuses({ convState: at(31, [2, 2, 2]) }, alias('out.convState', 'convState'));
      refuses({ out: at(32, [5, 2]), convState: at(41, [2, 2, 2]) }, alias('out.out', 'out.convState'));
      // touching everything: runs
      const r = conv.forwardSync(inp, { backend: b, out: { out: at(32, [5, 2]), convState: at(42, [2, 2, 2]) } });
      assert.deepEqual(r.out.toArray(), WANT.out);
      assert.deepEqual(r.convState.toArray(), WANT.state);
      r.release();
      arena.release();
    });
  });

  describe('the two calls\' argument bytes, failures after allocation, user arms', () => {
    it('sync calls pass the shared scratch bytes, async calls bytes of their own', async () => {
      conv.forwardSync(inputs(), { backend: b }).release();
      conv.forwardSync(inputs(), { backend: b }).release();
      (await conv.forward(inputs(), { backend: b })).release();
      (await conv.forward(inputs(), { backend: b })).release();
      assertArgumentBytes(seen, 2); // the args struct and the contract
      seen.clear();
      const uin = { x: Tensor.zeros([1, 1]), weight: Tensor.zeros([1, 2]), state: Tensor.zeros([1, 1, 1]), stateIndices: [0] };
      conv.updateSync(uin, { backend: b }).release();
      conv.updateSync(uin, { backend: b }).release();
      (await conv.update(uin, { backend: b })).release();
      (await conv.update(uin, { backend: b })).release();
      assertArgumentBytes(seen, 1);
    });

    it('a failure after the outputs exist releases ours, never the caller\'s', () => {
      const bad = { schedule: 'sideways' as never };
      const st = Tensor.from(flat(STATE), [2, 2, 2]).to(b);
      throwsExactly(() => conv.forwardSync(inputs('f32', { convState: st }), { backend: b, inPlace: true, ...bad }), TypeError,
        "schedule: expected 'forward', 'reverse', { shuffle: seed } or an array of block indices, got 'sideways'");
      assert.equal(st.released, false);
      const out = Tensor.empty([5, 2], 'f32', { backend: b });
      const cs = Tensor.empty([2, 2, 2], 'f32', { backend: b });
      assert.throws(() => conv.forwardSync(inputs(), { backend: b, out: { out, convState: cs }, ...bad }), TypeError);
      assert.ok(!out.released && !cs.released);
      assert.equal(b.stats().liveBuffers, 3);
      assert.throws(() => conv.forwardSync(inputs(), { backend: b, out: { convState: cs }, ...bad }), TypeError);
      assert.equal(b.stats().liveBuffers, 3);
      // update: a bad initial out is refused after the pool copy exists; an inPlace pool stays alive
      const pool = Tensor.zeros([2, 1, 1]).to(b);
      throwsExactly(() => conv.updateSync({ x: Tensor.zeros([1, 1]), weight: Tensor.zeros([1, 2]), state: pool, stateIndices: [1] }, { backend: b, inPlace: true, out: Tensor.zeros([2, 1]) }),
        RangeError, 'out: expected shape [B=1, C=1], got [2, 1]');
      assert.equal(pool.released, false);
      assert.equal(b.stats().liveBuffers, 4);
      for (const t of [st, out, cs, pool]) t.release();
    });

    it('a state pool of rank 4 is refused even when sizes 1 and 2 fit', () => {
      throwsExactly(() => conv.updateSync({ x: Tensor.zeros([1, 2]), weight: Tensor.zeros([2, 3]), state: Tensor.zeros([1, 2, 2, 1]), stateIndices: [0] }, { backend: b }), RangeError,
        'state: expected shape [slots, C=2, K-1=2], got [1, 2, 2, 1]');
    });

    it('prepareTimed gets a defined arm ready for timing before staging (a registry entry of the test\'s own)', () => {
      const prepared: string[] = [];
      registerArm({ op: 'conv', name: 'edge-timed', id: 999, mappings: ['sequence'], description: 'test', prepareTiming: () => prepared.push('edge-timed') });
      try {
        // libgdn has no such arm: refused after the preparation
        assert.throws(() => conv.prepareTimed(inputs(), { backend: b, arm: 'edge-timed' }), /arm: expected one of .*got 'edge-timed'/);
        assert.deepEqual(prepared, ['edge-timed']);
        conv.prepareTimed(inputs(), { backend: b, arm: 'reg' }).release();
        assert.deepEqual(prepared, ['edge-timed']);
      } finally {
        forgetArm('conv', 'edge-timed');
      }
    });

    it('an arm listing several mappings but not the one asked: named with its list, no whole-sequence hint', () => {
      const real = gdnLib();
      const n = real.armCount(OP_KIND.conv) as number;
      const reg = conv.convArms().indexOf('reg');
      const standIn = {
        ...real,
        armCount: (code: number) => (real.armCount(code) as number) + (code === OP_KIND.conv ? 1 : 0),
        armInfo: (code: number, id: number, out: Record<string, unknown>[]) => {
          if (code !== OP_KIND.conv || id !== n) return real.armInfo(code, id, out);
          real.armInfo(code, reg, out);
          out[0] = { ...out[0], id: n, name: 'two-way', mappings: 0b011 };
          return 0;
        },
      };
      const gdnLibReal = native.gdnLib;
      native.gdnLib = () => standIn;
      armsChanged();
      try {
        throwsExactly(() => conv.forwardSync(inputs(), { backend: b, arm: 'two-way', mapping: 'sequence' }), RangeError,
          "mapping: arm 'two-way' runs 'exact', 'exact-racy', not 'sequence'");
      } finally {
        native.gdnLib = gdnLibReal;
        armsChanged();
      }
      assert.ok(!conv.convArms().includes('two-way'));
    });
  });

  describe('prepareTimed', () => {
    it('stages everything on the backend (offsets too), labels, and releases what it made', () => {
      const inp = inputs();
      const t = conv.prepareTimed(inp, { backend: b, arm: 'reg' });
      assert.equal(t.kind, 'conv');
      assert.equal(t.label, 'reg/exact');
      assert.deepEqual(t.source, { op: 'conv', inputs: inp, opts: { backend: b, arm: 'reg' } });
      const a = t.args as ConvArgs;
      assert.equal(a.query_start_loc_host, 0);
      const q = new Int32Array(3);
      b.download(new Uint8Array(q.buffer), a.query_start_loc);
      assert.deepEqual(Array.from(q), QSL);
      assert.ok(b.stats().liveBuffers >= 6);
      t.release();
      assert.equal(b.stats().liveBuffers, 0);
      const named = conv.prepareTimed(inputs(), { backend: b }, 'mine');
      assert.equal(named.label, 'mine');
      named.release();
      const plain = conv.prepareTimed(inputs(), { backend: b });
      assert.equal(plain.label, 'scalar/sequence');
      plain.release();
    });

    it('timing runs blocks in their natural order', () => {
      for (const schedule of ['reverse', { shuffle: 1 }, [0, 1]] as conv.Schedule[]) {
        throwsExactly(() => conv.prepareTimed(inputs(), { backend: b, schedule }), Error, 'schedule: timing runs blocks in their natural order');
      }
      conv.prepareTimed(inputs(), { backend: b, schedule: 'forward' }).release();
    });

    it('release keeps the caller\'s buffers: an inPlace state, given outputs', () => {
      const st = Tensor.from(flat(STATE), [2, 2, 2]).to(b);
      const t = conv.prepareTimed(inputs('f32', { convState: st }), { backend: b, inPlace: true });
      assert.equal((t.args as ConvArgs).conv_state, st.addr);
      t.release();
      assert.equal(st.released, false);
      const out = Tensor.empty([5, 2], 'f32', { backend: b });
      const cs = Tensor.empty([2, 2, 2], 'f32', { backend: b });
      const t2 = conv.prepareTimed(inputs(), { backend: b, out: { out, convState: cs } });
      assert.deepEqual([(t2.args as ConvArgs).out, (t2.args as ConvArgs).conv_state], [out.addr, cs.addr]);
      t2.release();
      assert.ok(!out.released && !cs.released);
      for (const x of [st, out, cs]) x.release();
    });
  });

  describe('expectOffsets, int32Tensor, stageOffsets', () => {
    it('expectOffsets: numbers stay an Int32Array, a tensor made once when asked; a device tensor is not read', () => {
      const o = conv.expectOffsets([0, 2, 5], 5);
      assert.equal(o.N, 2);
      assert.ok(o.host instanceof Int32Array);
      assert.deepEqual(Array.from(o.host as Int32Array), [0, 2, 5]);
      assert.equal(o.given, null);
      const t = o.tensor();
      assert.equal(o.tensor(), t);
      assert.deepEqual([t.dtype, t.location, ...t.shape], ['i32', 'host', 3]);
      assert.deepEqual(Array.from(t.bits()), [0, 2, 5]);
      const h = Tensor.from([0, 5], [2], 'i32');
      const oh = conv.expectOffsets(h, 5);
      assert.deepEqual([oh.N, oh.given === h, oh.tensor() === h], [1, true, true]);
      assert.deepEqual(Array.from(oh.host as Int32Array), [0, 5]);
      const d = Tensor.from([3, 1, 9], [3], 'i32').to(b);  // not checked here: libgdn reads a device copy
      const od = conv.expectOffsets(d, 5);
      assert.deepEqual([od.N, od.host, od.given === d, od.tensor() === d], [2, null, true, true]);
      d.release();
      // the host checks at their edges
      assert.equal(conv.expectOffsets([0, 0, 0], 0).N, 2);
      throwsExactly(() => conv.expectOffsets([], 0), RangeError, 'queryStartLoc: expected shape [N+1] with N >= 1, got [0]');
    });

    it('int32Tensor: a tensor as it is; integers and booleans as i32; anything else refused by index', () => {
      const t = Tensor.zeros([2], 'f32');
      assert.equal(conv.int32Tensor(t, 'w'), t);
      const m = conv.int32Tensor([true, false, -(2 ** 31), 2 ** 31 - 1, 0], 'w');
      assert.deepEqual([m.dtype, ...m.shape], ['i32', 5]);
      assert.deepEqual(Array.from(m.bits()), [1, 0, -(2 ** 31), 2 ** 31 - 1, 0]);
      throwsExactly(() => conv.int32Tensor({ length: 1 } as never, 'w'), TypeError, 'w: expected a Tensor or an array of integers, got Object');
      throwsExactly(() => conv.int32Tensor([0, NaN], 'w'), TypeError, 'w[1]: expected an integer, got NaN');
      throwsExactly(() => conv.int32Tensor([0, 1, 2 ** 31], 'w'), TypeError, 'w[2]: expected an integer, got 2147483648');
      throwsExactly(() => conv.int32Tensor([-(2 ** 31) - 1], 'w'), TypeError, 'w[0]: expected an integer, got -2147483649');
      throwsExactly(() => conv.int32Tensor([null] as never, 'w'), TypeError, 'w[0]: expected an integer, got null');
    });

    it('stageOffsets: the device route stages a tensor; the host routes hand a host copy, a fresh one to be freed', () => {
      const st = new Staging(b);
      const natives: unknown[] = [];
      const o = conv.expectOffsets([0, 1, 3], 3);
      const dev = conv.stageOffsets(o, 'device', st, natives);
      assert.equal(dev.query_start_loc_host, 0);
      const q = new Int32Array(3);
      b.download(new Uint8Array(q.buffer), dev.query_start_loc);
      assert.deepEqual(Array.from(q), [0, 1, 3]);
      const scratch = conv.stageOffsets(o, 'scratch', st, natives);
      assert.equal(scratch.query_start_loc, 0);
      assert.notEqual(scratch.query_start_loc_host, 0);
      assert.equal(natives.length, 0);
      const fresh = conv.stageOffsets(o, 'fresh', st, natives);
      assert.equal(fresh.query_start_loc, 0);
      assert.equal(natives.length, 1);
      assert.notEqual(fresh.query_start_loc_host, scratch.query_start_loc_host);
      assert.deepEqual(Array.from(koffi.decode(natives[0], 'int32_t', 3) as number[]), [0, 1, 3]);
      native.freeNative(natives[0]);
      // a device tensor has no host copy: staged as it is on every route
      const d = Tensor.from([0, 3], [2], 'i32').to(b);
      const od = conv.expectOffsets(d, 3);
      for (const path of ['scratch', 'fresh', 'device'] as const) assert.deepEqual(conv.stageOffsets(od, path, st, natives), { query_start_loc: d.addr, query_start_loc_host: 0 });
      assert.equal(natives.length, 1);
      st.release();
      d.release();
    });
  });

  describe('conv.update', () => {
    // B = 3 sequences, C = 2, K = 3; pool of 4 slots.
    const UX: M2 = [[1, 2], [3, -1], [0, 4]];
    const POOL: M3 = [[[1, 2], [3, 4]], [[5, 6], [7, 8]], [[-1, 0], [2, -2]], [[9, 9], [9, 9]]];
    const upd = (slots: number[]) => {
      const out = UX.map((r) => r.map(() => NaN));
      const pool = POOL.map((s) => s.map((r) => [...r]));
      slots.forEach((i, bb) => {
        if (i < 0) return;
        for (let c = 0; c < 2; c++) {
          const win = [...POOL[i][c], UX[bb][c]];
          out[bb][c] = BIAS[c] + W[c].reduce((s, wj, j) => s + wj * win[j], 0);
          pool[i][c] = win.slice(1);
        }
      });
      return { out, pool };
    };
    const uin = (dt: 'f32' | 'bf16' = 'f32', over: Partial<conv.ConvUpdateInputs> = {}): conv.ConvUpdateInputs => ({
      x: Tensor.from(flat(UX), [3, 2], dt), weight: Tensor.from(flat(W), [2, 3], dt), bias: Tensor.from(BIAS, [2], dt),
      state: Tensor.from(flat(POOL), [4, 2, 2], 'f32'), stateIndices: [2, -1, 0], ...over,
    });
    const POISON = 0x7fc0dead;

    it('exact outputs and pool; a skipped sequence keeps a poisoned row; the input pool untouched', () => {
      const inp = uin();
      const r = conv.updateSync(inp, { backend: b });
      const want = upd([2, -1, 0]);
      const got = r.out.toArray() as M2;
      assert.deepEqual([got[0], got[2]], [want.out[0], want.out[2]]);
      assert.deepEqual(Array.from(r.out.bits()).slice(2, 4), [POISON, POISON]);
      assert.deepEqual(r.state.toArray(), want.pool);
      assert.deepEqual(inp.state.toArray(), POOL);
      assert.equal(r.arm, 'reference');
      assert.equal(r.backend, 'host');
      assert.deepEqual(r.out.coordinates?.names([3, 2]), ['sequence', 'channel']);
      assert.deepEqual(r.state.coordinates?.names([4, 2, 2]), ['slot', 'channel', 'tap']);
      const a = seen.update[0];
      assert.deepEqual([a.B, a.C, a.K, a.x_dtype, a.out_dtype, a.state_dtype, a.arm, a.num_slots], [3, 2, 3, 0, 0, 0, 0, 4]);
      assert.equal(a.state_indices, 0);
      assert.notEqual(a.state_indices_host, 0);
      assert.notEqual(a.bias, 0);
      r.release();
      assert.ok(r.out.released && r.state.released);
    });

    it('bf16 x and out, a bf16 pool, the reg arm, no bias', () => {
      const r = conv.updateSync(uin('bf16', { state: Tensor.from(flat(POOL), [4, 2, 2], 'bf16'), stateIndices: [1, 3, 0] }), { backend: b, arm: 'reg', outDtype: 'bf16' });
      const want = upd([1, 3, 0]);
      assert.deepEqual(r.out.toArray(), want.out);
      assert.equal(r.out.dtype, 'bf16');
      assert.equal(r.state.dtype, 'bf16');
      assert.deepEqual(r.state.toArray(), want.pool);
      assert.equal(r.arm, 'reg');
      r.release();
      const nb = conv.updateSync({ x: Tensor.from([40, 41], [2, 1]), weight: Tensor.from([0, 0, 1], [1, 3]), bias: null, state: Tensor.zeros([2, 1, 2]), stateIndices: [1, 0] }, { backend: b });
      assert.deepEqual(nb.out.toArray(), [[40], [41]]);
      assert.deepEqual(nb.state.toArray(), [[[0, 41]], [[0, 40]]]);
      nb.release();
      assert.deepEqual(seen.update.map((a) => [a.x_dtype, a.out_dtype, a.state_dtype, a.arm, a.bias === 0]), [[1, 1, 1, 1, false], [0, 0, 0, 0, true]]);
    });

    it('the slots\' routes: numbers and host tensors as a host copy, a device tensor staged as it is; async copies are freed', async () => {
      const d = Tensor.from([2, -1, 0], [3], 'i32').to(b);
      const want = upd([2, -1, 0]);
      for (const stateIndices of [[2, -1, 0], Tensor.from([2, -1, 0], [3], 'i32'), d]) {
        const r = conv.updateSync(uin('f32', { stateIndices }), { backend: b });
        assert.deepEqual(r.state.toArray(), want.pool);
        r.release();
      }
      const [n, h, dv] = seen.update;
      assert.deepEqual([n.state_indices, h.state_indices, dv.state_indices, dv.state_indices_host], [0, 0, d.addr, 0]);
      assert.ok(n.state_indices_host !== 0 && h.state_indices_host === n.state_indices_host);
      const c = countNatives();
      const r = await conv.update(uin(), { backend: b });
      c.stop();
      assert.deepEqual([c.made, c.freed], [1, 1]);
      assert.deepEqual(r.state.toArray(), want.pool);
      assert.ok(seen.update[3].state_indices_host !== 0 && seen.update[3].state_indices_host !== n.state_indices_host);
      r.release();
      // a device tensor's slots are checked by libgdn
      const bad = Tensor.from([0, 4, 1], [3], 'i32').to(b);
      throwsExactly(() => conv.updateSync(uin('f32', { stateIndices: bad }), { backend: b }), GdnError,
        'conv.update: args.state_indices: entry 1 = 4 is not a slot of the pool (num_slots = 4)');
      await assert.rejects(conv.update(uin('f32', { stateIndices: bad }), { backend: b }), GdnError);
      d.release();
      bad.release();
    });

    it('argument checks, each naming the argument', () => {
      const refuses = (over: Partial<conv.ConvUpdateInputs>, type: Function, m: string, opts: conv.ConvUpdateOptions = {}) =>
        throwsExactly(() => conv.updateSync(uin('f32', over), { backend: b, ...opts }), type, m);
      refuses({}, TypeError, "arm: expected one of 'reference', 'reg', got 'scalar'", { arm: 'scalar' });
      refuses({}, TypeError, "outDtype: expected one of 'f32', 'bf16', got 'i8'", { outDtype: 'i8' as never });
      refuses({ x: 1 as never }, TypeError, 'x: expected a Tensor, got 1');
      refuses({ x: Tensor.zeros([3, 2], 'f16') }, TypeError, 'x: expected dtype f32 or bf16, got f16');
      refuses({ x: Tensor.zeros([6]) }, RangeError, 'x: expected shape [B, C], got [6]');
      refuses({ x: Tensor.zeros([3, 2], 'f32', { rowStride: 3 }) }, RangeError, 'x: expected a contiguous tensor, got row stride 3 for rows of 2');
      refuses({ weight: Tensor.zeros([2, 3], 'bf16') }, TypeError, 'weight: expected dtype f32 (the dtype of x), got bf16');
      refuses({ state: null as never }, TypeError, 'state: expected a Tensor, got null');
      refuses({ state: Tensor.zeros([4, 2, 2], 'i32') }, TypeError, 'state: expected dtype f32 or bf16, got i32');
      refuses({ state: Tensor.zeros([4, 4]) }, RangeError, 'state: expected shape [slots, C=2, K-1=2], got [4, 4]');
      refuses({ state: Tensor.zeros([4, 3, 2]) }, RangeError, 'state: expected shape [slots, C=2, K-1=2], got [4, 3, 2]');
      refuses({ state: Tensor.zeros([4, 2, 3]) }, RangeError, 'state: expected shape [slots, C=2, K-1=2], got [4, 2, 3]');
      refuses({ stateIndices: [0, 1] }, RangeError, 'stateIndices: expected shape [B=3], got [2]');
      refuses({ stateIndices: [0, 1, 1.5] }, TypeError, 'stateIndices[2]: expected an integer, got 1.5');
      refuses({ stateIndices: 'all' as never }, TypeError, "stateIndices: expected a Tensor or an array of integers, got 'all'");
      refuses({ stateIndices: Tensor.from([0, 1, 2], [3], 'i8') }, TypeError, 'stateIndices: expected dtype i32, got i8');
      refuses({ stateIndices: Tensor.from([0, 1], [2], 'i32') }, RangeError, 'stateIndices: expected shape [B=3], got [2]');
      refuses({ stateIndices: [0, 4, 1] }, RangeError, 'stateIndices[1]: slot 4 is outside the pool of 4 slots');
      refuses({ stateIndices: Tensor.from([0, 1, 4], [3], 'i32') }, RangeError, 'stateIndices[2]: slot 4 is outside the pool of 4 slots');
      refuses({ stateIndices: [0, 0, -1] }, RangeError, 'stateIndices[1]: slot 0 is also used by sequence 0 (two sequences cannot update one slot)');
      refuses({ stateIndices: [3, 1, 3] }, RangeError, 'stateIndices[2]: slot 3 is also used by sequence 0 (two sequences cannot update one slot)');
      refuses({ stateIndices: [-1, 1, 1] }, RangeError, 'stateIndices[2]: slot 1 is also used by sequence 1 (two sequences cannot update one slot)');
      // slots at the edges run: slots - 1, and negatives repeated
      conv.updateSync(uin('f32', { stateIndices: [3, -1, -1] }), { backend: b }).release();
      conv.updateSync(uin('f32', { stateIndices: [-2, -1, -5] }), { backend: b }).release();
    });

    it('long batches (> 16 sequences) find a slot named twice through a map, with the first sequence named', () => {
      const B = 17;
      const long = (idx: number[]) => conv.updateSync({
        x: Tensor.zeros([B, 1]), weight: Tensor.zeros([1, 2]), state: Tensor.zeros([20, 1, 1]), stateIndices: idx,
      }, { backend: b });
      const idx = Array.from({ length: B }, (_, i) => i);
      long(idx).release();
      idx[16] = 3;
      throwsExactly(() => long(idx), RangeError, 'stateIndices[16]: slot 3 is also used by sequence 3 (two sequences cannot update one slot)');
      idx[16] = -1;
      idx[15] = -1;
      long(idx).release();
      idx[0] = 19;
      idx[16] = 19;
      throwsExactly(() => long(idx), RangeError, 'stateIndices[16]: slot 19 is also used by sequence 0 (two sequences cannot update one slot)');
      idx[16] = 20;
      throwsExactly(() => long(idx), RangeError, 'stateIndices[16]: slot 20 is outside the pool of 20 slots');
    });

    it('inPlace: the pool must be on the backend; then it is the result\'s and kept by release()', () => {
      throwsExactly(() => conv.updateSync(uin(), { backend: b, inPlace: true }), Error, 'inPlace: state must already be on the backend to be updated in place');
      const elsewhere = Tensor.from(flat(POOL), [4, 2, 2]).to(other);
      throwsExactly(() => conv.updateSync(uin('f32', { state: elsewhere }), { backend: b, inPlace: true }), Error, 'inPlace: state must already be on the backend to be updated in place');
      elsewhere.release();
      const pool = Tensor.from(flat(POOL), [4, 2, 2]).to(b);
      const given = Tensor.empty([4, 2, 2], 'f32', { backend: b });
      throwsExactly(() => conv.updateSync(uin('f32', { state: pool }), { backend: b, inPlace: true, out: { state: given } }), Error,
        'out.state: cannot be combined with inPlace (inPlace already updates state itself)');
      given.release();
      const r = conv.updateSync(uin('f32', { state: pool }), { backend: b, inPlace: true });
      assert.equal(r.state, pool);
      assert.deepEqual(pool.toArray(), upd([2, -1, 0]).pool);
      r.release();
      assert.ok(!pool.released && r.out.released);
      const r2 = conv.updateSync(uin('f32', { state: pool }), { backend: b });
      assert.notEqual(r2.state, pool);
      r2.release();
      pool.release();
    });

    it('out as a Tensor: the initial contents of out (copied), kept in skipped rows; checked by name', () => {
      const init = Tensor.from([7, 7, 8, 8, 9, 9], [3, 2]);
      const r = conv.updateSync(uin(), { backend: b, out: init });
      const want = upd([2, -1, 0]);
      assert.deepEqual(r.out.toArray(), [want.out[0], [8, 8], want.out[2]]);
      assert.notEqual(r.out, init);
      assert.deepEqual(init.toArray(), [[7, 7], [8, 8], [9, 9]]);
      r.release();
      const dinit = init.to(b);
      const r2 = conv.updateSync(uin(), { backend: b, out: dinit });
      assert.notEqual(r2.out, dinit);
      assert.deepEqual(dinit.toArray(), [[7, 7], [8, 8], [9, 9]]);
      r2.release();
      assert.equal(dinit.released, false);
      dinit.release();
      throwsExactly(() => conv.updateSync(uin(), { backend: b, out: Tensor.zeros([3, 3]) }), RangeError, 'out: expected shape [B=3, C=2], got [3, 3]');
      throwsExactly(() => conv.updateSync(uin(), { backend: b, out: Tensor.zeros([3, 2], 'bf16') }), TypeError, 'out: expected dtype f32 (outDtype), got bf16');
      const gone = Tensor.zeros([3, 2]);
      gone.release();
      throwsExactly(() => conv.updateSync(uin(), { backend: b, out: gone }), Error, 'out: tensor [3, 2] f32 was released');
    });

    it('out buffers: refused by name; written in place, the pool copied in first, kept by release()', async () => {
      const refuses = (out: unknown, type: Function, m: string) => throwsExactly(() => conv.updateSync(uin(), { backend: b, out: out as never }), type, m);
      refuses(7, TypeError, 'out: expected { out?, state? } (output buffers) or a Tensor (initial contents of out), got 7');
      refuses({ convState: 1 }, TypeError, 'out.convState: not an output of conv.update (expected out or state)');
      const s16 = Tensor.empty([4, 2, 2], 'bf16', { backend: b });
      refuses({ state: s16 }, TypeError, 'out.state: expected dtype f32, got bf16');
      const o = Tensor.empty([3, 2], 'f32', { backend: b });
      const s = Tensor.empty([4, 2, 2], 'f32', { backend: b });
      b.fillU32(o.addr, 0x41200000, 24);  // 10.0: a skipped row keeps it (not poisoned)
      const want = upd([2, -1, 0]);
      for (const run of [() => Promise.resolve(conv.updateSync(uin(), { backend: b, out: { out: o, state: s } })), () => conv.update(uin(), { backend: b, out: { out: o, state: s } })]) {
        const r = await run();
        assert.equal(r.out, o);
        assert.equal(r.state, s);
        assert.deepEqual(o.toArray(), [want.out[0], [10, 10], want.out[2]]);
        assert.deepEqual(s.toArray(), want.pool);
        r.release();
        assert.ok(!o.released && !s.released);
      }
      const onlyOut = conv.updateSync(uin(), { backend: b, out: { out: o } });
      assert.notEqual(onlyOut.state, s);
      onlyOut.release();
      assert.ok(onlyOut.state.released && !o.released);
      for (const given of [null, {}]) {
        const r = conv.updateSync(uin(), { backend: b, out: given as never });
        assert.deepEqual(Array.from(r.out.bits()).slice(2, 4), [POISON, POISON]);
        r.release();
      }
      // aliasing: out.out on x, out.state on the input pool, out.out on out.state
      const arena = Tensor.empty([64], 'f32', { backend: b });
      const at = (off: number, shape: number[]) => new Tensor(shape, 'f32', arena.storage, { offset: off });
      const x = at(0, [3, 2]);
      const pool = at(8, [4, 2, 2]);
      b.upload(x.addr, new Uint8Array(new Float32Array(flat(UX)).buffer));
      b.upload(pool.addr, new Uint8Array(new Float32Array(flat(POOL)).buffer));
      const alias = (what: string, name: string) => `${what}: shares memory with ${name} (an output must not alias an input or another output)`;
      const ar = (out: conv.ConvUpdateOutBuffers, m: string) => throwsExactly(() => conv.updateSync(uin('f32', { x, state: pool }), { backend: b, out }), RangeError, m);
      ar({ out: at(5, [3, 2]) }, alias('out.out', 'x'));
      ar({ state: at(23, [4, 2, 2]) }, alias('out.state', 'state'));
      ar({ out: at(40, [3, 2]), state: at(45, [4, 2, 2]) }, alias('out.out', 'out.state'));
      const r = conv.updateSync(uin('f32', { x, state: pool }), { backend: b, out: { out: at(24, [3, 2]), state: at(30, [4, 2, 2]) } });
      assert.deepEqual(r.state.toArray(), want.pool);
      r.release();
      for (const t of [s16, o, s, arena]) t.release();
    });

    it('prepareTimedUpdate: slots staged on the backend, labels, release frees what it made', () => {
      const inp = uin();
      const t = conv.prepareTimedUpdate(inp, { backend: b, arm: 'reg' });
      assert.equal(t.kind, 'conv_update');
      assert.equal(t.label, 'update reg');
      assert.deepEqual(t.source, { op: 'conv-update', inputs: inp, opts: { backend: b, arm: 'reg' } });
      const a = t.args as ConvUpdateArgs;
      assert.equal(a.state_indices_host, 0);
      const q = new Int32Array(3);
      b.download(new Uint8Array(q.buffer), a.state_indices);
      assert.deepEqual(Array.from(q), [2, -1, 0]);
      t.release();
      const named = conv.prepareTimedUpdate(uin(), { backend: b }, 'decode');
      assert.equal(named.label, 'decode');
      named.release();
      const plain = conv.prepareTimedUpdate(uin(), { backend: b });
      assert.equal(plain.label, 'update reference');
      plain.release();
      const pool = Tensor.from(flat(POOL), [4, 2, 2]).to(b);
      const o = Tensor.empty([3, 2], 'f32', { backend: b });
      const ip = conv.prepareTimedUpdate(uin('f32', { state: pool }), { backend: b, inPlace: true, out: { out: o } });
      assert.deepEqual([(ip.args as ConvUpdateArgs).state, (ip.args as ConvUpdateArgs).out], [pool.addr, o.addr]);
      ip.release();
      assert.ok(!pool.released && !o.released);
      pool.release();
      o.release();
    });
  });
});
