// Edge tests for lib/check/mutants.ts: the mutant cases pinned, and runConvMutants / runUserConvDefects over a
// replaced checkConv (lib/check/conv's export), arm table, registry and Backend.open, so that what each planted
// mutant is run with, and how its failing comparisons add up to caught / missed, is asserted exactly. The last
// test runs one built-in mutant through the host kernels on a 2-channel case.

import { strict as assert } from 'assert';
import { mutantCases, runConvMutants, runUserConvDefects } from '../../lib/check/mutants';
import { checkConv, ConvCase } from '../../lib/check/conv';
import { Backend } from '../../lib/backend';
import { CONV_MUTANTS } from '../../lib/ops/conv';
import { Stubs, armInfo } from './check-stubs';
import { openBackend } from '../backends';

const checkConvMod = require('../../lib/check/conv') as Record<string, unknown>;
const table = require('../../lib/arms/table') as Record<string, unknown>;
const registry = require('../../lib/arms/registry') as Record<string, unknown>;

type Row = { case: string; arm: string; mapping: string; outMismatches: number; stateMismatches: number };
type Call = { backend: { kind: string }; cases: ConvCase[]; armMappings: { arm: string; mapping: string }[]; mutant?: string | null; schedule?: string };

describe('check/mutants edges', () => {
  const stubs = new Stubs();
  afterEach(() => stubs.restore());
  const host = { kind: 'host' } as never;
  const cuda = { kind: 'cuda' } as never;
  let calls: Call[];

  /** checkConv answers with failures chosen per call (by mutant, schedule, arm). */
  function plant(failuresOf: (c: Call) => Row[], tableArms = [armInfo('ref0', { reference: true }), armInfo('reg', { mappings: ['exact'] })]) {
    calls = [];
    stubs.set(table, 'arms', (op: string) => (assert.equal(op, 'conv'), tableArms));
    stubs.set(table, 'referenceArm', () => armInfo('ref0', { reference: true }));
    stubs.set(checkConvMod, 'checkConv', (opts: Call) => {
      calls.push(opts);
      return { backend: opts.backend.kind, results: [], failures: failuresOf(opts), crossBackend: [] };
    });
  }
  const row = (kase: string, arm: string, out: number, state: number, mapping = 'exact'): Row => ({ case: kase, arm, mapping, outMismatches: out, stateMismatches: state });

  it('mutantCases: three small cases with partial tiles, long state-carrying sequences and a padded row', () => {
    const base = { K: 4, maskDtype: 'i32', bias: true, seed: 77 };
    assert.deepEqual(mutantCases(), [
      { ...base, name: 'C=129 K=4 bf16->f32 state', C: 129, xDtype: 'bf16', outDtype: 'f32', lengths: [9, 33, 5, 0, 20], initialState: [true, true, false, true, true], xRowStride: 129 },
      { ...base, name: 'C=256 K=4 f32->f32 state', C: 256, xDtype: 'f32', outDtype: 'f32', lengths: [17, 8, 40], initialState: [true, false, true], xRowStride: 256 },
      { ...base, name: 'C=385(pad) K=3 bf16->bf16 state', C: 385, K: 3, xDtype: 'bf16', outDtype: 'bf16', lengths: [12, 2, 25], initialState: [true, true, true], xRowStride: 392 },
    ]);
  });

  it('runConvMutants on the host: each built-in mutant on reg/exact, then exact-racy in reverse order; the reference rows do not count', () => {
    plant((c) => {
      if (c.mutant === 'taps-reversed') return [row('c1', 'reg', 3, 1), row('c2', 'reg', 2, 0), row('c0', 'ref0', 50, 50)];
      if (c.mutant === 'no-tail-guard') return [row('c2', 'ref0', 9, 9)];
      if (c.schedule === 'reverse') return [row('c3', 'reg', 4, 0, 'exact-racy')];
      return [];
    });
    const out = runConvMutants({ backend: host });
    assert.deepEqual(out, [
      { mutant: 'taps-reversed', caught: true, failedComparisons: 2, outMismatches: 5, stateMismatches: 1, detail: '2 comparisons differ (5 out, 1 state elements), first: c1' },
      { mutant: 'state-from-output', caught: false, failedComparisons: 0, outMismatches: 0, stateMismatches: 0, detail: 'no comparison differs' },
      { mutant: 'no-tail-guard', caught: false, failedComparisons: 0, outMismatches: 0, stateMismatches: 0, detail: 'no comparison differs' },
      { mutant: 'chunk-off-by-one', caught: false, failedComparisons: 0, outMismatches: 0, stateMismatches: 0, detail: 'no comparison differs' },
      { mutant: 'exact-racy', caught: true, failedComparisons: 1, outMismatches: 4, stateMismatches: 0, detail: '1 comparisons differ (4 out, 0 state elements), first: c3' },
    ]);
    assert.deepEqual(CONV_MUTANTS.length, 4);
    for (const [i, m] of CONV_MUTANTS.entries()) {
      assert.deepEqual(calls[i], { backend: host, cases: mutantCases(), armMappings: [{ arm: 'reg', mapping: 'exact' }], mutant: m });
    }
    assert.deepEqual(calls[4], { backend: host, cases: mutantCases(), armMappings: [{ arm: 'reg', mapping: 'exact-racy' }], schedule: 'reverse' });
    assert.equal(calls.length, 5, 'no user defects defined: nothing more');
  });

  it('runConvMutants on CUDA: no exact-racy run (the host block order makes it)', () => {
    plant(() => []);
    const out = runConvMutants({ backend: cuda });
    assert.deepEqual(out.map((o) => o.mutant), [...CONV_MUTANTS]);
    assert.ok(calls.every((c) => c.backend === cuda));
  });

  it('runUserConvDefects: nothing to run (and no host opened) without a user arm defined as a defect', () => {
    plant(() => [], [armInfo('ref0', { reference: true }), armInfo('u', { user: true }), armInfo('m', { mutant: true })]);
    stubs.set(Backend, 'open', () => assert.fail('opened a backend'));
    assert.deepEqual(runUserConvDefects(cuda), []);
    assert.deepEqual(calls, []);
  });

  it('runUserConvDefects on CUDA: every mapping forward on CUDA and in reverse on a host it opens and closes', () => {
    const opened = { kind: 'host', closes: 0, close() { this.closes++; } };
    const opens: unknown[] = [];
    stubs.set(Backend, 'open', (k: string) => (opens.push(k), opened));
    stubs.set(registry, 'userArm', (op: string, name: string) => (assert.equal(op, 'conv'), name === 'u1' ? { plantedDefect: 'skips the state' } : undefined));
    plant((c) => {
      const arm = c.armMappings[0].arm;
      if (arm === 'u1' && c.schedule === 'reverse') return [row('r1', 'u1', 1, 2, 'exact'), row('r2', 'u1', 0, 3, 'sequence'), row('r0', 'ref0', 7, 7)];
      if (arm === 'u1') return [row('f1', 'u1', 5, 0, 'sequence')];
      return [row('x', 'ref0', 1, 1)];
    }, [armInfo('ref0', { reference: true }), armInfo('u1', { user: true, mutant: true, mappings: ['exact', 'sequence'] }), armInfo('plain', { user: true, mappings: ['exact'] }),
      armInfo('u2', { user: true, mutant: true, mappings: ['sequence'] })]);
    const out = runUserConvDefects(cuda);
    assert.deepEqual(opens, ['host']);
    assert.equal(opened.closes, 1);
    assert.deepEqual(out, [
      {
        mutant: 'arm:u1', plantedDefect: 'skips the state', caught: true, failedComparisons: 3, outMismatches: 6, stateMismatches: 5,
        detail: '3 comparisons differ (6 out, 5 state elements): cuda, forward order 1, host, reverse order 2; first: f1 sequence',
      },
      {
        mutant: 'arm:u2', plantedDefect: undefined, caught: false, failedComparisons: 0, outMismatches: 0, stateMismatches: 0,
        detail: 'no comparison differs over 3 cases × 1 mappings (cuda, forward order; host, reverse order)',
      },
    ]);
    const um = [{ arm: 'u1', mapping: 'exact' }, { arm: 'u1', mapping: 'sequence' }];
    assert.deepEqual(calls.slice(0, 2), [
      { backend: cuda, cases: mutantCases(), armMappings: um, schedule: undefined },
      { backend: opened, cases: mutantCases(), armMappings: um, schedule: 'reverse' },
    ]);
    assert.equal(calls.length, 4);
  });

  it('runUserConvDefects on the host: both runs there, nothing opened or closed; a throwing check still closes what was opened', () => {
    const h = { kind: 'host', close: () => assert.fail('closed the caller\'s backend') } as never;
    stubs.set(Backend, 'open', () => assert.fail('opened a backend'));
    plant(() => [], [armInfo('ref0', { reference: true }), armInfo('u1', { user: true, mutant: true, mappings: ['exact'] })]);
    const out = runUserConvDefects(h);
    assert.equal(out[0].detail, 'no comparison differs over 3 cases × 1 mappings (host, forward order; host, reverse order)');
    assert.deepEqual(calls.map((c) => c.backend), [h, h]);
    stubs.restore();
    const opened = { kind: 'host', closes: 0, close() { this.closes++; } };
    stubs.set(Backend, 'open', () => opened);
    plant(() => {
      throw new Error('planted');
    }, [armInfo('ref0', { reference: true }), armInfo('u1', { user: true, mutant: true, mappings: ['exact'] })]);
    assert.throws(() => runUserConvDefects(cuda), /planted/);
    assert.equal(opened.closes, 1);
  });

  it('runConvMutants appends the user defects after the built-in ones', () => {
    stubs.set(registry, 'userArm', () => ({ plantedDefect: 'd' }));
    plant(() => [], [armInfo('ref0', { reference: true }), armInfo('u1', { user: true, mutant: true, mappings: ['exact'] })]);
    assert.deepEqual(runConvMutants({ backend: host }).map((o) => o.mutant), [...CONV_MUTANTS, 'exact-racy', 'arm:u1']);
  });
});

describe('check/mutants edges: a real host run', function () {
  this.timeout(20000);
  it('taps-reversed on a 2-channel case through checkConv: the arm rows fail, the reference row does not', () => {
    const c: ConvCase = { name: 't', C: 2, K: 3, xDtype: 'f32', outDtype: 'f32', lengths: [4], initialState: [true], maskDtype: 'i8', bias: false, xRowStride: 2, seed: 3 };
    const r = checkConv({ backend: openBackend('host'), cases: [c], armMappings: [{ arm: 'reg', mapping: 'exact' }], mutant: 'taps-reversed' });
    assert.deepEqual(r.failures.map((f) => f.arm), ['reg']);
  });
});
