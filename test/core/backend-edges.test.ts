// Edge tests for lib/backend.ts on the host backend (buffers of a few bytes, one tiny timed copy), so
// that Stryker can take the file in (docs/TESTING.md, "Mutation testing"). Where a branch depends on what
// libgdn answers (the CUDA device count, device facts, an async call's message, a failed status), a
// backend of the test's own gets a stand-in `lib`: the real one with some functions replaced. The
// choice of the active backend is exercised with GDN_BACKEND set by the test and lib/native/gdn's
// gdnLib replaced for the CUDA count; the backend that was active before is made active again after.

import { strict as assert } from 'assert';
import { Tensor } from '../../lib/tensor';
import { Backend, GdnError, activeBackend, backendChoice, buildInfo, choiceOf, cudaDeviceCount, useBackend } from '../../lib/backend';
import { ABI_VERSION, Fn, STATUS, gdnLib } from '../../lib/native/gdn';
import { copyOp } from '../../lib/ops/copy';
import * as conv from '../../lib/ops/conv';
import { throwsExactly } from '../stand-ins';

// eslint-disable-next-line @typescript-eslint/no-var-requires
// What the loaded libgdn is: a host-only build (build/host, as scripts/mutate.sh pins it), or a host+cuda build on a
// machine with or without a usable GPU (the loader prefers build/cuda). Each fact below is asserted for the build here.
const cudaBuilt = /^host\+cuda; /.test(buildInfo().build);
const cudaDevices = cudaDeviceCount();

const native = require('../../lib/native/gdn') as { gdnLib: () => unknown; freeNative: (m: unknown) => void };


/** Replaces functions of b's lib (the real ones stay reachable through `real`). */
function standIn(b: Backend, over: Record<string, unknown>): void {
  const real = (b as unknown as { lib: Record<string, unknown> }).lib;
  (b as unknown as { lib: unknown }).lib = { ...real, ...over };
}

/** A native function stand-in: sync calls and `.async` with a node-style callback. */
function fn(sync: (...a: unknown[]) => unknown, asyncResult?: (...a: unknown[]) => [unknown, number]): Fn {
  const f = sync as Fn;
  f.async = (...a: unknown[]) => {
    const cb = a[a.length - 1] as (err: unknown, res: number) => void;
    const [err, res] = asyncResult ? asyncResult(...a.slice(0, -1)) : [null, sync(...a.slice(0, -1)) as number];
    setImmediate(() => cb(err, res));
  };
  return f;
}

describe('Backend edges', () => {
  let b: Backend;
  beforeEach(() => {
    b = Backend.open('host');
  });
  afterEach(() => b.close());

  it('GdnError: status, its name, the message; interrupted only for GDN_ERR_INTERRUPTED', () => {
    const e = new GdnError(1, 'GDN_ERR_INVALID_ARGUMENT', 'x: bad');
    assert.ok(e instanceof Error);
    assert.deepEqual([e.name, e.status, e.statusName, e.message, e.interrupted], ['GdnError', 1, 'GDN_ERR_INVALID_ARGUMENT', 'x: bad', false]);
    assert.equal(new GdnError(STATUS.GDN_ERR_INTERRUPTED, 'GDN_ERR_INTERRUPTED', 'stopped').interrupted, true);
    assert.equal(new GdnError(8, 'GDN_ERR_ARM_FAULT', 'f').interrupted, false);
  });

  it('open: a kind is host or cuda; this build has no CUDA (refused with the status); close is final and safe twice', () => {
    throwsExactly(() => Backend.open('gpu' as never), TypeError, "kind: expected 'host' or 'cuda', got gpu");
    if (!cudaBuilt) {
      assert.throws(() => Backend.open('cuda'), (e: Error) => {
        assert.ok(e instanceof GdnError);
        assert.equal(e.status, STATUS.GDN_ERR_UNSUPPORTED);
        assert.equal(e.statusName, 'GDN_ERR_UNSUPPORTED');
        assert.match(e.message, /^opening the cuda backend: kind: this libgdn was built without the CUDA backend/);
        return true;
      });
    } else if (cudaDevices === 0) {
      assert.throws(() => Backend.open('cuda'), (e: Error) => {
        assert.ok(e instanceof GdnError);
        assert.equal(e.statusName, 'GDN_ERR_NO_DEVICE');
        assert.match(e.message, /^opening the cuda backend: no usable CUDA device \(.*\); use the host backend$/);
        return true;
      });
    } else {
      const g = Backend.open('cuda');
      assert.equal(g.kind, 'cuda');
      g.close();
    }
    const c = Backend.open('host');
    assert.equal(c.kind, 'host');
    assert.equal(c.lib, gdnLib());
    assert.equal(c.closed, false);
    assert.ok(c.native !== null && c.native !== undefined);
    let closes = 0;
    standIn(c, { backendClose: (h: unknown) => { closes++; return gdnLib().backendClose(h); } });
    c.close();
    assert.equal(c.closed, true);
    throwsExactly(() => c.native, Error, 'backend: the host backend was closed');
    c.close();
    assert.equal(closes, 1, 'the native handle is closed once');
  });

  it('check: 0 passes; a failure throws a GdnError with the context and the message, or the status name', () => {
    b.check(0, 'nothing');
    assert.throws(() => b.free(12345), (e: Error) => e instanceof GdnError && e.status === STATUS.GDN_ERR_INVALID_BUFFER &&
      e.message === 'freeing a buffer: buffer: 0x3039 is not the start of a live buffer of this backend (already freed, or foreign)');
    standIn(b, { lastError: () => '' });
    throwsExactly(() => b.check(2, 'ctx'), GdnError, 'ctx: GDN_ERR_UNSUPPORTED');
    // after an async call the backend's own message is read, up to its NUL
    const asked: unknown[][] = [];
    standIn(b, {
      lastError: () => 'the thread message',
      backendLastError: (h: unknown, buf: Uint8Array, n: number) => {
        asked.push([h, n]);
        buf.set(Buffer.from('the backend message\0tail'));
        return 0;
      },
    });
    throwsExactly(() => b.check(1, 'ctx', true), GdnError, 'ctx: the backend message');
    assert.deepEqual(asked, [[b.native, 1024]]);
    throwsExactly(() => b.check(1, 'ctx', false), GdnError, 'ctx: the thread message');
    standIn(b, { backendLastError: (_h: unknown, buf: Uint8Array) => { buf.set(Buffer.from('a\nb\0c\nd')); return 0; } });
    throwsExactly(() => b.check(1, 'ctx', true), GdnError, 'ctx: a\nb');
    standIn(b, { backendLastError: () => 0 });
    throwsExactly(() => b.check(3, 'ctx', true), GdnError, 'ctx: GDN_ERR_OUT_OF_MEMORY');
  });

  it('check after close reads the thread\'s message (no backend to ask)', () => {
    const c = Backend.open('host');
    standIn(c, { lastError: () => 'thread', backendLastError: () => { throw new Error('not asked'); } });
    c.close();
    throwsExactly(() => c.check(1, 'ctx', true), GdnError, 'ctx: thread');
  });

  it('info: the host facts, cached on the host; every field decoded, clocks by name', () => {
    const i = b.info();
    assert.equal(i.backend, 'host');
    assert.equal(i.deviceOrdinal, 0);
    assert.equal(typeof i.name, 'string');
    assert.ok(i.name.length > 0);
    assert.ok(i.smCount >= 1 && i.totalMemBytes > 0 && i.freeMemBytes > 0);
    assert.equal(i.clocksSource, 'unknown');
    assert.equal(b.info(), i);
    // A stand-in device: every field from a known word, not cached off the host.
    const calls: number[] = [];
    const fields = (source: number) => ({
      backend: 1, device_ordinal: 3, name: 'Stand-in', sm_major: 9, sm_minor: 1, sm_count: 132, l2_bytes: 50331648,
      total_mem_bytes: 2n ** 36n, free_mem_bytes: 2n ** 35n, sm_clock_mhz: 1980, mem_clock_mhz: 2619, max_sm_clock_mhz: 1985,
      max_mem_clock_mhz: 2620, mem_bus_width_bits: 5120, driver_version: 12040, runtime_version: 12030, driver_string: '550.1', clocks_source: source,
    });
    let source = 1;
    const c = Backend.open('host');
    standIn(c, { deviceInfo: (_h: unknown, out: Record<string, unknown>[]) => { calls.push(source); out[0] = fields(source); return 0; } });
    (c as unknown as { kind: string }).kind = 'cuda';
    assert.deepEqual(c.info(), {
      backend: 'cuda', deviceOrdinal: 3, name: 'Stand-in', smMajor: 9, smMinor: 1, smCount: 132, l2Bytes: 50331648,
      totalMemBytes: 2 ** 36, freeMemBytes: 2 ** 35, smClockMhz: 1980, memClockMhz: 2619, maxSmClockMhz: 1985, maxMemClockMhz: 2620,
      memBusWidthBits: 5120, driverVersion: 12040, runtimeVersion: 12030, driverString: '550.1', clocksSource: 'nvml',
    });
    source = 2;
    assert.equal(c.info().clocksSource, 'attributes');
    source = 0;
    assert.equal(c.info().clocksSource, 'unknown');
    source = 7;
    assert.equal(c.info().clocksSource, 'unknown');
    assert.deepEqual(calls, [1, 2, 0, 7]);
    standIn(c, { deviceInfo: () => 5, lastError: () => 'no device' });
    throwsExactly(() => c.info(), GdnError, 'device info: no device');
    c.close();
    // the host caches after the first answer only
    const h = Backend.open('host');
    let n = 0;
    standIn(h, { deviceInfo: (_h: unknown, out: Record<string, unknown>[]) => { n++; out[0] = fields(0); return 0; } });
    h.info();
    h.info();
    assert.equal(n, 1);
    h.close();
  });

  it('alloc: a positive safe integer of bytes; free; a failed allocation names its size', () => {
    for (const bad of [0, -4, 1.5, 2 ** 53, NaN]) throwsExactly(() => b.alloc(bad), RangeError, `bytes: expected a positive integer, got ${bad}`);
    const a = b.alloc(1);
    assert.ok(a > 0);
    assert.deepEqual(b.stats(), { liveBuffers: 1, liveBytes: 1 });
    b.free(a);
    assert.deepEqual(b.stats(), { liveBuffers: 0, liveBytes: 0 });
    // 2^47 bytes: past the 47-bit user address space, so no machine can give it (2^40 was given, and touched, on a
    // machine with 128 GiB and overcommit: the test process was killed).
    assert.throws(() => b.alloc(2 ** 47), (e: Error) => e instanceof GdnError && e.message.startsWith(`allocating ${2 ** 47} bytes: `));
  });

  it('allocFilled: one pattern per buffer, sizes positive multiples of 4, many buffers at once; freeMany', () => {
    throwsExactly(() => b.allocFilled([4, 8], [1]), RangeError, 'patterns: expected 2 patterns (one per buffer), got 1');
    throwsExactly(() => b.allocFilled([4, 6], [1, 2]), RangeError, 'bytes[1]: expected a positive multiple of 4, got 6');
    throwsExactly(() => b.allocFilled([0], [1]), RangeError, 'bytes[0]: expected a positive multiple of 4, got 0');
    throwsExactly(() => b.allocFilled([-4], [1]), RangeError, 'bytes[0]: expected a positive multiple of 4, got -4');
    throwsExactly(() => b.allocFilled([2 ** 53 + 4], [1]), RangeError, `bytes[0]: expected a positive multiple of 4, got ${2 ** 53 + 4}`);
    assert.equal(b.stats().liveBuffers, 0);
    assert.deepEqual(b.allocFilled([], []), []);
    // 20 buffers: more than the first scratch arrays hold; buffer i of 4·(i+1) bytes filled with pattern i (and -1 as 0xffffffff)
    const n = 20;
    const sizes = Array.from({ length: n }, (_, i) => 4 * (i + 1));
    const patterns = Array.from({ length: n }, (_, i) => (i === 0 ? -1 : 0x01010101 * i));
    const addrs = b.allocFilled(sizes, patterns);
    assert.equal(addrs.length, n);
    assert.equal(new Set(addrs).size, n);
    assert.deepEqual(b.stats(), { liveBuffers: n, liveBytes: sizes.reduce((s, x) => s + x, 0) });
    addrs.forEach((addr, i) => {
      const got = new Uint32Array(i + 1);
      b.download(new Uint8Array(got.buffer), addr);
      assert.deepEqual(Array.from(got), Array(i + 1).fill(patterns[i] >>> 0), `buffer ${i}`);
    });
    b.freeMany(addrs);
    assert.deepEqual(b.stats(), { liveBuffers: 0, liveBytes: 0 });
    b.freeMany([]);
    const one = b.alloc(4);
    assert.throws(() => b.freeMany([one, one + 1]), (e: Error) => e instanceof GdnError && e.message.startsWith('freeing 2 buffers: '));
    assert.equal(b.stats().liveBuffers, 1, 'nothing freed when one address is bad');
    b.freeMany([one]);
    assert.throws(() => b.allocFilled([2 ** 47], [0]), (e: Error) => e instanceof GdnError && e.message.startsWith('allocating 1 filled buffers: '));
  });

  it('allocFilled and freeMany pass sizes and addresses as 64-bit (lo, hi) pairs', () => {
    const seen: { sizes: number[]; patterns: number[]; freed: number[] } = { sizes: [], patterns: [], freed: [] };
    standIn(b, {
      buffersAllocFilled: (_h: unknown, n: number, sizes: Uint32Array, patterns: Uint32Array, addrs: Uint32Array) => {
        seen.sizes = Array.from(sizes.subarray(0, 2 * n));
        seen.patterns = Array.from(patterns.subarray(0, n));
        addrs.set([5, 1, 7, 0, 0xfffffff0, 3], 0);
        return 0;
      },
      buffersFree: (_h: unknown, n: number, w: Uint32Array) => {
        seen.freed = Array.from(w.subarray(0, 2 * n));
        return 0;
      },
    });
    const addrs = b.allocFilled([2 ** 32 + 8, 12, 3 * 2 ** 32], [0xdeadbeef, -2, 0]);
    assert.deepEqual(seen.sizes, [8, 1, 12, 0, 0, 3]);
    assert.deepEqual(seen.patterns, [0xdeadbeef, 0xfffffffe, 0]);
    assert.deepEqual(addrs, [2 ** 32 + 5, 7, 3 * 2 ** 32 + 0xfffffff0]);
    b.freeMany([2 ** 33 + 9, 16]);
    assert.deepEqual(seen.freed, [9, 2, 16, 0]);
  });

  it('upload, download, fillU32 (any 32-bit pattern), copy; failures name the operation', () => {
    const a = b.alloc(8);
    const c = b.alloc(8);
    b.upload(a, Uint8Array.from([1, 2, 3, 4, 5, 6, 7, 8]));
    b.copy(c, a, 8);
    const got = new Uint8Array(8);
    b.download(got, c);
    assert.deepEqual(Array.from(got), [1, 2, 3, 4, 5, 6, 7, 8]);
    b.fillU32(a, -1, 4);
    b.fillU32(a + 4, 0x11223344, 4);
    b.download(got, a);
    assert.deepEqual(Array.from(got), [255, 255, 255, 255, 0x44, 0x33, 0x22, 0x11]);
    assert.throws(() => b.upload(a, new Uint8Array(9)), (e: Error) => e instanceof GdnError && e.message.startsWith('upload: '));
    assert.throws(() => b.download(new Uint8Array(9), a), (e: Error) => e instanceof GdnError && e.message.startsWith('download: '));
    assert.throws(() => b.fillU32(a, 0, 12), (e: Error) => e instanceof GdnError && e.message.startsWith('fill: '));
    assert.throws(() => b.copy(c, a, 9), (e: Error) => e instanceof GdnError && e.message.startsWith('copy: '));
    b.free(a);
    b.free(c);
    standIn(b, { bufferStats: () => 1, lastError: () => 'bad' });
    throwsExactly(() => b.stats(), GdnError, 'buffer stats: bad');
  });

  it('host threads, the last kernel time, the buffer cache, trim, synchronize', () => {
    for (const bad of [-1, 1.5, NaN]) throwsExactly(() => b.setHostThreads(bad), RangeError, `threads: expected 0 (every CPU) or a positive integer, got ${bad}`);
    b.setHostThreads(0);
    const all = b.hostThreads();  // every logical CPU (more are not used)
    assert.ok(all >= 1);
    b.setHostThreads(1);
    assert.equal(b.hostThreads(), 1);
    b.setHostThreads(2);
    assert.equal(b.hostThreads(), Math.min(2, all));
    conv.forwardSync({ x: Tensor.zeros([2, 1]), weight: Tensor.zeros([1, 2]), queryStartLoc: [0, 2], convState: Tensor.zeros([1, 1, 1]) }, { backend: b }).release();
    const us = b.lastKernelUs();
    assert.equal(typeof us, 'number');
    assert.ok((us as number) >= 0);
    b.synchronize();
    const trimmed = b.trim();  // the segments the conv's buffers left in the cache
    assert.ok(Number.isSafeInteger(trimmed) && trimmed >= 0);
    assert.equal(b.trim(), 0);  // none left
    const s = b.cacheStats();
    assert.deepEqual(Object.keys(s), ['reservedBytes', 'allocatedBytes', 'cachedBytes', 'peakReservedBytes', 'segments', 'allocatedBlocks', 'freeBlocks', 'allocCalls', 'segmentMaps', 'segmentUnmaps']);
    assert.ok(Object.values(s).every((v) => typeof v === 'number'));
    // every field from its own word
    standIn(b, {
      bufferCacheStats: (_h: unknown, out: Record<string, unknown>[]) => {
        out[0] = { reserved_bytes: 1n, allocated_bytes: 2n, cached_bytes: 3n, peak_reserved_bytes: 4n, segments: 5n, allocated_blocks: 6n, free_blocks: 7n, alloc_calls: 8n, segment_maps: 9n, segment_unmaps: 10n };
        return 0;
      },
      lastKernelNs: (_h: unknown, out: number[]) => { out[0] = 2500; return 0; },
      bufferTrim: (_h: unknown, out: unknown[]) => { out[0] = 4096n; return 0; },
      hostThreads: (_h: unknown, out: unknown[]) => { out[0] = 6n; return 0; },
    });
    assert.deepEqual(Object.values(b.cacheStats()), [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    assert.equal(b.lastKernelUs(), 2.5);
    assert.equal(b.trim(), 4096);
    assert.equal(b.hostThreads(), 6);
    standIn(b, { hostSetThreads: () => 1, synchronize: () => 5, lastError: () => 'no' });
    throwsExactly(() => b.setHostThreads(2), GdnError, 'setting the host threads: no');
    throwsExactly(() => b.synchronize(), GdnError, 'synchronize: no');
    // lastKernelUs is the host's: null on cuda, without asking
    (b as unknown as { kind: string }).kind = 'cuda';
    standIn(b, { lastKernelNs: () => { throw new Error('not asked'); } });
    assert.equal(b.lastKernelUs(), null);
    (b as unknown as { kind: string }).kind = 'host';
  });

  it('callAsync: resolves on 0, rejects with the backend\'s message or the callback\'s error; close refused while in flight', async () => {
    const ok = fn(() => 0);
    await b.callAsync(ok, [], 'nothing');
    standIn(b, { backendLastError: (_h: unknown, buf: Uint8Array) => { buf.set(Buffer.from('async failure\0')); return 0; } });
    await assert.rejects(b.callAsync(fn(() => 1), [], 'op'), (e: Error) => e instanceof GdnError && e.message === 'op: async failure' && (e as GdnError).status === 1);
    const boom = new Error('koffi failed');
    await assert.rejects(b.callAsync(fn(() => 0, () => [boom, 0]), [], 'op'), (e: Error) => e === boom);
    // in flight: close refused; after it settles (either way), close works
    let release: (v: number) => void = () => undefined;
    const slow = fn(() => 0);
    slow.async = (...a: unknown[]) => {
      release = (v) => (a[a.length - 1] as (e: unknown, r: number) => void)(null, v);
    };
    const c = Backend.open('host');
    const p = c.callAsync(slow, [1, 2], 'slow');
    throwsExactly(() => c.close(), Error, 'backend: cannot close while a native call is in flight');
    release(0);
    await p;
    const p2 = c.callAsync(slow, [], 'slow');
    release(7);
    await assert.rejects(p2, GdnError);
    c.close();
    assert.equal(c.closed, true);
  });

  it('timeOps: checks the ops and rounds, encodes each op under its member, times rounds × ops samples', async () => {
    await assert.rejects(b.timeOps([], { rounds: 1, flushL2: false }), (e: Error) => e instanceof RangeError && e.message === 'ops: expected a non-empty array of prepared ops');
    await assert.rejects(b.timeOps('copy' as never, { rounds: 1, flushL2: false }), (e: Error) => e instanceof RangeError && e.message === 'ops: expected a non-empty array of prepared ops');
    const cp = copyOp(64, { backend: b });
    for (const rounds of [0, 1.5, -1]) {
      await assert.rejects(b.timeOps([cp], { rounds, flushL2: false }), (e: Error) => e instanceof RangeError && e.message === `rounds: expected a positive integer, got ${rounds}`);
    }
    await assert.rejects(b.timeOps([{ kind: 'bogus' as never, args: cp.args }], { rounds: 1, flushL2: false }), (e: Error) => e instanceof TypeError && e.message === 'ops: unknown op kind bogus');
    // real: a copy and a decode update (whose member is `update`), 2 rounds
    const upd = conv.prepareTimedUpdate({ x: Tensor.zeros([1, 1]), weight: Tensor.zeros([1, 2]), state: Tensor.zeros([1, 1, 1]), stateIndices: [0] }, { backend: b });
    const samples = await b.timeOps([cp, upd], { rounds: 2, flushL2: true, rotateOrder: true });
    assert.ok(samples instanceof Float32Array);
    assert.equal(samples.length, 4);
    assert.ok(Array.from(samples).every((v) => v >= 0));
    upd.release();
    // what reaches libgdn: the config words; the op array freed after, also after a failure
    const cfgs: unknown[] = [];
    const { freeNative } = native;
    let freed = 0;
    native.freeNative = (m) => {
      freed++;
      freeNative(m);
    };
    try {
      standIn(b, { timeOps: fn(() => 0, (...a: unknown[]) => { cfgs.push(a[3]); return [null, 0]; }) });
      await b.timeOps([cp], { rounds: 3, flushL2: true, rotateOrder: true, graphLaunches: 4 });
      await b.timeOps([cp], { rounds: 1, flushL2: false });
      assert.deepEqual(cfgs, [{ rounds: 3, flush_l2: 1, rotate_order: 1, graph_launches: 4 }, { rounds: 1, flush_l2: 0, rotate_order: 0, graph_launches: 0 }]);
      assert.equal(freed, 2);
      standIn(b, { timeOps: fn(() => 1), backendLastError: (_h: unknown, buf: Uint8Array) => { buf.set(Buffer.from('no timing\0')); return 0; } });
      await assert.rejects(b.timeOps([cp], { rounds: 1, flushL2: false }), (e: Error) => e.message === 'timing: no timing');
      assert.equal(freed, 3);
    } finally {
      native.freeNative = freeNative;
    }
    cp.release();
  });

  describe('the active backend', () => {
    let before: Backend;
    let env: string | undefined;
    const gdnLibReal = native.gdnLib;
    beforeEach(() => {
      before = activeBackend();
      env = process.env.GDN_BACKEND;
    });
    afterEach(() => {
      native.gdnLib = gdnLibReal;
      if (env === undefined) delete process.env.GDN_BACKEND;
      else process.env.GDN_BACKEND = env;
      useBackend(before);
    });
    /** Makes no backend active: one made active, then closed. */
    const none = () => {
      useBackend('host').close();
    };

    it('useBackend: a kind opens one, a Backend is used; choiceOf says how only for the active one', () => {
      const mine = useBackend(b);
      assert.equal(mine, b);
      assert.equal(activeBackend(), b);
      assert.equal(backendChoice(), 'host (chosen in code)');
      assert.equal(choiceOf(b), 'host (chosen in code)');
      assert.equal(choiceOf(before), undefined);
      const opened = useBackend('host');
      assert.ok(opened !== b && opened.kind === 'host' && !opened.closed);
      assert.equal(activeBackend(), opened);
      assert.equal(choiceOf(b), undefined);
      opened.close();
      assert.equal(choiceOf(opened), undefined, 'closed: not the active one any more');
      // closing a backend that is not active leaves the active one
      useBackend(b);
      const other = Backend.open('host');
      other.close();
      assert.equal(activeBackend(), b);
    });

    it('GDN_BACKEND: host, trimmed and in any case; empty is auto; anything else refused', () => {
      for (const v of ['host', ' HOST ', 'Host']) {
        none();
        process.env.GDN_BACKEND = v;
        const a = activeBackend();
        assert.equal(a.kind, 'host');
        assert.equal(activeBackend(), a, 'opened once, then kept');
        assert.equal(backendChoice(), 'host (GDN_BACKEND=host)');
        a.close();
      }
      none();
      process.env.GDN_BACKEND = 'tpu';
      throwsExactly(() => activeBackend(), Error, "GDN_BACKEND: expected auto, cuda or host, got 'tpu'");
      process.env.GDN_BACKEND = 'cuda';
      if (cudaDevices > 0) {
        const g = activeBackend();
        assert.equal(g.kind, 'cuda');
        g.close();
      } else {
        assert.throws(() => activeBackend(), (e: Error) => e instanceof GdnError && e.message.startsWith('opening the cuda backend: '));
      }
      for (const v of ['', '  ', undefined, 'AUTO']) {
        none();
        if (v === undefined) delete process.env.GDN_BACKEND;
        else process.env.GDN_BACKEND = v;
        const a = activeBackend();
        assert.equal(a.kind, cudaDevices > 0 ? 'cuda' : 'host');
        assert.equal(backendChoice(), cudaDevices > 0 ? `auto → cuda (${cudaDevices} CUDA device${cudaDevices > 1 ? 's' : ''} usable)`
          : `auto → host (${cudaBuilt ? 'no usable CUDA device' : 'libgdn was built without CUDA'})`);
        a.close();
      }
    });

    it('auto: CUDA when libgdn counts a usable device (one or several), else the host and why', () => {
      const real = gdnLibReal() as Record<string, Fn>;
      let count = 0;
      let status = 0;
      let build = 'host; cxx=GNU';
      const lib = {
        ...real,
        cudaDeviceCount: (out: number[]) => { out[0] = count; return status; },
        buildInfo: () => build,
        // a "cuda" backend opened on the host library (ordinal kept)
        backendOpen: (_kind: number, ordinal: number, out: unknown[]) => real.backendOpen(0, ordinal, out),
      };
      native.gdnLib = () => lib;
      process.env.GDN_BACKEND = 'auto';
      for (const [n, want] of [[1, 'auto → cuda (1 CUDA device usable)'], [2, 'auto → cuda (2 CUDA devices usable)']] as const) {
        none();
        count = n;
        assert.equal(cudaDeviceCount(), n);
        const a = activeBackend();
        assert.equal(a.kind, 'cuda');
        assert.equal(backendChoice(), want);
        a.close();
      }
      none();
      count = 0;
      build = 'cuda 12.4; cxx=GNU';
      activeBackend();
      assert.equal(backendChoice(), 'auto → host (no usable CUDA device)');
      activeBackend().close();
      // a failed count is no device
      none();
      count = 3;
      status = 4;
      assert.equal(cudaDeviceCount(), 0);
      assert.equal(activeBackend().kind, 'host');
      activeBackend().close();
    });
  });

  it('buildInfo: the library path, its build line and the ABI', () => {
    const info = buildInfo();
    assert.equal(info.path, gdnLib().path);
    assert.equal(info.abi, ABI_VERSION);
    assert.match(info.build, new RegExp(`^host(\\+cuda)?; .*abi=${ABI_VERSION}$`));
    if (!cudaBuilt) assert.equal(cudaDeviceCount(), 0, 'a host-only build counts no device');
  });
});
