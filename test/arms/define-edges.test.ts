// lib/arms/define.ts without a compiler or a registration in libgdn: compileModule, cudaSourceDir,
// gdnLib(), the table's arms()/armsChanged() and activeBackend() are stand-ins that record what
// defineConvArm / definePostconvArm ask of them. Every argument check at its bounds with its exact
// message, the modules asked for (host, CUDA for the backend's SM or the one given, the timing module
// of a replaced arm that was timed), the descriptor registered field by field, the registry entry and
// its prepareTiming, the kept spec, the summary line, and undefineArm.

import { strict as assert } from 'assert';
import { armDefines, armSpec, defineConvArm, definePostconvArm, undefineArm } from '../../lib/arms/define';
import { forgetArm, registerArm, userArm } from '../../lib/arms/registry';
import type { Backend } from '../../lib/backend';
import { GdnError } from '../../lib/backend';

/* eslint-disable @typescript-eslint/no-var-requires */
const compile = require('../../lib/arms/compile') as Record<string, unknown>;
const native = require('../../lib/native/gdn') as Record<string, unknown>;
const table = require('../../lib/arms/table') as Record<string, unknown>;
const backendModule = require('../../lib/backend') as Record<string, unknown>;
/* eslint-enable @typescript-eslint/no-var-requires */

type Req = { op: string; name: string; source: string; defines: Record<string, unknown>; cudaSource: string; target: string; sm?: string };

const host = { kind: 'host' } as unknown as Backend;
const cuda = { kind: 'cuda', info: () => ({ smMajor: 9, smMinor: 0 }) } as unknown as Backend;

describe('defineArm: edges (stand-ins for the compiler and libgdn)', () => {
  const saved: [Record<string, unknown>, string, unknown][] = [];
  let compiles: Req[];
  let registered: Record<string, unknown>[];
  let status: number;
  let nextId: number;
  let changed: number;
  let builtins: { name: string; user: boolean }[];
  let cachedTargets: string[];
  const names: string[] = [];
  const replace = (m: Record<string, unknown>, key: string, value: unknown) => {
    saved.push([m, key, m[key]]);
    m[key] = value;
  };
  const body = 'template <class TX, class TO, class Ctx> GDN_HD void conv_arm(const Params& p, Ctx& t) {}';
  let seq = 0;
  /** A fresh arm name per test, so that no test sees another's definition. */
  const fresh = () => {
    const n = `edge${++seq}`;
    names.push(n);
    return n;
  };

  beforeEach(() => {
    compiles = [];
    registered = [];
    status = 0;
    nextId = 40;
    changed = 0;
    builtins = [{ name: 'scalar', user: false }, { name: 'theirs', user: true }];
    cachedTargets = [];
    replace(compile, 'compileModule', (req: Req) => {
      compiles.push(req);
      const cached = cachedTargets.includes(req.target);
      return { target: req.target, file: `/cache/${req.name}.${req.target}${req.sm ? `.${req.sm}` : ''}`, cached, compileMs: cached ? 0 : 1250, sm: req.sm, flags: [`-f${req.target}`] };
    });
    replace(compile, 'cudaSourceDir', () => '/src/cuda');
    replace(table, 'arms', () => builtins);
    replace(table, 'armsChanged', () => changed++);
    replace(native, 'gdnLib', () => ({
      armRegister: (desc: Record<string, unknown>, id: number[]) => {
        registered.push(desc);
        // As koffi does with an out-parameter array: the element given is filled, none is added.
        if (id.length > 0) id[0] = nextId;
        return status;
      },
      statusName: (st: number) => `STATUS_${st}`,
      lastError: () => 'the stand-in refused',
    }));
  });
  afterEach(() => {
    while (saved.length) {
      const [m, key, v] = saved.pop() as [Record<string, unknown>, string, unknown];
      m[key] = v;
    }
  });
  after(() => {
    for (const n of names) {
      undefineArm('conv', n);
      undefineArm('postconv', n);
    }
  });

  it('refuses a spec that is not an object and names that libgdn would refuse', () => {
    assert.throws(() => defineConvArm(null as never, { backend: host }), { name: 'TypeError', message: 'defineArm: expected { name, source, … }, got null' });
    assert.throws(() => definePostconvArm('x' as never, { backend: host }), { name: 'TypeError', message: 'defineArm: expected { name, source, … }, got x' });
    assert.throws(() => definePostconvArm(undefined as never, { backend: host }), { name: 'TypeError', message: 'defineArm: expected { name, source, … }, got undefined' });
    const bad = (name: unknown, shown: string) =>
      assert.throws(() => defineConvArm({ name, source: body } as never, { backend: host }), { name: 'TypeError', message: `name: expected 1..31 of a-z, 0-9, '-', '_', '.', starting with a letter, got ${shown}` });
    bad('Up', '"Up"');
    bad('1a', '"1a"');
    bad('a'.repeat(32), `"${'a'.repeat(32)}"`);
    bad('a b', '"a b"');
    bad(7, '7');
    bad(undefined, 'undefined');
    assert.equal(compiles.length, 0);
    assert.equal(defineConvArm({ name: 'a'.repeat(31), source: body }, { backend: host }).name, 'a'.repeat(31));
    names.push('a'.repeat(31));
  });

  it('refuses a built-in arm\'s name (a user arm\'s may be defined again), a blank source, a long description', () => {
    assert.throws(() => defineConvArm({ name: 'scalar', source: body }, { backend: host }), { name: 'TypeError', message: "name: 'scalar' is a built-in conv arm; choose another name" });
    builtins = [{ name: 'theirs', user: true }];
    assert.equal(definePostconvArm({ name: 'theirs', source: body }, { backend: host }).name, 'theirs');
    names.push('theirs');
    const n = fresh();
    for (const source of [undefined, '', ' \n\t', 5]) {
      assert.throws(() => defineConvArm({ name: n, source } as never, { backend: host }), { name: 'TypeError', message: `arm '${n}': source: expected the per-thread body as a string` });
    }
    const desc = (description: unknown, shown: string) =>
      assert.throws(() => defineConvArm({ name: n, source: body, description } as never, { backend: host }), { name: 'TypeError', message: `arm '${n}': description: expected a string of at most 223 bytes in UTF-8, got ${shown}` });
    desc('x'.repeat(224), '224 bytes');
    desc('é'.repeat(112), '224 bytes');
    desc(5, '5');
    desc(null, 'null');
    assert.equal(defineConvArm({ name: n, source: body, description: 'é'.repeat(111) + 'x' }, { backend: host }).description, 'é'.repeat(111) + 'x');
  });

  it('threadsPerBlock: an integer in 1..1024 and whole warps, the nearest multiples named', () => {
    const n = fresh();
    const range = (v: unknown, shown: string) =>
      assert.throws(() => defineConvArm({ name: n, source: body, threadsPerBlock: v, channelsPerBlock: 1 } as never, { backend: host }), { name: 'RangeError', message: `arm '${n}': threadsPerBlock: expected an integer in 1..1024, got ${shown}` });
    range(0, '0');
    range(1025, '1025');
    range(64.5, '64.5');
    range('64', '64');
    const warps = (v: number, lo: number, hi: number) =>
      assert.throws(() => definePostconvArm({ name: n, source: body, threadsPerBlock: v }, { backend: host }), { name: 'RangeError', message: `arm '${n}': threadsPerBlock: expected a multiple of 32 (whole warps of 32 threads), got ${v}; the nearest are ${lo} and ${hi}` });
    warps(1, 32, 32);
    warps(100, 96, 128);
    warps(1023, 992, 1024);
    assert.equal(definePostconvArm({ name: n, source: body, threadsPerBlock: 1024 }, { backend: host }).contract.threadsPerBlock, 1024);
    assert.equal(definePostconvArm({ name: n, source: body, threadsPerBlock: 32 }, { backend: host }).contract.threadsPerBlock, 32);
  });

  it('sharedBytes 0..49152, timeLimitMs 1..3600000, plantedDefect a sentence', () => {
    const n = fresh();
    const check = (extra: Record<string, unknown>, message: string, name = 'RangeError') =>
      assert.throws(() => definePostconvArm({ name: n, source: body, ...extra } as never, { backend: host }), { name, message: `arm '${n}': ${message}` });
    check({ sharedBytes: 49153 }, 'sharedBytes: expected an integer in 0..49152, got 49153');
    check({ sharedBytes: -1 }, 'sharedBytes: expected an integer in 0..49152, got -1');
    check({ timeLimitMs: 0 }, 'timeLimitMs: expected an integer in 1..3600000, got 0');
    check({ timeLimitMs: 3_600_001 }, 'timeLimitMs: expected an integer in 1..3600000, got 3600001');
    check({ plantedDefect: ' ' }, 'plantedDefect: expected a sentence saying what is wrong on purpose, got " "', 'TypeError');
    check({ plantedDefect: '' }, 'plantedDefect: expected a sentence saying what is wrong on purpose, got ""', 'TypeError');
    check({ plantedDefect: 3 }, 'plantedDefect: expected a sentence saying what is wrong on purpose, got 3', 'TypeError');
    const d = definePostconvArm({ name: n, source: body, sharedBytes: 49152, timeLimitMs: 3_600_000, barriers: true }, { backend: host });
    assert.deepEqual(d.contract, { layout: 'tile-slots (head slot, 16-token tile)', requiresD128: true, threadsPerBlock: 128, sharedBytes: 49152, barriers: true, timeLimitMs: 3_600_000 });
    const e = definePostconvArm({ name: n, source: body, sharedBytes: 0, timeLimitMs: 1, barriers: 'yes' as never, requiresD128: false }, { backend: host });
    assert.deepEqual(e.contract, { layout: 'tile-slots (head slot, 16-token tile)', requiresD128: false, threadsPerBlock: 128, sharedBytes: 0, barriers: false, timeLimitMs: 1 });
    assert.deepEqual([registered[0].cooperative, registered[0].requires_d128, registered[1].cooperative, registered[1].requires_d128], [1, 1, 0, 0]);
  });

  it('conv: channels default to the threads, tokens to 8, mappings to exact and sequence; each checked', () => {
    const n = fresh();
    const d = defineConvArm({ name: n, source: body, threadsPerBlock: 64 }, { backend: host });
    assert.deepEqual(d.contract, { channelsPerBlock: 64, tokensPerProgram: 8, mappings: ['exact', 'sequence'], threadsPerBlock: 64, sharedBytes: 0, barriers: false, timeLimitMs: 10000 });
    assert.deepEqual([registered[0].channels_per_block, registered[0].tokens_per_program, registered[0].mappings], [64, 8, 0b101]);
    defineConvArm({ name: n, source: body, channelsPerBlock: 1 << 20, tokensPerProgram: 1, mappings: ['exact-racy', 'sequence'] }, { backend: host });
    assert.deepEqual([registered[1].channels_per_block, registered[1].tokens_per_program, registered[1].mappings, registered[1].threads_per_block], [1 << 20, 1, 0b110, 128]);
    const given = ['exact'] as const;
    const c = defineConvArm({ name: n, source: body, mappings: given }, { backend: host });
    assert.notEqual(c.contract.mappings, given);
    assert.equal(userArm('conv', n)?.mappings, given);
    const check = (extra: Record<string, unknown>, message: string, name = 'RangeError') =>
      assert.throws(() => defineConvArm({ name: n, source: body, ...extra } as never, { backend: host }), { name, message: `arm '${n}': ${message}` });
    check({ channelsPerBlock: 0 }, 'channelsPerBlock: expected an integer in 1..1048576, got 0');
    check({ channelsPerBlock: (1 << 20) + 1 }, 'channelsPerBlock: expected an integer in 1..1048576, got 1048577');
    check({ tokensPerProgram: 0 }, 'tokensPerProgram: expected an integer in 1..1048576, got 0');
    check({ mappings: [] }, "mappings: expected a non-empty list of 'exact', 'exact-racy', 'sequence', got []", 'TypeError');
    check({ mappings: 'exact' }, "mappings: expected a non-empty list of 'exact', 'exact-racy', 'sequence', got \"exact\"", 'TypeError');
    check({ mappings: ['exact', 'racy'] }, "mappings: expected a non-empty list of 'exact', 'exact-racy', 'sequence', got [\"exact\",\"racy\"]", 'TypeError');
    assert.throws(() => defineConvArm({ source: body, channelsPerBlock: 0 } as never, { backend: host }), { name: 'RangeError', message: "arm '?': channelsPerBlock: expected an integer in 1..1048576, got 0" });
  });

  it('the modules: host always (unless host: false), CUDA for a CUDA backend\'s SM or the one given; nothing is an error', () => {
    const n = fresh();
    const base = { op: 'conv', name: n, source: body, defines: { GDN_ARM_THREADS: 128 }, cudaSource: '/src/cuda' };
    defineConvArm({ name: n, source: body }, { backend: host });
    assert.deepEqual(compiles, [{ ...base, target: 'host' }]);
    compiles = [];
    const d = defineConvArm({ name: n, source: body }, { backend: cuda });
    assert.deepEqual(compiles, [{ ...base, target: 'host' }, { ...base, target: 'cuda', sm: '90' }]);
    assert.deepEqual(d.modules, [
      { target: 'host', file: `/cache/${n}.host`, cached: false, compileMs: 1250, sm: undefined, flags: ['-fhost'] },
      { target: 'cuda', file: `/cache/${n}.cuda.90`, cached: false, compileMs: 1250, sm: '90', flags: ['-fcuda'] },
    ]);
    assert.deepEqual([d.cached, d.compileMs], [false, 2500]);
    cachedTargets = ['host'];
    const half = defineConvArm({ name: n, source: body }, { backend: cuda });
    assert.deepEqual([half.cached, half.compileMs, half.summary], [false, 1250, `conv arm '${n}' (id 40, replaced): host cached, cuda sm_90 compiled in 1.3 s`]);
    cachedTargets = [];
    compiles = [];
    defineConvArm({ name: n, source: body, cudaSm: '80', host: false }, { backend: cuda });
    assert.deepEqual(compiles, [{ ...base, target: 'cuda', sm: '80' }]);
    assert.deepEqual([registered[3].host_module, registered[3].cuda_module, registered[3].host_fast_module], [null, `/cache/${n}.cuda.80`, null]);
    assert.throws(() => defineConvArm({ name: n, source: body, host: false }, { backend: host }), { name: 'Error', message: `arm '${n}': nothing to compile (host: false and no CUDA target)` });
    assert.throws(() => defineConvArm({ name: n, source: body, host: false, cudaSm: null }, { backend: host }), { name: 'Error', message: `arm '${n}': nothing to compile (host: false and no CUDA target)` });
    // Without a backend given, the active one decides.
    replace(backendModule, 'activeBackend', () => cuda);
    compiles = [];
    defineConvArm({ name: n, source: body });
    assert.deepEqual(compiles.map((c) => c.target), ['host', 'cuda']);
  });

  it('the descriptor registered, field by field; the id libgdn gives; the names cache dropped', () => {
    const n = fresh();
    nextId = 41;
    const d = defineConvArm({ name: n, source: body, threadsPerBlock: 256, channelsPerBlock: 32, tokensPerProgram: 4, sharedBytes: 512, timeLimitMs: 99, barriers: true, mappings: ['sequence'] }, { backend: cuda });
    assert.deepEqual(registered, [{
      op: 1, threads_per_block: 256, channels_per_block: 32, tokens_per_program: 4, mappings: 0b100, shared_bytes: 512, cooperative: 1, time_limit_ms: 99,
      requires_d128: 0, reserved0: 0, name: n, host_module: `/cache/${n}.host`, host_fast_module: null, cuda_module: `/cache/${n}.cuda.90`, reserved: [0, 0, 0, 0, 0, 0, 0, 0],
    }]);
    assert.equal(d.id, 41);
    assert.equal(changed, 1);
    const p = fresh();
    definePostconvArm({ name: p, source: body }, { backend: host });
    assert.deepEqual(userArm('postconv', p)?.mappings, []);
    assert.deepEqual(registered[1], {
      op: 3, threads_per_block: 128, channels_per_block: 0, tokens_per_program: 16, mappings: 0, shared_bytes: 0, cooperative: 0, time_limit_ms: 10000,
      requires_d128: 1, reserved0: 0, name: p, host_module: `/cache/${p}.host`, host_fast_module: null, cuda_module: null, reserved: [0, 0, 0, 0, 0, 0, 0, 0],
    });
  });

  it('a refused registration is a GdnError with libgdn\'s words, after the names cache is dropped', () => {
    const n = fresh();
    status = 3;
    assert.throws(() => defineConvArm({ name: n, source: body }, { backend: host }), (e: unknown) => e instanceof GdnError && e.status === 3 && e.statusName === 'STATUS_3' && e.message === 'defineArm: the stand-in refused');
    assert.equal(changed, 1);
    assert.equal(userArm('conv', n), undefined);
    assert.equal(armSpec('conv', n), undefined);
  });

  it('the registry entry, its prepareTiming once, and a replaced arm that was timed getting its timing module at once', () => {
    const n = fresh();
    const d = defineConvArm({ name: n, source: body, plantedDefect: 'folds backwards' }, { backend: host });
    assert.equal(d.summary, `conv arm '${n}' (id 40, PLANTED DEFECT): host compiled in 1.3 s`);
    const r = userArm('conv', n);
    assert.deepEqual([r?.op, r?.name, r?.id, r?.mappings, r?.description, r?.plantedDefect], ['conv', n, 40, ['exact', 'sequence'], '', 'folds backwards']);
    compiles = [];
    r?.prepareTiming();
    assert.deepEqual(compiles.map((c) => c.target), ['host-fast']);
    assert.deepEqual(compiles[0].defines, { GDN_ARM_THREADS: 128 });
    assert.equal(registered.length, 2);
    assert.deepEqual(registered[1], { ...registered[0], host_fast_module: `/cache/${n}.host-fast` });
    r?.prepareTiming();
    assert.equal(compiles.length, 1);
    assert.equal(registered.length, 2);
    // Defined again: the previous definition was timed, so its timing module is built now.
    cachedTargets = ['host', 'host-fast'];
    compiles = [];
    const again = defineConvArm({ name: n, source: body, description: 'second' }, { backend: host });
    assert.deepEqual(compiles.map((c) => c.target), ['host', 'host-fast']);
    assert.equal(registered[2].host_fast_module, `/cache/${n}.host-fast`);
    assert.deepEqual([again.cached, again.compileMs], [true, 0]);
    assert.equal(again.summary, `conv arm '${n}' (id 40, replaced): host cached, host-fast cached`);
    assert.equal(userArm('conv', n)?.description, 'second');
    // Already timed: prepareTiming of the new entry does nothing.
    compiles = [];
    userArm('conv', n)?.prepareTiming();
    assert.equal(compiles.length, 0);
  });

  it('a replaced arm never timed gets no timing module; host: false never gets one, nor from prepareTiming', () => {
    const n = fresh();
    defineConvArm({ name: n, source: body }, { backend: host });
    compiles = [];
    const again = defineConvArm({ name: n, source: body }, { backend: host });
    assert.deepEqual(compiles.map((c) => c.target), ['host']);
    assert.equal(again.summary, `conv arm '${n}' (id 40, replaced): host compiled in 1.3 s`);
    userArm('conv', n)?.prepareTiming();
    compiles = [];
    defineConvArm({ name: n, source: body, host: false, cudaSm: '90' }, { backend: host });
    assert.deepEqual(compiles.map((c) => c.target), ['cuda']);
    compiles = [];
    userArm('conv', n)?.prepareTiming();
    assert.equal(compiles.length, 0);
  });

  it('the kept spec is a copy; armSpec only while defined; armDefines; undefineArm', () => {
    const n = fresh();
    const spec = { name: n, source: body, description: 'first' };
    defineConvArm(spec, { backend: host });
    spec.description = 'edited';
    assert.equal(armSpec('conv', n)?.description, 'first');
    assert.deepEqual(armDefines('conv', n), { GDN_ARM_THREADS: 128 });
    assert.equal(armSpec('postconv', n), undefined);
    assert.equal(undefineArm('postconv', n), false);
    assert.equal(undefineArm('conv', n), true);
    assert.equal(userArm('conv', n), undefined);
    assert.equal(armSpec('conv', n), undefined);
    assert.equal(armDefines('conv', n), undefined);
    assert.equal(undefineArm('conv', n), false);
    // An entry of the registry that this module did not define has no spec here.
    registerArm({ op: 'conv', name: n, id: 1, mappings: [], description: '', prepareTiming() {} });
    assert.equal(armSpec('conv', n), undefined);
    forgetArm('conv', n);
  });
});
