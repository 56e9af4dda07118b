// NVRTC, for a machine that can run CUDA but has no nvcc (docs/USER-ARMS.md, "Compiling"): the same module
// text an nvcc compile sees, with libgdn's device flags, compiled in this process to a cubin (or PTX) for
// the device's SM. The cubin is loaded exactly as nvcc's is (by the user-arm worker), so nothing after this
// file knows which compiler made it.
//
// Where libnvrtc is looked for, in order: $GDNLAB_NVRTC (the path of libnvrtc.so*); the Python wheel
// nvidia-cuda-nvrtc in the project venv or the python3 on PATH (nvidia/cu13/lib or nvidia/cuda_nvrtc/lib);
// /usr/local/cuda/lib64. NVRTC ships no standard headers: cuda/src/user/nvrtc/ stands in for the few the
// dialect headers name.

import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import { projectRoot } from '../native/gdn';

// eslint-disable-next-line @typescript-eslint/no-var-requires
const koffi = require('koffi');

export interface NvrtcLibrary {
  /** The libnvrtc.so that was loaded. */
  path: string;
  /** "13.0" */
  version: string;
}

interface Bound extends NvrtcLibrary {
  create: (prog: unknown[], src: string, name: string, n: number, h: null, i: null) => number;
  compile: (prog: unknown, n: number, opts: string[]) => number;
  logSize: (prog: unknown, size: number[]) => number;
  log: (prog: unknown, buf: Buffer) => number;
  codeSize: (prog: unknown, size: number[]) => number;
  code: (prog: unknown, buf: Buffer) => number;
  ptxSize: (prog: unknown, size: number[]) => number;
  ptx: (prog: unknown, buf: Buffer) => number;
  destroy: (prog: unknown[]) => number;
  errorString: (status: number) => string;
}

let bound: Bound | null | undefined;

/** Candidate paths of libnvrtc, most specific first. */
function candidates(): string[] {
  const out: string[] = [];
  if (process.env.GDNLAB_NVRTC) out.push(process.env.GDNLAB_NVRTC);
  const pythons = [path.join(projectRoot(), '.venv', 'bin', 'python'), 'python3'];
  for (const py of pythons) {
    const r = spawnSync(py, ['-c', 'import sysconfig; print(sysconfig.get_paths()["purelib"])'], { encoding: 'utf8', timeout: 20000 });
    if (r.status !== 0) continue;
    const site = r.stdout.trim();
    for (const sub of [['nvidia', 'cu13', 'lib'], ['nvidia', 'cuda_nvrtc', 'lib']]) {
      const dir = path.join(site, ...sub);
      if (!fs.existsSync(dir)) continue;
      for (const f of fs.readdirSync(dir).sort()) if (/^libnvrtc\.so(\.\d+)*$/.test(f)) out.push(path.join(dir, f));
    }
  }
  for (const f of ['/usr/local/cuda/lib64/libnvrtc.so']) out.push(f);
  return out.filter((f, i) => out.indexOf(f) === i && fs.existsSync(f));
}

/** Libraries loaded only so that libnvrtc finds them by soname: held so that they are never unloaded. */
const keptLoaded: unknown[] = [];

/** libnvrtc, loaded once per process; null when none is found. */
export function nvrtcLibrary(): NvrtcLibrary | null {
  if (bound !== undefined) return bound;
  bound = null;
  for (const file of candidates()) {
    try {
      // libnvrtc opens libnvrtc-builtins by its soname at compile time; loading it first from the same
      // folder makes that lookup succeed without LD_LIBRARY_PATH.
      const dir = path.dirname(file);
      // The handles are kept for the life of the process: koffi unloads a library whose object is collected,
      // and a collected builtins handle made a later compile fail to open libnvrtc-builtins (now and then,
      // as the garbage collector ran).
      for (const f of fs.readdirSync(dir)) if (/^libnvrtc-builtins\.so\.[\d.]+$/.test(f)) keptLoaded.push(koffi.load(path.join(dir, f)));
      const lib = koffi.load(file);
      const major = [0];
      const minor = [0];
      const version = lib.func('int nvrtcVersion(_Out_ int *major, _Out_ int *minor)');
      if (version(major, minor) !== 0) continue;
      keptLoaded.push(lib);
      bound = {
        path: file,
        version: `${major[0]}.${minor[0]}`,
        create: lib.func('int nvrtcCreateProgram(_Out_ void **prog, const char *src, const char *name, int numHeaders, void *headers, void *includeNames)'),
        compile: lib.func('int nvrtcCompileProgram(void *prog, int numOptions, const char **options)'),
        logSize: lib.func('int nvrtcGetProgramLogSize(void *prog, _Out_ size_t *size)'),
        log: lib.func('int nvrtcGetProgramLog(void *prog, uint8_t *log)'),
        codeSize: lib.func('int nvrtcGetCUBINSize(void *prog, _Out_ size_t *size)'),
        code: lib.func('int nvrtcGetCUBIN(void *prog, uint8_t *cubin)'),
        ptxSize: lib.func('int nvrtcGetPTXSize(void *prog, _Out_ size_t *size)'),
        ptx: lib.func('int nvrtcGetPTX(void *prog, uint8_t *ptx)'),
        destroy: lib.func('int nvrtcDestroyProgram(_Inout_ void **prog)'),
        errorString: lib.func('const char *nvrtcGetErrorString(int result)'),
      };
      return bound;
    } catch {
      // not loadable here (another architecture, a broken install): try the next one
    }
  }
  return bound;
}

/**
 * The nvcc device flags of libgdn's recipe as NVRTC options (NVRTC has no -O level; it optimises fully).
 * The caller adds the include folders, the stand-in standard headers' (compile.ts, nvrtcShimDir) among them.
 */
export function nvrtcOptions(nvccFlags: string[], sm: string, ptx: boolean): string[] {
  const kept = nvccFlags.filter((f) => !/^-O\d$/.test(f));
  return [
    ...kept,
    `--gpu-architecture=${ptx ? 'compute' : 'sm'}_${sm}`,
    // The dialect headers declare their functions without __device__ (they are shared with the host
    // build); -default-device makes them device functions, as nvcc's device pass treats the inlined ones.
    '-default-device',
    '-diag-suppress=1097', // gdn.h's visibility attribute, meaningless in device code
    ...(ptx ? [] : ['--ptxas-options=-v']),
  ];
}

export interface NvrtcResult {
  ok: boolean;
  /** The program log: diagnostics, and ptxas's resource lines for a cubin. */
  log: string;
  code?: Buffer;
}

/** Compiles one module text; `options` come from nvrtcOptions plus the defines and include folders. */
export function nvrtcCompile(text: string, name: string, options: string[], ptx: boolean): NvrtcResult {
  const lib = nvrtcLibrary();
  if (!lib) throw new Error('NVRTC: libnvrtc was not found');
  const b = bound!;
  const prog: unknown[] = [null];
  const st = b.create(prog, text, name, 0, null, null);
  if (st !== 0) throw new Error(`NVRTC: nvrtcCreateProgram failed: ${b.errorString(st)}`);
  try {
    const status = b.compile(prog[0], options.length, options);
    const size = [0];
    b.logSize(prog[0], size);
    const buf = Buffer.alloc(Math.max(1, Number(size[0])));
    b.log(prog[0], buf);
    const log = buf.toString('utf8').replace(/\0+$/, '');
    if (status !== 0) return { ok: false, log: log || b.errorString(status) };
    const n = [0];
    (ptx ? b.ptxSize : b.codeSize)(prog[0], n);
    const code = Buffer.alloc(Number(n[0]));
    (ptx ? b.ptx : b.code)(prog[0], code);
    return { ok: true, log, code: ptx ? code.subarray(0, code.indexOf(0) >= 0 ? code.indexOf(0) : code.length) : code };
  } finally {
    b.destroy(prog);
  }
}
