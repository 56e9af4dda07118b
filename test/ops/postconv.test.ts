import { strict as assert } from 'assert';
import { Tensor } from '../../lib/tensor';
import * as postconv from '../../lib/ops/postconv';
import { checkPostconv, postconvErrorBound, postconvMatrix, makePostconvInputs, runSeq4Mutant, OUTPUTS, PostconvCase } from '../../lib/check/postconv';
import { auditExactness } from '../../lib/analysis/audit';
import { countBitMismatches } from '../../lib/analysis/bits';
import { arms } from '../../lib/arms/table';
import { forEachBackend, noteCrossBackend, openBackend } from '../backends';

forEachBackend((backend, kind) => {
  describe('post-conv: every built-in arm == tree on q, k, v, g and beta, bit for bit', function () {
    this.timeout(300000);
    // The quick matrix (T up to 128) in full, and T = 2048 once per head layout.
    const cases = [
      ...postconvMatrix({ quick: true }),
      ...postconvMatrix().filter((c) => c.T === 2048 && c.convDtype === 'bf16' && c.gateDtype === 'bf16' && c.qkvDtype === 'bf16'),
    ];
    // Every built-in arm that must equal the tree (all of them need Dk = Dv = 128 and fall back otherwise).
    const candidateArms = arms('postconv').filter((a) => !a.reference && !a.mutant && !a.user).map((a) => a.name);
    it('the candidates are the registry\'s', () => assert.deepEqual(candidateArms, ['token-tile', 'vec-tile']));
    for (const c of cases) {
      it(c.name, async () => {
        const report = await checkPostconv({ backend: backend(), hostBackend: kind === 'cuda' ? openBackend('host') : undefined, cases: [c] });
        const fallback = c.Dk !== 128 || c.Dv !== 128;
        for (const arm of candidateArms) {
          const r = report.results.find((x) => x.arm === arm);
          assert.ok(r, `${arm} ran in the check`);
          assert.deepEqual(r.mismatches, { q: 0, k: 0, v: 0, g: 0, beta: 0 }, arm);
          assert.equal(r.armRan, fallback ? 'tree' : arm);
        }
        assert.deepEqual(report.failures, []);
        const tree = report.results.find((r) => r.arm === 'tree')!;
        assert.equal(tree.ok, true, 'the tree row is ok only when every output is within its bound of the float64 reference');
        for (const o of OUTPUTS) {
          const e = tree.maxAbsError![o];
          assert.ok(e <= postconvErrorBound(o, c), `${o}: max |error| vs float64 ${e} above ${postconvErrorBound(o, c)}`);
          assert.equal(tree.referenceViolations![o], 0);
        }
        assert.equal(report.crossBackend.length, kind === 'cuda' ? 1 : 0, 'one cuda-vs-host comparison per case on CUDA, none on the host');
        for (const x of report.crossBackend) assert.ok(x.ok, `cuda != host: ${JSON.stringify(x.mismatches)}`);
      });
    }
  });

  noteCrossBackend('post-conv equivalence');

  describe('post-conv: the seq4 mutant and the bf16 trap', function () {
    this.timeout(300000);
    it('the f32 half of the suite catches seq4', async () => {
      const m = await runSeq4Mutant(backend());
      assert.ok(m.caught);
      assert.ok(m.caughtInF32 >= m.f32Cases / 2, `seq4 differs in only ${m.caughtInF32} of ${m.f32Cases} f32-output cases`);
      assert.ok(m.caughtInBf16 < m.caughtInF32, 'bf16 outputs should hide most of seq4');
    });

    it('a bf16-only check would not catch seq4 (the audit says so), an f32 check does', async () => {
      const c: PostconvCase = { name: 'trap', T: 128, Hk: 4, Hv: 8, Dk: 128, Dv: 128, convDtype: 'f32', gateDtype: 'bf16', qkvDtype: 'f32', packedWidth: 16, bOffset: 0, aOffset: 8, seed: 4 };
      const inputs = makePostconvInputs(c);
      const run = (arm: postconv.PostconvArm, qkvDtype: 'f32' | 'bf16') => postconv.forward(inputs, { ...c, arm, qkvDtype, backend: backend() });
      const [tree32, seq32, tree16, seq16] = await Promise.all([run('tree', 'f32'), run('seq4', 'f32'), run('tree', 'bf16'), run('seq4', 'bf16')]);
      assert.equal(seq16.mutant, true);
      const f32Diff = countBitMismatches(seq32.q, tree32.q) + countBitMismatches(seq32.k, tree32.k);
      const bf16Diff = countBitMismatches(seq16.q, tree16.q) + countBitMismatches(seq16.k, tree16.k);
      assert.ok(f32Diff > 1000, `seq4 changes ${f32Diff} f32 elements`);
      assert.equal(bf16Diff, 0, 'stored as bf16, seq4 is indistinguishable from tree at this shape');
      const audit = auditExactness({ stored: [seq16.q, tree16.q], sources: [seq32.q, tree32.q] });
      assert.equal(audit.verdict, 'hidden');
      for (const r of [tree32, seq32, tree16, seq16]) r.release();
    });
  });

  describe('post-conv: bad arguments', () => {
    const c: PostconvCase = { name: 'bad', T: 4, Hk: 2, Hv: 4, Dk: 16, Dv: 16, convDtype: 'f32', gateDtype: 'f32', qkvDtype: 'f32', packedWidth: 8, bOffset: 0, aOffset: 4, seed: 1 };
    const inputs = () => makePostconvInputs(c);
    it('names the argument and what was expected', async () => {
      await assert.rejects(postconv.forward(inputs(), { ...c, Hv: 3, backend: backend() }), /Hv: expected a multiple of Hk = 2/);
      await assert.rejects(postconv.forward({ ...inputs(), convOut: Tensor.zeros([4, 10]) }, { ...c, backend: backend() }), /convOut: expected shape \[T, C=128\]/);
      await assert.rejects(postconv.forward({ ...inputs(), a: Tensor.zeros([4, 4], 'bf16') }, { ...c, backend: backend() }), /b: expected dtype bf16 \(the dtype of a\), got f32/);
      await assert.rejects(postconv.forward({ ...inputs(), ALog: Tensor.zeros([4], 'bf16') }, { ...c, backend: backend() }), /ALog: expected dtype f32, got bf16/);
      await assert.rejects(postconv.forward(inputs(), { ...c, arm: 'fast' as never, backend: backend() }), /arm: expected one of 'tree', 'token-tile', 'seq4'/);
    });
  });
});
