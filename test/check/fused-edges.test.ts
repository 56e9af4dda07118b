// Edge tests for lib/check/fused.ts: the matrix, inputs and options pinned, the arm list, diffFused's choice of
// coordinates, and checkFused / runFusedMutants on planted results: fused's forward and chain, the arm
// registry and diff are replaced for a test, so each verdict (an output differing from the chain, a
// cross-backend difference, a mutant caught in some cases and not others) is asserted exactly. The last test
// runs the host kernels on one 3-token case.

import { strict as assert } from 'assert';
import { Tensor } from '../../lib/tensor';
import {
  checkFused, fusedMatrix, makeFusedInputs, fusedOptions, fusedChannels, checkedFusedArms, compareFused, totalMismatches, diffFused,
  runFusedMutants, FusedCase, FUSED_OUTPUTS,
} from '../../lib/check/fused';
import { edgeTensors } from '../../lib/check/conv';
import { CONV_STATE_COORDINATES } from '../../lib/ops/conv';
import { Stubs, tensor } from './check-stubs';
import { openBackend } from '../backends';

const fusedOps = require('../../lib/ops/fused') as Record<string, unknown>;
const table = require('../../lib/arms/table') as Record<string, unknown>;
const diffMod = require('../../lib/analysis/diff') as Record<string, unknown>;
const coords = require('../../lib/analysis/coordinates') as Record<string, unknown>;

const bytesOf = (t: Tensor) => Array.from((t.storage as unknown as { data: Uint8Array }).data);
const host = { kind: 'host' } as never;
const cuda = { kind: 'cuda' } as never;

const small: FusedCase = {
  name: 'small', Hk: 1, Hv: 1, K: 3, lengths: [2, 0, 1], initialState: [true, false, true], maskDtype: 'i32', bias: true,
  xDtype: 'bf16', convDtype: 'f32', qkvDtype: 'f32', gateDtype: 'f32', xRowStride: 390, packedWidth: 4, bOffset: 2, aOffset: 0, seed: 20,
};

describe('check/fused edges: matrix, inputs, options', () => {
  const stubs = new Stubs();
  afterEach(() => stubs.restore());

  it('fusedChannels: (2·Hk + Hv) heads of 128', () => {
    assert.equal(fusedChannels({ Hk: 1, Hv: 1 }), 384);
    assert.equal(fusedChannels({ Hk: 16, Hv: 48 }), 10240);
  });

  it('fusedMatrix quick: 16 dtype combinations with rotated factors, 3 single sequences, 4 model layouts, 2 edge cases', () => {
    const m = fusedMatrix({ quick: true });
    assert.equal(m.length, 25);
    assert.deepEqual(m[0], { Hk: 1, Hv: 2, packedWidth: 9, bOffset: 1, aOffset: 5, seed: 500, name: 'Hk=1 Hv=2 K=4 x f32 conv f32 qkv f32 gate f32 state varlen 8',
      K: 4, lengths: [5, 0, 2, 64, 65, 130, 1, 9], initialState: [true, false, true, true, false, true, true, false], maskDtype: 'i8', bias: true,
      xDtype: 'f32', convDtype: 'f32', qkvDtype: 'f32', gateDtype: 'f32', xRowStride: 512 });
    assert.equal(m[1].name, 'Hk=1 Hv=2 K=2 x f32 conv f32 qkv f32 gate bf16 nostate varlen 8');
    assert.deepEqual(m[1].lengths, [5, 0, 1, 64, 65, 130, 1, 9]);
    assert.equal(m[3].name, 'Hk=1 Hv=2 K=6 x f32 conv f32 qkv bf16 gate bf16 nostate padded varlen 8');
    assert.deepEqual(m.slice(0, 16).map((c) => [c.K, c.initialState !== null, c.maskDtype, c.bias, c.xRowStride, c.seed]), [
      [4, true, 'i8', true, 512, 500], [2, false, 'i8', true, 512, 511], [3, true, 'i8', true, 520, 522], [6, false, 'i8', true, 520, 533],
      [4, true, 'i32', true, 512, 544], [2, false, 'i32', true, 512, 555], [3, true, 'i32', true, 520, 566], [6, false, 'i32', true, 520, 577],
      [4, true, 'i8', false, 512, 588], [2, false, 'i8', false, 512, 599], [3, true, 'i8', false, 520, 610], [6, false, 'i8', false, 520, 621],
      [4, true, 'i32', false, 512, 632], [2, false, 'i32', false, 512, 643], [3, true, 'i32', false, 520, 654], [6, false, 'i32', false, 520, 665],
    ]);
    assert.deepEqual(m.slice(0, 16).map((c) => [c.xDtype, c.convDtype, c.qkvDtype, c.gateDtype].map((d) => (d === 'f32' ? 0 : 1)).join('')),
      ['0000', '0001', '0010', '0011', '0100', '0101', '0110', '0111', '1000', '1001', '1010', '1011', '1100', '1101', '1110', '1111']);
    assert.deepEqual(m[16], { Hk: 2, Hv: 4, packedWidth: 13, bOffset: 1, aOffset: 7, seed: 701, name: 'Hk=2 Hv=4 K=4 T=1 bf16 x, bf16 conv, f32 qkv, state',
      K: 4, lengths: [1], initialState: [true], maskDtype: 'i32', bias: true, xDtype: 'bf16', convDtype: 'bf16', qkvDtype: 'f32', gateDtype: 'bf16', xRowStride: 1024 });
    assert.deepEqual(m.slice(16, 19).map((c) => c.lengths[0]), [1, 63, 65]);
    assert.deepEqual(m[19], { Hk: 16, Hv: 32, packedWidth: 69, bOffset: 1, aOffset: 35, seed: 932, name: 'Qwen3.5-4B layout (Hk=16, Hv=32) bf16 throughout, state, varlen 4',
      K: 4, lengths: [3, 17, 70, 9], initialState: [true, false, true, true], maskDtype: 'i8', bias: false, xDtype: 'bf16', convDtype: 'bf16', qkvDtype: 'bf16', gateDtype: 'bf16', xRowStride: 8192 });
    assert.deepEqual(m[20], { Hk: 16, Hv: 32, packedWidth: 69, bOffset: 1, aOffset: 35, seed: 982, name: 'Qwen3.5-4B layout (Hk=16, Hv=32) f32 throughout, no state, T=20',
      K: 4, lengths: [20], initialState: null, maskDtype: 'i8', bias: true, xDtype: 'f32', convDtype: 'f32', qkvDtype: 'f32', gateDtype: 'f32', xRowStride: 8192 });
    assert.deepEqual([m[21].name, m[21].xRowStride, m[21].seed, m[22].seed], ['Qwen3.5-27B layout (Hk=16, Hv=48) bf16 throughout, state, varlen 4', 10240, 948, 998]);
    assert.deepEqual(m.slice(23), ['f32', 'bf16'].map((dt) => ({ Hk: 1, Hv: 2, packedWidth: 9, bOffset: 1, aOffset: 5, seed: 80,
      name: `Hk=1 Hv=2 K=4 ${dt} throughout, edge pre-activations (80 < |acc| <= 88), state`, K: 4, lengths: [5, 70, 33], initialState: [true, false, true],
      maskDtype: 'i8', bias: false, xDtype: dt, convDtype: dt, qkvDtype: dt, gateDtype: dt, xRowStride: 512, values: 'edge' })));
  });

  it('fusedMatrix full: seven single-sequence lengths, 66-token f32 layouts', () => {
    const m = fusedMatrix();
    assert.equal(fusedMatrix({}).length, 29);
    assert.equal(m.length, 29);
    assert.deepEqual(m.slice(16, 23).map((c) => [c.lengths[0], c.seed]), [[1, 701], [7, 707], [8, 708], [63, 763], [64, 764], [65, 765], [200, 900]]);
    assert.deepEqual([m[24].name, m[24].lengths], ['Qwen3.5-4B layout (Hk=16, Hv=32) f32 throughout, no state, T=66', [66]]);
  });

  it('makeFusedInputs: seeded x (padded with NaN), weight, bias, state, mask, a and b from one packed buffer, A_log, dt_bias', () => {
    const i = makeFusedInputs(small);
    assert.deepEqual(i.queryStartLoc, [0, 2, 2, 3]);
    assert.deepEqual([i.x.shape, i.x.rowStride], [[3, 384], 390]);
    assert.deepEqual(bytesOf(i.x), bytesOf(Tensor.random([3, 384], 'bf16', { seed: 20, rowStride: 390, padValue: NaN })));
    assert.ok(Number.isNaN(Tensor.fromBytes(new Uint8Array(bytesOf(i.x).slice(768, 770)), [1], 'bf16').toFloat32()[0]));
    assert.deepEqual(bytesOf(i.weight), bytesOf(Tensor.random([384, 3], 'bf16', { seed: 21, scale: 0.5 })));
    assert.deepEqual(bytesOf(i.bias!), bytesOf(Tensor.random([384], 'bf16', { seed: 22, scale: 0.25 })));
    assert.deepEqual(bytesOf(i.convState), bytesOf(Tensor.random([3, 384, 2], 'f32', { seed: 23 })));
    assert.deepEqual([(i.hasInitialState as Tensor).dtype, Array.from((i.hasInitialState as Tensor).bits())], ['i32', [1, 0, 1]]);
    const packed = Tensor.random([3, 4], 'f32', { seed: 25, scale: 2 }).toFloat32();
    assert.deepEqual(Array.from(i.b.toFloat32()), [packed[2], packed[6], packed[10]]);
    assert.deepEqual(Array.from(i.a.toFloat32()), [packed[0], packed[4], packed[8]]);
    assert.deepEqual(bytesOf(i.ALog), bytesOf(Tensor.random([1], 'f32', { seed: 26, scale: 0.5 })));
    assert.deepEqual(bytesOf(i.dtBias), bytesOf(Tensor.random([1], 'f32', { seed: 27 })));
    const plain = makeFusedInputs({ ...small, bias: false, initialState: null, xRowStride: 384 });
    assert.deepEqual([plain.bias, plain.hasInitialState, plain.x.rowStride], [null, null, 384]);
    assert.deepEqual(bytesOf(plain.x), bytesOf(Tensor.random([3, 384], 'bf16', { seed: 20 })));
  });

  it("makeFusedInputs 'edge': conv's edge tensors, no bias, the rest as usual", () => {
    const i = makeFusedInputs({ ...small, values: 'edge', xRowStride: 384 });
    const e = edgeTensors(3, 384, 3, 3, 'bf16');
    assert.deepEqual([bytesOf(i.x), bytesOf(i.weight), bytesOf(i.convState)], [bytesOf(e.x), bytesOf(e.weight), bytesOf(e.convState)]);
    assert.equal(i.bias, null);
    assert.deepEqual(Array.from((i.hasInitialState as Tensor).bits()), [1, 0, 1]);
    assert.deepEqual(bytesOf(makeFusedInputs({ ...small, values: 'random' }).x), bytesOf(makeFusedInputs(small).x));
  });

  it('fusedOptions: the case dims, the backend, the mutant (default none) and the arm only when given', () => {
    assert.deepEqual(fusedOptions(small, host), { Hk: 1, Hv: 1, Dk: 128, Dv: 128, convDtype: 'f32', qkvDtype: 'f32', backend: host, mutant: null });
    assert.deepEqual(fusedOptions(small, host, 'seq-fold', 'stream'), { Hk: 1, Hv: 1, Dk: 128, Dv: 128, convDtype: 'f32', qkvDtype: 'f32', backend: host, mutant: 'seq-fold', arm: 'stream' });
  });

  it('checkedFusedArms: the registry order less the arms flagged as mutants (by id)', () => {
    stubs.set(fusedOps, 'fusedArms', () => ['a', 'bad', 'c', 'bad2']);
    const asked: unknown[] = [];
    stubs.set(table, 'armIsMutant', (op: string, id: number) => (asked.push([op, id]), id === 1 || id === 3));
    assert.deepEqual(checkedFusedArms(), ['a', 'c']);
    assert.deepEqual(asked, [['fused', 0], ['fused', 1], ['fused', 2], ['fused', 3]]);
  });
});

/** A planted fused result: every output a [1, 2] f32 tensor. */
type Vals = Partial<Record<(typeof FUSED_OUTPUTS)[number], number[]>>;
const BASE = { q: [1, 2], k: [3, 4], v: [5, 6], g: [7, 8], beta: [0.5, 0.25], convState: [9, 10] };
function outputs(v: Vals, extra: Record<string, unknown>): Record<string, unknown> {
  const p = { ...BASE, ...v };
  const r: Record<string, unknown> = { ...extra };
  for (const o of FUSED_OUTPUTS) r[o] = tensor(p[o], [1, 2]);
  return r;
}

describe('check/fused edges: compare, diff', () => {
  const stubs = new Stubs();
  afterEach(() => stubs.restore());

  it('compareFused counts per output; totalMismatches adds them', () => {
    const m = compareFused(outputs({ q: [0, 2], convState: [0, 0] }, {}) as never, outputs({}, {}) as never);
    assert.deepEqual(m, { q: 1, k: 0, v: 0, g: 0, beta: 0, convState: 2 });
    assert.equal(totalMismatches(m), 3);
    assert.equal(totalMismatches({ q: 1, k: 2, v: 3, g: 4, beta: 5, convState: 6 }), 21);
  });

  it("diffFused: the tensors' own coordinates first (actual's, then expected's), else by output", () => {
    const own = (coords.plainCoordinates as () => never)();
    const theirs = (coords.postconvCoordinates as () => never)();
    stubs.set(coords, 'postconvCoordinates', () => 'PC');
    stubs.set(coords, 'plainCoordinates', () => 'PLAIN');
    const seen: unknown[] = [];
    stubs.set(diffMod, 'diff', (a: Tensor, b: Tensor, o: Record<string, unknown>) => (seen.push([o.label, o.coordinates, o.firstN]), `${o.label}`));
    const a = outputs({}, {}) as Record<string, Tensor>;
    const b = outputs({}, {}) as Record<string, Tensor>;
    a.q.withCoordinates(own);
    b.q.withCoordinates(theirs);
    b.g.withCoordinates(theirs);
    const r = diffFused(a as never, b as never, { firstN: 3 });
    assert.deepEqual(Object.keys(r), [...FUSED_OUTPUTS]);
    assert.equal(r.beta as unknown, 'fused beta');
    assert.deepEqual(seen, [
      ['fused q', own, 3], ['fused k', 'PC', 3], ['fused v', 'PC', 3], ['fused g', theirs, 3], ['fused beta', 'PLAIN', 3], ['fused convState', CONV_STATE_COORDINATES, 3],
    ]);
    seen.length = 0;
    diffFused(outputs({}, {}) as never, outputs({}, {}) as never);
    assert.deepEqual(seen.map((s) => (s as unknown[])[1]), ['PC', 'PC', 'PC', 'PLAIN', 'PLAIN', CONV_STATE_COORDINATES]);
  });
});

describe('check/fused edges: checkFused and runFusedMutants on planted results', () => {
  const stubs = new Stubs();
  afterEach(() => stubs.restore());
  const one = { ...small, name: 'one', lengths: [1], initialState: null, xRowStride: 384 };
  let calls: [string, Record<string, unknown>][];
  let released: string[];
  /** plans: by `${backend}:${arm}:${mutant}:${case}` (any part may be '*'), values differing from the chain's BASE. */
  function plant(plans: Record<string, Vals>, ran: Record<string, string> = {}) {
    calls = [];
    released = [];
    stubs.set(fusedOps, 'fusedArms', () => ['a', 'm', 'b']);
    stubs.set(table, 'armIsMutant', (_op: string, id: number) => id === 1);
    stubs.set(fusedOps, 'chain', async (inputs: { x: Tensor }, opts: Record<string, unknown>) => {
      calls.push(['chain', opts]);
      return outputs({}, { release: () => void released.push('chain') });
    });
    stubs.set(fusedOps, 'forward', async (inputs: { x: Tensor }, opts: Record<string, unknown>) => {
      calls.push(['forward', opts]);
      const be = (opts.backend as { kind: string }).kind;
      const tag = (inputs.x.shape[0] as number).toString();
      const keys = [`${be}:${opts.arm}:${opts.mutant}:${tag}`, `${be}:${opts.arm}:${opts.mutant}:*`, `*:${opts.arm}:${opts.mutant}:*`, `${be}:${opts.arm}:*:*`];
      const v = keys.map((k) => plans[k]).find((x) => x) ?? {};
      return outputs(v, { launch: { arm: ran[opts.arm as string] ?? opts.arm }, release: () => void released.push(`${be}:${opts.arm}`) });
    });
  }

  it('refuses an empty or non-array arm list, naming the arms libgdn lists', async () => {
    plant({});
    await assert.rejects(checkFused({ backend: host, cases: [one], arms: [] }), (e: Error) => e instanceof RangeError
      && e.message === 'arms: expected at least one fused arm (libgdn lists a, m, b), got []');
    await assert.rejects(checkFused({ backend: host, cases: [one], arms: 'a' as never }), (e: Error) => e.message.endsWith('got "a"'));
    stubs.set(table, 'armIsMutant', () => true);
    await assert.rejects(checkFused({ backend: host, cases: [one] }), (e: Error) => e.message.endsWith('got undefined'));
    assert.deepEqual(calls, []);
  });

  it('all agree: one chain per case, each checked arm compared, options and releases', async () => {
    plant({}, { b: 'a' });
    const seen: unknown[] = [];
    const r = await checkFused({ backend: host, cases: [one, { ...one, name: 'two' }], onCase: (...x) => seen.push(x) });
    assert.deepEqual(r.arms, ['a', 'b']);
    assert.equal(r.backend, 'host');
    assert.deepEqual(r.failures, []);
    assert.deepEqual(r.crossBackend, []);
    const zero = { q: 0, k: 0, v: 0, g: 0, beta: 0, convState: 0 };
    assert.deepEqual(r.results[0], { case: 'one', arm: 'a', armRan: 'a', backend: 'host', mutant: null, mismatches: zero, ok: true });
    assert.deepEqual(r.results.map((x) => [x.case, x.arm, x.armRan]), [['one', 'a', 'a'], ['one', 'b', 'a'], ['two', 'a', 'a'], ['two', 'b', 'a']]);
    assert.deepEqual(calls.map(([k, o]) => `${k}:${o.arm ?? '-'}`), ['chain:-', 'forward:a', 'forward:b', 'chain:-', 'forward:a', 'forward:b']);
    assert.deepEqual(calls[0][1], fusedOptions(one, host));
    assert.deepEqual(calls[1][1], fusedOptions(one, host, null, 'a'));
    assert.deepEqual(seen, [[1, 2, 'one'], [2, 2, 'two']]);
    assert.deepEqual(released, ['host:a', 'host:b', 'chain', 'host:a', 'host:b', 'chain']);
  });

  it('a differing output fails the row and is located; the mutant is passed to every arm, not to the chain', async () => {
    plant({ 'host:b:no-round:*': { beta: [0.5, 0], convState: [9, 0] } });
    const r = await checkFused({ backend: host, cases: [one], arms: ['a', 'b'], mutant: 'no-round' });
    const [a, b] = r.results;
    assert.equal(a.ok, true);
    assert.deepEqual([b.ok, b.mutant, b.mismatches], [false, 'no-round', { q: 0, k: 0, v: 0, g: 0, beta: 1, convState: 1 }]);
    assert.deepEqual([b.firstMismatch!.output, b.firstMismatch!.index], ['beta', 1]);
    assert.equal('firstMismatch' in a, false);
    assert.deepEqual(r.failures, [b]);
    assert.equal(calls[0][1].mutant, null);
    assert.equal(calls[1][1].mutant, 'no-round');
  });

  it('cross-backend rows per arm on CUDA with a host backend only; released', async () => {
    plant({ 'host:b:null:*': { q: [1, 0] } });
    const r = await checkFused({ backend: cuda, hostBackend: host, cases: [one], arms: ['a', 'b'] });
    assert.deepEqual(r.crossBackend, [
      { case: 'one', arm: 'a', mismatches: { q: 0, k: 0, v: 0, g: 0, beta: 0, convState: 0 }, ok: true },
      { case: 'one', arm: 'b', mismatches: { q: 1, k: 0, v: 0, g: 0, beta: 0, convState: 0 }, ok: false },
    ]);
    assert.deepEqual(r.failures, []);
    assert.deepEqual(released, ['host:a', 'cuda:a', 'host:b', 'cuda:b', 'chain']);
    assert.deepEqual(calls[2][1], fusedOptions(one, host, null, 'a'));
    assert.deepEqual((await checkFused({ backend: cuda, cases: [one], arms: ['a'] })).crossBackend, []);
    calls = [];
    assert.deepEqual((await checkFused({ backend: host, hostBackend: host, cases: [one], arms: ['a'] })).crossBackend, []);
    assert.equal(calls.length, 2);
  });

  it('results are released when a comparison throws', async () => {
    plant({});
    stubs.set(fusedOps, 'forward', async () => ({ ...outputs({}, {}), q: tensor([1, 2, 3], [1, 3]), launch: { arm: 'a' }, release: () => void released.push('arm') }));
    await assert.rejects(checkFused({ backend: host, cases: [one], arms: ['a'] }), /shapes differ/);
    assert.deepEqual(released, ['arm', 'chain']);
  });

  it('runFusedMutants: per arm and mutant, over the cases that can show it, seq-fold also over bf16 q/k', async () => {
    // Tags are token counts: 1 = f32 q/k with bf16 conv (both mutants relevant), 2 = f32 q/k f32 conv, 3 = bf16 q/k f32 conv, 4 = bf16 q/k bf16 conv.
    const cs: FusedCase[] = [
      { ...one, name: 'c1', lengths: [1], convDtype: 'bf16', qkvDtype: 'f32' },
      { ...one, name: 'c2', lengths: [2], convDtype: 'f32', qkvDtype: 'f32' },
      { ...one, name: 'c3', lengths: [3], convDtype: 'f32', qkvDtype: 'bf16' },
      { ...one, name: 'c4', lengths: [4], convDtype: 'bf16', qkvDtype: 'bf16' },
    ];
    plant({
      'host:a:seq-fold:2': { q: [0, 0], k: [0, 4] },
      'host:a:seq-fold:3': { k: [0, 0] },
      'host:a:no-round:1': { v: [0, 6] },
      'host:a:no-round:4': { g: [0, 8], beta: [0, 0] },
    });
    const out = await runFusedMutants(host, cs, ['a', 'b']);
    assert.deepEqual(out.map((o) => [o.arm, o.mutant, o.caught, o.caughtCases, o.cases]), [
      ['a', 'seq-fold', true, 1, 2], ['a', 'no-round', true, 2, 2], ['b', 'seq-fold', false, 0, 2], ['b', 'no-round', false, 0, 2],
    ]);
    assert.deepEqual(out[0], {
      arm: 'a', mutant: 'seq-fold', caught: true, caughtCases: 1, cases: 2, mismatches: { q: 2, k: 1, v: 0, g: 0, beta: 0, convState: 0 },
      caughtInBf16: 1, bf16Cases: 1,
      detail: 'differs from the chain in 1/2 f32-q/k cases (q 2, k 1, v 0, g 0, beta 0, convState 0); in 1/1 bf16-q/k cases',
    });
    assert.deepEqual(out[1], {
      arm: 'a', mutant: 'no-round', caught: true, caughtCases: 2, cases: 2, mismatches: { q: 0, k: 0, v: 1, g: 1, beta: 2, convState: 0 },
      detail: 'differs from the chain in 2/2 bf16-conv cases (q 0, k 0, v 1, g 1, beta 2, convState 0)',
    });
    assert.deepEqual([out[2].caughtInBf16, out[2].bf16Cases], [0, 1]);
    assert.ok(out[2].detail.endsWith('; in 0/1 bf16-q/k cases'));
    // The seq-fold bf16 run takes at most four cases.
    const many = [...Array(6)].map((_, i) => ({ ...cs[2], name: `m${i}` }));
    const m = await runFusedMutants(host, many, ['b']);
    assert.deepEqual([m[0].cases, m[0].bf16Cases, m[1].cases], [0, 4, 0]);
  });

  it('runFusedMutants defaults: the quick matrix and the checked arms', async () => {
    plant({});
    const r = await runFusedMutants(host, [{ ...one, qkvDtype: 'f32' }]);
    assert.deepEqual(r.map((o) => `${o.arm}:${o.mutant}`), ['a:seq-fold', 'a:no-round', 'b:seq-fold', 'b:no-round']);
    stubs.set(fusedOps, 'chain', async (inputs: { x: Tensor }) => {
      throw Object.assign(new Error('stop'), { shape: inputs.x.shape });
    });
    // The quick matrix's seq-fold cases (f32 q/k): 8 of the dtype combinations, then the single sequences of 1, 63
    // and 65 tokens; the full matrix's 10th would be 7 tokens.
    let n = 0;
    stubs.set(fusedOps, 'chain', async (inputs: { x: Tensor }) => {
      if (++n === 10) throw Object.assign(new Error('stop'), { shape: inputs.x.shape });
      return outputs({}, { release() {} });
    });
    await assert.rejects(runFusedMutants(host), (e: Error & { shape: number[] }) => e.message === 'stop' && e.shape.join() === '63,1024');
    stubs.set(fusedOps, 'chain', async (inputs: { x: Tensor }) => {
      throw Object.assign(new Error('stop'), { shape: inputs.x.shape });
    });
    await assert.rejects(checkFused({ backend: host }), (e: Error & { shape: number[] }) => e.shape.join() === '276,512');
  });
});

describe('check/fused edges: one real host run', function () {
  this.timeout(20000);
  it('a 3-token case: every checked arm equals the chain; no-round shows with a bf16 conv dtype', async () => {
    const c: FusedCase = { ...small, lengths: [3], initialState: [true], xRowStride: 384, convDtype: 'bf16' };
    const r = await checkFused({ backend: openBackend('host'), cases: [c] });
    assert.deepEqual(r.failures, []);
    assert.equal(r.results.length, checkedFusedArms().length);
    const m = await checkFused({ backend: openBackend('host'), cases: [c], arms: checkedFusedArms().slice(0, 1), mutant: 'no-round' });
    assert.equal(m.failures.length, 1);
  });
});
