// lib/arms/nvrtc.ts with no libnvrtc: koffi.load hands back a scripted library (its functions record their
// arguments and answer what each test says), the Python asked for its site-packages is a scripted spawnSync,
// and the wheel folders are temporary ones. Checked exactly: where libnvrtc is looked for and in what order,
// that libnvrtc-builtins is loaded first from the same folder, that an unloadable or broken candidate is
// skipped, that the answer is kept for the process, the NVRTC options made from nvcc's flags, and the
// program's life (create, compile, log, code or PTX, destroy) with its errors.
// Each test loads a fresh copy of nvrtc.ts, so the loaded library starts unknown.

import { strict as assert } from 'assert';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { freshRequire, Undo } from '../stand-ins';

type Nvrtc = typeof import('../../lib/arms/nvrtc');

// eslint-disable-next-line @typescript-eslint/no-var-requires
const childProcess = require('child_process') as Record<string, unknown>;
// eslint-disable-next-line @typescript-eslint/no-var-requires
const fsModule = require('fs') as Record<string, unknown>;
// eslint-disable-next-line @typescript-eslint/no-var-requires
const koffi = require('koffi') as Record<string, unknown>;
// eslint-disable-next-line @typescript-eslint/no-var-requires
const pathsModule = require('../../lib/paths') as Record<string, unknown>;

const nvrtcPath = require.resolve('../../lib/arms/nvrtc');
const fresh = (): Nvrtc => freshRequire<Nvrtc>(nvrtcPath);

/** Replacements for one test (module exports, environment variables), undone in afterEach. */
const undo = new Undo();
const stub = (obj: object, key: string, value: unknown): void => undo.stub(obj, key, value);
const setEnv = (name: string, value: string | undefined): void => undo.setEnv(name, value);

const SYSTEM = '/usr/local/cuda/lib64/libnvrtc.so';
let tmp = '';
let root = '';
/** Whether the system libnvrtc "exists" (fs.existsSync answers so for that one path). */
let systemExists = false;
/** What each python answers: its site-packages folder, or null for a failed run. */
let pythons: Record<string, string | null> = {};
let spawned: { cmd: string; args: string[]; opts: unknown }[] = [];


const VENV_PY = () => path.join(root, '.venv', 'bin', 'python');

/** A file to stand for a library. */
function touch(...parts: string[]): string {
  const f = path.join(...parts);
  fs.mkdirSync(path.dirname(f), { recursive: true });
  fs.writeFileSync(f, '');
  return f;
}

interface FakeLib {
  file: string;
  funcs: string[];
  version?: [number, number, number];
  /** Named functions' behaviour (by C name). */
  impl?: Record<string, (...a: any[]) => unknown>;
}

/** koffi.load over scripted libraries: `libs` by path; a path not there throws as an unloadable file. */
function koffiLoads(libs: Record<string, Omit<FakeLib, 'file' | 'funcs'>>): { loaded: string[]; made: Record<string, FakeLib>; versionArgs: unknown[][] } {
  const loaded: string[] = [];
  const made: Record<string, FakeLib> = {};
  const versionArgs: unknown[][] = [];
  stub(koffi, 'load', (file: string) => {
    loaded.push(file);
    if (/builtins/.test(path.basename(file))) return { builtins: file };
    const spec = libs[file];
    if (!spec) throw new Error(`cannot load ${file}`);
    const lib: FakeLib = { file, funcs: [], ...spec };
    made[file] = lib;
    return {
      func: (sig: string) => {
        lib.funcs.push(sig);
        const name = /(\w+)\(/.exec(sig)![1];
        if (name === 'nvrtcVersion') {
          return (major: number[], minor: number[]) => {
            versionArgs.push([[...major], [...minor]]);
            const [st, ma, mi] = lib.version ?? [0, 13, 0];
            major[0] = ma;
            minor[0] = mi;
            return st;
          };
        }
        return lib.impl?.[name] ?? (() => 0);
      },
    };
  });
  return { loaded, made, versionArgs };
}

const SIGNATURES = [
  'int nvrtcVersion(_Out_ int *major, _Out_ int *minor)',
  'int nvrtcCreateProgram(_Out_ void **prog, const char *src, const char *name, int numHeaders, void *headers, void *includeNames)',
  'int nvrtcCompileProgram(void *prog, int numOptions, const char **options)',
  'int nvrtcGetProgramLogSize(void *prog, _Out_ size_t *size)',
  'int nvrtcGetProgramLog(void *prog, uint8_t *log)',
  'int nvrtcGetCUBINSize(void *prog, _Out_ size_t *size)',
  'int nvrtcGetCUBIN(void *prog, uint8_t *cubin)',
  'int nvrtcGetPTXSize(void *prog, _Out_ size_t *size)',
  'int nvrtcGetPTX(void *prog, uint8_t *ptx)',
  'int nvrtcDestroyProgram(_Inout_ void **prog)',
  'const char *nvrtcGetErrorString(int result)',
];

describe('NVRTC (nvrtc.ts), no libnvrtc loaded', () => {
  beforeEach(() => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'gdnlab-nvrtc-edges-'));
    root = path.join(tmp, 'proj');
    systemExists = false;
    pythons = {};
    spawned = [];
    stub(pathsModule, 'projectRoot', () => root);
    setEnv('GDNLAB_NVRTC', undefined);
    const realExists = fs.existsSync;
    stub(fsModule, 'existsSync', (p: string) => (p === SYSTEM ? systemExists : realExists(p)));
    // The system folder is listed as empty, whatever this machine has there.
    const realReaddir = fs.readdirSync;
    stub(fsModule, 'readdirSync', (d: string) => (d === path.dirname(SYSTEM) ? [] : realReaddir(d)));
    stub(childProcess, 'spawnSync', (cmd: string, args: string[], opts: unknown) => {
      spawned.push({ cmd, args, opts });
      const site = pythons[cmd];
      return site === undefined || site === null ? { status: 1, stdout: '', stderr: 'no' } : { status: 0, stdout: `  ${site}\n`, stderr: '' };
    });
  });
  afterEach(() => {
    undo.restore();
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  describe('finding libnvrtc (nvrtcLibrary)', () => {
    it('$GDNLAB_NVRTC first; its folder\'s libnvrtc-builtins loaded before it; the version and every entry point bound', () => {
      const lib = touch(tmp, 'nv', 'libnvrtc.so.13');
      const builtins = touch(tmp, 'nv', 'libnvrtc-builtins.so.13.0');
      touch(tmp, 'nv', 'libnvrtc-builtins.so');        // no version: not a builtins library
      touch(tmp, 'nv', 'libnvrtc-builtins.so.13.0.x');  // not a version either
      touch(tmp, 'nv', 'xlibnvrtc-builtins.so.13');
      setEnv('GDNLAB_NVRTC', lib);
      systemExists = true;
      const k = koffiLoads({ [lib]: { version: [0, 13, 2] }, [SYSTEM]: {} });
      const n = fresh();
      const got = n.nvrtcLibrary()!;
      assert.equal(got.path, lib);
      assert.equal(got.version, '13.2');
      assert.deepEqual(k.loaded, [builtins, lib]);
      assert.deepEqual(k.versionArgs, [[[0], [0]]]);
      assert.deepEqual(k.made[lib].funcs, SIGNATURES);
      // Kept for the process: no second search.
      const asked = spawned.length;
      assert.equal(n.nvrtcLibrary(), got);
      assert.equal(spawned.length, asked);
      assert.deepEqual(k.loaded, [builtins, lib]);
    });

    it('the Pythons asked, in order (the project venv, then python3), and the wheel folders (cu13, then cuda_nvrtc), sorted, versioned names only', () => {
      const site1 = path.join(tmp, 'site1');
      const site2 = path.join(tmp, 'site2');
      const a = touch(site1, 'nvidia', 'cu13', 'lib', 'libnvrtc.so.13');
      const b = touch(site1, 'nvidia', 'cu13', 'lib', 'libnvrtc.so');
      touch(site1, 'nvidia', 'cu13', 'lib', 'libnvrtc.so.13.x');
      touch(site1, 'nvidia', 'cu13', 'lib', 'libnvrtc.so.a');
      touch(site1, 'nvidia', 'cu13', 'lib', 'alibnvrtc.so');
      touch(site1, 'nvidia', 'cu13', 'lib', 'libnvrtc-builtins.so.13.0');
      const c = touch(site1, 'nvidia', 'cuda_nvrtc', 'lib', 'libnvrtc.so.12.4.127');
      const d = touch(site2, 'nvidia', 'cuda_nvrtc', 'lib', 'libnvrtc.so.12');
      pythons = { [VENV_PY()]: site1, python3: site2 };
      systemExists = true;
      const k = koffiLoads({});
      const n = fresh();
      assert.equal(n.nvrtcLibrary(), null);
      assert.deepEqual(spawned, [VENV_PY(), 'python3'].map((cmd) => ({
        cmd, args: ['-c', 'import sysconfig; print(sysconfig.get_paths()["purelib"])'], opts: { encoding: 'utf8', timeout: 20000 },
      })));
      const builtins = path.join(site1, 'nvidia', 'cu13', 'lib', 'libnvrtc-builtins.so.13.0');
      assert.deepEqual(k.loaded, [builtins, b, builtins, a, c, d, SYSTEM]);
      // null is kept too.
      assert.equal(n.nvrtcLibrary(), null);
      assert.equal(spawned.length, 2);
    });

    it('a Python that fails is skipped; the same library named twice is tried once; a missing one is not tried', () => {
      const site = path.join(tmp, 'site');
      const a = touch(site, 'nvidia', 'cu13', 'lib', 'libnvrtc.so.13');
      pythons = { [VENV_PY()]: null, python3: site };
      setEnv('GDNLAB_NVRTC', a);
      const k = koffiLoads({});
      assert.equal(fresh().nvrtcLibrary(), null);
      assert.deepEqual(k.loaded, [a]);
      setEnv('GDNLAB_NVRTC', path.join(tmp, 'missing.so'));
      const k2 = koffiLoads({});
      assert.equal(fresh().nvrtcLibrary(), null);
      assert.deepEqual(k2.loaded, [a]);
    });

    it('a candidate that does not load, or whose nvrtcVersion fails, gives way to the next', () => {
      const bad = touch(tmp, 'bad', 'libnvrtc.so');
      const broken = touch(tmp, 'broken', 'libnvrtc.so.12');
      const site = path.join(tmp, 'site');
      const good = touch(site, 'nvidia', 'cuda_nvrtc', 'lib', 'libnvrtc.so.12');
      touch(site, 'nvidia', 'cu13', 'lib', 'libnvrtc.so.13');
      pythons = { python3: site };
      setEnv('GDNLAB_NVRTC', bad);
      const k = koffiLoads({ [path.join(site, 'nvidia', 'cu13', 'lib', 'libnvrtc.so.13')]: { version: [7, 13, 0] }, [good]: { version: [0, 12, 9] }, [broken]: {} });
      const got = fresh().nvrtcLibrary()!;
      assert.equal(got.path, good);
      assert.equal(got.version, '12.9');
      assert.deepEqual(k.loaded, [bad, path.join(site, 'nvidia', 'cu13', 'lib', 'libnvrtc.so.13'), good]);
      assert.ok(broken);
    });

    it('an empty $GDNLAB_NVRTC and a Python that fails add no candidate; a wheel folder is read in sorted order', () => {
      // Every path "exists" here, so only the code's own checks keep a candidate out.
      const site = path.join(tmp, 'site');
      const cu13 = path.join(site, 'nvidia', 'cu13', 'lib');
      const nv = path.join(site, 'nvidia', 'cuda_nvrtc', 'lib');
      fs.mkdirSync(cu13, { recursive: true });
      fs.mkdirSync(nv, { recursive: true });
      pythons = { [VENV_PY()]: null, python3: site };
      setEnv('GDNLAB_NVRTC', '');
      stub(fsModule, 'existsSync', () => true);
      const realReaddir = fs.readdirSync;
      stub(fsModule, 'readdirSync', (d: string) => (d === cu13 ? ['libnvrtc.so.13', 'libnvrtc.so'] : d === path.dirname(SYSTEM) ? [] : realReaddir(d)));
      const k = koffiLoads({});
      assert.equal(fresh().nvrtcLibrary(), null);
      assert.deepEqual(k.loaded, [path.join(cu13, 'libnvrtc.so'), path.join(cu13, 'libnvrtc.so.13'), SYSTEM]);
    });

    it('the system libnvrtc when nothing else is found', () => {
      systemExists = true;
      const k = koffiLoads({ [SYSTEM]: {} });
      stub(fsModule, 'readdirSync', (d: string) => {
        assert.equal(d, path.dirname(SYSTEM));
        return ['libnvrtc-builtins.so.13.0.88', 'libnvrtc.so'];
      });
      assert.equal(fresh().nvrtcLibrary()!.path, SYSTEM);
      assert.deepEqual(k.loaded, [path.join(path.dirname(SYSTEM), 'libnvrtc-builtins.so.13.0.88'), SYSTEM]);
    });
  });

  describe('options (nvrtcOptions)', () => {
    it('nvcc\'s flags less its -O level, the architecture, -default-device, the visibility warning off, ptxas -v for a cubin', () => {
      const n = fresh();
      assert.deepEqual(n.nvrtcOptions(['-O3', '-std=c++17', '-O', '-O10', 'x-O2', '-O2x', '--use_fast_math', '-O0'], '90', false),
        ['-std=c++17', '-O', '-O10', 'x-O2', '-O2x', '--use_fast_math', '--gpu-architecture=sm_90', '-default-device', '-diag-suppress=1097', '--ptxas-options=-v']);
      assert.deepEqual(n.nvrtcOptions(['-O3'], '100', true), ['--gpu-architecture=compute_100', '-default-device', '-diag-suppress=1097']);
    });
  });

  describe('compiling (nvrtcCompile)', () => {
    interface Prog {
      createStatus?: number;
      compileStatus?: number;
      log?: string;
      logSize?: number;
      code?: Buffer;
      ptx?: Buffer;
    }
    function withProgram(p: Prog) {
      const lib = touch(tmp, 'nv', 'libnvrtc.so');
      setEnv('GDNLAB_NVRTC', lib);
      const calls: { fn: string; args: unknown[] }[] = [];
      const handle = { program: 1 };
      const rec = (fn: string, f: (...a: any[]) => unknown) => (...a: unknown[]) => {
        calls.push({ fn, args: a.map((x) => (Array.isArray(x) ? [...x] : x)) });
        return f(...a);
      };
      const logBytes = Buffer.from(p.log ?? '');
      koffiLoads({
        [lib]: {
          impl: {
            nvrtcCreateProgram: rec('create', (prog: unknown[]) => {
              prog[0] = handle;
              return p.createStatus ?? 0;
            }),
            nvrtcCompileProgram: rec('compile', () => p.compileStatus ?? 0),
            nvrtcGetProgramLogSize: rec('logSize', (_h: unknown, size: number[]) => {
              size[0] = p.logSize ?? logBytes.length + 1;
              return 0;
            }),
            nvrtcGetProgramLog: rec('log', (_h: unknown, buf: Buffer) => {
              calls[calls.length - 1].args[1] = buf.length;
              logBytes.copy(buf, 0, 0, Math.min(logBytes.length, buf.length));
              return 0;
            }),
            nvrtcGetCUBINSize: rec('codeSize', (_h: unknown, n: number[]) => {
              n[0] = p.code!.length;
              return 0;
            }),
            nvrtcGetCUBIN: rec('code', (_h: unknown, buf: Buffer) => {
              calls[calls.length - 1].args[1] = buf.length;
              p.code!.copy(buf);
              return 0;
            }),
            nvrtcGetPTXSize: rec('ptxSize', (_h: unknown, n: number[]) => {
              n[0] = p.ptx!.length;
              return 0;
            }),
            nvrtcGetPTX: rec('ptx', (_h: unknown, buf: Buffer) => {
              calls[calls.length - 1].args[1] = buf.length;
              p.ptx!.copy(buf);
              return 0;
            }),
            nvrtcDestroyProgram: rec('destroy', () => 0),
            nvrtcGetErrorString: (st: number) => `NVRTC_ERROR_${st}`,
          },
        },
      });
      return { n: fresh(), calls, handle };
    }

    it('without libnvrtc: an error saying so', () => {
      koffiLoads({});
      assert.throws(() => fresh().nvrtcCompile('x', 'arm.cu', [], false), (e: Error) => e.message === 'NVRTC: libnvrtc was not found');
    });

    it('a cubin: the program created from the text and name, compiled with the options, its log and CUBIN read, then destroyed', () => {
      const { n, calls, handle } = withProgram({ log: 'ptxas info: 32 registers\0\0', code: Buffer.from([1, 0, 2, 0]) });
      const r = n.nvrtcCompile('TEXT', 'arm.cu', ['-a', '-b'], false);
      assert.deepEqual(r, { ok: true, log: 'ptxas info: 32 registers', code: Buffer.from([1, 0, 2, 0]) });
      assert.deepEqual(calls, [
        { fn: 'create', args: [[null], 'TEXT', 'arm.cu', 0, null, null] },
        { fn: 'compile', args: [handle, 2, ['-a', '-b']] },
        { fn: 'logSize', args: [handle, [0]] },
        { fn: 'log', args: [handle, 'ptxas info: 32 registers\0\0'.length + 1] },
        { fn: 'codeSize', args: [handle, [0]] },
        { fn: 'code', args: [handle, 4] },
        { fn: 'destroy', args: [[handle]] },
      ]);
    });

    it('PTX: read with the PTX calls and cut at its terminating NUL (kept whole without one)', () => {
      const { n, calls } = withProgram({ log: '', ptx: Buffer.from('.version 8.0\0') });
      const r = n.nvrtcCompile('T', 'arm.cu', [], true);
      assert.equal(r.ok, true);
      assert.equal(r.log, '');
      assert.equal(r.code!.toString('latin1'), '.version 8.0');
      assert.deepEqual(calls.map((c) => c.fn), ['create', 'compile', 'logSize', 'log', 'ptxSize', 'ptx', 'destroy']);
      const w = withProgram({ ptx: Buffer.from('.target sm_90') });
      assert.equal(w.n.nvrtcCompile('T', 'arm.cu', [], true).code!.toString('latin1'), '.target sm_90');
      const z = withProgram({ ptx: Buffer.from('\0.version') });
      assert.equal(z.n.nvrtcCompile('T', 'arm.cu', [], true).code!.length, 0, 'cut at a NUL in the first byte too');
      const e = withProgram({ ptx: Buffer.from('') });
      assert.equal(e.n.nvrtcCompile('T', 'arm.cu', [], true).code!.length, 0);
    });

    it('a failed compile: not ok, with the log (or, with no log, the status\'s name); the program still destroyed', () => {
      const { n, calls, handle } = withProgram({ compileStatus: 6, log: 'arm:a(3): error: x\0' });
      assert.deepEqual(n.nvrtcCompile('T', 'arm.cu', [], false), { ok: false, log: 'arm:a(3): error: x' });
      assert.deepEqual(calls.map((c) => c.fn), ['create', 'compile', 'logSize', 'log', 'destroy']);
      assert.deepEqual(calls.at(-1)!.args, [[handle]]);
      const quiet = withProgram({ compileStatus: 6, log: '', logSize: 0 });
      assert.deepEqual(quiet.n.nvrtcCompile('T', 'arm.cu', [], false), { ok: false, log: 'NVRTC_ERROR_6' });
      assert.equal(quiet.calls.find((c) => c.fn === 'log')!.args[1], 1, 'a log buffer of at least one byte');
    });

    it('a log with NULs inside keeps them; only the trailing ones go', () => {
      const { n } = withProgram({ compileStatus: 1, log: 'a\0b\0\0\0' });
      assert.equal(n.nvrtcCompile('T', 'arm.cu', [], false).log, 'a\0b');
    });

    it('a program that cannot be created is an error naming the status; nothing is destroyed', () => {
      const { n, calls } = withProgram({ createStatus: 5 });
      assert.throws(() => n.nvrtcCompile('T', 'arm.cu', [], false), (e: Error) => e.message === 'NVRTC: nvrtcCreateProgram failed: NVRTC_ERROR_5');
      assert.deepEqual(calls.map((c) => c.fn), ['create']);
    });
  });
});
