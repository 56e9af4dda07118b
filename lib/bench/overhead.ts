// `gdnlab bench overhead`: what a small op costs from TypeScript beyond its kernel, and what an
// allocate/free pair costs, on the active backend (docs/BENCHMARKS.md, "Per-op overhead").
//
// For each op case, in one run:
//   kernel  CUDA: the native time of the same planned op in gdn_time_ops (CUDA events around the launch),
//           hot (no L2 flush), in batches alternating with the calls; host: the kernel's own time inside
//           each call (gdn_last_kernel_ns, a monotonic clock around the replay);
//   wall    performance.now() around the TypeScript call, one sample per call, after a warm-up —
//           argument checks, struct encoding, koffi, validation and planning in libgdn, the launch,
//           the wait (sync path), result wrapping;
//   over    CUDA: wall median − kernel median; host: the median over calls of (wall − that call's kernel),
//           since a host kernel's own time varies by more than the overhead between calls on a shared
//           machine (CHANGELOG 2026-12-04, f3bf26d): the per-op overhead that issue 10 bounds by 15 µs.
//   where   the same calls again with phase marks on (markCalls, lib/ops/common.ts), in batches alternating
//           with the plain ones: each marked call's time beyond its kernel split at the marks into the call
//           site, prepare, encode, the native call beyond the kernel, finish and release (OverheadBreakdown);
//           the native part split further by a trivial koffi call's cost (gdn_abi_version) timed in the same
//           batches, the rest of it (libgdn's planning and validation, koffi's marshalling) by subtraction.
//           The plain calls, not the marked ones, give `over`.
// Before any timing, every op case's outputs are compared bit for bit with the reference arm's at
// the same shape (a benchmark validates before it times).

import { performance } from 'perf_hooks';
import * as os from 'os';
import { Backend, NativeOp } from '../backend';
import { Tensor } from '../tensor';
import { revision } from '../provenance';
import { summarize } from '../analysis/stats';
import { countDifferingWords } from '../analysis/bits';
import { CALL_MARK, CALL_MARK_SLOTS, markCalls } from '../ops/common';

/** One part of a call's time beyond its kernel (µs, mean over the marked calls kept). */
export interface OverheadPart {
  /** A stable key: see BREAKDOWN_PARTS. */
  part: (typeof BREAKDOWN_PARTS)[number];
  us: number;
  /** 'measured': between two marks of the call (or a call of its own); 'by subtraction': what is left of a measured part. */
  how: 'measured' | 'by subtraction';
}

/**
 * The parts, in call order. callSite: from the bench's clock read to the op's entry (the case's own argument
 * objects); prepare: TypeScript argument checks, staging, the args object; encode: the args struct into its
 * bytes; koffiFixed: a trivial koffi call (gdn_abi_version, no arguments), timed apart in the same batches;
 * nativeRest: the native call minus its kernel minus koffiFixed — libgdn's planning and validation and koffi's
 * marshalling of the arguments (by subtraction); finish: the status check and the result's tensors; release:
 * the case's release() of the result, back to the bench's clock read.
 */
export const BREAKDOWN_PARTS = ['callSite', 'prepare', 'encode', 'koffiFixed', 'nativeRest', 'finish', 'release'] as const;

/**
 * Where a call's time beyond its kernel goes. The parts are means over the marked calls whose time beyond
 * the kernel lies within that time's [p10, p90] (spikes dropped alike from every part), so that they add up
 * to `totalUs`, the same mean of the calls' whole time beyond the kernel: means add, medians do not.
 * `totalUs` is read beside `over` (the median of unmarked calls): it carries the marks' own clock reads.
 */
export interface OverheadBreakdown {
  /** Marked calls timed, and those kept (within [p10, p90]). */
  calls: number;
  kept: number;
  totalUs: number;
  parts: OverheadPart[];
}

export interface OverheadRow {
  op: string;
  variant: string;
  /** Native time of the planned op (µs, median), or null when gdn_time_ops has no such op. */
  kernelUs: number | null;
  wallUs: number;
  wallP10Us: number;
  wallP90Us: number;
  n: number;
  /** wallUs − kernelUs, or on the host the median of per-call differences (null without a kernel time). */
  overheadUs: number | null;
  /** How overheadUs was taken: 'medians' (CUDA) or 'per-call' (host: each call's wall minus its own kernel). */
  method?: 'medians' | 'per-call';
  /** True when overheadUs ≤ the target; null without a kernel time. */
  meetsTarget: boolean | null;
  /** Where the time beyond the kernel goes (absent without a kernel time or for a call that is not one synchronous op). */
  breakdown?: OverheadBreakdown;
  note?: string;
}

export interface OverheadReport {
  bench: 'overhead';
  backend: 'host' | 'cuda';
  device: string;
  cpu: string;
  revision: string;
  node: string;
  targetUs: number;
  time: string;
  validated: { op: string; mismatches: number; elements: number }[];
  rows: OverheadRow[];
  /** Buffer cache after the run (reserved and cached bytes, segments taken from the backend). */
  cache: ReturnType<Backend['cacheStats']>;
}

export const OVERHEAD_TARGET_US = 15;

/** One op case: a sync call to time from JS, its planned twin for the native loop, and a bit check. */
export interface OverheadCase {
  op: string;
  variant: string;
  /** One call as a user makes it (results released by the case itself). */
  call: () => void | Promise<void>;
  /** The same op for gdn_time_ops (null: wall time only). */
  kernel: (NativeOp & { release(): void }) | null;
  note?: string;
}

export interface OverheadOptions {
  backend: Backend;
  /** Calls timed per case (default 2000; fewer with quick). */
  calls?: number;
  quick?: boolean;
  log?: (line: string) => void;
}

/** One timed call as a user makes it (µs, performance.now() around it, awaited when it returns a promise). */
async function wallOfCall(c: OverheadCase): Promise<number> {
  const t0 = performance.now();
  const r = c.call();
  if (r) await r;
  return (performance.now() - t0) * 1000;
}

/** Per-call samples of a case's marked calls: the phase times (µs) and the kernel each call ran. */
export interface MarkedSamples {
  callSite: number[];
  prepare: number[];
  encode: number[];
  native: number[];
  finish: number[];
  release: number[];
  /** The kernel inside each marked call (host: its own; CUDA: null, the case's kernel median is used). */
  kernel: (number | null)[];
  /** False once a call left no single op's marks (an async call, a case that is not one op call). */
  ok: boolean;
}

const marks = new Float64Array(CALL_MARK_SLOTS);

/** One call with phase marks on; its phases are pushed on `s` (or s.ok cleared when it was not one marked op call). */
async function markedCall(backend: Backend, c: OverheadCase, s: MarkedSamples): Promise<void> {
  marks.fill(Number.NaN);
  marks[CALL_MARK.entries] = 0;
  markCalls(marks);
  let t0: number, t1: number;
  try {
    t0 = performance.now();
    const r = c.call();
    if (r) await r;
    t1 = performance.now();
  } finally {
    markCalls(null);
  }
  if (marks[CALL_MARK.entries] !== 1 || marks.some((v) => Number.isNaN(v))) {
    s.ok = false;
    return;
  }
  const us = (a: number, b: number) => (b - a) * 1000;
  s.callSite.push(us(t0, marks[CALL_MARK.entered]));
  s.prepare.push(us(marks[CALL_MARK.entered], marks[CALL_MARK.prepared]));
  s.encode.push(us(marks[CALL_MARK.prepared], marks[CALL_MARK.encoded]));
  s.native.push(us(marks[CALL_MARK.encoded], marks[CALL_MARK.returned]));
  s.finish.push(us(marks[CALL_MARK.returned], marks[CALL_MARK.finished]));
  s.release.push(us(marks[CALL_MARK.finished], t1));
  s.kernel.push(backend.kind === 'host' ? backend.lastKernelUs() : null);
}

/** koffi's fixed cost of one call (µs): gdn_abi_version, no arguments, timed over a loop (one clock read is too coarse). */
function koffiFixedSample(backend: Backend, loop = 200): number {
  const f = backend.lib.abiVersion;
  const t0 = performance.now();
  for (let i = 0; i < loop; i++) f();
  return ((performance.now() - t0) * 1000) / loop;
}

/**
 * Times a case, µs per sample. CUDA: batches that alternate gdn_time_ops rounds of the planned op with the same
 * number of timed TypeScript calls, so that load on a shared machine shifts both alike. Host: each call's wall
 * time and the time of the kernel replayed inside it (gdn_last_kernel_ns), and their difference per call. On
 * both, each batch then runs the same number of marked calls and a few trivial koffi calls (the breakdown).
 */
async function sampleCase(backend: Backend, c: OverheadCase, n: number): Promise<{ kernel: number[]; wall: number[]; perCall: boolean; marked: MarkedSamples; koffi: number[] }> {
  const batches = 10;
  const per = Math.max(5, Math.ceil(n / batches));
  const kernel: number[] = [];
  const wall: number[] = [];
  const marked: MarkedSamples = { callSite: [], prepare: [], encode: [], native: [], finish: [], release: [], kernel: [], ok: !!c.kernel };
  const koffi: number[] = [];
  const breakdownBatch = async () => {
    if (!marked.ok) return;
    for (let i = 0; i < per && marked.ok; i++) await markedCall(backend, c, marked);
    for (let i = 0; i < 5; i++) koffi.push(koffiFixedSample(backend));
  };
  // Warm-up: caches, the buffer cache's segments, JIT.
  for (let i = 0; i < Math.max(20, per); i++) await c.call();
  if (c.kernel && backend.kind === 'host') {
    // The host runs the kernel inside the call: its own time is read after each call (kernel[i] belongs to wall[i]).
    for (let bi = 0; bi < batches; bi++) {
      for (let i = 0; i < per; i++) {
        wall.push(await wallOfCall(c));
        const k = backend.lastKernelUs() ?? Number.NaN;
        if (!(k > 0)) throw new Error(`bench overhead: ${c.op} (${c.variant}) ran no host kernel in its call (gdn_last_kernel_ns = ${k}); it cannot be timed call by call`);
        kernel.push(k);
      }
      await breakdownBatch();
    }
    return { kernel, wall, perCall: true, marked, koffi };
  }
  if (c.kernel) await backend.timeOps([c.kernel], { rounds: Math.max(5, Math.floor(per / 4)), flushL2: false });
  for (let bi = 0; bi < batches; bi++) {
    if (c.kernel) kernel.push(...(await backend.timeOps([c.kernel], { rounds: per, flushL2: false })));
    for (let i = 0; i < per; i++) wall.push(await wallOfCall(c));
    await breakdownBatch();
  }
  return { kernel, wall, perCall: false, marked, koffi };
}

/**
 * The breakdown of a case's marked calls (OverheadBreakdown): each call's time beyond its kernel (host: the
 * call's own kernel; CUDA: the kernel median `kernelUs`) is the sum of its phases minus that kernel; the calls
 * within [p10, p90] of it are kept and every part averaged over them.
 */
export function breakdownOf(m: MarkedSamples, kernelUs: number, koffi: number[]): OverheadBreakdown | undefined {
  const n = m.native.length;
  if (!m.ok || n === 0 || koffi.length === 0) return undefined;
  const k = (i: number) => m.kernel[i] ?? kernelUs;
  const beyond = (i: number) => m.callSite[i] + m.prepare[i] + m.encode[i] + (m.native[i] - k(i)) + m.finish[i] + m.release[i];
  const all = Array.from({ length: n }, (_, i) => beyond(i));
  const s = summarize(all);
  const keep = all.map((_, i) => i).filter((i) => all[i] >= s.p10 && all[i] <= s.p90);
  const mean = (f: (i: number) => number) => keep.reduce((a, i) => a + f(i), 0) / keep.length;
  const koffiFixed = summarize(koffi).median;
  const nativeBeyond = mean((i) => m.native[i] - k(i));
  const parts: OverheadPart[] = [
    { part: 'callSite', us: mean((i) => m.callSite[i]), how: 'measured' },
    { part: 'prepare', us: mean((i) => m.prepare[i]), how: 'measured' },
    { part: 'encode', us: mean((i) => m.encode[i]), how: 'measured' },
    { part: 'koffiFixed', us: koffiFixed, how: 'measured' },
    { part: 'nativeRest', us: nativeBeyond - koffiFixed, how: 'by subtraction' },
    { part: 'finish', us: mean((i) => m.finish[i]), how: 'measured' },
    { part: 'release', us: mean((i) => m.release[i]), how: 'measured' },
  ];
  return { calls: n, kept: keep.length, totalUs: mean(beyond), parts };
}

export async function timeOverheadCases(cases: OverheadCase[], opts: OverheadOptions): Promise<OverheadRow[]> {
  const n = opts.calls ?? (opts.quick ? 300 : 2000);
  const rows: OverheadRow[] = [];
  for (const c of cases) {
    opts.log?.(`overhead: ${c.op} (${c.variant})`);
    const s = await sampleCase(opts.backend, c, n);
    const kernelUs = c.kernel ? summarize(s.kernel).median : null;
    const wall = summarize(s.wall);
    const overheadUs =
      kernelUs === null ? null : s.perCall ? summarize(s.wall.map((w, i) => w - s.kernel[i])).median : wall.median - kernelUs;
    const breakdown = kernelUs === null ? undefined : breakdownOf(s.marked, kernelUs, s.koffi);
    rows.push({
      op: c.op,
      variant: c.variant,
      kernelUs,
      wallUs: wall.median,
      wallP10Us: wall.p10,
      wallP90Us: wall.p90,
      n: wall.n,
      overheadUs,
      ...(kernelUs === null ? {} : { method: s.perCall ? ('per-call' as const) : ('medians' as const) }),
      meetsTarget: overheadUs === null ? null : overheadUs <= OVERHEAD_TARGET_US,
      ...(breakdown ? { breakdown } : {}),
      note: c.note,
    });
  }
  return rows;
}

/** Allocation cases: a cached alloc/free pair through Backend and through Tensor, and the uncached cost. */
export function allocationCases(backend: Backend, bytes = 4 << 20): OverheadCase[] {
  const mib = `${bytes / (1 << 20)} MiB`;
  return [
    {
      op: `alloc + free ${mib}`,
      variant: 'Backend.alloc/free (cached)',
      kernel: null,
      call: () => backend.free(backend.alloc(bytes)),
    },
    {
      op: `alloc + free ${mib}`,
      variant: 'Tensor.empty + release (cached)',
      kernel: null,
      call: () => Tensor.empty([bytes / 4], 'f32', { backend }).release(),
    },
    {
      op: `alloc + free ${mib}`,
      variant: 'uncached (trim after each free)',
      kernel: null,
      call: () => {
        backend.free(backend.alloc(bytes));
        backend.trim();
      },
      note: backend.kind === 'cuda' ? 'cudaMalloc + cudaFree of a segment' : 'mmap + munmap of a segment',
    },
  ];
}

export function overheadMarkdown(r: OverheadReport, command: string): string {
  const f = (v: number | null, d = 1) => (v === null ? '—' : v.toFixed(d));
  const lines = [
    `### Per-op overhead — \`${command}\``,
    '',
    `- backend: ${r.backend}; device: ${r.device}; CPU: ${r.cpu}`,
    `- revision ${r.revision}; node ${r.node}; ${r.time}`,
    r.backend === 'host'
      ? `- kernel = the kernel's own time inside each call (gdn_last_kernel_ns); wall = performance.now() around the TypeScript call (median [p10, p90] of n calls); over = median over the calls of (wall − that call's kernel); target ≤ ${r.targetUs} µs`
      : `- kernel = native time of the same planned op (gdn_time_ops, hot); wall = performance.now() around the TypeScript call (median [p10, p90] of n calls); over = wall − kernel; target ≤ ${r.targetUs} µs`,
    `- validated before timing: ${r.validated.map((v) => `${v.op} ${v.mismatches}/${v.elements} mismatching`).join('; ')}`,
    '',
    '| op | variant | kernel µs | wall µs | p10 | p90 | n | over µs | ≤ target | note |',
    '|---|---|---:|---:|---:|---:|---:|---:|---|---|',
  ];
  for (const x of r.rows) {
    const ok = x.meetsTarget === null ? '' : x.meetsTarget ? 'yes' : 'NO';
    lines.push(`| ${x.op} | ${x.variant} | ${f(x.kernelUs)} | ${f(x.wallUs)} | ${f(x.wallP10Us)} | ${f(x.wallP90Us)} | ${x.n} | ${f(x.overheadUs)} | ${ok} | ${x.note ?? ''} |`);
  }
  const withParts = r.rows.filter((x) => x.breakdown);
  if (withParts.length > 0) {
    const head = BREAKDOWN_PARTS.map((p) => `${p}${withParts[0].breakdown?.parts.find((q) => q.part === p)?.how === 'by subtraction' ? ' (by subtraction)' : ''} µs`);
    lines.push(
      '',
      `Where the time beyond the kernel goes: the same calls with phase marks on (markCalls), in batches alternating with the calls above; each part is a mean over the marked calls within [p10, p90] of their time beyond the kernel, and the parts add up to **marked µs** (that mean; read it beside over µs, the median of unmarked calls). koffiFixed = one gdn_abi_version call through koffi (no arguments), timed in the same batches; nativeRest = the native call − its kernel − koffiFixed: libgdn's planning and validation and koffi's marshalling of the arguments, by subtraction.`,
      '',
      `| op | variant | over µs | marked µs | ${head.join(' | ')} | kept/calls |`,
      `|---|---|---:|---:|${BREAKDOWN_PARTS.map(() => '---:').join('|')}|---:|`,
    );
    for (const x of withParts) {
      const b = x.breakdown as OverheadBreakdown;
      lines.push(`| ${x.op} | ${x.variant} | ${f(x.overheadUs)} | ${f(b.totalUs)} | ${BREAKDOWN_PARTS.map((p) => f(b.parts.find((q) => q.part === p)?.us ?? null, 2)).join(' | ')} | ${b.kept}/${b.calls} |`);
    }
  }
  const c = r.cache;
  lines.push('', `Buffer cache after the run: ${(c.reservedBytes / 2 ** 20).toFixed(1)} MiB reserved in ${c.segments} segments, ${(c.cachedBytes / 2 ** 20).toFixed(1)} MiB cached, ${c.allocCalls} allocations of which ${c.segmentMaps} took a new segment.`);
  return lines.join('\n');
}

export function reportHeader(backend: Backend): Pick<OverheadReport, 'backend' | 'device' | 'cpu' | 'revision' | 'node' | 'time' | 'targetUs'> {
  return {
    backend: backend.kind,
    device: backend.info().name,
    cpu: os.cpus()[0]?.model ?? 'unknown',
    revision: revision(),
    node: process.version,
    time: new Date().toISOString(),
    targetUs: OVERHEAD_TARGET_US,
  };
}

// ------------------------------------------------------------------------------------------ the cases

/** The shapes of the op cases: model sizes (C = 8192, Qwen3.5-4B heads), and a small one whose host kernel is a few µs. */
export interface OverheadShape {
  id: string;
  T: number;
  C: number;
  B: number;
  slots: number;
  Hk: number;
  Hv: number;
  M: number;
  N: number;
  Kd: number;
}

export const OVERHEAD_SHAPES: OverheadShape[] = [
  { id: 'model', T: 8, C: 8192, B: 8, slots: 16, Hk: 16, Hv: 32, M: 8, N: 256, Kd: 256 },
  { id: 'small', T: 8, C: 256, B: 2, slots: 4, Hk: 1, Hv: 1, M: 2, N: 16, Kd: 32 },
];

/** Small ops at model sizes (T = 8 tokens, B = 8 sequences) and at a small size, then alloc/free. */
export async function benchOverhead(opts: OverheadOptions): Promise<OverheadReport> {
  const { backend } = opts;
  const rows: OverheadRow[] = [];
  const validated: OverheadReport['validated'] = [];
  for (const shape of OVERHEAD_SHAPES) {
    const set = await overheadCases(backend, shape);
    try {
      validated.push(...set.validated);
      rows.push(...(await timeOverheadCases(set.cases, opts)));
    } finally {
      set.release();
    }
  }
  rows.push(...(await timeOverheadCases(allocationCases(backend), opts)));
  return { bench: 'overhead', ...reportHeader(backend), validated, rows, cache: backend.cacheStats() };
}

export async function overheadCases(backend: Backend, shape: OverheadShape): Promise<{ cases: OverheadCase[]; validated: OverheadReport['validated']; release(): void }> {
  const conv = await import('../ops/conv');
  const postconv = await import('../ops/postconv');
  const { matmulNT } = await import('../ops/matmul');
  const held: Tensor[] = [];
  const dev = (t: Tensor) => {
    const d = t.to(backend);
    held.push(d);
    return d;
  };
  const kernels: (NativeOp & { release(): void })[] = [];
  const cases: OverheadCase[] = [];
  const validated: OverheadReport['validated'] = [];

  // conv.forward: T tokens of one sequence, C channels, K = 4, bf16, vec/exact (one launch).
  const { T, C, B } = shape;
  const convIn = {
    x: dev(Tensor.random([T, C], 'bf16', { seed: 1 })),
    weight: dev(Tensor.random([C, 4], 'bf16', { seed: 2, scale: 0.5 })),
    queryStartLoc: dev(Tensor.from([0, T], [2], 'i32')),
    convState: dev(Tensor.random([1, C, 3], 'f32', { seed: 3 })),
  };
  const convOpts = { arm: 'vec' as const, mapping: 'exact' as const, outDtype: 'bf16' as const, backend };
  {
    const ref = conv.forwardSync(convIn, { ...convOpts, arm: 'scalar', mapping: 'sequence' });
    const got = conv.forwardSync(convIn, convOpts);
    validated.push({ op: `conv vec T=${T} C=${C}`, mismatches: countDifferingWords(got.out.bits(), ref.out.bits()) + countDifferingWords(got.convState.bits(), ref.convState.bits()), elements: T * C + C * 3 });
    ref.release();
    got.release();
  }
  const convKernel = conv.prepareTimed(convIn, convOpts);
  kernels.push(convKernel);
  cases.push({
    op: `conv.forward vec/exact T=${T} C=${C} bf16`,
    variant: 'forwardSync, fresh outputs',
    kernel: convKernel,
    call: () => conv.forwardSync(convIn, convOpts).release(),
  });
  const convOut = { out: dev(Tensor.empty([T, C], 'bf16', { backend })), convState: dev(Tensor.empty([1, C, 3], 'f32', { backend })) };
  cases.push({
    op: `conv.forward vec/exact T=${T} C=${C} bf16`,
    variant: 'forwardSync, out buffers reused',
    kernel: convKernel,
    call: () => conv.forwardSync(convIn, { ...convOpts, out: convOut }).release(),
  });
  const offsets = [0, T];
  cases.push({
    op: `conv.forward vec/exact T=${T} C=${C} bf16`,
    variant: 'forwardSync, offsets as host numbers, out reused',
    kernel: convKernel,
    call: () => conv.forwardSync({ ...convIn, queryStartLoc: offsets }, { ...convOpts, out: convOut }).release(),
    note: 'libgdn plans from the host copy: no read-back of query_start_loc',
  });
  // The loop a caller writes for a stream of chunks: state updated in place, out reused, offsets as
  // numbers. The device then does exactly the timed kernel's work (the reused-out cases above also
  // copy convState into out.convState, since the op does not modify its input).
  const convStateInPlace = dev(Tensor.random([1, C, 3], 'f32', { seed: 3 }));
  cases.push({
    op: `conv.forward vec/exact T=${T} C=${C} bf16`,
    variant: 'forwardSync inPlace, offsets as host numbers, out reused',
    kernel: convKernel,
    call: () => conv.forwardSync({ ...convIn, queryStartLoc: offsets, convState: convStateInPlace }, { ...convOpts, inPlace: true, out: { out: convOut.out } }).release(),
    note: 'state updated in place: no copy of convState; the device work is the timed kernel alone',
  });
  cases.push({
    op: `conv.forward vec/exact T=${T} C=${C} bf16`,
    variant: 'await forward, out buffers reused',
    kernel: convKernel,
    call: async () => (await conv.forward(convIn, { ...convOpts, out: convOut })).release(),
    note: 'koffi async: a worker-thread round trip',
  });

  // conv.update: B sequences, C channels, K = 4, bf16 x, f32 state pool, reg arm.
  const slotOf = Array.from({ length: B }, (_, i) => (i * 5 + 3) % shape.slots);
  const updIn = {
    x: dev(Tensor.random([B, C], 'bf16', { seed: 4 })),
    weight: convIn.weight,
    state: dev(Tensor.random([shape.slots, C, 3], 'f32', { seed: 5 })),
    stateIndices: dev(Tensor.from(slotOf, [B], 'i32')),
  };
  {
    const ref = await conv.update(updIn, { arm: 'reference', outDtype: 'bf16', backend });
    const got = await conv.update(updIn, { arm: 'reg', outDtype: 'bf16', backend });
    validated.push({ op: `conv update reg B=${B} C=${C}`, mismatches: countDifferingWords(got.out.bits(), ref.out.bits()) + countDifferingWords(got.state.bits(), ref.state.bits()), elements: B * C + shape.slots * C * 3 });
    // The slots as host numbers (a route of their own through libgdn) must give the same bits.
    const byNumbers = conv.updateSync({ ...updIn, stateIndices: slotOf }, { arm: 'reg', outDtype: 'bf16', backend });
    validated.push({ op: `conv update reg B=${B} C=${C}, slots as host numbers`, mismatches: countDifferingWords(byNumbers.out.bits(), ref.out.bits()) + countDifferingWords(byNumbers.state.bits(), ref.state.bits()), elements: B * C + shape.slots * C * 3 });
    byNumbers.release();
    ref.release();
    got.release();
  }
  const updOpts = { arm: 'reg' as const, outDtype: 'bf16' as const, backend };
  const updKernel = conv.prepareTimedUpdate(updIn, { ...updOpts, inPlace: true });
  kernels.push(updKernel);
  const updOut = { out: dev(Tensor.empty([B, C], 'bf16', { backend })) };
  cases.push({
    op: `conv.update reg B=${B} C=${C} bf16, ${shape.slots}-slot pool`,
    variant: 'updateSync, fresh outputs (pool copied)',
    kernel: updKernel,
    call: () => conv.updateSync(updIn, updOpts).release(),
    note: `copies the ${((shape.slots * C * 12) / 2 ** 20).toFixed(2)} MiB pool (the op does not modify its input)`,
  });
  cases.push({
    op: `conv.update reg B=${B} C=${C} bf16, ${shape.slots}-slot pool`,
    variant: 'updateSync inPlace, out buffer reused',
    kernel: updKernel,
    call: () => conv.updateSync(updIn, { ...updOpts, inPlace: true, out: updOut }).release(),
    note: 'slots as a device tensor: libgdn reads them back to check them',
  });
  cases.push({
    op: `conv.update reg B=${B} C=${C} bf16, ${shape.slots}-slot pool`,
    variant: 'updateSync inPlace, slots as host numbers, out reused',
    kernel: updKernel,
    call: () => conv.updateSync({ ...updIn, stateIndices: slotOf }, { ...updOpts, inPlace: true, out: updOut }).release(),
    note: 'libgdn checks the host copy and passes it in the kernel parameters: no upload, no read-back',
  });

  // post-conv: T tokens, Hk/Hv heads of Dk = Dv = 128 (model: Qwen3.5-4B's 16/32), bf16, token-tile.
  const dims = { Hk: shape.Hk, Hv: shape.Hv, Dk: 128, Dv: 128 };
  const pcC = 2 * dims.Hk * dims.Dk + dims.Hv * dims.Dv;
  const packed = dev(Tensor.random([T, 2 * dims.Hv], 'bf16', { seed: 6 }));
  const pcIn = {
    convOut: dev(Tensor.random([T, pcC], 'bf16', { seed: 7 })),
    b: packed.sliceCols(0, dims.Hv),
    a: packed.sliceCols(dims.Hv, dims.Hv),
    ALog: dev(Tensor.random([dims.Hv], 'f32', { seed: 8 })),
    dtBias: dev(Tensor.random([dims.Hv], 'f32', { seed: 9 })),
  };
  const pcOpts = { ...dims, arm: 'token-tile' as const, qkvDtype: 'bf16' as const, backend };
  {
    const ref = await postconv.forward(pcIn, { ...pcOpts, arm: 'tree' });
    const got = await postconv.forward(pcIn, pcOpts);
    const names = ['q', 'k', 'v', 'g', 'beta'] as const;
    validated.push({ op: `post-conv token-tile T=${T}`, mismatches: names.reduce((n, k) => n + countDifferingWords(got[k].bits(), ref[k].bits()), 0), elements: names.reduce((n, k) => n + got[k].numel, 0) });
    ref.release();
    got.release();
  }
  const pcKernel = postconv.prepareTimed(pcIn, pcOpts);
  kernels.push(pcKernel);
  // Output buffers of the post-conv's (and the fused op's) shapes: bf16 q, k, v; f32 g and beta.
  const qkvgbOut = () => ({
    q: dev(Tensor.empty([T, dims.Hk, dims.Dk], 'bf16', { backend })),
    k: dev(Tensor.empty([T, dims.Hk, dims.Dk], 'bf16', { backend })),
    v: dev(Tensor.empty([T, dims.Hv, dims.Dv], 'bf16', { backend })),
    g: dev(Tensor.empty([T, dims.Hv], 'f32', { backend })),
    beta: dev(Tensor.empty([T, dims.Hv], 'f32', { backend })),
  });
  const pcOut = qkvgbOut();
  cases.push({
    op: `postconv.forward token-tile T=${T} Hk=${dims.Hk} Hv=${dims.Hv} bf16`,
    variant: 'forwardSync, fresh outputs',
    kernel: pcKernel,
    call: () => postconv.forwardSync(pcIn, pcOpts).release(),
  });
  cases.push({
    op: `postconv.forward token-tile T=${T} Hk=${dims.Hk} Hv=${dims.Hv} bf16`,
    variant: 'forwardSync, out buffers reused',
    kernel: pcKernel,
    call: () => postconv.forwardSync(pcIn, { ...pcOpts, out: pcOut }).release(),
  });

  // fused conv → post-conv: the same T tokens and head layout, stream arm, bf16 throughout, the state
  // updated in place (no copy of it per call); checked against head-tile, whose bits both equal the chain's.
  const fused = await import('../ops/fused');
  const fuIn = {
    x: dev(Tensor.random([T, pcC], 'bf16', { seed: 12 })),
    weight: dev(Tensor.random([pcC, 4], 'bf16', { seed: 13, scale: 0.5 })),
    queryStartLoc: convIn.queryStartLoc,
    convState: dev(Tensor.random([1, pcC, 3], 'f32', { seed: 14 })),
    a: pcIn.a, b: pcIn.b, ALog: pcIn.ALog, dtBias: pcIn.dtBias,
  };
  const fuOpts = { ...dims, arm: 'stream', convDtype: 'bf16' as const, qkvDtype: 'bf16' as const, backend };
  {
    const ref = fused.forwardSync(fuIn, { ...fuOpts, arm: 'head-tile' });
    const got = fused.forwardSync(fuIn, fuOpts);
    const names = ['q', 'k', 'v', 'g', 'beta', 'convState'] as const;
    validated.push({ op: `fused stream T=${T}`, mismatches: names.reduce((n, k) => n + countDifferingWords(got[k].bits(), ref[k].bits()), 0), elements: names.reduce((n, k) => n + got[k].numel, 0) });
    ref.release();
    got.release();
  }
  const fuKernel = fused.prepareTimed(fuIn, fuOpts);
  kernels.push(fuKernel);
  cases.push({
    op: `fused.forward stream T=${T} Hk=${dims.Hk} Hv=${dims.Hv} bf16`,
    variant: 'forwardSync, fresh outputs, state in place',
    kernel: fuKernel,
    call: () => fused.forwardSync(fuIn, { ...fuOpts, inPlace: true }).release(),
  });
  const fuOut = qkvgbOut();
  cases.push({
    op: `fused.forward stream T=${T} Hk=${dims.Hk} Hv=${dims.Hv} bf16`,
    variant: 'forwardSync, out buffers reused, state in place',
    kernel: fuKernel,
    call: () => fused.forwardSync(fuIn, { ...fuOpts, inPlace: true, out: fuOut }).release(),
  });
  cases.push({
    op: `fused.forward stream T=${T} Hk=${dims.Hk} Hv=${dims.Hv} bf16`,
    variant: 'forwardSync, offsets as host numbers, out reused, state in place',
    kernel: fuKernel,
    call: () => fused.forwardSync({ ...fuIn, queryStartLoc: offsets }, { ...fuOpts, inPlace: true, out: fuOut }).release(),
    note: 'libgdn plans from the host copy: no read-back of query_start_loc',
  });

  // matmul: [M, Kd] · [N, Kd]ᵀ, bf16 in, f32 out (wall time only: gdn_time_ops has no matmul op).
  const { M, N, Kd } = shape;
  const ma = dev(Tensor.random([M, Kd], 'bf16', { seed: 10 }));
  const mb = dev(Tensor.random([N, Kd], 'bf16', { seed: 11 }));
  const mOut = { out: dev(Tensor.empty([M, N], 'f32', { backend })) };
  cases.push({
    op: `matmulNT [${M}, ${Kd}] · [${N}, ${Kd}]ᵀ bf16`,
    variant: 'sync, fresh output',
    kernel: null,
    call: () => matmulNT(ma, mb, { backend }).release(),
    note: 'no native time (gdn_time_ops has no matmul op)',
  });
  cases.push({
    op: `matmulNT [${M}, ${Kd}] · [${N}, ${Kd}]ᵀ bf16`,
    variant: 'sync, out buffer reused',
    kernel: null,
    call: () => {
      matmulNT(ma, mb, { backend, out: mOut });
    },
    note: 'no native time (gdn_time_ops has no matmul op)',
  });

  return {
    cases,
    validated,
    release() {
      for (const k of kernels) k.release();
      for (const t of held) t.release();
    },
  };
}
