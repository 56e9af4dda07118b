// Edge tests for lib/bench/verdict.ts: verdictSelfCheck over replaced Tensor.random / Tensor.zeros (no 64 × 8192
// draw), conv.prepareTimed and lib/check/timed's timeArms, so the shapes per backend, the three prepared cases,
// the timing options, the two comparisons and the releases (also when timing throws) are asserted exactly.

import { strict as assert } from 'assert';
import { Tensor } from '../../lib/tensor';
import { verdictSelfCheck } from '../../lib/bench/verdict';
import { Stubs } from './check-stubs';

const convOps = require('../../lib/ops/conv') as Record<string, unknown>;
const timed = require('../../lib/check/timed') as Record<string, unknown>;

describe('bench/verdict edges', () => {
  const stubs = new Stubs();
  afterEach(() => stubs.restore());
  let released: string[];
  let made: unknown[];
  let prepared: unknown[];
  let timedWith: unknown[];

  function plant(timeArms: (cases: { label: string; op: unknown }[], opts: unknown) => Promise<unknown>) {
    released = [];
    made = [];
    prepared = [];
    timedWith = [];
    const fake = (what: string, shape: number[], dtype: string, opts?: unknown) => {
      made.push([what, shape, dtype, opts]);
      return { to: (b: { kind: string }) => ({ what, on: b.kind, release: () => void released.push(what) }) };
    };
    stubs.set(Tensor, 'random', (shape: number[], dtype: string, opts: unknown) => fake(`random${made.length}`, shape, dtype, opts));
    stubs.set(Tensor, 'zeros', (shape: number[], dtype?: string) => fake('zeros', shape, dtype ?? 'f32'));
    stubs.set(convOps, 'prepareTimed', (inputs: unknown, opts: { arm: string }, label: string) => {
      prepared.push([inputs, opts, label]);
      return { label, release: () => void released.push(label) };
    });
    stubs.set(timed, 'timeArms', async (cases: unknown, opts: unknown) => {
      timedWith.push(cases, opts);
      return timeArms(cases as never, opts);
    });
  }
  const result = async () => ({ compare: (a: string, b: string) => `${a} vs ${b}`, provenanceLine: () => 'provenance' });

  it('on the host: 64 tokens of 8192 channels; reg-k4 twice and scalar; same and slower compared; all released', async () => {
    plant(result);
    const backend = { kind: 'host' } as never;
    const r = await verdictSelfCheck(backend);
    assert.deepEqual(r, { same: 'reg-k4 (1st) vs reg-k4 (2nd)', slower: 'scalar vs reg-k4 (1st)', line: 'provenance' });
    assert.deepEqual(made, [['random0', [64, 8192], 'bf16', { seed: 1 }], ['random1', [8192, 4], 'bf16', { seed: 2 }], ['zeros', [1, 8192, 3], 'f32', undefined]]);
    const inputs = {
      x: { what: 'random0', on: 'host', release: (prepared[0] as { x: { release: unknown } }[])[0].x.release },
      weight: { what: 'random1', on: 'host', release: (prepared[0] as { weight: { release: unknown } }[])[0].weight.release },
      queryStartLoc: [0, 64],
      convState: { what: 'zeros', on: 'host', release: (prepared[0] as { convState: { release: unknown } }[])[0].convState.release },
    };
    assert.deepEqual(prepared, [
      [inputs, { arm: 'reg-k4', mapping: 'exact', outDtype: 'bf16', backend }, 'reg-k4 (1st)'],
      [inputs, { arm: 'reg-k4', mapping: 'exact', outDtype: 'bf16', backend }, 'reg-k4 (2nd)'],
      [inputs, { arm: 'scalar', outDtype: 'bf16', backend }, 'scalar'],
    ]);
    assert.deepEqual(timedWith[1], { backend, maxTimeMs: 8000, progress: false });
    assert.deepEqual((timedWith[0] as { label: string; op: { label: string } }[]).map((c) => [c.label, c.op.label]),
      [['reg-k4 (1st)', 'reg-k4 (1st)'], ['reg-k4 (2nd)', 'reg-k4 (2nd)'], ['scalar', 'scalar']]);
    assert.deepEqual(released, ['reg-k4 (1st)', 'reg-k4 (2nd)', 'scalar', 'random0', 'random1', 'zeros']);
  });

  it('on CUDA: 8192 tokens; a timing failure still releases every op and input', async () => {
    plant(async () => {
      throw new Error('timing failed');
    });
    await assert.rejects(verdictSelfCheck({ kind: 'cuda' } as never), /timing failed/);
    assert.deepEqual((made[0] as unknown[])[1], [8192, 8192]);
    assert.deepEqual((prepared[0] as { queryStartLoc: number[] }[])[0].queryStartLoc, [0, 8192]);
    assert.deepEqual(released, ['reg-k4 (1st)', 'reg-k4 (2nd)', 'scalar', 'random0', 'random1', 'zeros']);
  });
});
