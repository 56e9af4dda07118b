// Every option proven live (docs/TESTING.md, "Every option proven live"), for the benchmarks (lib/bench): each
// option of benchConv/benchPostconv/benchFused, benchHost and the overhead bench, set, gives a report (or a
// message) that differs from the default's. Host backend, the quick shapes and a short timing budget; the
// CUDA-only baselines (torch, python, vllmPath) through a host backend that reports kind 'cuda' (./cuda-stand-ins.ts)
// and stand-in Python executables that print what the real scripts print.

import { strict as assert } from 'assert';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { Backend } from '../../lib/backend';
import { BenchOptions, benchConv, benchFused, benchPostconv, convBenchShapes, convTimed, fusedBenchShapes } from '../../lib/bench/bench';
import { benchHost } from '../../lib/bench/host';
import { allocationCases, timeOverheadCases } from '../../lib/bench/overhead';
import { arms } from '../../lib/arms/table';
import { openBackend } from '../backends';
import { fakePython as writeFakePython, reportingCuda } from './cuda-stand-ins';

const host = (): Backend => openBackend('host');
// A short timing budget: the rows are what is compared, not their times.
const timing = { warmupMs: 5, minSamples: 3, minTimeMs: 1, maxTimeMs: 40, noiseTarget: 0.5 };
const SHAPE = 'Qwen3.5-4B T=64';

/** Thrown by a log callback to stop a run once a line matches (what the run was about to do is in its lines). */
class Stop extends Error {}
async function linesUntil(run: (log: (l: string) => void) => Promise<unknown>, match: RegExp): Promise<string> {
  const lines: string[] = [];
  await assert.rejects(run((l) => {
    lines.push(l);
    if (match.test(l)) throw new Stop(l);
  }), Stop);
  return lines.join('\n');
}

describe('bench API: every option changes what the benchmark does or reports', function () {
  this.timeout(60000);

  describe('benchConv / benchPostconv / benchFused', () => {
    let dflt: Awaited<ReturnType<typeof benchConv>>;
    before(async () => {
      // The default options but for one arm at one shape: the timing, samples, log and torch defaults.
      dflt = await benchConv({ backend: host(), quick: true, arms: ['scalar'], shapes: [SHAPE] });
    });

    it('arms and shapes select the rows; without them every timed arm at every quick shape', async () => {
      const everyArm = await benchConv({ backend: host(), quick: true, shapes: [SHAPE], timing });
      const everyShape = await benchConv({ backend: host(), quick: true, arms: ['scalar'], timing });
      const label = (r: { arm: string; mapping?: string }) => `${r.arm}/${r.mapping}`;
      assert.deepEqual(dflt.rows.map(label), ['scalar/sequence']);
      assert.deepEqual([...new Set(dflt.rows.map((r) => r.shape))], [SHAPE]);
      assert.deepEqual(everyArm.rows.map(label), convTimed().map(label));
      assert.deepEqual(everyShape.rows.map((r) => r.shape), convBenchShapes(true).map((s) => s.id));
      // The post-conv bench reads them too (its own selection code).
      const post = arms('postconv').map((a) => a.name);
      const pc = await benchPostconv({ backend: host(), quick: true, arms: [post[1]], shapes: ['Hv=32) T=32'], timing });
      assert.deepEqual(pc.rows.map((r) => `${r.shape} ${r.arm}`), [`Qwen3.5-4B (Hk=16, Hv=32) T=32 ${post[1]}`]);
      const pcAll = await benchPostconv({ backend: host(), quick: true, shapes: ['Hv=32) T=32'], timing });
      assert.deepEqual(pcAll.rows.map((r) => r.arm), post);
    });

    it('fused: shapes select the shapes; arms is refused by name (its set is fixed)', async () => {
      const quickShapes = fusedBenchShapes(true).map((s) => s.id);
      const one = await benchFused({ backend: host(), quick: true, shapes: [quickShapes[0]], timing });
      assert.deepEqual([...new Set(one.rows.map((r) => r.shape))], [quickShapes[0]]);
      assert.ok(quickShapes.length > 1);
      await assert.rejects(benchFused({ backend: host(), quick: true, shapes: [quickShapes[0]], arms: ['vec'], timing }), /arms: bench fused times its fixed set/);
    });

    it('quick: small shapes; without it the GPU-sized ones (a quick shape name matches none of them)', async () => {
      assert.ok(convBenchShapes(true).some((s) => s.id === SHAPE));
      for (const bench of [benchConv, benchPostconv, benchFused]) {
        await assert.rejects(bench({ backend: host(), shapes: ['T=64'], timing }), /shapes: \["T=64"\] match none of 'Qwen3\.5-4B/, bench.name);
      }
      const quickPost = await benchPostconv({ backend: host(), quick: true, arms: ['tree'], shapes: ['Hv=32) T=32'], timing });
      assert.equal(quickPost.rows.length, 1);
    });

    it('timing: the options reach the timing run (the default takes at least 30 samples, cold)', async () => {
      const r = await benchConv({ backend: host(), quick: true, arms: ['scalar'], shapes: [SHAPE], timing: { ...timing, mode: 'hot', noiseTarget: 1e-9, maxSamples: 4 } });
      assert.equal(r.rows[0].n, 4);
      assert.equal(r.stops[0].reason, 'max-samples');
      assert.equal(r.provenance!.mode, 'hot');
      // The default asks for 30 samples. Under the quick run's 1.5 s cap a loaded host can stop short of them; then
      // the stop must be that cap, and its account must name the 30-sample minimum as unmet.
      const stop = dflt.stops[0];
      if (dflt.rows[0].n < 30) {
        assert.equal(stop.reason, 'time-cap', `default: ${dflt.rows[0].n} samples (${stop.reason}: ${stop.detail})`);
        assert.match(stop.detail, /\b\d+ < 30 samples\b/, `default: ${stop.detail}`);
      }
      assert.equal(dflt.provenance!.mode, 'cold');
    });

    it('samples keeps every timing run with its raw samples; log receives the progress lines', async () => {
      const lines: string[] = [];
      const r = await benchConv({ backend: host(), quick: true, arms: ['scalar'], shapes: [SHAPE], timing, samples: true, log: (l) => lines.push(l) });
      assert.equal(r.timings!.length, 1);
      assert.equal(r.timings![0].shape, SHAPE);
      assert.equal(r.timings![0].cases.find((c) => c.label === 'scalar/sequence')!.samplesUs.length, r.rows[0].n);
      assert.equal(dflt.timings, undefined);
      assert.ok(lines.some((l) => l.startsWith(`conv ${SHAPE}: timing 1 arms + copy`)), lines.join('\n'));
    });

    describe('CUDA only: torch, python and vllmPath (baselines run by a stand-in Python)', () => {
      let dir: string;
      const envBefore = process.env.GDN_TORCH_PYTHON;
      const fakePython = (tag: string) => writeFakePython(dir, tag);
      before(() => {
        dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gdnlab-fake-python-'));
      });
      after(() => {
        if (envBefore === undefined) delete process.env.GDN_TORCH_PYTHON;
        else process.env.GDN_TORCH_PYTHON = envBefore;
        fs.rmSync(dir, { recursive: true, force: true });
      });
      const run = (o: Partial<BenchOptions>) => benchConv({ backend: reportingCuda(host()), quick: true, arms: ['scalar'], shapes: [SHAPE], timing, ...o });

      it('torch runs the PyTorch baseline (default: none) with the python given (default: GDN_TORCH_PYTHON, else python3)', async () => {
        process.env.GDN_TORCH_PYTHON = fakePython('from-env');
        const none = await run({});
        const viaEnv = await run({ torch: true });
        const given = await run({ torch: true, python: fakePython('given') });
        assert.equal(none.torch, null);
        assert.deepEqual(none.torchRows, []);
        assert.deepEqual(viaEnv.torch, { version: 'torch from-env', cuda: '0', device: 'none' });
        assert.deepEqual(given.torch, { version: 'torch given', cuda: '0', device: 'none' });
        assert.deepEqual(given.torchRows.map((t) => t.shape), [SHAPE]);
        assert.equal(given.rows[0].xTorch, given.rows[0].medianUs / 100);
        assert.equal(none.rows[0].xTorch, undefined);
        // On the host backend itself the baselines are not run (they time on the GPU).
        assert.equal((await benchConv({ backend: host(), quick: true, arms: ['scalar'], shapes: [SHAPE], timing, torch: true })).torch, null);
      });

      it('vllmPath runs vLLM\'s kernels from that folder beside ours (default: none)', async () => {
        const python = fakePython('v');
        const without = await run({ torch: true, python });
        const withVllm = await run({ torch: true, python, vllmPath: '/packed/vllm-here' });
        const vllmRows = (r: typeof without) => r.rows.filter((x) => x.arm === 'vLLM (Triton)');
        assert.equal(vllmRows(without).length, 0);
        assert.equal(vllmRows(withVllm).length, 1);
        assert.match(vllmRows(withVllm)[0].note!, /vllm v at \/packed\/vllm-here/);
        assert.deepEqual(withVllm.baselines.map((b) => b.baseline), ['PyTorch eager', 'vLLM']);
      });
    });
  });

  describe('benchHost', () => {
    it('quick: T = 256 (default 2048); rounds: the rounds timed (default 3 with quick)', async () => {
      const quick = await linesUntil((log) => benchHost({ backend: host(), quick: true, log }), /rounds$/);
      const full = await linesUntil((log) => benchHost({ backend: host(), log }), /validating/);
      assert.match(quick, /conv Qwen3\.5-4B T=256 /);
      assert.match(full, /conv Qwen3\.5-4B T=2048 /);
      assert.match(quick, /, 3 rounds$/);
      const two = await linesUntil((log) => benchHost({ backend: host(), quick: true, rounds: 2, log }), /rounds$/);
      assert.match(two, /, 2 rounds$/);
    });

    it('backend: measures the host backend only; a CUDA one is refused by name', async () => {
      await assert.rejects(benchHost({ backend: reportingCuda(host()), quick: true }), /bench host: measures the host backend; got the cuda backend/);
    });
  });

  describe('the overhead bench', () => {
    it('calls and quick set the calls timed per case (default 2000, quick 300); log names each case', async () => {
      const one = () => allocationCases(host()).slice(0, 1);
      const lines: string[] = [];
      const [dflt] = await timeOverheadCases(one(), { backend: host() });
      const [quick] = await timeOverheadCases(one(), { backend: host(), quick: true });
      const [calls] = await timeOverheadCases(one(), { backend: host(), calls: 60, log: (l) => lines.push(l) });
      assert.deepEqual([dflt.n, quick.n, calls.n], [2000, 300, 60]);
      assert.deepEqual(lines, [`overhead: ${dflt.op} (${dflt.variant})`]);
    });
  });
});
