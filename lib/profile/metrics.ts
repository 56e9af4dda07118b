// What gdn.profile asks Nsight Compute for, and how it runs it (docs/SPEC.md §14).
//
// Every metric here is a documented Nsight Compute metric name (the Profiling Guide's metric
// structure `unit__counter.rollup.submetric`); the table shows nothing that is not in this list.

/** Warp-stall reasons of the WarpStateStats section, one metric each (cycles a warp spent stalled per issued instruction). */
export const STALL_REASONS = [
  'barrier', 'branch_resolving', 'dispatch_stall', 'drain', 'imc_miss', 'lg_throttle', 'long_scoreboard',
  'math_pipe_throttle', 'membar', 'mio_throttle', 'misc', 'no_instruction', 'not_selected', 'selected',
  'short_scoreboard', 'sleeping', 'tex_throttle', 'wait',
] as const;
export type StallReason = (typeof STALL_REASONS)[number];

/** The metric that holds one stall reason's cycles per issued instruction. */
export function stallMetric(reason: string): string {
  return `smsp__average_warps_issue_stalled_${reason}_per_issue_active.ratio`;
}

/** The reason a stall metric names, or null when the name is not a stall metric. */
export function stallReasonOf(metric: string): string | null {
  const m = /^smsp__average_warps_issue_stalled_(.+)_per_issue_active\.ratio$/.exec(metric);
  return m ? m[1] : null;
}

/** The named metrics the table reads (key: what the profile calls it). */
export const METRICS = {
  duration: 'gpu__time_duration.sum',
  dramRead: 'dram__bytes_read.sum',
  dramWrite: 'dram__bytes_write.sum',
  dramPctPeak: 'dram__throughput.avg.pct_of_peak_sustained_elapsed',
  // The device's peak DRAM bandwidth: bytes per DRAM cycle at peak times DRAM cycles per second.
  dramPeakPerCycle: 'dram__bytes.sum.peak_sustained',
  dramCyclesPerSecond: 'dram__cycles_elapsed.avg.per_second',
  smThroughputPct: 'sm__throughput.avg.pct_of_peak_sustained_elapsed',
  achievedOccupancyPct: 'sm__warps_active.avg.pct_of_peak_sustained_active',
  theoreticalOccupancyPct: 'sm__maximum_warps_per_active_cycle_pct',
  issueActivePct: 'smsp__issue_active.avg.pct_of_peak_sustained_active',
  warpInstructions: 'sm__inst_executed.sum',
  registers: 'launch__registers_per_thread',
  blockSize: 'launch__block_size',
  gridSize: 'launch__grid_size',
  limitRegisters: 'launch__occupancy_limit_registers',
  limitSharedMem: 'launch__occupancy_limit_shared_mem',
  limitWarps: 'launch__occupancy_limit_warps',
  limitBlocks: 'launch__occupancy_limit_blocks',
  // Local-memory traffic: what register spills (and local arrays) cost at run time.
  localLoadBytes: 'l1tex__t_bytes_pipe_lsu_mem_local_op_ld.sum',
  localStoreBytes: 'l1tex__t_bytes_pipe_lsu_mem_local_op_st.sum',
} as const;
export type MetricKey = keyof typeof METRICS;

/** Which occupancy limit each launch__occupancy_limit_* metric is. */
export const OCCUPANCY_LIMITS: readonly { key: MetricKey; name: string }[] = [
  { key: 'limitRegisters', name: 'registers' },
  { key: 'limitSharedMem', name: 'shared memory' },
  { key: 'limitWarps', name: 'warps (threads per block)' },
  { key: 'limitBlocks', name: 'block slots' },
];

/** Every metric gdn.profile collects, in one --metrics list. */
export function metricList(): string[] {
  return [...Object.values(METRICS), ...STALL_REASONS.map(stallMetric)];
}

/** Only the kernels of an op's arms are profiled (not the output poisoning fills or timing kernels). */
export const ARM_KERNEL_REGEX = 'conv_kernel|postconv_kernel|fused_kernel|gdn_arm_';

/**
 * The ncu command line that records a report of `command`. Each flag is chosen:
 * - `--metrics LIST`: only what the table shows, so a launch is replayed a few times, not the ~40 passes of `--set full`;
 * - `--clock-control none`: the GPU keeps its own clocks (boost), as in gdnlab bench; ncu's default locks
 *   them to base, which would make every duration longer than the bench's;
 * - `--cache-control all`: caches flushed before each replay pass, so every pass starts cold (the bench
 *   flushes L2 before each timed launch too) and DRAM bytes are a cold launch's;
 * - `--target-processes all`: user arms run in the gdn_user_worker process, a child of the profiled one;
 * - `--replay-mode kernel`: the launch is replayed with its memory saved and restored between passes, so
 *   the one launch per arm is measured by every pass;
 * - `--kernel-name-base function --kernel-name regex:…`: the op's arm kernels only (libgdn's generic
 *   conv_kernel/postconv_kernel/fused_kernel and user arms' gdn_arm_* entries), not the poisoning fills;
 * - `--export FILE --force-overwrite`: a report file (opened later with `--import`, and in the Nsight
 *   Compute GUI), so the profiled program's own stdout never mixes with the CSV.
 */
export function ncuRecordArgs(report: string, metrics: readonly string[], command: readonly string[]): string[] {
  return [
    '--metrics', metrics.join(','),
    '--clock-control', 'none',
    '--cache-control', 'all',
    '--target-processes', 'all',
    '--replay-mode', 'kernel',
    '--kernel-name-base', 'function',
    '--kernel-name', `regex:${ARM_KERNEL_REGEX}`,
    '--export', report, '--force-overwrite',
    ...command,
  ];
}

/**
 * The ncu command line that prints a recorded report as CSV: `--page raw` (one row per launch, one column
 * per metric, a units row under the header) and `--print-units base` (bytes and nanoseconds, never
 * auto-scaled to MB or µs) and `--print-kernel-base demangled` (the template arguments say which arm
 * struct and variant ran).
 */
export function ncuImportArgs(report: string): string[] {
  return ['--import', report, '--csv', '--page', 'raw', '--print-units', 'base', '--print-kernel-base', 'demangled'];
}
