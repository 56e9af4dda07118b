// From Nsight Compute's numbers to gdn.profile's table and chart (docs/SPEC.md §14): one row per arm,
// matched to the profiled launches in the order the child process made them. Pure: no ncu, no backend.

import { NcuKernel, NcuReport, metricValue } from './ncu-csv';
import { ARM_KERNEL_REGEX, METRICS, MetricKey, OCCUPANCY_LIMITS, STALL_REASONS, stallMetric } from './metrics';
import { Figure } from '../analysis/plot';
import { BarTrace } from '../view/figure';

/** One launch the child process made: which arm was asked for, what ran, and how much it wrote. */
export interface ProfiledLaunch {
  /** The arm as asked ("vec/exact" for a conv arm with a mapping). */
  label: string;
  /** The arm (and mapping) that ran after the planner's fallbacks, e.g. "vec/exact" or "tree". */
  ran: string;
  /** Elements the launch writes (the op's outputs; state excluded). */
  outputElements: number;
  /** The launch contract as the op reported it (for the table's notes). */
  launch: Record<string, unknown>;
  /** True for an arm defined in a cell (its kernel runs in the user-arm worker). */
  user: boolean;
}

export interface StallShare {
  reason: string;
  /** Cycles a warp spent stalled for this reason per issued instruction. */
  cyclesPerIssue: number;
}

export interface ProfileRow {
  arm: string;
  ran: string;
  kernel: string;
  durationUs: number | null;
  dramReadBytes: number | null;
  dramWriteBytes: number | null;
  /** (read + write) / the op's minimal traffic. */
  trafficVsMinimal: number | null;
  /** Bytes moved to and from DRAM per second of the launch, GB/s. */
  achievedGBs: number | null;
  /** The op's minimal traffic per second of the launch, GB/s (what the bench's ratio to copy uses). */
  effectiveGBs: number | null;
  dramPctOfPeak: number | null;
  /** achievedGBs as % of the measured copy's GB/s. */
  dramPctOfCopy: number | null;
  /** The launch's time over a copy of the op's minimal traffic (the bench's "x copy"). */
  timeVsCopy: number | null;
  achievedOccupancyPct: number | null;
  theoreticalOccupancyPct: number | null;
  /** The resources that hold blocks per SM lowest (ties listed together). */
  occupancyLimiter: string | null;
  issueActivePct: number | null;
  smThroughputPct: number | null;
  /** Warp instructions × 32 per output element: what one lane issues per value it writes. */
  instPerOutput: number | null;
  stalls: StallShare[];
  registers: number | null;
  localLoadBytes: number | null;
  localStoreBytes: number | null;
}

export interface ProfileAnalysis {
  rows: ProfileRow[];
  /** Metrics the table reads that the report has no number for (with the arms they are missing in). */
  missing: { metric: string; arms: string[] }[];
  /** The device's peak DRAM bandwidth from the report (GB/s), or null. */
  peakGBs: number | null;
}

function num(k: NcuKernel, key: MetricKey): number | null {
  return metricValue(k, METRICS[key]);
}

/** Stall reasons by cycles per issued instruction, largest first; `selected` (issuing itself) is not a stall. */
export function rankStalls(k: NcuKernel): StallShare[] {
  const out: StallShare[] = [];
  for (const reason of STALL_REASONS) {
    if (reason === 'selected') continue;
    const v = metricValue(k, stallMetric(reason));
    if (v !== null && v > 0) out.push({ reason, cyclesPerIssue: v });
  }
  return out.sort((a, b) => b.cyclesPerIssue - a.cyclesPerIssue || a.reason.localeCompare(b.reason));
}

/** The occupancy limits (blocks per SM each resource allows) that are lowest, or null when none was reported. */
export function occupancyLimiter(k: NcuKernel): string | null {
  const limits = OCCUPANCY_LIMITS.map((l) => ({ name: l.name, blocks: num(k, l.key) })).filter((l): l is { name: string; blocks: number } => l.blocks !== null);
  if (limits.length === 0) return null;
  const low = Math.min(...limits.map((l) => l.blocks));
  return `${limits.filter((l) => l.blocks === low).map((l) => l.name).join(' and ')} (${low} blocks/SM)`;
}

const ratio = (a: number | null, b: number | null): number | null => (a === null || b === null || b === 0 ? null : a / b);

/**
 * Matches the report's arm kernels to the child's launches (in launch order) and computes the table.
 * `minimalBytes`: the op's minimal traffic (the bench's formula); `copyGBs`: the measured copy's
 * bandwidth (null when not measured).
 */
export function analyse(report: NcuReport, launches: readonly ProfiledLaunch[], minimalBytes: number, copyGBs: number | null): ProfileAnalysis {
  const armKernel = new RegExp(ARM_KERNEL_REGEX);
  const kernels = report.kernels.filter((k) => armKernel.test(k.kernelName));
  if (kernels.length !== launches.length) {
    const names = report.kernels.map((k) => `${k.id}: ${k.kernelName}`).join('; ') || 'none';
    throw new Error(`profile: ${launches.length} arm launch${launches.length === 1 ? '' : 'es'} made (${launches.map((l) => l.label).join(', ')}), but the ncu report has ${kernels.length} arm kernel${kernels.length === 1 ? '' : 's'} (launches in the report: ${names})`);
  }
  const missing = new Map<string, string[]>();
  const need = [...Object.values(METRICS), ...STALL_REASONS.map(stallMetric)];
  let peakGBs: number | null = null;
  const rows = launches.map((l, i) => {
    const k = kernels[i];
    for (const m of need) if (metricValue(k, m) === null) missing.set(m, [...(missing.get(m) ?? []), l.label]);
    const ns = num(k, 'duration');
    const rd = num(k, 'dramRead');
    const wr = num(k, 'dramWrite');
    const moved = rd === null || wr === null ? null : rd + wr;
    const achieved = ratio(moved, ns);  // bytes per ns = GB/s
    const effective = ratio(minimalBytes, ns);
    const perCycle = num(k, 'dramPeakPerCycle');
    const cps = num(k, 'dramCyclesPerSecond');
    if (perCycle !== null && cps !== null) peakGBs ??= (perCycle * cps) / 1e9;
    const inst = num(k, 'warpInstructions');
    return {
      arm: l.label,
      ran: l.ran,
      kernel: k.kernelName,
      durationUs: ns === null ? null : ns / 1000,
      dramReadBytes: rd,
      dramWriteBytes: wr,
      trafficVsMinimal: ratio(moved, minimalBytes),
      achievedGBs: achieved,
      effectiveGBs: effective,
      dramPctOfPeak: num(k, 'dramPctPeak'),
      dramPctOfCopy: achieved === null || copyGBs === null ? null : (100 * achieved) / copyGBs,
      timeVsCopy: effective === null || copyGBs === null ? null : copyGBs / effective,
      achievedOccupancyPct: num(k, 'achievedOccupancyPct'),
      theoreticalOccupancyPct: num(k, 'theoreticalOccupancyPct'),
      occupancyLimiter: occupancyLimiter(k),
      issueActivePct: num(k, 'issueActivePct'),
      smThroughputPct: num(k, 'smThroughputPct'),
      instPerOutput: inst === null || l.outputElements <= 0 ? null : (inst * 32) / l.outputElements,
      stalls: rankStalls(k),
      registers: num(k, 'registers'),
      localLoadBytes: num(k, 'localLoadBytes'),
      localStoreBytes: num(k, 'localStoreBytes'),
    };
  });
  return { rows, missing: [...missing].map(([metric, arms]) => ({ metric, arms })), peakGBs };
}

const fix = (v: number | null, d: number): string => (v === null ? 'n/a' : v.toFixed(d));
const mb = (v: number | null): string => (v === null ? 'n/a' : (v / 1e6).toFixed(2));

/** The table's rows (column → text), in the order the arms were asked for. */
export function tableRows(a: ProfileAnalysis, stallsShown = 3): Record<string, string | number>[] {
  return a.rows.map((r) => ({
    arm: r.arm === r.ran ? r.arm : `${r.arm} (ran ${r.ran})`,
    'time µs': fix(r.durationUs, 2),
    'DRAM rd/wr MB': `${mb(r.dramReadBytes)} / ${mb(r.dramWriteBytes)}`,
    '× minimal': fix(r.trafficVsMinimal, 3),
    'DRAM GB/s': fix(r.achievedGBs, 0),
    '% peak': fix(r.dramPctOfPeak, 1),
    '% copy': fix(r.dramPctOfCopy, 1),
    '× copy time': fix(r.timeVsCopy, 2),
    'occupancy %': `${fix(r.achievedOccupancyPct, 1)} of ${fix(r.theoreticalOccupancyPct, 1)}`,
    'limited by': r.occupancyLimiter ?? 'n/a',
    'issue active %': fix(r.issueActivePct, 1),
    'inst/output': fix(r.instPerOutput, 1),
    'top stalls (cycles/issue)': r.stalls.length ? r.stalls.slice(0, stallsShown).map((s) => `${s.reason} ${s.cyclesPerIssue.toFixed(2)}`).join(', ') : 'n/a',
    registers: r.registers ?? 'n/a',
    'local ld/st B': r.localLoadBytes === null && r.localStoreBytes === null ? 'n/a' : `${r.localLoadBytes ?? 'n/a'} / ${r.localStoreBytes ?? 'n/a'}`,
  }));
}

/**
 * The roofline-style comparison: each arm's achieved DRAM bandwidth and its effective bandwidth (the op's
 * minimal traffic over its time) beside the measured copy and the device's peak.
 */
export function rooflineFigure(a: ProfileAnalysis, copyGBs: number | null, title: string): Figure {
  const arms = a.rows.map((r) => r.arm);
  const traces: BarTrace[] = [
    { type: 'bar', name: 'DRAM bytes moved / time', x: arms, y: a.rows.map((r) => r.achievedGBs ?? 0), marker: { color: '#1f77b4' } },
    { type: 'bar', name: 'minimal traffic / time', x: arms, y: a.rows.map((r) => r.effectiveGBs ?? 0), marker: { color: '#ff7f0e' } },
  ];
  const refX: string[] = [];
  const refY: number[] = [];
  if (copyGBs !== null) {
    refX.push('copy (measured)');
    refY.push(copyGBs);
  }
  if (a.peakGBs !== null) {
    refX.push('DRAM peak');
    refY.push(a.peakGBs);
  }
  if (refX.length) traces.push({ type: 'bar', name: 'copy and peak', x: refX, y: refY, marker: { color: '#7f7f7f' } });
  return new Figure({
    data: traces,
    layout: {
      title: { text: title },
      xaxis: { title: { text: 'arm' } },
      yaxis: { title: { text: 'GB/s' } },
      barmode: 'group',
      width: 760,
      height: 380,
    },
  });
}
