// Every GPU from sm_80 on (docs/MAINTAINING.md, "GPU architectures"): every kernel of the CUDA backend
// compiles for the architectures of cuda/CMakeLists.txt's fallback list (sm_80 and sm_90 on every run, the others
// on demand: RUN below). Without a GPU, scripts/build.sh builds the backend to compute_80 PTX only and keeps that
// PTX (build/cuda/nvcc-keep); each architecture is proven here for a fraction of a full build: each source's
// compute_80 PTX (the build's, else compiled here) goes through ptxas -O3 (the build's optimisation level) for
// each architecture. The one PTX stands for every
// architecture's because the sources branch on the architecture only at 800 (cp.async, cvt.rn.bf16), which the
// first test checks: a guard above 800 would make the PTX differ per architecture, and this shortcut would no
// longer prove it.

import { strict as assert } from 'assert';
import { spawn } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { findOnPath } from '../../lib/arms/compile';

const ROOT = path.join(__dirname, '..', '..', '..');
const CUDA = path.join(ROOT, 'cuda');
// The machine code part of cuda/CMakeLists.txt's GDN_CUDA_FALLBACK_ARCHS (the one list; read, not copied).
function fallbackArchs(): string[] {
  const m = /set\(GDN_CUDA_FALLBACK_ARCHS "([^"]*)"\)/.exec(fs.readFileSync(path.join(CUDA, 'CMakeLists.txt'), 'utf8'));
  if (!m) throw new Error('cuda/CMakeLists.txt: no set(GDN_CUDA_FALLBACK_ARCHS "...") line');
  return m[1].split(';').filter((a) => a.endsWith('-real')).map((a) => a.slice(0, -'-real'.length));
}
const ARCHS = fallbackArchs();
// The architectures this run puts through ptxas. By default the floor of the list and the GPUs the kernels ran on,
// sm_80 and sm_90: both are proven on every run. Each of the others takes as much CPU again (fused.cu alone is over
// a minute of ptxas per architecture), which CI's 15 minutes cannot hold, and its input is the same compute_80 PTX
// under the same per-thread limits (255 registers, 48 KB of static shared memory), so it is run on demand:
// GDNLAB_PTXAS_ARCHS=all (every architecture of the list) or a comma list such as 100,120 (docs/MAINTAINING.md,
// "GPU architectures", says when each was last run).
function selectedArchs(): { archs: string[]; error: string } {
  const v = (process.env.GDNLAB_PTXAS_ARCHS ?? '').trim();
  if (v === '') return { archs: ARCHS.filter((a) => a === '80' || a === '90'), error: '' };
  if (v === 'all') return { archs: ARCHS, error: '' };
  const want = v.split(',').map((a) => a.trim().replace(/^sm_/, ''));
  const unknown = want.filter((a) => !ARCHS.includes(a));
  if (unknown.length > 0) {
    return { archs: [], error: `GDNLAB_PTXAS_ARCHS: expected 'all' or a comma list of the fallback list's architectures (${ARCHS.join(', ')}), got '${v}'` };
  }
  return { archs: ARCHS.filter((a) => want.includes(a)), error: '' };
}
const SELECTED = selectedArchs();
const RUN = SELECTED.archs;
// libgdn's device flags (cuda/CMakeLists.txt).
const NVCC_FLAGS = ['-std=c++17', '--fmad=false', '-ftz=false', '-prec-div=true', '-prec-sqrt=true', '-O3', '-DGDN_HAVE_CUDA=1'];

function sources(): string[] {
  return ['src/cuda', 'src/user'].flatMap((d) => fs.readdirSync(path.join(CUDA, d)).filter((f) => f.endsWith('.cu')).sort().map((f) => path.join(CUDA, d, f)));
}

function walk(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? walk(path.join(dir, e.name)) : [path.join(dir, e.name)]));
}

function run(cmd: string, args: string[]): Promise<{ code: number | null; err: string; seconds: number }> {
  const t0 = Date.now();
  return new Promise((resolve) => {
    // nice: in a whole-suite run the compiles go on beside the other suites (startCompiles), which keep the CPU first.
    const p = spawn('nice', ['-n', '10', cmd, ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    p.stderr.on('data', (d: Buffer) => (err += d.toString()));
    p.on('error', (e) => resolve({ code: -1, err: String(e), seconds: 0 }));
    p.on('close', (code) => resolve({ code, err, seconds: (Date.now() - t0) / 1000 }));
  });
}

/** Runs jobs `width` at a time, in order of submission. */
async function pool<T>(jobs: (() => Promise<T>)[], width: number): Promise<T[]> {
  const out: T[] = new Array(jobs.length);
  let next = 0;
  await Promise.all(Array.from({ length: width }, async () => {
    for (let i = next++; i < jobs.length; i = next++) out[i] = await jobs[i]();
  }));
  return out;
}

/** ptxas -v's per-entry lines: "Compiling entry function 'NAME' …" then "Used R registers" (and spills). */
function resourceSummary(log: string): { entries: number; maxRegisters: number; spillStores: number } {
  const entries = (log.match(/Compiling entry function/g) ?? []).length;
  const regs = [...log.matchAll(/Used (\d+) registers/g)].map((m) => Number(m[1]));
  const spills = [...log.matchAll(/(\d+) bytes spill stores/g)].reduce((s, m) => s + Number(m[1]), 0);
  return { entries, maxRegisters: Math.max(0, ...regs), spillStores: spills };
}

interface Compiled {
  /** Where the PTX came from: the CUDA build's kept files, or compiled here. */
  ptxFrom: string;
  sources: number;
  /** Architectures the CUDA build compiled from source (not run through ptxas here). */
  fromBuild: string[];
  built: string;
  results: {
    ptx: { file: string; code: number | null; err: string }[];
    ptxas: { arch: string; file: string; code: number | null; err: string; seconds: number }[];
  };
}

let compiles: Promise<Compiled> | null = null;

/**
 * Compiles every source to compute_80 PTX, then runs ptxas -O3 on it for each architecture the CUDA build did not
 * compile (once per process). Minutes of CPU, nearly all of it child processes: in a whole-suite run it starts
 * with the run (the root hook below), niced, and scripts/test.sh runs this file near the end, so the suites
 * before it, which mostly keep one core busy, leave the other to it (docs/MAINTAINING.md, "CI time").
 */
function startCompiles(): Promise<Compiled> {
  if (compiles) return compiles;
  compiles = (async () => {
    const nvccPath = findOnPath('nvcc')!;
    const ptxasPath = findOnPath('ptxas')!;
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gdnlab-archs-'));
    try {
      fs.mkdirSync(path.join(dir, 'gen'));
      // The build-info header CMake generates; its text does not reach a kernel.
      fs.writeFileSync(path.join(dir, 'gen', 'gdn_build_info.h'), '#pragma once\n#define GDN_BUILD_INFO_TEXT "ptxas check"\n');
      const width = Math.max(1, Math.min(os.cpus().length, 4));
      const includes = ['-I', path.join(CUDA, 'include'), '-I', path.join(CUDA, 'src', 'common'), '-I', path.join(CUDA, 'src'), '-I', path.join(dir, 'gen')];
      const srcs = sources();
      let built = '';
      let cache = '';
      try {
        cache = fs.readFileSync(path.join(ROOT, 'build', 'cuda', 'CMakeCache.txt'), 'utf8');
        built = /CMAKE_CUDA_ARCHITECTURES:[A-Z]+=(.*)/.exec(cache)?.[1] ?? '';
      } catch {
        // no CUDA tree: PTX compiled here, ptxas covers every architecture
      }
      // A CUDA tree built for compute_80 alone with nvcc's files kept (scripts/build.sh without a GPU) has compiled
      // every source to exactly this PTX, with the library's own flags; it is used when it is there for every source
      // and not older than the library it went into.
      const keptDir = /GDN_KEEP_CUDA_INTERMEDIATES:[A-Z]+=(.+)/.exec(cache)?.[1] ?? '';
      const lib = path.join(ROOT, 'build', 'cuda', 'libgdn.so');
      const libTime = fs.statSync(lib, { throwIfNoEntry: false })?.mtimeMs;
      const keptPtx = (src: string) => path.join(keptDir, `${path.basename(src, '.cu')}.ptx`);
      const keptTime = (src: string) => fs.statSync(keptPtx(src), { throwIfNoEntry: false })?.mtimeMs;
      const useKept = built === '80-virtual' && keptDir !== '' && libTime !== undefined
        && srcs.every((src) => (keptTime(src) ?? Infinity) <= libTime);
      const t0 = Date.now();
      const ptx = useKept
        ? srcs.map((src) => ({ file: path.relative(ROOT, src), out: keptPtx(src), code: 0 as number | null, err: '' }))
        : await pool(srcs.map((src) => async () => {
          const out = path.join(dir, `${path.basename(src, '.cu')}.ptx`);
          const r = await run(nvccPath, [...NVCC_FLAGS, ...includes, '-ptx', '-arch=compute_80', src, '-o', out]);
          return { file: path.relative(ROOT, src), out, code: r.code, err: r.err };
        }), width);
      const ptxSeconds = (Date.now() - t0) / 1000;
      const ptxFrom = useKept ? `kept by the CUDA build (${path.relative(ROOT, keptDir)}, CMAKE_CUDA_ARCHITECTURES=${built})` : `compiled here in ${ptxSeconds.toFixed(0)} s`;
      // The architectures scripts/build.sh's CUDA tree compiled to machine code are proven there; the rest here.
      const fromBuild = RUN.filter((a) => built.split(';').some((x) => x.replace(/-real$/, '') === a) && libTime !== undefined);
      // The largest PTX first (ptxas takes about as long as the PTX is large: fused.ptx is over half of it), so that
      // the small files fill in beside the large ones instead of one large file ending the compiles alone.
      const bytes = new Map(ptx.map((p) => [p.out, fs.statSync(p.out, { throwIfNoEntry: false })?.size ?? 0]));
      const good = ptx.filter((p) => p.code === 0).sort((a, b) => bytes.get(b.out)! - bytes.get(a.out)!);
      const jobs = good.flatMap((p) => RUN.filter((a) => !fromBuild.includes(a)).map((arch) => async () => {
        const r = await run(ptxasPath, ['-O3', '-v', `-arch=sm_${arch}`, p.out, '-o', path.join(dir, `${path.basename(p.out, '.ptx')}.sm_${arch}.cubin`)]);
        return { arch, file: path.basename(p.out), ...r };
      }));
      const ptxas = await pool(jobs, width);
      return { ptxFrom, sources: srcs.length, fromBuild, built, results: { ptx, ptxas } };
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  })();
  return compiles;
}

// A whole-suite run starts the compiles at once (a root hook: it runs before the first test of any file); a
// run filtered with --grep starts them only when the test below runs.
const filtered = process.argv.some((a) => /^(-g|-f|--grep|--fgrep)(=|$)/.test(a));
before(function () {
  if (!filtered && findOnPath('nvcc') && findOnPath('ptxas')) void startCompiles().catch(() => undefined);
});

describe(`CUDA architectures: every kernel compiles for the fallback architectures (sm_${ARCHS.join(', ')}; ptxas in this run: sm_${RUN.join(', ') || 'none'})`, function () {
  this.timeout(1_200_000);
  const nvcc = findOnPath('nvcc');
  const ptxas = findOnPath('ptxas');

  it('the list is read from cuda/CMakeLists.txt and holds sm_80 (the floor) and sm_90 (the GPUs the kernels ran on)', () => {
    assert.ok(ARCHS.includes('80') && ARCHS.includes('90'), `fallback machine code: sm_${ARCHS.join(', sm_')}`);
    assert.equal(new Set(ARCHS).size, ARCHS.length, `an architecture listed twice: ${ARCHS.join(', ')}`);
  });

  it('the sources branch on the architecture at sm_80 only (so one compute_80 PTX stands for every architecture)', () => {
    const guards: string[] = [];
    for (const f of walk(path.join(CUDA, 'src')).filter((x) => /\.(h|cuh|cu|cpp)$/.test(x))) {
      fs.readFileSync(f, 'utf8').split('\n').forEach((line, i) => {
        for (const m of line.matchAll(/__CUDA_ARCH__\s*(>=|>|<=|<|==)\s*(\d+)/g)) guards.push(`${path.relative(ROOT, f)}:${i + 1}: ${m[0]}`);
      });
    }
    assert.ok(guards.length > 0, 'expected the sm_80 guards of async_copy.h and detmath.h');
    const other = guards.filter((g) => !/>=\s*800$/.test(g));
    assert.deepEqual(other, [], 'an architecture guard other than ">= 800": compile the PTX per architecture in this test');
  });

  it(`ptxas -O3 compiles every kernel for sm_${RUN.join(', sm_') || '(none)'}`, async function () {
    assert.ok(!SELECTED.error, SELECTED.error);
    if (!nvcc || !ptxas) this.skip();
    const { ptxFrom, sources: nSources, fromBuild, built, results } = await startCompiles();
    console.log(`      PTX (compute_80) of ${nSources} sources: ${ptxFrom}`);
    for (const a of fromBuild) console.log(`      sm_${a}: compiled from source by the CUDA build (build/cuda, CMAKE_CUDA_ARCHITECTURES=${built})`);
    for (const r of results.ptx) assert.equal(r.code, 0, `nvcc -ptx ${r.file}: ${r.err.slice(-2000)}`);
    const entriesPerArch = new Map<string, number>();
    for (const arch of RUN.filter((a) => !fromBuild.includes(a))) {
      const mine = results.ptxas.filter((r) => r.arch === arch);
      assert.ok(mine.length > 0, `no ptxas run for sm_${arch}`);
      for (const r of mine) assert.equal(r.code, 0, `ptxas sm_${arch} ${r.file}: ${r.err.slice(-2000)}`);
      const s = resourceSummary(mine.map((r) => r.err).join('\n'));
      entriesPerArch.set(arch, s.entries);
      const secs = mine.reduce((a, r) => a + r.seconds, 0);
      console.log(`      sm_${arch}: ${mine.length} files, ${s.entries} kernels compiled, at most ${s.maxRegisters} registers/thread, ${s.spillStores} B of spill stores in all, ${secs.toFixed(0)} s of ptxas`);
    }
    // Every architecture compiled the same kernels (none ran here when the CUDA build compiled them all).
    if (entriesPerArch.size === 0) return;
    assert.equal(new Set(entriesPerArch.values()).size, 1, `kernels per architecture differ: ${JSON.stringify([...entriesPerArch])}`);
    assert.ok([...entriesPerArch.values()][0] > 0);
  });

  // The architectures this run leaves out show as pending (mocha counts them skipped), so the run's summary says so.
  for (const arch of ARCHS.filter((a) => !RUN.includes(a))) it(`sm_${arch}: ptxas -O3 compiles every kernel (not in this run: GDNLAB_PTXAS_ARCHS=all)`);
});
