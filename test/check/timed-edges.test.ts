// Edge tests for lib/check/timed.ts: checkTimedBits and probeTimedArm for each op over replaced op functions
// (conv forward and update, post-conv forward, fused forward and chain) and arm table, so that the options each
// run gets (caller buffers dropped, the reference arm), the comparison, the planted flag and the releases are
// asserted exactly; timeArms' checker wiring through a replaced lib/analysis/timing timeArms; and one real timing
// run of a 2-channel conv case on a stand-in timing backend (virtual clock, a few samples).

import { strict as assert } from 'assert';
import { Tensor } from '../../lib/tensor';
import { checkTimedBits, probeTimedArm, timeArms } from '../../lib/check/timed';
import * as conv from '../../lib/ops/conv';
import { Stubs, tensor, armInfo } from './check-stubs';
import { openBackend } from '../backends';
import { FakeTimingBackend } from '../analysis/fake-backend';

const convOps = require('../../lib/ops/conv') as Record<string, unknown>;
const pcOps = require('../../lib/ops/postconv') as Record<string, unknown>;
const fusedOps = require('../../lib/ops/fused') as Record<string, unknown>;
const table = require('../../lib/arms/table') as Record<string, unknown>;
const timing = require('../../lib/analysis/timing') as Record<string, unknown>;

const PC = ['q', 'k', 'v', 'g', 'beta'] as const;

describe('check/timed edges: checkTimedBits and probeTimedArm', () => {
  const stubs = new Stubs();
  afterEach(() => stubs.restore());
  const be = { kind: 'host' } as never;
  let calls: [string, Record<string, unknown>][];
  let released: string[];
  /** The arm table: reference arm 'R' for every op; 'bad' is a planted mutant, 'mine' a user arm. */
  function arms() {
    calls = [];
    released = [];
    const list = [armInfo('R', { reference: true }), armInfo('a'), armInfo('bad', { mutant: true }), armInfo('mine', { user: true })];
    stubs.set(table, 'referenceArm', () => list[0]);
    stubs.set(table, 'armByName', (_op: string, name: string) => list.find((x) => x.name === name) ?? assert.fail(`no arm ${name}`));
  }
  const rel = (name: string) => () => void released.push(name);

  it('conv: the reference with its outDtype and backend only, the arm without the caller\'s buffers; equal bits', async () => {
    arms();
    stubs.set(convOps, 'forward', async (_i: unknown, o: Record<string, unknown>) => {
      calls.push(['conv', o]);
      return { requested: { arm: o.arm, mapping: o.mapping ?? 'sequence' }, out: tensor([1, 2], [1, 2]), convState: tensor([3], [1, 1, 1]), release: rel(`${o.arm}`) };
    });
    const inputs = { tag: 1 };
    const given = { arm: 'a', mapping: 'exact', outDtype: 'bf16', backend: be, out: { buffer: 1 }, inPlace: true };
    const r = await checkTimedBits({ op: 'conv', inputs, opts: given });
    assert.deepEqual(r, { arm: 'a/exact', reference: 'R', mismatches: 0, planted: false });
    assert.deepEqual(calls, [['conv', { outDtype: 'bf16', backend: be, arm: 'R' }], ['conv', { arm: 'a', mapping: 'exact', outDtype: 'bf16', backend: be }]]);
    assert.equal(given.inPlace, true, 'the caller\'s options are left alone');
    assert.deepEqual(released, ['a', 'R']);
  });

  it('conv: differences counted over out and state and located; planted by the arm\'s flag or a mutant option', async () => {
    arms();
    stubs.set(convOps, 'forward', async (_i: unknown, o: Record<string, unknown>) => ({
      requested: { arm: o.arm, mapping: o.mapping },
      out: tensor(o.arm === 'R' ? [1, 2] : [1, 5], [1, 2]), convState: tensor(o.arm === 'R' ? [3, 4] : [0, 0], [1, 2, 1]), release: rel(`${o.arm}`),
    }));
    const r = await checkTimedBits({ op: 'conv', inputs: {}, opts: { arm: 'bad', mapping: 'exact', backend: be } });
    assert.deepEqual([r.arm, r.mismatches, r.planted, r.firstMismatch!.output, r.firstMismatch!.index], ['bad/exact', 3, true, 'out', 1]);
    const m = await checkTimedBits({ op: 'conv', inputs: {}, opts: { arm: 'a', mapping: 'sequence', backend: be, mutant: 'taps-reversed' } });
    assert.equal(m.planted, true);
    const n = await checkTimedBits({ op: 'conv', inputs: {}, opts: { arm: 'a', mapping: 'sequence', backend: be, mutant: null } });
    assert.equal(n.planted, false);
  });

  it('conv-update: a Tensor out is an input and is kept; a buffer to write into is dropped', async () => {
    arms();
    stubs.set(convOps, 'update', async (_i: unknown, o: Record<string, unknown>) => {
      calls.push(['update', o]);
      return { arm: o.arm ?? 'a', out: tensor(o.arm === 'R' ? [1] : [2], [1, 1]), state: tensor([1, 2], [2, 1]), release: rel(`${o.arm}`) };
    });
    const out = tensor([0], [1, 1]);
    const r = await checkTimedBits({ op: 'conv-update', inputs: {}, opts: { backend: be, out, inPlace: false } });
    assert.deepEqual([r.arm, r.reference, r.mismatches, r.planted, r.firstMismatch!.output], ['a', 'R', 1, false, 'out']);
    assert.deepEqual(calls, [['update', { backend: be, out, arm: 'R' }], ['update', { backend: be, out }]]);
    calls = [];
    const p = await checkTimedBits({ op: 'conv-update', inputs: {}, opts: { arm: 'bad', backend: be, out: { not: 'a tensor' } } });
    assert.deepEqual(calls.map((c) => c[1]), [{ arm: 'R', backend: be }, { arm: 'bad', backend: be }]);
    assert.equal(p.planted, true);
    assert.deepEqual(released, ['undefined', 'R', 'bad', 'R']);
  });

  it('postconv: every output compared with the reference arm\'s; planted by the arm\'s flag', async () => {
    arms();
    stubs.set(pcOps, 'forward', async (_i: unknown, o: Record<string, unknown>) => {
      calls.push(['postconv', o]);
      const r: Record<string, unknown> = { requested: o.arm, release: rel(`${o.arm}`) };
      for (const k of PC) r[k] = tensor(o.arm !== 'R' && k === 'beta' ? [0, 0] : [1, 1], [1, 2]);
      return r;
    });
    const r = await checkTimedBits({ op: 'postconv', inputs: {}, opts: { arm: 'bad', Hk: 1, backend: be, out: 1, inPlace: true } });
    assert.deepEqual([r.arm, r.reference, r.mismatches, r.planted, r.firstMismatch!.output], ['bad', 'R', 2, true, 'beta']);
    assert.deepEqual(calls.map((c) => c[1]), [{ arm: 'R', Hk: 1, backend: be }, { arm: 'bad', Hk: 1, backend: be }]);
    assert.equal((await checkTimedBits({ op: 'postconv', inputs: {}, opts: { arm: 'a', backend: be } })).planted, false);
  });

  it('fused: against the chain without the mutant; six outputs; planted by the arm\'s flag or the mutant option', async () => {
    arms();
    const outs = (wrong: boolean, release: () => void) => {
      const r: Record<string, unknown> = { release };
      for (const k of [...PC, 'convState']) r[k] = tensor(wrong && k === 'convState' ? [9, 9] : [1, 1], [1, 2]);
      return r;
    };
    stubs.set(fusedOps, 'chain', async (_i: unknown, o: Record<string, unknown>) => (calls.push(['chain', o]), outs(false, rel('chain'))));
    stubs.set(fusedOps, 'forward', async (_i: unknown, o: Record<string, unknown>) => (calls.push(['fused', o]), { ...outs(o.arm === 'bad', rel('fused')), requested: o.arm }));
    const r = await checkTimedBits({ op: 'fused', inputs: {}, opts: { arm: 'a', mutant: 'seq-fold', backend: be, out: 1 } });
    assert.deepEqual(r, { arm: 'a', reference: 'conv(scalar) → post-conv(tree)', mismatches: 0, planted: true });
    assert.deepEqual(calls, [['chain', { arm: 'a', mutant: null, backend: be }], ['fused', { arm: 'a', mutant: 'seq-fold', backend: be }]]);
    const b = await checkTimedBits({ op: 'fused', inputs: {}, opts: { arm: 'bad', backend: be } });
    assert.deepEqual([b.mismatches, b.planted, b.firstMismatch!.output], [2, true, 'convState']);
    assert.equal((await checkTimedBits({ op: 'fused', inputs: {}, opts: { arm: 'a', backend: be } })).planted, false);
    assert.deepEqual(released, ['fused', 'chain', 'fused', 'chain', 'fused', 'chain']);
  });

  it('an unknown op is refused by name', async () => {
    await assert.rejects(checkTimedBits({ op: 'matmul' } as never), (e: Error) => e instanceof TypeError
      && e.message === "source.op: expected 'conv', 'conv-update', 'postconv' or 'fused', got matmul");
  });

  it('the reference is released when the arm throws; both when the comparison throws', async () => {
    arms();
    stubs.set(convOps, 'forward', async (_i: unknown, o: Record<string, unknown>) => {
      if (o.arm === 'a') throw new Error('arm failed');
      return { requested: { arm: o.arm, mapping: 'x' }, out: tensor([1], [1, 1]), convState: tensor([1], [1, 1, 1]), release: rel(`${o.arm}`) };
    });
    await assert.rejects(checkTimedBits({ op: 'conv', inputs: {}, opts: { arm: 'a', backend: be } }), /arm failed/);
    assert.deepEqual(released, ['R']);
    released = [];
    await assert.rejects(checkTimedBits({ op: 'conv', inputs: {}, opts: { arm: 'nope', backend: be } }), /no arm nope/);
    assert.deepEqual(released, ['nope', 'R']);
  });

  it('probeTimedArm: runs (and releases) only an arm defined in a cell, of conv or post-conv', async () => {
    arms();
    stubs.set(convOps, 'forward', async (_i: unknown, o: Record<string, unknown>) => (calls.push(['conv', o]), { release: rel('conv') }));
    stubs.set(pcOps, 'forward', async (_i: unknown, o: Record<string, unknown>) => (calls.push(['postconv', o]), { release: rel('postconv') }));
    stubs.set(fusedOps, 'forward', async () => assert.fail('fused is never probed'));
    await probeTimedArm({ op: 'conv', inputs: {}, opts: { arm: 'mine', backend: be, out: 1, inPlace: true } });
    await probeTimedArm({ op: 'conv', inputs: {}, opts: { arm: 'a', backend: be } });
    await probeTimedArm({ op: 'conv', inputs: {}, opts: { backend: be } });
    await probeTimedArm({ op: 'postconv', inputs: {}, opts: { arm: 'mine', backend: be, out: 1 } });
    await probeTimedArm({ op: 'postconv', inputs: {}, opts: { arm: 'a', backend: be } });
    await probeTimedArm({ op: 'postconv', inputs: {}, opts: { backend: be } });
    // A fused source is not probed (not even taken for a post-conv one).
    await probeTimedArm({ op: 'fused', inputs: {}, opts: { arm: 'mine', backend: be, fusedOnly: true } });
    assert.deepEqual(calls, [['conv', { arm: 'mine', backend: be }], ['postconv', { arm: 'mine', backend: be }]]);
    assert.deepEqual(released, ['conv', 'postconv']);
  });
});

describe('check/timed edges: timeArms', () => {
  const stubs = new Stubs();
  afterEach(() => stubs.restore());

  it('hands lib/analysis/timing the ops\' checker unless the caller gives one, with every other option', async () => {
    const seen: unknown[][] = [];
    stubs.set(timing, 'timeArms', async (...a: unknown[]) => (seen.push(a), 'result'));
    const cases = [{ label: 'x' }] as never;
    assert.equal(await timeArms(cases, { maxTimeMs: 5 }), 'result');
    const own = { check: async () => assert.fail(), probe: async () => undefined };
    await timeArms(cases, { bitsChecker: own, progress: false });
    await timeArms(cases);
    assert.equal(seen[0][0], cases);
    const first = seen[0][1] as { maxTimeMs: number; bitsChecker: { check: unknown; probe: unknown } };
    assert.deepEqual(Object.keys(first), ['maxTimeMs', 'bitsChecker']);
    assert.equal(first.maxTimeMs, 5);
    assert.deepEqual(first.bitsChecker, { check: checkTimedBits, probe: probeTimedArm });
    assert.deepEqual(seen[1][1], { bitsChecker: own, progress: false });
    assert.deepEqual(Object.keys(seen[2][1] as object), ['bitsChecker']);
  });

  it('a real run on a stand-in timing backend: the conv case\'s bits checked on the host, then timed', async function () {
    this.timeout(20000);
    const host = openBackend('host');
    const inputs = { x: Tensor.random([3, 8], 'bf16', { seed: 1 }), weight: Tensor.random([8, 4], 'bf16', { seed: 2 }), queryStartLoc: [0, 3], convState: Tensor.zeros([1, 8, 3]) };
    const good = conv.prepareTimed(inputs, { arm: 'reg', mapping: 'exact', outDtype: 'bf16', backend: host }, 'reg');
    const bad = conv.prepareTimed(inputs, { arm: 'reg', mapping: 'exact', outDtype: 'bf16', backend: host, mutant: 'taps-reversed' }, 'mutant');
    try {
      const fake = new FakeTimingBackend((i) => 10 + i);
      const r = await timeArms([{ label: 'reg', op: good }, { label: 'mutant', op: bad }],
        { backend: fake as never, clock: fake.clock, progress: false, warmupMs: 1, roundsPerBatch: 5, minSamples: 5, minTimeMs: 0.01, maxTimeMs: 5 });
      const [g, b] = r.cases;
      assert.deepEqual([g.bits!.arm, g.bits!.reference, g.bits!.mismatches, g.bits!.planted], ['reg/exact', 'scalar', 0, false]);
      assert.ok(b.bits!.mismatches > 0 && b.bits!.planted);
      assert.ok(g.samples.length >= 5 && g.samples.every((s) => s === 10));
    } finally {
      good.release();
      bad.release();
    }
  });
});
