// lib/bench/overhead.ts without a kernel, so that every figure of the report can be pinned to the last digit.
// performance.now is replaced by a scripted clock in ticks of 1/64 ms (15.625 µs: differences of ticks, times
// 1000, are exact in binary, so means and medians come out exact too); markCalls by a recorder that hands the
// bench's marks array to stand-in op calls, which write the phase marks as lib/ops/common.ts does; the backend
// by a stand-in whose lastKernelUs, gdn_abi_version (koffi's fixed cost) and timeOps answer from a script and
// count their calls. Asserted exactly: sample counts, medians, `over` (CUDA: wall median − kernel median; host:
// the median over calls of wall − that call's kernel), the breakdown (breakdownOf, also on hand-made samples at
// the [p10, p90] bounds), which calls give no breakdown, koffiFixed, the error for a host call without a kernel,
// allocationCases, overheadMarkdown's text and reportHeader. overheadCases and benchOverhead run with the
// tensors and ops replaced by recorders: the shapes, inputs and options of every call, the bit-for-bit
// validation counts taken before any timing, and the releases (also when timing fails).

import { strict as assert } from 'assert';
import { performance } from 'perf_hooks';
import { Tensor } from '../../lib/tensor';
import { CALL_MARK, CALL_MARK_SLOTS } from '../../lib/ops/common';
import { Stubs, Undo } from '../stand-ins';
import type { Backend } from '../../lib/backend';
import {
  allocationCases, benchOverhead, BREAKDOWN_PARTS, breakdownOf, MarkedSamples, OVERHEAD_SHAPES, OVERHEAD_TARGET_US, overheadCases,
  OverheadCase, overheadMarkdown, OverheadReport, OverheadRow, OverheadShape, reportHeader, timeOverheadCases,
} from '../../lib/bench/overhead';

const commonM = require('../../lib/ops/common') as Record<string, unknown>;
const convM = require('../../lib/ops/conv') as Record<string, unknown>;
const postM = require('../../lib/ops/postconv') as Record<string, unknown>;
const fusedM = require('../../lib/ops/fused') as Record<string, unknown>;
const matmulM = require('../../lib/ops/matmul') as Record<string, unknown>;
const provM = require('../../lib/provenance') as Record<string, unknown>;
const osM = require('os') as Record<string, unknown>;

/** One tick of the scripted clock, in µs. */
const U = 15.625;

/** The scripted clock, the marks the bench turned on, and what the stand-in backend was asked. */
const world = {
  ticks: 0,
  marking: null as Float64Array | null,
  markLog: [] as string[],
  abi: 0,
  timeOps: [] as { ops: unknown[]; cfg: unknown }[],
};
const tick = (n: number) => void (world.ticks += n);
const now = () => world.ticks / 64;

interface Phases { callSite: number; prepare: number; encode: number; native: number; finish: number; release: number }
const PHASES: Phases = { callSite: 1, prepare: 2, encode: 3, native: 6, finish: 5, release: 6 };

/** One op call as opCall's forwardSync makes it: the clock advanced by each phase (ticks), the marks written while marking is on. */
function opCall(p: Phases, o: { skip?: keyof typeof CALL_MARK } = {}): void {
  const m = world.marking;
  const mark = (slot: keyof typeof CALL_MARK) => {
    if (m && o.skip !== slot) m[CALL_MARK[slot]] = now();
  };
  tick(p.callSite);
  mark('entered');
  if (m) m[CALL_MARK.entries]++;
  tick(p.prepare);
  mark('prepared');
  tick(p.encode);
  mark('encoded');
  tick(p.native);
  mark('returned');
  tick(p.finish);
  mark('finished');
  tick(p.release);
}

/**
 * The backend stand-in: host, lastKernelUs from `kernelUs` (CUDA: asking for it fails, as the bench must not);
 * each gdn_abi_version call advances the clock by `abiTicks` (or its value at the call's index); timeOps records its arguments and answers `samples`.
 */
function standIn(kind: 'host' | 'cuda', o: { kernelUs?: () => number | null; abiTicks?: number | ((call: number) => number); samples?: (call: number, rounds: number) => number } = {}): Backend {
  const b = {
    kind,
    lastKernelUs: () => {
      if (kind === 'cuda') throw new Error('lastKernelUs asked on CUDA');
      return o.kernelUs ? o.kernelUs() : null;
    },
    lib: {
      abiVersion: () => {
        tick(typeof o.abiTicks === 'function' ? o.abiTicks(world.abi) : (o.abiTicks ?? 1));
        world.abi++;
        return 7;
      },
    },
    timeOps: async (ops: unknown[], cfg: { rounds: number }) => {
      world.timeOps.push({ ops, cfg });
      const call = world.timeOps.length - 1;
      return Float32Array.from({ length: cfg.rounds }, () => (o.samples ? o.samples(call, cfg.rounds) : U));
    },
  };
  return b as unknown as Backend;
}

const KERNEL = { label: 'planned op', release: () => undefined } as unknown as OverheadCase['kernel'];

describe('bench overhead at its edges', () => {
  const stubs = new Stubs();
  const undo = new Undo();
  beforeEach(() => {
    world.ticks = 0;
    world.marking = null;
    world.markLog = [];
    world.abi = 0;
    world.timeOps = [];
    undo.stub(performance, 'now', now);
    stubs.set(commonM, 'markCalls', (m: Float64Array | null) => {
      world.markLog.push(m ? `on ${m.length}` : 'off');
      world.marking = m;
    });
  });
  afterEach(() => {
    stubs.restore();
    undo.restore();
  });

  describe('timeOverheadCases', () => {
    it('host: wall and kernel per call, over = median of (wall − that call\'s kernel), the breakdown from the marked calls', async () => {
      // Plain calls (the warm-up too) cycle through wall W and kernel K (ticks); the medians differ from the
      // median difference: median W − median K = 9 ticks, the median of W − K is 10.
      const W = [10, 11, 12, 13, 14];
      const K = [5, 1, 4, 2, 3];
      // Marked calls: kernel 2 ticks inside a native phase of 6; the call site cycles through 10 values, the lowest
      // and highest beyond [p10, p90] of the time beyond the kernel (those calls dropped), and the release phase
      // alternates 6 and 8 over the calls kept (mean 7), so that a part taken from another call than its own shows.
      const CS = [0, 1, 1, 1, 1, 1, 1, 1, 1, 40];
      const REL = [6, 6, 8, 6, 8, 6, 8, 6, 8, 6];
      let plain = 0;
      let marked = 0;
      let kernelNow = 0;
      const c: OverheadCase = {
        op: 'op A',
        variant: 'sync',
        kernel: KERNEL,
        note: 'a note',
        call: () => {
          if (world.marking) {
            kernelNow = 2 * U;
            const i = marked++ % 10;
            opCall({ ...PHASES, callSite: CS[i], release: REL[i] });
          } else {
            const j = plain++;
            kernelNow = K[j % 5] * U;
            tick(W[j % 5]);
          }
        },
      };
      const lines: string[] = [];
      // koffi's samples (200 calls each) alternate 1 and 2 ticks a call: median 1.5 ticks.
      const backend = standIn('host', { kernelUs: () => kernelNow, abiTicks: (call) => (Math.floor(call / 200) % 2 ? 2 : 1) });
      const rows = await timeOverheadCases([c], { backend, calls: 3, log: (l) => lines.push(l) });
      assert.deepEqual(lines, ['overhead: op A (sync)']);
      assert.deepEqual(rows, [{
        op: 'op A', variant: 'sync', kernelUs: 3 * U, wallUs: 12 * U, wallP10Us: 10 * U, wallP90Us: 14 * U, n: 50,
        overheadUs: 10 * U, method: 'per-call', meetsTarget: false, note: 'a note',
        breakdown: {
          calls: 50, kept: 40, totalUs: 22 * U,
          parts: [
            { part: 'callSite', us: U, how: 'measured' },
            { part: 'prepare', us: 2 * U, how: 'measured' },
            { part: 'encode', us: 3 * U, how: 'measured' },
            { part: 'koffiFixed', us: 1.5 * U, how: 'measured' },
            { part: 'nativeRest', us: 2.5 * U, how: 'by subtraction' },
            { part: 'finish', us: 5 * U, how: 'measured' },
            { part: 'release', us: 7 * U, how: 'measured' },
          ],
        },
      }]);
      // 20 warm-up calls and 10 batches of 5, each batch followed by 5 marked calls and 5 koffi samples of 200 calls.
      assert.deepEqual([plain, marked, world.abi, world.timeOps.length], [70, 50, 10 * 5 * 200, 0]);
      assert.deepEqual(world.markLog, Array.from({ length: 50 }, () => [`on ${CALL_MARK_SLOTS}`, 'off']).flat());
      assert.equal(world.marking, null, 'marking is off after the run');
    });

    it('CUDA: kernel samples from timeOps batches after one warm-up round, over = wall median − kernel median', async () => {
      const W = [1, 1, 2, 2, 3];
      const REL = [1, 6, 6, 6, 6, 6, 6, 6, 6, 50];
      let plain = 0;
      let marked = 0;
      const c: OverheadCase = {
        op: 'op B',
        variant: 'cuda',
        kernel: KERNEL,
        call: () => {
          if (world.marking) opCall({ ...PHASES, release: REL[marked++ % 10] });
          else tick(W[plain++ % 5]);
        },
      };
      // The warm-up round's samples (1000 ticks) are dropped; then 1 and 1.5 ticks alternate by batch: median 1.25.
      const backend = standIn('cuda', { abiTicks: 2, samples: (call) => (call === 0 ? 1000 * U : call % 2 ? U : 1.5 * U) });
      const [row] = await timeOverheadCases([c], { backend, calls: 300 });
      const kernelUs = 1.25 * U;
      assert.deepEqual(row, {
        op: 'op B', variant: 'cuda', kernelUs, wallUs: 2 * U, wallP10Us: U, wallP90Us: 3 * U, n: 300,
        overheadUs: 2 * U - kernelUs, method: 'medians', meetsTarget: true, note: undefined,
        breakdown: {
          calls: 300, kept: 240, totalUs: 15.75 * U + 6 * U,
          parts: [
            { part: 'callSite', us: U, how: 'measured' },
            { part: 'prepare', us: 2 * U, how: 'measured' },
            { part: 'encode', us: 3 * U, how: 'measured' },
            { part: 'koffiFixed', us: 2 * U, how: 'measured' },
            { part: 'nativeRest', us: 6 * U - kernelUs - 2 * U, how: 'by subtraction' },
            { part: 'finish', us: 5 * U, how: 'measured' },
            { part: 'release', us: 6 * U, how: 'measured' },
          ],
        },
      });
      assert.ok(row.overheadUs! <= OVERHEAD_TARGET_US && row.overheadUs === 11.71875);
      // per = 300 / 10 = 30: a warm-up round of max(5, floor(30 / 4)) = 7, then 10 batches of 30, never flushing L2.
      assert.deepEqual(world.timeOps, [
        { ops: [KERNEL], cfg: { rounds: 7, flushL2: false } },
        ...Array.from({ length: 10 }, () => ({ ops: [KERNEL], cfg: { rounds: 30, flushL2: false } })),
      ]);
      assert.deepEqual([plain, marked, world.abi], [30 + 300, 300, 10 * 5 * 200]);
    });

    it('gives a breakdown only for a case whose marked calls each left one op\'s full marks; the others stop marking at once', async () => {
      const count = { one: 0, async: 0, two: 0, missing: 0, third: 0, none: 0 };
      const cases: OverheadCase[] = [
        // The marks written after an await: the bench waits for the promise before it reads the clock and the marks.
        { op: 'async', variant: 'one op after a tick', kernel: KERNEL, call: async () => {
          await null;
          if (world.marking) count.async++;
          opCall(PHASES);
        } },
        { op: 'two', variant: 'two ops', kernel: KERNEL, call: () => {
          if (world.marking) count.two++;
          opCall(PHASES);
          opCall(PHASES);
        } },
        { op: 'missing', variant: 'no finished mark', kernel: KERNEL, call: () => {
          if (world.marking) count.missing++;
          opCall(PHASES, { skip: 'finished' });
        } },
        { op: 'third', variant: 'two ops on the third marked call', kernel: KERNEL, call: () => {
          if (world.marking && ++count.third === 3) opCall(PHASES);
          opCall(PHASES);
        } },
        { op: 'none', variant: 'no kernel', kernel: null, call: () => {
          if (world.marking) count.none++;
          opCall(PHASES);
        } },
        { op: 'one', variant: 'one op', kernel: KERNEL, call: () => {
          if (world.marking) count.one++;
          opCall(PHASES);
        } },
      ];
      const abiAt: number[] = [];
      const rows = await timeOverheadCases(cases, { backend: standIn('cuda'), calls: 3, log: () => abiAt.push(world.abi) });
      abiAt.push(world.abi);
      const total = PHASES.callSite + PHASES.prepare + PHASES.encode + PHASES.native + PHASES.finish + PHASES.release;
      assert.deepEqual(rows.map((r) => [r.op, r.wallUs, r.kernelUs, r.overheadUs, r.breakdown?.totalUs ?? null]), [
        ['async', total * U, U, (total - 1) * U, (total - 1) * U],
        ['two', 2 * total * U, U, (2 * total - 1) * U, null],
        ['missing', total * U, U, (total - 1) * U, null],
        ['third', total * U, U, (total - 1) * U, null],
        ['none', total * U, null, null, null],
        ['one', total * U, U, (total - 1) * U, (total - 1) * U],
      ]);
      assert.deepEqual(rows.map((r) => 'breakdown' in r), [true, false, false, false, false, true]);
      // Marked calls per case: all 50, or up to the first that left no single op's marks; koffi's samples (5 × 200
      // calls) follow each batch of marked calls, none once marking stopped, none without a kernel.
      assert.deepEqual(count, { async: 50, two: 1, missing: 1, third: 3, none: 0, one: 50 });
      assert.deepEqual(abiAt.slice(1).map((a, i) => a - abiAt[i]), [10000, 1000, 1000, 1000, 0, 10000]);
      // timeOps for the five cases with a kernel (a warm-up round and 10 batches each), none for the case without.
      assert.equal(world.timeOps.length, 5 * 11);
      assert.ok(world.timeOps.every((t) => t.ops.length === 1 && t.ops[0] === KERNEL));
    });

    it('host: a call whose kernel time is not positive cannot be timed call by call; the error names the case and the time', async () => {
      for (const [k, shown] of [[null, 'NaN'], [0, '0'], [-2, '-2']] as const) {
        let calls = 0;
        const c: OverheadCase = { op: 'conv x', variant: 'v1', kernel: KERNEL, call: () => void calls++ };
        await assert.rejects(timeOverheadCases([c], { backend: standIn('host', { kernelUs: () => k }), calls: 3 }), (e: Error) => {
          assert.ok(e instanceof Error);
          assert.equal(e.message, `bench overhead: conv x (v1) ran no host kernel in its call (gdn_last_kernel_ns = ${shown}); it cannot be timed call by call`);
          return true;
        });
        assert.equal(calls, 21, 'after the 20 warm-up calls, the first timed one');
      }
    });

    it('meetsTarget: over ≤ 15 µs, exactly 15 included', async () => {
      let kernelNow = 0;
      const at = (kernelUs: number): OverheadCase => ({ op: 'op', variant: `kernel ${kernelUs}`, kernel: KERNEL, call: () => {
        kernelNow = kernelUs;
        tick(2);
      } });
      const rows = await timeOverheadCases([at(16.25), at(15.75)], { backend: standIn('host', { kernelUs: () => kernelNow }), calls: 3 });
      assert.deepEqual(rows.map((r) => [r.wallUs, r.kernelUs, r.overheadUs, r.method, r.meetsTarget]), [
        [31.25, 16.25, 15, 'per-call', true],
        [31.25, 15.75, 15.5, 'per-call', false],
      ]);
      assert.equal(OVERHEAD_TARGET_US, 15);
    });

    it('a case without a kernel: wall time only, no kernel, over, method or breakdown; nothing marked or timed natively', async () => {
      for (const kind of ['host', 'cuda'] as const) {
        world.abi = 0;
        world.timeOps = [];
        world.markLog = [];
        let calls = 0;
        const c: OverheadCase = { op: 'alloc', variant: kind, kernel: null, note: 'n', call: () => {
          calls++;
          tick(3);
        } };
        const [row] = await timeOverheadCases([c], { backend: standIn(kind), calls: 3 });
        assert.deepEqual(row, {
          op: 'alloc', variant: kind, kernelUs: null, wallUs: 3 * U, wallP10Us: 3 * U, wallP90Us: 3 * U, n: 50,
          overheadUs: null, meetsTarget: null, note: 'n',
        });
        assert.deepEqual([calls, world.abi, world.timeOps.length, world.markLog.length], [70, 0, 0, 0], kind);
      }
    });

    it('calls per case: calls (10 batches of max(5, ⌈calls / 10⌉)), else 300 with quick, else 2000; warm-up max(20, a batch)', async () => {
      let calls = 0;
      const one = (): OverheadCase[] => [{ op: 'o', variant: 'v', kernel: null, call: () => void calls++ }];
      const backend = standIn('host');
      const got: [number, number][] = [];
      for (const opts of [{}, { quick: true }, { calls: 3 }, { calls: 61 }, { calls: 61, quick: true }, { calls: 250 }]) {
        calls = 0;
        const [row] = await timeOverheadCases(one(), { backend, ...opts });
        got.push([row.n, calls]);
      }
      assert.deepEqual(got, [[2000, 2200], [300, 330], [50, 70], [70, 90], [70, 90], [250, 275]]);
    });
  });

  describe('breakdownOf', () => {
    // Eleven calls whose time beyond the kernel is 20..30 µs (in shuffled order): p10 = 21 and p90 = 29 exactly,
    // so the calls at both bounds are kept (9 of 11). Each call's own kernel is used where it has one, the
    // case's kernel median (7 µs) where it has none.
    const order = [3, 0, 7, 10, 5, 1, 9, 2, 8, 4, 6];
    const kernel = order.map((_, i) => (i % 3 === 0 ? null : 10 + i));
    const samples = (): MarkedSamples => ({
      callSite: [...order],
      prepare: order.map(() => 2),
      encode: order.map(() => 3),
      native: kernel.map((k) => (k ?? 7) + 4),
      finish: order.map(() => 5),
      release: order.map(() => 6),
      kernel: [...kernel],
      ok: true,
    });

    it('keeps the calls within [p10, p90] (bounds included) and averages every part over them; koffiFixed is the median sample', () => {
      assert.deepEqual(breakdownOf(samples(), 7, [0.5, 1.5, 1]), {
        calls: 11, kept: 9, totalUs: 25,
        parts: [
          { part: 'callSite', us: 5, how: 'measured' },
          { part: 'prepare', us: 2, how: 'measured' },
          { part: 'encode', us: 3, how: 'measured' },
          { part: 'koffiFixed', us: 1, how: 'measured' },
          { part: 'nativeRest', us: 3, how: 'by subtraction' },
          { part: 'finish', us: 5, how: 'measured' },
          { part: 'release', us: 6, how: 'measured' },
        ],
      });
      assert.deepEqual(breakdownOf(samples(), 7, [0.25, 3, 0.75, 1])!.parts.slice(3, 5), [
        { part: 'koffiFixed', us: 0.875, how: 'measured' },
        { part: 'nativeRest', us: 3.125, how: 'by subtraction' },
      ]);
    });

    it('the spikes drop from every part alike, and the parts add up to the total', () => {
      const m = samples();
      m.release[order.indexOf(10)] += 100; // the slowest call gets slower still: still dropped
      m.finish[order.indexOf(0)] -= 1; // the fastest gets faster: still dropped
      m.prepare[order.indexOf(5)] += 0.5; // a kept one moves within the bounds
      const b = breakdownOf(m, 7, [1])!;
      assert.equal(b.kept, 9);
      assert.deepEqual(b.parts.map((p) => p.us), [5, 2 + 0.5 / 9, 3, 1, 3, 5, 6]);
      assert.equal(b.totalUs, 25 + 0.5 / 9);
    });

    it('no breakdown when the marks failed, no call was marked or koffi was not sampled', () => {
      assert.equal(breakdownOf({ ...samples(), ok: false }, 7, [1]), undefined);
      const empty: MarkedSamples = { callSite: [], prepare: [], encode: [], native: [], finish: [], release: [], kernel: [], ok: true };
      assert.equal(breakdownOf(empty, 7, [1]), undefined);
      assert.equal(breakdownOf(samples(), 7, []), undefined);
    });
  });

  describe('allocationCases', () => {
    function recorder(kind: 'host' | 'cuda') {
      const log: unknown[][] = [];
      let n = 0;
      const backend = {
        kind,
        alloc: (bytes: number) => (log.push(['alloc', bytes]), `buf${++n}`),
        free: (buf: string) => void log.push(['free', buf]),
        trim: () => void log.push(['trim']),
      } as unknown as Backend;
      stubs.set(Tensor, 'empty', (shape: number[], dtype: string, opts: { backend?: unknown }) => {
        log.push(['Tensor.empty', shape, dtype, opts.backend === backend]);
        return { release: () => void log.push(['release']) };
      });
      return { backend, log };
    }

    it('three alloc/free pairs of 4 MiB by default: Backend (cached), Tensor (cached), uncached with a trim; the note names the backend\'s call', async () => {
      for (const kind of ['host', 'cuda'] as const) {
        const { backend, log } = recorder(kind);
        const cases = allocationCases(backend);
        assert.deepEqual(cases.map((c) => [c.op, c.variant, c.kernel, c.note]), [
          ['alloc + free 4 MiB', 'Backend.alloc/free (cached)', null, undefined],
          ['alloc + free 4 MiB', 'Tensor.empty + release (cached)', null, undefined],
          ['alloc + free 4 MiB', 'uncached (trim after each free)', null, kind === 'cuda' ? 'cudaMalloc + cudaFree of a segment' : 'mmap + munmap of a segment'],
        ]);
        assert.deepEqual(cases.map((c) => 'note' in c), [false, false, true]);
        for (const c of cases) {
          const r = c.call();
          assert.equal(r, undefined, `${c.variant}: a synchronous call`);
        }
        assert.deepEqual(log, [
          ['alloc', 4 << 20], ['free', 'buf1'],
          ['Tensor.empty', [1 << 20], 'f32', true], ['release'],
          ['alloc', 4 << 20], ['free', 'buf2'], ['trim'],
        ]);
      }
    });

    it('bytes: the size of every pair, in MiB in the op name', () => {
      const { backend, log } = recorder('host');
      const cases = allocationCases(backend, 3 << 19);
      assert.deepEqual(cases.map((c) => c.op), Array(3).fill('alloc + free 1.5 MiB'));
      for (const c of cases) c.call();
      assert.deepEqual(log, [
        ['alloc', 3 << 19], ['free', 'buf1'],
        ['Tensor.empty', [(3 << 19) / 4], 'f32', true], ['release'],
        ['alloc', 3 << 19], ['free', 'buf2'], ['trim'],
      ]);
    });
  });

  describe('overheadMarkdown and reportHeader', () => {
    const parts = (us: number[], skip?: string) =>
      BREAKDOWN_PARTS.map((part, i) => ({ part, us: us[i], how: part === 'nativeRest' ? ('by subtraction' as const) : ('measured' as const) })).filter((p) => p.part !== skip);
    const rows: OverheadRow[] = [
      {
        op: 'conv', variant: 'fresh', kernelUs: 3.04, wallUs: 12.26, wallP10Us: 10.01, wallP90Us: 20.55, n: 300, overheadUs: 9.25,
        method: 'per-call', meetsTarget: true, note: 'first',
        breakdown: { calls: 300, kept: 240, totalUs: 9.96, parts: parts([1.111, 2.2, 3.3, 0.044, 1.5, 0.666, 0.25], 'encode') },
      },
      { op: 'conv', variant: 'async', kernelUs: 3, wallUs: 40, wallP10Us: 38, wallP90Us: 45.5, n: 300, overheadUs: 37, method: 'per-call', meetsTarget: false },
      {
        op: 'update', variant: 'reused', kernelUs: 1, wallUs: 5, wallP10Us: 4, wallP90Us: 6, n: 300, overheadUs: 4, method: 'per-call', meetsTarget: true,
        breakdown: { calls: 300, kept: 241, totalUs: 4.04, parts: parts([0.5, 1, 0.5, 0.02, 0.98, 0.5, 0.5]) },
      },
      { op: 'alloc + free 4 MiB', variant: 'uncached', kernelUs: null, wallUs: 7.75, wallP10Us: 7, wallP90Us: 9, n: 300, overheadUs: null, meetsTarget: null, note: 'mmap' },
    ];
    const report = (backend: 'host' | 'cuda', rs: OverheadRow[]): OverheadReport => ({
      bench: 'overhead', backend, device: 'Dev 1', cpu: 'CPU 2', revision: 'abc123', node: 'v20.0.0', targetUs: 15, time: '2026-01-02T03:04:05.000Z',
      validated: [{ op: 'conv vec', mismatches: 0, elements: 100 }, { op: 'fused', mismatches: 3, elements: 64 }],
      rows: rs,
      cache: { reservedBytes: 8 << 20, allocatedBytes: 0, cachedBytes: 3 << 19, peakReservedBytes: 0, segments: 2, allocatedBlocks: 0, freeBlocks: 0, allocCalls: 1234, segmentMaps: 5, segmentUnmaps: 0 },
    });

    it('host: the per-call method, the table, the breakdown table (headed by the first row\'s parts) and the buffer cache', () => {
      assert.equal(overheadMarkdown(report('host', rows), 'gdnlab bench overhead --quick'), [
        '### Per-op overhead — `gdnlab bench overhead --quick`',
        '',
        '- backend: host; device: Dev 1; CPU: CPU 2',
        '- revision abc123; node v20.0.0; 2026-01-02T03:04:05.000Z',
        "- kernel = the kernel's own time inside each call (gdn_last_kernel_ns); wall = performance.now() around the TypeScript call (median [p10, p90] of n calls); over = median over the calls of (wall − that call's kernel); target ≤ 15 µs",
        '- validated before timing: conv vec 0/100 mismatching; fused 3/64 mismatching',
        '',
        '| op | variant | kernel µs | wall µs | p10 | p90 | n | over µs | ≤ target | note |',
        '|---|---|---:|---:|---:|---:|---:|---:|---|---|',
        '| conv | fresh | 3.0 | 12.3 | 10.0 | 20.6 | 300 | 9.3 | yes | first |',
        '| conv | async | 3.0 | 40.0 | 38.0 | 45.5 | 300 | 37.0 | NO |  |',
        '| update | reused | 1.0 | 5.0 | 4.0 | 6.0 | 300 | 4.0 | yes |  |',
        '| alloc + free 4 MiB | uncached | — | 7.8 | 7.0 | 9.0 | 300 | — |  | mmap |',
        '',
        "Where the time beyond the kernel goes: the same calls with phase marks on (markCalls), in batches alternating with the calls above; each part is a mean over the marked calls within [p10, p90] of their time beyond the kernel, and the parts add up to **marked µs** (that mean; read it beside over µs, the median of unmarked calls). koffiFixed = one gdn_abi_version call through koffi (no arguments), timed in the same batches; nativeRest = the native call − its kernel − koffiFixed: libgdn's planning and validation and koffi's marshalling of the arguments, by subtraction.",
        '',
        '| op | variant | over µs | marked µs | callSite µs | prepare µs | encode µs | koffiFixed µs | nativeRest (by subtraction) µs | finish µs | release µs | kept/calls |',
        '|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
        '| conv | fresh | 9.3 | 10.0 | 1.11 | 2.20 | — | 0.04 | 1.50 | 0.67 | 0.25 | 240/300 |',
        '| update | reused | 4.0 | 4.0 | 0.50 | 1.00 | 0.50 | 0.02 | 0.98 | 0.50 | 0.50 | 241/300 |',
        '',
        'Buffer cache after the run: 8.0 MiB reserved in 2 segments, 1.5 MiB cached, 1234 allocations of which 5 took a new segment.',
      ].join('\n'));
    });

    it('CUDA: over = wall − kernel; without a breakdown, no breakdown table', () => {
      assert.equal(overheadMarkdown(report('cuda', [rows[1], rows[3]]), 'c'), [
        '### Per-op overhead — `c`',
        '',
        '- backend: cuda; device: Dev 1; CPU: CPU 2',
        '- revision abc123; node v20.0.0; 2026-01-02T03:04:05.000Z',
        '- kernel = native time of the same planned op (gdn_time_ops, hot); wall = performance.now() around the TypeScript call (median [p10, p90] of n calls); over = wall − kernel; target ≤ 15 µs',
        '- validated before timing: conv vec 0/100 mismatching; fused 3/64 mismatching',
        '',
        '| op | variant | kernel µs | wall µs | p10 | p90 | n | over µs | ≤ target | note |',
        '|---|---|---:|---:|---:|---:|---:|---:|---|---|',
        '| conv | async | 3.0 | 40.0 | 38.0 | 45.5 | 300 | 37.0 | NO |  |',
        '| alloc + free 4 MiB | uncached | — | 7.8 | 7.0 | 9.0 | 300 | — |  | mmap |',
        '',
        'Buffer cache after the run: 8.0 MiB reserved in 2 segments, 1.5 MiB cached, 1234 allocations of which 5 took a new segment.',
      ].join('\n'));
    });

    it('reportHeader: the backend\'s kind and device, the first CPU\'s model (else "unknown"), the revision, node, the time and the target', () => {
      stubs.set(provM, 'revision', () => 'REV1');
      for (const [cpus, cpu] of [[[{ model: 'Model X' }, { model: 'Model Y' }], 'Model X'], [[], 'unknown']] as const) {
        stubs.set(osM, 'cpus', () => cpus);
        for (const kind of ['host', 'cuda'] as const) {
          const before = Date.now();
          const h = reportHeader({ kind, info: () => ({ name: `${kind} device` }) } as unknown as Backend);
          const after = Date.now();
          const t = Date.parse(h.time);
          assert.ok(t >= before && t <= after && h.time === new Date(t).toISOString(), h.time);
          assert.deepEqual({ ...h, time: '' }, { backend: kind, device: `${kind} device`, cpu, revision: 'REV1', node: process.version, time: '', targetUs: 15 });
        }
      }
    });
  });

  describe('the cases: shapes, inputs, options, validation before timing, releases', () => {
    it('OVERHEAD_SHAPES: model sizes (C = 8192, Qwen3.5-4B heads) and a small one; BREAKDOWN_PARTS in call order', () => {
      assert.deepEqual(OVERHEAD_SHAPES, [
        { id: 'model', T: 8, C: 8192, B: 8, slots: 16, Hk: 16, Hv: 32, M: 8, N: 256, Kd: 256 },
        { id: 'small', T: 8, C: 256, B: 2, slots: 4, Hk: 1, Hv: 1, M: 2, N: 16, Kd: 32 },
      ]);
      assert.deepEqual(BREAKDOWN_PARTS, ['callSite', 'prepare', 'encode', 'koffiFixed', 'nativeRest', 'finish', 'release']);
    });

    interface Rec { fn: string; inputs: unknown; opts: unknown; made: { released: number } }
    interface FakeTensor { desc: string; released: number; release(): void; to(b: unknown): FakeTensor; sliceCols(s: number, c: number): { desc: string } }

    /** Tensors and ops replaced by recorders; a result's words differ from the reference's in `diff` of its outputs. */
    function fakeOps(backend: unknown) {
      const devs: FakeTensor[] = [];
      const recs: Rec[] = [];
      const tensor = (desc: string): FakeTensor => {
        const t: FakeTensor = {
          desc,
          released: 0,
          release: () => void t.released++,
          to: (b) => {
            assert.equal(b, backend, `${desc} to the bench's backend`);
            const d = tensor(`${desc}@dev`);
            devs.push(d);
            return d;
          },
          sliceCols: (s, c) => ({ desc: `${desc}[:, ${s}:+${c}]` }),
        };
        return t;
      };
      stubs.set(Tensor, 'random', (shape: number[], dtype: string, opts: unknown) => tensor(`random([${shape}], ${dtype}, ${JSON.stringify(opts)})`));
      stubs.set(Tensor, 'from', (values: number[], shape: number[], dtype: string) => tensor(`from([${values}], [${shape}], ${dtype})`));
      stubs.set(Tensor, 'empty', (shape: number[], dtype: string, opts: { backend?: unknown }) => tensor(`empty([${shape}], ${dtype}${opts.backend === backend ? ', backend' : ''})`));
      const show = (v: unknown): unknown => {
        if (v === backend) return 'backend';
        if (Array.isArray(v)) return v.map(show);
        if (v && typeof v === 'object') return 'desc' in v ? (v as { desc: string }).desc : Object.fromEntries(Object.entries(v).map(([k, x]) => [k, show(x)]));
        return v;
      };
      const NUMEL: Record<string, number> = { q: 1, k: 2, v: 4, g: 8, beta: 16, convState: 32 };
      const result = (names: readonly string[], diff: Partial<Record<string, number>>) => {
        const r: Record<string, unknown> & { released: number } = { released: 0 };
        for (const n of names) r[n] = { numel: NUMEL[n] ?? 0, bits: () => Array.from({ length: 8 }, (_, k) => (k < (diff[n] ?? 0) ? -1 : k)) };
        r.release = () => void r.released++;
        return r;
      };
      const op = (fn: string, names: readonly string[], diffOf: (inputs: Record<string, unknown>, o: Record<string, unknown>) => Partial<Record<string, number>>) =>
        (inputs: Record<string, unknown>, o: Record<string, unknown>) => {
          const made = result(names, diffOf(inputs, o));
          recs.push({ fn, inputs: show(inputs), opts: show(o), made });
          return made;
        };
      const prepare = (fn: string) => (inputs: unknown, o: unknown, ...rest: unknown[]) => {
        const made = { desc: `${fn} kernel`, released: 0, release: () => void made.released++ };
        recs.push({ fn, inputs: show(inputs), opts: show(o), made });
        assert.deepEqual(rest, [], `${fn}: no label`);
        return made;
      };
      const async = <A extends unknown[], R>(f: (...a: A) => R) => async (...a: A) => {
        await null;
        return f(...a);
      };
      const QKVGB = ['q', 'k', 'v', 'g', 'beta'];
      stubs.set(convM, 'forwardSync', op('conv.forwardSync', ['out', 'convState'], (_, o) => (o.arm === 'vec' ? { out: 1, convState: 2 } : {})));
      stubs.set(convM, 'forward', async(op('conv.forward', ['out', 'convState'], () => ({}))));
      stubs.set(convM, 'prepareTimed', prepare('conv.prepareTimed'));
      stubs.set(convM, 'update', async(op('conv.update', ['out', 'state'], (_, o) => (o.arm === 'reg' ? { out: 3, state: 4 } : {}))));
      stubs.set(convM, 'updateSync', op('conv.updateSync', ['out', 'state'], (i) => (Array.isArray(i.stateIndices) ? { out: 5, state: 6 } : {})));
      stubs.set(convM, 'prepareTimedUpdate', prepare('conv.prepareTimedUpdate'));
      stubs.set(postM, 'forward', async(op('postconv.forward', QKVGB, (_, o) => (o.arm === 'token-tile' ? { q: 1, beta: 2 } : {}))));
      stubs.set(postM, 'forwardSync', op('postconv.forwardSync', QKVGB, () => ({})));
      stubs.set(postM, 'prepareTimed', prepare('postconv.prepareTimed'));
      stubs.set(fusedM, 'forwardSync', op('fused.forwardSync', [...QKVGB, 'convState'], (_, o) => (o.arm === 'stream' ? { k: 3, convState: 4 } : {})));
      stubs.set(fusedM, 'prepareTimed', prepare('fused.prepareTimed'));
      stubs.set(matmulM, 'matmulNT', (a: unknown, b: unknown, o: unknown) => op('matmulNT', ['out'], () => ({}))({ a, b } as Record<string, unknown>, o as Record<string, unknown>));
      return { devs, recs };
    }

    const S: OverheadShape = { id: 'test', T: 4, C: 1000, B: 3, slots: 10, Hk: 2, Hv: 3, M: 6, N: 9, Kd: 10 };
    // The stand-in tensors of shape S, by what made them ('@dev': moved to the bench's backend).
    const X = 'random([4,1000], bf16, {"seed":1})@dev';
    const WEIGHT = 'random([1000,4], bf16, {"seed":2,"scale":0.5})@dev';
    const QSL = 'from([0,4], [2], i32)@dev';
    const STATE = 'random([1,1000,3], f32, {"seed":3})@dev';
    const convIn = { x: X, weight: WEIGHT, queryStartLoc: QSL, convState: STATE };
    const convOpts = { arm: 'vec', mapping: 'exact', outDtype: 'bf16', backend: 'backend' };
    const convOut = { out: 'empty([4,1000], bf16, backend)@dev', convState: 'empty([1,1000,3], f32, backend)@dev' };
    const updIn = { x: 'random([3,1000], bf16, {"seed":4})@dev', weight: WEIGHT, state: 'random([10,1000,3], f32, {"seed":5})@dev', stateIndices: 'from([3,8,3], [3], i32)@dev' };
    const updOpts = { arm: 'reg', outDtype: 'bf16', backend: 'backend' };
    const updOut = { out: 'empty([3,1000], bf16, backend)@dev' };
    const PACKED = 'random([4,6], bf16, {"seed":6})@dev';
    const gates = { b: `${PACKED}[:, 0:+3]`, a: `${PACKED}[:, 3:+3]`, ALog: 'random([3], f32, {"seed":8})@dev', dtBias: 'random([3], f32, {"seed":9})@dev' };
    const pcIn = { convOut: 'random([4,896], bf16, {"seed":7})@dev', ...gates };
    const dims = { Hk: 2, Hv: 3, Dk: 128, Dv: 128 };
    const pcOpts = { ...dims, arm: 'token-tile', qkvDtype: 'bf16', backend: 'backend' };
    const qkvgb = {
      q: 'empty([4,2,128], bf16, backend)@dev', k: 'empty([4,2,128], bf16, backend)@dev', v: 'empty([4,3,128], bf16, backend)@dev',
      g: 'empty([4,3], f32, backend)@dev', beta: 'empty([4,3], f32, backend)@dev',
    };
    const fuIn = { x: 'random([4,896], bf16, {"seed":12})@dev', weight: 'random([896,4], bf16, {"seed":13,"scale":0.5})@dev', queryStartLoc: QSL, convState: 'random([1,896,3], f32, {"seed":14})@dev', ...gates };
    const fuOpts = { ...dims, arm: 'stream', convDtype: 'bf16', qkvDtype: 'bf16', backend: 'backend' };
    const mm = { a: 'random([6,10], bf16, {"seed":10})@dev', b: 'random([9,10], bf16, {"seed":11})@dev' };
    const DEVS = 31;

    it('overheadCases: validates every op against its reference arm before timing, and names the counts and elements', async () => {
      const backend = { kind: 'host' } as unknown as Backend;
      const { devs, recs } = fakeOps(backend);
      const set = await overheadCases(backend, S);
      assert.deepEqual(set.validated, [
        { op: 'conv vec T=4 C=1000', mismatches: 1 + 2, elements: 4 * 1000 + 1000 * 3 },
        { op: 'conv update reg B=3 C=1000', mismatches: 3 + 4, elements: 3 * 1000 + 10 * 1000 * 3 },
        { op: 'conv update reg B=3 C=1000, slots as host numbers', mismatches: 5 + 6, elements: 3 * 1000 + 10 * 1000 * 3 },
        { op: 'post-conv token-tile T=4', mismatches: 1 + 2, elements: 1 + 2 + 4 + 8 + 16 },
        { op: 'fused stream T=4', mismatches: 3 + 4, elements: 1 + 2 + 4 + 8 + 16 + 32 },
      ]);
      // What ran while the cases were built: each validation pair (reference arm first) and each planned op.
      assert.deepEqual(recs.map((r) => [r.fn, r.inputs, r.opts, r.made.released]), [
        ['conv.forwardSync', convIn, { ...convOpts, arm: 'scalar', mapping: 'sequence' }, 1],
        ['conv.forwardSync', convIn, convOpts, 1],
        ['conv.prepareTimed', convIn, convOpts, 0],
        ['conv.update', updIn, { arm: 'reference', outDtype: 'bf16', backend: 'backend' }, 1],
        ['conv.update', updIn, updOpts, 1],
        ['conv.updateSync', { ...updIn, stateIndices: [3, 8, 3] }, updOpts, 1],
        ['conv.prepareTimedUpdate', updIn, { ...updOpts, inPlace: true }, 0],
        ['postconv.forward', pcIn, { ...pcOpts, arm: 'tree' }, 1],
        ['postconv.forward', pcIn, pcOpts, 1],
        ['postconv.prepareTimed', pcIn, pcOpts, 0],
        ['fused.forwardSync', fuIn, { ...fuOpts, arm: 'head-tile' }, 1],
        ['fused.forwardSync', fuIn, fuOpts, 1],
        ['fused.prepareTimed', fuIn, fuOpts, 0],
      ]);
      assert.equal(devs.length, DEVS);
      assert.ok(devs.every((d) => d.released === 0), 'the inputs and out buffers stay until the set is released');
      set.release();
      assert.ok(devs.every((d) => d.released === 1), 'each tensor the set moved to the backend released once');
      assert.deepEqual(recs.filter((r) => r.fn.includes('prepare')).map((r) => r.made.released), [1, 1, 1, 1]);
    });

    it('overheadCases: each case\'s op, variant, planned twin and note, and the call it makes (its result released)', async () => {
      const backend = { kind: 'host' } as unknown as Backend;
      const { recs } = fakeOps(backend);
      const set = await overheadCases(backend, S);
      const built = recs.length;
      const conv = 'conv.forward vec/exact T=4 C=1000 bf16';
      const upd = 'conv.update reg B=3 C=1000 bf16, 10-slot pool';
      const pc = 'postconv.forward token-tile T=4 Hk=2 Hv=3 bf16';
      const fu = 'fused.forward stream T=4 Hk=2 Hv=3 bf16';
      const mmOp = 'matmulNT [6, 10] · [9, 10]ᵀ bf16';
      const noTime = 'no native time (gdn_time_ops has no matmul op)';
      const fromHost = 'libgdn plans from the host copy: no read-back of query_start_loc';
      assert.deepEqual(set.cases.map((c) => [c.op, c.variant, c.kernel ? (c.kernel as unknown as { desc: string }).desc : null, c.note ?? null]), [
        [conv, 'forwardSync, fresh outputs', 'conv.prepareTimed kernel', null],
        [conv, 'forwardSync, out buffers reused', 'conv.prepareTimed kernel', null],
        [conv, 'forwardSync, offsets as host numbers, out reused', 'conv.prepareTimed kernel', fromHost],
        [conv, 'forwardSync inPlace, offsets as host numbers, out reused', 'conv.prepareTimed kernel', 'state updated in place: no copy of convState; the device work is the timed kernel alone'],
        [conv, 'await forward, out buffers reused', 'conv.prepareTimed kernel', 'koffi async: a worker-thread round trip'],
        [upd, 'updateSync, fresh outputs (pool copied)', 'conv.prepareTimedUpdate kernel', 'copies the 0.11 MiB pool (the op does not modify its input)'],
        [upd, 'updateSync inPlace, out buffer reused', 'conv.prepareTimedUpdate kernel', 'slots as a device tensor: libgdn reads them back to check them'],
        [upd, 'updateSync inPlace, slots as host numbers, out reused', 'conv.prepareTimedUpdate kernel', 'libgdn checks the host copy and passes it in the kernel parameters: no upload, no read-back'],
        [pc, 'forwardSync, fresh outputs', 'postconv.prepareTimed kernel', null],
        [pc, 'forwardSync, out buffers reused', 'postconv.prepareTimed kernel', null],
        [fu, 'forwardSync, fresh outputs, state in place', 'fused.prepareTimed kernel', null],
        [fu, 'forwardSync, out buffers reused, state in place', 'fused.prepareTimed kernel', null],
        [fu, 'forwardSync, offsets as host numbers, out reused, state in place', 'fused.prepareTimed kernel', fromHost],
        [mmOp, 'sync, fresh output', null, noTime],
        [mmOp, 'sync, out buffer reused', null, noTime],
      ]);
      for (const c of set.cases) {
        const r = c.call();
        assert.equal(r instanceof Promise, c.variant.startsWith('await'), c.variant);
        await r;
      }
      const inPlace = { inPlace: true };
      assert.deepEqual(recs.slice(built).map((r) => [r.fn, r.inputs, r.opts, r.made.released]), [
        ['conv.forwardSync', convIn, convOpts, 1],
        ['conv.forwardSync', convIn, { ...convOpts, out: convOut }, 1],
        ['conv.forwardSync', { ...convIn, queryStartLoc: [0, 4] }, { ...convOpts, out: convOut }, 1],
        ['conv.forwardSync', { ...convIn, queryStartLoc: [0, 4], convState: STATE }, { ...convOpts, ...inPlace, out: { out: convOut.out } }, 1],
        ['conv.forward', convIn, { ...convOpts, out: convOut }, 1],
        ['conv.updateSync', updIn, updOpts, 1],
        ['conv.updateSync', updIn, { ...updOpts, ...inPlace, out: updOut }, 1],
        ['conv.updateSync', { ...updIn, stateIndices: [3, 8, 3] }, { ...updOpts, ...inPlace, out: updOut }, 1],
        ['postconv.forwardSync', pcIn, pcOpts, 1],
        ['postconv.forwardSync', pcIn, { ...pcOpts, out: qkvgb }, 1],
        ['fused.forwardSync', fuIn, { ...fuOpts, ...inPlace }, 1],
        ['fused.forwardSync', fuIn, { ...fuOpts, ...inPlace, out: qkvgb }, 1],
        ['fused.forwardSync', { ...fuIn, queryStartLoc: [0, 4] }, { ...fuOpts, ...inPlace, out: qkvgb }, 1],
        ['matmulNT', mm, { backend: 'backend' }, 1],
        ['matmulNT', mm, { backend: 'backend', out: { out: 'empty([6,9], f32, backend)@dev' } }, 0],
      ]);
      set.release();
    });

    it('overheadCases at OVERHEAD_SHAPES: the pool each update case copies, in MiB', async () => {
      const backend = { kind: 'host' } as unknown as Backend;
      fakeOps(backend);
      const notes: string[] = [];
      for (const shape of OVERHEAD_SHAPES) {
        const set = await overheadCases(backend, shape);
        notes.push(set.cases.find((c) => c.variant === 'updateSync, fresh outputs (pool copied)')!.note!);
        set.release();
      }
      assert.deepEqual(notes, ['copies the 1.50 MiB pool (the op does not modify its input)', 'copies the 0.01 MiB pool (the op does not modify its input)']);
    });

    /** A host stand-in for benchOverhead: every call runs a 1 µs kernel (or `kernelUs`), the cache stats an object of its own. */
    function benchBackend(kernelUs = 1) {
      const cache = { reservedBytes: 1, cachedBytes: 2, segments: 3, allocCalls: 4, segmentMaps: 5 };
      const b = Object.assign(standIn('host', { kernelUs: () => kernelUs }), {
        info: () => ({ name: 'Stand-in CPU' }),
        cacheStats: () => cache,
        alloc: () => 1,
        free: () => undefined,
        trim: () => undefined,
      });
      return { backend: b as Backend, cache };
    }

    it('benchOverhead: every shape\'s cases validated and timed, then the allocation cases; the header, the cache, each set released', async () => {
      const { backend, cache } = benchBackend();
      const { devs, recs } = fakeOps(backend);
      stubs.set(provM, 'revision', () => 'REV2');
      stubs.set(osM, 'cpus', () => [{ model: 'Model Z' }]);
      const lines: string[] = [];
      const before = Date.now();
      const r = await benchOverhead({ backend, calls: 1, log: (l) => lines.push(l) });
      assert.deepEqual({ ...r, time: '', validated: [], rows: [] }, {
        bench: 'overhead', backend: 'host', device: 'Stand-in CPU', cpu: 'Model Z', revision: 'REV2', node: process.version, targetUs: 15,
        time: '', validated: [], rows: [], cache,
      });
      assert.ok(Date.parse(r.time) >= before);
      assert.deepEqual(r.validated.map((v) => v.op), [
        'conv vec T=8 C=8192', 'conv update reg B=8 C=8192', 'conv update reg B=8 C=8192, slots as host numbers', 'post-conv token-tile T=8', 'fused stream T=8',
        'conv vec T=8 C=256', 'conv update reg B=2 C=256', 'conv update reg B=2 C=256, slots as host numbers', 'post-conv token-tile T=8', 'fused stream T=8',
      ]);
      assert.deepEqual(r.validated.map((v) => v.mismatches), [3, 7, 11, 3, 7, 3, 7, 11, 3, 7]);
      assert.equal(r.rows.length, 15 + 15 + 3);
      assert.deepEqual(lines, r.rows.map((x) => `overhead: ${x.op} (${x.variant})`));
      assert.deepEqual([...new Set(r.rows.map((x) => x.op))], [
        'conv.forward vec/exact T=8 C=8192 bf16', 'conv.update reg B=8 C=8192 bf16, 16-slot pool', 'postconv.forward token-tile T=8 Hk=16 Hv=32 bf16',
        'fused.forward stream T=8 Hk=16 Hv=32 bf16', 'matmulNT [8, 256] · [256, 256]ᵀ bf16',
        'conv.forward vec/exact T=8 C=256 bf16', 'conv.update reg B=2 C=256 bf16, 4-slot pool', 'postconv.forward token-tile T=8 Hk=1 Hv=1 bf16',
        'fused.forward stream T=8 Hk=1 Hv=1 bf16', 'matmulNT [2, 32] · [16, 32]ᵀ bf16',
        'alloc + free 4 MiB',
      ]);
      assert.deepEqual(r.rows.map((x) => x.n), Array(33).fill(50));
      assert.ok(r.rows.every((x) => (x.kernelUs === null) === (x.op.startsWith('matmulNT') || x.op.startsWith('alloc'))));
      assert.equal(devs.length, 2 * DEVS);
      assert.ok(devs.every((d) => d.released === 1), 'both shapes\' tensors released once');
      assert.deepEqual(recs.filter((x) => x.fn.includes('prepare')).map((x) => x.made.released), Array(8).fill(1));
    });

    it('benchOverhead: a case that cannot be timed fails the run, and the shape\'s tensors and planned ops are released all the same', async () => {
      const { backend } = benchBackend(0);
      const { devs, recs } = fakeOps(backend);
      await assert.rejects(benchOverhead({ backend, calls: 1 }), (e: Error) => {
        assert.equal(e.message, 'bench overhead: conv.forward vec/exact T=8 C=8192 bf16 (forwardSync, fresh outputs) ran no host kernel in its call (gdn_last_kernel_ns = 0); it cannot be timed call by call');
        return true;
      });
      assert.equal(devs.length, DEVS, 'the second shape never built');
      assert.ok(devs.every((d) => d.released === 1));
      assert.deepEqual(recs.filter((x) => x.fn.includes('prepare')).map((x) => x.made.released), [1, 1, 1, 1]);
    });
  });
});
