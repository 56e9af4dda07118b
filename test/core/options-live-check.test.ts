// Every option proven live (docs/TESTING.md, "Every option proven live"), for the check API (lib/check): each
// option of checkConv, checkPostconv, checkFused, the matrices, the mutant runners and raceTrials, set, gives a
// report that differs from the default's in the way the option promises, so an option that is silently ignored
// fails here. Host backend, with the smallest cases that still show each difference; the CUDA-only options
// (hostBackend) through a host backend that reports kind 'cuda' (./cuda-stand-ins.ts), and widenCycles, which the host
// refuses, by its message.

import { strict as assert } from 'assert';
import { Backend } from '../../lib/backend';
import { ConvCase, allArmMappings, checkConv, convMatrix } from '../../lib/check/conv';
import { mutantCases } from '../../lib/check/mutants';
import { PostconvCase, checkPostconv, postconvMatrix, runSeq4Mutant } from '../../lib/check/postconv';
import { FusedCase, checkFused, checkedFusedArms, fusedMatrix, runFusedMutants } from '../../lib/check/fused';
import { raceCase, raceTrials } from '../../lib/check/race';
import { arms, referenceArm } from '../../lib/arms/table';
import { openBackend } from '../backends';
import { reportingCuda } from './cuda-stand-ins';

const host = (): Backend => openBackend('host');
const names = (rows: { case: string }[]) => [...new Set(rows.map((r) => r.case))];

// One small conv case: partial channel tiles (C = 40), a sequence shorter than K - 1, state on two of three.
const convCase: ConvCase = {
  name: 'tiny C=40 K=4 f32->f32', C: 40, K: 4, xDtype: 'f32', outDtype: 'f32', lengths: [9, 2, 20],
  initialState: [true, false, true], maskDtype: 'i32', bias: true, xRowStride: 40, seed: 11,
};

describe('check API: every option changes what the check does or reports', function () {
  this.timeout(60000);

  describe('checkConv', () => {
    it('cases and armMappings choose the rows; without them every correct arm/mapping runs (on the full matrix)', () => {
      const picked = checkConv({ backend: host(), cases: [convCase], armMappings: [{ arm: 'reg', mapping: 'exact' }] });
      const every = checkConv({ backend: host(), cases: [convCase] });
      const ref = referenceArm('conv').name;
      const rows = (r: typeof picked) => r.results.filter((x) => x.maxAbsError === undefined).map((x) => `${x.arm}/${x.mapping}`);
      assert.deepEqual(rows(picked), ['reg/exact']);
      assert.deepEqual(rows(every), allArmMappings().map((a) => `${a.arm}/${a.mapping}`));
      assert.ok(rows(every).length > 1);
      // Both carry the reference arm's row against float64.
      for (const r of [picked, every]) assert.equal(r.results.filter((x) => x.arm === ref && x.maxAbsError !== undefined).length, 1);
      // The cases asked for, not the default matrix (convMatrix(): its names, none of them this case's).
      assert.deepEqual(names(picked.results), [convCase.name]);
      assert.ok(!convMatrix().some((c) => c.name === convCase.name) && convMatrix().length > 1);
    });

    it('schedule: reverse block order corrupts the racy mapping that the default forward order leaves correct', () => {
      const racy = [{ arm: 'reg', mapping: 'exact-racy' as const }];
      const forward = checkConv({ backend: host(), cases: mutantCases(), armMappings: racy });
      const reverse = checkConv({ backend: host(), cases: mutantCases(), armMappings: racy, schedule: 'reverse' });
      assert.equal(forward.failures.length, 0);
      assert.ok(reverse.failures.length > 0, 'reverse order shows the #305 race');
    });

    it('mutant: a planted mutant fails comparisons the default (none) passes', () => {
      const rm = [{ arm: 'reg', mapping: 'exact' as const }];
      const clean = checkConv({ backend: host(), cases: mutantCases(), armMappings: rm });
      const planted = checkConv({ backend: host(), cases: mutantCases(), armMappings: rm, mutant: 'taps-reversed' });
      assert.equal(clean.failures.length, 0);
      assert.ok(planted.failures.length > 0);
      assert.ok(planted.failures[0].firstMismatch, 'a failing row locates its first mismatch');
    });

    it('onCase: called once per case with (done, total, name)', () => {
      const seen: [number, number, string][] = [];
      const two = [convCase, { ...convCase, name: 'tiny 2', seed: 12 }];
      checkConv({ backend: host(), cases: two, armMappings: [{ arm: 'reg', mapping: 'exact' }], onCase: (d, n, c) => seen.push([d, n, c]) });
      assert.deepEqual(seen, [[1, 2, 'tiny C=40 K=4 f32->f32'], [2, 2, 'tiny 2']]);
    });

    it('hostBackend: on a CUDA backend each case is also compared with the host; without it, or on the host, not', () => {
      const am = [{ arm: 'reg', mapping: 'exact' as const }];
      const cuda = reportingCuda(host());
      const crossed = checkConv({ backend: cuda, hostBackend: host(), cases: [convCase], armMappings: am });
      const alone = checkConv({ backend: cuda, cases: [convCase], armMappings: am });
      const onHost = checkConv({ backend: host(), hostBackend: host(), cases: [convCase], armMappings: am });
      assert.deepEqual(crossed.crossBackend.map((x) => [x.case, x.ok]), [[convCase.name, true]]);
      assert.deepEqual(alone.crossBackend, []);
      assert.deepEqual(onHost.crossBackend, [], 'CUDA only: the host backend is not compared with itself');
    });

    it('convMatrix quick: fewer cases, without the widest C and the long sequences', () => {
      const quick = convMatrix({ quick: true });
      const full = convMatrix();
      assert.ok(quick.length < full.length, `${quick.length} vs ${full.length}`);
      assert.ok(full.some((c) => c.C === 8192) && !quick.some((c) => c.C === 8192));
      assert.ok(full.some((c) => /long sequences/.test(c.name)) && !quick.some((c) => /long sequences/.test(c.name)));
    });
  });

  // One small post-conv case (Dk = Dv = 128, the arms' own head size) in f32, whose seq4 differs from the tree.
  const pcCase: PostconvCase = {
    name: 'tiny T=5 Hk=1 Hv=2 f32', T: 5, Hk: 1, Hv: 2, Dk: 128, Dv: 128, convDtype: 'f32', gateDtype: 'f32', qkvDtype: 'f32',
    packedWidth: 7, bOffset: 1, aOffset: 4, seed: 21,
  };

  describe('checkPostconv', () => {
    it('arms choose the rows; the default is every correct arm', async () => {
      const correct = arms('postconv').filter((a) => !a.reference && !a.mutant).map((a) => a.name);
      const one = await checkPostconv({ backend: host(), cases: [pcCase], arms: [correct[0]] });
      const every = await checkPostconv({ backend: host(), cases: [pcCase] });
      const armsOf = (r: typeof one) => r.results.filter((x) => x.arm !== 'tree').map((x) => x.arm);
      assert.deepEqual(armsOf(one), [correct[0]]);
      assert.deepEqual(armsOf(every), correct);
      assert.ok(correct.length > 1);
      assert.deepEqual(names(one.results), [pcCase.name]);
      assert.ok(!postconvMatrix().some((c) => c.name === pcCase.name));
    });

    it('reference: false drops the tree row against float64 that the default adds', async () => {
      const withRef = await checkPostconv({ backend: host(), cases: [pcCase], arms: ['seq4'] });
      const without = await checkPostconv({ backend: host(), cases: [pcCase], arms: ['seq4'], reference: false });
      const tree = (r: typeof withRef) => r.results.filter((x) => x.arm === 'tree');
      assert.equal(tree(withRef).length, 1);
      assert.ok(tree(withRef)[0].maxAbsError && tree(withRef)[0].referenceViolations);
      assert.equal(tree(without).length, 0);
    });

    it('onCase and hostBackend (CUDA only: each case\'s tree also compared with the host\'s)', async () => {
      const seen: string[] = [];
      const arm = arms('postconv').find((a) => !a.reference && !a.mutant)!.name;
      const crossed = await checkPostconv({ backend: reportingCuda(host()), hostBackend: host(), cases: [pcCase], arms: [arm], onCase: (d, n, c) => seen.push(`${d}/${n} ${c}`) });
      const plain = await checkPostconv({ backend: host(), hostBackend: host(), cases: [pcCase], arms: [arm] });
      assert.deepEqual(seen, [`1/1 ${pcCase.name}`]);
      assert.deepEqual(crossed.crossBackend.map((x) => [x.case, x.ok]), [[pcCase.name, true]]);
      assert.deepEqual(plain.crossBackend, []);
    });

    it('postconvMatrix quick: fewer cases, without T = 2048', () => {
      const quick = postconvMatrix({ quick: true });
      const full = postconvMatrix();
      assert.ok(quick.length < full.length);
      assert.ok(full.some((c) => c.T === 2048) && !quick.some((c) => c.T === 2048));
    });

    it('runSeq4Mutant cases: the counts are over the cases given (default: the quick matrix\'s Dk = Dv = 128 cases)', async () => {
      const given = await runSeq4Mutant(host(), [pcCase, { ...pcCase, name: 'tiny bf16', qkvDtype: 'bf16', seed: 22 }]);
      assert.deepEqual([given.f32Cases, given.bf16Cases], [1, 1]);
      assert.ok(given.caught, 'seq4 differs from the tree in the f32 case');
      // The default's counts, without running it: the quick matrix's cases at the arms' head size.
      const dflt = postconvMatrix({ quick: true }).filter((c) => c.Dk === 128 && c.Dv === 128);
      assert.ok(dflt.length > 2);
    });
  });

  // One small fused case (Hk = 1, Hv = 2): f32 q/k (seq-fold shows) from a bf16 conv (no-round shows).
  const fusedCase: FusedCase = {
    name: 'tiny fused', Hk: 1, Hv: 2, K: 4, lengths: [5, 0, 9], initialState: [true, false, true], maskDtype: 'i8', bias: true,
    xDtype: 'bf16', convDtype: 'bf16', qkvDtype: 'f32', gateDtype: 'bf16', xRowStride: 512, packedWidth: 9, bOffset: 1, aOffset: 5, seed: 31,
  };

  describe('checkFused', () => {
    it('arms choose the arms compared with the chain; the default is every checked arm', async () => {
      const all = checkedFusedArms();
      const one = await checkFused({ backend: host(), cases: [fusedCase], arms: [all[all.length - 1]] });
      const every = await checkFused({ backend: host(), cases: [fusedCase] });
      assert.deepEqual(one.arms, [all[all.length - 1]]);
      assert.deepEqual(one.results.map((r) => r.arm), [all[all.length - 1]]);
      assert.deepEqual(every.arms, all);
      assert.ok(all.length > 1);
      assert.deepEqual(names(every.results), [fusedCase.name]);
      assert.ok(!fusedMatrix().some((c) => c.name === fusedCase.name));
    });

    it('mutant: each planted mutant differs from the chain where the default (none) does not', async () => {
      const arm = [checkedFusedArms()[0]];
      const clean = await checkFused({ backend: host(), cases: [fusedCase], arms: arm });
      assert.equal(clean.failures.length, 0);
      assert.equal(clean.results[0].mutant, null);
      for (const mutant of ['seq-fold', 'no-round'] as const) {
        const planted = await checkFused({ backend: host(), cases: [fusedCase], arms: arm, mutant });
        assert.equal(planted.failures.length, 1, mutant);
        assert.equal(planted.results[0].mutant, mutant);
      }
    });

    it('onCase and hostBackend (CUDA only: each arm also compared with the same arm on the host)', async () => {
      const seen: string[] = [];
      const arm = [checkedFusedArms()[0]];
      const crossed = await checkFused({ backend: reportingCuda(host()), hostBackend: host(), cases: [fusedCase], arms: arm, onCase: (d, n, c) => seen.push(`${d}/${n} ${c}`) });
      const plain = await checkFused({ backend: host(), hostBackend: host(), cases: [fusedCase], arms: arm });
      assert.deepEqual(seen, [`1/1 ${fusedCase.name}`]);
      assert.deepEqual(crossed.crossBackend.map((x) => [x.case, x.arm, x.ok]), [[fusedCase.name, arm[0], true]]);
      assert.deepEqual(plain.crossBackend, []);
    });

    it('fusedMatrix quick: fewer single-sequence lengths and shorter model-layout cases', () => {
      const quick = fusedMatrix({ quick: true });
      const full = fusedMatrix();
      assert.ok(quick.length < full.length);
      assert.ok(full.some((c) => /T=200/.test(c.name)) && !quick.some((c) => /T=200/.test(c.name)));
    });

    it('runFusedMutants cases and arms: outcomes for the arms given, counted over the cases given', async () => {
      const all = checkedFusedArms();
      const picked = await runFusedMutants(host(), [fusedCase], [all[0]]);
      assert.deepEqual(picked.map((o) => `${o.arm} ${o.mutant}`), [`${all[0]} seq-fold`, `${all[0]} no-round`]);
      for (const o of picked) assert.deepEqual([o.cases, o.caught], [1, true], `${o.mutant}: ${o.detail}`);
      // The defaults: every checked arm (more than one), over the quick matrix (more than one relevant case).
      assert.ok(all.length > 1);
      assert.ok(fusedMatrix({ quick: true }).filter((c) => c.qkvDtype === 'f32').length > 1);
    });
  });

  describe('raceTrials', () => {
    // A small race case: the default raceCase() has C = 4096.
    const small = raceCase(64);

    it('trials, schedule and onTrial: reverse order corrupts the racy mapping, the default forward order does not', () => {
      const ticks: [number, number][] = [];
      const fwd = raceTrials({ backend: host(), mapping: 'exact-racy', trials: 2, case: small });
      const rev = raceTrials({ backend: host(), mapping: 'exact-racy', trials: 3, case: small, schedule: () => 'reverse', onTrial: (d, c) => ticks.push([d, c]) });
      assert.equal(fwd.trials, 2);
      assert.equal(fwd.corruptedRuns, 0);
      assert.equal(rev.trials, 3);
      assert.equal(rev.corruptedRuns, 3);
      assert.deepEqual(ticks, [[1, 1], [2, 2], [3, 3]]);
    });

    it('arm: the arm asked for runs; scalar owns whole sequences and refuses the racy mapping the default chunk arm (reg) races on', () => {
      const reg = raceTrials({ backend: host(), mapping: 'exact-racy', trials: 1, case: small, schedule: () => 'reverse' });
      assert.equal(reg.arm, 'reg');
      assert.equal(reg.corruptedRuns, 1);
      assert.throws(() => raceTrials({ backend: host(), arm: 'scalar', mapping: 'exact-racy', trials: 1, case: small, schedule: () => 'reverse' }), /arm 'scalar' runs 'sequence', not 'exact-racy'/);
      assert.equal(raceTrials({ backend: host(), arm: 'scalar', mapping: 'sequence', trials: 1, case: small, schedule: () => 'reverse' }).arm, 'scalar');
    });

    it('case: the corrupted elements scale with the case\'s channels (default raceCase(): C = 4096)', () => {
      const run = (c?: ReturnType<typeof raceCase>) => raceTrials({ backend: host(), mapping: 'exact-racy', trials: 1, schedule: () => 'reverse', ...(c ? { case: c } : {}) });
      const [c64, c128, dflt] = [run(small), run(raceCase(128)), run()];
      // Every channel of a corrupted row is wrong but for the odd value that comes out equal by chance.
      const ratio = (a: { maxWrongElements: number }) => a.maxWrongElements / c64.maxWrongElements;
      assert.ok(c64.maxWrongElements > 0);
      assert.ok(ratio(c128) > 1.9 && ratio(c128) < 2.1, `C = 128: ${ratio(c128)} × C = 64's`);
      assert.ok(ratio(dflt) > 60 && ratio(dflt) < 68, `the default C = 4096: ${ratio(dflt)} × C = 64's`);
    });

    it('widenCycles: CUDA only; the host refuses it by name where the default (0) runs', () => {
      assert.equal(raceTrials({ backend: host(), mapping: 'exact', trials: 1, case: small }).corruptedRuns, 0);
      assert.throws(() => raceTrials({ backend: host(), mapping: 'exact', trials: 1, case: small, widenCycles: 100 }), /widenCycles: runs on the CUDA backend only/);
    });
  });
});
