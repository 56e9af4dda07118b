// No growth of backend or host memory over many op calls and allocate/free cycles (issue 10, item 5):
// after a warm-up, 10,000 op calls and 10,000 allocate/free cycles leave the live buffers as they
// were, take no new cache segment, and grow the process RSS by less than a stated bound.
//
// The RSS bound (RSS_BOUND_BYTES) is 48 MiB: the JS heap of 10,000 calls' garbage may sit uncollected
// (a few MiB), while a leak of the smallest buffer these ops allocate (the 2 KiB conv output) per call
// would be 20 MiB on its own, and of the allocate/free cycles' buffers gigabytes. Live buffers and the
// cache's segment count catch a backend-side leak of any size exactly; RSS catches host-side ones
// (koffi memory, native scratch vectors).

import { strict as assert } from 'assert';
import { Backend } from '../../lib/backend';
import { Tensor } from '../../lib/tensor';
import * as conv from '../../lib/ops/conv';
import * as postconv from '../../lib/ops/postconv';
import { matmulNT } from '../../lib/ops/matmul';
import { forEachBackend } from '../backends';
import { Rng } from '../../lib/random';

const RSS_BOUND_BYTES = 48 << 20;

forEachBackend((backendOf) => {
  describe('memory growth', function () {
    this.timeout(300000);
    let b: Backend;
    before(() => {
      b = backendOf();
    });

    function rss(): number {
      (globalThis as { gc?: () => void }).gc?.();
      return process.memoryUsage().rss;
    }

    it('10,000 op calls (conv forward and update, post-conv, matmul) leave no buffer, segment or RSS behind', async () => {
      const T = 8;
      const C = 128;
      const inputs = {
        x: Tensor.random([T, C], 'bf16', { seed: 1 }).to(b),
        weight: Tensor.random([C, 4], 'bf16', { seed: 2 }).to(b),
        queryStartLoc: Tensor.from([0, 3, T], [3], 'i32').to(b),
        hasInitialState: [1, 0],
        convState: Tensor.random([2, C, 3], 'f32', { seed: 3 }).to(b),
      };
      const upd = {
        x: Tensor.random([4, C], 'bf16', { seed: 4 }).to(b),
        weight: inputs.weight,
        state: Tensor.random([6, C, 3], 'f32', { seed: 5 }).to(b),
        stateIndices: [5, -1, 0, 2],
      };
      const pc = { Hk: 1, Hv: 2, Dk: 16, Dv: 16 };
      const pcC = 2 * pc.Hk * pc.Dk + pc.Hv * pc.Dv;
      const pin = {
        convOut: Tensor.random([T, pcC], 'bf16', { seed: 6 }).to(b),
        a: Tensor.random([T, pc.Hv], 'bf16', { seed: 7 }).to(b),
        b: Tensor.random([T, pc.Hv], 'bf16', { seed: 8 }).to(b),
        ALog: Tensor.random([pc.Hv], 'f32', { seed: 9 }).to(b),
        dtBias: Tensor.random([pc.Hv], 'f32', { seed: 10 }).to(b),
      };
      const ma = Tensor.random([4, 32], 'bf16', { seed: 11 }).to(b);
      const mb = Tensor.random([16, 32], 'bf16', { seed: 12 }).to(b);

      // The same call mix before and during the measured window.
      const reference = conv.forwardSync(inputs, { arm: 'vec', outDtype: 'bf16', backend: b });
      const refBits = Array.from(reference.out.bits());
      reference.release();
      const round = async (i: number): Promise<void> => {
        switch (i % 5) {
          case 0:
          case 1: {
            const r = conv.forwardSync(inputs, { arm: i % 2 ? 'vec' : 'reg', outDtype: 'bf16', backend: b });
            if (i % 1000 === 0) assert.deepEqual(Array.from(r.out.bits()), refBits, `call ${i}: conv output bits`);
            r.release();
            break;
          }
          case 2: {
            const r = await conv.update(upd, { arm: 'reg', backend: b });
            r.release();
            break;
          }
          case 3: {
            const r = await postconv.forward(pin, { ...pc, arm: 'tree', qkvDtype: 'bf16', backend: b });
            r.release();
            break;
          }
          default:
            matmulNT(ma, mb, { backend: b }).release();
        }
      };
      for (let i = 0; i < 1000; i++) await round(i);
      const live0 = b.stats();
      const cache0 = b.cacheStats();
      const rss0 = rss();
      for (let i = 0; i < 10000; i++) await round(i);
      const live1 = b.stats();
      const cache1 = b.cacheStats();
      const rss1 = rss();
      assert.deepEqual(live1, live0, 'live buffers and bytes unchanged');
      assert.equal(cache1.segmentMaps, cache0.segmentMaps, 'no new cache segment: every buffer came from the cache');
      assert.equal(cache1.reservedBytes, cache0.reservedBytes, 'reserved bytes unchanged');
      assert.ok(cache1.allocCalls - cache0.allocCalls >= 10000, `the calls allocated (${cache1.allocCalls - cache0.allocCalls} blocks)`);
      assert.ok(rss1 - rss0 < RSS_BOUND_BYTES, `RSS grew by ${((rss1 - rss0) / 2 ** 20).toFixed(1)} MiB (bound ${RSS_BOUND_BYTES / 2 ** 20} MiB)`);
      for (const t of [inputs.x, inputs.weight, inputs.queryStartLoc, inputs.convState, upd.x, upd.state, ...Object.values(pin), ma, mb]) t.release();
    });

    it('10,000 allocate/free cycles of mixed sizes leave no buffer behind and reach a steady reservation', () => {
      const rng = new Rng(99);
      const sizes = [64, 700, 4096, 60000, 1 << 20, (1 << 20) + 512, 4 << 20, 9 << 20, 17 << 20];
      const held: number[] = [];
      const cycle = () => {
        // Up to 6 buffers live at once, freed in random order: the cache must merge and reuse.
        const n = sizes[Math.floor(rng.uniform() * sizes.length)];
        held.push(b.alloc(n));
        if (held.length > 6 || rng.uniform() < 0.5) {
          const k = Math.floor(rng.uniform() * held.length);
          b.free(held.splice(k, 1)[0]);
        }
      };
      const base = b.stats();
      // What earlier tests in this process left reserved (free segments of their own): the mix below may
      // reuse it, so the bound counts from it rather than from zero.
      const before = b.cacheStats().reservedBytes;
      for (let i = 0; i < 2000; i++) cycle();
      const warm = b.cacheStats();
      const rss0 = rss();
      for (let i = 0; i < 10000; i++) cycle();
      for (const a of held.splice(0)) b.free(a);
      const end = b.cacheStats();
      const rss1 = rss();
      assert.deepEqual(b.stats(), base, 'every buffer freed');
      // At most 6 live buffers of at most 17 MiB: the reservation stays within what that mix can need
      // (each pool's worst case, rounded to segments) on top of what was reserved before it, and does not
      // grow after the warm-up.
      const mixBound = 6 * (20 << 20) + (2 << 20) * 6;
      assert.ok(end.reservedBytes <= Math.max(warm.peakReservedBytes, before + mixBound), `reserved ${end.reservedBytes} bytes (${before} before the mix, bound ${before + mixBound})`);
      assert.ok(end.peakReservedBytes <= warm.peakReservedBytes * 1.5 + (20 << 20), `peak reservation ${end.peakReservedBytes} after warm-up peak ${warm.peakReservedBytes}`);
      assert.ok(rss1 - rss0 < RSS_BOUND_BYTES, `RSS grew by ${((rss1 - rss0) / 2 ** 20).toFixed(1)} MiB (bound ${RSS_BOUND_BYTES / 2 ** 20} MiB)`);
      const returned = b.trim();
      assert.ok(returned > 0);
      assert.equal(b.cacheStats().allocatedBlocks, end.allocatedBlocks);
    });
  });
});
