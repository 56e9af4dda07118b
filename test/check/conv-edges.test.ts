// Edge tests for lib/check/conv.ts: the case builders (edgeValues, edgeTensors, makeConvInputs, convMatrix,
// allArmMappings) pinned exactly, and checkConv's verdicts on planted results: conv's forwardSync, the float64
// reference and the arm table are replaced for a test (no kernel runs but in the last test, on a 2-channel case),
// so every branch of a verdict (tolerance, state, rounding, arm-vs-reference, cross-backend) is asserted.

import { strict as assert } from 'assert';
import { Tensor } from '../../lib/tensor';
import { checkConv, convMatrix, allArmMappings, makeConvInputs, edgeValues, edgeTensors, ConvCase, PAD_POISON } from '../../lib/check/conv';
import { Stubs, tensor, armInfo } from './check-stubs';
import { openBackend } from '../backends';

const convOps = require('../../lib/ops/conv') as Record<string, unknown>;
const convRef = require('../../lib/reference/conv') as Record<string, unknown>;
const table = require('../../lib/arms/table') as Record<string, unknown>;

const bytesOf = (t: Tensor) => Array.from((t.storage as unknown as { data: Uint8Array }).data);

describe('check/conv edges: case builders', () => {
  it('edgeValues(4): 80 < |K·x| <= 88 in steps of 0.5 and 0.25 above, both signs, then four ordinary values', () => {
    const v = edgeValues(4);
    assert.equal(v.length, 17 * 4 + 4);
    assert.deepEqual(v.slice(0, 8), [-20, -19.875, 20, 20.125, -20.125, -20, 20.125, 20.25]);
    assert.deepEqual(v.slice(-8), [-22, -21.875, 22, 22.125, 0.5, -1.25, 3, -7.5]);
    // K divides: the same band at K = 3 (rounded to eighths).
    assert.deepEqual(edgeValues(3).slice(0, 6), [-26.625, -26.625, 26.625, 26.75, -26.875, -26.75]);
    assert.equal(edgeValues(3).length, 72);
  });

  it('edgeTensors: x constant over runs of 4 rows per channel, unit weights, the state cycling through the values', () => {
    const vals = edgeValues(2);
    const { x, weight, convState } = edgeTensors(9, 2, 2, 2, 'f32');
    assert.deepEqual(x.shape, [9, 2]);
    assert.equal(x.dtype, 'f32');
    assert.equal(edgeTensors(1, 1, 2, 1, 'bf16').x.dtype, 'bf16');
    assert.equal(edgeTensors(1, 1, 2, 1, 'bf16').weight.dtype, 'bf16');
    const xs = Array.from(x.toFloat32());
    const want: number[] = [];
    for (let t = 0; t < 9; t++) for (let ch = 0; ch < 2; ch++) want.push(vals[(ch * 5 + Math.floor(t / 4)) % vals.length]);
    assert.deepEqual(xs, want);
    // By hand: channel 0 rows 0..3 take vals[0], rows 4..7 vals[1], row 8 vals[2]; channel 1 starts at vals[5].
    assert.deepEqual([xs[0], xs[6], xs[8], xs[16], xs[1], xs[9]], [vals[0], vals[0], vals[1], vals[2], vals[5], vals[6]]);
    assert.deepEqual(weight.shape, [2, 2]);
    assert.equal(weight.dtype, 'f32');
    assert.deepEqual(Array.from(weight.toFloat32()), [1, 1, 1, 1]);
    assert.deepEqual(convState.shape, [2, 2, 1]);
    assert.equal(convState.dtype, 'f32');
    // cycled: element i of a [rows, cols] tensor is values[(7i + floor(i / cols)) % n]; cols = 1 here.
    assert.deepEqual(Array.from(convState.toFloat32()), [0, 1, 2, 3].map((i) => vals[(8 * i) % vals.length]));
    const wide = edgeTensors(1, 1, 4, 1, 'f32').convState;
    assert.deepEqual(wide.shape, [1, 1, 3]);
    assert.deepEqual(Array.from(wide.toFloat32()), [0, 1, 2].map((i) => edgeValues(4)[i * 7]));
  });

  const rnd: ConvCase = { name: 'r', C: 3, K: 3, xDtype: 'bf16', outDtype: 'f32', lengths: [2, 0, 1], initialState: [true, false, true], maskDtype: 'i32', bias: true, xRowStride: 5, seed: 7 };

  it('makeConvInputs: seeded x (padding poisoned), weight, bias, state, query starts and mask', () => {
    const i = makeConvInputs(rnd);
    assert.deepEqual(i.queryStartLoc, [0, 2, 2, 3]);
    assert.deepEqual(i.x.shape, [3, 3]);
    assert.equal(i.x.rowStride, 5);
    assert.deepEqual(bytesOf(i.x), bytesOf(Tensor.random([3, 3], 'bf16', { seed: 7, rowStride: 5, padValue: NaN })));
    assert.ok(Number.isNaN(PAD_POISON));
    assert.ok(Number.isNaN(Tensor.fromBytes(new Uint8Array(bytesOf(i.x).slice(6, 10)), [2], 'bf16').toFloat32()[0]), 'the padding holds NaN');
    assert.deepEqual(bytesOf(i.weight), bytesOf(Tensor.random([3, 3], 'bf16', { seed: 8, scale: 0.5 })));
    assert.deepEqual(bytesOf(i.bias!), bytesOf(Tensor.random([3], 'bf16', { seed: 9, scale: 0.25 })));
    assert.deepEqual(i.convState.shape, [3, 3, 2]);
    assert.deepEqual(bytesOf(i.convState), bytesOf(Tensor.random([3, 3, 2], 'f32', { seed: 10 })));
    assert.equal(i.hasInitialState!.dtype, 'i32');
    assert.deepEqual(Array.from(i.hasInitialState!.bits()), [1, 0, 1]);
    const plain = makeConvInputs({ ...rnd, xRowStride: 3, bias: false, initialState: null, maskDtype: 'i8', xDtype: 'f32' });
    assert.equal(plain.bias, null);
    assert.equal(plain.hasInitialState, null);
    assert.equal(plain.x.rowStride, 3);
    assert.deepEqual(bytesOf(plain.x), bytesOf(Tensor.random([3, 3], 'f32', { seed: 7 })));
    const i8 = makeConvInputs({ ...rnd, maskDtype: 'i8' });
    assert.equal(i8.hasInitialState!.dtype, 'i8');
  });

  it("makeConvInputs 'edge': edgeTensors' x, weight and state, no bias even when asked, the mask kept", () => {
    const i = makeConvInputs({ ...rnd, values: 'edge', K: 4 });
    const e = edgeTensors(3, 3, 4, 3, 'bf16');
    assert.deepEqual(bytesOf(i.x), bytesOf(e.x));
    assert.equal(i.x.rowStride, 3);
    assert.deepEqual(bytesOf(i.weight), bytesOf(e.weight));
    assert.deepEqual(bytesOf(i.convState), bytesOf(e.convState));
    assert.equal(i.bias, null);
    assert.deepEqual(i.queryStartLoc, [0, 2, 2, 3]);
    assert.deepEqual(Array.from(i.hasInitialState!.bits()), [1, 0, 1]);
    const noMask = makeConvInputs({ ...rnd, values: 'edge', initialState: null });
    assert.equal(noMask.hasInitialState, null);
    // 'random' is the default and spelled out alike.
    assert.deepEqual(bytesOf(makeConvInputs({ ...rnd, values: 'random' }).x), bytesOf(makeConvInputs(rnd).x));
  });

  it('convMatrix: quick 3 C × 4 K × 4 dtype pairs + 2 edge cases, factors rotated per case', () => {
    const m = convMatrix({ quick: true });
    assert.equal(m.length, 50);
    assert.deepEqual(m[0], { name: 'C=129 K=2 f32->f32 state i8 bias', C: 129, K: 2, xDtype: 'f32', outDtype: 'f32', lengths: [5, 0, 0, 8, 9, 33, 200],
      initialState: [true, true, false, true, true, false, true], maskDtype: 'i8', bias: true, xRowStride: 129, seed: 1000 });
    assert.deepEqual(m[1], { name: 'C=129 K=2 bf16->f32 nostate i8 bias', C: 129, K: 2, xDtype: 'bf16', outDtype: 'f32', lengths: [5, 0, 0, 8, 9, 33, 200],
      initialState: null, maskDtype: 'i8', bias: true, xRowStride: 129, seed: 1007 });
    assert.deepEqual(m[20], { name: 'C=385(pad) K=3 f32->f32 state i8 nobias', C: 385, K: 3, xDtype: 'f32', outDtype: 'f32', lengths: [5, 0, 1, 8, 9, 33, 200],
      initialState: [true, true, false, true, true, false, true], maskDtype: 'i8', bias: false, xRowStride: 400, seed: 1140 });
    assert.deepEqual(m.slice(0, 8).map((c) => [c.initialState !== null, c.maskDtype, c.bias]), [
      [true, 'i8', true], [false, 'i8', true], [true, 'i32', true], [false, 'i32', true],
      [true, 'i8', false], [false, 'i8', false], [true, 'i32', false], [false, 'i32', false],
    ]);
    assert.deepEqual(m.slice(0, 4).map((c) => `${c.xDtype}->${c.outDtype}`), ['f32->f32', 'bf16->f32', 'bf16->bf16', 'f32->bf16']);
    assert.deepEqual([...new Set(m.slice(0, 48).map((c) => c.C))], [129, 385, 1024]);
    assert.deepEqual(m.slice(0, 16).map((c) => c.K), [2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5]);
    assert.deepEqual(m.slice(0, 48).map((c) => c.seed), m.slice(0, 48).map((_, i) => 1000 + 7 * i));
    assert.ok(m.slice(0, 48).every((c) => c.lengths[2] === c.K - 2 && c.xRowStride === (c.C === 385 ? 400 : c.C)));
    assert.deepEqual(m[40].name, 'C=1024 K=4 f32->f32 state i8 bias');
    assert.deepEqual(m.slice(-2), ['f32', 'bf16'].map((x) => ({
      name: `C=1024 K=4 ${x}->f32 edge pre-activations (80 < |acc| <= 88)`, C: 1024, K: 4, xDtype: x, outDtype: 'f32', lengths: [5, 70, 33],
      initialState: [true, false, true], maskDtype: 'i8', bias: false, xRowStride: 1024, seed: 80, values: 'edge',
    })));
  });

  it('convMatrix: the full one adds C = 8192 (no 200-token sequence) and two batches of long sequences', () => {
    const m = convMatrix();
    assert.deepEqual(convMatrix({}), m);
    assert.equal(m.length, 68);
    assert.deepEqual(m[48], { name: 'C=8192 K=2 f32->f32 state i8 bias', C: 8192, K: 2, xDtype: 'f32', outDtype: 'f32', lengths: [5, 0, 0, 8, 9, 33, 17],
      initialState: [true, true, false, true, true, false, true], maskDtype: 'i8', bias: true, xRowStride: 8192, seed: 1336 });
    assert.deepEqual(m[47].lengths, [5, 0, 3, 8, 9, 33, 200]);
    assert.deepEqual(m.slice(64, 66), [['bf16', 'bf16'], ['f32', 'f32']].map(([x, o]) => ({
      name: `C=1024 K=4 ${x}->${o} long sequences (300, 9, 200 tokens)`, C: 1024, K: 4, xDtype: x, outDtype: o, lengths: [300, 9, 200],
      initialState: [true, false, true], maskDtype: 'i32', bias: true, xRowStride: 1024, seed: 300,
    })));
    assert.equal(m[66].values, 'edge');
  });
});

describe('check/conv edges: allArmMappings', () => {
  const stubs = new Stubs();
  afterEach(() => stubs.restore());

  it('every mapping but exact-racy of every arm that is neither the reference nor a mutant, in table order', () => {
    stubs.set(table, 'arms', (op: string) => {
      assert.equal(op, 'conv');
      return [armInfo('ref', { reference: true, mappings: ['sequence'] }), armInfo('a', { mappings: ['exact', 'exact-racy', 'sequence'] }),
        armInfo('bad', { mutant: true, mappings: ['exact'] }), armInfo('b', { mappings: ['sequence'] })];
    });
    assert.deepEqual(allArmMappings(), [{ arm: 'a', mapping: 'exact' }, { arm: 'a', mapping: 'sequence' }, { arm: 'b', mapping: 'sequence' }]);
  });
});

type Call = { inputs: Record<string, unknown>; opts: Record<string, unknown> };

describe('check/conv edges: checkConv verdicts on planted results', () => {
  const stubs = new Stubs();
  afterEach(() => stubs.restore());
  const host = { kind: 'host' } as never;
  const cuda = { kind: 'cuda' } as never;
  // T = 2 tokens of C = 2 channels in one sequence (K = 2: one state column).
  const f32Case: ConvCase = { name: 'f32 case', C: 2, K: 2, xDtype: 'f32', outDtype: 'f32', lengths: [2], initialState: [true], maskDtype: 'i8', bias: false, xRowStride: 2, seed: 1 };
  const bf16Case: ConvCase = { ...f32Case, name: 'bf16 case', outDtype: 'bf16', initialState: null };

  /** The values each (backend, arm, mapping) answers with; 'ref' is the scalar arm on the checked backend. */
  interface Plan { out: number[]; state: number[]; ran?: [string, string] }
  let calls: Call[];
  let released: string[];
  let refCalls: unknown[];
  function plant(plans: Record<string, Plan>, f64: (c: { outDtype: string }) => { out: number[]; state: number[] }) {
    calls = [];
    released = [];
    refCalls = [];
    stubs.set(table, 'referenceArm', (op: string) => (assert.equal(op, 'conv'), armInfo('ref0', { reference: true })));
    stubs.set(convOps, 'forwardSync', (inputs: Record<string, unknown>, opts: Record<string, unknown>) => {
      calls.push({ inputs, opts });
      const be = (opts.backend as { kind: string }).kind;
      const key = opts.arm === 'ref0' ? `${be}:ref` : `${opts.arm}/${opts.mapping}`;
      const p = plans[key] ?? plans.ref ?? plans[`${be}:ref`];
      if (!p) throw new Error(`no plan for ${key}`);
      const dt = opts.outDtype as 'f32' | 'bf16';
      return {
        out: tensor(p.out, [2, 2], dt), convState: tensor(p.state, [1, 2, 1]),
        contract: { arm: p.ran?.[0] ?? opts.arm, mapping: p.ran?.[1] ?? opts.mapping ?? 'sequence' },
        release: () => void released.push(key),
      };
    });
    stubs.set(convRef, 'convReference', (i: { hasInitialState: unknown; x: Tensor }) => {
      refCalls.push(i.hasInitialState);
      const r = f64({ outDtype: i.x.dtype });
      return { out: Float64Array.from(r.out), convState: Float64Array.from(r.state) };
    });
  }
  const OUT = [1.1, -2.2, 3.3, 4.4];
  const STATE = [0.5, -0.5];

  it('all agree: a reference row (within tolerance, no rounding check for f32 outputs) and ok arm rows', () => {
    plant({ 'host:ref': { out: OUT, state: STATE } }, () => ({ out: [1.1, -2.2, 3.3, 4.40001], state: STATE }));
    const seen: unknown[] = [];
    const r = checkConv({ backend: host, cases: [f32Case], armMappings: [{ arm: 'a', mapping: 'exact' }, { arm: 'b', mapping: 'sequence' }], onCase: (...a) => seen.push(a) });
    assert.equal(r.backend, 'host');
    assert.deepEqual(r.failures, []);
    assert.deepEqual(r.crossBackend, []);
    assert.equal(r.results.length, 3);
    const [ref, a, b] = r.results;
    assert.ok(Math.abs(ref.maxAbsError! - Math.abs(Math.fround(4.4) - 4.40001)) < 1e-12);
    assert.deepEqual({ ...ref, maxAbsError: 0 }, {
      case: 'f32 case', arm: 'ref0', mapping: 'sequence', armRan: 'ref0', mappingRan: 'sequence', backend: 'host', outMismatches: 0, stateMismatches: 0,
      maxAbsError: 0, withinTolerance: true, roundingViolations: 0, ok: true,
    });
    assert.deepEqual(a, { case: 'f32 case', arm: 'a', mapping: 'exact', armRan: 'a', mappingRan: 'exact', backend: 'host', outMismatches: 0, stateMismatches: 0, ok: true });
    assert.equal(b.mapping, 'sequence');
    assert.equal(b.ok, true);
    assert.deepEqual(seen, [[1, 1, 'f32 case']]);
    // The reference runs with its own options only; the arms with theirs, no schedule and no mutant by default.
    assert.deepEqual(calls[0].opts, { arm: 'ref0', outDtype: 'f32', backend: host });
    assert.deepEqual(calls[1].opts, { arm: 'a', mapping: 'exact', outDtype: 'f32', backend: host, schedule: undefined, mutant: null });
    for (const c of calls) {
      assert.ok(c.inputs.x instanceof Tensor && c.inputs.convState instanceof Tensor);
      assert.deepEqual(Array.from((c.inputs.hasInitialState as Tensor).bits()), [1]);
      assert.deepEqual(c.inputs.queryStartLoc, [0, 2]);
    }
    assert.deepEqual(refCalls, [[1]], 'the float64 reference gets the mask as numbers');
    assert.deepEqual(released.sort(), ['a/exact', 'b/sequence', 'host:ref']);
  });

  it('an arm differing in out and state is counted and located; one differing in state alone is located there', () => {
    plant({
      'host:ref': { out: OUT, state: STATE },
      'a/exact': { out: [1.1, -2.2, 3.3, 4.5], state: [0.25, -0.25], ran: ['reg', 'sequence'] },
      'b/exact': { out: OUT, state: [0.5, 0.5] },
    }, () => ({ out: OUT, state: STATE }));
    const r = checkConv({ backend: host, cases: [f32Case], armMappings: [{ arm: 'a', mapping: 'exact' }, { arm: 'b', mapping: 'exact' }], schedule: 'reverse', mutant: 'taps-reversed' });
    const [, a, b] = r.results;
    assert.deepEqual([a.outMismatches, a.stateMismatches, a.ok, a.armRan, a.mappingRan], [1, 2, false, 'reg', 'sequence']);
    assert.deepEqual([a.firstMismatch!.output, a.firstMismatch!.index], ['out', 3]);
    assert.deepEqual([b.outMismatches, b.stateMismatches, b.ok], [0, 1, false]);
    assert.deepEqual([b.firstMismatch!.output, b.firstMismatch!.index], ['convState', 1]);
    assert.deepEqual(r.failures, [a, b]);
    assert.equal(r.results[0].ok, true);
    assert.deepEqual([calls[1].opts.schedule, calls[1].opts.mutant], ['reverse', 'taps-reversed']);
  });

  it('the reference row fails on each of tolerance, final state and bf16 rounding alone', () => {
    // Tolerance: f32 out 1% off the float64 reference.
    plant({ 'host:ref': { out: OUT, state: STATE } }, () => ({ out: OUT.map((v) => v * 1.01), state: STATE }));
    let r = checkConv({ backend: host, cases: [f32Case], armMappings: [] });
    assert.deepEqual([r.results[0].withinTolerance, r.results[0].stateMismatches, r.results[0].roundingViolations, r.results[0].ok], [false, 0, 0, false]);
    assert.ok(Math.abs(r.results[0].maxAbsError! - 0.044) < 1e-6);
    assert.equal(r.failures.length, 1);
    stubs.restore();
    // State: one element of the final state off (exact comparison, tolerance 0).
    plant({ 'host:ref': { out: OUT, state: STATE } }, () => ({ out: OUT, state: [0.5, -0.5000001] }));
    r = checkConv({ backend: host, cases: [f32Case], armMappings: [] });
    assert.deepEqual([r.results[0].withinTolerance, r.results[0].stateMismatches, r.results[0].ok], [true, 1, false]);
    stubs.restore();
    // Rounding: bf16 outputs truncated (1.0 stored for 1.005859375, which rounds to 1.0078125), well inside the
    // bf16 tolerance; a mask-less case hands the reference null.
    plant({ 'host:ref': { out: [1, 2, 3, 4], state: STATE } }, () => ({ out: [1.005859375, 2, 3, 4], state: STATE }));
    r = checkConv({ backend: host, cases: [bf16Case], armMappings: [] });
    assert.deepEqual([r.results[0].withinTolerance, r.results[0].stateMismatches, r.results[0].roundingViolations, r.results[0].ok], [true, 0, 1, false]);
    assert.deepEqual(refCalls, [null]);
    stubs.restore();
    // The same bf16 case stored to nearest even passes.
    plant({ 'host:ref': { out: [1.0078125, 2, 3, 4], state: STATE } }, () => ({ out: [1.005859375, 2, 3, 4], state: STATE }));
    r = checkConv({ backend: host, cases: [bf16Case], armMappings: [] });
    assert.deepEqual([r.results[0].roundingViolations, r.results[0].ok], [0, true]);
  });

  it('cross-backend rows only on CUDA with a host backend; each difference counted', () => {
    plant({
      'cuda:ref': { out: OUT, state: STATE },
      'host:ref': { out: [1.1, -2.2, 3.3, 4.5], state: [0.5, 0.25] },
    }, () => ({ out: OUT, state: STATE }));
    const r = checkConv({ backend: cuda, hostBackend: host, cases: [f32Case, { ...f32Case, name: 'again' }], armMappings: [] });
    assert.equal(r.backend, 'cuda');
    assert.deepEqual(r.crossBackend, [
      { case: 'f32 case', outMismatches: 1, stateMismatches: 1, ok: false },
      { case: 'again', outMismatches: 1, stateMismatches: 1, ok: false },
    ]);
    assert.deepEqual(calls[1].opts, { arm: 'ref0', outDtype: 'f32', backend: host });
    assert.equal(released.filter((k) => k === 'host:ref').length, 2, 'the host run is released');
    assert.deepEqual(r.failures, [], 'a cross-backend difference is reported there, not as a failing row');
    stubs.restore();
    plant({ ref: { out: OUT, state: STATE } }, () => ({ out: OUT, state: STATE }));
    const same = checkConv({ backend: cuda, hostBackend: host, cases: [f32Case], armMappings: [] });
    assert.deepEqual(same.crossBackend, [{ case: 'f32 case', outMismatches: 0, stateMismatches: 0, ok: true }]);
    assert.deepEqual(checkConv({ backend: cuda, cases: [f32Case], armMappings: [] }).crossBackend, []);
    // A difference in out alone, or in the state alone, fails the row.
    stubs.restore();
    plant({ 'cuda:ref': { out: OUT, state: STATE }, 'host:ref': { out: [1.1, -2.2, 3.3, 4.5], state: STATE } }, () => ({ out: OUT, state: STATE }));
    assert.deepEqual(checkConv({ backend: cuda, hostBackend: host, cases: [f32Case], armMappings: [] }).crossBackend,
      [{ case: 'f32 case', outMismatches: 1, stateMismatches: 0, ok: false }]);
    stubs.restore();
    plant({ 'cuda:ref': { out: OUT, state: STATE }, 'host:ref': { out: OUT, state: [0.5, 0.5] } }, () => ({ out: OUT, state: STATE }));
    assert.deepEqual(checkConv({ backend: cuda, hostBackend: host, cases: [f32Case], armMappings: [] }).crossBackend,
      [{ case: 'f32 case', outMismatches: 0, stateMismatches: 1, ok: false }]);
    calls = [];
    const onHost = checkConv({ backend: host, hostBackend: host, cases: [f32Case], armMappings: [] });
    assert.deepEqual(onHost.crossBackend, []);
    assert.equal(calls.filter((c) => c.opts.backend === host).length, 1, 'no second host run on the host');
  });

  it('the reference result is released when the float64 reference throws', () => {
    plant({ 'host:ref': { out: OUT, state: STATE } }, () => {
      throw new Error('planted');
    });
    assert.throws(() => checkConv({ backend: host, cases: [f32Case], armMappings: [] }), /planted/);
    assert.deepEqual(released, ['host:ref']);
  });

  it('defaults: the arm mappings of allArmMappings(), the cases of convMatrix()', () => {
    plant({ ref: { out: OUT, state: STATE } }, () => ({ out: OUT, state: STATE }));
    stubs.set(table, 'arms', () => [armInfo('ref0', { reference: true }), armInfo('z', { mappings: ['exact', 'sequence'] })]);
    const r = checkConv({ backend: host, cases: [f32Case] });
    assert.deepEqual(r.results.map((x) => `${x.arm}/${x.mapping}`), ['ref0/sequence', 'z/exact', 'z/sequence']);
    stubs.set(convOps, 'forwardSync', (inputs: { x: Tensor }) => {
      throw Object.assign(new Error('stop'), { shape: inputs.x.shape });
    });
    assert.throws(() => checkConv({ backend: host }), (e: Error & { shape: number[] }) => e.message === 'stop' && e.shape.join() === '255,129');
  });
});

describe('check/conv edges: one real host run', function () {
  this.timeout(20000);
  it('a 2-channel case through the host kernels: every row ok; a planted mutant fails the arm rows only', () => {
    const c: ConvCase = { name: 'tiny', C: 2, K: 3, xDtype: 'bf16', outDtype: 'bf16', lengths: [3, 1], initialState: [true, false], maskDtype: 'i8', bias: true, xRowStride: 3, seed: 5 };
    const am = [{ arm: 'reg' as const, mapping: 'exact' as const }];
    const r = checkConv({ backend: openBackend('host'), cases: [c], armMappings: am });
    assert.deepEqual(r.results.map((x) => [x.arm, x.ok]), [['scalar', true], ['reg', true]]);
    assert.ok(r.results[0].maxAbsError! > 0);
    const m = checkConv({ backend: openBackend('host'), cases: [c], armMappings: am, mutant: 'taps-reversed' });
    assert.deepEqual(m.failures.map((x) => x.arm), ['reg']);
    assert.ok(m.failures[0].outMismatches > 0 && m.failures[0].firstMismatch !== undefined);
  });
});
