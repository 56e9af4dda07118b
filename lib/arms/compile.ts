// Compiling an arm's per-thread body into a module (docs/USER-ARMS.md): a host shared object with the
// C++ compiler and flags libgdn was built with, or a cubin with nvcc for the device's SM and libgdn's
// device flags. The module's text is  prelude + #line 1 "arm:<name>" + body + the op's entry header,
// so compiler messages point at lines of the body. Modules are cached under a key of everything that
// decides their bytes (docs/USER-ARMS.md, "Compiling"): the text, contract macros, compiler and its
// version, flags, target, libgdn's build facts, and the content of every file the compiler read, as the
// compiler itself lists them (-MD), so compiling an unchanged cell again is a file lookup and an edited
// header anywhere below the module's includes is a rebuild.

import { spawnSync } from 'child_process';
import { createHash } from 'crypto';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { gdnLib, projectRoot } from '../native/gdn';
import { nvrtcCompile, nvrtcLibrary, nvrtcOptions } from './nvrtc';

export type ArmOp = 'conv' | 'postconv';
export type ModuleTarget = 'host' | 'host-fast' | 'cuda' | 'ptx';

/** What CMake recorded next to libgdn (gdn_user_build.json): how libgdn itself was compiled. */
export interface BuildRecipe {
  cxx: string;
  cxxVersion: string;
  /** libgdn's own host flags. */
  cxxFlags: string[];
  /**
   * The flags of a user arm's host module: the host replay's (the built-in arms' per-thread bodies), so
   * user and built-in arms are timed as code built alike.
   */
  hostModuleFlags: string[];
  /** The host replay's optimisation and ISA flags as CMake recorded them ('-O3 -mavx2'). */
  hostReplayFlags: string[];
  nvcc: string;
  nvccFlags: string[];
  buildInfo: string;
  /** Where the recipe was read from. */
  file: string;
}

let recipe: BuildRecipe | undefined;

/** The compile recipe of the loaded libgdn (its gdn_user_build.json). */
export function buildRecipe(): BuildRecipe {
  if (recipe) return recipe;
  const lib = gdnLib();
  const file = path.join(path.dirname(lib.path), 'gdn_user_build.json');
  if (!fs.existsSync(file)) throw new Error(`user arms: ${file} is missing; rebuild libgdn (bash scripts/build.sh) so CMake records its compiler and flags`);
  const j = JSON.parse(fs.readFileSync(file, 'utf8')) as Record<string, string>;
  const split = (s: string) => s.split(/\s+/).filter(Boolean);
  const cxxFlags = split(j.cxx_flags);
  // A recipe written before user_host_flags existed still names the replay's flags in its build facts.
  const replayText = j.host_replay_flags ?? /(?:^|; )host_replay_flags=([^;]*)/.exec(j.build_info ?? '')?.[1];
  if (replayText === undefined) throw new Error(`user arms: ${file} does not say how the host replay was compiled (no host_replay_flags); rebuild libgdn (bash scripts/build.sh)`);
  const hostReplayFlags = split(replayText);
  const hostModuleFlags = j.user_host_flags ? split(j.user_host_flags)
    : [...cxxFlags.filter((f) => !['-std=c++17', '-fPIC', '-shared'].includes(f)), ...hostReplayFlags, '-std=c++17', '-fPIC', '-shared'];
  recipe = {
    cxx: j.cxx, cxxVersion: j.cxx_version, cxxFlags, hostModuleFlags, hostReplayFlags,
    nvcc: j.nvcc && fs.existsSync(j.nvcc) ? j.nvcc : findOnPath('nvcc'), nvccFlags: split(j.nvcc_flags), buildInfo: j.build_info, file,
  };
  return recipe;
}

export function findOnPath(tool: string): string {
  const dirs = [...(process.env.PATH ?? '').split(path.delimiter), '/usr/local/cuda/bin'];
  for (const d of dirs) {
    const f = path.join(d, tool);
    try {
      fs.accessSync(f, fs.constants.X_OK);
      return f;
    } catch {
      // not here
    }
  }
  return '';
}

/**
 * The cuda/ folder whose headers modules are compiled against: $GDNLAB_CUDA_SOURCE (a copy of cuda/, to try
 * a header change without touching the checkout), else this checkout's cuda/. Read at every compile.
 */
export function cudaSourceDir(): string {
  const given = process.env.GDNLAB_CUDA_SOURCE;
  if (given === undefined || given === '') return path.join(projectRoot(), 'cuda');
  const dir = path.resolve(given);
  for (const f of [path.join('include', 'gdn.h'), path.join('src', 'user', 'prelude.h')]) {
    if (!fs.existsSync(path.join(dir, f))) throw new Error(`GDNLAB_CUDA_SOURCE: expected a copy of gdnlab's cuda/ folder (with ${f}), got ${given}`);
  }
  return dir;
}

/** Include folders of the dialect (the headers of a cuda/ folder, default cudaSourceDir()). */
export function includeDirs(root = cudaSourceDir()): string[] {
  return [path.join(root, 'include'), path.join(root, 'src'), path.join(root, 'src', 'common')];
}

/** NVRTC's stand-in standard headers (cmath, cstdint, …), passed to it as one more include folder. */
export function nvrtcShimDir(root = cudaSourceDir()): string {
  return path.join(root, 'src', 'user', 'nvrtc');
}

function sha256(data: string | Buffer): string {
  return createHash('sha256').update(data).digest('hex');
}

/** The module key: the compile's own facts, then each file the compiler read with its content's hash. */
function moduleKey(base: string, deps: readonly string[]): string {
  const h = createHash('sha256').update(base);
  for (const f of [...new Set(deps)].sort()) {
    let content: string;
    try {
      content = sha256(fs.readFileSync(f));
    } catch {
      content = 'missing';  // a deleted header changes the key, and the compile that follows reports it
    }
    h.update(`\0${f}\0${content}`);
  }
  return h.digest('hex').slice(0, 32);
}

/** Every file under the folders (NVRTC lists no dependencies: its key covers every file it could include). */
function filesUnder(dirs: readonly string[]): string[] {
  const out = new Set<string>();
  const walk = (dir: string) => {
    if (!fs.existsSync(dir)) return;
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      const f = path.join(dir, e.name);
      if (e.isDirectory()) walk(f);
      else if (e.isFile()) out.add(f);
    }
  };
  for (const d of dirs) walk(d);
  return [...out];
}

/** The prerequisites of a make rule as the compiler writes it (-MD -MF): "target: a b \\\n c". */
export function parseDepFile(text: string): string[] {
  const body = text.replace(/\\\r?\n/g, ' ');
  const colon = body.search(/:(\s|$)/);
  if (colon < 0) return [];
  const rest = body.slice(colon + 1).split(/\r?\n/)[0];
  // Paths are space-separated; a space inside a path is written "\ ".
  return rest.split(/(?<!\\)\s+/).filter(Boolean).map((f) => f.replace(/\\ /g, ' '));
}

/** Where compiled modules live: $GDNLAB_ARM_CACHE, else ~/.cache/gdnlab/arms (never inside the checkout). */
export function cacheDir(): string {
  const dir = process.env.GDNLAB_ARM_CACHE || path.join(os.homedir(), '.cache', 'gdnlab', 'arms');
  fs.mkdirSync(dir, { recursive: true });
  return dir;
}

/** A compile error: the compiler's messages, with positions as "arm:<name>:<line>:<col>" into the body. */
export class ArmCompileError extends Error {
  constructor(readonly arm: string, readonly target: ModuleTarget, readonly diagnostics: string, readonly command: string) {
    super(`arm '${arm}': compiling for ${target} failed (lines are lines of the arm's source):\n${diagnostics}`);
    this.name = 'ArmCompileError';
  }
}

export interface CompileRequest {
  op: ArmOp;
  name: string;
  /** The per-thread body (the cell's text). */
  source: string;
  /** Preprocessor definitions that carry the contract into the module (GDN_ARM_THREADS, ...). */
  defines: Record<string, string | number>;
  target: ModuleTarget;
  /** CUDA: compute capability as "90". */
  sm?: string;
  /** Extra text before the body (built-in arms: their header). */
  preamble?: string;
  /** The cuda/ folder to compile against (default cudaSourceDir(): an arm's later modules use its definition's). */
  cudaSource?: string;
}

export interface CompiledModule {
  target: ModuleTarget;
  file: string;
  /** The compiler flags (without defines and include folders): part of the key. */
  flags: string[];
  /** The files the module was compiled from besides its text (headers, as the compiler listed them). */
  dependencies: string[];
  /** true: found in the cache, nothing was compiled. */
  cached: boolean;
  /** Wall time of the compiler run (0 on a cache hit), ms. */
  compileMs: number;
  /** ptxas -v and other compiler notes (CUDA), from the run that made the file. */
  log: string;
  command: string;
  key: string;
  sm?: string;
}

export function moduleText(req: CompileRequest): string {
  const entry = req.op === 'conv' ? 'user/entry_conv.h' : 'user/entry_postconv.h';
  return [
    '#include "user/prelude.h"',
    req.preamble ?? '',
    `#line 1 "arm:${req.name}"`,
    req.source,
    '#line 1 "gdn-arm-entry"',
    `#include "${entry}"`,
    '',
  ].join('\n');
}

function toolVersion(tool: string): string {
  const r = spawnSync(tool, ['--version'], { encoding: 'utf8', timeout: 30000 });
  return (r.stdout || '').trim().split('\n').slice(-2).join(' ');
}
const versions = new Map<string, string>();
function cachedVersion(tool: string): string {
  if (!versions.has(tool)) versions.set(tool, toolVersion(tool));
  return versions.get(tool)!;
}

/**
 * Compiles (or finds in the cache) the module of one arm for one target. `recipe` stands in for the loaded
 * libgdn's (tests of the key).
 */
export function compileModule(req: CompileRequest, recipe: BuildRecipe = buildRecipe()): CompiledModule {
  const r = recipe;
  const ptx = req.target === 'ptx';
  const cuda = req.target === 'cuda' || ptx;
  if (cuda && !/^\d{2,3}$/.test(req.sm ?? '')) throw new RangeError(`sm: expected a compute capability such as '90', got ${String(req.sm)}`);
  const cudaCompiler = cuda ? pickCudaCompiler(r, req.name) : null;
  const tool = cudaCompiler === 'nvrtc' ? `nvrtc:${nvrtcLibrary()!.path}` : cuda ? r.nvcc : r.cxx;
  const defines = { ...req.defines, GDN_ARM_NAME: JSON.stringify(req.name) } as Record<string, string | number>;
  if (req.target === 'host') defines.GDN_USER_CHECKED = 1;
  const defineArgs = Object.entries(defines).map(([k, v]) => `-D${k}=${v}`);
  const root = req.cudaSource ?? cudaSourceDir();
  const includes = includeDirs(root).map((d) => `-I${d}`);
  const flags = cudaCompiler === 'nvrtc'
    ? [...nvrtcOptions(r.nvccFlags, req.sm!, ptx), `-I${nvrtcShimDir(root)}`]
    : ptx
      ? [...r.nvccFlags, '-ptx', `-arch=sm_${req.sm}`, '-x', 'cu']
      : cuda ? [...r.nvccFlags, '-cubin', `-arch=sm_${req.sm}`, '-Xptxas', '-v', '-x', 'cu'] : [...r.hostModuleFlags, '-x', 'c++'];
  const ext = ptx ? '.ptx' : cuda ? '.cubin' : '.so';
  const text = moduleText(req);
  const dir = cacheDir();
  // Everything of the compile but the headers' content. The headers come from the compiler's own list:
  // the manifest beside the cache (`<op>-<base>.deps`) keeps the list of the last compile of this base,
  // and the key hashes the listed files as they are now. An edit to one of them gives another key (a
  // rebuild, whose list replaces the manifest); one that changes the include graph edits a listed file.
  const base = sha256(JSON.stringify({ text, defines, flags, tool, version: cudaCompiler === 'nvrtc' ? nvrtcLibrary()!.version : cachedVersion(tool), build: r.buildInfo, includes, target: req.target })).slice(0, 32);
  const manifest = path.join(dir, `${req.op}-${base}.deps`);
  const listed = (): string[] | null => {
    if (cudaCompiler === 'nvrtc') return filesUnder([...includeDirs(root), nvrtcShimDir(root)]);
    try {
      return JSON.parse(fs.readFileSync(manifest, 'utf8')) as string[];
    } catch {
      return null;
    }
  };
  const fileOf = (key: string) => path.join(dir, `${req.op}-${key}${ext}`);
  const command = (file: string) => [tool, ...flags, ...defineArgs, ...includes, '<module>', '-o', file].join(' ');
  const known = listed();
  if (known) {
    const key = moduleKey(base, known);
    const file = fileOf(key);
    const logFile = `${file}.log`;
    if (fs.existsSync(file)) {
      return { target: req.target, file, flags, dependencies: known, cached: true, compileMs: 0, log: fs.existsSync(logFile) ? fs.readFileSync(logFile, 'utf8') : '', command: command(file), key, sm: req.sm };
    }
  }
  // Compiled under a temporary name, then stored under the key of what the compiler read.
  const tmp = path.join(dir, `${req.op}-${base}.${process.pid}.tmp`);
  let log: string;
  let deps: string[];
  const t0 = process.hrtime.bigint();
  if (cudaCompiler === 'nvrtc') {
    // In process: the same text, defines and include folders; the program is named arm.cu.
    const res = nvrtcCompile(text, 'arm.cu', [...flags, ...defineArgs, ...includes], ptx);
    if (!res.ok) throw new ArmCompileError(req.name, req.target, tidyDiagnostics(res.log, 'arm.cu'), command(fileOf(base)));
    fs.writeFileSync(tmp, res.code!);
    log = res.log;
    deps = known!;
  } else {
    const src = path.join(dir, `${req.op}-${base}.${process.pid}${cuda ? '.cu' : '.cpp'}`);
    const depFile = `${tmp}.d`;
    fs.writeFileSync(src, text);
    const run = spawnSync(tool, [...flags, ...defineArgs, ...includes, '-MD', '-MF', depFile, src, '-o', tmp], { encoding: 'utf8', timeout: 300000, maxBuffer: 1 << 24 });
    fs.rmSync(src, { force: true });
    log = `${run.stdout ?? ''}${run.stderr ?? ''}`;
    if (run.status !== 0) {
      fs.rmSync(tmp, { force: true });
      fs.rmSync(depFile, { force: true });
      throw new ArmCompileError(req.name, req.target, tidyDiagnostics(log, src, run.error), command(fileOf(base)));
    }
    let depText = '';
    try {
      depText = fs.readFileSync(depFile, 'utf8');
    } catch {
      // checked below
    }
    fs.rmSync(depFile, { force: true });
    deps = parseDepFile(depText).map((f) => path.resolve(f)).filter((f) => f !== path.resolve(src));
    if (deps.length === 0) {
      fs.rmSync(tmp, { force: true });
      throw new Error(`arm '${req.name}': ${tool} wrote no dependency list (-MD -MF ${depFile}); the module cannot be keyed by the headers it read`);
    }
  }
  const compileMs = Number(process.hrtime.bigint() - t0) / 1e6;
  const key = moduleKey(base, deps);
  const file = fileOf(key);
  fs.writeFileSync(`${file}.log`, log);
  fs.renameSync(tmp, file);
  if (cudaCompiler !== 'nvrtc') {
    const tmpManifest = `${manifest}.${process.pid}.tmp`;
    fs.writeFileSync(tmpManifest, JSON.stringify(deps));
    fs.renameSync(tmpManifest, manifest);
  }
  return { target: req.target, file, flags, dependencies: deps, cached: false, compileMs, log, command: command(file), key, sm: req.sm };
}

/**
 * nvcc or NVRTC for a CUDA module: $GDNLAB_CUDA_COMPILER = nvcc | nvrtc | auto (default: nvcc where the
 * recipe or PATH has one, else NVRTC where libnvrtc is found). Neither is an error that says what to install.
 */
export function pickCudaCompiler(r: BuildRecipe, arm: string): 'nvcc' | 'nvrtc' {
  const want = process.env.GDNLAB_CUDA_COMPILER ?? 'auto';
  if (want !== 'auto' && want !== 'nvcc' && want !== 'nvrtc') throw new RangeError(`GDNLAB_CUDA_COMPILER: expected auto, nvcc or nvrtc, got '${want}'`);
  if (want !== 'nvrtc' && r.nvcc) return 'nvcc';
  if (want !== 'nvcc' && nvrtcLibrary()) return 'nvrtc';
  const missing = want === 'nvcc' ? 'no nvcc (not recorded in the recipe and not on PATH)'
    : want === 'nvrtc' ? 'no libnvrtc (set GDNLAB_NVRTC, or pip install nvidia-cuda-nvrtc into the project venv)'
      : 'neither nvcc (not recorded in the recipe, not on PATH) nor libnvrtc (GDNLAB_NVRTC, the nvidia-cuda-nvrtc wheel, /usr/local/cuda/lib64)';
  throw new Error(`arm '${arm}': cannot compile for CUDA: ${missing} (recipe ${r.file}). Install the CUDA toolkit's nvcc or the nvidia-cuda-nvrtc wheel, or define the arm for the host backend only: defineArm(spec, { backend: gdn.Backend.open('host') })`);
}

/** The compiler's messages without the temporary file's path and the include stack noise. */
function tidyDiagnostics(out: string, src: string, err?: Error): string {
  if (err && !out) return err.message;
  const lines = out
    .split('\n')
    .map((l) => l.split(src).join('<module>').split(projectRoot() + path.sep).join(''))
    .filter((l) => l.trim() !== '' && !/^In file included from|^\s+from /.test(l));
  // The body's own messages first: they carry its line numbers.
  const mine = lines.filter((l) => /arm:[^:(]+[:(]\d+|static assertion|static_assert/.test(l));
  const rest = lines.filter((l) => !mine.includes(l));
  return [...new Set([...mine, ...rest])].slice(0, 40).join('\n');
}
