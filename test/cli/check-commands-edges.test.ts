// `gdnlab check conv|postconv|fused|race|sanitize` in process (lib/cli/check-*.ts): the checks, matrices, mutant
// runs, race trials and the sanitize workload are replaced by recorders that answer made-up reports, so each test
// sees exactly what every flag hands on (--quick to the matrix, the backend and its host twin, the progress
// line, --mutants, --json, --define), every line of the report as printed, and the exit status.

import { strict as assert } from 'assert';
import { ARITHMETIC_VERSION, revision } from '../../lib/provenance';
import { CONV_MUTANTS } from '../../lib/ops/conv';
import { Stubs, cli, fakeBackend, fakeBackends, fakeDefine, lines, usageError, FakeBackend } from './edges-helpers';

const convLib = require('../../lib/check/conv') as Record<string, unknown>;
const mutantsLib = require('../../lib/check/mutants') as Record<string, unknown>;
const postconvLib = require('../../lib/check/postconv') as Record<string, unknown>;
const fusedLib = require('../../lib/check/fused') as Record<string, unknown>;
const raceLib = require('../../lib/check/race') as Record<string, unknown>;
const sanitizeLib = require('../../lib/check/sanitize') as Record<string, unknown>;

type Opts = Record<string, unknown> & { onCase?: (d: number, n: number, name: string) => void };

/** The progress line a check's onCase draws on stderr for (1, 2, 'first case'), padded to `width`. */
const progress = (width: number) => '\r[1/2] first case'.padEnd(width);

describe('gdnlab check commands, in process', () => {
  const stubs = new Stubs();
  afterEach(() => stubs.restore());

  // ---------------------------------------------------------------------------------------------- conv

  describe('check conv', () => {
    const CASES = [{ name: 'A' }, { name: 'B' }];
    const ref = (c: string, o: object) => ({ case: c, arm: 'scalar', mapping: 'exact', armRan: 'scalar', mappingRan: 'exact', outMismatches: 0, stateMismatches: 0, maxAbsError: 0, withinTolerance: true, roundingViolations: 0, ok: true, ...o });
    const row = (c: string, arm: string, mapping: string, o: object = {}) => ({ case: c, arm, mapping, armRan: arm, mappingRan: mapping, outMismatches: 0, stateMismatches: 0, ok: true, ...o });
    const RESULTS = [
      ref('A', { maxAbsError: 0.00123 }), row('A', 'vec', 'exact'),
      ref('B', { maxAbsError: 0.25, withinTolerance: false, roundingViolations: 2, stateMismatches: 5, ok: false }),
      row('B', 'reg', 'sequence', { armRan: 'scalar', outMismatches: 3, ok: false }),
      ref('C', { maxAbsError: 1e-6, roundingViolations: 1, ok: false }),
      ref('D', { stateMismatches: 4, ok: false }),
      row('E', 'scalar', 'sequence'), row('E', 'vec', 'exact', { stateMismatches: 2, ok: false }),
      row('F', 'tile', 'exact', { armRan: 'vec' }),
      ref('G', { maxAbsError: 2e-3, withinTolerance: false, ok: false }),
    ];
    const report = (o: object = {}) => {
      const results = RESULTS;
      return { backend: 'host', results, failures: results.filter((r) => !r.ok), crossBackend: [], ...o };
    };

    const recorded = (rep: object, mutants: object[] = []) => {
      const calls = { matrix: [] as unknown[], check: [] as Opts[], mutants: [] as unknown[] };
      stubs.set(convLib, 'convMatrix', (o: unknown) => (calls.matrix.push(o), CASES));
      stubs.set(convLib, 'checkConv', (o: Opts) => (calls.check.push(o), o.onCase?.(1, 2, 'first case'), rep));
      stubs.set(mutantsLib, 'runConvMutants', (o: unknown) => (calls.mutants.push(o), mutants));
      return calls;
    };

    it('every kind of row as printed: f64 error, out of tolerance, rounding, state, mismatches, the arm that ran; exit 1 on a failure', async () => {
      const host = fakeBackend('host');
      const backends = fakeBackends(stubs, host);
      const calls = recorded(report());
      const r = await cli(['check', 'conv']);
      assert.equal(r.status, 1);
      assert.deepEqual(lines(r.out), [
        'ok   A: f64 max|err| 1.23e-3',
        'FAIL B: f64 max|err| 2.50e-1 OUT OF TOLERANCE ROUNDING: 2 bf16 elements not rounded to nearest even STATE: 5 elements differ from the raw inputs; reg/sequence(ran scalar) MISMATCH out 3 state 0',
        'FAIL C: f64 max|err| 1.00e-6 ROUNDING: 1 bf16 elements not rounded to nearest even',
        'FAIL D: f64 max|err| 0.00e+0 STATE: 4 elements differ from the raw inputs',
        'FAIL E: vec/exact MISMATCH out 0 state 2',
        'ok   F: tile/exact(ran vec) ok',
        'FAIL G: f64 max|err| 2.00e-3 OUT OF TOLERANCE',
        'equivalence: 10 comparisons, 6 mismatching',
      ]);
      // The host checks alone: no host twin is opened; the progress line is drawn 70 wide.
      assert.equal(backends.opened.length, 0);
      assert.deepEqual(calls.matrix, [{ quick: false }]);
      assert.deepEqual(Object.keys(calls.check[0]), ['backend', 'hostBackend', 'cases', 'onCase']);
      assert.deepEqual([calls.check[0].backend, calls.check[0].hostBackend, calls.check[0].cases], [host, undefined, CASES]);
      assert.equal(r.err, progress(70));
      assert.equal(calls.mutants.length, 0);
    });

    it('--backend cuda --quick: the quick matrix; a host twin opened, compared and closed; cuda==host counts; exit 0 when all agree', async () => {
      const backends = fakeBackends(stubs);
      const ok = [ref('A', { maxAbsError: 1e-3 }), row('B', 'vec', 'exact')];
      const cross = [{ case: 'A', outMismatches: 0, stateMismatches: 0, ok: true }, { case: 'B', outMismatches: 0, stateMismatches: 0, ok: true }];
      const calls = recorded(report({ results: ok, failures: [], crossBackend: cross }));
      const r = await cli(['check', 'conv', '--backend', 'cuda', '--quick']);
      assert.equal(r.status, 0, r.out);
      assert.deepEqual(calls.matrix, [{ quick: true }]);
      assert.deepEqual(backends.opened.map((b) => b.kind), ['cuda', 'host']);
      const [cuda, twin] = backends.opened;
      assert.equal(calls.check[0].backend, cuda);
      assert.equal(calls.check[0].hostBackend, twin);
      assert.deepEqual([cuda.closes, twin.closes], [0, 1]);
      assert.deepEqual(lines(r.out), ['ok   A: f64 max|err| 1.00e-3', 'ok   B: vec/exact ok', 'equivalence: 2 comparisons, 0 mismatching; cuda==host on 2/2 cases']);
    });

    it('a case where cuda and host differ is printed and fails the run, though every comparison matched', async () => {
      fakeBackends(stubs, fakeBackend('cuda'));
      const cross = [{ case: 'A', outMismatches: 7, stateMismatches: 1, ok: false }, { case: 'B', outMismatches: 0, stateMismatches: 0, ok: true }];
      recorded(report({ results: [row('A', 'vec', 'exact')], failures: [], crossBackend: cross }));
      const r = await cli(['check', 'conv']);
      assert.equal(r.status, 1);
      assert.deepEqual(lines(r.out), ['ok   A: vec/exact ok', 'FAIL cuda vs host (scalar) A: out 7, state 1 mismatching elements', 'equivalence: 1 comparisons, 0 mismatching; cuda==host on 1/2 cases']);
    });

    it('failures add up: one mismatch and one cuda/host difference, or one mismatch and one missed mutant, still fail', async () => {
      fakeBackends(stubs, fakeBackend('cuda'));
      const bad = row('A', 'vec', 'exact', { outMismatches: 1, ok: false });
      recorded(report({ results: [bad], failures: [bad], crossBackend: [{ case: 'A', outMismatches: 1, stateMismatches: 0, ok: false }] }));
      assert.equal((await cli(['check', 'conv'])).status, 1);
      stubs.restore();
      fakeBackends(stubs, fakeBackend('cuda'));
      recorded(report({ results: [bad], failures: [bad] }), [{ mutant: 'taps-reversed', caught: false, detail: 'd' }]);
      assert.equal((await cli(['check', 'conv', '--mutants'])).status, 1);
    });

    it('--mutants: each mutant and planted defect as caught or MISSED, the count line (host: + the racy mapping); a missed one fails', async () => {
      const host = fakeBackend('host');
      fakeBackends(stubs, host);
      const mutants = [
        { mutant: 'taps-reversed', caught: true, detail: 'out differs in 3 cases' },
        { mutant: 'exact-racy', caught: false, detail: 'never corrupted' },
        { mutant: 'arm:bad', plantedDefect: 'drops a tap', caught: true, detail: 'out differs' },
      ];
      const calls = recorded(report({ results: [row('A', 'vec', 'exact')], failures: [] }), mutants);
      const r = await cli(['check', 'conv', '--mutants']);
      assert.equal(r.status, 1);
      assert.deepEqual(calls.mutants, [{ backend: host }]);
      assert.deepEqual(lines(r.out).slice(2), [
        'caught mutant taps-reversed: out differs in 3 cases',
        'MISSED mutant exact-racy: never corrupted',
        'caught planted defect arm:bad (drops a tap): out differs',
        `mutants: 2/3 caught (${CONV_MUTANTS.length} planted mutants + the racy mapping under reverse order + 1 user arms defined as planted defects)`,
      ]);
      stubs.restore();
      fakeBackends(stubs, fakeBackend('cuda'));
      recorded(report({ results: [row('A', 'vec', 'exact')], failures: [] }), [mutants[0]]);
      const cuda = await cli(['check', 'conv', '--mutants']);
      assert.equal(cuda.status, 0, cuda.out);
      assert.equal(lines(cuda.out)[3], `mutants: 1/1 caught (${CONV_MUTANTS.length} planted mutants)`);
    });

    it('--json: the report (and with --mutants the outcomes) as one JSON object, no progress line, no text', async () => {
      const host = fakeBackend('host');
      fakeBackends(stubs, host);
      const rep = report({ results: [row('A', 'vec', 'exact')], failures: [] });
      const mutants = [{ mutant: 'taps-reversed', caught: true, detail: 'd' }];
      const calls = recorded(rep, mutants);
      const r = await cli(['check', 'conv', '--json']);
      assert.equal(r.status, 0);
      assert.equal(calls.check[0].onCase, undefined);
      assert.equal(r.err, '');
      const head = { backend: 'host', revision: revision(), arithmetic: ARITHMETIC_VERSION, device: 'host device', equivalence: rep };
      assert.equal(r.out, JSON.stringify(head, null, 2) + '\n');
      const m = await cli(['check', 'conv', '--json', '--mutants']);
      assert.equal(m.out, JSON.stringify({ ...head, mutants }, null, 2) + '\n');
    });
  });

  // ---------------------------------------------------------------------------------------------- postconv

  describe('check postconv', () => {
    // P1 first: a bound looked up in the wrong case (f32 q/k: 1e-6 against bf16's 4e-3) would show.
    const CASES = [{ name: 'P1', convDtype: 'f32', qkvDtype: 'f32' }, { name: 'P2', convDtype: 'f32', qkvDtype: 'bf16' }];
    const m = (q: number, k: number, v: number, g: number, beta: number) => ({ q, k, v, g, beta });
    const zero = m(0, 0, 0, 0, 0);
    const RESULTS = [
      { case: 'P1', arm: 'tree', armRan: 'tree', mismatches: zero, ok: true, maxAbsError: m(1e-7, 2e-7, 0, 5e-5, 1e-7), referenceViolations: zero },
      { case: 'P1', arm: 'seq', armRan: 'seq', mismatches: zero, ok: true },
      { case: 'P2', arm: 'tree', armRan: 'tree', mismatches: zero, ok: false, maxAbsError: m(5e-3, 1e-3, 2e-2, 1e-5, 0), referenceViolations: m(3, 0, 2, 0, 0) },
      { case: 'P2', arm: 'vec', armRan: 'seq', mismatches: m(1, 2, 3, 4, 5), ok: false },
    ];
    const report = (o: object = {}) => ({ backend: 'host', results: RESULTS, failures: RESULTS.filter((r) => !r.ok), crossBackend: [], ...o });
    const SEQ4 = { caughtInF32: 3, f32Cases: 4, caughtInBf16: 1, bf16Cases: 4, caught: true };
    const DEFECTS = [
      { arm: 'bad1', plantedDefect: 'drops beta', caughtInF32: 2, f32Cases: 4, caughtInBf16: 0, bf16Cases: 4, caught: true },
      { arm: 'bad2', plantedDefect: 'swaps q and k', caughtInF32: 0, f32Cases: 4, caughtInBf16: 0, bf16Cases: 4, caught: false },
    ];

    const recorded = (rep: object, seq4: object = SEQ4, defects: object[] = []) => {
      const calls = { matrix: [] as unknown[], check: [] as Opts[], seq4: [] as unknown[], defects: [] as unknown[] };
      stubs.set(postconvLib, 'postconvMatrix', (o: unknown) => (calls.matrix.push(o), CASES));
      stubs.set(postconvLib, 'checkPostconv', async (o: Opts) => (calls.check.push(o), o.onCase?.(1, 2, 'first case'), rep));
      stubs.set(postconvLib, 'runSeq4Mutant', async (b: unknown, ...rest: unknown[]) => (calls.seq4.push([b, ...rest]), seq4));
      stubs.set(postconvLib, 'runPostconvDefects', async (b: unknown, ...rest: unknown[]) => (calls.defects.push([b, ...rest]), defects));
      return calls;
    };

    it('the tree against float64 with the bound of its case, each arm against the tree, cross-backend failures, the worst errors; exit 1', async () => {
      const host = fakeBackend('host');
      const backends = fakeBackends(stubs, host);
      const cross = [{ case: 'P1', mismatches: zero, ok: true }, { case: 'P2', mismatches: m(1, 0, 0, 0, 0), ok: false }];
      const calls = recorded(report({ crossBackend: cross }));
      const r = await cli(['check', 'postconv']);
      assert.equal(r.status, 1);
      assert.deepEqual(lines(r.out), [
        'FAIL P2: tree vs float64 reference — q 3 elements (max |error| 5.00e-3 > 4.0e-3), v 2 elements (max |error| 2.00e-2 > 1.6e-2)',
        'ok   P1: seq vs tree — q 0, k 0, v 0, g 0, beta 0',
        'FAIL P2: vec (ran seq) vs tree — q 1, k 2, v 3, g 4, beta 5',
        'FAIL cuda vs host (tree) P2: q 1, k 0, v 0, g 0, beta 0',
        'tree vs float64 reference, worst max |error|: q 5.00e-3, k 1.00e-3, v 2.00e-2, g 5.00e-5, beta 1.00e-7',
        'equivalence: 4 results, 2 failing; cuda==host on 1/2',
      ]);
      assert.equal(backends.opened.length, 0);
      assert.deepEqual(calls.matrix, [{ quick: false }]);
      assert.deepEqual(Object.keys(calls.check[0]), ['backend', 'hostBackend', 'cases', 'onCase']);
      assert.deepEqual([calls.check[0].backend, calls.check[0].hostBackend, calls.check[0].cases], [host, undefined, CASES]);
      assert.equal(r.err, progress(90));
      assert.deepEqual([calls.seq4.length, calls.defects.length], [0, 0]);
    });

    it('--backend cuda --quick: the quick matrix, a host twin opened and closed; all agree: exit 0', async () => {
      const backends = fakeBackends(stubs);
      const ok = [RESULTS[0], RESULTS[1]];
      const calls = recorded(report({ results: ok, failures: [], crossBackend: [{ case: 'P1', mismatches: zero, ok: true }] }));
      const r = await cli(['check', 'postconv', '--backend', 'cuda', '--quick']);
      assert.equal(r.status, 0, r.out);
      assert.deepEqual(calls.matrix, [{ quick: true }]);
      const [cuda, twin] = backends.opened;
      assert.deepEqual(backends.opened.map((b) => b.kind), ['cuda', 'host']);
      assert.deepEqual([calls.check[0].backend, calls.check[0].hostBackend], [cuda, twin]);
      assert.deepEqual([cuda.closes, twin.closes], [0, 1]);
      assert.deepEqual(lines(r.out).slice(-2), [
        'tree vs float64 reference, worst max |error|: q 1.00e-7, k 2.00e-7, v 0.00e+0, g 5.00e-5, beta 1.00e-7',
        'equivalence: 2 results, 0 failing; cuda==host on 1/1',
      ]);
    });

    it('a cross-backend difference alone fails the run; failures add up (mismatch + cross, mismatch + missed seq4 or defect)', async () => {
      fakeBackends(stubs, fakeBackend('cuda'));
      recorded(report({ results: [RESULTS[1]], failures: [], crossBackend: [{ case: 'P1', mismatches: m(0, 0, 0, 0, 1), ok: false }] }));
      assert.equal((await cli(['check', 'postconv'])).status, 1);
      const one = { results: [RESULTS[3]], failures: [RESULTS[3]] };
      stubs.restore();
      fakeBackends(stubs, fakeBackend('cuda'));
      recorded(report({ ...one, crossBackend: [{ case: 'P2', mismatches: m(0, 0, 0, 0, 1), ok: false }] }));
      assert.equal((await cli(['check', 'postconv'])).status, 1);
      stubs.restore();
      fakeBackends(stubs, fakeBackend('host'));
      recorded(report(one), { ...SEQ4, caught: false });
      assert.equal((await cli(['check', 'postconv', '--mutants'])).status, 1);
      stubs.restore();
      fakeBackends(stubs, fakeBackend('host'));
      recorded(report(one), SEQ4, [DEFECTS[1]]);
      assert.equal((await cli(['check', 'postconv', '--mutants'])).status, 1);
    });

    it('--mutants: seq4 and each planted-defect user arm on the backend checked, caught or MISSED; a missed one fails', async () => {
      const host = fakeBackend('host');
      fakeBackends(stubs, host);
      const ok = { results: [RESULTS[1]], failures: [] };
      const calls = recorded(report(ok), SEQ4, DEFECTS);
      const r = await cli(['check', 'postconv', '--mutants']);
      assert.equal(r.status, 1);
      assert.deepEqual(calls.seq4, [[host]]);
      assert.deepEqual(calls.defects, [[host]]);
      assert.deepEqual(lines(r.out).slice(3), [
        'caught mutant seq4: differs in 3/4 f32-output cases, 1/4 bf16-output cases',
        'caught planted defect arm bad1 (drops beta): differs in 2/4 f32-output cases, 0/4 bf16-output cases',
        'MISSED planted defect arm bad2 (swaps q and k): differs in 0/4 f32-output cases, 0/4 bf16-output cases',
      ]);
      stubs.restore();
      fakeBackends(stubs, host);
      recorded(report(ok), { ...SEQ4, caughtInF32: 0, caught: false }, [DEFECTS[0]]);
      const missed = await cli(['check', 'postconv', '--mutants']);
      assert.equal(missed.status, 1);
      assert.equal(lines(missed.out)[3], 'MISSED mutant seq4: differs in 0/4 f32-output cases, 1/4 bf16-output cases');
      stubs.restore();
      fakeBackends(stubs, host);
      recorded(report(ok), SEQ4, [DEFECTS[0]]);
      assert.equal((await cli(['check', 'postconv', '--mutants'])).status, 0);
    });

    it('--json: backend, device and the report (with --mutants seq4 and the user defects), no progress, no text', async () => {
      fakeBackends(stubs, fakeBackend('host'));
      const rep = report({ results: [RESULTS[1]], failures: [] });
      const calls = recorded(rep, SEQ4, DEFECTS);
      const r = await cli(['check', 'postconv', '--json']);
      assert.equal(r.status, 0);
      assert.equal(calls.check[0].onCase, undefined);
      assert.equal(r.err, '');
      const head = { backend: 'host', device: 'host device', equivalence: rep };
      assert.equal(r.out, JSON.stringify(head, null, 2) + '\n');
      const mj = await cli(['check', 'postconv', '--json', '--mutants']);
      assert.equal(mj.status, 1);
      assert.equal(mj.out, JSON.stringify({ ...head, seq4: SEQ4, userDefects: DEFECTS }, null, 2) + '\n');
    });
  });

  // ---------------------------------------------------------------------------------------------- fused

  describe('check fused', () => {
    const CASES = [{ name: 'H1' }];
    const m = (q: number, k: number, v: number, g: number, beta: number, convState: number) => ({ q, k, v, g, beta, convState });
    const zero = m(0, 0, 0, 0, 0, 0);
    const RESULTS = [
      { case: 'H1', arm: 'chunk', armRan: 'chunk', mutant: null, mismatches: zero, ok: true },
      { case: 'H1', arm: 'vec', armRan: 'chunk', mutant: null, mismatches: m(1, 2, 3, 4, 5, 6), ok: false },
      { case: 'H2', arm: 'vec', armRan: 'vec', mutant: null, mismatches: zero, ok: true },
    ];
    const report = (o: object = {}) => ({ backend: 'host', arms: ['chunk', 'vec'], results: RESULTS, failures: [RESULTS[1]], crossBackend: [], ...o });
    const CHAIN = 'fused vs conv(scalar)→post-conv(tree)';

    const recorded = (rep: object, mutants: object[] = []) => {
      const calls = { matrix: [] as unknown[], check: [] as Opts[], mutants: [] as unknown[][] };
      stubs.set(fusedLib, 'fusedMatrix', (o: unknown) => (calls.matrix.push(o), CASES));
      stubs.set(fusedLib, 'checkFused', async (o: Opts) => (calls.check.push(o), o.onCase?.(1, 2, 'first case'), rep));
      stubs.set(fusedLib, 'runFusedMutants', async (...a: unknown[]) => (calls.mutants.push(a), mutants));
      return calls;
    };

    it('each (arm, case) with the arm names in one column, the arm that ran, cross-backend failures, the per-arm count; exit 1', async () => {
      const host = fakeBackend('host');
      const backends = fakeBackends(stubs, host);
      const cross = [{ case: 'H1', arm: 'vec', mismatches: m(0, 0, 0, 0, 0, 9), ok: false }, { case: 'H2', arm: 'vec', mismatches: zero, ok: true }];
      const calls = recorded(report({ crossBackend: cross }));
      const r = await cli(['check', 'fused']);
      assert.equal(r.status, 1);
      assert.deepEqual(lines(r.out), [
        `ok   chunk H1: ${CHAIN} — q 0, k 0, v 0, g 0, beta 0, convState 0`,
        `FAIL vec   H1 (ran chunk): ${CHAIN} — q 1, k 2, v 3, g 4, beta 5, convState 6`,
        `ok   vec   H2: ${CHAIN} — q 0, k 0, v 0, g 0, beta 0, convState 0`,
        'FAIL cuda vs host (fused vec) H1: q 0, k 0, v 0, g 0, beta 0, convState 9',
        'equivalence: 2 cases × 2 arms = 3 comparisons, 1 mismatching (chunk 0, vec 1); cuda==host on 1/2',
      ]);
      assert.equal(backends.opened.length, 0);
      assert.deepEqual(calls.matrix, [{ quick: false }]);
      assert.deepEqual(Object.keys(calls.check[0]), ['backend', 'hostBackend', 'cases', 'onCase']);
      assert.deepEqual([calls.check[0].backend, calls.check[0].hostBackend, calls.check[0].cases], [host, undefined, CASES]);
      assert.equal(r.err, progress(100));
      assert.equal(calls.mutants.length, 0);
    });

    it('--backend cuda --quick: the quick matrix, a host twin opened and closed; one arm: "arm", exit 0', async () => {
      const backends = fakeBackends(stubs);
      const calls = recorded(report({ arms: ['chunk'], results: [RESULTS[0]], failures: [], crossBackend: [{ case: 'H1', arm: 'chunk', mismatches: zero, ok: true }] }));
      const r = await cli(['check', 'fused', '--backend', 'cuda', '--quick']);
      assert.equal(r.status, 0, r.out);
      assert.deepEqual(calls.matrix, [{ quick: true }]);
      const [cuda, twin] = backends.opened;
      assert.deepEqual(backends.opened.map((b) => b.kind), ['cuda', 'host']);
      assert.deepEqual([calls.check[0].backend, calls.check[0].hostBackend], [cuda, twin]);
      assert.deepEqual([cuda.closes, twin.closes], [0, 1]);
      assert.deepEqual(lines(r.out), [`ok   chunk H1: ${CHAIN} — q 0, k 0, v 0, g 0, beta 0, convState 0`, 'equivalence: 1 cases × 1 arm = 1 comparisons, 0 mismatching (chunk 0); cuda==host on 1/1']);
    });

    it('a cross-backend difference alone fails the run', async () => {
      const backends = fakeBackends(stubs, fakeBackend('cuda'));
      recorded(report({ arms: ['chunk'], results: [RESULTS[0]], failures: [], crossBackend: [{ case: 'H1', arm: 'chunk', mismatches: m(1, 0, 0, 0, 0, 0), ok: false }] }));
      assert.equal((await cli(['check', 'fused'])).status, 1);
      assert.equal(backends.opened[0].closes, 1);
    });

    it('--mutants: every mutant in the arms the check ran, caught or MISSED (padded like the rows); a missed one fails', async () => {
      const host = fakeBackend('host');
      fakeBackends(stubs, host);
      const ok = { results: [RESULTS[0]], failures: [] };
      const mutants = [{ arm: 'chunk', mutant: 'seq-fold', caught: true, detail: 'q differs' }, { arm: 'vec', mutant: 'no-round', caught: false, detail: 'nothing differs' }];
      const calls = recorded(report(ok), mutants);
      const r = await cli(['check', 'fused', '--mutants']);
      assert.equal(r.status, 1);
      assert.deepEqual(calls.mutants, [[host, undefined, ['chunk', 'vec']]]);
      assert.deepEqual(lines(r.out).slice(2), ['caught chunk mutant seq-fold: q differs', 'MISSED vec   mutant no-round: nothing differs']);
      stubs.restore();
      fakeBackends(stubs, host);
      recorded(report(ok), [mutants[0]]);
      assert.equal((await cli(['check', 'fused', '--mutants'])).status, 0);
      // A mismatch and a missed mutant add up.
      stubs.restore();
      fakeBackends(stubs, host);
      recorded(report({ results: [RESULTS[1]], failures: [RESULTS[1]] }), [mutants[1]]);
      assert.equal((await cli(['check', 'fused', '--mutants'])).status, 1);
    });

    it('--json: backend, device and the report (with --mutants the outcomes), no progress, no text', async () => {
      fakeBackends(stubs, fakeBackend('host'));
      const rep = report({ results: [RESULTS[0]], failures: [] });
      const mutants = [{ arm: 'chunk', mutant: 'seq-fold', caught: true, detail: 'd' }];
      const calls = recorded(rep, mutants);
      const r = await cli(['check', 'fused', '--json']);
      assert.equal(r.status, 0);
      assert.equal(calls.check[0].onCase, undefined);
      assert.equal(r.err, '');
      const head = { backend: 'host', device: 'host device', equivalence: rep };
      assert.equal(r.out, JSON.stringify(head, null, 2) + '\n');
      assert.equal((await cli(['check', 'fused', '--json', '--mutants'])).out, JSON.stringify({ ...head, mutants }, null, 2) + '\n');
    });
  });

  // ---------------------------------------------------------------------------------------------- conv, postconv, fused

  describe('check conv, postconv and fused: --define and the host twin (lib/cli/common.ts, withHostTwin)', () => {
    const CHECKS = [
      { op: 'conv', lib: convLib, matrix: 'convMatrix', check: 'checkConv' },
      { op: 'postconv', lib: postconvLib, matrix: 'postconvMatrix', check: 'checkPostconv' },
      { op: 'fused', lib: fusedLib, matrix: 'fusedMatrix', check: 'checkFused' },
    ];
    for (const c of CHECKS) {
      it(`${c.op}: the host twin is closed when the check throws, and the error is the command's`, async () => {
        const backends = fakeBackends(stubs, fakeBackend('cuda'));
        stubs.set(c.lib, c.matrix, () => [{ name: 'A' }]);
        stubs.set(c.lib, c.check, () => {
          throw new Error('the check broke');
        });
        const r = await cli(['check', c.op]);
        assert.deepEqual([r.status, r.out, r.err], [1, '', 'gdnlab: the check broke\n']);
        assert.deepEqual(backends.opened.map((b) => [b.kind, b.closes]), [['host', 1]]);
      });

      it(`${c.op}: --define FILE defines the arms on the backend checked, before the check runs`, async () => {
        const host = fakeBackend('host');
        fakeBackends(stubs, host);
        const defined = fakeDefine(stubs);
        const seen: unknown[] = [];
        stubs.set(c.lib, c.matrix, () => [{ name: 'A' }]);
        stubs.set(c.lib, c.check, (o: Opts) => {
          seen.push(defined.length, o.backend);
          throw new Error('stop here');
        });
        const r = await cli(['check', c.op, '--json', '--define', 'reg16.json']);
        assert.deepEqual([r.status, r.err], [1, 'gdnlab: defined reg16.json\ngdnlab: stop here\n']);
        assert.deepEqual(defined, [{ files: 'reg16.json', backend: host }]);
        assert.deepEqual(seen, [1, host]);
      });
    }
  });

  // ---------------------------------------------------------------------------------------------- race

  describe('check race', () => {
    const recorded = (corrupt: (mapping: string, widen: number) => number = (mp) => (mp === 'exact-racy' ? 51 : 0)) => {
      const calls = { trials: [] as Opts[], cases: [] as number[] };
      stubs.set(raceLib, 'raceCase', (C: number) => (calls.cases.push(C), { name: `race C=${C}` }));
      stubs.set(raceLib, 'raceTrials', (o: Opts & { mapping: string; trials: number; widenCycles: number }) => {
        calls.trials.push(o);
        const corrupted = corrupt(o.mapping, o.widenCycles);
        const wrongRows = corrupted ? { 0: 3, 1: 2, 2: 2, 5: 1, 8: 1, 9: 1, 63: 1 } : {};
        return {
          arm: 'scalar', mapping: o.mapping, backend: 'x', widenCycles: o.widenCycles, trials: o.trials, corruptedRuns: corrupted,
          corruptedFraction: corrupted / o.trials, stateCorruptedRuns: corrupted ? 1 : 0, wrongRows, maxWrongElements: corrupted * 8,
        };
      });
      return calls;
    };

    it('the host: 102 trials per mapping in block orders (forward, reverse, then shuffles), 4096 channels, one round; only exact-racy corrupted: exit 0', async () => {
      const host = fakeBackend('host');
      fakeBackends(stubs, host);
      const calls = recorded();
      const r = await cli(['check', 'race']);
      assert.equal(r.status, 0, r.out);
      assert.deepEqual(calls.cases, [4096, 4096, 4096]);
      assert.deepEqual(calls.trials.map((o) => [o.mapping, o.trials, o.widenCycles, o.backend, o.case]), [
        ['exact', 102, 0, host, { name: 'race C=4096' }], ['sequence', 102, 0, host, { name: 'race C=4096' }], ['exact-racy', 102, 0, host, { name: 'race C=4096' }],
      ]);
      const schedule = calls.trials[0].schedule as (i: number) => unknown;
      assert.deepEqual([schedule(0), schedule(1), schedule(2), schedule(7)], ['forward', 'reverse', { shuffle: 2 }, { shuffle: 7 }]);
      assert.deepEqual(lines(r.out), [
        'exact      widen      0: 0/102 runs corrupted (0.0%), state wrong in 0',
        'sequence   widen      0: 0/102 runs corrupted (0.0%), state wrong in 0',
        'exact-racy widen      0: 51/102 runs corrupted (50.0%), state wrong in 1; rows hit: 0×3, 1×2, 2×2, 5×1, 8×1, 9×1',
      ]);
    });

    it('cuda: 1000 trials, a second round widened by 20000 cycles (--widen N: by N), no block order; --trials and --channels reach the trials', async () => {
      const backends = fakeBackends(stubs);
      const calls = recorded();
      const r = await cli(['check', 'race', '--backend', 'cuda']);
      assert.equal(r.status, 0);
      const cuda = backends.opened[0];
      assert.deepEqual(calls.trials.map((o) => [o.mapping, o.trials, o.widenCycles, o.schedule, o.backend]), [
        ['exact', 1000, 0, undefined, cuda], ['sequence', 1000, 0, undefined, cuda], ['exact-racy', 1000, 0, undefined, cuda],
        ['exact', 1000, 20000, undefined, cuda], ['sequence', 1000, 20000, undefined, cuda], ['exact-racy', 1000, 20000, undefined, cuda],
      ]);
      assert.equal(lines(r.out)[5], 'exact-racy widen  20000: 51/1000 runs corrupted (5.1%), state wrong in 1; rows hit: 0×3, 1×2, 2×2, 5×1, 8×1, 9×1');
      stubs.restore();
      fakeBackends(stubs, fakeBackend('cuda'));
      const given = recorded();
      await cli(['check', 'race', '--widen', '500', '--trials', '7', '--channels', '8']);
      assert.deepEqual(given.trials.map((o) => [o.trials, o.widenCycles]), [[7, 0], [7, 0], [7, 0], [7, 500], [7, 500], [7, 500]]);
      assert.deepEqual(given.cases, [8, 8, 8, 8, 8, 8]);
    });

    it('a correct mapping corrupted even once fails the run', async () => {
      fakeBackends(stubs, fakeBackend('cuda'));
      recorded((mp, w) => (mp === 'sequence' && w > 0 ? 1 : 0));
      const r = await cli(['check', 'race', '--trials', '1']);
      assert.equal(r.status, 1);
      assert.equal(lines(r.out)[4], 'sequence   widen  20000: 1/1 runs corrupted (100.0%), state wrong in 1; rows hit: 0×3, 1×2, 2×2, 5×1, 8×1, 9×1');
    });

    it('--json: backend, device, revision, arithmetic and the results, no text', async () => {
      fakeBackends(stubs, fakeBackend('host'));
      recorded();
      const r = await cli(['check', 'race', '--json', '--trials', '2']);
      assert.equal(r.status, 0);
      const j = JSON.parse(r.out);
      assert.deepEqual(Object.keys(j), ['backend', 'device', 'revision', 'arithmetic', 'results']);
      assert.deepEqual([j.backend, j.device, j.revision, j.arithmetic], ['host', 'host device', revision(), ARITHMETIC_VERSION]);
      assert.deepEqual(j.results.map((x: { mapping: string; trials: number }) => `${x.mapping} ${x.trials}`), ['exact 2', 'sequence 2', 'exact-racy 2']);
      assert.equal(r.out, JSON.stringify(j, null, 2) + '\n');
    });

    it('--widen 0 on cuda: one round only, the value given (it used to be taken for the default 20000)', async () => {
      fakeBackends(stubs, fakeBackend('cuda'));
      const calls = recorded();
      const r = await cli(['check', 'race', '--widen', '0', '--json']);
      assert.equal(r.status, 0);
      assert.deepEqual(calls.trials.map((o) => [o.mapping, o.widenCycles]), [['exact', 0], ['sequence', 0], ['exact-racy', 0]]);
      assert.deepEqual(JSON.parse(r.out).results.map((x: { widenCycles: number }) => x.widenCycles), [0, 0, 0]);
    });

    it('--trials, --widen and --channels: the smallest values accepted, others refused naming the flag', async () => {
      fakeBackends(stubs, fakeBackend('cuda'));
      const calls = recorded();
      assert.equal((await cli(['check', 'race', '--trials', '1', '--widen', '1', '--channels', '1'])).status, 0);
      assert.deepEqual(calls.trials.map((o) => [o.mapping, o.trials, o.widenCycles]), [
        ['exact', 1, 0], ['sequence', 1, 0], ['exact-racy', 1, 0], ['exact', 1, 1], ['sequence', 1, 1], ['exact-racy', 1, 1],
      ]);
      assert.deepEqual(calls.cases, [1, 1, 1, 1, 1, 1]);
      calls.trials.length = 0;
      assert.equal((await cli(['check', 'race', '--widen', '0'])).status, 0);
      const refused: [string, string][] = [
        ['--trials=0', '--trials: expected a positive integer, got 0'],
        ['--trials=1.5', '--trials: expected a positive integer, got 1.5'],
        ['--trials=x', '--trials: expected a positive integer, got x'],
        ['--widen=-1', '--widen: expected a non-negative integer, got -1'],
        ['--widen=0.5', '--widen: expected a non-negative integer, got 0.5'],
        ['--channels=0', '--channels: expected a positive integer, got 0'],
        ['--channels=2.5', '--channels: expected a positive integer, got 2.5'],
      ];
      for (const [flag, message] of refused) assert.equal(usageError(await cli(['check', 'race', flag]), 'check race'), `gdnlab: ${message}`);
      assert.equal(calls.trials.length, 3);
    });
  });

  // ---------------------------------------------------------------------------------------------- sanitize

  describe('check sanitize', () => {
    const recorded = () => {
      const calls: unknown[] = [];
      stubs.set(sanitizeLib, 'sanitizeWorkload', async (b: FakeBackend, log: (l: string) => void) => {
        calls.push(b);
        log('conv C=385 scalar/exact');
        log('postconv tree');
        return 2;
      });
      return calls;
    };

    it('each launch line on stdout, then the count, on the active backend; exit 0', async () => {
      const host = fakeBackend('host');
      fakeBackends(stubs, host);
      const calls = recorded();
      const r = await cli(['check', 'sanitize']);
      assert.equal(r.status, 0);
      assert.deepEqual(calls, [host]);
      assert.deepEqual(lines(r.out), ['conv C=385 scalar/exact', 'postconv tree', 'sanitize workload: 2 launches completed']);
    });

    it('--backend cuda and --define FILE: the workload on the backend given, with the arms defined there first', async () => {
      const backends = fakeBackends(stubs);
      const defined = fakeDefine(stubs);
      const calls = recorded();
      const r = await cli(['check', 'sanitize', '--backend', 'cuda', '--define', 'reg16.json']);
      assert.equal(r.status, 0);
      assert.deepEqual(backends.opened.map((b) => b.kind), ['cuda']);
      assert.deepEqual(calls, backends.opened);
      assert.deepEqual(defined, [{ files: 'reg16.json', backend: backends.opened[0] }]);
      assert.equal(r.err, 'gdnlab: defined reg16.json\n');
    });
  });
});
