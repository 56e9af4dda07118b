// lib/bench/verdict.ts without a kernel: Tensor.random/zeros, conv.prepareTimed and gdnlab's timeArms replaced by
// recorders (restored after each test), so the self-check's shapes, the arms it prepares, the options reaching the
// timing loop, the comparisons it asks for and the releases, in order (also when timing fails), are asserted exactly.

import { strict as assert } from 'assert';
import { Stubs } from '../cli/edges-helpers';
import { Tensor } from '../../lib/tensor';
import { verdictSelfCheck } from '../../lib/bench/verdict';
import type { Backend } from '../../lib/backend';

const conv = require('../../lib/ops/conv') as Record<string, unknown>;
const timed = require('../../lib/check/timed') as Record<string, unknown>;

interface Made { how: string; shape: number[]; dtype?: string; opts?: unknown; released: number; to?: unknown }

function setup(stubs: Stubs, timeArms: (cases: unknown[], opts: unknown) => Promise<unknown>) {
  const made: Made[] = [];
  const releases: string[] = [];
  const prepared: { inputs: Record<string, unknown>; opts: Record<string, unknown>; label: string; released: number }[] = [];
  const fake = (how: string) => (shape: number[], dtype?: string, opts?: unknown) => {
    const m: Made = { how, shape, dtype, opts, released: 0 };
    made.push(m);
    const staged = { m, release: () => void (m.released++, releases.push(`${how} ${shape.join('x')}`)) };
    return { to: (b: unknown) => ((m.to = b), staged) };
  };
  stubs.set(Tensor, 'random', fake('random'));
  stubs.set(Tensor, 'zeros', fake('zeros'));
  stubs.set(conv, 'prepareTimed', (inputs: Record<string, unknown>, opts: Record<string, unknown>, label: string) => {
    const p = { inputs, opts, label, released: 0, kind: 'conv' };
    prepared.push(p);
    return Object.assign(p, { release: () => void (p.released++, releases.push(label)) });
  });
  stubs.set(timed, 'timeArms', timeArms);
  return { made, prepared, releases };
}

describe('bench verdict at its edges', () => {
  const stubs = new Stubs();
  afterEach(() => stubs.restore());

  for (const kind of ['cuda', 'host'] as const) {
    it(`${kind}: shapes, arms, the timing options and the two comparisons`, async () => {
      const backend = { kind } as unknown as Backend;
      const calls: { cases: { label: string; op: unknown }[]; opts: Record<string, unknown> }[] = [];
      const compared: [string, string][] = [];
      const { made, prepared, releases } = setup(stubs, async (cases, opts) => {
        calls.push({ cases: cases as never, opts: opts as never });
        return {
          compare: (a: string, b: string) => (compared.push([a, b]), { a, b }),
          provenanceLine: () => 'PROV',
        };
      });
      const r = await verdictSelfCheck(backend);
      const T = kind === 'cuda' ? 8192 : 64;
      assert.deepEqual(made.map((m) => [m.how, m.shape, m.dtype, m.opts, m.to === backend]), [
        ['random', [T, 8192], 'bf16', { seed: 1 }, true],
        ['random', [8192, 4], 'bf16', { seed: 2 }, true],
        ['zeros', [1, 8192, 3], undefined, undefined, true],
      ]);
      assert.deepEqual(prepared.map((p) => [p.label, p.opts]), [
        ['reg-k4 (1st)', { arm: 'reg-k4', mapping: 'exact', outDtype: 'bf16', backend }],
        ['reg-k4 (2nd)', { arm: 'reg-k4', mapping: 'exact', outDtype: 'bf16', backend }],
        ['scalar', { arm: 'scalar', outDtype: 'bf16', backend }],
      ]);
      const inputs = prepared[0].inputs;
      assert.deepEqual(Object.keys(inputs), ['x', 'weight', 'queryStartLoc', 'convState']);
      assert.deepEqual(inputs.queryStartLoc, [0, T]);
      assert.equal((inputs.x as { m: Made }).m, made[0]);
      assert.equal((inputs.weight as { m: Made }).m, made[1]);
      assert.equal((inputs.convState as { m: Made }).m, made[2]);
      assert.ok(prepared.every((p) => p.inputs === inputs));
      assert.equal(calls.length, 1);
      assert.deepEqual(calls[0].cases.map((c) => c.label), ['reg-k4 (1st)', 'reg-k4 (2nd)', 'scalar']);
      assert.deepEqual(calls[0].cases.map((c) => c.op), prepared);
      assert.deepEqual(calls[0].opts, { backend, maxTimeMs: 8000, progress: false });
      assert.deepEqual(compared, [['reg-k4 (1st)', 'reg-k4 (2nd)'], ['scalar', 'reg-k4 (1st)']]);
      assert.deepEqual(r, { same: { a: 'reg-k4 (1st)', b: 'reg-k4 (2nd)' }, slower: { a: 'scalar', b: 'reg-k4 (1st)' }, line: 'PROV' });
      assert.deepEqual(prepared.map((p) => p.released), [1, 1, 1]);
      assert.deepEqual(made.map((m) => m.released), [1, 1, 1]);
      // The prepared launches go before the inputs they read.
      assert.deepEqual(releases, ['reg-k4 (1st)', 'reg-k4 (2nd)', 'scalar', `random ${T}x8192`, 'random 8192x4', 'zeros 1x8192x3']);
    });
  }

  it('a failing timing run still releases the ops and the inputs', async () => {
    const { made, prepared, releases } = setup(stubs, async () => {
      throw new Error('boom');
    });
    await assert.rejects(verdictSelfCheck({ kind: 'host' } as unknown as Backend), /^Error: boom$/);
    assert.deepEqual(prepared.map((p) => p.released), [1, 1, 1]);
    assert.deepEqual(made.map((m) => m.released), [1, 1, 1]);
    assert.deepEqual(releases, ['reg-k4 (1st)', 'reg-k4 (2nd)', 'scalar', 'random 64x8192', 'random 8192x4', 'zeros 1x8192x3']);
  });
});
