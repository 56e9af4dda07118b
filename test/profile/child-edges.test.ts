// lib/profile/child.ts, the profiled child of gdn.profile, run in this process: a job is written to a scratch
// folder as gdn.profile writes it, and runJob (and the child's main, in a fresh copy of the module loaded as
// the main module) is called directly, with each op's forwardSync and the arm definers replaced by recorders.
// Checked exactly: the options each launch gets (arm, mapping, the job's forward options, the backend), what
// the manifest records per launch (label, the arm that ran, output elements, the contract, user or not), the
// manifest's text, the backend opened, and the usage error.

import { strict as assert } from 'assert';
import * as fs from 'fs';
import * as path from 'path';
import { outputElements, runJob } from '../../lib/profile/child';
import { ProfileJob, writeInputs } from '../../lib/profile/job';
import { Backend } from '../../lib/backend';
import { Tensor } from '../../lib/tensor';
import { Stubs } from '../cli/edges-helpers';
import { tempDir } from '../notebooks/helpers';

// eslint-disable-next-line @typescript-eslint/no-var-requires
const Module = require('module') as {
  new (id: string, parent: unknown): { filename: string; paths: string[]; load(f: string): void; exports: unknown };
  _nodeModulePaths(dir: string): string[];
};
const conv = require('../../lib/ops/conv') as Record<string, unknown>;
const postconv = require('../../lib/ops/postconv') as Record<string, unknown>;
const fused = require('../../lib/ops/fused') as Record<string, unknown>;
const define = require('../../lib/arms/define') as Record<string, unknown>;
const childFile = require.resolve('../../lib/profile/child');

const shaped = (...shape: number[]) => ({ shape }) as unknown as Tensor;

interface Rec {
  op: string;
  inputs: Record<string, unknown>;
  opts: Record<string, unknown>;
}

describe('profile child: edges (ops and definers replaced)', () => {
  const stubs = new Stubs();
  let dir: string;
  let calls: Rec[];
  let defined: { how: string; spec: unknown; opts: unknown }[];
  let released: string[];
  const backend = { kind: 'host', marker: 'the backend' } as unknown as Backend;

  beforeEach(() => {
    dir = tempDir('profile-child-edges');
    calls = [];
    defined = [];
    released = [];
    stubs.set(conv, 'forwardSync', (inputs: Record<string, unknown>, opts: Record<string, unknown>) => {
      calls.push({ op: 'conv', inputs, opts });
      const n = calls.length;
      return { contract: { arm: `${String(opts.arm)}-ran`, mapping: String(opts.mapping ?? 'sequence'), threadsPerBlock: 32 * n }, release: () => released.push(`conv ${n}`) };
    });
    stubs.set(postconv, 'forwardSync', (inputs: Record<string, unknown>, opts: Record<string, unknown>) => {
      calls.push({ op: 'postconv', inputs, opts });
      const n = calls.length;
      return { arm: `${String(opts.arm)}-pc`, launch: { unused: true }, release: () => released.push(`postconv ${n}`) };
    });
    stubs.set(fused, 'forwardSync', (inputs: Record<string, unknown>, opts: Record<string, unknown>) => {
      calls.push({ op: 'fused', inputs, opts });
      const n = calls.length;
      return { launch: { arm: `${String(opts.arm)}-f`, grid: [n, 1, 1] }, release: () => released.push(`fused ${n}`) };
    });
    stubs.set(define, 'defineConvArm', (spec: unknown, opts: unknown) => void defined.push({ how: 'conv', spec, opts }));
    stubs.set(define, 'definePostconvArm', (spec: unknown, opts: unknown) => void defined.push({ how: 'postconv', spec, opts }));
  });
  afterEach(() => {
    stubs.restore();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const convInputs = () => ({ x: Tensor.from([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12], [4, 3], 'f32'), weight: Tensor.zeros([3, 2], 'f32'), queryStartLoc: [0, 4], hasInitialState: [true] });

  function job(op: ProfileJob['op'], inputs: Record<string, unknown>, extra: Partial<ProfileJob> = {}): ProfileJob {
    return { op, inputs: writeInputs(inputs, dir), forward: { outDtype: 'bf16' }, arms: [], define: [], manifest: path.join(dir, 'launches.json'), ...extra };
  }

  it('outputElements: T × C for conv; T × (2·Hk·Dk + Hv·Dv + 2·Hv) from convOut (post-conv) or x (fused)', () => {
    assert.equal(outputElements('conv', { x: shaped(11, 13) }, {}), 143);
    const fwd = { Hk: 2, Dk: 3, Hv: 5, Dv: 7 };
    assert.equal(outputElements('postconv', { convOut: shaped(11, 99), x: shaped(1, 1) }, fwd), 11 * (12 + 35 + 10));
    assert.equal(outputElements('fused', { x: shaped(17, 99), convOut: shaped(1, 1) }, fwd), 17 * (12 + 35 + 10));
  });

  it('conv: each arm launched once, in order, with its mapping only when it has one; the inputs read back from the job', async () => {
    const j = job('conv', convInputs(), { arms: [{ label: 'scalar', arm: 'scalar' }, { label: 'vec/exact', arm: 'vec', mapping: 'exact' }, { label: 'mine', arm: 'mine' }], define: [{ op: 'conv', spec: { name: 'mine', body: 'b' } }] });
    const launches = await runJob(j, backend);
    assert.deepEqual(defined, [{ how: 'conv', spec: { name: 'mine', body: 'b' }, opts: { backend } }]);
    assert.deepEqual(calls.map((c) => c.opts), [
      { outDtype: 'bf16', arm: 'scalar', backend },
      { outDtype: 'bf16', arm: 'vec', mapping: 'exact', backend },
      { outDtype: 'bf16', arm: 'mine', backend },
    ]);
    assert.ok(!('mapping' in calls[0].opts));
    const x = calls[0].inputs.x as Tensor;
    assert.deepEqual(x.shape, [4, 3]);
    assert.deepEqual(Array.from(x.toFloat64()), [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]);
    assert.deepEqual(calls[0].inputs.queryStartLoc, [0, 4]);
    assert.deepEqual(launches, [
      { label: 'scalar', ran: 'scalar-ran/sequence', outputElements: 12, launch: { arm: 'scalar-ran', mapping: 'sequence', threadsPerBlock: 32 }, user: false },
      { label: 'vec/exact', ran: 'vec-ran/exact', outputElements: 12, launch: { arm: 'vec-ran', mapping: 'exact', threadsPerBlock: 64 }, user: false },
      { label: 'mine', ran: 'mine-ran/sequence', outputElements: 12, launch: { arm: 'mine-ran', mapping: 'sequence', threadsPerBlock: 96 }, user: true },
    ]);
    assert.deepEqual(released, ['conv 1', 'conv 2', 'conv 3']);
  });

  it('post-conv: the arm that ran, its launch, user arms defined again (post-conv definer) and marked', async () => {
    const inputs = { convOut: Tensor.zeros([3, 2], 'f32'), a: Tensor.zeros([3, 1], 'f32'), queryStartLoc: [0, 3] };
    const fwd = { Hk: 1, Dk: 1, Hv: 1, Dv: 1, qkvDtype: 'f32' };
    const j = job('postconv', inputs, { forward: fwd, arms: [{ label: 'tree', arm: 'tree' }, { label: 'pc-user', arm: 'pc-user' }], define: [{ op: 'postconv', spec: { name: 'pc-user' } }] });
    const launches = await runJob(j, backend);
    assert.deepEqual(defined, [{ how: 'postconv', spec: { name: 'pc-user' }, opts: { backend } }]);
    assert.deepEqual(calls.map((c) => [c.op, c.opts]), [['postconv', { ...fwd, arm: 'tree', backend }], ['postconv', { ...fwd, arm: 'pc-user', backend }]]);
    const per = 3 * (2 + 1 + 2);
    assert.deepEqual(launches, [
      { label: 'tree', ran: 'tree-pc', outputElements: per, launch: { arm: 'tree-pc' }, user: false },
      { label: 'pc-user', ran: 'pc-user-pc', outputElements: per, launch: { arm: 'pc-user-pc' }, user: true },
    ]);
    assert.deepEqual(released, ['postconv 1', 'postconv 2']);
  });

  it('fused: the launch as the op reports it, never a user arm', async () => {
    const inputs = { x: Tensor.zeros([2, 4], 'f32') };
    const fwd = { Hk: 1, Dk: 1, Hv: 1, Dv: 2 };
    const j = job('fused', inputs, { forward: fwd, arms: [{ label: 'f1', arm: 'one' }, { label: 'f2', arm: 'two' }], define: [{ op: 'conv', spec: { name: 'two' } }] });
    const launches = await runJob(j, backend);
    assert.deepEqual(calls.map((c) => [c.op, c.opts]), [['fused', { ...fwd, arm: 'one', backend }], ['fused', { ...fwd, arm: 'two', backend }]]);
    assert.deepEqual(launches, [
      { label: 'f1', ran: 'one-f', outputElements: 2 * (2 + 2 + 2), launch: { arm: 'one-f', grid: [1, 1, 1] }, user: false },
      { label: 'f2', ran: 'two-f', outputElements: 2 * (2 + 2 + 2), launch: { arm: 'two-f', grid: [2, 1, 1] }, user: false },
    ]);
    assert.deepEqual(released, ['fused 1', 'fused 2']);
  });

  describe('main (a fresh copy of the module loaded as the main module)', () => {
    const saved = { argv: process.argv, exit: process.exit, error: console.error, main: (process as { mainModule?: unknown }).mainModule };
    let opened: string[];
    let errors: string[];
    afterEach(() => {
      process.argv = saved.argv;
      process.exit = saved.exit;
      console.error = saved.error;
      (process as { mainModule?: unknown }).mainModule = saved.main;
    });

    /** Loads child.js as `node child.js ...args` would, and resolves with the exit status it asks for. */
    function runMain(args: string[], asMain = true): Promise<number | undefined> {
      opened = [];
      errors = [];
      stubs.set(Backend, 'open', (kind: string) => {
        opened.push(kind);
        return backend;
      });
      return new Promise((resolve) => {
        process.exit = ((code?: number) => resolve(code)) as typeof process.exit;
        console.error = (...a: unknown[]) => void errors.push(a.map(String).join(' '));
        process.argv = [process.execPath, childFile, ...args];
        const m = new Module(childFile, module);
        m.filename = childFile;
        m.paths = Module._nodeModulePaths(path.dirname(childFile));
        if (asMain) (process as { mainModule?: unknown }).mainModule = m;
        m.load(childFile);
        (process as { mainModule?: unknown }).mainModule = saved.main;
        if (!asMain) setTimeout(() => resolve(undefined), 20);
      });
    }

    it('writes the launches to the manifest (one-space JSON), on the job\'s backend, and exits 0', async () => {
      const j = job('conv', convInputs(), { arms: [{ label: 'scalar', arm: 'scalar' }], backend: 'host' });
      const file = path.join(dir, 'job.json');
      fs.writeFileSync(file, JSON.stringify(j));
      assert.equal(await runMain([file]), 0);
      assert.deepEqual(opened, ['host']);
      const launches = [{ label: 'scalar', ran: 'scalar-ran/sequence', outputElements: 12, launch: { arm: 'scalar-ran', mapping: 'sequence', threadsPerBlock: 32 }, user: false }];
      assert.equal(fs.readFileSync(j.manifest, 'utf8'), JSON.stringify(launches, null, 1));
      assert.equal(calls[0].opts.backend, backend);
      assert.deepEqual(errors, []);
    });

    it('opens the CUDA backend when the job names none', async () => {
      const j = job('conv', convInputs(), { arms: [{ label: 'scalar', arm: 'scalar' }] });
      const file = path.join(dir, 'job.json');
      fs.writeFileSync(file, JSON.stringify(j));
      assert.equal(await runMain([file]), 0);
      assert.deepEqual(opened, ['cuda']);
    });

    it('without a job file: the usage on stderr, exit 1; a failing job: its message, exit 1', async () => {
      assert.equal(await runMain([]), 1);
      assert.deepEqual(errors, ['gdnlab profile child: usage: node child.js JOB.json']);
      assert.equal(fs.existsSync(path.join(dir, 'launches.json')), false);
      const j = job('conv', convInputs(), { arms: [{ label: 'scalar', arm: 'scalar' }], backend: 'host' });
      stubs.set(conv, 'forwardSync', () => {
        throw new Error('outDtype: f16 is not an output dtype');
      });
      const file = path.join(dir, 'job.json');
      fs.writeFileSync(file, JSON.stringify(j));
      assert.equal(await runMain([file]), 1);
      assert.deepEqual(errors, ['gdnlab profile child: outDtype: f16 is not an output dtype']);
      assert.equal(fs.existsSync(j.manifest), false);
    });

    it('loaded as a module (not the main one), it runs nothing', async () => {
      assert.equal(await runMain([path.join(dir, 'absent.json')], false), undefined);
      assert.deepEqual(opened, []);
      assert.deepEqual(errors, []);
    });
  });
});
