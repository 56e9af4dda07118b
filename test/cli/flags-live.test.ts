// Every flag proven live (docs/TESTING.md, "Every option proven live"): each flag of each command changes what
// the command does or prints, compared with the same command without it. test/cli/strict.test.ts proves every
// flag is parsed strictly; this file proves none is read and then dropped.
//
// Most commands run in this process through main() with their output captured, on small inputs: where a flag
// maps one to one onto a library option whose effect test/core/options-live-*.test.ts proves, the library
// function is wrapped to record the options the command passed and to keep the run short (fewer matrix cases,
// a short timing budget), and the real function still runs. --backend runs each command as a user does
// (node bin/gdnlab.js) with GDN_BACKEND=cuda: without the flag the command fails to open CUDA (no GPU here),
// with --backend host it runs on the host. kernel install spawns its installer, so it runs that way too.

import { strict as assert } from 'assert';
import { spawn } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { projectRoot } from '../../lib/paths';
import { main } from '../../lib/cli';
import { cudaDeviceCount } from '../../lib/backend';
import { undefineArm } from '../../lib/arms/define';
import * as checkConvLib from '../../lib/check/conv';
import * as checkPostconvLib from '../../lib/check/postconv';
import * as checkFusedLib from '../../lib/check/fused';
import * as benchLib from '../../lib/bench/bench';
import * as overheadLib from '../../lib/bench/overhead';
import * as hostLib from '../../lib/bench/host';
import * as runLib from '../../lib/notebooks/run';
import * as exportLib from '../../lib/notebooks/export';
import * as profileLib from '../../lib/profile/profile';
import { writeNotebook } from '../../lib/notebooks/ipynb';
import { checkedFusedArms } from '../../lib/check/fused';
import { fusedBenchShapes } from '../../lib/bench/bench';
import { fakePython, reportingCuda } from '../core/cuda-stand-ins';
import { makeNotebook } from '../notebooks/helpers';

const BIN = path.join(projectRoot(), 'bin', 'gdnlab.js');
const REG16 = path.join(projectRoot(), 'examples', 'arms', 'reg16.json');
const TILE16 = path.join(projectRoot(), 'examples', 'arms', 'tile16.json');

class Stop extends Error {}

interface Run { status: number; out: string; err: string }

/**
 * Runs `gdnlab <args>` in this process with stdout and stderr captured. With `stopAt`, the run is stopped (a
 * Stop thrown from the output call) once its output matches: what it was about to do is in the output so far.
 */
async function cli(args: string[], stopAt?: RegExp): Promise<Run> {
  const out: string[] = [];
  const err: string[] = [];
  const saved = { log: console.log, error: console.error, out: process.stdout.write, err: process.stderr.write };
  const look = () => {
    if (stopAt && stopAt.test(out.join('') + err.join(''))) {
      stopAt = undefined;
      throw new Stop('stopped by the test');
    }
  };
  const writer = (into: string[]) => ((s: unknown, ...rest: unknown[]) => {
    into.push(String(s));
    (rest.find((r) => typeof r === 'function') as (() => void) | undefined)?.();
    look();
    return true;
  }) as typeof process.stdout.write;
  console.log = (...a: unknown[]) => (out.push(a.map(String).join(' ') + '\n'), look());
  console.error = (...a: unknown[]) => (err.push(a.map(String).join(' ') + '\n'), look());
  process.stdout.write = writer(out);
  process.stderr.write = writer(err);
  try {
    const status = await main(args);
    return { status, out: out.join(''), err: err.join('') };
  } finally {
    console.log = saved.log;
    console.error = saved.error;
    process.stdout.write = saved.out;
    process.stderr.write = saved.err;
  }
}

/**
 * Runs node bin/gdnlab.js as a user does; with `until`, kills it once its output matches (a number: once it has
 * run that many milliseconds without exiting). `stopped` says it was killed so.
 */
function spawnCli(args: string[], env: NodeJS.ProcessEnv, until?: RegExp | number, timeoutMs = 60000): Promise<Run & { stopped: boolean }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { env });
    let out = '';
    let err = '';
    let stopped = false;
    const timer = setTimeout(() => {
      stopped = typeof until === 'number';
      child.kill('SIGKILL');
    }, typeof until === 'number' ? until : timeoutMs);
    const look = () => {
      if (until instanceof RegExp && !stopped && until.test(out + err)) {
        stopped = true;
        child.kill('SIGKILL');
      }
    };
    child.stdout.on('data', (c: Buffer) => ((out += c.toString()), look()));
    child.stderr.on('data', (c: Buffer) => ((err += c.toString()), look()));
    child.on('error', reject);
    child.on('close', (status) => {
      clearTimeout(timer);
      resolve({ status: status ?? -1, out, err, stopped });
    });
  });
}

/** Replaces module exports for the length of `body` (the CLI calls them through the module object). */
async function withStubs<T>(stubs: [object, string, unknown][], body: () => Promise<T>): Promise<T> {
  const saved = stubs.map(([m, k]) => (m as Record<string, unknown>)[k]);
  stubs.forEach(([m, k, f]) => ((m as Record<string, unknown>)[k] = f));
  try {
    return await body();
  } finally {
    stubs.forEach(([m, k], i) => ((m as Record<string, unknown>)[k] = saved[i]));
  }
}

const json = (r: Run) => JSON.parse(r.out);
const notJson = (r: Run) => assert.throws(() => JSON.parse(r.out), SyntaxError, r.out.slice(0, 200));

describe('gdnlab: every flag changes what the command does or prints', function () {
  this.timeout(120000);
  let scratch: string;
  before(() => {
    scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'gdnlab-flags-'));
  });
  after(() => fs.rmSync(scratch, { recursive: true, force: true }));

  // ------------------------------------------------------------------------------------------ --backend

  describe('--backend host: runs on the host where the default (GDN_BACKEND=cuda, no GPU) fails to open CUDA', () => {
    // host: what the run on the host prints first (a number: it runs that long without failing, where the default
    // fails at once; bench verdict prints only at its end, seconds later).
    const commands: { args: () => string[]; host: RegExp | number }[] = [
      { args: () => ['info'], host: /^backend: host \(--backend\)$/m },
      { args: () => ['arms', '--define', REG16], host: /^gdnlab: conv arm 'reg16'/m },
      { args: () => ['check', 'conv', '--quick'], host: /\[1\/\d+\] C=129/ },
      { args: () => ['check', 'race', '--trials', '1', '--channels', '8'], host: /^exact-racy +widen +0: /m },
      { args: () => ['check', 'postconv', '--quick'], host: /\[1\/\d+\] T=0/ },
      { args: () => ['check', 'fused', '--quick'], host: /\[1\/\d+\] Hk=1/ },
      { args: () => ['check', 'sanitize'], host: /^conv C=385 /m },
      { args: () => ['bench', 'conv', '--quick', '--arms', 'scalar', '--shapes', 'Qwen3.5-4B T=64'], host: /^conv Qwen3\.5-4B T=64: timing 1 arms/m },
      { args: () => ['bench', 'postconv', '--quick', '--arms', 'tree', '--shapes', 'Hv=32) T=32'], host: /^postconv .*T=32: timing 1 arms/m },
      { args: () => ['bench', 'fused', '--quick', '--shapes', 'Hv=2) T=64'], host: /^fused .*T=64: timing \d+ arms/m },
      { args: () => ['bench', 'overhead', '--quick'], host: /^overhead: /m },
      { args: () => ['bench', 'verdict'], host: 1500 },
      // profile postconv and fused: the same command code as conv (profileCommand), in process below.
      { args: () => ['profile', 'conv', '--arms', 'vec', '--tokens', '8'], host: /this is the host backend/ },
    ];

    it(`every command with --backend (${commands.length})`, async function () {
      if (cudaDeviceCount() > 0) this.skip();  // with a GPU the default opens CUDA: nothing to tell apart here
      const env = { ...process.env, GDN_BACKEND: 'cuda' };
      // Two at a time: each default fails at once, and each host run is stopped at its first sign of running.
      const queue = commands.map((c) => async () => {
        const args = c.args();
        const dflt = await spawnCli(args, env);
        const host = await spawnCli([...args, '--backend', 'host'], env, c.host);
        return { args, dflt, host, c };
      });
      const results: Awaited<ReturnType<(typeof queue)[number]>>[] = [];
      const worker = async () => {
        for (let job = queue.shift(); job; job = queue.shift()) results.push(await job());
      };
      await Promise.all([worker(), worker()]);
      for (const { args, dflt, host, c } of results) {
        const name = args.slice(0, 2).join(' ');
        assert.equal(dflt.status, 1, `${name}: ${dflt.err}`);
        assert.match(dflt.err, /opening the cuda backend/, name);
        assert.doesNotMatch(host.out + host.err, /opening the cuda backend/, name);
        if (typeof c.host === 'number') assert.ok(host.stopped, `${name} --backend host ended: ${host.err}`);
        else assert.match(host.out + host.err, c.host, `${name} --backend host: ${(host.out + host.err).slice(-500)}`);
      }
    });
  });

  // ------------------------------------------------------------------------------------------ info, arms

  describe('info and arms', () => {
    it('info --json: the facts as JSON (default: text lines)', async () => {
      const text = await cli(['info']);
      const j = await cli(['info', '--json']);
      notJson(text);
      assert.match(text.out, /^backend: /m);
      assert.equal(typeof json(j).backend, 'string');
      assert.ok(json(j).library.abi >= 1);
    });

    it('arms --json: the registry as JSON (default: a listing); --define adds the user arm to it', async () => {
      const text = await cli(['arms']);
      const j = await cli(['arms', '--json']);
      notJson(text);
      assert.ok(Array.isArray(json(j).arms.conv));
      assert.doesNotMatch(text.out, /reg16/);
      try {
        const defined = await cli(['arms', '--define', REG16]);
        assert.equal(defined.status, 0, defined.err);
        assert.match(defined.out, /^ +\d+ reg16 +the register arm with 16-token programs/m);
        assert.match(defined.err, /^gdnlab: conv arm 'reg16'/m);
      } finally {
        undefineArm('conv', 'reg16');
      }
    });
  });

  // ------------------------------------------------------------------------------------------ check

  describe('check conv|postconv|fused', () => {
    // The checks run on the first case of their matrix only (the flags are what is compared, not the matrix).
    const realConv = checkConvLib.convMatrix;
    const realPost = checkPostconvLib.postconvMatrix;
    const realFused = checkFusedLib.fusedMatrix;
    const realSeq4 = checkPostconvLib.runSeq4Mutant;
    const realDefects = checkPostconvLib.runPostconvDefects;
    const asked: Record<string, (boolean | undefined)[]> = { conv: [], postconv: [], fused: [] };
    const trimmed = (op: string, real: (o?: { quick?: boolean }) => unknown[]) => (o?: { quick?: boolean }) => (asked[op].push(o?.quick), real(o).slice(0, 1));
    const onFirstCase = <T>(body: () => Promise<T>) => withStubs([
      [checkConvLib, 'convMatrix', trimmed('conv', realConv)],
      [checkPostconvLib, 'postconvMatrix', trimmed('postconv', realPost)],
      [checkFusedLib, 'fusedMatrix', trimmed('fused', realFused)],
    ], body);

    it('--quick asks for the quick matrix, whose total the progress line shows (spawned, stopped at the first case)', async () => {
      for (const op of ['conv', 'postconv', 'fused']) {
        const env = { ...process.env, GDN_BACKEND: 'host' };
        const total = async (args: string[]) => Number(/\[1\/(\d+)\]/.exec((await spawnCli(args, env, /\[1\/\d+\]/)).err)?.[1]);
        const [full, quick] = [await total(['check', op]), await total(['check', op, '--quick'])];
        const matrix = op === 'conv' ? realConv : op === 'postconv' ? realPost : realFused;
        assert.equal(full, matrix().length, op);
        assert.equal(quick, matrix({ quick: true }).length, op);
        assert.ok(quick < full, `${op}: ${quick} vs ${full}`);
      }
    });

    it('check conv: --json prints the report as JSON; --mutants runs and reports the planted mutants; --define checks the user arm too', async () => {
      await onFirstCase(async () => {
        asked.conv = [];
        const plain = await cli(['check', 'conv']);
        const quick = await cli(['check', 'conv', '--quick']);
        assert.deepEqual(asked.conv, [false, true]);
        assert.equal(plain.status, 0, plain.err);
        notJson(plain);
        assert.match(plain.out, /^equivalence: \d+ comparisons, 0 mismatching/m);
        assert.doesNotMatch(plain.out, /mutants:/);
        assert.equal(quick.status, 0);
        const j = json(await cli(['check', 'conv', '--json']));
        assert.equal(j.equivalence.failures.length, 0);
        assert.equal(j.mutants, undefined);
        const mutants = await cli(['check', 'conv', '--mutants']);
        assert.equal(mutants.status, 0, mutants.out);
        assert.match(mutants.out, /^mutants: (\d+)\/\1 caught/m);
        assert.match(mutants.out, /^caught mutant taps-reversed: /m);
        try {
          const defined = json(await cli(['check', 'conv', '--json', '--define', REG16]));
          const armsOf = (r: { equivalence: { results: { arm: string }[] } }) => new Set(r.equivalence.results.map((x) => x.arm));
          assert.ok(armsOf(defined).has('reg16') && !armsOf(j).has('reg16'));
        } finally {
          undefineArm('conv', 'reg16');
        }
      });
    });

    it('check postconv: --json, --mutants (seq4 and the user planted defects), --define', async () => {
      const pc = checkPostconvLib;
      const small = () => realPost({ quick: true }).filter((c) => c.T === 15 && c.Hk === 4).slice(0, 2);
      await onFirstCase(() => withStubs([
        [pc, 'runSeq4Mutant', (b: Parameters<typeof pc.runSeq4Mutant>[0]) => realSeq4(b, small())],
        [pc, 'runPostconvDefects', (b: Parameters<typeof pc.runPostconvDefects>[0]) => realDefects(b, small())],
      ], async () => {
        const plain = await cli(['check', 'postconv']);
        notJson(plain);
        assert.match(plain.out, /^equivalence: \d+ results, 0 failing/m);
        assert.doesNotMatch(plain.out, /mutant seq4/);
        const j = json(await cli(['check', 'postconv', '--json']));
        assert.equal(j.seq4, undefined);
        const mutants = await cli(['check', 'postconv', '--mutants']);
        assert.equal(mutants.status, 0, mutants.out);
        assert.match(mutants.out, /^caught mutant seq4: /m);
        try {
          const defined = json(await cli(['check', 'postconv', '--json', '--define', TILE16]));
          assert.ok(defined.equivalence.results.some((x: { arm: string }) => x.arm === 'tile16'));
          assert.ok(!j.equivalence.results.some((x: { arm: string }) => x.arm === 'tile16'));
        } finally {
          undefineArm('postconv', 'tile16');
        }
      }));
    });
    it('check fused: --json, --mutants (each mutant in each arm), --define (the definition is reported)', async () => {
      const fu = checkFusedLib;
      const realMutants = fu.runFusedMutants;
      // One case in which each mutant shows: f32 q/k (seq-fold) and a bf16 conv output (no-round).
      const small = () => realFused({ quick: true }).filter((c) => c.qkvDtype === 'f32' && c.convDtype === 'bf16' && c.Hk === 1).slice(0, 1);
      await onFirstCase(() => withStubs([
        [fu, 'runFusedMutants', (b: Parameters<typeof fu.runFusedMutants>[0], _c: unknown, arms: string[]) => realMutants(b, small(), arms)],
      ], async () => {
        const plain = await cli(['check', 'fused']);
        notJson(plain);
        assert.match(plain.out, /^equivalence: 1 cases × \d+ arms? = \d+ comparisons, 0 mismatching/m);
        assert.doesNotMatch(plain.out, /mutant seq-fold/);
        const j = json(await cli(['check', 'fused', '--json']));
        assert.equal(j.mutants, undefined);
        const mutants = await cli(['check', 'fused', '--mutants']);
        assert.equal(mutants.status, 0, mutants.out);
        for (const a of checkedFusedArms()) for (const m of ['seq-fold', 'no-round']) assert.match(mutants.out, new RegExp(`^caught ${a} +mutant ${m}: `, 'm'));
        try {
          const defined = await cli(['check', 'fused', '--define', REG16]);
          assert.match(defined.err, /^gdnlab: conv arm 'reg16'/m);
          assert.doesNotMatch(plain.err, /reg16/);
        } finally {
          undefineArm('conv', 'reg16');
        }
      }));
    });

    it('check sanitize --define launches the user arm with the built-ins', async () => {
      const plain = await cli(['check', 'sanitize']);
      assert.equal(plain.status, 0, plain.err);
      assert.doesNotMatch(plain.out, /reg16/);
      try {
        const defined = await cli(['check', 'sanitize', '--define', REG16]);
        assert.match(defined.out, /^conv C=385 reg16\/exact /m);
        const n = (r: Run) => Number(/sanitize workload: (\d+) launches/.exec(r.out)![1]);
        assert.ok(n(defined) > n(plain));
      } finally {
        undefineArm('conv', 'reg16');
      }
    });

    it('check race: --trials, --channels and --json change the trials, the case and the output; --widen is CUDA only', async () => {
      const race = async (...args: string[]) => json(await cli(['check', 'race', '--json', ...args])).results as { mapping: string; trials: number; maxWrongElements: number; widenCycles: number }[];
      const racy = (r: Awaited<ReturnType<typeof race>>) => r.find((x) => x.mapping === 'exact-racy')!;
      const dfltTrials = await race('--channels', '8');
      const two = await race('--channels', '8', '--trials', '2');
      const wide = await race('--trials', '2');
      assert.ok(dfltTrials.every((x) => x.trials === 102), 'the host default: 102 trials');
      assert.ok(two.every((x) => x.trials === 2));
      assert.ok(racy(two).maxWrongElements > 0);
      // The default case has 4096 channels, 512 × 8 (every channel of a corrupted row wrong but for chance agreements).
      const ratio = racy(wide).maxWrongElements / racy(two).maxWrongElements;
      assert.ok(ratio > 480 && ratio < 540, `${ratio}`);
      const text = await cli(['check', 'race', '--channels', '8', '--trials', '2']);
      notJson(text);
      assert.match(text.out, /^exact-racy +widen +0: 1\/2 runs corrupted/m);
      // On the host one round runs in block orders, without a widened window: --widen changes nothing there.
      const widened = await race('--channels', '8', '--trials', '2', '--widen', '500');
      assert.deepEqual(widened.map((x) => x.widenCycles), [0, 0, 0]);
      assert.equal((await cli(['check', 'race', '--widen', '-1'])).status, 2);
    });
  });

  // ------------------------------------------------------------------------------------------ bench

  describe('bench', () => {
    const timing = { warmupMs: 5, minSamples: 3, minTimeMs: 1, maxTimeMs: 40, noiseTarget: 0.5 };
    const seen: benchLib.BenchOptions[] = [];
    const short = (real: typeof benchLib.benchConv) => (o: benchLib.BenchOptions) => (seen.push(o), real({ ...o, timing }));
    const realConv = benchLib.benchConv;
    const shortBenches = <T>(body: () => Promise<T>) => withStubs([
      [benchLib, 'benchConv', short(realConv)],
      [benchLib, 'benchPostconv', short(benchLib.benchPostconv)],
      [benchLib, 'benchFused', short(benchLib.benchFused)],
    ], body);
    const SHAPE = ['--shapes', 'Qwen3.5-4B T=64'];

    it('bench conv: --arms and --shapes select the rows, --json/--samples the output; --quick the shapes (else a warning)', async () => {
      await shortBenches(async () => {
        const one = json(await cli(['bench', 'conv', '--quick', '--json', '--arms', 'scalar', ...SHAPE]));
        const everyArm = json(await cli(['bench', 'conv', '--quick', '--json', ...SHAPE]));
        const everyShape = json(await cli(['bench', 'conv', '--quick', '--json', '--arms', 'scalar']));
        assert.deepEqual(one.rows.map((r: { arm: string }) => r.arm), ['scalar']);
        assert.ok(everyArm.rows.length > 1 && new Set(everyArm.rows.map((r: { shape: string }) => r.shape)).size === 1);
        assert.deepEqual(everyShape.rows.map((r: { shape: string }) => r.shape), benchLib.convBenchShapes(true).map((s) => s.id));
        assert.equal(one.timings, undefined);
        const sampled = json(await cli(['bench', 'conv', '--quick', '--json', '--samples', '--arms', 'scalar', ...SHAPE]));
        assert.equal(sampled.timings.length, 1);
        const md = await cli(['bench', 'conv', '--quick', '--arms', 'scalar', ...SHAPE]);
        notJson(md);
        assert.match(md.out, /^### Causal conv — `gdnlab bench /m);
        // Without --quick the host is warned, and a quick shape's name matches none of the GPU-sized shapes.
        const full = await cli(['bench', 'conv', '--arms', 'scalar', '--shapes', 'T=64']);
        assert.equal(full.status, 1);
        assert.match(full.err, /the host backend runs the GPU-sized shapes for minutes; use --quick/);
        assert.match(full.err, /shapes: \["T=64"\] match none of 'Qwen3\.5-4B T=512'/);
        assert.doesNotMatch(md.err, /use --quick/);
      });
    });

    it('bench conv: --json=FILE and --markdown FILE write the report there (stdout: the Markdown)', async () => {
      await shortBenches(async () => {
        const file = path.join(scratch, 'out', 'bench.json');
        const mdFile = path.join(scratch, 'bench.md');
        const r = await cli(['bench', 'conv', '--quick', `--json=${file}`, '--markdown', mdFile, '--arms', 'scalar', ...SHAPE]);
        assert.equal(r.status, 0, r.err);
        assert.deepEqual(JSON.parse(fs.readFileSync(file, 'utf8')).rows.map((x: { arm: string }) => x.arm), ['scalar']);
        assert.match(fs.readFileSync(mdFile, 'utf8'), /^\| scalar \| sequence \|/m);
        assert.match(r.out, /^### Causal conv/m);
        assert.doesNotMatch(r.out, /"rows"/);
      });
    });

    it('bench conv: --define times the user arm (--arms reg16 names nothing without it)', async () => {
      await shortBenches(async () => {
        const without = await cli(['bench', 'conv', '--quick', '--json', '--arms', 'reg16', ...SHAPE]);
        assert.equal(without.status, 1);
        assert.match(without.err, /arms: 'reg16' is not a timed arm/);
        try {
          const r = await cli(['bench', 'conv', '--quick', '--json', '--define', REG16, '--arms', 'reg16', ...SHAPE]);
          assert.equal(r.status, 0, r.err);
          assert.deepEqual(json(r).rows.map((x: { arm: string; mapping: string }) => `${x.arm}/${x.mapping}`), ['reg16/exact', 'reg16/sequence']);
        } finally {
          undefineArm('conv', 'reg16');
        }
      });
    });

    it('bench conv: --no-torch skips the PyTorch baseline and --vllm DIR adds vLLM\'s (CUDA only: through a stand-in)', async () => {
      const python = fakePython(scratch, 'cli');
      const onCuda = (o: benchLib.BenchOptions) => realConv({ ...o, timing, backend: reportingCuda(o.backend), python });
      await withStubs([[benchLib, 'benchConv', onCuda]], async () => {
        const dflt = json(await cli(['bench', 'conv', '--quick', '--json', '--arms', 'scalar', ...SHAPE]));
        const noTorch = json(await cli(['bench', 'conv', '--quick', '--json', '--no-torch', '--arms', 'scalar', ...SHAPE]));
        const vllm = json(await cli(['bench', 'conv', '--quick', '--json', '--vllm', '/packed/by-flag', '--arms', 'scalar', ...SHAPE]));
        assert.equal(dflt.torch.version, 'torch cli');
        assert.equal(noTorch.torch, null);
        assert.ok(!dflt.rows.some((r: { arm: string }) => r.arm === 'vLLM (Triton)'));
        assert.match(vllm.rows.find((r: { arm: string }) => r.arm === 'vLLM (Triton)').note, /vllm cli at \/packed\/by-flag/);
      });
    });

    it('bench postconv and fused read the same flags: --arms, --shapes, --quick, --json', async () => {
      await shortBenches(async () => {
        seen.length = 0;
        const pc = json(await cli(['bench', 'postconv', '--quick', '--json', '--arms', 'tree', '--shapes', 'Hv=32) T=32']));
        assert.deepEqual(pc.rows.map((r: { shape: string; arm: string }) => `${r.shape} ${r.arm}`), ['Qwen3.5-4B (Hk=16, Hv=32) T=32 tree']);
        // --shapes splits at commas: a part of the shape's name without one.
        const quickFused = fusedBenchShapes(true)[0].id;
        assert.equal(quickFused, 'Qwen3.5-4B (quick: Hk=1, Hv=2) T=64');
        const fu = json(await cli(['bench', 'fused', '--quick', '--json', '--shapes', 'Hv=2) T=64']));
        assert.deepEqual([...new Set(fu.rows.map((r: { shape: string }) => r.shape))], [quickFused]);
        const refused = await cli(['bench', 'fused', '--quick', '--arms', 'vec', '--shapes', 'Hv=2) T=64']);
        assert.match(refused.err, /arms: bench fused times its fixed set/);
        const md = await cli(['bench', 'postconv', '--quick', '--arms', 'tree', '--shapes', 'Hv=32) T=32']);
        notJson(md);
        assert.deepEqual(seen.map((o) => [o.quick, o.torch, o.samples]), [[true, true, false], [true, true, false], [true, true, false], [true, true, false]]);
      });
    });

    it('bench overhead: --quick times fewer calls per case; --json and --json=FILE', async () => {
      const realOverhead = overheadLib.benchOverhead;
      // One allocation case only: the calls per case are what --quick changes.
      const oneCase = async (o: overheadLib.OverheadOptions) => ({
        bench: 'overhead', ...overheadLib.reportHeader(o.backend), validated: [],
        rows: await overheadLib.timeOverheadCases(overheadLib.allocationCases(o.backend).slice(0, 1), o), cache: o.backend.cacheStats(),
      });
      assert.ok(realOverhead);
      await withStubs([[overheadLib, 'benchOverhead', oneCase]], async () => {
        const dflt = json(await cli(['bench', 'overhead', '--json']));
        const quick = json(await cli(['bench', 'overhead', '--quick', '--json']));
        assert.deepEqual([dflt.rows[0].n, quick.rows[0].n], [2000, 300]);
        const file = path.join(scratch, 'overhead.json');
        const md = await cli(['bench', 'overhead', '--quick', `--json=${file}`]);
        notJson(md);
        assert.equal(JSON.parse(fs.readFileSync(file, 'utf8')).rows[0].n, 300);
      });
    });

    it('bench host: --quick runs T = 256 (default 2048), --define validates the user arms too (stopped at the first line); --json[=FILE]', async () => {
      const first = /validating \d+ arms/;
      const quick = await cli(['bench', 'host', '--quick'], first);
      const full = await cli(['bench', 'host'], first);
      assert.match(quick.err, /conv Qwen3\.5-4B T=256 /);
      assert.match(full.err, /conv Qwen3\.5-4B T=2048 /);
      const count = (r: Run) => Number(/validating (\d+) arms/.exec(r.err)![1]);
      try {
        const defined = await cli(['bench', 'host', '--quick', '--define', REG16], first);
        assert.equal(count(defined), count(quick) + 2, 'reg16 runs two mappings');
      } finally {
        undefineArm('conv', 'reg16');
      }
      const report: hostLib.HostReport = { bench: 'host', cpu: 'cpu', logicalCpus: 1, threads: 1, revision: 'r', time: 't', rounds: 3, targetXMemcpy: 4, rows: [], copies: [] };
      await withStubs([[hostLib, 'benchHost', async () => report]], async () => {
        assert.deepEqual(json(await cli(['bench', 'host', '--json'])), report);
        const file = path.join(scratch, 'host.json');
        const md = await cli(['bench', 'host', `--json=${file}`]);
        notJson(md);
        assert.deepEqual(JSON.parse(fs.readFileSync(file, 'utf8')), report);
        notJson(await cli(['bench', 'host']));
      });
    });
  });

  // ------------------------------------------------------------------------------------------ profile

  describe('profile (on the host: the launch plan and the minimal traffic, exit 3)', () => {
    // Without the copy's timing (1.5 s a run on the host): the plan and the message are what the flags change.
    const realProfile = profileLib.profile;
    const noCopy = <T>(body: () => Promise<T>) => withStubs([[profileLib, 'profile', (op: string, i: unknown, o: object) => realProfile(op as never, i as never, { ...o, copy: false } as never)]], body);

    it('--arms, --tokens, --json, --ncu and --define change the plan and the message', () => noCopy(async () => {
      const prof = async (...args: string[]) => json(await cli(['profile', 'conv', '--json', ...args]));
      const vec = await prof('--arms', 'vec', '--tokens', '8');
      const two = await prof('--arms', 'scalar,vec', '--tokens', '8');
      const longer = await prof('--arms', 'vec', '--tokens', '16');
      assert.deepEqual(vec.plan.map((p: { arm: string }) => p.arm), ['vec']);
      assert.deepEqual(two.plan.map((p: { arm: string }) => p.arm), ['scalar', 'vec']);
      assert.equal(vec.tokens, 8);
      assert.ok(longer.minimalBytes > vec.minimalBytes);
      assert.equal((await cli(['profile', 'conv'])).status, 2, '--arms is required');
      const text = await cli(['profile', 'conv', '--arms', 'vec', '--tokens', '8']);
      assert.equal(text.status, 3);
      notJson(text);
      // --ncu: an executable file is taken as ncu, so only the backend is missing.
      if (/ncu was not found/.test(vec.unavailable)) {
        const withNcu = await prof('--arms', 'vec', '--tokens', '8', '--ncu', process.execPath);
        assert.doesNotMatch(withNcu.unavailable, /ncu was not found/);
        assert.match(withNcu.unavailable, /this is the host backend/);
      }
      // Spawned: libgdn keeps a defined arm's name for the process, and other tests here defined reg16.
      const unknown = await spawnCli(['profile', 'conv', '--arms', 'reg16', '--tokens', '8'], { ...process.env, GDN_BACKEND: 'host' });
      assert.match(unknown.err, /'reg16' is not a conv arm/);
      try {
        const defined = await prof('--arms', 'reg16', '--tokens', '8', '--define', REG16);
        assert.deepEqual(defined.plan.map((p: { arm: string }) => p.arm), ['reg16']);
      } finally {
        undefineArm('conv', 'reg16');
      }
      for (const op of ['postconv', 'fused']) {
        const arm = op === 'postconv' ? 'tree' : checkedFusedArms()[0];
        const a = json(await cli(['profile', op, '--json', '--arms', arm, '--tokens', '8']));
        const b = json(await cli(['profile', op, '--json', '--arms', arm, '--tokens', '16']));
        assert.deepEqual([a.op, a.tokens, b.tokens], [op, 8, 16]);
        assert.ok(b.minimalBytes > a.minimalBytes);
      }
    }));

    it('--backend host: the backend given, not the one GDN_BACKEND chose (whose choice the default names)', () => noCopy(async () => {
      for (const op of ['conv', 'postconv', 'fused']) {
        const arm = op === 'conv' ? 'vec' : op === 'postconv' ? 'tree' : checkedFusedArms()[0];
        const dflt = json(await cli(['profile', op, '--json', '--arms', arm, '--tokens', '8']));
        const given = json(await cli(['profile', op, '--json', '--arms', arm, '--tokens', '8', '--backend', 'host']));
        assert.match(dflt.unavailable, /this is the host backend \(.+\), which/, op);
        assert.match(given.unavailable, /this is the host backend, which/, op);
      }
    }));
  });

  // ------------------------------------------------------------------------------------------ notebooks

  describe('notebooks run|export|compare', () => {
    it('notebooks run: --backend, --timeout and --out (-o, --out-dir) reach the runner; --json prints the reports', async () => {
      const calls: [string[], runLib.RunOptions][] = [];
      const report = (nb: string): runLib.Report => ({ notebook: nb, output: nb, ok: true, problems: [], errors: [], kernelName: 'gdnlab', backend: 'host', codeCells: 1, executedCells: 1, sizeBytes: 10, durationS: 0.1, stderrTail: '' });
      await withStubs([[runLib, 'runNotebooks', async (paths: string[], o: runLib.RunOptions) => (calls.push([paths, o]), paths.map(report))]], async () => {
        const plain = await cli(['notebooks', 'run', 'a.ipynb']);
        await cli(['notebooks', 'run', 'a.ipynb', '--backend', 'host', '--timeout', '30', '--out', 'x']);
        await cli(['notebooks', 'run', 'a.ipynb', '-o', 'y']);
        await cli(['notebooks', 'run', 'a.ipynb', '--out-dir', 'z']);
        const j = await cli(['notebooks', 'run', 'a.ipynb', '--json']);
        const opts = calls.map(([, o]) => [o.backend, o.timeoutS, o.outDir, typeof o.log]);
        assert.deepEqual(opts, [[undefined, undefined, undefined, 'function'], ['host', 30, 'x', 'function'], [undefined, undefined, 'y', 'function'], [undefined, undefined, 'z', 'function'], [undefined, undefined, undefined, 'undefined']]);
        notJson(plain);
        assert.match(plain.out, /^1 notebooks ok, 0 failed$/m);
        assert.deepEqual(json(j), [report('a.ipynb')]);
      });
    });

    it('notebooks export: --out, --backend, --timeout and --no-execute reach exportNotebook; --json prints the result', async () => {
      const calls: exportLib.ExportOptions[] = [];
      const result = { notebook: 'n.ipynb', html: 'n.html', interactiveHtml: 'n.interactive.html', provenance: null, exportedBy: {} };
      await withStubs([[exportLib, 'exportNotebook', async (_nb: string, o: exportLib.ExportOptions) => (calls.push(o), result)]], async () => {
        const plain = await cli(['notebooks', 'export', 'a.ipynb']);
        await cli(['notebooks', 'export', 'a.ipynb', '--out', 'd', '--backend', 'cuda', '--timeout', '9', '--no-execute']);
        const j = await cli(['notebooks', 'export', 'a.ipynb', '--json']);
        assert.deepEqual(calls.map((o) => [o.outDir, o.backend, o.timeoutS, o.execute]), [
          [path.join(projectRoot(), 'out', 'export'), undefined, undefined, true], ['d', 'cuda', 9, false], [path.join(projectRoot(), 'out', 'export'), undefined, undefined, true],
        ]);
        notJson(plain);
        assert.match(plain.out, /^html +n\.html$/m);
        assert.equal(json(j).html, 'n.html');
      });
    });

    it('notebooks compare: --json prints the pairs (default: the HTML page); --out FILE writes the page there', async () => {
      const a = path.join(scratch, 'a.ipynb');
      const b = path.join(scratch, 'b.ipynb');
      writeNotebook(a, makeNotebook(['1']));
      writeNotebook(b, makeNotebook(['2']));
      const page = await cli(['notebooks', 'compare', a, b]);
      const j = await cli(['notebooks', 'compare', a, b, '--json']);
      const file = path.join(scratch, 'cmp', 'page.html');
      const written = await cli(['notebooks', 'compare', a, b, '--out', file]);
      assert.match(page.out, /^<!DOCTYPE html>/i);
      assert.equal(json(j).a.file, a);
      assert.equal(written.out, '');
      assert.equal(fs.readFileSync(file, 'utf8').trim(), page.out.trim());
      const short = path.join(scratch, 'page2.html');
      await cli(['notebooks', 'compare', a, b, '-o', short]);
      assert.ok(fs.existsSync(short));
    });
  });

  // ------------------------------------------------------------------------------------------ kernel install

  describe('kernel install (spawned: it runs the installer)', () => {
    it('--python, --prefix, --name, --display-name, --env, --uninstall, --user and --sys-prefix', async function () {
      const python = process.env.GDNLAB_PYTHON || path.join(projectRoot(), '.venv', 'bin', 'python');
      if (!fs.existsSync(python)) this.skip();
      const root = path.join(scratch, 'jupyter');
      const env = { ...process.env, JUPYTER_DATA_DIR: path.join(root, 'data'), JUPYTER_CONFIG_DIR: path.join(root, 'config'), JUPYTER_RUNTIME_DIR: path.join(root, 'runtime'), JUPYTER_PLATFORM_DIRS: '1' };
      const prefix = path.join(root, 'prefix');
      const spec = (name: string) => JSON.parse(fs.readFileSync(path.join(prefix, 'share', 'jupyter', 'kernels', name, 'kernel.json'), 'utf8'));
      const install = (...args: string[]) => spawnCli(['kernel', 'install', ...args], env);

      const noPython = await install('--prefix', prefix);
      assert.notEqual(noPython.status, 0);
      assert.match(noPython.err, /--python: missing/);
      const dflt = await install('--python', python, '--prefix', prefix);
      assert.equal(dflt.status, 0, dflt.err);
      const named = await install('--python', python, '--prefix', prefix, '--name', 'gdnlab-flags', '--display-name', 'flags test', '--env', 'A=1', '--env', 'B=2');
      assert.equal(named.status, 0, named.err);
      assert.equal(spec('gdnlab').display_name, 'gdnlab (TypeScript)');
      assert.equal(spec('gdnlab').env.A, undefined);
      assert.equal(spec('gdnlab-flags').display_name, 'flags test');
      assert.deepEqual([spec('gdnlab-flags').env.A, spec('gdnlab-flags').env.B], ['1', '2']);
      const removed = await install('--python', python, '--prefix', prefix, '--name', 'gdnlab-flags', '--uninstall');
      assert.match(removed.out, /Removed kernelspec gdnlab-flags from /);
      assert.ok(!fs.existsSync(path.join(prefix, 'share', 'jupyter', 'kernels', 'gdnlab-flags')));
      assert.ok(fs.existsSync(path.join(prefix, 'share', 'jupyter', 'kernels', 'gdnlab')), 'the default name stays');
      // The scope: --user is the default (the per-user folder); --sys-prefix is the python's; each names its folder.
      const user = await install('--python', python, '--name', 'gdnlab-none', '--uninstall');
      const sys = await install('--python', python, '--sys-prefix', '--name', 'gdnlab-none', '--uninstall');
      assert.match(user.out, new RegExp(`No kernelspec gdnlab-none in ${path.join(root, 'data', 'kernels').replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`));
      assert.match(sys.out, /No kernelspec gdnlab-none in .*share\/jupyter\/kernels\/gdnlab-none: nothing to remove/);
      assert.doesNotMatch(sys.out, new RegExp(root.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')));
      const both = await install('--python', python, '--user', '--prefix', prefix);
      assert.match(both.err, /choose one of --user, --sys-prefix, --prefix/, '--user is read: with --prefix it is refused');
    });
  });
});
