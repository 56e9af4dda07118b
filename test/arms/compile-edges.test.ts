// lib/arms/compile.ts with no compiler run: spawnSync answers as a scripted compiler (writes the output and
// the -MD dependency list it is told to, or fails with the text it is told to), NVRTC is a recorder, the
// project root and libgdn are stand-ins, and the cache and a small cuda/ tree live in a temporary folder.
// What is checked exactly: the command lines (flags, defines, include folders, target, -MD -MF), the module
// key (every input that decides a module's bytes changes it; nothing else does), cache hits and misses, the
// file names on disk, and the errors (naming the arm, carrying the compiler's output).
// Each test loads a fresh copy of compile.ts, so its recipe and compiler-version caches start empty.

import { strict as assert } from 'assert';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { createHash } from 'crypto';
import { freshRequire, Undo } from '../stand-ins';

type Compile = typeof import('../../lib/arms/compile');
type BuildRecipe = import('../../lib/arms/compile').BuildRecipe;
type CompileRequest = import('../../lib/arms/compile').CompileRequest;

// The modules themselves (their exports are read at each call by compile.ts).
// eslint-disable-next-line @typescript-eslint/no-var-requires
const childProcess = require('child_process') as Record<string, unknown>;
// eslint-disable-next-line @typescript-eslint/no-var-requires
const fsModule = require('fs') as Record<string, unknown>;
// eslint-disable-next-line @typescript-eslint/no-var-requires
const osModule = require('os') as Record<string, unknown>;
// eslint-disable-next-line @typescript-eslint/no-var-requires
const nvrtcModule = require('../../lib/arms/nvrtc') as Record<string, unknown>;
// eslint-disable-next-line @typescript-eslint/no-var-requires
const pathsModule = require('../../lib/paths') as Record<string, unknown>;
// eslint-disable-next-line @typescript-eslint/no-var-requires
const gdnModule = require('../../lib/native/gdn') as Record<string, unknown>;
// eslint-disable-next-line @typescript-eslint/no-var-requires
const realNvrtcOptions = (require('../../lib/arms/nvrtc') as typeof import('../../lib/arms/nvrtc')).nvrtcOptions;

const compilePath = require.resolve('../../lib/arms/compile');

const fresh = (): Compile => freshRequire<Compile>(compilePath);

/** Replacements for one test (module exports, environment variables), undone in afterEach. */
const undo = new Undo();
const stub = (obj: object, key: string, value: unknown): void => undo.stub(obj, key, value);
const setEnv = (name: string, value: string | undefined): void => undo.setEnv(name, value);

let tmp = '';
let root = '';
let cuda = '';
let cache = '';
let headers: Record<string, string> = {};


function recipe(over: Partial<BuildRecipe> = {}): BuildRecipe {
  return {
    cxx: '/usr/bin/g++',
    cxxVersion: '12',
    cxxFlags: ['-O2'],
    hostModuleFlags: ['-O3', '-mavx2', '-std=c++17', '-fPIC', '-shared'],
    hostReplayFlags: ['-O3', '-mavx2'],
    nvcc: '/opt/cuda/bin/nvcc',
    nvccFlags: ['-O3', '-std=c++17', '--use_fast_math'],
    buildInfo: 'host_replay_flags=-O3 -mavx2',
    file: '/lib/gdn_user_build.json',
    ...over,
  };
}
function request(over: Partial<CompileRequest> = {}): CompileRequest {
  return { op: 'conv', name: 'a', source: 'acc += x;', defines: { GDN_ARM_THREADS: 64 }, target: 'host', cudaSource: cuda, ...over };
}

type Call = { tool: string; args: string[]; opts: unknown; text?: string };
interface Script {
  /** --version's output. */
  version?: string;
  status?: number | null;
  stdout?: string;
  stderr?: string;
  error?: Error;
  /** The files the dependency list names after the source (null: no list written). */
  deps?: string[] | null;
  /** The dependency list's text, given whole (src and out replaced). */
  depText?: string;
  output?: string;
  /** Write no output file. */
  noOutput?: boolean;
  /** Delete the source file it was given (a compiler that cleans up after itself). */
  removeSource?: boolean;
}

/** spawnSync as a scripted compiler; `script` may be changed between compiles. */
function compiler(script: Script): Call[] {
  const calls: Call[] = [];
  stub(childProcess, 'spawnSync', (tool: string, args: string[], opts: unknown) => {
    const call: Call = { tool, args: [...args], opts };
    calls.push(call);
    if (args[0] === '--version') return { status: 0, stdout: script.version ?? 'g++ (GCC) 12.2.0\nCopyright (C) 2022\n', stderr: '' };
    const o = args[args.indexOf('-o') + 1];
    const src = args[args.indexOf('-o') - 1];
    const mf = args[args.indexOf('-MF') + 1];
    call.text = fs.readFileSync(src, 'utf8');
    const status = script.status === undefined ? 0 : script.status;
    if (script.removeSource) fs.rmSync(src);
    if (status === 0) {
      if (!script.noOutput) fs.writeFileSync(o, script.output ?? 'MODULE');
      if (script.depText !== undefined) fs.writeFileSync(mf, script.depText.split('SRC').join(src).split('OUT').join(o));
      else if (script.deps !== null) fs.writeFileSync(mf, `${o}: ${src} \\\n ${(script.deps ?? [headers.prelude, headers.entry]).join(' \\\n ')}\n`);
    } else {
      fs.writeFileSync(o, 'partial');
      fs.writeFileSync(mf, 'partial');
    }
    return { status, stdout: script.stdout ?? '', stderr: script.stderr ?? '', error: script.error, signal: null };
  });
  return calls;
}

const compiles = (calls: Call[]) => calls.filter((c) => c.args[0] !== '--version');
const includeArgs = () => [`-I${path.join(cuda, 'include')}`, `-I${path.join(cuda, 'src')}`, `-I${path.join(cuda, 'src', 'common')}`];
const listCache = () => fs.readdirSync(cache).sort();

describe('user arms: compiling a module (compile.ts), no compiler run', () => {
  beforeEach(() => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'gdnlab-compile-edges-'));
    root = path.join(tmp, 'proj');
    cuda = path.join(root, 'cuda');
    cache = path.join(tmp, 'cache');
    headers = {
      gdn: path.join(cuda, 'include', 'gdn.h'),
      prelude: path.join(cuda, 'src', 'user', 'prelude.h'),
      entry: path.join(cuda, 'src', 'user', 'entry_conv.h'),
      common: path.join(cuda, 'src', 'common', 'math.h'),
      shim: path.join(cuda, 'src', 'user', 'nvrtc', 'cmath'),
    };
    for (const [k, f] of Object.entries(headers)) {
      fs.mkdirSync(path.dirname(f), { recursive: true });
      fs.writeFileSync(f, `// ${k}\n`);
    }
    stub(pathsModule, 'projectRoot', () => root);
    setEnv('GDNLAB_ARM_CACHE', cache);
    setEnv('GDNLAB_CUDA_SOURCE', undefined);
    setEnv('GDNLAB_CUDA_COMPILER', undefined);
  });
  afterEach(() => {
    undo.restore();
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  it('moduleText: prelude, preamble, the body under #line "arm:<name>", then the op\'s entry header', () => {
    const c = fresh();
    assert.equal(c.moduleText(request({ preamble: '#define P 1' })),
      '#include "user/prelude.h"\n#define P 1\n#line 1 "arm:a"\nacc += x;\n#line 1 "gdn-arm-entry"\n#include "user/entry_conv.h"\n');
    assert.equal(c.moduleText(request({ op: 'postconv', name: 'b', source: 'y;' })),
      '#include "user/prelude.h"\n\n#line 1 "arm:b"\ny;\n#line 1 "gdn-arm-entry"\n#include "user/entry_postconv.h"\n');
  });

  it('a host module: the exact command line, the text compiled, the files left, and what is returned', () => {
    const c = fresh();
    const calls = compiler({ stdout: 'note: out\n', stderr: 'warning: err\n' });
    const m = c.compileModule(request(), recipe());
    const [version, run] = calls;
    assert.deepEqual(version, { tool: '/usr/bin/g++', args: ['--version'], opts: { encoding: 'utf8', timeout: 30000 } });
    assert.equal(calls.length, 2);
    assert.equal(run.tool, '/usr/bin/g++');
    const src = run.args[run.args.length - 3];
    const tmpOut = run.args[run.args.length - 1];
    const base = /^conv-([0-9a-f]{32})\.(\d+)\.cpp$/.exec(path.basename(src));
    assert.ok(base, src);
    assert.equal(base![2], String(process.pid));
    assert.equal(path.dirname(src), cache);
    assert.equal(tmpOut, path.join(cache, `conv-${base![1]}.${process.pid}.tmp`));
    assert.deepEqual(run.args, ['-O3', '-mavx2', '-std=c++17', '-fPIC', '-shared', '-x', 'c++',
      '-DGDN_ARM_THREADS=64', '-DGDN_ARM_NAME="a"', '-DGDN_USER_CHECKED=1', ...includeArgs(),
      '-MD', '-MF', `${tmpOut}.d`, src, '-o', tmpOut]);
    assert.deepEqual(run.opts, { encoding: 'utf8', timeout: 300000, maxBuffer: 1 << 24 });
    assert.equal(run.text, c.moduleText(request()));

    assert.match(m.key, /^[0-9a-f]{32}$/);
    assert.equal(m.file, path.join(cache, `conv-${m.key}.so`));
    assert.deepEqual(listCache(), [`conv-${base![1]}.deps`, `conv-${m.key}.so`, `conv-${m.key}.so.log`].sort());
    assert.equal(fs.readFileSync(m.file, 'utf8'), 'MODULE');
    assert.equal(fs.readFileSync(`${m.file}.log`, 'utf8'), 'note: out\nwarning: err\n');
    assert.deepEqual(JSON.parse(fs.readFileSync(path.join(cache, `conv-${base![1]}.deps`), 'utf8')), [headers.prelude, headers.entry]);
    assert.equal(m.target, 'host');
    assert.deepEqual(m.flags, ['-O3', '-mavx2', '-std=c++17', '-fPIC', '-shared', '-x', 'c++']);
    assert.deepEqual(m.dependencies, [headers.prelude, headers.entry]);
    assert.equal(m.cached, false);
    assert.equal(typeof m.compileMs, 'number');
    assert.ok(m.compileMs >= 0 && m.compileMs < 10000);
    assert.equal(m.log, 'note: out\nwarning: err\n');
    assert.equal(m.command, ['/usr/bin/g++', ...m.flags, '-DGDN_ARM_THREADS=64', '-DGDN_ARM_NAME="a"', '-DGDN_USER_CHECKED=1', ...includeArgs(), '<module>', '-o', m.file].join(' '));
    assert.equal(m.sm, undefined);
  });

  it('the second compile of the same request is a cache hit: no compiler run, the stored log, the same file', () => {
    const c = fresh();
    const calls = compiler({ stdout: 'the log' });
    const first = c.compileModule(request(), recipe());
    const second = c.compileModule(request(), recipe());
    assert.equal(compiles(calls).length, 1);
    assert.equal(calls.filter((x) => x.args[0] === '--version').length, 1, 'the version is asked once per compiler');
    assert.deepEqual(second, { ...first, cached: true, compileMs: 0 });
    // Without the log file the hit's log is empty.
    fs.rmSync(`${first.file}.log`);
    const third = c.compileModule(request(), recipe());
    assert.equal(third.log, '');
    assert.equal(third.cached, true);
    assert.equal(compiles(calls).length, 1);
  });

  it('host-fast has no checked define; the module keys of host and host-fast differ', () => {
    const c = fresh();
    const calls = compiler({});
    const fast = c.compileModule(request({ target: 'host-fast' }), recipe());
    const checked = c.compileModule(request(), recipe());
    const [a, b] = compiles(calls);
    assert.ok(!a.args.includes('-DGDN_USER_CHECKED=1'));
    assert.ok(b.args.includes('-DGDN_USER_CHECKED=1'));
    assert.equal(fast.target, 'host-fast');
    assert.equal(fast.file, path.join(cache, `conv-${fast.key}.so`));
    assert.notEqual(fast.key, checked.key);
  });

  it('a cubin with nvcc: libgdn\'s device flags, -cubin for the sm, ptxas -v, CUDA source', () => {
    const c = fresh();
    const calls = compiler({ version: 'nvcc: NVIDIA\nCuda compilation tools, release 13.0\nBuild cuda_13\n' });
    const m = c.compileModule(request({ target: 'cuda', sm: '90', op: 'postconv', name: 'k' }), recipe());
    const [version, run] = calls;
    assert.deepEqual(version.tool, '/opt/cuda/bin/nvcc');
    const src = run.args[run.args.length - 3];
    assert.match(path.basename(src), new RegExp(`^postconv-[0-9a-f]{32}\\.${process.pid}\\.cu$`));
    const tmpOut = run.args[run.args.length - 1];
    assert.deepEqual(run.args, ['-O3', '-std=c++17', '--use_fast_math', '-cubin', '-arch=sm_90', '-Xptxas', '-v', '-x', 'cu',
      '-DGDN_ARM_THREADS=64', '-DGDN_ARM_NAME="k"', ...includeArgs(), '-MD', '-MF', `${tmpOut}.d`, src, '-o', tmpOut]);
    assert.equal(m.file, path.join(cache, `postconv-${m.key}.cubin`));
    assert.equal(m.sm, '90');
    assert.equal(m.target, 'cuda');
    assert.ok(m.command.startsWith('/opt/cuda/bin/nvcc -O3 '));
    assert.ok(fs.existsSync(`${m.file}.log`));
  });

  it('PTX with nvcc: -ptx for the sm, no ptxas -v, a .ptx file', () => {
    const c = fresh();
    const calls = compiler({});
    const m = c.compileModule(request({ target: 'ptx', sm: '100' }), recipe());
    const run = compiles(calls)[0];
    assert.deepEqual(run.args.slice(0, 7), ['-O3', '-std=c++17', '--use_fast_math', '-ptx', '-arch=sm_100', '-x', 'cu']);
    assert.equal(run.args[7], '-DGDN_ARM_THREADS=64');
    assert.match(run.args[run.args.length - 3], /\.cu$/);
    assert.equal(m.file, path.join(cache, `conv-${m.key}.ptx`));
    assert.equal(m.target, 'ptx');
  });

  it('sm: two or three digits for CUDA targets, checked before anything runs; the host ignores it', () => {
    const c = fresh();
    const calls = compiler({});
    for (const [sm, shown] of [[undefined, 'undefined'], ['9', '9'], ['1000', '1000'], ['x90', 'x90'], ['90a', '90a'], ['', '']] as const) {
      for (const target of ['cuda', 'ptx'] as const) {
        assert.throws(() => c.compileModule(request({ target, sm }), recipe()),
          (e: Error) => e instanceof RangeError && e.message === `sm: expected a compute capability such as '90', got ${shown}`);
      }
    }
    assert.equal(calls.length, 0);
    assert.equal(c.compileModule(request({ target: 'host', sm: 'junk' }), recipe()).cached, false);
  });

  it('the host target never asks for a CUDA compiler (a bad GDNLAB_CUDA_COMPILER does not matter to it)', () => {
    const c = fresh();
    compiler({});
    setEnv('GDNLAB_CUDA_COMPILER', 'bogus');
    assert.equal(c.compileModule(request(), recipe()).target, 'host');
    assert.throws(() => c.compileModule(request({ target: 'cuda', sm: '90' }), recipe()), /GDNLAB_CUDA_COMPILER: expected auto, nvcc or nvrtc, got 'bogus'/);
  });

  it('the key changes with the body, the preamble, the op, every define, the flags, the compiler, the build facts, the include folders, the target and the sm', () => {
    const c = fresh();
    compiler({});
    const other = path.join(tmp, 'other-cuda');
    fs.cpSync(cuda, other, { recursive: true });
    const keys = new Map<string, string>();
    const add = (what: string, req: CompileRequest, r = recipe()) => {
      const m = c.compileModule(req, r);
      assert.equal(m.cached, false, what);
      keys.set(what, m.key);
    };
    add('base', request());
    add('body', request({ source: 'acc -= x;' }));
    add('preamble', request({ preamble: '// p' }));
    add('op', request({ op: 'postconv' }));
    add('define value', request({ defines: { GDN_ARM_THREADS: 128 } }));
    add('define added', request({ defines: { GDN_ARM_THREADS: 64, GDN_X: 1 } }));
    add('name', request({ name: 'b' }));
    add('flags', request(), recipe({ hostModuleFlags: ['-O2', '-std=c++17', '-fPIC', '-shared'] }));
    add('compiler', request(), recipe({ cxx: '/usr/bin/clang++' }));
    add('build facts', request(), recipe({ buildInfo: 'host_replay_flags=-O3' }));
    add('include folders', request({ cudaSource: other }));
    add('host-fast', request({ target: 'host-fast' }));
    add('cuda 90', request({ target: 'cuda', sm: '90' }));
    add('cuda 80', request({ target: 'cuda', sm: '80' }));
    add('ptx 90', request({ target: 'ptx', sm: '90' }));
    add('nvcc flags', request({ target: 'cuda', sm: '90' }), recipe({ nvccFlags: ['-O2'] }));
    add('nvcc', request({ target: 'cuda', sm: '90' }), recipe({ nvcc: '/other/nvcc' }));
    assert.equal(new Set(keys.values()).size, keys.size, JSON.stringify([...keys]));
  });

  it('the key is the same for the same inputs in another process and another cache, and ignores what is not an input (cxxFlags, cxxVersion, the recipe file)', () => {
    const a = fresh();
    compiler({});
    const k1 = a.compileModule(request(), recipe()).key;
    const b = fresh();
    setEnv('GDNLAB_ARM_CACHE', path.join(tmp, 'cache2'));
    const m2 = b.compileModule(request(), recipe({ cxxFlags: ['-O0'], cxxVersion: 'other', hostReplayFlags: ['-O0'], file: '/x.json' }));
    assert.equal(m2.cached, false);
    assert.equal(m2.key, k1);
  });

  it('the compiler\'s version is part of the key: its last two lines, trimmed; asked once per compiler', () => {
    const keyWith = (version: string, cacheName: string) => {
      const c = fresh();
      setEnv('GDNLAB_ARM_CACHE', path.join(tmp, cacheName));
      const calls = compiler({ version });
      const k = c.compileModule(request(), recipe()).key;
      return { k, calls };
    };
    const v1 = keyWith('g++ 12\nrelease A\nbuild B\n', 'c1');
    const v2 = keyWith('clang 18\nrelease A\nbuild B\n', 'c2');
    const v3 = keyWith('g++ 12\nrelease C\nbuild B\n', 'c3');
    const v4 = keyWith('g++ 12\nrelease A\nbuild D\n', 'c4');
    assert.equal(v1.k, v2.k, 'only the last two lines count');
    assert.notEqual(v1.k, v3.k);
    assert.notEqual(v1.k, v4.k);
    assert.notEqual(v3.k, v4.k);
    // No output at all (a compiler that printed nothing): a key all the same.
    const c = fresh();
    setEnv('GDNLAB_ARM_CACHE', path.join(tmp, 'c5'));
    const calls5 = compiler({ version: '' });
    assert.match(c.compileModule(request(), recipe()).key, /^[0-9a-f]{32}$/);
    assert.equal(calls5.length, 2);
  });

  it('a compiler whose --version prints nothing (stdout null) still keys', () => {
    const c = fresh();
    const calls: string[][] = [];
    stub(childProcess, 'spawnSync', (tool: string, args: string[]) => {
      calls.push(args);
      if (args[0] === '--version') return { status: 0, stdout: null, stderr: '' };
      fs.writeFileSync(args[args.indexOf('-o') + 1], 'M');
      fs.writeFileSync(args[args.indexOf('-MF') + 1], `x: ${headers.prelude}\n`);
      return { status: 0, stdout: '', stderr: '' };
    });
    const m = c.compileModule(request(), recipe());
    assert.deepEqual(m.dependencies, [headers.prelude]);
    assert.equal(m.log, '');
  });

  it('an edited header is a rebuild under another key; a deleted one too; undoing the edit finds the first module', () => {
    const c = fresh();
    const calls = compiler({});
    const first = c.compileModule(request(), recipe());
    fs.appendFileSync(headers.entry, '// edited\n');
    const edited = c.compileModule(request(), recipe());
    assert.equal(edited.cached, false);
    assert.notEqual(edited.key, first.key);
    fs.writeFileSync(headers.entry, '// entry\n');
    const back = c.compileModule(request(), recipe());
    assert.equal(back.cached, true);
    assert.equal(back.key, first.key);
    assert.equal(compiles(calls).length, 2);
    // A header that is gone: another key, so a compile (which here lists only what is left).
    fs.rmSync(headers.entry);
    const script = { deps: [headers.prelude] };
    const calls2 = compiler(script);
    const gone = c.compileModule(request(), recipe());
    assert.equal(compiles(calls2).length, 1);
    assert.notEqual(gone.key, first.key);
    assert.deepEqual(gone.dependencies, [headers.prelude]);
    // The manifest now lists what that compile read.
    const again = c.compileModule(request(), recipe());
    assert.equal(again.cached, true);
    assert.equal(again.key, gone.key);
  });

  it('the key hashes each listed file once, in sorted order (the compiler\'s order and repeats do not matter)', () => {
    const c = fresh();
    const calls = compiler({ deps: [headers.prelude, headers.entry, headers.common] });
    const first = c.compileModule(request(), recipe());
    fs.rmSync(first.file);
    compiler({ deps: [headers.common, headers.entry, headers.prelude, headers.entry] });
    const second = c.compileModule(request(), recipe());
    assert.equal(second.cached, false);
    assert.equal(second.key, first.key);
    assert.equal(second.file, first.file);
    assert.equal(compiles(calls).length, 1);
    assert.deepEqual(second.dependencies, [headers.common, headers.entry, headers.prelude, headers.entry]);
  });

  it('the dependency list: relative paths resolved, the module\'s own source left out', () => {
    const c = fresh();
    const rel = path.relative(process.cwd(), headers.common);
    compiler({ depText: `OUT: SRC ${rel} \\\n SRC ${headers.prelude}\n${rel}:\n` });
    const m = c.compileModule(request(), recipe());
    assert.deepEqual(m.dependencies, [headers.common, headers.prelude]);
  });

  it('no dependency list (or one naming only the source) is an error: nothing is stored', () => {
    for (const script of [{ deps: null }, { depText: 'OUT: SRC\n' }] as Script[]) {
      const c = fresh();
      fs.rmSync(cache, { recursive: true, force: true });
      const calls = compiler(script);
      let thrown: Error | undefined;
      try {
        c.compileModule(request(), recipe());
      } catch (e) {
        thrown = e as Error;
      }
      const tmpOut = compiles(calls)[0].args.at(-1)!;
      assert.equal(thrown?.message, `arm 'a': /usr/bin/g++ wrote no dependency list (-MD -MF ${tmpOut}.d); the module cannot be keyed by the headers it read`);
      assert.deepEqual(listCache(), []);
    }
  });

  it('no output file and no dependency list: still the dependency-list error; a compiler that removed its source is no error', () => {
    const c = fresh();
    compiler({ deps: null, noOutput: true });
    assert.throws(() => c.compileModule(request(), recipe()), /wrote no dependency list/);
    assert.deepEqual(listCache(), []);
    compiler({ removeSource: true });
    assert.equal(c.compileModule(request(), recipe()).cached, false);
  });

  it('the key is sha256 of the compile\'s facts, then "\\0<file>\\0<sha256 of its content>" per listed file ("missing" for a deleted one), cut to 32 hex digits', () => {
    const c = fresh();
    const calls = compiler({ deps: [headers.prelude, headers.entry] });
    const first = c.compileModule(request(), recipe());
    const base = /^conv-([0-9a-f]{32})\.deps$/.exec(listCache().find((f) => f.endsWith('.deps'))!)![1];
    const sha = (x: string | Buffer) => createHash('sha256').update(x).digest('hex');
    const keyOf = (files: [string, string][]) => {
      const h = createHash('sha256').update(base);
      for (const [f, content] of files) h.update(`\0${f}\0${content}`);
      return h.digest('hex').slice(0, 32);
    };
    assert.equal(first.key, keyOf([[headers.entry, sha('// entry\n')], [headers.prelude, sha('// prelude\n')]]));
    // A module keyed with a header missing is found again while it is missing.
    fs.rmSync(headers.entry);
    const missingKey = keyOf([[headers.entry, 'missing'], [headers.prelude, sha('// prelude\n')]]);
    fs.writeFileSync(path.join(cache, `conv-${missingKey}.so`), 'OLD');
    const hit = c.compileModule(request(), recipe());
    assert.equal(hit.cached, true);
    assert.equal(hit.key, missingKey);
    // Without a manifest nothing is looked up, not even a file named by the key of no headers.
    fs.rmSync(path.join(cache, `conv-${base}.deps`));
    fs.writeFileSync(path.join(cache, `conv-${keyOf([])}.so`), 'STALE');
    const rebuilt = c.compileModule(request(), recipe());
    assert.equal(rebuilt.cached, false);
    assert.equal(compiles(calls).length, 2);
  });

  it('a failed compile: ArmCompileError naming the arm and target, the tidied diagnostics, the command; no file left', () => {
    const c = fresh();
    const calls = compiler({ status: 1, stdout: 'OUT-TEXT\n', stderr: 'ERR-TEXT\n' });
    let e: InstanceType<Compile['ArmCompileError']> | undefined;
    try {
      c.compileModule(request({ name: 'bad' }), recipe());
    } catch (x) {
      e = x as InstanceType<Compile['ArmCompileError']>;
    }
    assert.ok(e instanceof c.ArmCompileError);
    assert.equal(e!.name, 'ArmCompileError');
    assert.equal(e!.arm, 'bad');
    assert.equal(e!.target, 'host');
    assert.equal(e!.diagnostics, 'OUT-TEXT\nERR-TEXT');
    assert.equal(e!.message, "arm 'bad': compiling for host failed (lines are lines of the arm's source):\nOUT-TEXT\nERR-TEXT");
    const base = /conv-([0-9a-f]{32})\./.exec(path.basename(compiles(calls)[0].args.at(-1)!))![1];
    assert.equal(e!.command, ['/usr/bin/g++', '-O3', '-mavx2', '-std=c++17', '-fPIC', '-shared', '-x', 'c++', '-DGDN_ARM_THREADS=64', '-DGDN_ARM_NAME="bad"',
      '-DGDN_USER_CHECKED=1', ...includeArgs(), '<module>', '-o', path.join(cache, `conv-${base}.so`)].join(' '));
    assert.deepEqual(listCache(), []);
  });

  it('a killed compile (no exit status) fails too; a compiler that could not start reports why', () => {
    const c = fresh();
    compiler({ status: null, stderr: 'killed\n' });
    assert.throws(() => c.compileModule(request(), recipe()), (e: Error) => e.message.endsWith('\nkilled'));
    compiler({ status: null, error: new Error('spawnSync /usr/bin/g++ ENOENT') });
    assert.throws(() => c.compileModule(request(), recipe()), (e: Error) => e.message.endsWith("source):\nspawnSync /usr/bin/g++ ENOENT"));
    // With output, the output is the message, not the error.
    compiler({ status: null, error: new Error('ETIMEDOUT'), stderr: 'partial output' });
    assert.throws(() => c.compileModule(request(), recipe()), (e: Error) => e.message.endsWith('source):\npartial output'));
    assert.deepEqual(listCache(), []);
  });

  it('diagnostics: the source path becomes <module>, the project root is cut, include stacks and blank lines go, the body\'s own lines come first, repeats once', () => {
    const c = fresh();
    const out = (src: string) => [
      `In file included from ${root}/cuda/src/user/prelude.h:3,`,
      `                 from ${src}:1:`,
      `${src}: In function 'void f()':`,
      `${root}/cuda/src/user/prelude.h:10:5: error: foo in ${src}`,
      '   ',
      "arm:ab:3:7: error: 'y' was not declared",
      'arm:cd(4): error: nvcc style',
      'static assertion failed: z',
      'note: static_assert here',
      'xarm:bc:x: not the body (no line number)',
      'arm::3: not the body either',
      `${root}/cuda/src/user/prelude.h:10:5: error: foo in ${src}`,
      ' in file included from: kept (not the stack\'s form)',
      ' xfrom kept too',
      'note: In file included from elsewhere: kept',
      'error: a value from here: kept',
    ].join('\n');
    let srcSeen = '';
    stub(childProcess, 'spawnSync', (tool: string, args: string[]) => {
      if (args[0] === '--version') return { status: 0, stdout: 'v', stderr: '' };
      srcSeen = args[args.indexOf('-o') - 1];
      return { status: 1, stdout: '', stderr: out(srcSeen) };
    });
    let e: InstanceType<Compile['ArmCompileError']> | undefined;
    try {
      c.compileModule(request(), recipe());
    } catch (x) {
      e = x as InstanceType<Compile['ArmCompileError']>;
    }
    assert.equal(e!.diagnostics, [
      "arm:ab:3:7: error: 'y' was not declared",
      'arm:cd(4): error: nvcc style',
      'static assertion failed: z',
      'note: static_assert here',
      "<module>: In function 'void f()':",
      `cuda${path.sep}src/user/prelude.h:10:5: error: foo in <module>`.replace(`cuda${path.sep}`, 'cuda/'),
      'xarm:bc:x: not the body (no line number)',
      'arm::3: not the body either',
      ' in file included from: kept (not the stack\'s form)',
      ' xfrom kept too',
      'note: In file included from elsewhere: kept',
      'error: a value from here: kept',
    ].join('\n'));
  });

  it('diagnostics keep at most 40 lines', () => {
    const c = fresh();
    const lines = Array.from({ length: 45 }, (_, i) => `error ${i}`);
    compiler({ status: 1, stderr: lines.join('\n') });
    assert.throws(() => c.compileModule(request(), recipe()), (e: InstanceType<Compile['ArmCompileError']>) => e.diagnostics === lines.slice(0, 40).join('\n'));
  });

  describe('NVRTC', () => {
    type NvrtcCall = { text: string; name: string; options: string[]; ptx: boolean };
    function nvrtc(result: { ok: boolean; log: string; code?: Buffer }, version = '13.0'): NvrtcCall[] {
      const calls: NvrtcCall[] = [];
      stub(nvrtcModule, 'nvrtcLibrary', () => ({ path: '/nv/libnvrtc.so.13', version }));
      stub(nvrtcModule, 'nvrtcCompile', (text: string, name: string, options: string[], ptx: boolean) => {
        calls.push({ text, name, options: [...options], ptx });
        return result;
      });
      return calls;
    }
    const allHeaders = () => Object.values(headers).sort();

    it('compiles in process: NVRTC options, the shim folder, defines, includes; keyed by every file under the folders; no compiler run, no manifest', () => {
      const c = fresh();
      setEnv('GDNLAB_CUDA_COMPILER', 'nvrtc');
      const spawned = compiler({});
      const calls = nvrtc({ ok: true, log: 'ptxas info', code: Buffer.from('CUBIN') });
      // A symlink and an empty folder are not files the key reads.
      fs.symlinkSync(headers.gdn, path.join(cuda, 'include', 'link.h'));
      fs.mkdirSync(path.join(cuda, 'src', 'empty'));
      const req = request({ target: 'cuda', sm: '90' });
      const m = c.compileModule(req, recipe());
      assert.equal(spawned.length, 0);
      assert.equal(calls.length, 1);
      const shim = `-I${path.join(cuda, 'src', 'user', 'nvrtc')}`;
      const flags = [...realNvrtcOptions(recipe().nvccFlags, '90', false), shim];
      assert.deepEqual(calls[0], { text: c.moduleText(req), name: 'arm.cu', options: [...flags, '-DGDN_ARM_THREADS=64', '-DGDN_ARM_NAME="a"', ...includeArgs()], ptx: false });
      assert.deepEqual(m.flags, flags);
      assert.deepEqual([...m.dependencies].sort(), allHeaders());
      assert.equal(m.file, path.join(cache, `conv-${m.key}.cubin`));
      assert.equal(fs.readFileSync(m.file, 'utf8'), 'CUBIN');
      assert.equal(m.log, 'ptxas info');
      assert.equal(m.command, ['nvrtc:/nv/libnvrtc.so.13', ...flags, '-DGDN_ARM_THREADS=64', '-DGDN_ARM_NAME="a"', ...includeArgs(), '<module>', '-o', m.file].join(' '));
      assert.deepEqual(listCache(), [`conv-${m.key}.cubin`, `conv-${m.key}.cubin.log`]);
      // Again: a hit with no compile; an edit anywhere in the tree is a rebuild.
      const hit = c.compileModule(req, recipe());
      assert.equal(hit.cached, true);
      assert.equal(hit.log, 'ptxas info');
      assert.equal(calls.length, 1);
      fs.appendFileSync(headers.shim, '// edited');
      const edited = c.compileModule(req, recipe());
      assert.equal(edited.cached, false);
      assert.notEqual(edited.key, m.key);
      assert.equal(calls.length, 2);
    });

    it('PTX through NVRTC: compute_<sm>, a .ptx file; the library\'s version is part of the key', () => {
      const c = fresh();
      setEnv('GDNLAB_CUDA_COMPILER', 'nvrtc');
      const calls = nvrtc({ ok: true, log: '', code: Buffer.from('.version 8') });
      const m = c.compileModule(request({ target: 'ptx', sm: '90' }), recipe());
      assert.equal(calls[0].ptx, true);
      assert.ok(calls[0].options.includes('--gpu-architecture=compute_90'));
      assert.equal(m.file, path.join(cache, `conv-${m.key}.ptx`));
      nvrtc({ ok: true, log: '', code: Buffer.from('.version 8') }, '13.1');
      const other = c.compileModule(request({ target: 'ptx', sm: '90' }), recipe());
      assert.equal(other.cached, false);
      assert.notEqual(other.key, m.key);
    });

    it('a missing shim folder is no error (nothing under it to key)', () => {
      const c = fresh();
      setEnv('GDNLAB_CUDA_COMPILER', 'nvrtc');
      fs.rmSync(path.dirname(headers.shim), { recursive: true });
      nvrtc({ ok: true, log: '', code: Buffer.from('C') });
      const m = c.compileModule(request({ target: 'cuda', sm: '90' }), recipe());
      assert.deepEqual([...m.dependencies].sort(), allHeaders().filter((f) => f !== headers.shim));
    });

    it('an NVRTC error is an ArmCompileError with its log tidied (arm.cu becomes <module>); nothing stored', () => {
      const c = fresh();
      setEnv('GDNLAB_CUDA_COMPILER', 'nvrtc');
      nvrtc({ ok: false, log: 'arm.cu(2): warning\n\narm:a(3): error: identifier "q" is undefined\n' });
      let e: InstanceType<Compile['ArmCompileError']> | undefined;
      try {
        c.compileModule(request({ target: 'cuda', sm: '90' }), recipe());
      } catch (x) {
        e = x as InstanceType<Compile['ArmCompileError']>;
      }
      assert.ok(e instanceof c.ArmCompileError);
      assert.equal(e!.target, 'cuda');
      assert.equal(e!.diagnostics, 'arm:a(3): error: identifier "q" is undefined\n<module>(2): warning');
      assert.match(e!.command, new RegExp(`^nvrtc:/nv/libnvrtc\\.so\\.13 .* <module> -o ${cache.replace(/[.]/g, '\\.')}/conv-[0-9a-f]{32}\\.cubin$`));
      assert.deepEqual(listCache(), []);
    });
  });

  describe('choosing the CUDA compiler (pickCudaCompiler)', () => {
    const lib = (present: boolean) => stub(nvrtcModule, 'nvrtcLibrary', () => (present ? { path: '/nv/libnvrtc.so', version: '13.0' } : null));
    const tail = " (recipe /lib/gdn_user_build.json). Install the CUDA toolkit's nvcc or the nvidia-cuda-nvrtc wheel, or define the arm for the host backend only: defineArm(spec, { backend: gdn.Backend.open('host') })";

    it('auto (the default) and nvcc take nvcc when there is one; nvrtc takes NVRTC even then', () => {
      const c = fresh();
      lib(true);
      assert.equal(c.pickCudaCompiler(recipe(), 'a'), 'nvcc');
      setEnv('GDNLAB_CUDA_COMPILER', 'auto');
      assert.equal(c.pickCudaCompiler(recipe(), 'a'), 'nvcc');
      setEnv('GDNLAB_CUDA_COMPILER', 'nvcc');
      assert.equal(c.pickCudaCompiler(recipe(), 'a'), 'nvcc');
      setEnv('GDNLAB_CUDA_COMPILER', 'nvrtc');
      assert.equal(c.pickCudaCompiler(recipe(), 'a'), 'nvrtc');
    });

    it('without nvcc: auto takes NVRTC; nvcc is an error saying what is missing', () => {
      const c = fresh();
      lib(true);
      assert.equal(c.pickCudaCompiler(recipe({ nvcc: '' }), 'a'), 'nvrtc');
      setEnv('GDNLAB_CUDA_COMPILER', 'nvcc');
      assert.throws(() => c.pickCudaCompiler(recipe({ nvcc: '' }), 'k'), (e: Error) =>
        e.message === `arm 'k': cannot compile for CUDA: no nvcc (not recorded in the recipe and not on PATH)${tail}`);
    });

    it('no NVRTC either: the message of each choice', () => {
      const c = fresh();
      lib(false);
      assert.throws(() => c.pickCudaCompiler(recipe({ nvcc: '' }), 'k'), (e: Error) =>
        e.message === `arm 'k': cannot compile for CUDA: neither nvcc (not recorded in the recipe, not on PATH) nor libnvrtc (GDNLAB_NVRTC, the nvidia-cuda-nvrtc wheel, /usr/local/cuda/lib64)${tail}`);
      setEnv('GDNLAB_CUDA_COMPILER', 'nvrtc');
      assert.throws(() => c.pickCudaCompiler(recipe(), 'k'), (e: Error) =>
        e.message === `arm 'k': cannot compile for CUDA: no libnvrtc (set GDNLAB_NVRTC, or pip install nvidia-cuda-nvrtc into the project venv)${tail}`);
    });

    it('anything else is a RangeError', () => {
      const c = fresh();
      lib(true);
      for (const bad of ['', 'NVCC', 'clang']) {
        setEnv('GDNLAB_CUDA_COMPILER', bad);
        assert.throws(() => c.pickCudaCompiler(recipe(), 'a'), (e: Error) => e instanceof RangeError && e.message === `GDNLAB_CUDA_COMPILER: expected auto, nvcc or nvrtc, got '${bad}'`);
      }
    });
  });

  describe('folders and tools', () => {
    it('cudaSourceDir: the checkout\'s cuda/ by default (unset or empty); a copy that has gdn.h and prelude.h; else an error naming the missing file', () => {
      const c = fresh();
      assert.equal(c.cudaSourceDir(), path.join(root, 'cuda'));
      setEnv('GDNLAB_CUDA_SOURCE', '');
      assert.equal(c.cudaSourceDir(), path.join(root, 'cuda'));
      const copy = path.join(tmp, 'copy');
      fs.cpSync(cuda, copy, { recursive: true });
      setEnv('GDNLAB_CUDA_SOURCE', path.relative(process.cwd(), copy));
      assert.equal(c.cudaSourceDir(), copy);
      fs.rmSync(path.join(copy, 'src', 'user', 'prelude.h'));
      assert.throws(() => c.cudaSourceDir(), (e: Error) => e.message === `GDNLAB_CUDA_SOURCE: expected a copy of gdnlab's cuda/ folder (with src${path.sep}user${path.sep}prelude.h), got ${path.relative(process.cwd(), copy)}`);
      fs.rmSync(path.join(copy, 'include', 'gdn.h'));
      assert.throws(() => c.cudaSourceDir(), (e: Error) => e.message === `GDNLAB_CUDA_SOURCE: expected a copy of gdnlab's cuda/ folder (with include${path.sep}gdn.h), got ${path.relative(process.cwd(), copy)}`);
    });

    it('includeDirs and nvrtcShimDir: of the given folder, else of cudaSourceDir()', () => {
      const c = fresh();
      assert.deepEqual(c.includeDirs('/r'), ['/r/include', '/r/src', '/r/src/common']);
      assert.deepEqual(c.includeDirs(), [path.join(cuda, 'include'), path.join(cuda, 'src'), path.join(cuda, 'src', 'common')]);
      assert.equal(c.nvrtcShimDir('/r'), '/r/src/user/nvrtc');
      assert.equal(c.nvrtcShimDir(), path.join(cuda, 'src', 'user', 'nvrtc'));
    });

    it('a request without cudaSource compiles against cudaSourceDir() (GDNLAB_CUDA_SOURCE)', () => {
      const c = fresh();
      const copy = path.join(tmp, 'copy');
      fs.cpSync(cuda, copy, { recursive: true });
      setEnv('GDNLAB_CUDA_SOURCE', copy);
      const calls = compiler({});
      c.compileModule(request({ cudaSource: undefined }), recipe());
      assert.ok(compiles(calls)[0].args.includes(`-I${path.join(copy, 'src', 'common')}`));
    });

    it('cacheDir: $GDNLAB_ARM_CACHE, created; else ~/.cache/gdnlab/arms (an empty value too)', () => {
      const c = fresh();
      const nested = path.join(tmp, 'a', 'b');
      setEnv('GDNLAB_ARM_CACHE', nested);
      assert.equal(c.cacheDir(), nested);
      assert.ok(fs.statSync(nested).isDirectory());
      const home = path.join(tmp, 'home');
      stub(osModule, 'homedir', () => home);
      setEnv('GDNLAB_ARM_CACHE', undefined);
      assert.equal(c.cacheDir(), path.join(home, '.cache', 'gdnlab', 'arms'));
      assert.ok(fs.statSync(path.join(home, '.cache', 'gdnlab', 'arms')).isDirectory());
      setEnv('GDNLAB_ARM_CACHE', '');
      assert.equal(c.cacheDir(), path.join(home, '.cache', 'gdnlab', 'arms'));
    });

    it('findOnPath: the first executable file on PATH; /usr/local/cuda/bin last; \'\' when none', () => {
      const c = fresh();
      const d1 = path.join(tmp, 'bin1');
      const d2 = path.join(tmp, 'bin2');
      const d3 = path.join(tmp, 'bin3');
      for (const d of [d1, d2, d3]) fs.mkdirSync(d);
      fs.writeFileSync(path.join(d1, 'tool'), '', { mode: 0o644 });
      fs.writeFileSync(path.join(d2, 'tool'), '', { mode: 0o755 });
      fs.writeFileSync(path.join(d3, 'tool'), '', { mode: 0o755 });
      setEnv('PATH', [d1, d2, d3].join(path.delimiter));
      assert.equal(c.findOnPath('tool'), path.join(d2, 'tool'));
      const asked: [string, number][] = [];
      stub(fsModule, 'accessSync', (f: string, mode: number) => {
        asked.push([f, mode]);
        throw new Error('no');
      });
      assert.equal(c.findOnPath('tool'), '');
      assert.deepEqual(asked, [[path.join(d1, 'tool'), fs.constants.X_OK], [path.join(d2, 'tool'), fs.constants.X_OK], [path.join(d3, 'tool'), fs.constants.X_OK], ['/usr/local/cuda/bin/tool', fs.constants.X_OK]]);
      asked.length = 0;
      setEnv('PATH', undefined);
      assert.equal(c.findOnPath('nvcc'), '');
      assert.deepEqual(asked.map((a) => a[0]), ['nvcc', '/usr/local/cuda/bin/nvcc']);
    });
  });

  describe('the recipe (buildRecipe)', () => {
    let libDir = '';
    beforeEach(() => {
      libDir = path.join(tmp, 'lib');
      fs.mkdirSync(libDir);
      stub(gdnModule, 'gdnLib', () => ({ path: path.join(libDir, 'libgdn.so') }));
    });
    const write = (j: Record<string, unknown>) => fs.writeFileSync(path.join(libDir, 'gdn_user_build.json'), JSON.stringify(j));
    const nvccFile = () => {
      const f = path.join(tmp, 'nvcc');
      fs.writeFileSync(f, '', { mode: 0o755 });
      return f;
    };

    it('read once from gdn_user_build.json beside libgdn: flags split on blanks, the user flags as recorded', () => {
      const c = fresh();
      const nvcc = nvccFile();
      write({ cxx: '/usr/bin/c++', cxx_version: '13.2', cxx_flags: ' -O2  -Wall\t-fPIC ', host_replay_flags: '-O3 -mavx2', user_host_flags: '-O3  -mavx2 -std=c++17 -fPIC -shared',
        nvcc, nvcc_flags: '-O3 -std=c++17', build_info: 'a=1; host_replay_flags=-O1' });
      const r = c.buildRecipe();
      assert.deepEqual(r, {
        cxx: '/usr/bin/c++', cxxVersion: '13.2', cxxFlags: ['-O2', '-Wall', '-fPIC'], hostModuleFlags: ['-O3', '-mavx2', '-std=c++17', '-fPIC', '-shared'],
        hostReplayFlags: ['-O3', '-mavx2'], nvcc, nvccFlags: ['-O3', '-std=c++17'], buildInfo: 'a=1; host_replay_flags=-O1', file: path.join(libDir, 'gdn_user_build.json'),
      });
      fs.rmSync(path.join(libDir, 'gdn_user_build.json'));
      assert.equal(c.buildRecipe(), r, 'read once');
    });

    it('without user_host_flags: libgdn\'s flags less -std/-fPIC/-shared, the replay\'s flags, then -std=c++17 -fPIC -shared', () => {
      const c = fresh();
      write({ cxx: 'c++', cxx_flags: '-O2 -std=c++17 -fPIC -Wall -shared', host_replay_flags: '-O3 -mavx2', nvcc: nvccFile(), nvcc_flags: '', build_info: '' });
      assert.deepEqual(c.buildRecipe().hostModuleFlags, ['-O2', '-Wall', '-O3', '-mavx2', '-std=c++17', '-fPIC', '-shared']);
    });

    it('an older recipe names the replay flags in build_info only (first or later among the facts)', () => {
      for (const [info, want] of [
        ['x=1; host_replay_flags=-O1 -msse4; y=2', ['-O1', '-msse4']],
        ['host_replay_flags=-O2; y=2', ['-O2']],
        ['xhost_replay_flags=-O9; host_replay_flags=-O1', ['-O1']],
        ['a; host_replay_flags=', []],
      ] as const) {
        const c = fresh();
        write({ cxx: 'c++', cxx_flags: '-O2', nvcc: nvccFile(), nvcc_flags: '', build_info: info });
        assert.deepEqual(c.buildRecipe().hostReplayFlags, want, info);
      }
    });

    it('no replay flags anywhere, or no recipe file: errors that say to rebuild', () => {
      const file = path.join(libDir, 'gdn_user_build.json');
      let c = fresh();
      assert.throws(() => c.buildRecipe(), (e: Error) => e.message === `user arms: ${file} is missing; rebuild libgdn (bash scripts/build.sh) so CMake records its compiler and flags`);
      for (const j of [{ cxx_flags: '', build_info: 'xhost_replay_flags=-O1' }, { cxx_flags: '' }]) {
        c = fresh();
        write(j);
        assert.throws(() => c.buildRecipe(), (e: Error) => e.message === `user arms: ${file} does not say how the host replay was compiled (no host_replay_flags); rebuild libgdn (bash scripts/build.sh)`);
      }
    });

    it('nvcc: the recorded one when it exists, else the one on PATH (or none)', () => {
      const bin = path.join(tmp, 'bin');
      fs.mkdirSync(bin);
      fs.writeFileSync(path.join(bin, 'nvcc'), '', { mode: 0o755 });
      setEnv('PATH', bin);
      let c = fresh();
      write({ cxx_flags: '', host_replay_flags: '', nvcc: '/no/such/nvcc', nvcc_flags: '' });
      assert.equal(c.buildRecipe().nvcc, path.join(bin, 'nvcc'));
      c = fresh();
      write({ cxx_flags: '', host_replay_flags: '', nvcc_flags: '' });
      assert.equal(c.buildRecipe().nvcc, path.join(bin, 'nvcc'));
      c = fresh();
      setEnv('PATH', path.join(tmp, 'empty'));
      stub(fsModule, 'accessSync', () => {
        throw new Error('no');
      });
      write({ cxx_flags: '', host_replay_flags: '', nvcc: '', nvcc_flags: '' });
      assert.equal(c.buildRecipe().nvcc, '');
    });

    it('compileModule uses the loaded libgdn\'s recipe when none is given', () => {
      const c = fresh();
      write({ cxx: '/my/c++', cxx_flags: '-O2', host_replay_flags: '-O1', nvcc: nvccFile(), nvcc_flags: '', build_info: 'b' });
      const calls = compiler({});
      c.compileModule(request());
      const run = compiles(calls)[0];
      assert.equal(run.tool, '/my/c++');
      assert.deepEqual(run.args.slice(0, 6), ['-O2', '-O1', '-std=c++17', '-fPIC', '-shared', '-x']);
    });
  });
});
