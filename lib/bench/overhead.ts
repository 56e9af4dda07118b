// `gdnlab bench overhead`: what a small op costs from TypeScript beyond its kernel, and what an
// allocate/free pair costs, on the active backend (docs/BENCHMARKS.md, "Per-op overhead").
//
// For each op case, in one run:
//   kernel  the native time of the same planned op in gdn_time_ops (CUDA events around the launch on
//           the GPU, a monotonic clock around the run on the host), hot (no L2 flush): the part of a
//           call that is the kernel itself;
//   wall    performance.now() around the TypeScript call, one sample per call, after a warm-up —
//           argument checks, struct encoding, koffi, validation and planning in libgdn, the launch,
//           the wait (sync path), result wrapping;
//   over    wall median − kernel median: the per-op overhead that issue 10 bounds by 15 µs.
// Before any timing, every op case's outputs are compared bit for bit with the reference arm's at
// the same shape (a benchmark validates before it times).

import { performance } from 'perf_hooks';
import * as os from 'os';
import { Backend, NativeOp } from '../backend';
import { Tensor } from '../tensor';
import { revision } from '../provenance';
import { summarize } from '../analysis/stats';

export interface OverheadRow {
  op: string;
  variant: string;
  /** Native time of the planned op (µs, median), or null when gdn_time_ops has no such op. */
  kernelUs: number | null;
  wallUs: number;
  wallP10Us: number;
  wallP90Us: number;
  n: number;
  /** wallUs − kernelUs (null without a kernel time). */
  overheadUs: number | null;
  /** True when overheadUs ≤ the target; null without a kernel time. */
  meetsTarget: boolean | null;
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

/** Times `call` n times after a warm-up; µs per call. */
async function wallSamples(call: () => void | Promise<void>, n: number): Promise<Float64Array> {
  const warm = Math.max(20, Math.floor(n / 10));
  for (let i = 0; i < warm; i++) await call();
  const out = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    const r = call();
    if (r) await r;
    out[i] = (performance.now() - t0) * 1000;
  }
  return out;
}

async function kernelMedian(backend: Backend, op: NativeOp, rounds: number): Promise<number> {
  await backend.timeOps([op], { rounds: Math.max(10, Math.floor(rounds / 10)), flushL2: false }); // warm-up
  const s = await backend.timeOps([op], { rounds, flushL2: false });
  return summarize(Array.from(s)).median;
}

export async function timeOverheadCases(cases: OverheadCase[], opts: OverheadOptions): Promise<OverheadRow[]> {
  const n = opts.calls ?? (opts.quick ? 300 : 2000);
  const rows: OverheadRow[] = [];
  for (const c of cases) {
    opts.log?.(`overhead: ${c.op} (${c.variant})`);
    const kernelUs = c.kernel ? await kernelMedian(opts.backend, c.kernel, n) : null;
    const wall = summarize(Array.from(await wallSamples(c.call, n)));
    const overheadUs = kernelUs === null ? null : wall.median - kernelUs;
    rows.push({
      op: c.op,
      variant: c.variant,
      kernelUs,
      wallUs: wall.median,
      wallP10Us: wall.p10,
      wallP90Us: wall.p90,
      n: wall.n,
      overheadUs,
      meetsTarget: overheadUs === null ? null : overheadUs <= OVERHEAD_TARGET_US,
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
    `- kernel = native time of the same planned op (gdn_time_ops, hot); wall = performance.now() around the TypeScript call (median [p10, p90] of n calls); over = wall − kernel; target ≤ ${r.targetUs} µs`,
    `- validated before timing: ${r.validated.map((v) => `${v.op} ${v.mismatches}/${v.elements} mismatching`).join('; ')}`,
    '',
    '| op | variant | kernel µs | wall µs | p10 | p90 | n | over µs | ≤ target | note |',
    '|---|---|---:|---:|---:|---:|---:|---:|---|---|',
  ];
  for (const x of r.rows) {
    const ok = x.meetsTarget === null ? '' : x.meetsTarget ? 'yes' : 'NO';
    lines.push(`| ${x.op} | ${x.variant} | ${f(x.kernelUs)} | ${f(x.wallUs)} | ${f(x.wallP10Us)} | ${f(x.wallP90Us)} | ${x.n} | ${f(x.overheadUs)} | ${ok} | ${x.note ?? ''} |`);
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
