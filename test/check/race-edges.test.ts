// Edge tests for lib/check/race.ts: raceTrials over a replaced conv forwardSync (planted wrong elements per
// trial) and a replaced interrupted(), on a 2-channel case, so that the corrupted-run counts, the wrong rows
// located within their sequence (empty sequences included), the state count, the options each trial runs with
// and the releases are asserted exactly; and raceCase pinned.

import { strict as assert } from 'assert';
import { Tensor } from '../../lib/tensor';
import { raceTrials, raceCase } from '../../lib/check/race';
import { ConvCase } from '../../lib/check/conv';
import { Stubs, tensor } from './check-stubs';
import { openBackend } from '../backends';

const convOps = require('../../lib/ops/conv') as Record<string, unknown>;
const display = require('../../lib/view/display') as Record<string, unknown>;

describe('check/race edges', () => {
  const stubs = new Stubs();
  afterEach(() => stubs.restore());

  it('raceCase: long sequences with state, bf16, C as asked (4096 by default)', () => {
    const want = (C: number) => ({
      name: `race C=${C}`, C, K: 4, xDtype: 'bf16', outDtype: 'bf16', lengths: [9, 64, 200, 17, 8, 33, 1000, 5],
      initialState: [true, true, true, true, true, false, true, true], maskDtype: 'i32', bias: false, xRowStride: C, seed: 305,
    });
    assert.deepEqual(raceCase(), want(4096));
    assert.deepEqual(raceCase(8), want(8));
  });

  // 2 channels, sequences of 2, 0 and 3 tokens: query starts [0, 2, 2, 5]; out is [5, 2].
  const small: ConvCase = { name: 's', C: 2, K: 2, xDtype: 'f32', outDtype: 'f32', lengths: [2, 0, 3], initialState: [true, false, true], maskDtype: 'i8', bias: true, xRowStride: 2, seed: 4 };
  const OUT = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10];
  const STATE = [1, 2, 3, 4, 5, 6];
  let calls: Record<string, unknown>[];
  let inputs: Record<string, unknown>[];
  let released: number;

  /** Trial i answers with plan[i]: the out elements to make wrong, and whether to change the state. */
  function plant(plan: { wrong: number[]; state?: boolean }[]) {
    calls = [];
    inputs = [];
    released = 0;
    let trial = -1;
    stubs.set(convOps, 'forwardSync', (i: Record<string, unknown>, opts: Record<string, unknown>) => {
      calls.push(opts);
      inputs.push(i);
      const p = opts.arm === 'scalar' ? { wrong: [] } : plan[++trial];
      const out = OUT.slice();
      for (const e of p.wrong) out[e] = -out[e];
      const st = STATE.slice();
      if (p.state) st[5] = 0;
      return { out: tensor(out, [5, 2], opts.outDtype as 'f32'), convState: tensor(st, [3, 2, 1]), release: () => void released++ };
    });
  }

  it('counts corrupted runs, wrong rows within their sequence, state-corrupted runs and the largest wrong count', () => {
    // Element e is token floor(e / 2): e = 1 → seq 0 row 0; e = 4, 5 → token 2 = seq 2 row 0 (seq 1 is empty); e = 9 → seq 2 row 2.
    plant([{ wrong: [1, 4, 5] }, { wrong: [] }, { wrong: [], state: true }, { wrong: [9, 1], state: true }]);
    const seen: unknown[] = [];
    const r = raceTrials({ backend: openBackend('host'), mapping: 'exact-racy', trials: 4, case: small, onTrial: (...a) => seen.push(a) });
    assert.deepEqual(r, {
      arm: 'reg', mapping: 'exact-racy', backend: 'host', widenCycles: 0, trials: 4, corruptedRuns: 3, corruptedFraction: 0.75,
      stateCorruptedRuns: 2, wrongRows: { 'seq 0 row 0': 2, 'seq 2 row 0': 1, 'seq 2 row 2': 1 }, maxWrongElements: 3,
    });
    assert.deepEqual(seen, [[1, 1], [2, 1], [3, 2], [4, 3]]);
    assert.deepEqual(calls[0], { arm: 'scalar', outDtype: 'f32', backend: openBackend('host') });
    assert.deepEqual(calls[1], { arm: 'reg', mapping: 'exact-racy', outDtype: 'f32', backend: openBackend('host'), widenCycles: 0, schedule: undefined });
    assert.equal(released, 5, 'the reference and every trial released');
    // The inputs were copied for the series and are released after it.
    const dev = inputs[0] as Record<string, Tensor | number[] | null>;
    assert.deepEqual(dev.queryStartLoc, [0, 2, 2, 5]);
    for (const k of ['x', 'weight', 'bias', 'hasInitialState', 'convState']) assert.equal((dev[k] as Tensor).released, true, k);
    assert.ok(inputs.every((i) => i === inputs[0]), 'one set of inputs for the whole series');
  });

  it('passes the arm, the widening and each trial\'s schedule; a case without bias or mask', () => {
    plant([{ wrong: [] }, { wrong: [0] }]);
    const r = raceTrials({ backend: openBackend('host'), arm: 'vec', mapping: 'exact', trials: 2, widenCycles: 7, schedule: (i) => (i ? 'reverse' : 'forward'),
      case: { ...small, bias: false, initialState: null, outDtype: 'bf16' } });
    assert.deepEqual([r.arm, r.widenCycles, r.corruptedRuns, r.stateCorruptedRuns, r.maxWrongElements], ['vec', 7, 1, 0, 1]);
    assert.deepEqual(calls.slice(1).map((c) => [c.arm, c.widenCycles, c.schedule, c.outDtype]), [['vec', 7, 'forward', 'bf16'], ['vec', 7, 'reverse', 'bf16']]);
    assert.deepEqual([inputs[0].bias, inputs[0].hasInitialState], [null, null]);
  });

  it('stops when interrupted: the trials done so far, none at all giving a fraction of 0', () => {
    plant([{ wrong: [0] }, { wrong: [0] }, { wrong: [0] }]);
    let polls = 0;
    stubs.set(display, 'interrupted', () => ++polls > 2);
    const r = raceTrials({ backend: openBackend('host'), mapping: 'exact', trials: 3, case: small });
    assert.deepEqual([r.trials, r.corruptedRuns, r.corruptedFraction], [2, 2, 1]);
    stubs.set(display, 'interrupted', () => true);
    const none = raceTrials({ backend: openBackend('host'), mapping: 'exact', trials: 3, case: small });
    assert.deepEqual([none.trials, none.corruptedRuns, none.corruptedFraction, none.maxWrongElements], [0, 0, 0, 0]);
    assert.deepEqual(none.wrongRows, {});
  });

  it('releases the reference and the inputs when a trial throws', () => {
    plant([]);
    assert.throws(() => raceTrials({ backend: openBackend('host'), mapping: 'exact', trials: 1, case: small }), TypeError);
    assert.equal(released, 1);
    assert.equal((inputs[0].x as Tensor).released, true);
  });

  it('the default case is raceCase()', () => {
    // Stopped at its first random tensor (x): drawing 1336 × 4096 values would take a second.
    stubs.set(Tensor, 'random', (shape: number[]) => {
      throw Object.assign(new Error('stop'), { shape });
    });
    assert.throws(() => raceTrials({ backend: openBackend('host'), mapping: 'exact', trials: 1 }), (e: Error & { shape: number[] }) => e.shape.join() === '1336,4096');
  });

  it('a real host run: exact-racy in reverse order corrupts early rows, never the state', function () {
    this.timeout(20000);
    const r = raceTrials({ backend: openBackend('host'), mapping: 'exact-racy', trials: 2, schedule: (i) => (i ? 'reverse' : 'forward'), case: raceCase(8) });
    assert.deepEqual([r.trials, r.corruptedRuns, r.stateCorruptedRuns], [2, 1, 0]);
  });
});
