// The checks behind `gdnlab check` (lib/check/*), in-process and on small cases, so that their
// verdicts are tested directly (and mutation testing can see them; test/cli/planted.test.ts does
// the same through the CLI): every ok is computed, a planted wrong reference or a shared defect
// turns it false, a racy mapping is counted as corrupted and a correct one is not.

import { strict as assert } from 'assert';
import { Tensor } from '../../lib/tensor';
import * as convOps from '../../lib/ops/conv';
import * as postconvOps from '../../lib/ops/postconv';
import * as postconvRef from '../../lib/reference/postconv';
import * as convRef from '../../lib/reference/conv';
import { checkConv, convMatrix, allArmMappings, ConvCase, edgeValues } from '../../lib/check/conv';
import { checkPostconv, postconvMatrix, postconvErrorBound, differingRows, OUTPUTS } from '../../lib/check/postconv';
import { raceTrials, raceCase } from '../../lib/check/race';
import { openBackend } from '../backends';
import { arms as armTable } from '../../lib/arms/table';

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

/** Replaces a module export for the duration of body (the modules are CommonJS: calls go through exports). */
async function withPatched<M extends object, K extends keyof M>(mod: M, key: K, value: M[K], body: () => Promise<void> | void): Promise<void> {
  const saved = mod[key];
  (mod as Mutable<M>)[key] = value;
  try {
    await body();
  } finally {
    (mod as Mutable<M>)[key] = saved;
  }
}

const host = () => openBackend('host');
const smallConv: ConvCase[] = [
  { name: 'small f32->bf16', C: 24, K: 4, xDtype: 'f32', outDtype: 'bf16', lengths: [3, 0, 11], initialState: [true, false, true], maskDtype: 'i8', bias: true, xRowStride: 24, seed: 11 },
  { name: 'small bf16->f32 padded', C: 20, K: 3, xDtype: 'bf16', outDtype: 'f32', lengths: [9, 1], initialState: null, maskDtype: 'i32', bias: false, xRowStride: 23, seed: 12 },
];

describe('lib/check: verdicts are computed', function () {
  this.timeout(60000);

  it('checkConv: every arm/mapping row and the scalar reference row ok on correct kernels', () => {
    const r = checkConv({ backend: host(), cases: smallConv });
    assert.equal(r.results.length, smallConv.length * (1 + allArmMappings().length));
    assert.deepEqual(r.failures, []);
    const scalar = r.results.filter((x) => x.arm === 'scalar');
    assert.equal(scalar.length, 2);
    for (const s of scalar) {
      assert.equal(s.withinTolerance, true);
      assert.equal(s.roundingViolations, 0);
      assert.ok(s.maxAbsError! > 0 && s.maxAbsError! < 0.02);
    }
    assert.deepEqual(r.crossBackend, []);
  });

  it('checkConv: a float64 reference 1% off fails the scalar row (and only it)', async () => {
    const ref = convRef.convReference;
    await withPatched(convRef, 'convReference', (i) => {
      const r = ref(i);
      return { ...r, out: r.out.map((v) => v * 1.01) };
    }, () => {
      const r = checkConv({ backend: host(), cases: smallConv });
      assert.deepEqual(r.failures.map((f) => f.arm), ['scalar', 'scalar']);
      // The f32 case leaves its tolerance; the bf16 case stays inside the wide bf16 tolerance but
      // is no longer rne(reference): the rounding check fails it.
      const [bf, f] = r.failures;
      assert.equal(f.withinTolerance, false);
      assert.ok(bf.withinTolerance === true && bf.roundingViolations! > 0);
    });
  });

  it('checkConv: a wrong final state in the reference fails the scalar row', async () => {
    const ref = convRef.convReference;
    await withPatched(convRef, 'convReference', (i) => {
      const r = ref(i);
      const st = Float64Array.from(r.convState);
      st[st.length - 1] += 1;
      return { ...r, convState: st };
    }, () => {
      const r = checkConv({ backend: host(), cases: smallConv.slice(0, 1) });
      assert.equal(r.failures.length, 1);
      assert.equal(r.failures[0].stateMismatches, 1);
    });
  });

  it('checkConv: every arm truncating its bf16 store fails the rounding check of the bf16 case only', async () => {
    const fwd = convOps.forwardSync;
    await withPatched(convOps, 'forwardSync', (inputs, opts = {}) => {
      if (opts.outDtype !== 'bf16') return fwd(inputs, opts);
      const r = fwd(inputs, { ...opts, outDtype: 'f32' });
      const u32 = new Uint32Array(r.out.toFloat32().buffer);
      const out = Tensor.fromBytes(new Uint8Array(Uint16Array.from(u32, (u) => u >>> 16).buffer), r.out.shape, 'bf16');
      return { ...r, out };
    }, () => {
      const r = checkConv({ backend: host(), cases: smallConv });
      assert.equal(r.failures.length, 1);
      assert.equal(r.failures[0].case, 'small f32->bf16');
      assert.ok(r.failures[0].roundingViolations! > 10);
      assert.equal(r.failures[0].withinTolerance, true, 'truncation hides inside the bf16 tolerance');
    });
  });

  it('checkConv: a mutant every arm shares is invisible to arm-vs-arm rows; a mutant in the arms is caught', () => {
    const r = checkConv({ backend: host(), cases: smallConv.slice(0, 1), mutant: 'taps-reversed' });
    assert.ok(r.failures.length > 0 && r.failures.every((f) => f.arm !== 'scalar' && f.outMismatches > 0));
  });

  const pcCases = postconvMatrix({ quick: true }).filter((c) => c.T === 17 && c.Hk === 4).slice(0, 4);

  it('checkPostconv: tree rows are compared with float64 and ok; token-tile rows match tree', async () => {
    const r = await checkPostconv({ backend: host(), cases: pcCases });
    assert.deepEqual(r.failures, []);
    const tree = r.results.filter((x) => x.arm === 'tree');
    assert.equal(tree.length, pcCases.length);
    for (const t of tree) {
      assert.equal(t.ok, true);
      for (const o of OUTPUTS) assert.equal(t.referenceViolations![o], 0);
      assert.ok(t.maxAbsError!.beta > 0, 'the comparison was made');
    }
    assert.equal(r.results.filter((x) => x.arm === 'token-tile').length, pcCases.length);
  });

  it('checkPostconv: a broken beta every arm shares fails every tree row on beta alone', async () => {
    const fwd = postconvOps.forward;
    await withPatched(postconvOps, 'forward', async (inputs, opts) => {
      const r = await fwd(inputs, opts);
      return { ...r, beta: Tensor.from(r.beta.toFloat32().map((v) => 1 - v), r.beta.shape, 'f32') };
    }, async () => {
      const r = await checkPostconv({ backend: host(), cases: pcCases });
      assert.equal(r.failures.length, pcCases.length);
      for (const f of r.failures) {
        assert.equal(f.arm, 'tree');
        assert.ok(f.referenceViolations!.beta > 0);
        assert.deepEqual(OUTPUTS.filter((o) => f.referenceViolations![o] > 0), ['beta']);
      }
    });
  });

  it('checkPostconv: a float64 reference off by one bound in q fails; without the reference there is no tree row', async () => {
    const ref = postconvRef.postconvReference;
    await withPatched(postconvRef, 'postconvReference', (i, s) => {
      const r = ref(i, s);
      const q = Float64Array.from(r.q);
      q[0] += 2 * postconvErrorBound('q', pcCases[0]) + 1e-3;
      return { ...r, q };
    }, async () => {
      const r = await checkPostconv({ backend: host(), cases: pcCases.slice(0, 1) });
      assert.equal(r.failures.length, 1);
      assert.equal(r.failures[0].referenceViolations!.q, 1);
    });
    const noRef = await checkPostconv({ backend: host(), cases: pcCases.slice(0, 1), reference: false });
    // Every built-in candidate arm, and no tree row (a user arm another file defined may add rows of its own).
    const builtIn = new Set(armTable('postconv').filter((a) => !a.user).map((a) => a.name));
    assert.deepEqual(noRef.results.map((x) => x.arm).filter((a) => builtIn.has(a)), ['token-tile', 'vec-tile']);
  });

  it('postconvErrorBound: exact copies for v unless rounded, f32 ulps or half a bf16 ulp for q and k', () => {
    assert.equal(postconvErrorBound('v', { convDtype: 'bf16', qkvDtype: 'bf16' }), 0);
    assert.equal(postconvErrorBound('v', { convDtype: 'f32', qkvDtype: 'f32' }), 0);
    assert.equal(postconvErrorBound('v', { convDtype: 'f32', qkvDtype: 'bf16' }), 1.6e-2);
    assert.equal(postconvErrorBound('q', { convDtype: 'f32', qkvDtype: 'f32' }), 1e-6);
    assert.equal(postconvErrorBound('k', { convDtype: 'f32', qkvDtype: 'bf16' }), 4e-3);
    assert.equal(postconvErrorBound('g', { convDtype: 'f32', qkvDtype: 'bf16' }), 1e-4);
    assert.equal(postconvErrorBound('beta', { convDtype: 'f32', qkvDtype: 'bf16' }), 1e-6);
  });

  it('differingRows counts rows, not elements', () => {
    const a = Tensor.from(new Array(12).fill(1), [3, 4], 'f32');
    const b = Tensor.from([1, 1, 1, 1, 2, 2, 1, 1, 1, 1, 1, 3], [3, 4], 'f32');
    assert.equal(differingRows(a, b), 2);
    assert.equal(differingRows(a, a.clone()), 0);
  });

  it('raceTrials: exact-racy under reverse is corrupted in rows 0..K-2, exact never, state never', () => {
    const c = raceCase(256);
    const schedule = (i: number) => (i === 0 ? 'forward' as const : 'reverse' as const);
    const racy = raceTrials({ backend: host(), mapping: 'exact-racy', trials: 3, schedule, case: c });
    assert.equal(racy.trials, 3);
    assert.equal(racy.corruptedRuns, 2, 'forward order is clean, both reverse trials corrupted');
    assert.ok(Math.abs(racy.corruptedFraction - 2 / 3) < 1e-12);
    assert.equal(racy.stateCorruptedRuns, 0);
    assert.ok(racy.maxWrongElements > 0);
    const rows = Object.keys(racy.wrongRows);
    assert.ok(rows.length > 0 && rows.every((k) => /row [0-2]$/.test(k)), rows.join(', '));
    assert.ok(Object.values(racy.wrongRows).every((n) => n === 2));
    const exact = raceTrials({ backend: host(), mapping: 'exact', trials: 3, schedule, case: c });
    assert.deepEqual([exact.corruptedRuns, exact.stateCorruptedRuns, exact.maxWrongElements], [0, 0, 0]);
    assert.deepEqual(exact.wrongRows, {});
  });

  it('convMatrix covers every dtype pair, K = 2..5, state/mask/bias factors, padded rows, edge pre-activations', () => {
    const m = convMatrix({ quick: true });
    assert.equal(m.length, 3 * 4 * 4 + 2);
    const edge = m.filter((c) => c.values === 'edge');
    assert.deepEqual(edge.map((c) => `${c.xDtype}->${c.outDtype}`), ['f32->f32', 'bf16->f32']);
    // Their inputs reach the band where SiLU's fast path is not valid: some K-row runs give 80 < |acc| <= 88.
    const vals = edgeValues(4);
    assert.ok(vals.some((v) => Math.abs(4 * v) > 80 && Math.abs(4 * v) <= 88) && vals.some((v) => Math.abs(4 * v) < 80));
    assert.equal(new Set(m.map((c) => `${c.xDtype}->${c.outDtype}`)).size, 4);
    assert.deepEqual([...new Set(m.map((c) => c.K))], [2, 3, 4, 5]);
    assert.ok(m.some((c) => c.xRowStride > c.C));
    for (const f of [(c: ConvCase) => c.initialState !== null, (c: ConvCase) => c.maskDtype === 'i32', (c: ConvCase) => c.bias]) {
      assert.ok(m.some(f) && m.some((c) => !f(c)));
    }
    // The full matrix adds two batches of long sequences (average >= 128 tokens, C a multiple of 8), where
    // `stream` runs its declared 64-token programs; every other varlen mix averages fewer (docs/SPEC.md §3.4).
    const full = convMatrix();
    const long = full.filter((c) => c.C % 8 === 0 && c.lengths.reduce((a, b) => a + b, 0) >= 128 * c.lengths.length);
    assert.equal(full.length, 4 * 4 * 4 + 2 + 2);
    assert.deepEqual(long.map((c) => `${c.xDtype}->${c.outDtype}`), ['bf16->bf16', 'f32->f32']);
    assert.ok(long.every((c) => c.lengths.some((l) => l > 2 * 64)), 'several programs in a sequence');
  });
});

// The workload bench/gpu-session.sh runs under compute-sanitizer: on the host it must reach every arm it
// claims to launch (a registry arm left out would never be sanitized on the GPU).
describe('check sanitize: the workload launches every arm it names', function () {
  this.timeout(60000);
  it('every built-in post-conv arm at Dk = 128 in bf16 and f32 (running itself) and at Dk = 64 (falling back to tree)', async () => {
    const { sanitizeWorkload } = await import('../../lib/check/sanitize');
    const lines: string[] = [];
    const n = await sanitizeWorkload(host(), (l) => lines.push(l));
    assert.equal(n, lines.length, 'one log line per launch');
    for (const arm of armTable('postconv').filter((a) => !a.user).map((a) => a.name)) {
      for (const dt of ['bf16', 'f32']) assert.ok(lines.includes(`postconv ${arm} Dk=128 ${dt} (ran ${arm})`), `${arm} ${dt} ran itself`);
      assert.ok(lines.includes(`postconv ${arm} Dk=64 bf16 (ran tree)`), `${arm} at Dk = 64`);
    }
  });
});
