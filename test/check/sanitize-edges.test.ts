// Edge tests for lib/check/sanitize.ts: the compute-sanitizer workload run against recorders: the ops it launches
// (conv forward and update, post-conv, fused, matmulNT), the input builders of the checks and the arm lists are
// replaced for the test, so every launch, its inputs and options, its log line and the launch count are asserted
// exactly without running a kernel.

import { strict as assert } from 'assert';
import { Tensor } from '../../lib/tensor';
import { sanitizeWorkload } from '../../lib/check/sanitize';
import { Stubs, armInfo } from './check-stubs';

const convOps = require('../../lib/ops/conv') as Record<string, unknown>;
const pcOps = require('../../lib/ops/postconv') as Record<string, unknown>;
const fusedOps = require('../../lib/ops/fused') as Record<string, unknown>;
const matmul = require('../../lib/ops/matmul') as Record<string, unknown>;
const checkConv = require('../../lib/check/conv') as Record<string, unknown>;
const checkPc = require('../../lib/check/postconv') as Record<string, unknown>;
const checkFused = require('../../lib/check/fused') as Record<string, unknown>;
const table = require('../../lib/arms/table') as Record<string, unknown>;

describe('check/sanitize edges', () => {
  const stubs = new Stubs();
  afterEach(() => stubs.restore());

  it('launches every arm and mapping of each op once per shape, logs each launch and counts them', async () => {
    const backend = { kind: 'host' } as never;
    const made: Record<string, unknown[]> = { conv: [], postconv: [], fused: [] };
    const ops: Record<string, unknown[]> = { conv: [], update: [], postconv: [], fused: [], matmul: [] };
    let released = 0;
    const release = () => void released++;
    stubs.set(table, 'arms', (op: string) => (op === 'conv'
      ? [armInfo('scalar', { mappings: ['sequence'] }), armInfo('vec', { mappings: ['exact', 'sequence'], requires: ['vec8'] }), armInfo('reg', { mappings: ['exact'], requires: ['other'] })]
      : [armInfo('tree'), armInfo('tt')]));
    stubs.set(checkConv, 'makeConvInputs', (c: { C: number }) => (made.conv.push(c), { tag: `conv${c.C}` }));
    stubs.set(checkPc, 'makePostconvInputs', (c: { Dk: number }) => (made.postconv.push(c), { tag: `pc${c.Dk}` }));
    stubs.set(checkFused, 'makeFusedInputs', (c: { K: number }) => (made.fused.push(c), { tag: `fused${c.K}` }));
    stubs.set(checkFused, 'checkedFusedArms', () => ['f1', 'f2']);
    stubs.set(convOps, 'forward', async (i: { tag: string }, o: { arm: string; mapping: string }) => {
      ops.conv.push([i.tag, o]);
      return { contract: { arm: o.arm === 'vec' && i.tag === 'conv385' ? 'reg' : o.arm, mapping: o.mapping }, release };
    });
    stubs.set(convOps, 'updateArms', () => ['u1', 'u2']);
    stubs.set(convOps, 'update', async (i: Record<string, Tensor | number[]>, o: unknown) => {
      ops.update.push([(i.x as Tensor).shape, (i.weight as Tensor).shape, (i.state as Tensor).shape, (i.state as Tensor).dtype, i.stateIndices, o]);
      seeded.push(...[i.x, i.weight, i.state] as Tensor[]);
      return { release };
    });
    stubs.set(pcOps, 'forward', async (i: { tag: string }, o: { arm: string; Dk: number }) => {
      ops.postconv.push([i.tag, o]);
      return { arm: o.Dk === 64 ? 'tree' : o.arm, release };
    });
    stubs.set(fusedOps, 'forward', async (i: { tag: string }, o: { arm: string; mutant: string | null }) => {
      ops.fused.push([i.tag, o]);
      return { launch: { arm: o.arm === 'f2' && o.mutant ? 'f1' : o.arm }, release };
    });
    stubs.set(matmul, 'matmulNT', (a: Tensor, b: Tensor, o: unknown) => {
      ops.matmul.push([a.shape, a.dtype, b.shape, b.dtype, o]);
      seeded.push(a, b);
      return { release };
    });
    const seeded: Tensor[] = [];
    const lines: string[] = [];
    const n = await sanitizeWorkload(backend, (l) => lines.push(l));
    assert.deepEqual(lines, [
      'conv C=385 scalar/sequence (ran scalar/sequence)', 'conv C=385 vec/exact (ran reg/exact)', 'conv C=385 vec/sequence (ran reg/sequence)', 'conv C=385 reg/exact (ran reg/exact)',
      'conv C=392 vec/exact (ran vec/exact)', 'conv C=392 vec/sequence (ran vec/sequence)',
      'conv.update u1 (f32 state)', 'conv.update u1 (bf16 state)', 'conv.update u2 (f32 state)', 'conv.update u2 (bf16 state)',
      'postconv tree Dk=128 bf16 (ran tree)', 'postconv tt Dk=128 bf16 (ran tt)', 'postconv tree Dk=128 f32 (ran tree)', 'postconv tt Dk=128 f32 (ran tt)',
      'postconv tree Dk=64 bf16 (ran tree)', 'postconv tt Dk=64 bf16 (ran tree)',
      'fused f1 K=4 bf16', 'fused f1 K=6 f32', 'fused f1 K=4 f32 (mutant seq-fold)', 'fused f1 K=4 bf16 (mutant no-round)',
      'fused f2 K=4 bf16', 'fused f2 K=6 f32', 'fused f2 K=4 f32 (mutant seq-fold) (ran f1)', 'fused f2 K=4 bf16 (mutant no-round) (ran f1)',
      'matmulNT',
    ]);
    assert.equal(n, lines.length);
    assert.equal(released, lines.length, 'every result released');
    // The conv case: partial tiles at C = 385 with a padded stride, then C = 392 (whole 16-byte vectors).
    const convCase = { name: 'sanitize', K: 4, xDtype: 'bf16', outDtype: 'bf16', lengths: [0, 2, 9, 70, 5], initialState: [true, true, true, false, true],
      maskDtype: 'i8', bias: true, seed: 9 };
    assert.deepEqual(made.conv, [{ ...convCase, C: 385, xRowStride: 392 }, { ...convCase, C: 392, xRowStride: 400 }]);
    assert.deepEqual(ops.conv[1], ['conv385', { arm: 'vec', mapping: 'exact', outDtype: 'bf16', backend }]);
    assert.deepEqual(ops.update[0], [[4, 385], [385, 4], [6, 385, 3], 'f32', [5, -1, 0, 2], { arm: 'u1', backend }]);
    assert.deepEqual((ops.update[1] as unknown[]).slice(2, 4), [[6, 385, 3], 'bf16']);
    const pcBase = { name: 'sanitize', Hk: 2, Hv: 4, gateDtype: 'bf16', packedWidth: 11, bOffset: 3, aOffset: 7, seed: 5 };
    assert.deepEqual(made.postconv, [
      { ...pcBase, T: 37, Dk: 128, Dv: 128, convDtype: 'bf16', qkvDtype: 'bf16' },
      { ...pcBase, T: 37, Dk: 128, Dv: 128, convDtype: 'f32', qkvDtype: 'f32' },
      { ...pcBase, T: 5, Dk: 64, Dv: 64, convDtype: 'bf16', qkvDtype: 'bf16' },
    ]);
    assert.deepEqual(ops.postconv[0], ['pc128', { ...made.postconv[0] as object, arm: 'tree', backend }]);
    const fusedBase = { name: 'sanitize', Hk: 1, Hv: 2, lengths: [0, 2, 70, 9], initialState: [true, true, true, false], maskDtype: 'i8', bias: true,
      xRowStride: 520, packedWidth: 7, bOffset: 1, aOffset: 4, seed: 11 };
    const dts = (dt: string) => ({ xDtype: dt, convDtype: dt, qkvDtype: dt, gateDtype: dt });
    assert.deepEqual(made.fused.slice(0, 4), [
      { ...fusedBase, K: 4, ...dts('bf16') }, { ...fusedBase, K: 6, ...dts('f32') }, { ...fusedBase, K: 4, ...dts('f32') }, { ...fusedBase, K: 4, ...dts('bf16') },
    ]);
    const fo = (c: unknown, mutant: string | null, arm: string) => (checkFused.fusedOptions as (...a: unknown[]) => unknown)(c, backend, mutant, arm);
    assert.deepEqual(ops.fused.map((x) => (x as unknown[])[1]), [
      fo(made.fused[0], null, 'f1'), fo(made.fused[1], null, 'f1'), fo(made.fused[2], 'seq-fold', 'f1'), fo(made.fused[3], 'no-round', 'f1'),
      fo(made.fused[4], null, 'f2'), fo(made.fused[5], null, 'f2'), fo(made.fused[6], 'seq-fold', 'f2'), fo(made.fused[7], 'no-round', 'f2'),
    ]);
    assert.deepEqual(ops.matmul, [[[7, 33], 'bf16', [19, 33], 'bf16', { backend }]]);
    // The update's and matmul's random inputs are seeded (x 1, weight 2, state 3; a 1, b 2).
    const bits = (t: Tensor) => Array.from(t.bits());
    const want = [
      Tensor.random([4, 385], 'bf16', { seed: 1 }), Tensor.random([385, 4], 'bf16', { seed: 2 }), Tensor.random([6, 385, 3], 'f32', { seed: 3 }),
      Tensor.random([4, 385], 'bf16', { seed: 1 }), Tensor.random([385, 4], 'bf16', { seed: 2 }), Tensor.random([6, 385, 3], 'bf16', { seed: 3 }),
    ];
    assert.equal(seeded.length, 4 * 3 + 2);
    for (const [i, t] of want.entries()) assert.deepEqual(bits(seeded[i]), bits(t), `update input ${i}`);
    assert.deepEqual(bits(seeded[12]), bits(Tensor.random([7, 33], 'bf16', { seed: 1 })));
    assert.deepEqual(bits(seeded[13]), bits(Tensor.random([19, 33], 'bf16', { seed: 2 })));
  });
});
