// timeArms from a cell checks bits before time (as `gdnlab bench` does at each shape): every case prepared by
// an op's prepareTimed is run once beside the op's reference at its inputs, and its bits are reported; and an
// arm defined in a cell that never ends stops within its own time limit, not a minute later.

import { strict as assert } from 'assert';
import { Tensor } from '../../lib/tensor';
import * as conv from '../../lib/ops/conv';
import * as postconv from '../../lib/ops/postconv';
import { copyOp } from '../../lib/ops/copy';
import { undefineArm } from '../../lib/arms/define';
import { TimingOptions, timeArms as timeArmsWithoutChecks } from '../../lib/analysis/timing';
import { timeArms } from '../../lib/check/timed';
import { REG16_SOURCE, REG16_RACY_SOURCE } from '../arms/sources';
import { forEachBackend } from '../backends';

const QUICK: TimingOptions = { warmupMs: 5, roundsPerBatch: 2, minSamples: 2, minTimeMs: 0, noiseTarget: 1, maxTimeMs: 50, progress: false };

forEachBackend((backend, kind) => {
  describe('timeArms: bits before time', function () {
    this.timeout(300000);
    const C = 256;
    const inputs = () => ({
      x: Tensor.random([64, C], 'bf16', { seed: 1 }),
      weight: Tensor.random([C, 4], 'bf16', { seed: 2 }),
      queryStartLoc: [0, 9, 64],
      hasInitialState: [true, true],
      convState: Tensor.random([2, C, 3], 'f32', { seed: 3 }),
    });
    const defined: string[] = [];
    after(() => {
      for (const n of defined) undefineArm('conv', n);
    });

    it('reports each case: identical, planted, or not checked (no reference), in the table and the JSON', async () => {
      const i = inputs();
      const b = backend();
      const ops = [
        conv.prepareTimed(i, { arm: 'vec', mapping: 'exact', outDtype: 'bf16', backend: b }),
        conv.prepareTimed(i, { arm: 'reg', mapping: 'exact', outDtype: 'bf16', backend: b, mutant: 'taps-reversed' }, 'reg taps-reversed'),
        copyOp(4096, { backend: b, label: 'copy' }),
      ];
      try {
        const r = await timeArms(ops.map((op) => ({ label: op.label as string, op })), { ...QUICK, backend: b });
        const [vec, mutant, copy] = r.cases;
        assert.deepEqual([vec.bits?.mismatches, vec.bits?.reference, vec.bits?.arm], [0, 'scalar', 'vec/exact']);
        assert.ok(mutant.bits && mutant.bits.mismatches > 0 && mutant.bits.planted, 'the planted mutant differs and is marked planted');
        assert.deepEqual(Object.keys(mutant.bits.firstMismatch?.coords ?? {}), ['sequence', 'token', 'channel']);
        assert.equal(copy.bits, undefined, 'a copy has no reference');
        assert.deepEqual(r.rows().map((row) => row.bits), ['= scalar', `planted: ${mutant.bits.mismatches.toLocaleString('en-US')} ≠ scalar`, 'not checked']);
        assert.deepEqual(r.bitsWarnings(), [], 'a planted mutant is no warning');
        assert.equal(r.toJSON().cases[0].bits?.mismatches, 0);
      } finally {
        for (const op of ops) op.release();
      }
    });

    it('an arm that differs and is not planted is timed but flagged: BITS DIFFER, where and by how much', async () => {
      conv.defineArm({ name: 'racy16-timed', source: REG16_RACY_SOURCE, mappings: ['exact'], tokensPerProgram: 16 }, { backend: backend() });
      defined.push('racy16-timed');
      const i = { ...inputs(), queryStartLoc: [0, 40, 64] };
      const b = backend();
      const racy = conv.prepareTimed(i, { arm: 'racy16-timed', outDtype: 'bf16', backend: b });
      const post = postconv.prepareTimed(
        { convOut: Tensor.random([4, 2 * 2 * 16 + 4 * 16], 'f32', { seed: 4 }), a: Tensor.random([4, 4], 'f32', { seed: 5 }), b: Tensor.random([4, 4], 'f32', { seed: 6 }),
          ALog: Tensor.random([4], 'f32', { seed: 7 }), dtBias: Tensor.random([4], 'f32', { seed: 8 }) },
        { Hk: 2, Hv: 4, Dk: 16, Dv: 16, arm: 'token-tile', backend: b });
      try {
        const r = await timeArms([{ label: 'racy', op: racy }, { label: 'token-tile', op: post }], { ...QUICK, backend: b });
        const bits = r.cases[0].bits;
        // The racy variant writes the final state from the last program: under forward order on one thread
        // it may still be right, so whichever it is, the check says so and the table agrees.
        assert.ok(bits !== undefined && bits.planted === false);
        assert.equal(r.cases[1].bits?.reference, 'tree');
        assert.equal(r.cases[1].bits?.mismatches, 0);
        if (bits.mismatches > 0) assert.match(r.toString(), /BITS DIFFER: 'racy' \(racy16-timed\/exact\): [\d,]+ elements differ from scalar/);
        else assert.doesNotMatch(r.toString(), /BITS DIFFER/);
      } finally {
        racy.release();
        post.release();
      }
    });

    it('validate: false skips the comparison', async () => {
      const i = inputs();
      const op = conv.prepareTimed(i, { arm: 'vec', mapping: 'exact', backend: backend() });
      try {
        const r = await timeArms([{ label: 'vec', op }], { ...QUICK, backend: backend(), validate: false });
        assert.equal(r.cases[0].bits, undefined);
        assert.equal('bits' in r.rows()[0], false);
        await assert.rejects(timeArms([{ label: 'vec', op }], { ...QUICK, backend: backend(), validate: 'no' as never }), /validate: expected true or false, got/);
      } finally {
        op.release();
      }
    });

    it('the timing layer alone refuses a prepared op rather than time it unchecked (it cannot reach the checks)', async () => {
      const i = inputs();
      const op = conv.prepareTimed(i, { arm: 'vec', mapping: 'exact', backend: backend() });
      try {
        for (const validate of [true, false]) {
          await assert.rejects(timeArmsWithoutChecks([{ label: 'vec', op }], { ...QUICK, backend: backend(), validate }), /cases\[0\] \('vec'\): an op prepared by conv\.prepareTimed is checked before it is timed, and this timeArms has no bitsChecker/);
        }
        // A hand-made op has nothing to check: the timing layer times it.
        const copy = copyOp(1 << 16, { backend: backend() });
        try {
          const r = await timeArmsWithoutChecks([{ label: 'copy', op: copy }], { ...QUICK, backend: backend() });
          assert.equal(r.cases[0].bits, undefined);
          assert.ok(r.cases[0].stats.n > 0);
        } finally {
          copy.release();
        }
      } finally {
        op.release();
      }
    });

    if (kind === 'host') {
      for (const validate of [true, false]) {
        it(`an endless arm with timeLimitMs 2000 stops within its limit and a small margin (validate: ${validate})`, async () => {
          const name = `spin-timed-${validate}`;
          const source = REG16_SOURCE.replace(/GDN_HD void conv_arm\(const Params& p, Ctx& t\) \{/, (head) => `${head}\n  for (volatile int64_t spin = 0;; ++spin) {}`);
          assert.notEqual(source, REG16_SOURCE);
          conv.defineArm({ name, source, timeLimitMs: 2000 }, { backend: backend() });
          defined.push(name);
          const op = conv.prepareTimed(inputs(), { arm: name, backend: backend() });
          const t0 = Date.now();
          try {
            await assert.rejects(timeArms([{ label: 'spin', op }], { ...QUICK, backend: backend(), validate }),
              new RegExp(`cases\\[0\\] \\('spin'\\): ${validate ? 'checking its bits' : 'running it once'} before timing: conv.forward: arm '${name}' \\(conv\\): ran past its time limit of 2000 ms`));
            const ms = Date.now() - t0;
            // The reference run and the worker's start come on top of the limit; a minute (the timing run's
            // allowance for the other ops of its list) must not.
            assert.ok(ms < 2000 + 3000, `stopped after ${ms} ms`);
          } finally {
            op.release();
          }
        });
      }
    }
  });
});
