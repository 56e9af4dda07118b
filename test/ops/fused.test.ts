import { strict as assert } from 'assert';
import { Tensor } from '../../lib/tensor';
import * as fused from '../../lib/ops/fused';
import {
  checkFused, checkedFusedArms, fusedMatrix, makeFusedInputs, fusedOptions, runFusedMutants, compareFused, totalMismatches, diffFused, FusedCase, FUSED_OUTPUTS,
} from '../../lib/check/fused';
import { armByName, armIsMutant } from '../../lib/arms/table';
import { countBitMismatches } from '../../lib/analysis/bits';
import { forEachBackend, openBackend } from '../backends';
import { allocInt32, freeNative } from '../../lib/native/gdn';

const zero = { q: 0, k: 0, v: 0, g: 0, beta: 0, convState: 0 };

// A small case over the given sequence lengths (the offsets and plan-list tests): Hk = 1, Hv value heads,
// bf16 x and conv rounding, f32 q/k (where summation orders show), every other sequence with a state.
function lengthsCase(name: string, Hv: number, lengths: readonly number[], seed: number): FusedCase {
  return {
    name, Hk: 1, Hv, K: 4, lengths: [...lengths], initialState: lengths.map((_, i) => i % 2 === 0), maskDtype: 'i8', bias: true,
    xDtype: 'bf16', convDtype: 'bf16', qkvDtype: 'f32', gateDtype: 'f32', xRowStride: (2 + Hv) * 128, packedWidth: 2 * Hv, bOffset: 0, aOffset: Hv, seed,
  };
}
// Read when the file loads, from libgdn's registry: an arm added there is tested with no change here.
const ARMS = checkedFusedArms();

forEachBackend((backend, kind) => {
  describe('fused conv→post-conv == conv(scalar) → post-conv(tree), bit for bit on every output and the state', function () {
    this.timeout(300000);
    for (const c of fusedMatrix({ quick: true })) {
      it(c.name, async () => {
        const report = await checkFused({ backend: backend(), hostBackend: kind === 'cuda' ? openBackend('host') : undefined, cases: [c] });
        assert.deepEqual(report.results.map((r) => r.arm), ARMS, 'one result per arm, in registry order');
        for (const r of report.results) assert.deepEqual(r.mismatches, zero, `fused ${r.arm} != chain`);
        if (kind === 'cuda') assert.deepEqual(report.crossBackend.map((x) => x.arm), ARMS, 'one cuda-vs-host comparison per arm');
        for (const x of report.crossBackend) assert.deepEqual(x.mismatches, zero, `fused ${x.arm}: cuda != host`);
      });
    }

    it('covers every arm libgdn lists but the planted mutants, and only those', async () => {
      const c = fusedMatrix({ quick: true })[0];
      const report = await checkFused({ backend: backend(), cases: [c] });
      // Computed from the registry here, not from checkedFusedArms(), so a filter that drops an arm shows.
      const expected = fused.fusedArms().filter((_, id) => !armIsMutant('fused', id));
      assert.ok(expected.includes('head-tile'), `head-tile missing from ${expected.join(', ')}`);
      assert.deepEqual(report.arms, expected);
      assert.deepEqual([...new Set(report.results.map((r) => r.arm))], expected);
      assert.equal(report.results.length, expected.length);
      // An arm runs as itself or as the fallback the registry declares for it, never as another arm.
      for (const r of report.results) assert.ok([r.arm, armByName('fused', r.arm).fallback].includes(r.armRan), `${r.arm} ran ${r.armRan}`);
    });

    it('runs exactly the arms asked for; an empty list is refused', async () => {
      const c = fusedMatrix({ quick: true })[0];
      const report = await checkFused({ backend: backend(), cases: [c], arms: ['head-tile'] });
      assert.deepEqual(report.results.map((r) => r.arm), ['head-tile']);
      await assert.rejects(checkFused({ backend: backend(), cases: [c], arms: [] }), /arms: expected at least one fused arm/);
    });
  });

  describe('fused: what the comparison rests on', function () {
    this.timeout(120000);
    const c: FusedCase = {
      name: 'probe', Hk: 2, Hv: 4, K: 4, lengths: [70, 0, 2, 9], initialState: [true, true, true, false], maskDtype: 'i32', bias: true,
      xDtype: 'bf16', convDtype: 'bf16', qkvDtype: 'f32', gateDtype: 'bf16', xRowStride: 1024, packedWidth: 13, bOffset: 1, aOffset: 7, seed: 42,
    };

    it('the default arm is stream-mufu; the arms report the launch shape of the (head slot, program) grid', async () => {
      const r = await fused.forward(makeFusedInputs(c), fusedOptions(c, backend()));
      assert.equal(r.requested, 'stream-mufu');
      assert.deepEqual(r.launch, { arm: 'stream-mufu', threadsPerBlock: 128, grid: [2 * 2 + 4 + 1, 2 + 1 + 1], tokensPerProgram: 64 });
      r.release();
      const h = await fused.forward(makeFusedInputs(c), fusedOptions(c, backend(), null, 'head-tile'));
      assert.equal(h.requested, 'head-tile');
      assert.deepEqual(h.launch, { arm: 'head-tile', threadsPerBlock: 128, grid: [2 * 2 + 4 + 1, 2 + 1 + 1], tokensPerProgram: 64 });
      h.release();
    });

    for (const arm of ARMS) {
      it(`${arm}: writes every element (no poison left) and changes the state of non-empty sequences only`, async () => {
        const inputs = makeFusedInputs(c);
        const r = await fused.forward(inputs, fusedOptions(c, backend(), null, arm));
        assert.equal(r.requested, arm);
        for (const o of ['q', 'k', 'v', 'g', 'beta'] as const) {
          const bits = r[o].bits() as Uint32Array;
          assert.ok(!bits.includes(0x7fc0dead), `${o} holds the poison pattern`);
        }
        // sequence 1 is empty: its state row is untouched; the others changed
        const C = 1024;
        const before = inputs.convState.bits() as Uint32Array;
        const after = r.convState.bits() as Uint32Array;
        const row = (s: number, a: Uint32Array) => Array.from(a.subarray(s * C * 3, (s + 1) * C * 3));
        assert.deepEqual(row(1, after), row(1, before));
        for (const s of [0, 2, 3]) assert.notDeepEqual(row(s, after), row(s, before));
        r.release();
      });

      it(`${arm}: the f32 q/k outputs see orders the bf16 outputs hide: the comparison is made in f32 too`, async () => {
        const inputs = makeFusedInputs(c);
        const ref = await fused.chain(inputs, fusedOptions(c, backend()));
        const mut = await fused.forward(inputs, fusedOptions(c, backend(), 'seq-fold', arm));
        const diff = compareFused(mut, ref);
        assert.ok(diff.q + diff.k > 100, `seq-fold changes only ${diff.q + diff.k} f32 q/k elements`);
        assert.equal(diff.v + diff.g + diff.beta + diff.convState, 0, 'seq-fold touches q and k only');
        assert.equal(mut.mutant, 'seq-fold');
        // the same through diff(): the counts agree, mismatches carry (token, head, feature) and are a few ulps
        const d = diffFused(mut, ref);
        for (const o of FUSED_OUTPUTS) assert.equal(d[o].mismatches, diff[o], o);
        assert.deepEqual(Object.keys(d.q.first[0].coords), ['token', 'head', 'feature']);
        assert.ok(d.q.first.every((m) => m.ulp !== null && m.ulp <= 8), 'seq-fold moves q by a few f32 ulps');
        ref.release();
        mut.release();
      });

      it(`${arm}: in place: the caller's device state is updated, and equals the chain's`, async () => {
        const inputs = makeFusedInputs(c);
        const ref = await fused.chain(inputs, fusedOptions(c, backend()));
        const dev = inputs.convState.to(backend());
        const r = await fused.forward({ ...inputs, convState: dev }, { ...fusedOptions(c, backend(), null, arm), inPlace: true });
        assert.equal(r.convState, dev);
        assert.equal(countBitMismatches(dev, ref.convState), 0);
        r.release();
        assert.ok(!dev.released);
        dev.release();
        ref.release();
      });
    }
  });

  describe('fused: the planted mutants are caught', function () {
    this.timeout(300000);
    it('in every arm: seq-fold (a summation order that is not the tree) in the f32-q/k cases; no-round in the bf16-conv cases', async () => {
      const cases = fusedMatrix({ quick: true }).filter((x) => x.Hk === 1);
      const outcomes = await runFusedMutants(backend(), cases);
      // One outcome per (arm, mutant), arms in registry order.
      assert.deepEqual(outcomes.map((o) => `${o.arm} ${o.mutant}`), ARMS.flatMap((a) => [`${a} seq-fold`, `${a} no-round`]));
      for (const arm of ARMS) {
        const seq = outcomes.find((o) => o.arm === arm && o.mutant === 'seq-fold')!;
        const noRound = outcomes.find((o) => o.arm === arm && o.mutant === 'no-round')!;
        assert.ok(seq.cases > 0 && noRound.cases > 0, `${arm}: no case can show a mutant`);
        assert.ok(seq.caught && seq.caughtCases === seq.cases, `${arm}: ${seq.detail}`);
        assert.ok(noRound.caught && noRound.caughtCases === noRound.cases, `${arm}: ${noRound.detail}`);
        assert.equal(seq.mismatches.v + seq.mismatches.g + seq.mismatches.beta + seq.mismatches.convState, 0, `${arm}: seq-fold touches q and k only`);
        assert.equal(noRound.mismatches.g + noRound.mismatches.beta + noRound.mismatches.convState, 0, `${arm}: no-round touches q, k and v only`);
        assert.ok(noRound.mismatches.v > 0 && noRound.mismatches.q > 0, `${arm}: ${noRound.detail}`);
      }
    });

    it('a mutant run through one arm reports that arm only', async () => {
      const cases = fusedMatrix({ quick: true }).filter((x) => x.Hk === 1).slice(0, 4);
      const outcomes = await runFusedMutants(backend(), cases, ['head-tile']);
      assert.deepEqual(outcomes.map((o) => `${o.arm} ${o.mutant}`), ['head-tile seq-fold', 'head-tile no-round']);
    });
  });

  describe('fused: bad arguments are named', () => {
    const c: FusedCase = {
      name: 'bad', Hk: 1, Hv: 2, K: 4, lengths: [3, 5], initialState: null, maskDtype: 'i8', bias: false,
      xDtype: 'f32', convDtype: 'f32', qkvDtype: 'f32', gateDtype: 'f32', xRowStride: 512, packedWidth: 4, bOffset: 0, aOffset: 2, seed: 1,
    };
    const inputs = () => makeFusedInputs(c);
    const opts = () => fusedOptions(c, backend());
    it('names the argument and what was expected', async () => {
      await assert.rejects(fused.forward(inputs(), { ...opts(), Dk: 64, Dv: 64 }), /Dk, Dv: the fused op needs Dk = Dv = 128/);
      await assert.rejects(fused.forward(inputs(), { ...opts(), Hv: 3 }), /x: expected shape \[T, C=640\]/);
      await assert.rejects(fused.forward(inputs(), { ...opts(), Hk: 2, Hv: 3 }), /Hv: expected a multiple of Hk = 2/);
      await assert.rejects(fused.forward({ ...inputs(), x: Tensor.zeros([8, 500]) }, opts()), /x: expected shape \[T, C=512\]/);
      await assert.rejects(fused.forward({ ...inputs(), x: Tensor.zeros([8, 512], 'f32', { rowStride: 514 }) }, opts()), /x: expected a row stride that is a multiple of 4/);
      await assert.rejects(fused.forward({ ...inputs(), weight: Tensor.zeros([512, 4], 'bf16') }, opts()), /weight: expected dtype f32 \(the dtype of x\)/);
      await assert.rejects(fused.forward({ ...inputs(), queryStartLoc: [0, 3, 7] }, opts()), /queryStartLoc: must end at T = 8/);
      await assert.rejects(fused.forward({ ...inputs(), queryStartLoc: [0, 5, 3, 8] }, opts()), /queryStartLoc: must not decrease/);
      await assert.rejects(fused.forward({ ...inputs(), convState: Tensor.zeros([2, 512, 2]) }, opts()), /convState: expected shape \[N=2, C=512, K-1=3\]/);
      await assert.rejects(fused.forward({ ...inputs(), a: Tensor.zeros([8, 2], 'bf16') }, opts()), /b: expected dtype bf16 \(the dtype of a\), got f32/);
      await assert.rejects(fused.forward({ ...inputs(), ALog: Tensor.zeros([3]) }, opts()), /ALog: expected shape \[Hv=2\]/);
      await assert.rejects(fused.forward(inputs(), { ...opts(), arm: 'fast' as never }), /arm: expected one of 'head-tile'/);
      await assert.rejects(fused.forward(inputs(), { ...opts(), mutant: 'nope' as never }), /mutant: expected one of 'seq-fold', 'no-round'/);
      await assert.rejects(fused.forward(inputs(), { ...opts(), convDtype: 'f16' as never }), /convDtype: expected one of 'f32', 'bf16'/);
      await assert.rejects(fused.forward(inputs(), { ...opts(), inPlace: true }), /inPlace: convState must already be on the backend/);
    });

    it('the native layer names what it rejects (a misaligned x, overlapping outputs)', () => {
      const b = backend();
      const lib = b.lib;
      const x = Tensor.zeros([8, 520], 'f32').to(b);
      const good = makeFusedInputs(c);
      const staged = {
        w: good.weight.to(b), qsl: Tensor.from([0, 3, 8], [3], 'i32').to(b), st: good.convState.to(b),
        ab: Tensor.zeros([8, 4]).to(b), al: Tensor.zeros([2]).to(b), q: Tensor.zeros([8, 1, 128]).to(b), k: Tensor.zeros([8, 1, 128]).to(b), v: Tensor.zeros([8, 2, 128]).to(b), gb: Tensor.zeros([8, 4]).to(b),
      };
      const args = {
        T: 8, Hk: 1, Hv: 2, Dk: 128, Dv: 128, K: 4, num_seqs: 2, x_dtype: 0, conv_dtype: 0, qkv_dtype: 0, gate_dtype: 0, his_dtype: 4, arm: 0, mutant: 0,
        x_row_stride: 516, a_row_stride: 4, b_row_stride: 4, x: x.addr + 16, weight: staged.w.addr, bias: 0, query_start_loc: staged.qsl.addr, has_initial_state: 0,
        conv_state: staged.st.addr, a: staged.ab.addr, b: staged.ab.addr + 8, A_log: staged.al.addr, dt_bias: staged.al.addr,
        q: staged.q.addr, k: staged.q.addr, v: staged.v.addr, g: staged.gb.addr, beta: staged.gb.addr + 8, query_start_loc_host: 0,
      };
      const res = [{}];
      let st = lib.fusedForward(b.native, { ...args, x: x.addr + 4 }, res) as number;
      assert.notEqual(st, 0);
      assert.match(lib.lastError() as string, /args\.x: expected an address aligned to 16 bytes/);
      st = lib.fusedForward(b.native, args, res) as number;
      assert.notEqual(st, 0);
      assert.match(lib.lastError() as string, /args\.k: expected memory apart from args\.q, but the two overlap/);
      st = lib.fusedForward(b.native, { ...args, Dk: 64 }, res) as number;
      assert.match(lib.lastError() as string, /args\.Dk: the fused op needs Dk = 128/);
      // Two sources of the offsets are refused; a host copy is checked like a device one.
      const apart = { ...args, k: staged.k.addr, beta: staged.gb.addr + 64 };
      const hostGood = allocInt32([0, 3, 8]);
      const short = allocInt32([0, 3, 7]);
      st = lib.fusedForward(b.native, { ...apart, query_start_loc_host: hostGood.addr }, res) as number;
      assert.notEqual(st, 0);
      assert.match(lib.lastError() as string, /args\.query_start_loc: must be 0 when args\.query_start_loc_host is given/);
      st = lib.fusedForward(b.native, { ...apart, query_start_loc: 0, query_start_loc_host: short.addr }, res) as number;
      assert.notEqual(st, 0);
      assert.match(lib.lastError() as string, /args\.query_start_loc_host: must end at T = 8, got 7/);
      freeNative(hostGood.mem);
      freeNative(short.mem);
      x.release();
      for (const t of Object.values(staged)) t.release();
    });
  });

  describe('fused: offsets given as host numbers (no read-back) or as a device tensor', function () {
    this.timeout(120000);
    // Numbers (and a host tensor) travel as a host copy (args.query_start_loc_host) that libgdn plans from
    // and puts on the device itself; the bits must be those of the device-tensor route, sync and async,
    // with empty sequences, and with more sequences than the scratch array first holds (256).
    for (const [arm, lengths] of [['stream', [70, 0, 2, 9]], ['head-tile', [130, 5, 64]], ['stream', Array.from({ length: 300 }, (_, i) => (i * 7) % 5)]] as const) {
      it(`${arm}, ${lengths.length} sequences: same bits on every output and the state, no buffer left behind`, async () => {
        const b = backend();
        const c = lengthsCase('offsets', 2, lengths, 9);
        const inputs = makeFusedInputs(c);
        const offsets = inputs.queryStartLoc as readonly number[];
        const onDevice = Tensor.from(offsets, [offsets.length], 'i32').to(b);
        const before = b.stats().liveBuffers;
        const opts = fusedOptions(c, b, null, arm);
        const ref = fused.forwardSync({ ...inputs, queryStartLoc: onDevice }, opts);
        const sync = fused.forwardSync(inputs, opts);
        const async_ = await fused.forward({ ...inputs, queryStartLoc: Tensor.from(offsets, [offsets.length], 'i32') }, opts);
        for (const r of [sync, async_]) {
          assert.deepEqual(compareFused(r, ref), zero);
          assert.deepEqual(r.launch, ref.launch);
        }
        for (const r of [ref, sync, async_]) r.release();
        assert.equal(b.stats().liveBuffers, before);
        onDevice.release();
      });
    }
  });

  describe('fused: one sequence reads no list; a batch reads its lists from memory', function () {
    this.timeout(120000);
    // As for the conv (cuda/src/common/plan_lists.h): one sequence's programs (0, y) and offsets [0, T]
    // are computed in the kernel; a batch's are read from memory. The reference always reads them from
    // memory: the chain over the same batch behind one more, empty sequence (with its own state row).
    const single = (n: number) => Array.from({ length: n }, () => 1);
    for (const [lengths, why] of [
      [[31 * 64], 'one sequence, 31 programs'],
      [[32 * 64 - 5], 'one sequence, 32 programs, the last partial'],
      [[0, 70], 'an empty sequence, then 70 tokens'],
      [single(22), '22 one-token sequences'],
    ] as const) {
      it(`stream, ${why}: the chain's bits`, async () => {
        const b = backend();
        const c = lengthsCase('lists', 1, lengths, 31);
        const inputs = makeFusedInputs(c);
        const offsets = inputs.queryStartLoc as readonly number[];
        const onDevice = Tensor.from(offsets, [offsets.length], 'i32').to(b);
        const opts = fusedOptions(c, b, null, 'stream');
        const N = lengths.length, C = 384, row = C * 3;
        const padded = {
          ...inputs,
          queryStartLoc: Tensor.from([0, ...offsets], [N + 2], 'i32').to(b),
          convState: Tensor.from([...new Array(row).fill(0.5), ...inputs.convState.toFloat32()], [N + 1, C, 3], 'f32'),
          hasInitialState: [0, ...lengths.map((_, i) => (i % 2 === 0 ? 1 : 0))],
        };
        const ref = await fused.chain(padded, opts);
        const refState = Tensor.from(ref.convState.toFloat32().subarray(row), [N, C, 3], 'f32');
        const byNumbers = fused.forwardSync(inputs, opts);
        const byTensor = fused.forwardSync({ ...inputs, queryStartLoc: onDevice }, opts);
        for (const r of [byNumbers, byTensor]) assert.deepEqual(compareFused(r, { ...ref, convState: refState }), zero);
        for (const r of [ref, byNumbers, byTensor]) r.release();
        onDevice.release();
        padded.queryStartLoc.release();
      });
    }
  });
});

describe('fused: the matrix covers what the issue asks for', () => {
  it('f32 and bf16 everywhere, varlen with and without state, several T, the 4B and 27B layouts', () => {
    const m = fusedMatrix();
    for (const k of ['xDtype', 'convDtype', 'qkvDtype', 'gateDtype'] as const) assert.deepEqual([...new Set(m.map((c) => c[k]))].sort(), ['bf16', 'f32']);
    assert.ok(m.some((c) => c.lengths.length > 1 && c.initialState) && m.some((c) => c.lengths.length > 1 && !c.initialState));
    assert.ok(m.some((c) => c.Hk === 16 && c.Hv === 32) && m.some((c) => c.Hk === 16 && c.Hv === 48));
    assert.ok(new Set(m.filter((c) => c.lengths.length === 1).map((c) => c.lengths[0])).size >= 5);
    assert.deepEqual(FUSED_OUTPUTS, ['q', 'k', 'v', 'g', 'beta', 'convState']);
    assert.equal(totalMismatches(zero), 0);
  });
});
