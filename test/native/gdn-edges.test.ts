// Edge tests for lib/native/gdn.ts (the koffi binding of libgdn) so that Stryker can take the file in
// (docs/TESTING.md, "Mutation testing"). The module loads libgdn once per process and koffi refuses a
// named type declared twice, so each test here loads a fresh copy of the module whose require('koffi')
// and require('fs') are answered by stand-ins: koffi is the real one with every named type declared
// under a name of its own (so the copy declares its structs again), a load() that can play a missing,
// broken or outdated library, and a record of every function bound; fs answers existsSync for the
// library candidates. What is checked: the candidates and their order, each reason a candidate is
// passed over (in the error that names them all), the load and its failure kept, every binding's
// parameter count against cuda/include/gdn.h, the op array encoder and the native int32 arrays.

import { strict as assert } from 'assert';
import * as fs from 'fs';
import * as path from 'path';
import koffi from 'koffi';
import { ARITHMETIC_VERSION } from '../../lib/provenance';

type GdnModule = typeof import('../../lib/native/gdn');
interface Loader {
  _load(request: string, parent: unknown, isMain: boolean): unknown;
}

/** The libgdn this process would load (GDN_LIBRARY, else build/cuda, else build/host), by the real loader. */
const realGdn = () => (require('../../lib/native/gdn') as GdnModule).gdnLib();
const memcpy = koffi.load('libc.so.6').func('memcpy', 'void*', ['void*', 'uint64_t', 'size_t']) as (dst: Int32Array, src: number, n: number) => unknown;
let copies = 0;

interface Fresh {
  gdn: GdnModule;
  /** Paths koffi.load was asked for, in order. */
  loads: string[];
  /** Functions bound through a loaded library: [name, parameter count or null for a prototype string]. */
  bound: [string, number | null][];
  /** Native blocks koffi.free was given. */
  freed: unknown[];
}

/**
 * A fresh copy of gdn.ts. `exists` answers fs.existsSync for the candidates (default: the real file system);
 * `fake` maps a path to what koffi.load does there: throw, or a library answering the ABI and arithmetic
 * versions; any other path loads for real.
 */
function fresh(opts: { exists?: (p: string) => boolean; fake?: Record<string, Error | { abi: number; arith: number } | string> } = {}): Fresh {
  const tag = `_edge${++copies}`;
  const loads: string[] = [];
  const bound: [string, number | null][] = [];
  const freed: unknown[] = [];
  const k = koffi as unknown as Record<string, (...a: unknown[]) => unknown>;
  const wrapHandle = (h: { func: (...a: unknown[]) => unknown }) => ({
    func: (...a: unknown[]) => {
      if (a.length === 1) bound.push([String(a[0]).replace(/^.*\b(gdn_\w+)\(.*$/, '$1'), null]);
      else bound.push([a[0] as string, (a[2] as unknown[]).length]);
      return h.func(...a);
    },
  });
  const standInKoffi = {
    ...k,
    struct: (name: unknown, def: unknown) => (typeof name === 'string' ? k.struct(name + tag, def) : k.struct(name)),
    opaque: (name: unknown) => k.opaque(String(name) + tag),
    pointer: (...a: unknown[]) => (a.length === 2 && typeof a[0] === 'string' ? k.pointer(a[0] + tag, a[1]) : k.pointer(...a)),
    free: (m: unknown) => {
      freed.push(m);
      return k.free(m);
    },
    load: (p: string) => {
      loads.push(p);
      const f = opts.fake?.[p];
      if (f instanceof Error) throw f;
      if (typeof f === 'string') return wrapHandle(k.load(f) as never);
      if (f) {
        return {
          func: (proto: string) => () => (proto.includes('gdn_abi_version') ? f.abi : f.arith),
        };
      }
      return wrapHandle(k.load(p) as never);
    },
  };
  const standInFs = { ...fs, existsSync: (p: fs.PathLike) => (opts.exists ? opts.exists(String(p)) : fs.existsSync(p)) };
  // eslint-disable-next-line @typescript-eslint/no-var-requires
  const loader = require('module') as Loader;
  const original = loader._load;
  const file = require.resolve('../../lib/native/gdn');
  const cached = require.cache[file];
  delete require.cache[file];
  loader._load = function (request: string, parent: unknown, isMain: boolean) {
    if (request === 'koffi') return standInKoffi;
    if (request === 'fs') return standInFs;
    return original.call(this, request, parent, isMain);
  };
  try {
    // eslint-disable-next-line @typescript-eslint/no-var-requires
    return { gdn: require(file) as GdnModule, loads, bound, freed };
  } finally {
    loader._load = original;
    if (cached) require.cache[file] = cached;
    else delete require.cache[file];
  }
}

/** The C functions of gdn.h and gdn_user.h with their parameter counts. */
function headerFunctions(root: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const h of ['gdn.h', 'gdn_user.h']) {
    const text = fs.readFileSync(path.join(root, 'cuda', 'include', h), 'utf8');
    for (const m of text.matchAll(/GDN_API\s+[\w\s*]+?\b(gdn_\w+)\s*\(([^)]*)\)\s*;/g)) {
      const params = m[2].trim();
      out.set(m[1], params === '' || params === 'void' ? 0 : params.split(',').length);
    }
  }
  return out;
}

describe('native/gdn edges', () => {
  let env: string | undefined;
  beforeEach(() => {
    env = process.env.GDN_LIBRARY;
  });
  afterEach(() => {
    if (env === undefined) delete process.env.GDN_LIBRARY;
    else process.env.GDN_LIBRARY = env;
  });

  it('libraryCandidates: $GDN_LIBRARY first, then build/cuda and build/host of the project', () => {
    const { gdn } = fresh();
    const root = gdn.projectRoot();
    process.env.GDN_LIBRARY = '/somewhere/libgdn.so';
    assert.deepEqual(gdn.libraryCandidates(), ['/somewhere/libgdn.so', path.join(root, 'build', 'cuda', 'libgdn.so'), path.join(root, 'build', 'host', 'libgdn.so')]);
    for (const unset of ['', undefined]) {
      if (unset === undefined) delete process.env.GDN_LIBRARY;
      else process.env.GDN_LIBRARY = unset;
      assert.deepEqual(gdn.libraryCandidates(), [path.join(root, 'build', 'cuda', 'libgdn.so'), path.join(root, 'build', 'host', 'libgdn.so')]);
    }
  });

  it('every candidate passed over is named with its reason; the failure is kept, not retried', () => {
    process.env.GDN_LIBRARY = '/nowhere/libgdn.so';
    const probe = fresh();
    const [, cudaLib, hostLib] = probe.gdn.libraryCandidates();
    const f = fresh({
      exists: (p) => p !== '/nowhere/libgdn.so',
      fake: { [cudaLib]: new Error('not an ELF file'), [hostLib]: { abi: 8, arith: ARITHMETIC_VERSION } },
    });
    const want = 'libgdn could not be loaded; tried:\n' +
      '  /nowhere/libgdn.so (missing)\n' +
      `  ${cudaLib} (not an ELF file)\n` +
      `  ${hostLib} (ABI version 8, this binding needs 9: rebuild with npm run build)\n` +
      'Build it with `npm run build` or set GDN_LIBRARY.';
    let first: unknown;
    assert.throws(() => f.gdn.gdnLib(), (e: Error) => {
      first = e;
      return e.message === want;
    });
    assert.deepEqual(f.loads, [cudaLib, hostLib]);
    assert.throws(() => f.gdn.gdnLib(), (e: Error) => e === first);
    assert.deepEqual(f.loads, [cudaLib, hostLib], 'not tried again');
    // an outdated arithmetic version; none left
    delete process.env.GDN_LIBRARY;
    const g = fresh({ exists: (p) => p === hostLib, fake: { [hostLib]: { abi: gdnAbi(), arith: ARITHMETIC_VERSION + 1 } } });
    assert.throws(() => g.gdn.gdnLib(), (e: Error) => e.message === 'libgdn could not be loaded; tried:\n' +
      `  ${cudaLib} (missing)\n` +
      `  ${hostLib} (arithmetic version ${ARITHMETIC_VERSION + 1}, this checkout pins ${ARITHMETIC_VERSION} in lib/provenance.ts: rebuild with npm run build)\n` +
      'Build it with `npm run build` or set GDN_LIBRARY.');
  });

  it('the first good candidate is bound once and kept; every binding has the parameters gdn.h declares', () => {
    process.env.GDN_LIBRARY = '/old/libgdn.so';
    const f = fresh({
      exists: (p) => p === '/old/libgdn.so' || p.endsWith(path.join('build', 'cuda', 'libgdn.so')),
      fake: { '/old/libgdn.so': { abi: 8, arith: ARITHMETIC_VERSION } },
    });
    const [, cudaLib] = f.gdn.libraryCandidates();
    // the build/cuda candidate is the real host library, under that name
    const f2 = fresh({
      exists: (p) => p === '/old/libgdn.so' || p === cudaLib,
      fake: { '/old/libgdn.so': { abi: 8, arith: ARITHMETIC_VERSION }, [cudaLib]: realGdn().path },
    });
    const lib = f2.gdn.gdnLib();
    assert.equal(lib.path, cudaLib);
    assert.equal(f2.gdn.gdnLib(), lib);
    assert.deepEqual(f2.loads, ['/old/libgdn.so', cudaLib]);
    assert.equal(lib.abiVersion(), f2.gdn.ABI_VERSION);
    assert.equal(lib.buildInfo(), realGdn().buildInfo());
    assert.equal(lib.statusName(6), 'GDN_ERR_INVALID_BUFFER');
    // the version probes (prototype strings), then one binding per function of the header, with its parameter count
    const header = headerFunctions(f2.gdn.projectRoot());
    const probes = f2.bound.filter(([, n]) => n === null).map(([name]) => name);
    assert.deepEqual(probes, ['gdn_abi_version', 'gdn_arith_version']);
    const bindings = f2.bound.filter(([, n]) => n !== null);
    assert.equal(bindings.length, Object.keys(lib).length - 1);  // every GdnLib member but path
    for (const [name, n] of bindings) {
      assert.ok(header.has(name), `${name} is not in gdn.h`);
      assert.equal(n, header.get(name), `${name}: ${n} parameters bound, gdn.h declares ${header.get(name)}`);
    }
    const names = new Set(bindings.map(([name]) => name));
    for (const c of header.keys()) if (c !== 'gdn_arith_version' && c !== 'gdn_user_worker_serve') assert.ok(names.has(c), `${c} is not bound`);
  });

  it('ABI_STRUCTS: each C struct name with the struct declared under it', () => {
    const { gdn } = fresh();
    const tag = `_edge${copies}`;
    const names = Object.keys(gdn.ABI_STRUCTS);
    assert.deepEqual(names.sort(), [
      'gdn_arm_info', 'gdn_buffer_cache_info', 'gdn_conv_args', 'gdn_conv_update_args', 'gdn_copy_args', 'gdn_device_info', 'gdn_fused_args',
      'gdn_fused_result', 'gdn_launch_contract', 'gdn_matmul_args', 'gdn_op', 'gdn_postconv_args', 'gdn_postconv_result', 'gdn_schedule', 'gdn_timing_config',
    ]);
    for (const n of names) assert.equal((koffi.type(gdn.ABI_STRUCTS[n] as never) as unknown as { name: string }).name, n + tag);
  });

  it('encodeOps: each op at its index under its member, the rest zero', () => {
    const { gdn } = fresh();
    const copy = { dst: 4096, src: 8192, bytes: 12 };
    const matmulFree = { B: 3, C: 5, K: 4, x_dtype: 1, out_dtype: 0, state_dtype: 1, arm: 1, num_slots: 7, x: 1, weight: 2, bias: 0, state: 3, state_indices: 0, out: 4, state_indices_host: 9 };
    const mem = gdn.encodeOps([{ kind: 4, copy }, { kind: 2, update: matmulFree }, { kind: 4, copy: { dst: 1, src: 2, bytes: 3 } }]);
    try {
      const ops = koffi.decode(mem, gdn.OpT as never, 3) as Record<string, Record<string, unknown>>[];
      assert.deepEqual(ops.map((o) => [o.kind, o.reserved]), [[4, 0], [2, 0], [4, 0]]);
      assert.deepEqual(ops[0].copy, copy);
      assert.deepEqual(ops[1].update, matmulFree);
      assert.deepEqual(ops[2].copy, { dst: 1, src: 2, bytes: 3 });
      assert.deepEqual(ops[0].update, Object.fromEntries(Object.keys(matmulFree).map((key) => [key, 0])));
      assert.equal(ops[1].copy.bytes, 0);
      assert.equal((ops[1].conv as Record<string, unknown>).T, 0);
    } finally {
      gdn.freeNative(mem);
    }
  });

  it('allocInt32 holds the values (one element at least); freeNative frees through koffi', () => {
    const f = fresh();
    const a = f.gdn.allocInt32([5, -6, 2 ** 31 - 1]);
    assert.ok(a.addr > 0);
    assert.equal(a.addr, Number(koffi.address(a.mem as never)));
    assert.deepEqual(Array.from(koffi.decode(a.mem, 'int32_t', 3) as Int32Array), [5, -6, 2 ** 31 - 1]);
    const empty = f.gdn.allocInt32(new Int32Array(0));
    assert.ok(empty.addr > 0);
    f.gdn.freeNative(a.mem);
    f.gdn.freeNative(empty.mem);
    assert.deepEqual(f.freed, [a.mem, empty.mem]);
  });

  it('scratchInt32: one array reused while the values fit, grown (the old one freed) when they do not', () => {
    const f = fresh();
    // Reads n int32 values at a native address (libc's memcpy into a typed array).
    const read = (addr: number, n: number) => {
      const out = new Int32Array(n);
      memcpy(out, addr, 4 * n);
      return Array.from(out);
    };
    const a = f.gdn.scratchInt32([1, 2, 3]);
    assert.deepEqual(read(a, 3), [1, 2, 3]);
    const full = Array.from({ length: 256 }, (_, i) => i - 7);
    assert.equal(f.gdn.scratchInt32(full), a, '256 values fit the first array');
    assert.deepEqual(read(a, 256), full);
    assert.deepEqual(f.freed, []);
    const more = Array.from({ length: 300 }, (_, i) => 1000 + i);
    const b = f.gdn.scratchInt32(more);
    assert.notEqual(b, a);
    assert.equal(f.freed.length, 1);
    assert.deepEqual(read(b, 300), more);
    const twice = Array.from({ length: 600 }, (_, i) => 5 - i);
    assert.equal(f.gdn.scratchInt32(twice), b, 'grown to twice what was asked');
    assert.deepEqual(read(b, 600), twice);
    assert.equal(f.gdn.scratchInt32([9]), b);
    assert.deepEqual(read(b, 2), [9, 4]);
  });
});

/** The ABI this binding needs (a constant of the module). */
function gdnAbi(): number {
  return 9;
}
