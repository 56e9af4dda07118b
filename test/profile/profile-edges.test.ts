// lib/profile/profile.ts in this process: ncu (spawn) is a script of the test that writes the child's
// manifest and prints a recorded report (test/fixtures/ncu/synthetic-conv-raw.csv), the kill timer is recorded
// instead of armed, and the ops' forwards, ptxas's inspection, the copy timing, the arm table and the kernel's
// display channel are recorders. Checked exactly: where ncu is looked for and found, what is said to be
// missing, the arms and options refused (naming the argument), the op's minimal traffic, ncu's command lines
// and environment, the rerun without metrics ncu rejects, timeouts and failures with their messages, the
// result without a profile (each arm's launch, registers, spills and occupancy) and with one, and the output.

import { strict as assert } from 'assert';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { ArmRequest, expectArms, findNcu, metricsNamedInError, minimalBytes, ncuCandidates, profile, profileResult, profileUnderNcu, unavailableReason } from '../../lib/profile/profile';
import { ProfileJob } from '../../lib/profile/job';
import { metricList, ncuImportArgs, ncuRecordArgs } from '../../lib/profile/metrics';
import { analyse, tableRows } from '../../lib/profile/report';
import { parseNcuCsv } from '../../lib/profile/ncu-csv';
import { convBytes } from '../../lib/ops/conv';
import { postconvBytes } from '../../lib/ops/postconv';
import { fusedBytes } from '../../lib/ops/fused';
import { describe as describeValue } from '../../lib/dtype';
import { Tensor } from '../../lib/tensor';
import { MIME_BUNDLE } from '../../lib/view/display';
import { renderTable } from '../../lib/view/table';
import { Stubs } from '../cli/edges-helpers';
import { tempDir } from '../notebooks/helpers';
import { FakeChild, SpawnCall, Timer, withSpawn, withTimers } from '../notebooks/fake-spawn';
import { withEnv } from '../stand-ins';

// The modules themselves (not import-star wrappers): profile.ts reads their exports at each call.
// eslint-disable-next-line @typescript-eslint/no-var-requires
const fsModule = require('fs') as Record<string, unknown>;
const table = require('../../lib/arms/table') as Record<string, unknown>;
const backendModule = require('../../lib/backend') as Record<string, unknown>;
const convModule = require('../../lib/ops/conv') as Record<string, unknown>;
const postconvModule = require('../../lib/ops/postconv') as Record<string, unknown>;
const fusedModule = require('../../lib/ops/fused') as Record<string, unknown>;
const copyModule = require('../../lib/ops/copy') as Record<string, unknown>;
const timing = require('../../lib/analysis/timing') as Record<string, unknown>;
const inspect = require('../../lib/arms/inspect') as Record<string, unknown>;
const registry = require('../../lib/arms/registry') as Record<string, unknown>;
const define = require('../../lib/arms/define') as Record<string, unknown>;
const displayModule = require('../../lib/view/display') as Record<string, unknown>;

const FIXTURES = path.join(__dirname, '..', '..', '..', 'test', 'fixtures', 'ncu');
const CSV = fs.readFileSync(path.join(FIXTURES, 'synthetic-conv-raw.csv'), 'utf8');
const LAUNCHES = (JSON.parse(fs.readFileSync(path.join(FIXTURES, 'synthetic-conv-raw.json'), 'utf8')) as { launches: unknown[] }).launches;
const CHILD = require.resolve('../../lib/profile/child');

const ARMS: Record<string, string[]> = { conv: ['scalar', 'vec', 'stream-mufu'], postconv: ['tree', 'vec-tile'], fused: ['fz'] };

const jobOf = (call: SpawnCall) => JSON.parse(fs.readFileSync(call.args[call.args.length - 1], 'utf8')) as ProfileJob;

/** ncu's stand-in: a record run writes the child's manifest (unless told not to) and exits `status`; --import prints the CSV. */
function ncu(o: { status?: number | null; signal?: string | null; manifest?: boolean; out?: string; err?: string } = {}) {
  return (child: FakeChild, call: SpawnCall) => {
    if (call.args[0] === '--import') {
      child.say('stdout', CSV);
      child.emit('close', 0, null);
      return;
    }
    if (o.manifest !== false) fs.writeFileSync(jobOf(call).manifest, JSON.stringify(LAUNCHES));
    if (o.out) child.say('stdout', o.out);
    if (o.err) child.say('stderr', o.err);
    child.emit('close', o.status === undefined ? 0 : o.status, o.signal ?? null);
  };
}

const convInputs = () => ({ x: Tensor.zeros([8, 4], 'bf16'), weight: Tensor.zeros([4, 3], 'f32'), queryStartLoc: [0, 3, 8], hasInitialState: [true, false], convState: Tensor.zeros([2, 4, 2], 'f32') });

describe('profile: edges (ncu, ops and timing replaced)', () => {
  const stubs = new Stubs();
  let dir: string;
  beforeEach(() => {
    dir = tempDir('profile-edges');
    stubs.set(table, 'armNames', (op: string) => [...ARMS[op]]);
  });
  afterEach(() => {
    stubs.restore();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  describe('finding ncu and saying what is missing', () => {
    it('ncuCandidates: the explicit path alone; else $GDNLAB_NCU, PATH (empty entries skipped), CUDA\'s bin, Nsight versions newest first', () => {
      assert.deepEqual(ncuCandidates('/my/ncu'), ['/my/ncu']);
      const asked: string[] = [];
      const real = fsModule.readdirSync as (p: string) => string[];
      stubs.set(fsModule, 'readdirSync', (p: string) => {
        asked.push(p);
        return p === '/opt/nvidia/nsight-compute' ? ['2023.1', '2025.3', '2024.2'] : real(p);
      });
      const got = withEnv({ GDNLAB_NCU: '/env/ncu', PATH: `/a${path.delimiter}${path.delimiter}/b` }, () => ncuCandidates());
      assert.deepEqual(got, ['/env/ncu', '/a/ncu', '/b/ncu', '/usr/local/cuda/bin/ncu', '/opt/nvidia/nsight-compute/2025.3/ncu', '/opt/nvidia/nsight-compute/2024.2/ncu', '/opt/nvidia/nsight-compute/2023.1/ncu']);
      assert.deepEqual(asked, ['/opt/nvidia/nsight-compute']);
      assert.deepEqual(withEnv({ GDNLAB_NCU: '/env/ncu', PATH: '/a' }, () => ncuCandidates('')).slice(0, 2), ['/env/ncu', '/a/ncu']);
      stubs.set(fsModule, 'readdirSync', () => {
        throw new Error('ENOENT');
      });
      assert.deepEqual(withEnv({ GDNLAB_NCU: undefined, PATH: undefined }, () => ncuCandidates()), ['/usr/local/cuda/bin/ncu']);
      assert.deepEqual(withEnv({ GDNLAB_NCU: '', PATH: '' }, () => ncuCandidates()), ['/usr/local/cuda/bin/ncu']);
    });

    it('findNcu: the first candidate that is executable and a file; \'\' when none is', () => {
      const access: [string, number][] = [];
      stubs.set(fsModule, 'accessSync', (f: string, mode: number) => {
        access.push([f, mode]);
        if (f.startsWith('/no')) throw new Error('EACCES');
      });
      stubs.set(fsModule, 'statSync', (f: string) => ({ isFile: () => f !== '/d/dir/ncu' }));
      stubs.set(fsModule, 'readdirSync', () => []);
      const found = withEnv({ GDNLAB_NCU: '/no/ncu', PATH: ['/d/dir', '/e', '/f'].join(path.delimiter) }, () => findNcu());
      assert.equal(found, '/e/ncu');
      assert.deepEqual(access, [['/no/ncu', fs.constants.X_OK], ['/d/dir/ncu', fs.constants.X_OK], ['/e/ncu', fs.constants.X_OK]]);
      assert.equal(findNcu('/no/explicit'), '');
      assert.equal(findNcu('/x/ncu'), '/x/ncu');
      stubs.set(fsModule, 'statSync', () => {
        throw new Error('gone');
      });
      assert.equal(findNcu('/x/ncu'), '');
    });

    it('unavailableReason: the host backend (with its note), ncu missing, both joined, nothing', () => {
      const host = 'profiling needs the CUDA backend on an NVIDIA GPU; this is the host backend, which replays the kernels on the CPU and has no GPU counters';
      const noNcu = "Nsight Compute's ncu was not found (looked at $GDNLAB_NCU, PATH, /usr/local/cuda/bin and /opt/nvidia/nsight-compute); install Nsight Compute or pass { ncu: '/path/to/ncu' }";
      assert.equal(unavailableReason('cuda', '/n'), null);
      assert.equal(unavailableReason('host', '/n'), `${host}.`);
      assert.equal(unavailableReason('host', '/n', 'GDN_BACKEND=host'), `${host.replace('host backend,', 'host backend (GDN_BACKEND=host),')}.`);
      assert.equal(unavailableReason('cuda', ''), `${noNcu}.`);
      assert.equal(unavailableReason('host', ''), `${host}; and ${noNcu}.`);
    });

    it('metricsNamedInError: the asked metrics that an ERROR line names, in the asked order', () => {
      const out = 'ok m2 here\n==ERROR== bad m3 and m1\n==WARNING== m4\nERROR m5';
      assert.deepEqual(metricsNamedInError(out, ['m1', 'm2', 'm3', 'm4', 'm5', 'm6']), ['m1', 'm3', 'm5']);
      assert.deepEqual(metricsNamedInError('error m1', ['m1']), []);
    });
  });

  describe('arms and options', () => {
    it('expectArms: labels, arms and conv mappings; every refusal names the argument', () => {
      assert.deepEqual(expectArms('conv', ['scalar', 'vec/exact', 'stream-mufu/exact-racy', 'vec/sequence']), [
        { label: 'scalar', arm: 'scalar', mapping: undefined },
        { label: 'vec/exact', arm: 'vec', mapping: 'exact' },
        { label: 'stream-mufu/exact-racy', arm: 'stream-mufu', mapping: 'exact-racy' },
        { label: 'vec/sequence', arm: 'vec', mapping: 'sequence' },
      ]);
      assert.deepEqual(expectArms('postconv', ['vec-tile']), [{ label: 'vec-tile', arm: 'vec-tile', mapping: undefined }]);
      const refuses = (op: 'conv' | 'postconv' | 'fused', arms: unknown, type: typeof TypeError | typeof RangeError, msg: string) =>
        assert.throws(() => expectArms(op, arms), (e: Error) => e instanceof type && e.message === msg);
      refuses('conv', [], TypeError, 'arms: expected a non-empty list of conv arm names, got []'.replace('[]', describeValue([])));
      refuses('fused', 'fz', TypeError, `arms: expected a non-empty list of fused arm names, got ${describeValue('fz')}`);
      refuses('conv', ['scalar', 3], TypeError, `arms[1]: expected an arm name, got ${describeValue(3)}`);
      refuses('conv', ['nope'], RangeError, "arms[0]: 'nope' is not a conv arm (conv arms: scalar, vec, stream-mufu)");
      refuses('postconv', ['vec-tile', 'tree/exact'], RangeError, "arms[1]: 'tree/exact': only conv arms take a mapping (arm/mapping)");
      refuses('conv', ['vec/diagonal'], RangeError, "arms[0]: 'vec/diagonal': expected arm or arm/mapping with mapping one of exact, exact-racy, sequence");
      refuses('conv', ['vec/exact/x'], RangeError, "arms[0]: 'vec/exact/x': expected arm or arm/mapping with mapping one of exact, exact-racy, sequence");
    });

    it('minimalBytes: the bench\'s formulas with each input\'s shape, dtype and count', () => {
      const inputs = convInputs();
      assert.equal(minimalBytes('conv', inputs, { outDtype: 'bf16' }), convBytes({ T: 8, C: 4, K: 3, N: 2, nInitial: 1, xBytes: 2, outBytes: 2 }));
      assert.equal(minimalBytes('conv', inputs, {}), convBytes({ T: 8, C: 4, K: 3, N: 2, nInitial: 1, xBytes: 2, outBytes: 4 }));
      assert.equal(convBytes({ T: 8, C: 4, K: 3, N: 2, nInitial: 1, xBytes: 2, outBytes: 2 }), 8 * 4 * 4 + 3 * 4 * 2 * 4);
      // Tensors for the sequence starts and the initial-state flags; none of the latter: no initial state read.
      const asTensors = { ...inputs, queryStartLoc: Tensor.from([0, 2, 5, 8], [4], 'i32'), hasInitialState: Tensor.from([1, 0, 1], [3], 'i32') };
      assert.equal(minimalBytes('conv', asTensors, {}), convBytes({ T: 8, C: 4, K: 3, N: 3, nInitial: 2, xBytes: 2, outBytes: 4 }));
      assert.equal(minimalBytes('conv', { ...inputs, hasInitialState: undefined }, {}), convBytes({ T: 8, C: 4, K: 3, N: 2, nInitial: 0, xBytes: 2, outBytes: 4 }));
      assert.equal(minimalBytes('conv', { ...inputs, hasInitialState: null }, {}), convBytes({ T: 8, C: 4, K: 3, N: 2, nInitial: 0, xBytes: 2, outBytes: 4 }));
      const shape = { Hk: 1, Hv: 2, Dk: 3, Dv: 5 };
      const pc = { convOut: Tensor.zeros([6, 16], 'f32'), a: Tensor.zeros([6, 2], 'bf16') };
      assert.equal(minimalBytes('postconv', pc, { ...shape, qkvDtype: 'bf16' }), postconvBytes(6, shape, 4, 2, 2));
      assert.equal(minimalBytes('postconv', pc, shape), postconvBytes(6, shape, 4, 2, 4));
      const fz = { x: Tensor.zeros([7, 16], 'bf16'), a: Tensor.zeros([7, 2], 'f32'), weight: Tensor.zeros([16, 4], 'f32'), queryStartLoc: [0, 7], hasInitialState: [false] };
      assert.equal(minimalBytes('fused', fz, { ...shape, qkvDtype: 'bf16' }), fusedBytes(7, shape, { xBytes: 2, qkvBytes: 2, gateBytes: 4, N: 1, nInitial: 0, K: 4 }));
      assert.equal(minimalBytes('fused', fz, shape), fusedBytes(7, shape, { xBytes: 2, qkvBytes: 4, gateBytes: 4, N: 1, nInitial: 0, K: 4 }));
    });

    it('minimalBytes: a missing tensor and a bad head shape are refused, naming them', () => {
      const pc = { convOut: Tensor.zeros([6, 16], 'f32'), a: Tensor.zeros([6, 2], 'f32') };
      assert.throws(() => minimalBytes('conv', { x: [1, 2] }, {}), (e: Error) => e instanceof TypeError && e.message === `inputs.x: expected a Tensor, got ${describeValue([1, 2])}`);
      assert.throws(() => minimalBytes('conv', { x: Tensor.zeros([2, 2], 'f32') }, {}), (e: Error) => e.message === `inputs.weight: expected a Tensor, got ${describeValue(undefined)}`);
      const good = { Hk: 1, Hv: 1, Dk: 1, Dv: 1 };
      for (const k of ['Hk', 'Hv', 'Dk', 'Dv']) {
        for (const bad of [0, 1.5, '2', undefined]) {
          const msg = `${k}: expected a positive integer (the postconv op's head shape), got ${describeValue(bad)}`;
          assert.throws(() => minimalBytes('postconv', pc, { ...good, [k]: bad }), (e: Error) => e instanceof TypeError && e.message === msg);
        }
      }
      assert.throws(() => minimalBytes('fused', { x: Tensor.zeros([2, 2], 'f32'), a: Tensor.zeros([2, 1], 'f32') }, { ...good, Dv: 0 }), /^TypeError: Dv: expected a positive integer \(the fused op's head shape\)/);
      assert.equal(minimalBytes('postconv', pc, good), postconvBytes(6, good, 4, 4, 4));
    });
  });

  describe('profileUnderNcu (ncu replaced)', () => {
    const arms = (): ArmRequest[] => [{ label: 'scalar', arm: 'scalar' }, { label: 'vec/exact', arm: 'vec', mapping: 'exact' }];

    it('records under ncu with the child\'s command line, the job written beside the report, then imports the raw page', async () => {
      const fwd = { outDtype: 'bf16' };
      let job: ProfileJob | undefined;
      await withEnv({ GDNLAB_PROFILE_EDGES: 'parent' }, () => withTimers((timers) => withSpawn([(child, call) => {
        if (call.args[0] !== '--import') job = jobOf(call);
        ncu()(child, call);
      }], async (calls) => {
        const rec = await profileUnderNcu('/bin/my-ncu', 'conv', arms(), convInputs(), fwd, 4321);
        assert.equal(calls.length, 2);
        const dir = path.dirname(rec.reportFile);
        assert.ok(path.basename(dir).startsWith('gdnlab-profile-') && path.dirname(dir) === os.tmpdir());
        const report = path.join(dir, 'profile.ncu-rep');
        const jobFile = path.join(dir, 'job.json');
        assert.equal(rec.reportFile, report);
        assert.equal(calls[0].cmd, '/bin/my-ncu');
        assert.deepEqual(calls[0].args, ncuRecordArgs(report, metricList(), [process.execPath, CHILD, jobFile]));
        assert.equal(calls[0].opts.env!.GDN_BACKEND, 'cuda');
        assert.equal(calls[0].opts.env!.GDNLAB_PROFILE_EDGES, 'parent');
        assert.deepEqual(calls[0].opts.stdio, ['ignore', 'pipe', 'pipe']);
        assert.equal(calls[1].cmd, '/bin/my-ncu');
        assert.deepEqual(calls[1].args, ncuImportArgs(report));
        assert.equal(calls[1].opts.env, process.env);
        assert.deepEqual(calls[1].opts.stdio, ['ignore', 'pipe', 'pipe']);
        assert.deepEqual(timers.map((t) => [t.ms, t.cleared]), [[4321, true], [120000, true]]);
        assert.deepEqual(job!.arms, arms().map((a) => JSON.parse(JSON.stringify(a))));
        assert.deepEqual(job!.forward, fwd);
        assert.equal(job!.op, 'conv');
        assert.equal(job!.backend, 'cuda');
        assert.deepEqual(job!.define, []);
        assert.equal(job!.manifest, path.join(dir, 'launches.json'));
        assert.deepEqual(Object.keys(job!.inputs), ['x', 'weight', 'queryStartLoc', 'hasInitialState', 'convState']);
        assert.deepEqual(job!.inputs.queryStartLoc, { kind: 'json', value: [0, 3, 8] });
        assert.equal((job!.inputs.x as { file: string }).file, path.join(dir, 'x.bin'));
        assert.equal(rec.csv, CSV);
        assert.equal(rec.csvFile, path.join(dir, 'profile.csv'));
        assert.equal(fs.readFileSync(rec.csvFile, 'utf8'), CSV);
        assert.deepEqual(rec.launches, LAUNCHES);
        assert.deepEqual(rec.dropped, []);
        fs.rmSync(dir, { recursive: true, force: true });
      })));
    });

    it('the child\'s backend is passed to it (GDN_BACKEND and the job)', async () => {
      await withSpawn([(child, call) => {
        if (call.args[0] !== '--import') assert.equal(jobOf(call).backend, 'host');
        ncu()(child, call);
      }], async (calls) => {
        const rec = await profileUnderNcu('/n', 'conv', arms(), convInputs(), {}, 1000, 'host');
        assert.equal(calls[0].opts.env!.GDN_BACKEND, 'host');
        fs.rmSync(path.dirname(rec.reportFile), { recursive: true, force: true });
      });
    });

    it('cell-defined arms: their specs go to the child (copied); one defined elsewhere is refused; fused and built-in arms send none', async () => {
      const specs: Record<string, unknown> = { mine: { name: 'mine', body: 'x' } };
      stubs.set(registry, 'userArm', (op: string, name: string) => (name === 'mine' || name === 'ghost' ? { op, name } : undefined));
      stubs.set(define, 'armSpec', (_op: string, name: string) => specs[name]);
      await withSpawn([(child, call) => {
        if (call.args[0] !== '--import') assert.deepEqual(jobOf(call).define, [{ op: 'conv', spec: { name: 'mine', body: 'x' } }]);
        ncu()(child, call);
      }], async (calls) => {
        const rec = await profileUnderNcu('/n', 'conv', [{ label: 'scalar', arm: 'scalar' }, { label: 'mine', arm: 'mine' }], convInputs(), {}, 1000);
        assert.equal(calls.length, 2);
        fs.rmSync(path.dirname(rec.reportFile), { recursive: true, force: true });
      });
      await withSpawn([(child, call) => {
        if (call.args[0] !== '--import') assert.deepEqual(jobOf(call).define, []);
        ncu()(child, call);
      }], async () => {
        const fz = { x: Tensor.zeros([2, 2], 'f32') };
        const rec = await profileUnderNcu('/n', 'fused', [{ label: 'mine', arm: 'mine' }], fz, {}, 1000);
        fs.rmSync(path.dirname(rec.reportFile), { recursive: true, force: true });
      });
      await withSpawn([() => assert.fail('ncu started')], async () => {
        await assert.rejects(profileUnderNcu('/n', 'postconv', [{ label: 'ghost', arm: 'ghost' }], {}, {}, 1000), (e: Error) => e.message === "arms: 'ghost' was defined by another process; define it in this one (defineArm) to profile it");
      });
    });

    it('a metric this ncu rejects: recorded once more without it, and listed as dropped', async () => {
      const all = metricList();
      const bad = [all[3], all[all.length - 1]];
      let n = 0;
      await withSpawn([(child, call) => {
        if (call.args[0] !== '--import' && n++ === 0) return ncu({ status: 1, manifest: false, err: `==ERROR== Failed to find metric ${bad[0]}\n==ERROR== and ${bad[1]}\n` })(child, call);
        ncu()(child, call);
      }], async (calls) => {
        const rec = await profileUnderNcu('/n', 'conv', arms(), convInputs(), {}, 1000);
        assert.equal(calls.length, 3);
        const report = rec.reportFile;
        const jobFile = path.join(path.dirname(report), 'job.json');
        assert.deepEqual(calls[1].args, ncuRecordArgs(report, all.filter((m) => !bad.includes(m)), [process.execPath, CHILD, jobFile]));
        assert.deepEqual(rec.dropped, bad);
        fs.rmSync(path.dirname(report), { recursive: true, force: true });
      });
    });

    it('rejected metrics twice, or every metric rejected: no further run; ncu\'s last 12 lines in the message', async () => {
      const all = metricList();
      const lines = Array.from({ length: 14 }, (_, i) => `line ${i}`).join('\n');
      // Each run rejects another metric: the second rejection ends it.
      let runs = 0;
      const rejecting = (child: FakeChild, call: SpawnCall) => ncu({ status: 1, manifest: false, out: lines, err: `==ERROR== Failed to find metric ${all[runs++]}\n` })(child, call);
      await withSpawn([rejecting], async (calls) => {
        await assert.rejects(profileUnderNcu('/n', 'conv', arms(), convInputs(), {}, 1000), (e: Error) =>
          e.message === `profile: ncu exited with 1 before the child process wrote its launches; its last output:\n${['line 3', 'line 4', 'line 5', 'line 6', 'line 7', 'line 8', 'line 9', 'line 10', 'line 11', 'line 12', 'line 13', `==ERROR== Failed to find metric ${all[1]}`].join('\n')}`);
        assert.equal(calls.length, 2);
      });
      await withSpawn([ncu({ status: 1, manifest: false, err: `==ERROR== ${all.join(' ')}` })], async (calls) => {
        await assert.rejects(profileUnderNcu('/n', 'conv', arms(), convInputs(), {}, 1000), /^Error: profile: ncu exited with 1 before the child process wrote its launches/);
        assert.equal(calls.length, 1);
      });
    });

    it('failures: exit status or signal, a zero exit without launches, no permission for the counters', async () => {
      const fails = async (o: Parameters<typeof ncu>[0], msg: string) =>
        withSpawn([ncu(o)], async (calls) => {
          await assert.rejects(profileUnderNcu('/n', 'conv', arms(), convInputs(), {}, 1000), (e: Error) => e.message === msg);
          assert.equal(calls.length, 1);
        });
      await fails({ status: 3, out: 'o\n', err: '  e  \n' }, 'profile: ncu exited with 3; its last output:\no\n\n  e');
      await fails({ status: null, signal: 'SIGSEGV', manifest: false }, 'profile: ncu exited with SIGSEGV before the child process wrote its launches; its last output:\n');
      await fails({ status: 0, manifest: false, out: 'done' }, 'profile: ncu exited with 0 before the child process wrote its launches; its last output:\ndone');
      await fails({ status: 1, err: '==ERROR== ERR_NVGPUCTRPERM - The user does not have permission' }, 'profile: ncu may not read the GPU performance counters as this user (ERR_NVGPUCTRPERM): run as root, or let all users profile (NVreg_RestrictProfilingToAdminUsers=0)');
    });

    it('a record run past timeoutMs is killed (SIGKILL) and said so; a failing import gives its last 5 lines', async () => {
      await withTimers(async (timers: Timer[]) => {
        await withSpawn([(child) => {
          assert.equal(timers[0].ms, 250);
          timers[0].fn();
          assert.deepEqual(child.kills, ['SIGKILL']);
          child.say('stderr', 'killed here');
          child.emit('close', null, 'SIGKILL');
        }], async () => {
          await assert.rejects(profileUnderNcu('/n', 'conv', arms(), convInputs(), {}, 250), (e: Error) => e.message === 'profile: ncu did not finish within 250 ms (timeoutMs); its last output:\nkilled here');
        });
      });
      await withSpawn([(child, call) => {
        if (call.args[0] !== '--import') return ncu()(child, call);
        child.say('stdout', 'partial');
        child.say('stderr', 'a\nb\nc\nd\ne\nf\n  ');
        child.emit('close', 2, null);
      }], async () => {
        await assert.rejects(profileUnderNcu('/n', 'conv', arms(), convInputs(), {}, 1000), (e: Error) => e.message === 'profile: ncu --import failed (2): b\nc\nd\ne\nf');
      });
      await withTimers(async (timers) => {
        await withSpawn([(child) => void child.emit('error', new Error('spawn /n EACCES'))], async () => {
          await assert.rejects(profileUnderNcu('/n', 'conv', arms(), convInputs(), {}, 1000), (e: Error) => e.message === 'spawn /n EACCES');
        });
        assert.deepEqual(timers.map((t) => [t.ms, t.cleared]), [[1000, true]]);
      });
    });

    it('ncu\'s output is kept up to 16 MiB (what comes after is dropped)', async () => {
      const big = 'a'.repeat(1 << 24);
      await withSpawn([(child, call) => {
        if (call.args[0] !== '--import') return ncu()(child, call);
        child.say('stdout', big);
        child.say('stdout', 'b');
        child.say('stdout', 'c');
        child.emit('close', 0, null);
      }], async () => {
        const rec = await profileUnderNcu('/n', 'conv', arms(), convInputs(), {}, 1000);
        assert.equal(rec.csv.length, (1 << 24) + 1);
        assert.ok(rec.csv.endsWith('ab'));
        fs.rmSync(path.dirname(rec.reportFile), { recursive: true, force: true });
      });
      await withSpawn([(child, call) => {
        child.say('stderr', big);
        child.say('stderr', '\nb');
        child.say('stderr', '\nc');
        child.emit('close', 5, null);
        void call;
      }], async () => {
        await assert.rejects(profileUnderNcu('/n', 'conv', arms(), convInputs(), {}, 1000), (e: Error) => e.message.endsWith(`\n${big}\nb`));
      });
    });
  });

  describe('profile() (backend, ops, inspection and timing replaced)', () => {
    interface Fwd {
      op: string;
      opts: Record<string, unknown>;
    }
    let forwards: Fwd[];
    let released: number;
    let inspected: unknown[][];
    let shown: unknown[];
    let inKernel: boolean;
    let copies: { bytes: number; opts: Record<string, unknown> }[];
    let timed: { cases: { label: string; op: unknown }[]; opts: Record<string, unknown> }[];
    let copyReleased: number;
    let median: number;
    let inspectAnswer: (op: string, name: string) => unknown;

    const backend = (kind: 'host' | 'cuda', name = kind === 'cuda' ? 'NVIDIA H100' : 'EPYC') => ({ kind, info: () => ({ name, smMajor: 9, smMinor: 0 }) });

    beforeEach(() => {
      forwards = [];
      released = 0;
      inspected = [];
      shown = [];
      inKernel = false;
      copies = [];
      timed = [];
      copyReleased = 0;
      median = 2;
      inspectAnswer = () => ({
        resources: [
          { entry: 'k_bf16_f32', registers: 40, spillStoreBytes: 1, spillLoadBytes: 2 }, { entry: 'k_bf16_bf16', registers: 32, spillStoreBytes: 3, spillLoadBytes: 4 },
          { entry: 'k_f32_f32', registers: 48, spillStoreBytes: 5, spillLoadBytes: 6 }, { entry: 'k_other', registers: 80, spillStoreBytes: 7, spillLoadBytes: 8 },
        ],
        occupancy: [{ occupancy: 0.5, limitedBy: ['registers'] }, { occupancy: 0.755, limitedBy: ['warps', 'shared'] }, { occupancy: 0.375, limitedBy: ['shared'] }, { occupancy: 0.25, limitedBy: ['registers'] }],
      });
      stubs.set(convModule, 'forward', async (_inputs: unknown, opts: Record<string, unknown>) => {
        forwards.push({ op: 'conv', opts });
        const n = forwards.length;
        const contract = [
          { arm: 'scalar', mapping: 'sequence', threadsPerBlock: 64, grid: [4, 1, 1] },
          { arm: 'vec', mapping: 'exact', threadsPerBlock: 128, grid: [2, 3, 1], sharedBytes: 512, tokensPerProgram: 16 },
          { arm: 'stream-mufu', mapping: 'exact', grid: [1, 1, 5] },
          { arm: 'x', mapping: 'y' },
        ][(n - 1) % 4];
        return { contract, release: () => void released++ };
      });
      stubs.set(postconvModule, 'forward', async (_inputs: unknown, opts: Record<string, unknown>) => {
        forwards.push({ op: 'postconv', opts });
        return { arm: `${String(opts.arm)}-ran`, release: () => void released++ };
      });
      stubs.set(fusedModule, 'forward', async (_inputs: unknown, opts: Record<string, unknown>) => {
        forwards.push({ op: 'fused', opts });
        return { launch: { arm: `${String(opts.arm)}-f`, threadsPerBlock: 96, grid: [3, 1, 2], tokensPerProgram: 8 }, release: () => void released++ };
      });
      stubs.set(inspect, 'inspectArm', (op: string, name: string, opts: unknown) => {
        inspected.push([op, name, opts]);
        return inspectAnswer(op, name);
      });
      stubs.set(displayModule, 'inKernel', () => inKernel);
      stubs.set(displayModule, 'display', (bundle: unknown) => {
        shown.push(bundle);
        return true;
      });
      stubs.set(copyModule, 'copyOp', (bytes: number, opts: Record<string, unknown>) => {
        copies.push({ bytes, opts });
        return { name: 'copy-op', release: () => void copyReleased++ };
      });
      stubs.set(timing, 'timeArms', async (cases: { label: string; op: unknown }[], opts: Record<string, unknown>) => {
        timed.push({ cases, opts });
        return { cases: [{ stats: { median } }] };
      });
      stubs.set(backendModule, 'choiceOf', () => undefined);
      stubs.set(fsModule, 'readdirSync', () => []);
      // The machine's own ncu (a GPU machine has /usr/local/cuda/bin/ncu) is not found: a test names its ncu.
      const access = fs.accessSync;
      stubs.set(fsModule, 'accessSync', (p: fs.PathLike, mode?: number) => {
        if (String(p) === '/usr/local/cuda/bin/ncu') throw new Error('no ncu here (stand-in)');
        return access(p, mode);
      });
    });

    const noNcu = { GDNLAB_NCU: undefined, PATH: '/nonexistent-gdnlab-path' };

    it('refuses a bad op, inputs or options, naming them', async () => {
      const b = backend('host');
      await assert.rejects(profile('matmul' as never, {}, { arms: ['scalar'] }), (e: Error) => e instanceof RangeError && e.message === `op: expected one of conv, postconv, fused, got ${describeValue('matmul')}`);
      await assert.rejects(profile('conv', null as never, { arms: ['scalar'] }), (e: Error) => e instanceof TypeError && e.message === `inputs: expected the op's inputs ({ x, weight, … }), got ${describeValue(null)}`);
      await assert.rejects(profile('conv', 'x' as never, { arms: ['scalar'] }), (e: Error) => e instanceof TypeError && e.message.startsWith('inputs: expected'));
      await assert.rejects(profile('conv', {}, null as never), (e: Error) => e instanceof TypeError && e.message === `options: expected { arms: [...] }, got ${describeValue(null)}`);
      await assert.rejects(profile('conv', {}, 5 as never), (e: Error) => e instanceof TypeError && e.message === `options: expected { arms: [...] }, got ${describeValue(5)}`);
      await assert.rejects(profile('conv', convInputs(), { arms: ['scalar'], arm: 'vec', backend: b as never }), (e: Error) => e instanceof TypeError && e.message === "arm: profile takes a list of arms (arms: ['scalar', …]), not arm");
      await assert.rejects(profile('conv', convInputs(), { arms: ['scalar'], mapping: { a: 1 }, backend: b as never }), (e: Error) => e instanceof TypeError && e.message === `mapping: the profiled child process takes plain option values (numbers, strings, booleans), got ${describeValue({ a: 1 })}`);
      await assert.rejects(profile('conv', convInputs(), { arms: ['nope'], backend: b as never }), /^RangeError: arms\[0\]: 'nope' is not a conv arm/);
    });

    it('on the host backend: not profiled, each conv arm\'s launch and ptxas facts, the copy measured; the forward options passed', async () => {
      const b = backend('host', '');
      stubs.set(backendModule, 'choiceOf', (x: unknown) => (x === b ? 'host (GDN_BACKEND=host)' : undefined));
      const inputs = convInputs();
      // An ncu on PATH (a number as the ncu option is no path, and ignored): only the backend is missing.
      const bin = path.join(dir, 'bin');
      fs.mkdirSync(bin);
      fs.writeFileSync(path.join(bin, 'ncu'), '', { mode: 0o755 });
      const r = await withEnv({ GDNLAB_NCU: undefined, PATH: bin }, () => profile('conv', inputs, { arms: ['scalar', 'vec/exact', 'stream-mufu', 'scalar'], backend: b as never, outDtype: 'bf16', extra: null, skipped: undefined, ncu: 3 as never, timeoutMs: 5, inspectSm: '80', show: false }));
      const bytes = convBytes({ T: 8, C: 4, K: 3, N: 2, nInitial: 1, xBytes: 2, outBytes: 2 });
      assert.equal(r.minimalBytes, bytes);
      assert.equal(r.profiled, false);
      assert.equal(r.analysis, null);
      assert.equal(r.figure, null);
      assert.equal(r.csvFile, null);
      assert.equal(r.reportFile, null);
      assert.equal(r.backend, 'host');
      assert.equal(r.device, 'CPU');
      assert.deepEqual(r.arms, ['scalar', 'vec/exact', 'stream-mufu', 'scalar']);
      assert.equal(r.unavailable, unavailableReason('host', '/found', 'GDN_BACKEND=host'));
      assert.deepEqual(forwards.map((f) => f.opts), [
        { outDtype: 'bf16', extra: null, arm: 'scalar', backend: b },
        { outDtype: 'bf16', extra: null, arm: 'vec', mapping: 'exact', backend: b },
        { outDtype: 'bf16', extra: null, arm: 'stream-mufu', backend: b },
        { outDtype: 'bf16', extra: null, arm: 'scalar', backend: b },
      ]);
      assert.equal(released, 4);
      assert.deepEqual(inspected, [
        ['conv', 'scalar', { sm: '80', ptx: false, sass: false }],
        ['conv', 'vec', { sm: '80', ptx: false, sass: false }],
        ['conv', 'stream-mufu', { sm: '80', ptx: false, sass: false }],
        ['conv', 'x', { sm: '80', ptx: false, sass: false }],
      ]);
      // The entry of the call's dtypes (x bf16, out bf16): the second one.
      const facts = { registers: 32, spills: '3/4 B st/ld (sm_80)', occupancy: '76% (warps, shared)' };
      assert.deepEqual(r.plan, [
        { arm: 'scalar', ran: 'scalar/sequence', launch: '64 threads/block, grid 4', ...facts },
        { arm: 'vec/exact', ran: 'vec/exact', launch: '128 threads/block, grid 2×3, 512 B shared, 16 tokens/program', ...facts },
        { arm: 'stream-mufu', ran: 'stream-mufu/exact', launch: 'grid 1×5', ...facts },
        { arm: 'scalar', ran: 'x/y', launch: 'n/a', ...facts },
      ]);
      assert.deepEqual(copies, [{ bytes, opts: { backend: b, label: 'copy' } }]);
      assert.equal(timed.length, 1);
      assert.deepEqual(timed[0].cases.map((c) => c.label), ['copy']);
      assert.equal((timed[0].cases[0].op as { name: string }).name, 'copy-op');
      assert.deepEqual(timed[0].opts, { backend: b, progress: false, maxTimeMs: 1500, minSamples: 20, label: 'copy of the minimal traffic' });
      assert.equal(copyReleased, 1);
      assert.equal(r.copyGBs, bytes / (2 * 1e3));
      assert.deepEqual(shown, []);
      const mb = (bytes / 1e6).toFixed(2);
      const head = `gdn.profile conv on host (CPU): minimal traffic ${mb} MB; copy ${(bytes / 2000).toFixed(0)} GB/s (a copy of ${mb} MB on the host backend, median, cold L2)`;
      const t = renderTable(r.plan as unknown as Record<string, unknown>[], { title: 'conv: what each arm launches here (not profiled)' });
      assert.equal(r.text, [head, `Not profiled: ${r.unavailable}`, t.text].join('\n'));
      assert.equal(r.html, `<div class="gdnlab-profile"><p><b>${head}</b></p><p style="color:#a33"><b>Not profiled:</b> ${r.unavailable!.replace(/'/g, '&#39;')}</p>${t.html}</div>`);
      assert.deepEqual(r[MIME_BUNDLE](), { data: { 'text/html': r.html, 'text/plain': r.text } });
    });

    it('the entry with the most registers when no name matches the dtypes (and for post-conv); ptxas failing is said in a line', async () => {
      const b = backend('host');
      const r = await withEnv(noNcu, () => profile('conv', { ...convInputs(), x: Tensor.zeros([8, 4], 'f32') }, { arms: ['scalar'], backend: b as never, outDtype: 'f16', copy: false, show: false }));
      assert.deepEqual([r.plan[0].registers, r.plan[0].spills, r.plan[0].occupancy], [80, '7/8 B st/ld (sm_90)', '25% (registers)']);
      assert.equal(r.copyGBs, null);
      assert.deepEqual(copies, []);
      assert.equal(r.device, 'EPYC');
      assert.match(r.text, /copy not measured/);
      // f32 in, f32 out by default: the third entry's name ends so.
      const d = await withEnv(noNcu, () => profile('conv', { ...convInputs(), x: Tensor.zeros([8, 4], 'f32') }, { arms: ['scalar'], backend: b as never, copy: false, show: false }));
      assert.deepEqual([d.plan[0].registers, d.plan[0].spills, d.plan[0].occupancy], [48, '5/6 B st/ld (sm_90)', '38% (shared)']);
      // bf16 in, f32 out (the default): the first entry.
      const e = await withEnv(noNcu, () => profile('conv', convInputs(), { arms: ['scalar'], backend: b as never, copy: false, show: false }));
      assert.deepEqual([e.plan[0].registers, e.plan[0].occupancy], [40, '50% (registers)']);
      inspectAnswer = () => ({
        resources: [{ entry: 'a', registers: 8, spillStoreBytes: 0, spillLoadBytes: 0 }, { entry: 'b', registers: 8, spillStoreBytes: 9, spillLoadBytes: 9 }, { entry: 'c_', registers: 2, spillStoreBytes: 0, spillLoadBytes: 0 }],
        occupancy: [{ occupancy: 1, limitedBy: ['warps'] }, { occupancy: 0.1, limitedBy: [] }, { occupancy: 0, limitedBy: [] }],
      });
      const pcInputs = { convOut: Tensor.zeros([2, 8], 'f32'), a: Tensor.zeros([2, 2], 'f32') };
      const shape = { Hk: 1, Hv: 2, Dk: 2, Dv: 2 };
      const p = await withEnv(noNcu, () => profile('postconv', pcInputs, { arms: ['tree', 'vec-tile'], backend: b as never, ...shape, copy: false, show: false }));
      assert.deepEqual(forwards.slice(-2).map((f) => f.opts), [{ ...shape, arm: 'tree', backend: b }, { ...shape, arm: 'vec-tile', backend: b }]);
      assert.deepEqual(inspected.slice(-2), [['postconv', 'tree-ran', { sm: '90', ptx: false, sass: false }], ['postconv', 'vec-tile-ran', { sm: '90', ptx: false, sass: false }]]);
      // A tie keeps the first entry.
      assert.deepEqual(p.plan[0], { arm: 'tree', ran: 'tree-ran', launch: 'token-tile layout (head slot, 16-token tile)', registers: 8, spills: '0/0 B st/ld (sm_90)', occupancy: '100% (warps)' });
      inspectAnswer = () => {
        throw new Error(`${'z'.repeat(130)}\nsecond line`);
      };
      const f = await withEnv(noNcu, () => profile('postconv', pcInputs, { arms: ['tree'], backend: b as never, ...shape, copy: false, show: false }));
      assert.deepEqual([f.plan[0].registers, f.plan[0].spills, f.plan[0].occupancy], [`n/a: ${'z'.repeat(120)}`, 'n/a', 'n/a']);
    });

    it('inspectSm: false asks ptxas nothing; fused arms are never inspected, their launch read from the op', async () => {
      const b = backend('host');
      const r = await withEnv(noNcu, () => profile('conv', convInputs(), { arms: ['vec'], backend: b as never, inspectSm: false, copy: false, show: false }));
      assert.deepEqual(inspected, []);
      assert.deepEqual([r.plan[0].registers, r.plan[0].spills, r.plan[0].occupancy], ['n/a', 'n/a', 'n/a']);
      const shape = { Hk: 1, Hv: 1, Dk: 1, Dv: 1 };
      const fz = { x: Tensor.zeros([2, 4], 'f32'), a: Tensor.zeros([2, 1], 'f32'), weight: Tensor.zeros([4, 2], 'f32'), queryStartLoc: [0, 2] };
      const f = await withEnv(noNcu, () => profile('fused', fz, { arms: ['fz'], backend: b as never, ...shape, copy: false, show: false }));
      assert.deepEqual(inspected, []);
      assert.deepEqual(forwards.slice(-1).map((x) => x.opts), [{ ...shape, arm: 'fz', backend: b }]);
      assert.deepEqual(f.plan, [{ arm: 'fz', ran: 'fz-f', launch: '96 threads/block, grid 3×1×2, 8 tokens/program', registers: 'n/a (inspect covers conv and post-conv arms)', spills: 'n/a', occupancy: 'n/a' }]);
      const g = await withEnv(noNcu, () => profile('fused', fz, { arms: ['fz'], backend: b as never, ...shape, inspectSm: false, copy: false, show: false }));
      assert.equal(g.plan[0].registers, 'n/a (inspect covers conv and post-conv arms)');
      assert.deepEqual(inspected, []);
    });

    it('the backend: the active one by default; its note kept only for the host; the copy released when timing fails', async () => {
      const host = backend('host');
      stubs.set(backendModule, 'activeBackend', () => host);
      stubs.set(backendModule, 'choiceOf', () => 'host');
      const r = await withEnv(noNcu, () => profile('conv', convInputs(), { arms: ['vec'], inspectSm: false, copy: false, show: false }));
      assert.equal(r.unavailable, unavailableReason('host', ''));
      assert.deepEqual(forwards[0].opts.backend, host);
      // "host (WHY)" keeps WHY; any other wording is kept whole.
      const notes: [string, string][] = [['auto → host (no CUDA device)', 'auto → host (no CUDA device)'], ['host(GDN)', 'GDN'], ['host  (y z)', 'y z'], ['host (x) and more', 'host (x) and more'], ['auto → host', 'auto → host'], ['hostile', 'hostile']];
      for (const [choice, note] of notes) {
        stubs.set(backendModule, 'choiceOf', () => choice);
        const n = await withEnv(noNcu, () => profile('conv', convInputs(), { arms: ['vec'], inspectSm: false, copy: false, show: false }));
        assert.equal(n.unavailable, unavailableReason('host', '', note), choice);
      }
      // On CUDA without ncu: the choice is not asked for, the device named with its SM.
      let asked = 0;
      stubs.set(backendModule, 'choiceOf', () => {
        asked++;
        return 'cuda (GDN_BACKEND=cuda)';
      });
      const c = await withEnv(noNcu, () => profile('conv', convInputs(), { arms: ['vec'], backend: backend('cuda') as never, inspectSm: false, copy: false, show: false }));
      assert.equal(asked, 0);
      assert.equal(c.unavailable, unavailableReason('cuda', ''));
      assert.equal(c.device, 'NVIDIA H100, sm_90');
      stubs.set(timing, 'timeArms', async () => {
        throw new Error('timing failed');
      });
      await assert.rejects(withEnv(noNcu, () => profile('conv', convInputs(), { arms: ['vec'], backend: host as never, inspectSm: false, show: false })), /timing failed/);
      assert.equal(copyReleased, 1);
    });

    it('show: displayed once in a kernel (no second output as the value); show: false or outside a kernel, the value carries it', async () => {
      const b = backend('host');
      inKernel = true;
      const r = await withEnv(noNcu, () => profile('conv', convInputs(), { arms: ['vec'], backend: b as never, inspectSm: false, copy: false }));
      assert.deepEqual(shown, [{ data: { 'text/html': r.html, 'text/plain': r.text }, metadata: {} }]);
      assert.equal(r[MIME_BUNDLE](), null);
      const q = await withEnv(noNcu, () => profile('conv', convInputs(), { arms: ['vec'], backend: b as never, inspectSm: false, copy: false, show: false }));
      assert.equal(shown.length, 1);
      assert.deepEqual(q[MIME_BUNDLE](), { data: { 'text/html': q.html, 'text/plain': q.text } });
      inKernel = false;
      const o = await withEnv(noNcu, () => profile('conv', convInputs(), { arms: ['vec'], backend: b as never, inspectSm: false, copy: false }));
      assert.equal(shown.length, 1);
      assert.deepEqual(o[MIME_BUNDLE](), { data: { 'text/html': o.html, 'text/plain': o.text } });
    });

    it('on CUDA with ncu: profiled under it (600 s by default), the table, the dropped metrics, the figure and the report file', async () => {
      const ncuFile = path.join(dir, 'ncu');
      fs.writeFileSync(ncuFile, '', { mode: 0o755 });
      const b = backend('cuda');
      const dropped = metricList()[5];
      let n = 0;
      const result = await withTimers((timers) => withSpawn([(child, call) => {
        if (call.args[0] !== '--import' && n++ === 0) return ncu({ status: 1, manifest: false, err: `==ERROR== ${dropped}` })(child, call);
        ncu()(child, call);
      }], async (calls) => {
        const r = await profile('conv', convInputs(), { arms: ['scalar', 'vec', 'stream-mufu'], backend: b as never, ncu: ncuFile, outDtype: 'bf16', show: false });
        assert.equal(calls[0].cmd, ncuFile);
        assert.equal(calls[0].opts.env!.GDN_BACKEND, 'cuda');
        assert.deepEqual(timers.map((t) => t.ms), [600000, 600000, 120000]);
        return r;
      }));
      const r = result;
      const bytes = convBytes({ T: 8, C: 4, K: 3, N: 2, nInitial: 1, xBytes: 2, outBytes: 2 });
      assert.equal(r.profiled, true);
      assert.equal(r.unavailable, null);
      assert.deepEqual(r.plan, []);
      assert.deepEqual(forwards, [], 'nothing launched in this process');
      const want = analyse(parseNcuCsv(CSV), LAUNCHES as never, bytes, bytes / 2000);
      const missing = [...want.missing, { metric: dropped, arms: ['scalar', 'vec', 'stream-mufu'] }];
      assert.deepEqual(r.analysis!.rows, want.rows);
      assert.deepEqual(r.analysis!.missing, missing);
      assert.equal(r.device, 'NVIDIA H100, sm_90');
      assert.equal(r.figure!.title, 'conv: achieved DRAM bandwidth vs the copy (NVIDIA H100, sm_90)');
      assert.ok(r.csvFile && r.csvFile === path.join(path.dirname(r.reportFile!), 'profile.csv'));
      assert.equal(fs.readFileSync(r.csvFile, 'utf8'), CSV);
      const t = renderTable(tableRows(r.analysis!), { title: 'conv: one launch per arm under Nsight Compute' });
      const lines = r.text.split('\n');
      assert.equal(lines[0], `gdn.profile conv on cuda (NVIDIA H100, sm_90): minimal traffic ${(bytes / 1e6).toFixed(2)} MB; copy ${(bytes / 2000).toFixed(0)} GB/s (a copy of ${(bytes / 1e6).toFixed(2)} MB on NVIDIA H100, sm_90, median, cold L2)`);
      assert.ok(r.text.startsWith(`${lines[0]}\n${t.text}\nNot in the report (shown as n/a): ${missing.map((m) => `${m.metric} (${m.arms.join(', ')})`).join('; ')}.\n× minimal: DRAM bytes read + written`), r.text);
      assert.ok(r.text.endsWith(`(--clock-control none), caches flushed before every pass.\nncu report: ${r.reportFile}`), r.text);
      assert.ok(r.html.includes(`${t.html}<img alt="conv: achieved DRAM bandwidth vs the copy (NVIDIA H100, sm_90)" src="data:image/`), r.html);
      assert.ok(r.html.endsWith(`<p style="font-size:smaller">ncu report: <code>${r.reportFile}</code></p></div>`), r.html);
      assert.ok(!r.html.includes('Not profiled'));
      fs.rmSync(path.dirname(r.reportFile!), { recursive: true, force: true });
    });

    it('profile timeoutMs reaches the ncu run', async () => {
      const ncuFile = path.join(dir, 'ncu');
      fs.writeFileSync(ncuFile, '', { mode: 0o755 });
      // The metric ncu rejects is one the report lacks anyway: it is listed once.
      const own = analyse(parseNcuCsv(CSV), LAUNCHES as never, 1, null).missing;
      let n = 0;
      const r = await withTimers((timers) => withSpawn([(child, call) => {
        if (call.args[0] !== '--import' && n++ === 0) return ncu({ status: 1, manifest: false, err: `==ERROR== ${own[0].metric}` })(child, call);
        ncu()(child, call);
      }], async () => {
        const res = await profile('conv', convInputs(), { arms: ['scalar', 'vec', 'stream-mufu'], backend: backend('cuda') as never, ncu: ncuFile, timeoutMs: 777, copy: false, show: false });
        assert.deepEqual(timers.map((t) => t.ms), [777, 777, 120000]);
        return res;
      }));
      // Only the report's own missing metrics; no copy: no ratio to it.
      assert.deepEqual(r.analysis!.missing, analyse(parseNcuCsv(CSV), LAUNCHES as never, r.minimalBytes, null).missing);
      assert.equal(r.copyGBs, null);
      fs.rmSync(path.dirname(r.reportFile!), { recursive: true, force: true });
    });

    it('profileResult: the figure as PNG where it renders, else as SVG; the missing-metric note only when something is missing', () => {
      const analysis = analyse(parseNcuCsv(CSV), LAUNCHES as never, 1e6, null);
      analysis.missing = [];
      const base = { op: 'conv' as const, arms: ['a'], profiled: true, unavailable: null, minimalBytes: 1234567, copyGBs: 1500.4, backend: 'cuda' as const, device: 'GPU <1>', analysis, plan: [], csvFile: 'c', reportFile: 'r<&>' };
      const fig = (png: string | null) => ({ title: 't<x>', pngBase64: () => png, svg: () => '<svg/>' }) as never;
      const p = profileResult({ ...base, figure: fig('UE5H') }, false);
      assert.ok(p.html.includes('<img alt="t&lt;x&gt;" src="data:image/png;base64,UE5H"/>'), p.html);
      assert.ok(!p.text.includes('Not in the report'));
      assert.ok(p.text.startsWith('gdn.profile conv on cuda (GPU <1>): minimal traffic 1.23 MB; copy 1500 GB/s (a copy of 1.23 MB on GPU <1>, median, cold L2)\n'), p.text);
      assert.ok(p.html.startsWith('<div class="gdnlab-profile"><p><b>gdn.profile conv on cuda (GPU &lt;1&gt;)'), p.html);
      assert.ok(p.html.endsWith('<p style="font-size:smaller">ncu report: <code>r&lt;&amp;&gt;</code></p></div>'), p.html);
      assert.ok(p.html.includes('<p style="font-size:smaller">× minimal: DRAM bytes read + written over the op&#39;s minimal traffic'), p.html);
      const s = profileResult({ ...base, figure: fig(null), reportFile: null }, false);
      assert.ok(s.html.includes(`<img alt="t&lt;x&gt;" src="data:image/svg+xml;base64,${Buffer.from('<svg/>').toString('base64')}"/>`), s.html);
      assert.ok(!s.text.includes('ncu report') && !s.html.includes('ncu report'));
      assert.ok(s.html.endsWith('</p></div>'));
    });
  });
});
