// Compiling an arm's per-thread body into a module (docs/USER-ARMS.md): a host shared object with the
// C++ compiler and flags libgdn was built with, or a cubin with nvcc for the device's SM and libgdn's
// device flags. The module's text is  prelude + #line 1 "arm:<name>" + body + the op's entry header,
// so compiler messages point at lines of the body. Modules are cached by a hash of everything that
// decides their bytes (text, contract macros, compiler and its version, flags, target, library
// headers), so compiling an unchanged cell again is a file lookup.

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
  cxxFlags: string[];
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
  recipe = {
    cxx: j.cxx, cxxVersion: j.cxx_version, cxxFlags: split(j.cxx_flags),
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

/** Include folders of the dialect (this checkout's cuda/ headers). */
export function includeDirs(): string[] {
  const root = projectRoot();
  return [path.join(root, 'cuda', 'include'), path.join(root, 'cuda', 'src'), path.join(root, 'cuda', 'src', 'common')];
}

let headersHash: string | undefined;

/** A hash of every header a module can include: a change to the dialect recompiles every arm. */
function dialectHash(): string {
  if (headersHash) return headersHash;
  const h = createHash('sha256');
  for (const dir of includeDirs().concat(path.join(projectRoot(), 'cuda', 'src', 'user'))) {
    if (!fs.existsSync(dir)) continue;
    for (const f of fs.readdirSync(dir).filter((n) => n.endsWith('.h')).sort()) {
      h.update(f);
      h.update(fs.readFileSync(path.join(dir, f)));
    }
  }
  // NVRTC's stand-in standard headers (no extension: cmath, cstdint, …).
  const shim = path.join(projectRoot(), 'cuda', 'src', 'user', 'nvrtc');
  if (fs.existsSync(shim)) {
    for (const f of fs.readdirSync(shim).sort()) {
      h.update(`nvrtc/${f}`);
      h.update(fs.readFileSync(path.join(shim, f)));
    }
  }
  return (headersHash = h.digest('hex'));
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
}

export interface CompiledModule {
  target: ModuleTarget;
  file: string;
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

/** Compiles (or finds in the cache) the module of one arm for one target. */
export function compileModule(req: CompileRequest): CompiledModule {
  const r = buildRecipe();
  const ptx = req.target === 'ptx';
  const cuda = req.target === 'cuda' || ptx;
  if (cuda && !/^\d{2,3}$/.test(req.sm ?? '')) throw new RangeError(`sm: expected a compute capability such as '90', got ${String(req.sm)}`);
  const cudaCompiler = cuda ? pickCudaCompiler(r, req.name) : null;
  const tool = cudaCompiler === 'nvrtc' ? `nvrtc:${nvrtcLibrary()!.path}` : cuda ? r.nvcc : r.cxx;
  const defines = { ...req.defines, GDN_ARM_NAME: JSON.stringify(req.name) } as Record<string, string | number>;
  if (req.target === 'host') defines.GDN_USER_CHECKED = 1;
  const defineArgs = Object.entries(defines).map(([k, v]) => `-D${k}=${v}`);
  const includes = includeDirs().map((d) => `-I${d}`);
  const flags = cudaCompiler === 'nvrtc'
    ? nvrtcOptions(r.nvccFlags, req.sm!, ptx)
    : ptx
      ? [...r.nvccFlags, '-ptx', `-arch=sm_${req.sm}`, '-x', 'cu']
      : cuda ? [...r.nvccFlags, '-cubin', `-arch=sm_${req.sm}`, '-Xptxas', '-v', '-x', 'cu'] : [...r.cxxFlags, '-x', 'c++'];
  const ext = ptx ? '.ptx' : cuda ? '.cubin' : '.so';
  const text = moduleText(req);
  const key = createHash('sha256')
    .update(JSON.stringify({ text, defines, flags, tool, version: cudaCompiler === 'nvrtc' ? nvrtcLibrary()!.version : cachedVersion(tool), build: r.buildInfo, dialect: dialectHash(), target: req.target }))
    .digest('hex')
    .slice(0, 32);
  const dir = cacheDir();
  const file = path.join(dir, `${req.op}-${key}${ext}`);
  const logFile = `${file}.log`;
  const command = [tool, ...flags, ...defineArgs, ...includes, '<module>', '-o', file].join(' ');
  if (fs.existsSync(file)) {
    return { target: req.target, file, cached: true, compileMs: 0, log: fs.existsSync(logFile) ? fs.readFileSync(logFile, 'utf8') : '', command, key, sm: req.sm };
  }
  if (cudaCompiler === 'nvrtc') {
    // In process: the same text, defines and include folders; the program is named arm.cu.
    const options = [...flags, ...defineArgs, ...includes];
    const t0 = process.hrtime.bigint();
    const res = nvrtcCompile(text, 'arm.cu', options, ptx);
    const compileMs = Number(process.hrtime.bigint() - t0) / 1e6;
    if (!res.ok) throw new ArmCompileError(req.name, req.target, tidyDiagnostics(res.log, 'arm.cu'), command);
    const tmp = `${file}.${process.pid}.tmp`;
    fs.writeFileSync(tmp, res.code!);
    fs.writeFileSync(logFile, res.log);
    fs.renameSync(tmp, file);
    return { target: req.target, file, cached: false, compileMs, log: res.log, command, key, sm: req.sm };
  }
  const src = path.join(dir, `${req.op}-${key}.${process.pid}${cuda ? '.cu' : '.cpp'}`);
  const tmp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(src, text);
  const t0 = process.hrtime.bigint();
  const run = spawnSync(tool, [...flags, ...defineArgs, ...includes, src, '-o', tmp], { encoding: 'utf8', timeout: 300000, maxBuffer: 1 << 24 });
  const compileMs = Number(process.hrtime.bigint() - t0) / 1e6;
  fs.rmSync(src, { force: true });
  const out = `${run.stdout ?? ''}${run.stderr ?? ''}`;
  if (run.status !== 0) {
    fs.rmSync(tmp, { force: true });
    throw new ArmCompileError(req.name, req.target, tidyDiagnostics(out, src, run.error), command);
  }
  fs.writeFileSync(logFile, out);
  fs.renameSync(tmp, file);
  return { target: req.target, file, cached: false, compileMs, log: out, command, key, sm: req.sm };
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
