// lib/profile/shapes.ts and lib/profile/job.ts without ncu or a child process, so that Stryker can mutate
// them: the synthetic Qwen3.5-4B inputs of each op (shapes, dtypes, seeds, forward options) at a small T,
// and a job's inputs written to a scratch folder and read back (padded and offset tensors keep their
// layout; plain values as JSON; undefined skipped; anything else refused with its message; a released
// tensor refused by name).

import { strict as assert } from 'assert';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { HostStorage, Tensor } from '../../lib/tensor';
import { QWEN35_4B, syntheticInputs } from '../../lib/profile/shapes';
import { PROFILE_OPS, readInputs, writeInputs } from '../../lib/profile/job';

/** Same shape, dtype and bits as Tensor.random(shape, dtype, { seed }). */
function isRandom(t: unknown, shape: number[], dtype: 'f32' | 'bf16', seed: number, what: string): void {
  assert.ok(t instanceof Tensor, what);
  assert.deepEqual([...t.shape], shape, what);
  assert.equal(t.dtype, dtype, what);
  assert.deepEqual(t.bits(), Tensor.random(shape, dtype, { seed }).bits(), `${what}: seed ${seed}`);
}

describe('profile: synthetic inputs at their edges', () => {
  const T = 3;
  const { C, K, Hv } = QWEN35_4B;

  it('the Qwen3.5-4B layer', () => {
    assert.deepEqual({ ...QWEN35_4B }, { C: 8192, K: 4, Hk: 16, Hv: 32, Dk: 128, Dv: 128 });
    assert.deepEqual(PROFILE_OPS, ['conv', 'postconv', 'fused']);
  });

  it('conv: x, weight, one sequence without initial state, bf16 out', () => {
    const { inputs, forward } = syntheticInputs('conv', T);
    assert.deepEqual(Object.keys(inputs), ['x', 'weight', 'queryStartLoc', 'hasInitialState', 'convState']);
    isRandom(inputs.x, [T, C], 'bf16', 1, 'x');
    isRandom(inputs.weight, [C, K], 'bf16', 2, 'weight');
    isRandom(inputs.convState, [1, C, K - 1], 'f32', 3, 'convState');
    assert.deepEqual(inputs.queryStartLoc, [0, T]);
    assert.deepEqual(inputs.hasInitialState, [false]);
    assert.deepEqual(forward, { outDtype: 'bf16' });
  });

  it('postconv: the conv output and the gates, the head dimensions', () => {
    const { inputs, forward } = syntheticInputs('postconv', T);
    assert.deepEqual(Object.keys(inputs), ['convOut', 'a', 'b', 'ALog', 'dtBias']);
    isRandom(inputs.convOut, [T, C], 'bf16', 1, 'convOut');
    isRandom(inputs.a, [T, Hv], 'bf16', 4, 'a');
    isRandom(inputs.b, [T, Hv], 'bf16', 5, 'b');
    isRandom(inputs.ALog, [Hv], 'f32', 6, 'ALog');
    isRandom(inputs.dtBias, [Hv], 'f32', 7, 'dtBias');
    assert.deepEqual(forward, { Hk: 16, Hv: 32, Dk: 128, Dv: 128, qkvDtype: 'bf16' });
  });

  it('fused: both sets of inputs, the head dimensions and a bf16 conv', () => {
    const { inputs, forward } = syntheticInputs('fused', T);
    assert.deepEqual(Object.keys(inputs), ['x', 'weight', 'queryStartLoc', 'hasInitialState', 'convState', 'a', 'b', 'ALog', 'dtBias']);
    isRandom(inputs.x, [T, C], 'bf16', 1, 'x');
    isRandom(inputs.weight, [C, K], 'bf16', 2, 'weight');
    isRandom(inputs.a, [T, Hv], 'bf16', 4, 'a');
    assert.deepEqual(inputs.queryStartLoc, [0, T]);
    assert.deepEqual(forward, { Hk: 16, Hv: 32, Dk: 128, Dv: 128, qkvDtype: 'bf16', convDtype: 'bf16' });
  });
});

describe('profile: job inputs at their edges', () => {
  let dir = '';
  beforeEach(() => (dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gdnlab-job-'))));
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('tensors as raw bytes with their layout, plain values as JSON, undefined skipped; read back the same', () => {
    const padded = Tensor.random([2, 3], 'f32', { seed: 1, rowStride: 5, offset: 2 });
    const plain = Tensor.from([1, 2, 3, 4], [4], 'bf16');
    const values = { padded, plain, n: 7, flag: true, name: 'x', none: null, list: [0, 3, 5], flags: [true, false], empty: [], skipped: undefined };
    const job = writeInputs(values, dir);
    assert.deepEqual(Object.keys(job), ['padded', 'plain', 'n', 'flag', 'name', 'none', 'list', 'flags', 'empty']);
    assert.deepEqual(job.padded, { kind: 'tensor', file: path.join(dir, 'padded.bin'), shape: [2, 3], dtype: 'f32', rowStride: 5, offset: 2 });
    assert.deepEqual(job.plain, { kind: 'tensor', file: path.join(dir, 'plain.bin'), shape: [4], dtype: 'bf16', rowStride: 4, offset: 0 });
    assert.deepEqual(job.n, { kind: 'json', value: 7 });
    assert.deepEqual(job.none, { kind: 'json', value: null });
    assert.deepEqual(job.flags, { kind: 'json', value: [true, false] });
    assert.deepEqual(new Uint8Array(fs.readFileSync(path.join(dir, 'padded.bin'))), (padded.storage as HostStorage).data);
    const back = readInputs(JSON.parse(JSON.stringify(job)));
    assert.deepEqual(Object.keys(back), Object.keys(job));
    const p = back.padded as Tensor;
    assert.deepEqual([p.shape, p.dtype, p.rowStride, p.offset], [[2, 3], 'f32', 5, 2]);
    assert.deepEqual(p.bits(), padded.bits());
    assert.deepEqual((back.plain as Tensor).toArray(), [1, 2, 3, 4]);
    assert.deepEqual([back.n, back.flag, back.name, back.none, back.list, back.flags, back.empty], [7, true, 'x', null, [0, 3, 5], [true, false], []]);
  });

  it('anything else is refused with its message; a released tensor by name', () => {
    const msg = (text: string) => (e: unknown) => e instanceof TypeError && e.message === text;
    assert.throws(() => writeInputs({ o: { a: 1 } }, dir), msg('inputs.o: expected a Tensor, a number list or a plain value, got Object'));
    assert.throws(() => writeInputs({ l: [1, 'a'] }, dir), (e: unknown) => e instanceof TypeError && e.message.startsWith('inputs.l: expected a Tensor, a number list or a plain value, got '));
    assert.throws(() => writeInputs({ s: ['a'] }, dir), (e: unknown) => e instanceof TypeError && e.message.startsWith('inputs.s: expected'));
    assert.throws(() => writeInputs({ f: () => 1 }, dir), (e: unknown) => e instanceof TypeError && e.message.startsWith('inputs.f: expected'));
    const t = Tensor.from([1, 2], [2], 'f32');
    t.release();
    assert.throws(() => writeInputs({ gone: t }, dir), (e: unknown) => e instanceof Error && e.message === 'inputs.gone: tensor [2] f32 was released');
    assert.deepEqual(fs.readdirSync(dir), []);
  });
});
