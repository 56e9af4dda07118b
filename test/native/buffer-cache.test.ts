// The caching allocator behind gdn_buffer_alloc/free (cuda/src/common/buffer_cache.h): reuse without
// new segments, splitting and merging, trim, the live-buffer registry still exact, freed addresses
// refused, and a released tensor never validating through an address a new buffer reuses.

import { strict as assert } from 'assert';
import { Backend, GdnError } from '../../lib/backend';
import { Tensor, releaseTensors } from '../../lib/tensor';
import * as conv from '../../lib/ops/conv';
import { forEachBackend } from '../backends';

forEachBackend((backendOf) => {
  describe('buffer cache', () => {
    let b: Backend;
    before(() => {
      b = backendOf();
    });

    it('hands a freed block out again without taking a new segment', () => {
      const first = b.alloc(4 << 20);
      b.free(first);
      const before = b.cacheStats();
      for (let i = 0; i < 100; i++) {
        const a = b.alloc(4 << 20);
        assert.equal(a, first, 'the same block comes back');
        b.free(a);
      }
      const after = b.cacheStats();
      assert.equal(after.segmentMaps, before.segmentMaps, 'no segment was taken in 100 cycles');
      assert.equal(after.allocCalls - before.allocCalls, 100);
    });

    it('keeps gdn_buffer_stats exact: cached blocks are not live', () => {
      const base = b.stats();
      const addrs = [100, 5000, 3 << 20, 12 << 20].map((n) => b.alloc(n));
      const mid = b.stats();
      assert.equal(mid.liveBuffers - base.liveBuffers, 4);
      assert.equal(mid.liveBytes - base.liveBytes, 100 + 5000 + (3 << 20) + (12 << 20), 'live bytes are the requested sizes');
      for (const a of addrs) b.free(a);
      assert.deepEqual(b.stats(), base);
    });

    it('every block is 256-byte aligned and distinct blocks do not overlap', () => {
      const sizes = [1, 255, 256, 257, 511, 512, 513, 4096, 65537, 1 << 20, (1 << 20) + 1, 3 << 20, 11 << 20];
      const got = sizes.map((n) => ({ n, a: b.alloc(n) }));
      try {
        for (const { a } of got) assert.equal(a % 256, 0, `0x${a.toString(16)} is 256-byte aligned`);
        const sorted = [...got].sort((x, y) => x.a - y.a);
        for (let i = 1; i < sorted.length; i++) assert.ok(sorted[i - 1].a + sorted[i - 1].n <= sorted[i].a, 'no overlap');
        // Every byte of every block is usable: write a distinct pattern into each, read all back.
        for (const [i, { a, n }] of got.entries()) b.fillU32(a, 0x01010101 * (i + 1), Math.floor(n / 4) * 4);
        for (const [i, { a, n }] of got.entries()) {
          const words = Math.floor(n / 4);
          if (words === 0) continue;
          const back = new Uint8Array(words * 4);
          b.download(back, a);
          assert.ok(new Uint32Array(back.buffer).every((w) => w === (0x01010101 * (i + 1)) >>> 0), `block ${i} kept its pattern`);
        }
      } finally {
        for (const { a } of got) b.free(a);
      }
    });

    it('merges freed neighbours back, so a segment can be given back whole', () => {
      b.trim();
      const base = b.cacheStats(); // partly used segments (other tests' live buffers) keep their free blocks
      // ~9 MiB of small blocks: more than the free space any partly used 2 MiB segment can offer.
      const small = Array.from({ length: 600 }, (_, i) => b.alloc(4096 * (1 + (i % 7))));
      assert.ok(b.cacheStats().segments > base.segments, 'new segments were taken');
      // Free in an interleaved order: evens first, then odds (every free of an odd one merges both sides).
      for (let i = 0; i < small.length; i += 2) b.free(small[i]);
      for (let i = 1; i < small.length; i += 2) b.free(small[i]);
      const s = b.cacheStats();
      assert.equal(s.freeBlocks, s.segments - base.segments + base.freeBlocks, 'one free block per new segment');
      assert.ok(b.trim() > 0, 'the segment went back');
      assert.equal(b.cacheStats().reservedBytes, base.reservedBytes);
    });

    it('trim returns unused segments and keeps live ones', () => {
      const keep = b.alloc(2 << 20);
      const drop = b.alloc(24 << 20);
      b.free(drop);
      const before = b.cacheStats();
      const released = b.trim();
      const after = b.cacheStats();
      assert.ok(released >= 24 << 20, `trim returned ${released} bytes`);
      assert.equal(before.reservedBytes - after.reservedBytes, released);
      assert.equal(after.segmentUnmaps - before.segmentUnmaps >= 1, true);
      // The live block still works.
      b.fillU32(keep, 0xabcdef01, 2 << 20);
      const back = new Uint8Array(8);
      b.download(back, keep + (1 << 20));
      assert.deepEqual(Array.from(new Uint32Array(back.buffer)), [0xabcdef01, 0xabcdef01]);
      b.free(keep);
      b.trim();
    });

    it('a freed address is no longer a valid argument, and freeing it twice is an error', () => {
      const a = b.alloc(4096);
      const other = b.alloc(4096);
      b.free(a);
      assert.throws(() => b.copy(other, a, 64), (e: unknown) => e instanceof GdnError && /src: 0x[0-9a-f]+ is not inside a live buffer/.test(e.message));
      assert.throws(() => b.free(a), (e: unknown) => e instanceof GdnError && /buffer: 0x[0-9a-f]+ is not the start of a live buffer/.test(e.message));
      b.free(other);
    });

    // An op's fresh outputs come from one gdn_buffers_alloc_filled call and go back through one
    // gdn_buffers_free (docs/SPEC.md §2, "Fresh outputs"); 11 buffers take two fill launches on CUDA.
    it('allocates and fills several buffers in one call, and frees them in one', () => {
      const base = b.stats();
      const sizes = [4, 12, 260, 4096, 3 << 20, 8, 64, 1 << 20, 16, 20, 65540];
      const patterns = sizes.map((_, i) => (0x7fc0dead + i * 0x01010101) >>> 0);
      const addrs = b.allocFilled(sizes, patterns);
      try {
        assert.equal(new Set(addrs).size, sizes.length, 'distinct buffers');
        assert.equal(b.stats().liveBuffers - base.liveBuffers, sizes.length);
        assert.equal(b.stats().liveBytes - base.liveBytes, sizes.reduce((x, y) => x + y, 0));
        for (const [i, a] of addrs.entries()) {
          const back = new Uint8Array(sizes[i]);
          b.download(back, a);
          const words = new Uint32Array(back.buffer);
          const wrong = words.findIndex((w) => w !== patterns[i]);
          assert.equal(wrong, -1, `buffer ${i} (${sizes[i]} bytes) holds its pattern everywhere (word ${wrong} differs)`);
        }
      } finally {
        b.freeMany(addrs);
      }
      assert.deepEqual(b.stats(), base, 'all freed');
    });

    it('refuses a bad size before allocating anything (TypeScript and libgdn)', () => {
      const base = b.stats();
      assert.throws(() => b.allocFilled([16, 6], [1, 2]), /bytes\[1\]: expected a positive multiple of 4, got 6/);
      assert.throws(() => b.allocFilled([16], [1, 2]), /patterns: expected 1 patterns/);
      // libgdn's own check, past the TypeScript one: sizes as (lo, hi) pairs, the second 0.
      const sizes = new Uint32Array([16, 0, 0, 0]);
      const out = new Uint32Array(4);
      const st = b.lib.buffersAllocFilled(b.native, 2, sizes, new Uint32Array([1, 2]), out) as number;
      assert.notEqual(st, 0, 'libgdn refuses a zero size');
      assert.throws(() => b.check(st, 'alloc'), /bytes\[1\]: expected a positive multiple of 4 \(at most 2\^48\), got 0/);
      assert.deepEqual(Array.from(out), [0, 0, 0, 0], 'no address handed out');
      assert.deepEqual(b.stats(), base, 'nothing stayed allocated');
      // A bad size in the middle: every out entry is 0, not only those before it.
      const out3 = new Uint32Array([7, 7, 7, 7, 7, 7]);
      const st3 = b.lib.buffersAllocFilled(b.native, 3, new Uint32Array([16, 0, 6, 0, 8, 0]), new Uint32Array([1, 2, 3]), out3) as number;
      assert.notEqual(st3, 0);
      assert.throws(() => b.check(st3, 'alloc'), /bytes\[1\]: expected a positive multiple of 4/);
      assert.deepEqual(Array.from(out3), [0, 0, 0, 0, 0, 0], 'out is all 0 on a refusal');
      assert.deepEqual(b.stats(), base);
    });

    it('gives back the buffers it took when a later allocation fails', () => {
      const base = b.stats();
      const cache = b.cacheStats();
      // 2^47 bytes (128 TiB) cannot be had on either backend; the first two buffers were already taken.
      assert.throws(() => b.allocFilled([4096, 1 << 20, 2 ** 47], [1, 2, 3]), (e: unknown) => e instanceof GdnError && /bytes\[2\] = 140737488355328 \(buffer 3 of 3\): out of (host|device) memory/.test(e.message));
      assert.deepEqual(b.stats(), base, 'no buffer stayed live');
      assert.equal(b.cacheStats().allocatedBlocks, cache.allocatedBlocks, 'no block stayed taken from the cache');
      const again = b.allocFilled([4096], [5]);  // the backend still works
      b.freeMany(again);
      assert.deepEqual(b.stats(), base);
    });

    it('frees none of a batch whose addresses are not all live and distinct', () => {
      const base = b.stats();
      const x = b.alloc(64);
      const y = b.alloc(128);
      assert.throws(() => b.freeMany([x, y, x]), (e: unknown) => e instanceof GdnError && /buffers\[2\]: 0x[0-9a-f]+ is also buffers\[0\]; none of the 3 was freed/.test(e.message));
      assert.throws(() => b.freeMany([x, y + 4]), (e: unknown) => e instanceof GdnError && /buffers\[1\]: 0x[0-9a-f]+ is not the start of a live buffer.*none of the 2 was freed/.test(e.message));
      assert.equal(b.stats().liveBuffers - base.liveBuffers, 2, 'both still live');
      b.freeMany([y, x]);
      assert.deepEqual(b.stats(), base);
    });

    it('Tensor.emptyFilled poisons each tensor, and releaseTensors frees them (views once) in one call', () => {
      const base = b.stats();
      const [u, v] = Tensor.emptyFilled([[[3, 5], 'bf16'], [[2, 2], 'f32']], [0x7fc17fc1, 0x7fc0dead], b);
      assert.deepEqual(Array.from(v.bits()), [0x7fc0dead, 0x7fc0dead, 0x7fc0dead, 0x7fc0dead]);
      assert.ok(Array.from(u.bits()).every((w) => w === 0x7fc1), 'bf16 poison in every element');
      const view = u.sliceCols(1, 2);
      releaseTensors([u, view, v, u]);
      assert.ok(u.released && view.released && v.released);
      assert.deepEqual(b.stats(), base);
      releaseTensors([u, v]);  // released twice: nothing happens
      assert.deepEqual(b.stats(), base);
    });

    it('a released tensor is refused even when a new buffer reuses its address', () => {
      const T = 8;
      const C = 64;
      const mk = () => ({
        x: Tensor.random([T, C], 'f32', { seed: 5 }).to(b),
        weight: Tensor.random([C, 4], 'f32', { seed: 6 }).to(b),
        queryStartLoc: [0, T],
        convState: Tensor.zeros([1, C, 3], 'f32'),
      });
      const stale = mk();
      const addr = stale.x.addr;
      stale.x.release();
      const fresh = Tensor.random([T, C], 'f32', { seed: 7 }).to(b);
      assert.equal(fresh.addr, addr, 'the cache handed the same block to the new tensor');
      assert.throws(() => conv.forwardSync(stale, { backend: b }), /x: tensor \[8, 64\] f32 was released/);
      // The new owner's data is what it wrote.
      assert.deepEqual(Array.from(fresh.bits()), Array.from(Tensor.random([T, C], 'f32', { seed: 7 }).bits()));
      const r = conv.forwardSync({ ...stale, x: fresh }, { backend: b });
      r.release();
      fresh.release();
      stale.weight.release();
    });
  });
});
