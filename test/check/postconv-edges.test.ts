// Edge tests for lib/check/postconv.ts: the matrix and the inputs pinned, the error bounds, and
// checkPostconv / runSeq4Mutant / runPostconvDefects on planted results: postconv's forward, the float64
// reference, the arm table and the registry are replaced for a test, so each verdict branch (a tree row
// outside its bound, an arm differing from tree, a mutant arm left out of the failures, a cross-backend
// difference, the seq4 counts by output dtype) is asserted exactly. The last test runs the host kernels once.

import { strict as assert } from 'assert';
import { Tensor } from '../../lib/tensor';
import {
  checkPostconv, postconvMatrix, postconvErrorBound, differingRows, makePostconvInputs, runSeq4Mutant, runPostconvDefects,
  PostconvCase, OUTPUTS,
} from '../../lib/check/postconv';
import { Stubs, tensor, armInfo } from './check-stubs';
import { openBackend } from '../backends';

const pcOps = require('../../lib/ops/postconv') as Record<string, unknown>;
const pcRef = require('../../lib/reference/postconv') as Record<string, unknown>;
const table = require('../../lib/arms/table') as Record<string, unknown>;
const registry = require('../../lib/arms/registry') as Record<string, unknown>;

const bytesOf = (t: Tensor) => Array.from((t.storage as unknown as { data: Uint8Array }).data);
const host = { kind: 'host' } as never;
const cuda = { kind: 'cuda' } as never;

describe('check/postconv edges: matrix, inputs, bounds, rows', () => {
  it('postconvMatrix quick: 3 layouts × 6 T × 8 dtype combinations, packed layouts alternating, then 3 fallback shapes', () => {
    const m = postconvMatrix({ quick: true });
    assert.equal(m.length, 3 * 6 * 8 + 3);
    assert.deepEqual(m[0], { name: 'T=0 Hk=4 Hv=8 conv f32 gate f32 qkv f32 packed b|a+pad', T: 0, Hk: 4, Hv: 8, Dk: 128, Dv: 128, convDtype: 'f32', gateDtype: 'f32',
      qkvDtype: 'f32', packedWidth: 53, bOffset: 0, aOffset: 8, seed: 400 });
    assert.deepEqual(m[1], { name: 'T=0 Hk=4 Hv=8 conv f32 gate f32 qkv bf16 packed pad|a|b', T: 0, Hk: 4, Hv: 8, Dk: 128, Dv: 128, convDtype: 'f32', gateDtype: 'f32',
      qkvDtype: 'bf16', packedWidth: 19, bOffset: 11, aOffset: 3, seed: 401 });
    assert.deepEqual(m.slice(0, 8).map((c) => [c.convDtype, c.gateDtype, c.qkvDtype].join()), [
      'f32,f32,f32', 'f32,f32,bf16', 'f32,bf16,f32', 'f32,bf16,bf16', 'bf16,f32,f32', 'bf16,f32,bf16', 'bf16,bf16,f32', 'bf16,bf16,bf16']);
    assert.deepEqual(m.filter((_, i) => i % 8 === 0).slice(0, 7).map((c) => c.T), [0, 1, 15, 16, 17, 128, 0]);
    assert.deepEqual([m[48].Hk, m[48].Hv, m[96].Hk, m[96].Hv], [16, 32, 16, 48]);
    assert.deepEqual(m.slice(0, 144).map((c) => c.seed), m.slice(0, 144).map((_, i) => 400 + i));
    assert.deepEqual(m.slice(-3), [[64, 64, 544], [300, 300, 545], [128, 64, 546]].map(([Dk, Dv, seed]) => ({
      name: `T=33 Hk=2 Hv=4 Dk=${Dk} Dv=${Dv} (falls back to tree) f32`, T: 33, Hk: 2, Hv: 4, Dk, Dv,
      convDtype: 'f32', gateDtype: 'f32', qkvDtype: 'f32', packedWidth: 11, bOffset: 1, aOffset: 6, seed,
    })));
  });

  it('postconvMatrix full: T = 2048 added, the widest layout there with gate dtype = qkv dtype only', () => {
    const m = postconvMatrix();
    assert.deepEqual(postconvMatrix({}).length, m.length);
    assert.equal(m.length, 3 * 7 * 8 - 4 + 3);
    const big = m.filter((c) => c.T === 2048);
    assert.deepEqual(big.map((c) => c.Hv), [...Array(8).fill(8), ...Array(8).fill(32), 48, 48, 48, 48]);
    assert.ok(big.filter((c) => c.Hv === 48).every((c) => c.gateDtype === c.qkvDtype));
    assert.equal(m[6 * 8].T, 2048);
  });

  it('makePostconvInputs: seeded conv output, a and b as columns of one packed buffer, A_log and dt_bias', () => {
    const c: PostconvCase = { name: 'c', T: 2, Hk: 1, Hv: 2, Dk: 2, Dv: 3, convDtype: 'bf16', gateDtype: 'f32', qkvDtype: 'f32', packedWidth: 6, bOffset: 4, aOffset: 1, seed: 3 };
    const i = makePostconvInputs(c);
    assert.deepEqual(i.convOut.shape, [2, 2 * 2 + 2 * 3]);
    assert.deepEqual(bytesOf(i.convOut), bytesOf(Tensor.random([2, 10], 'bf16', { seed: 3 })));
    const packed = Tensor.random([2, 6], 'f32', { seed: 4, scale: 2 }).toFloat32();
    assert.deepEqual([i.b.shape, i.b.rowStride, Array.from(i.b.toFloat32())], [[2, 2], 6, [packed[4], packed[5], packed[10], packed[11]]]);
    assert.deepEqual([i.a.shape, Array.from(i.a.toFloat32())], [[2, 2], [packed[1], packed[2], packed[7], packed[8]]]);
    assert.equal(i.a.dtype, 'f32');
    assert.deepEqual(bytesOf(i.ALog), bytesOf(Tensor.random([2], 'f32', { seed: 5, scale: 0.5 })));
    assert.deepEqual(bytesOf(i.dtBias), bytesOf(Tensor.random([2], 'f32', { seed: 6 })));
  });

  it('postconvErrorBound: every output and dtype pair', () => {
    const pairs = [['f32', 'f32'], ['f32', 'bf16'], ['bf16', 'f32'], ['bf16', 'bf16']] as const;
    const got = OUTPUTS.map((o) => pairs.map(([convDtype, qkvDtype]) => postconvErrorBound(o, { convDtype, qkvDtype })));
    assert.deepEqual(got, [
      [1e-6, 4e-3, 1e-6, 4e-3], [1e-6, 4e-3, 1e-6, 4e-3], [0, 1.6e-2, 0, 0], [1e-4, 1e-4, 1e-4, 1e-4], [1e-6, 1e-6, 1e-6, 1e-6],
    ]);
    assert.deepEqual(OUTPUTS, ['q', 'k', 'v', 'g', 'beta']);
  });

  it('differingRows: a row counts once however many of its elements differ, the last column included', () => {
    const a = tensor([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12], [4, 3]);
    assert.equal(differingRows(a, a.clone()), 0);
    assert.equal(differingRows(a, tensor([1, 2, 0, 4, 5, 6, 0, 0, 0, 10, 11, 12], [4, 3])), 2);
    assert.equal(differingRows(a, tensor([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 0], [4, 3])), 1);
    assert.equal(differingRows(a, tensor([0, 2, 3, 0, 5, 6, 0, 8, 9, 0, 11, 12], [4, 3])), 4);
  });
});

/** A planted post-conv result: every output a [1, 2] f32 tensor. */
type Vals = Partial<Record<'q' | 'k' | 'v' | 'g' | 'beta', number[]>>;
const BASE = { q: [0.5, -0.25], k: [0.125, 1], v: [2, -3], g: [-4, -0.5], beta: [0.75, 0.25] };

describe('check/postconv edges: checkPostconv verdicts on planted results', () => {
  const stubs = new Stubs();
  afterEach(() => stubs.restore());
  const small: PostconvCase = { name: 's', T: 1, Hk: 1, Hv: 1, Dk: 1, Dv: 1, convDtype: 'f32', gateDtype: 'f32', qkvDtype: 'f32', packedWidth: 3, bOffset: 0, aOffset: 2, seed: 1 };
  let calls: Record<string, unknown>[];
  let released: string[];
  let refCalls: number;
  function plant(plans: Record<string, Vals>, ref: Vals = {}, tableArms = [armInfo('tree', { reference: true }), armInfo('a'), armInfo('m', { mutant: true }), armInfo('b')]) {
    calls = [];
    released = [];
    refCalls = 0;
    stubs.set(table, 'arms', (op: string) => (assert.equal(op, 'postconv'), tableArms));
    stubs.set(pcOps, 'forward', async (_inputs: unknown, opts: Record<string, unknown>) => {
      calls.push(opts);
      const key = `${(opts.backend as { kind: string }).kind}:${opts.arm}`;
      const p = { ...BASE, ...(plans[key] ?? plans[opts.arm as string] ?? {}) };
      const r: Record<string, unknown> = { arm: `${opts.arm}-ran`, requested: opts.arm, release: () => void released.push(key) };
      for (const o of OUTPUTS) r[o] = tensor(p[o], [1, 2]);
      return r;
    });
    stubs.set(pcRef, 'postconvReference', (_i: unknown, c: PostconvCase) => {
      assert.equal(c.name, small.name);
      refCalls++;
      const p = { ...BASE, ...ref };
      return Object.fromEntries(OUTPUTS.map((o) => [o, Float64Array.from(p[o])]));
    });
  }

  it('all agree: a tree row against the float64 reference, one row per non-mutant arm, options passed through', async () => {
    plant({}, { g: [-4, -0.50005] });
    const seen: unknown[] = [];
    const r = await checkPostconv({ backend: host, cases: [small], onCase: (...a) => seen.push(a) });
    assert.equal(r.backend, 'host');
    assert.deepEqual(r.failures, []);
    assert.deepEqual(r.crossBackend, []);
    assert.deepEqual(r.results.map((x) => x.arm), ['tree', 'a', 'b']);
    const [tree, a] = r.results;
    assert.deepEqual({ ...tree, maxAbsError: null }, {
      case: 's', arm: 'tree', armRan: 'tree-ran', backend: 'host', mismatches: { q: 0, k: 0, v: 0, g: 0, beta: 0 }, ok: true,
      maxAbsError: null, referenceViolations: { q: 0, k: 0, v: 0, g: 0, beta: 0 },
    });
    assert.deepEqual(Object.keys(tree.maxAbsError!), ['q', 'k', 'v', 'g', 'beta']);
    assert.ok(Math.abs(tree.maxAbsError!.g - 5e-5) < 1e-9 && tree.maxAbsError!.q === 0);
    assert.deepEqual(a, { case: 's', arm: 'a', armRan: 'a-ran', backend: 'host', mismatches: { q: 0, k: 0, v: 0, g: 0, beta: 0 }, ok: true });
    assert.deepEqual(calls[0], { Hk: 1, Hv: 1, Dk: 1, Dv: 1, qkvDtype: 'f32', backend: host, arm: 'tree' });
    assert.deepEqual(calls[1], { Hk: 1, Hv: 1, Dk: 1, Dv: 1, qkvDtype: 'f32', backend: host, arm: 'a' });
    assert.deepEqual(seen, [[1, 1, 's']]);
    assert.equal(refCalls, 1);
    assert.deepEqual(released.sort(), ['host:a', 'host:b', 'host:tree']);
  });

  it('the tree row fails on one output past its bound, and on two (violations add up)', async () => {
    plant({}, { beta: [0.75, 0.2500011] });
    let r = await checkPostconv({ backend: host, cases: [small], arms: [] });
    assert.deepEqual(r.results[0].referenceViolations, { q: 0, k: 0, v: 0, g: 0, beta: 1 });
    assert.equal(r.results[0].ok, false);
    assert.deepEqual(r.failures, r.results);
    stubs.restore();
    plant({}, { q: [0.5, -0.2500011], v: [2, -3.0001] });
    r = await checkPostconv({ backend: host, cases: [small], arms: [] });
    assert.deepEqual(r.results[0].referenceViolations, { q: 1, k: 0, v: 1, g: 0, beta: 0 });
    assert.equal(r.results[0].ok, false);
    // Inside every bound (q by 1e-6 less a little): ok.
    stubs.restore();
    plant({}, { q: [0.5, -0.2500009] });
    r = await checkPostconv({ backend: host, cases: [small], arms: [] });
    assert.equal(r.results[0].ok, true);
  });

  it('arm rows: differences counted per output and located; a mutant arm differs without failing', async () => {
    plant({ a: { k: [0.125, 2], beta: [0.5, 0.5] }, m: { q: [1, 1] }, b: { beta: [0.75, 0] } });
    const r = await checkPostconv({ backend: host, cases: [small], arms: ['a', 'm', 'b'], reference: false });
    assert.equal(refCalls, 0, 'no reference, no tree row');
    assert.deepEqual(r.results.map((x) => [x.arm, x.ok]), [['a', false], ['m', false], ['b', false]]);
    const [a, m, b] = r.results;
    assert.deepEqual(a.mismatches, { q: 0, k: 1, v: 0, g: 0, beta: 2 });
    assert.deepEqual([a.firstMismatch!.output, a.firstMismatch!.index], ['k', 1]);
    assert.deepEqual(m.mismatches, { q: 2, k: 0, v: 0, g: 0, beta: 0 });
    assert.deepEqual([b.firstMismatch!.output, b.firstMismatch!.index], ['beta', 1]);
    assert.deepEqual(r.failures, [a, b]);
  });

  it('cross-backend rows only on CUDA with a host backend', async () => {
    plant({ 'host:tree': { v: [2, -2], g: [0, 0] } });
    const r = await checkPostconv({ backend: cuda, hostBackend: host, cases: [small, { ...small, name: 's' }], arms: [], reference: false });
    assert.deepEqual(r.crossBackend, [1, 2].map(() => ({ case: 's', mismatches: { q: 0, k: 0, v: 1, g: 2, beta: 0 }, ok: false })));
    assert.equal(released.filter((k) => k === 'host:tree').length, 2);
    assert.deepEqual(calls[1], { Hk: 1, Hv: 1, Dk: 1, Dv: 1, qkvDtype: 'f32', backend: host, arm: 'tree' });
    stubs.restore();
    plant({});
    assert.deepEqual((await checkPostconv({ backend: cuda, hostBackend: host, cases: [small], arms: [] })).crossBackend,
      [{ case: 's', mismatches: { q: 0, k: 0, v: 0, g: 0, beta: 0 }, ok: true }]);
    assert.deepEqual((await checkPostconv({ backend: cuda, cases: [small], arms: [] })).crossBackend, []);
    calls = [];
    assert.deepEqual((await checkPostconv({ backend: host, hostBackend: host, cases: [small], arms: [] })).crossBackend, []);
    assert.equal(calls.length, 1);
  });

  it('the tree result is released when the reference throws', async () => {
    plant({});
    stubs.set(pcRef, 'postconvReference', () => {
      throw new Error('planted');
    });
    await assert.rejects(checkPostconv({ backend: host, cases: [small], arms: [] }), /planted/);
    assert.deepEqual(released, ['host:tree']);
  });

  it('default cases: the full matrix', async () => {
    plant({});
    stubs.set(pcOps, 'forward', async (inputs: { convOut: Tensor }) => {
      throw Object.assign(new Error('stop'), { shape: inputs.convOut.shape });
    });
    await assert.rejects(checkPostconv({ backend: host }), (e: Error & { shape: number[] }) => e.message === 'stop' && e.shape.join() === '0,2048');
  });
});

describe('check/postconv edges: seq4 and user-defined defects', () => {
  const stubs = new Stubs();
  afterEach(() => stubs.restore());
  const c = (name: string, qkvDtype: 'f32' | 'bf16', Dk = 1): PostconvCase => ({ name, T: 1, Hk: 1, Hv: 1, Dk, Dv: Dk, convDtype: 'f32', gateDtype: 'f32', qkvDtype, packedWidth: 2, bOffset: 0, aOffset: 1, seed: 2 });
  let armsRun: string[];
  function plant(byCase: Record<string, Vals>, tableArms = [armInfo('tree', { reference: true }), armInfo('seq4', { mutant: true })]) {
    armsRun = [];
    stubs.set(table, 'arms', () => tableArms);
    stubs.set(pcRef, 'postconvReference', () => {
      throw new Error('the mutant runs have no tree row');
    });
    stubs.set(pcOps, 'forward', async (inputs: { convOut: Tensor }, opts: Record<string, unknown>) => {
      armsRun.push(opts.arm as string);
      const name = (inputs as unknown as { tag: string }).tag;
      const p = opts.arm === 'tree' ? BASE : { ...BASE, ...(byCase[`${opts.arm}:${inputs.convOut.cols}:${opts.qkvDtype}:${name}`] ?? byCase[`${opts.arm}:${opts.qkvDtype}`] ?? {}) };
      const r: Record<string, unknown> = { arm: opts.arm, requested: opts.arm, release() {} };
      for (const o of OUTPUTS) r[o] = tensor(p[o], [1, 2]);
      return r;
    });
  }

  it('runSeq4Mutant: q or k differences counted by output dtype, other outputs not; Dk = Dv = 128 cases only', async () => {
    // The planted seq4 differs in q in the f32 cases, in v only in the bf16 ones: caught in f32, not in bf16.
    plant({ 'seq4:f32': { q: [9, 9], k: [9, 9] }, 'seq4:bf16': { v: [7, 7], g: [1, 1], beta: [0, 0] } });
    const cases = [c('f1', 'f32', 128), c('b1', 'bf16', 128), c('f2', 'f32', 128), c('fb', 'f32', 64), { ...c('dv', 'f32', 64), Dv: 128 }];
    const o = await runSeq4Mutant(host, cases);
    assert.deepEqual(o, { caughtInF32: 2, f32Cases: 2, caughtInBf16: 0, bf16Cases: 1, caught: true });
    assert.deepEqual(armsRun, ['tree', 'seq4', 'tree', 'seq4', 'tree', 'seq4']);
    plant({ 'seq4:bf16': { k: [0, 0] } });
    assert.deepEqual(await runSeq4Mutant(host, cases), { caughtInF32: 0, f32Cases: 2, caughtInBf16: 1, bf16Cases: 1, caught: false });
    plant({ 'seq4:f32': { k: [0, 0] } });
    assert.deepEqual(await runSeq4Mutant(host, [c('f1', 'f32', 128), c('h', 'f32', 128 + 0)].slice(0, 1).concat([{ ...c('d', 'f32', 128), Dv: 64 }])), {
      caughtInF32: 1, f32Cases: 1, caughtInBf16: 0, bf16Cases: 0, caught: true,
    });
  });

  /** forward answers the tree call of the first 48 cases (where the quick and full matrices agree) and stops at the 49th. */
  function stopAtCase49() {
    let n = 0;
    stubs.set(pcOps, 'forward', async (inputs: { convOut: Tensor }, opts: { arm: string }) => {
      if (opts.arm === 'tree' && ++n === 49) throw Object.assign(new Error('stop'), { shape: inputs.convOut.shape });
      const r: Record<string, unknown> = { arm: opts.arm, requested: opts.arm, release() {} };
      for (const o of OUTPUTS) r[o] = tensor(BASE[o], [1, 2]);
      return r;
    });
  }

  it('runSeq4Mutant defaults to the quick matrix (its 49th case: T = 0 of the 4B layout, not T = 2048)', async () => {
    plant({});
    stopAtCase49();
    await assert.rejects(runSeq4Mutant(host), (e: Error & { shape: number[] }) => e.message === 'stop' && e.shape.join() === '0,8192');
  });

  it('runPostconvDefects: one outcome per user mutant arm, every output compared, split by output dtype', async () => {
    const defects: Record<string, { plantedDefect: string }> = { u1: { plantedDefect: 'drops beta' } };
    stubs.set(registry, 'userArm', (op: string, name: string) => (assert.equal(op, 'postconv'), defects[name]));
    plant({ 'u1:f32': { beta: [1, 1] }, 'u2:bf16': { g: [0, 0] } }, [
      armInfo('tree', { reference: true }), armInfo('seq4', { mutant: true }), armInfo('u1', { user: true, mutant: true }),
      armInfo('ok', { user: true }), armInfo('u2', { user: true, mutant: true }),
    ]);
    const cases = [c('f1', 'f32', 128), c('b1', 'bf16', 128), c('b2', 'bf16', 128), c('f64', 'f32', 64), { ...c('dv', 'f32', 64), Dv: 128 }, { ...c('dk', 'bf16', 128), Dv: 64 }];
    const out = await runPostconvDefects(host, cases);
    assert.deepEqual(out, [
      { arm: 'u1', plantedDefect: 'drops beta', caughtInF32: 1, f32Cases: 1, caughtInBf16: 0, bf16Cases: 2, caught: true },
      { arm: 'u2', plantedDefect: '', caughtInF32: 0, f32Cases: 1, caughtInBf16: 2, bf16Cases: 2, caught: true },
    ]);
    assert.deepEqual(armsRun.filter((a) => a !== 'tree'), ['u1', 'u1', 'u1', 'u2', 'u2', 'u2']);
    plant({}, [armInfo('tree', { reference: true }), armInfo('u3', { user: true, mutant: true })]);
    assert.deepEqual((await runPostconvDefects(host, cases)).map((x) => [x.arm, x.caught]), [['u3', false]]);
    plant({}, [armInfo('tree', { reference: true }), armInfo('seq4', { mutant: true })]);
    assert.deepEqual(await runPostconvDefects(host, cases), []);
  });

  it('runPostconvDefects defaults to the quick matrix', async () => {
    plant({}, [armInfo('tree', { reference: true }), armInfo('u3', { user: true, mutant: true })]);
    stopAtCase49();
    await assert.rejects(runPostconvDefects(host), (e: Error & { shape: number[] }) => e.message === 'stop' && e.shape.join() === '0,8192');
  });
});

describe('check/postconv edges: one real host run', function () {
  this.timeout(20000);
  it('T = 3 at Dk = 128: the tree row within its bounds, token-tile equal to tree', async () => {
    const c: PostconvCase = { name: 'tiny', T: 3, Hk: 1, Hv: 1, Dk: 128, Dv: 128, convDtype: 'bf16', gateDtype: 'bf16', qkvDtype: 'f32', packedWidth: 4, bOffset: 3, aOffset: 0, seed: 8 };
    const r = await checkPostconv({ backend: openBackend('host'), cases: [c], arms: ['token-tile'] });
    assert.deepEqual(r.results.map((x) => [x.arm, x.ok]), [['tree', true], ['token-tile', true]]);
    assert.ok(r.results[0].maxAbsError!.beta > 0);
  });
});
