// Benchmarks of the conv and post-conv arms, measured side by side in one run: every arm of a shape
// and a device copy of the same bytes are timed interleaved in one timeArms call (L2 flushed outside
// each timed launch), and PyTorch eager runs the same shapes on the same GPU in the same invocation.
// Ratios are only ever taken between numbers of one run.

import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import { Backend } from '../backend';
import { Tensor } from '../tensor';
import { Rng } from '../random';
import * as conv from '../ops/conv';
import * as postconv from '../ops/postconv';
import * as fused from '../ops/fused';
import { compareFused, totalMismatches, checkedFusedArms, FUSED_OUTPUTS } from '../check/fused';
import { copyOp } from '../ops/copy';
import { TimingCase, TimingResult, TimingOptions } from '../analysis/timing';
import { timeArms } from '../check/timed';
import { projectRoot } from '../native/gdn';
import { revision } from '../provenance';
import { arms, referenceArm, ArmInfo } from '../arms/table';
import { userArm } from '../arms/registry';
import { countBitMismatches } from '../analysis/bits';

export interface BenchRow {
  shape: string;
  arm: string;
  mapping?: string;
  /** Measured in this run: the arm's outputs at this shape equal the reference arm's bit for bit. */
  correct: boolean;
  /** Elements that differ from the reference arm's outputs at this shape (0 when correct). */
  mismatches: number;
  /** A planted mutant or a user arm defined as a planted defect: wrong on purpose, even where these bits agree. */
  planted?: boolean;
  medianUs: number;
  p10Us: number;
  p90Us: number;
  n: number;
  bytes: number;
  gbps: number;
  /** median / median of the copy of the same bytes, same run. */
  xCopy: number;
  /** median / PyTorch eager median for the same shape, same invocation (undefined without torch). */
  xTorch?: number;
  note?: string;
}

export interface BaselineMethods {
  baseline: string;
  shape: string;
  fairUs: number;
  naiveUs: number;
  /** null when the call could not be captured into a graph (graphError says why). */
  graphUs: number | null;
  graphError?: string;
  /** The GPU-side hold the fair method ended with, and how many samples it retook because the host was behind. */
  holdUs: number;
  retaken: number;
}

/** A baseline script's per-case result (bench/torch_reference.py time_baseline): the fair figure at the top level. */
interface BaselineResult {
  id: string;
  median_us: number;
  p10_us: number;
  p90_us: number;
  n: number;
  bytes: number;
  x_copy: number;
  copy_median_us: number;
  naive?: { median_us: number };
  graph?: { median_us: number } | { error: string };
  hold_us?: number;
  retaken?: number;
  check?: { ok: boolean; error?: string; max_excess_err?: unknown };
}

/** The three methods' figures of one baseline result (the fair one is the result's own median). */
function baselineMethods(baseline: string, shape: string, r: BaselineResult): BaselineMethods {
  const graph = r.graph && 'median_us' in r.graph ? r.graph.median_us : null;
  return {
    baseline, shape, fairUs: r.median_us, naiveUs: r.naive?.median_us ?? Number.NaN, graphUs: graph,
    ...(r.graph && 'error' in r.graph ? { graphError: r.graph.error } : {}),
    holdUs: r.hold_us ?? Number.NaN, retaken: r.retaken ?? 0,
  };
}

export interface BenchReport {
  op: 'conv' | 'postconv' | 'fused';
  revision: string;
  provenance: TimingResult['provenance'] | null;
  torch: { version: string; cuda: string; device: string } | { error: string } | null;
  rows: BenchRow[];
  copies: { shape: string; medianUs: number; gbps: number }[];
  torchRows: { shape: string; medianUs: number; p10Us: number; p90Us: number; n: number }[];
  /**
   * Every external baseline's time by the three methods of bench/fair_timing.py, measured in its own process
   * in this run: fair (the host ahead of the GPU, the figure every ratio uses), naive (host synchronised
   * after every sample: Python's launch time counted as the kernel's) and a CUDA-graph replay of the call.
   */
  baselines: BaselineMethods[];
  stops: { shape: string; reason: string; detail: string }[];
  /** Every timing run with its raw samples (`--samples`), one per shape. */
  timings?: (ReturnType<TimingResult['toJSON']> & { shape: string })[];
  /**
   * Only in the reports handed to BenchOptions.onProgress while the run goes on: how far it had got. A run
   * stopped part-way (a time limit, a crash of an external baseline) leaves its last such report; the report
   * a finished run returns has none.
   */
  incomplete?: string;
}

// ------------------------------------------------------------------------------------------ shapes

export interface ConvBenchShape {
  id: string;
  model: string;
  C: number;
  lengths: number[];
  initialState: boolean[];
}

/** 32 sequences, 2,048 tokens, unequal lengths (seeded), every other one with initial state. */
export function varlenLengths(total = 2048, count = 32, seed = 2048): number[] {
  const rng = new Rng(seed);
  const weights = Array.from({ length: count }, () => 0.25 + rng.uniform());
  const sum = weights.reduce((a, b) => a + b, 0);
  const lengths = weights.map((w) => Math.max(1, Math.floor((w / sum) * total)));
  let rest = total - lengths.reduce((a, b) => a + b, 0);
  for (let i = 0; rest > 0; i = (i + 1) % count, rest--) lengths[i]++;
  return lengths;
}

export function convBenchShapes(quick = false): ConvBenchShape[] {
  const models = [
    { model: 'Qwen3.5-4B', C: 8192 },
    { model: 'Qwen3.5-27B', C: 10240 },
  ];
  const Ts = quick ? [64, 256] : [512, 2048, 8192, 32768];
  const shapes: ConvBenchShape[] = [];
  for (const m of models) {
    for (const T of Ts) shapes.push({ id: `${m.model} T=${T}`, model: m.model, C: quick ? m.C / 32 : m.C, lengths: [T], initialState: [false] });
    const lengths = quick ? varlenLengths(128, 8) : varlenLengths();
    shapes.push({ id: `${m.model} varlen ${lengths.length}×, ${lengths.reduce((a, b) => a + b, 0)} tok`, model: m.model, C: quick ? m.C / 32 : m.C, lengths, initialState: lengths.map((_, i) => i % 2 === 0) });
  }
  return shapes;
}

/**
 * The conv arm/mapping pairs timed, from libgdn's registry: every arm with each mapping it runs as
 * asked (exact and sequence), plus the racy #305 shape (exact-racy) of the first chunk arm for
 * reference. Whether each is correct is measured at the benchmark shape in the same run.
 */
export function convTimed(): { arm: conv.ConvArm; mapping: conv.ConvMapping; note?: string; planted: boolean }[] {
  const list: { arm: conv.ConvArm; mapping: conv.ConvMapping; note?: string; planted: boolean }[] = [];
  let racyShown = false;
  for (const a of arms('conv')) {
    const maps = a.mappings.filter((m) => m !== 'exact-racy');
    const note = armNote(a);
    for (const mapping of maps) {
      list.push({ arm: a.name, mapping, note, planted: a.mutant });
      if (mapping === 'exact' && !racyShown && a.mappings.includes('exact-racy')) {
        list.push({ arm: a.name, mapping: 'exact-racy', planted: false });
        racyShown = true;
      }
    }
  }
  return list;
}

/** What a row says of an arm that is not a built-in correct arm. */
function armNote(a: ArmInfo): string | undefined {
  if (a.user) return a.mutant ? `PLANTED DEFECT (user arm): ${userArm(a.op as 'conv' | 'postconv', a.name)?.plantedDefect ?? ''}` : 'user arm (defineArm)';
  return a.mutant ? 'PLANTED MUTANT (wrong f32 bits)' : undefined;
}

/** Elements of a and b whose raw bits differ (tensors of one shape and dtype). */
function bitDiff(a: Tensor, b: Tensor): number {
  return countBitMismatches(a, b);
}

export interface BenchOptions {
  backend: Backend;
  quick?: boolean;
  /** Run PyTorch eager on the same shapes (CUDA only; needs python3 with torch). */
  torch?: boolean;
  python?: string;
  /** The folder made by bench/pack-vllm.sh: vLLM's own Triton kernels are timed beside ours (CUDA only). */
  vllmPath?: string;
  timing?: TimingOptions;
  /** Keep every timing run with its raw samples in report.timings. */
  samples?: boolean;
  /** Only these arms (conv: an arm name for all its mappings, or 'arm/mapping'); the reference still validates. */
  arms?: string[];
  /** Only the shapes whose name contains one of these strings. */
  shapes?: string[];
  log?: (line: string) => void;
  /**
   * Called with a copy of the report so far (its `incomplete` set) after each shape and before each external
   * baseline (PyTorch, vLLM), so that a run cut short still leaves what it measured (the CLI writes it to the
   * --json / --markdown files).
   */
  onProgress?: (partial: BenchReport) => void;
}

/** Hands the report so far to opts.onProgress, marked with how far the run had got. */
function checkpoint(report: BenchReport, opts: BenchOptions, reached: string): void {
  // A copy: the run goes on appending to report's arrays.
  if (opts.onProgress) opts.onProgress(structuredClone({ ...report, incomplete: `written after ${reached}, before the run's end` }));
}

/** The checkpoint after shape i of a bench's shapes. */
function shapeDone(report: BenchReport, opts: BenchOptions, shapes: readonly { id: string }[], i: number): void {
  checkpoint(report, opts, `shape ${i + 1} of ${shapes.length} (${shapes[i].id})`);
}

/** The benchmark shapes opts.shapes selects (all without it); a filter matching nothing is an error. */
export function selectShapes<S extends { id: string }>(all: S[], opts: BenchOptions): S[] {
  if (!opts.shapes || opts.shapes.length === 0) return all;
  const picked = all.filter((s) => opts.shapes!.some((f) => s.id.includes(f)));
  if (picked.length === 0) throw new RangeError(`shapes: ${JSON.stringify(opts.shapes)} match none of ${all.map((s) => `'${s.id}'`).join(', ')}`);
  return picked;
}

/** The timed arms opts.arms selects (all without it); a name that selects nothing is an error naming the choices. */
export function selectArms<A extends { arm: string; mapping?: string }>(all: A[], opts: BenchOptions): A[] {
  if (!opts.arms || opts.arms.length === 0) return all;
  const label = (a: A) => (a.mapping ? `${a.arm}/${a.mapping}` : a.arm);
  for (const want of opts.arms) {
    if (!all.some((a) => a.arm === want || label(a) === want)) throw new RangeError(`arms: '${want}' is not a timed arm; expected one of ${[...new Set(all.flatMap((a) => [a.arm, label(a)]))].join(', ')}`);
  }
  return all.filter((a) => opts.arms!.some((w) => a.arm === w || label(a) === w));
}

// validate: false: each bench compares every arm with its op's reference at the shape before it times it (its
// rows carry that count), so timeArms need not run the same comparison again; it still runs a cell-defined arm
// once first.
function defaultTiming(opts: BenchOptions): TimingOptions {
  return { backend: opts.backend, mode: 'cold', warmupMs: 150, minSamples: 30, minTimeMs: 20, noiseTarget: 0.01, maxTimeMs: opts.quick ? 1500 : 2500, progress: false, validate: false, ...opts.timing };
}

/**
 * Times one shape: the arms and a device copy of the same bytes, interleaved in one timeArms run;
 * appends the rows (ratios to that copy), the copy and why the run stopped to the report.
 */
async function timeShape(report: BenchReport, shape: string, bytes: number, opts: BenchOptions, cases: TimingCase[], mismatches: (label: string) => number): Promise<void> {
  const copy = copyOp(bytes, { backend: opts.backend, label: 'copy' });
  try {
    opts.log?.(`${report.op} ${shape}: timing ${cases.length} arms + copy (${(bytes / 1e6).toFixed(1)} MB)`);
    const result = await timeArms([...cases, { label: 'copy', op: copy, meta: { bytes } }], defaultTiming(opts));
    report.provenance ??= result.provenance;
    const copyUs = result.cases.find((c) => c.opKind === 'copy')!.stats.median;
    for (const c of result.cases.filter((x) => x.opKind !== 'copy')) {
      report.rows.push({
        shape,
        arm: String(c.meta.arm ?? c.label),
        mapping: c.meta.mapping as string | undefined,
        correct: mismatches(c.label) === 0,
        mismatches: mismatches(c.label),
        planted: c.meta.planted === true,
        medianUs: c.stats.median,
        p10Us: c.stats.p10,
        p90Us: c.stats.p90,
        n: c.stats.n,
        bytes,
        gbps: bytes / (c.stats.median * 1e3),
        xCopy: c.stats.median / copyUs,
        note: c.meta.note as string | undefined,
      });
    }
    report.copies.push({ shape, medianUs: copyUs, gbps: bytes / (copyUs * 1e3) });
    report.stops.push({ shape, reason: result.stop.reason, detail: result.stop.detail });
    report.timings?.push({ shape, ...result.toJSON() });
  } finally {
    copy.release();
  }
}

export async function benchConv(opts: BenchOptions): Promise<BenchReport> {
  const backend = opts.backend;
  const report: BenchReport = { op: 'conv', revision: revision(), provenance: null, torch: null, rows: [], copies: [], torchRows: [], baselines: [], stops: [], ...(opts.samples ? { timings: [] } : {}) };
  const shapes = selectShapes(convBenchShapes(opts.quick), opts);
  const timed = selectArms(convTimed(), opts);
  for (const [i, shape] of shapes.entries()) {
    const T = shape.lengths.reduce((a, b) => a + b, 0);
    const K = 4;
    const qsl = [0];
    for (const l of shape.lengths) qsl.push(qsl[qsl.length - 1] + l);
    const inputs = {
      x: Tensor.random([T, shape.C], 'bf16', { seed: 1 }).to(backend),
      weight: Tensor.random([shape.C, K], 'bf16', { seed: 2, scale: 0.5 }).to(backend),
      queryStartLoc: qsl,
      hasInitialState: shape.initialState,
      convState: Tensor.random([shape.lengths.length, shape.C, K - 1], 'f32', { seed: 3 }).to(backend),
    };
    const nInitial = shape.initialState.filter(Boolean).length;
    const bytes = conv.convBytes({ T, C: shape.C, K, N: shape.lengths.length, nInitial, xBytes: 2, outBytes: 2 });
    // Bits first: every timed arm/mapping against the reference arm at this shape, in this run.
    const mismatch = new Map<string, number>();
    // The inputs are released in the finally below, also when a check throws (a notebook's kernel lives on).
    let ops: (ReturnType<typeof convTimed>[number] & { op: ReturnType<typeof conv.prepareTimed> })[] = [];
    try {
      const ref = await conv.forward(inputs, { arm: referenceArm('conv').name, mapping: 'sequence', outDtype: 'bf16', backend });
      try {
        for (const a of timed) {
          const r = await conv.forward(inputs, { arm: a.arm, mapping: a.mapping, outDtype: 'bf16', backend });
          mismatch.set(`${a.arm}/${a.mapping}`, bitDiff(r.out, ref.out) + bitDiff(r.convState, ref.convState));
          r.release();
        }
      } finally {
        ref.release();
      }
      ops = timed.map((a) => ({ ...a, op: conv.prepareTimed(inputs, { arm: a.arm, mapping: a.mapping, outDtype: 'bf16', backend }, `${a.arm}/${a.mapping}`) }));
      await timeShape(report, shape.id, bytes, opts,
        ops.map((o) => ({ label: `${o.arm}/${o.mapping}`, op: o.op, meta: { arm: o.arm, mapping: o.mapping, shape: shape.id, C: shape.C, K, T, dtype: 'bf16', note: o.note, planted: o.planted } })),
        (label) => mismatch.get(label) ?? Number.NaN);
    } finally {
      for (const o of ops) o.op.release();
      inputs.x.release();
      inputs.weight.release();
      inputs.convState.release();
    }
    shapeDone(report, opts, shapes, i);
  }
  attachBaselines(report, backend, opts, shapes.map((s) => ({ op: 'conv', id: s.id, C: s.C, K: 4, lengths: s.lengths, initial_state: s.initialState })));
  return report;
}

// ------------------------------------------------------------------------------------------ post-conv

export interface PostconvBenchShape {
  id: string;
  T: number;
  Hk: number;
  Hv: number;
}

export function postconvBenchShapes(quick = false): PostconvBenchShape[] {
  const Ts = quick ? [32, 64] : [512, 2048, 8192, 32768];
  const shapes: PostconvBenchShape[] = [];
  for (const Hv of [32, 48]) {
    const model = Hv === 32 ? 'Qwen3.5-4B' : 'Qwen3.5-27B';
    for (const T of Ts) shapes.push({ id: `${model} (Hk=16, Hv=${Hv}) T=${T}`, T, Hk: 16, Hv });
  }
  return shapes;
}

export async function benchPostconv(opts: BenchOptions): Promise<BenchReport> {
  const backend = opts.backend;
  const report: BenchReport = { op: 'postconv', revision: revision(), provenance: null, torch: null, rows: [], copies: [], torchRows: [], baselines: [], stops: [], ...(opts.samples ? { timings: [] } : {}) };
  const table = selectArms(arms('postconv').map((a) => ({ ...a, arm: a.name })), opts);
  const reference = referenceArm('postconv').name;
  const shapes = selectShapes(postconvBenchShapes(opts.quick), opts);
  for (const [i, shape] of shapes.entries()) {
    const dims = { Hk: shape.Hk, Hv: shape.Hv, Dk: 128, Dv: 128 };
    const C = 2 * dims.Hk * dims.Dk + dims.Hv * dims.Dv;
    const packed = Tensor.random([shape.T, 2 * dims.Hv], 'bf16', { seed: 5 }).to(backend);
    const inputs = {
      convOut: Tensor.random([shape.T, C], 'bf16', { seed: 4 }).to(backend),
      b: packed.sliceCols(0, dims.Hv),
      a: packed.sliceCols(dims.Hv, dims.Hv),
      ALog: Tensor.random([dims.Hv], 'f32', { seed: 6 }).to(backend),
      dtBias: Tensor.random([dims.Hv], 'f32', { seed: 7 }).to(backend),
    };
    const bytes = postconv.postconvBytes(shape.T, dims, 2, 2, 2);
    // Bits first: every arm's five outputs against the reference arm's at this shape, in this run.
    const mismatch = new Map<string, number>();
    // The inputs are released in the finally below, also when a check throws (a notebook's kernel lives on).
    let ops: { arm: string; note: string | undefined; planted: boolean; op: ReturnType<typeof postconv.prepareTimed> }[] = [];
    try {
      const ref = await postconv.forward(inputs, { ...dims, arm: reference, qkvDtype: 'bf16', backend });
      try {
        for (const a of table) {
          const r = await postconv.forward(inputs, { ...dims, arm: a.name, qkvDtype: 'bf16', backend });
          mismatch.set(a.name, (['q', 'k', 'v', 'g', 'beta'] as const).reduce((n, o) => n + bitDiff(r[o], ref[o]), 0));
          r.release();
        }
      } finally {
        ref.release();
      }
      ops = table.map((a) => ({ arm: a.name, note: armNote(a), planted: a.mutant, op: postconv.prepareTimed(inputs, { ...dims, arm: a.name, qkvDtype: 'bf16', backend }, a.name) }));
      await timeShape(report, shape.id, bytes, opts,
        ops.map((o) => ({ label: o.arm, op: o.op, meta: { arm: o.arm, shape: shape.id, T: shape.T, ...dims, dtype: 'bf16', note: o.note, planted: o.planted } })),
        (label) => mismatch.get(label) ?? Number.NaN);
    } finally {
      for (const o of ops) o.op.release();
      packed.release();
      inputs.convOut.release();
      inputs.ALog.release();
      inputs.dtBias.release();
    }
    shapeDone(report, opts, shapes, i);
  }
  attachBaselines(report, backend, opts, shapes.map((s) => ({ op: 'postconv', id: s.id, T: s.T, Hk: s.Hk, Hv: s.Hv, Dk: 128, Dv: 128 })));
  return report;
}

// ------------------------------------------------------------------------------------------ fused

export interface FusedBenchShape {
  id: string;
  Hk: number;
  Hv: number;
  lengths: number[];
  initialState: boolean[];
}

export function fusedBenchShapes(quick = false): FusedBenchShape[] {
  const shapes: FusedBenchShape[] = [];
  for (const Hv of [32, 48]) {
    const model = Hv === 32 ? 'Qwen3.5-4B' : 'Qwen3.5-27B';
    // --quick (host): the toy layout Hk = 1, Hv = 2 at the same head size.
    const Hk = quick ? 1 : 16;
    const hv = quick ? Hv / 16 : Hv;
    for (const T of quick ? [64, 256] : [2048, 8192, 32768]) shapes.push({ id: `${model}${quick ? ' (quick: Hk=1, Hv=' + hv + ')' : ''} T=${T}`, Hk, Hv: hv, lengths: [T], initialState: [false] });
    const lengths = quick ? varlenLengths(128, 8) : varlenLengths();
    shapes.push({ id: `${model}${quick ? ' (quick)' : ''} varlen ${lengths.length}×, ${lengths.reduce((a, b) => a + b, 0)} tok`, Hk, Hv: hv, lengths, initialState: lengths.map((_, i) => i % 2 === 0) });
  }
  return shapes;
}

/**
 * The conv arm/mapping of the timed chain: the fastest conv arm measured on an H200 (docs/BENCHMARKS.md,
 * "Causal conv, prefill"), `stream-mufu`/exact, where libgdn lists it; else `stream`/exact, else `vec`/exact. A fixed
 * rule rather than "the fastest arm of this run", so that the chain a fused ratio is taken against is the
 * same in every run on every machine with the same library.
 */
export function fusedChainConv(): { arm: conv.ConvArm; mapping: conv.ConvMapping } {
  const names = arms('conv').map((a) => a.name);
  return { arm: ['stream-mufu', 'stream'].find((n) => names.includes(n)) ?? 'vec', mapping: 'exact' };
}
/** The post-conv arm of the timed chain, by the same rule: `vec-tile` (fastest measured) where listed, else `token-tile`. */
export function fusedChainPostconv(): postconv.PostconvArm {
  return arms('postconv').some((a) => a.name === 'vec-tile') ? 'vec-tile' : 'token-tile';
}

/**
 * The fused op beside the two-op chain it replaces, in one run per shape: every correct fused arm
 * (checkedFusedArms: all the registry lists but planted mutants), the chain's conv step
 * (fusedChainConv) and post-conv step (fusedChainPostconv), and a device copy of the fused op's own traffic
 * (x read, q/k/v/g/beta written, a/b read, the state read and written). Before timing, each fused arm's
 * outputs and the chain's are compared bit for bit with the reference chain conv(scalar) → post-conv(tree)
 * at the benchmark shape; a row that differs is marked incorrect. The chain row (sum of the two step
 * medians) gives fused / chain for every fused arm.
 */
export async function benchFused(opts: BenchOptions): Promise<BenchReport> {
  const backend = opts.backend;
  const report: BenchReport = { op: 'fused', revision: revision(), provenance: null, torch: { error: 'bench/torch_reference.py has no fused case; bench conv and bench postconv time each step against PyTorch' }, rows: [], copies: [], torchRows: [], baselines: [], stops: [] };
  const K = 4;
  const D = fused.FUSED_HEAD_DIM;
  const fusedArms = checkedFusedArms();
  const chainConv = fusedChainConv();
  const chainPost = fusedChainPostconv();
  const postLabel = `postconv ${chainPost}`;
  const chainName = `${chainConv.arm} → ${chainPost}`;
  if (opts.arms && opts.arms.length) throw new RangeError(`arms: bench fused times its fixed set (fused ${fusedArms.join(', ')}; the ${chainName} chain); use --shapes to pick shapes`);
  const shapes = selectShapes(fusedBenchShapes(opts.quick), opts);
  for (const [i, shape] of shapes.entries()) {
    const T = shape.lengths.reduce((a, b) => a + b, 0);
    const N = shape.lengths.length;
    const dims = { Hk: shape.Hk, Hv: shape.Hv, Dk: D, Dv: D };
    const C = (2 * shape.Hk + shape.Hv) * D;
    const qsl = [0];
    for (const l of shape.lengths) qsl.push(qsl[qsl.length - 1] + l);
    const packed = Tensor.random([T, 2 * shape.Hv], 'bf16', { seed: 5, scale: 2 }).to(backend);
    const inputs: fused.FusedInputs = {
      x: Tensor.random([T, C], 'bf16', { seed: 1 }).to(backend),
      weight: Tensor.random([C, K], 'bf16', { seed: 2, scale: 0.5 }).to(backend),
      queryStartLoc: qsl,
      hasInitialState: shape.initialState,
      convState: Tensor.random([N, C, K - 1], 'f32', { seed: 3 }).to(backend),
      b: packed.sliceCols(0, shape.Hv),
      a: packed.sliceCols(shape.Hv, shape.Hv),
      ALog: Tensor.random([shape.Hv], 'f32', { seed: 6, scale: 0.5 }).to(backend),
      dtBias: Tensor.random([shape.Hv], 'f32', { seed: 7 }).to(backend),
    };
    const fopts: fused.FusedOptions = { ...dims, convDtype: 'bf16', qkvDtype: 'bf16', backend };
    const convInputs = { x: inputs.x, weight: inputs.weight, queryStartLoc: qsl, hasInitialState: shape.initialState, convState: inputs.convState };
    const describeDiff = (m: ReturnType<typeof compareFused>) => FUSED_OUTPUTS.map((o) => `${o} ${m[o]}`).join(', ');
    const convLabel = `conv ${chainConv.arm}/${chainConv.mapping}`;
    // The chain's two steps, as validated and as timed: the same options and inputs for both.
    const convOpts = { ...chainConv, outDtype: 'bf16' as const, backend };
    const postOpts = { ...dims, arm: chainPost, qkvDtype: 'bf16' as const, backend };
    const postInputsOf = (convOut: Tensor) => ({ convOut, a: inputs.a, b: inputs.b, ALog: inputs.ALog, dtBias: inputs.dtBias });
    const ops: { label: string; op: ReturnType<typeof fused.prepareTimed>; meta: Record<string, unknown> }[] = [];
    let convFast: conv.ConvResult | null = null;
    let postFast: postconv.PostconvResult | null = null;
    try {
      // ---- validation at the benchmark shape: every fused arm and the chain against the reference chain
      const checked: { arm: string; label: string; mismatches: number; ranNote: string; diff: string }[] = [];
      let chainMismatches = 0;
      let chainDiff = '';
      const ref = await fused.chain(inputs, fopts);
      try {
        for (const arm of fusedArms) {
          const got = await fused.forward(inputs, { ...fopts, arm });
          const d = compareFused(got, ref);
          // A fallback is named: the row then times the arm that ran, under the name asked for.
          checked.push({ arm, label: `fused ${arm}`, mismatches: totalMismatches(d), ranNote: got.launch.arm === arm ? '' : `; fell back to ${got.launch.arm}`, diff: describeDiff(d) });
          got.release();
        }
        convFast = await conv.forward(convInputs, convOpts);
        postFast = await postconv.forward(postInputsOf(convFast.out), postOpts);
        const d = compareFused({ ...postFast, convState: convFast.convState, release: () => undefined }, ref);
        chainMismatches = totalMismatches(d);
        chainDiff = describeDiff(d);
      } finally {
        ref.release();
      }
      for (const f of checked) if (f.mismatches) opts.log?.(`fused ${shape.id}: ${f.label} MISMATCH vs conv(scalar)→post-conv(tree): ${f.diff}`);
      if (chainMismatches) opts.log?.(`fused ${shape.id}: ${chainName} chain MISMATCH vs the reference chain: ${chainDiff}`);
      // ---- timing: every fused arm, the chain's conv and post-conv steps and a copy of the fused traffic, interleaved
      const bytes = fused.fusedBytes(T, dims, { xBytes: 2, qkvBytes: 2, gateBytes: 2, N, nInitial: shape.initialState.filter(Boolean).length, K });
      const convRan = `${convFast.contract.arm}/${convFast.contract.mapping}`;
      const mismatchOf = new Map<string, number>([[convLabel, chainMismatches], [postLabel, chainMismatches]]);
      for (const f of checked) {
        mismatchOf.set(f.label, f.mismatches);
        ops.push({ label: f.label, op: fused.prepareTimed(inputs, { ...fopts, arm: f.arm }, f.label), meta: { arm: f.label, note: (f.mismatches ? `MISMATCH: ${f.diff}` : 'bits == conv(scalar)→post-conv(tree)') + f.ranNote } });
      }
      ops.push({ label: convLabel, op: conv.prepareTimed(convInputs, convOpts, convLabel),
        meta: { arm: `conv ${chainConv.arm}`, mapping: chainConv.mapping, note: `step 1 of the ${chainName} chain${convRan === `${chainConv.arm}/${chainConv.mapping}` ? '' : ` (ran ${convRan})`}; ×copy vs the fused traffic` } });
      ops.push({ label: postLabel, op: postconv.prepareTimed(postInputsOf(convFast.out), postOpts, postLabel),
        meta: { arm: postLabel, note: `step 2 of the ${chainName} chain; ×copy vs the fused traffic` } });
      const first = report.rows.length;
      await timeShape(report, shape.id, bytes, opts,
        ops.map((o) => ({ label: o.label, op: o.op, meta: { ...o.meta, shape: shape.id, T, ...dims, K, dtype: 'bf16' } })),
        (label) => mismatchOf.get(label)!);
      const rows = report.rows.slice(first);
      const c1 = rows.find((r) => r.arm === `conv ${chainConv.arm}`)!;
      const c2 = rows.find((r) => r.arm === postLabel)!;
      const chainUs = c1.medianUs + c2.medianUs;
      const copyUs = report.copies[report.copies.length - 1].medianUs;
      const ratios = checked.map((f) => `${f.label} / chain = ${(rows.find((r) => r.arm === f.label)!.medianUs / chainUs).toFixed(3)}`).join('; ');
      report.rows.push({
        shape: shape.id, arm: `chain ${chainName}`, correct: chainMismatches === 0, mismatches: chainMismatches, medianUs: chainUs, p10Us: NaN, p90Us: NaN, n: Math.min(c1.n, c2.n),
        bytes, gbps: bytes / (chainUs * 1e3), xCopy: chainUs / copyUs, note: `sum of the two medians (${convLabel} + ${postLabel}); ${ratios}`,
      });
    } finally {
      for (const o of ops) o.op.release();
      postFast?.release();
      convFast?.release();
      packed.release();
      for (const t of [inputs.x, inputs.weight, inputs.convState, inputs.ALog, inputs.dtBias]) t.release();
    }
    shapeDone(report, opts, shapes, i);
  }
  if (opts.vllmPath && backend.kind === 'cuda') attachVllmChain(report, opts);
  return report;
}

/**
 * vLLM's own Triton conv and post-conv (bench/vllm_reference.py, same GPU, same invocation, its own
 * process and its own copy) on each fused shape: one row per shape with the sum of the two medians, and
 * (fused arm) / (vLLM conv + post-conv) for every fused arm timed at the shape in its note. vLLM is less exact than the chain (SPEC "Numbers worth
 * knowing"), so its row is marked as not bit-identical.
 */
function attachVllmChain(report: BenchReport, opts: BenchOptions): void {
  const script = path.join(projectRoot(), 'bench', 'vllm_reference.py');
  const python = opts.python ?? process.env.GDN_TORCH_PYTHON ?? 'python3';
  const shapes = selectShapes(fusedBenchShapes(opts.quick), opts);
  const cases = shapes.flatMap((s) => [
    { op: 'conv', id: `${s.id} conv`, C: (2 * s.Hk + s.Hv) * fused.FUSED_HEAD_DIM, K: 4, lengths: s.lengths, initial_state: s.initialState },
    { op: 'postconv', id: `${s.id} postconv`, T: s.lengths.reduce((a, b) => a + b, 0), Hk: s.Hk, Hv: s.Hv, Dk: fused.FUSED_HEAD_DIM, Dv: fused.FUSED_HEAD_DIM },
  ]);
  opts.log?.(`vLLM conv + post-conv: ${python} ${script} --vllm-path ${opts.vllmPath} (${cases.length} cases)`);
  const run = spawnSync(python, [script, '--vllm-path', opts.vllmPath!], { input: JSON.stringify(cases), encoding: 'utf8', timeout: 15 * 60 * 1000, maxBuffer: 1 << 24 });
  if (run.status !== 0) {
    report.stops.push({ shape: 'vLLM', reason: 'error', detail: `${python} exited ${run.status}: ${(run.stderr || '').trim().split('\n').slice(-3).join(' | ')}` });
    return;
  }
  const lines = run.stdout.trim().split('\n').map((l) => JSON.parse(l));
  const head = lines.shift();
  const byId = new Map<string, BaselineResult>(lines.map((r) => [r.id as string, r as BaselineResult]));
  for (const r of byId.values()) report.baselines.push(baselineMethods('vLLM', r.id, r));
  for (const s of shapes) {
    const c = byId.get(`${s.id} conv`);
    const p = byId.get(`${s.id} postconv`);
    // Every fused arm timed at this shape (benchFused labels them 'fused <arm>'), each with its ratio.
    const fusedRows = report.rows.filter((r) => r.shape === s.id && r.arm.startsWith('fused '));
    const copy = report.copies.find((x) => x.shape === s.id);
    if (!c || !p || !fusedRows.length || !copy) continue;
    const us = c.median_us + p.median_us;
    const trustC = baselineTrust(c);
    const trustP = baselineTrust(p);
    const trusted = trustC.ok && trustP.ok;
    report.rows.push({
      shape: s.id, arm: 'vLLM conv + post-conv', correct: false, mismatches: NaN, medianUs: us, p10Us: NaN, p90Us: NaN, n: Math.min(c.n, p.n),
      bytes: fusedRows[0].bytes, gbps: fusedRows[0].bytes / (us * 1e3), xCopy: us / copy.medianUs,
      note: `${trusted ? '' : `NOT COMPARABLE: conv: ${trustPart(trustC.note)}; post-conv: ${trustPart(trustP.note)}. `}vLLM ${head.vllm} (its own process, host ahead of the GPU): conv ${c.median_us.toFixed(1)} µs (${c.x_copy.toFixed(2)}x its copy) + post-conv ${p.median_us.toFixed(1)} µs (${p.x_copy.toFixed(2)}x)${trusted ? `; ${fusedRows.map((f) => `${f.arm} / vLLM = ${(f.medianUs / us).toFixed(3)}`).join('; ')}` : ''}; not bit-exact (bf16-rounded products, approximate softplus)`,
    });
  }
}

/**
 * The baselines of the same shapes, on CUDA only (they need a GPU): PyTorch eager with --torch, and vLLM's Triton
 * kernels too with --vllm-path.
 */
function attachBaselines(report: BenchReport, backend: Backend, opts: BenchOptions, cases: Record<string, unknown>[]): void {
  if (!opts.torch || backend.kind !== 'cuda') return;
  attachTorch(report, cases, opts);
  if (opts.vllmPath) attachVllm(report, cases, opts);
}

/**
 * vLLM's own Triton kernel for each shape (bench/vllm_reference.py: same GPU, same invocation, its own
 * process, which times a copy of the same traffic beside it). Its ×copy is against that process's copy;
 * the note gives our fastest bit-correct arm's ×copy beside it. vLLM is not bit-exact (SPEC §11), so its
 * row is never marked correct.
 */
function attachVllm(report: BenchReport, cases: Record<string, unknown>[], opts: BenchOptions): void {
  checkpoint(report, opts, 'every shape and the PyTorch baselines');  // vLLM's process may not come back in time
  const script = path.join(projectRoot(), 'bench', 'vllm_reference.py');
  const python = opts.python ?? process.env.GDN_TORCH_PYTHON ?? 'python3';
  opts.log?.(`vLLM Triton kernels: ${python} ${script} --vllm-path ${opts.vllmPath} (${cases.length} shapes)`);
  const run = spawnSync(python, [script, '--vllm-path', opts.vllmPath!], { input: JSON.stringify(cases), encoding: 'utf8', timeout: 15 * 60 * 1000, maxBuffer: 1 << 24 });
  if (run.status !== 0) {
    report.stops.push({ shape: 'vLLM', reason: 'error', detail: `${python} exited ${run.status}: ${(run.stderr || '').trim().split('\n').slice(-3).join(' | ')}` });
    return;
  }
  const lines = run.stdout.trim().split('\n').map((l) => JSON.parse(l));
  const head = lines.shift();
  for (const v of lines as BaselineResult[]) {
    report.baselines.push(baselineMethods('vLLM', v.id, v));
    const ours = report.rows.filter((r) => r.shape === v.id && r.correct && !r.planted).sort((a, b) => a.medianUs - b.medianUs)[0];
    const trust = baselineTrust(v);
    report.rows.push({
      shape: v.id, arm: 'vLLM (Triton)', correct: false, mismatches: NaN, medianUs: v.median_us, p10Us: v.p10_us, p90Us: v.p90_us, n: v.n,
      bytes: v.bytes, gbps: v.bytes / (v.median_us * 1e3), xCopy: v.x_copy,
      note: `${trust.note}${head.vllm}, triton ${head.triton}, its own process, host ahead of the GPU: ×copy against its own copy (${v.copy_median_us.toFixed(1)} µs); not bit-exact`
        + (ours && trust.ok ? `; fastest correct arm ${ours.arm}${ours.mapping ? '/' + ours.mapping : ''} ${ours.xCopy.toFixed(2)}× copy = ${(ours.xCopy / v.x_copy).toFixed(2)}× vLLM's time (copy-normalised; ${(ours.medianUs / v.median_us).toFixed(2)}× in µs)` : ''),
    });
  }
}

/**
 * Whether a baseline's time may be set beside ours: its outputs passed the harness's check against a
 * float32 formula (bench/vllm_reference.py, "check"), and it is not faster than a copy of its own traffic
 * (below that floor it cannot have read and written every element). The note says which failed.
 */
export function baselineTrust(v: { x_copy: number; check?: { ok: boolean; error?: string; max_excess_err?: unknown } }): { ok: boolean; note: string } {
  const why: string[] = [];
  if (!v.check) why.push('outputs not checked');
  else if (!v.check.ok) why.push(`output check FAILED (${v.check.error ?? `max excess error ${JSON.stringify(v.check.max_excess_err)}`})`);
  if (v.x_copy < 0.95) why.push(`${v.x_copy.toFixed(2)}× its copy is BELOW THE COPY FLOOR: it cannot have moved its bytes`);
  return why.length ? { ok: false, note: `NOT COMPARABLE: ${why.join('; ')}. ` } : { ok: true, note: 'outputs checked against a float32 formula; ' };
}

// One side's trust note inside the chain's: without its own "NOT COMPARABLE: " (the chain's note says it once)
// and its closing punctuation, so the two sides read as one sentence.
function trustPart(note: string): string {
  const untrusted = 'NOT COMPARABLE: ';
  const reasons = note.startsWith(untrusted) ? note.slice(untrusted.length) : note;
  return reasons.trimEnd().slice(0, -1); // baselineTrust ends each note with '. ' or '; '
}

// ------------------------------------------------------------------------------------------ PyTorch

/** Runs bench/torch_reference.py on the same GPU and attaches its medians and our ratios to them. */
function attachTorch(report: BenchReport, cases: Record<string, unknown>[], opts: BenchOptions): void {
  const script = path.join(projectRoot(), 'bench', 'torch_reference.py');
  const python = opts.python ?? process.env.GDN_TORCH_PYTHON ?? 'python3';
  opts.log?.(`PyTorch eager baselines: ${python} ${script} (${cases.length} shapes)`);
  const run = spawnSync(python, [script], { input: JSON.stringify(cases), encoding: 'utf8', timeout: 15 * 60 * 1000, maxBuffer: 1 << 24 });
  if (run.status !== 0) {
    report.torch = { error: `${python} exited ${run.status}: ${(run.stderr || '').trim().split('\n').slice(-3).join(' | ')}` };
    return;
  }
  const lines = run.stdout.trim().split('\n').map((l) => JSON.parse(l));
  const head = lines.shift();
  report.torch = { version: head.torch, cuda: head.cuda, device: head.device };
  for (const r of lines as BaselineResult[]) {
    report.baselines.push(baselineMethods('PyTorch eager', r.id, r));
    report.torchRows.push({ shape: r.id, medianUs: r.median_us, p10Us: r.p10_us, p90Us: r.p90_us, n: r.n });
    for (const row of report.rows) if (row.shape === r.id) row.xTorch = row.medianUs / r.median_us;
  }
}

// ------------------------------------------------------------------------------------------ reports

const f = (x: number | undefined, d = 2) => (x === undefined || !Number.isFinite(x) ? '–' : x.toFixed(d));

/** The report as Markdown: a provenance block, then one table per shape. */
export function benchMarkdown(r: BenchReport, command: string): string {
  const p = r.provenance;
  const lines: string[] = [];
  lines.push(`### ${r.op === 'conv' ? 'Causal conv' : r.op === 'postconv' ? 'Post-conv' : 'Fused conv → post-conv'} — \`${command}\``, '');
  if (r.incomplete) lines.push(`**Incomplete**: ${r.incomplete} (the run was stopped or is still going; the rows below are what it had measured).`, '');
  if (p) {
    lines.push(`- device: ${p.device} (sm_${p.sm.replace('.', '')}, ${p.smCount} SMs, L2 ${(p.l2Bytes / 2 ** 20).toFixed(0)} MiB); driver ${p.driver || '?'}, runtime ${p.runtime || '?'}`);
    lines.push(`- clocks at start: SM ${p.smClockMhz} MHz (max ${p.maxSmClockMhz}), memory ${p.memClockMhz} MHz (max ${p.maxMemClockMhz}) [${p.clocksSource}]; at end of the first shape: SM ${p.clocksAfter.smClockMhz}, memory ${p.clocksAfter.memClockMhz} MHz`);
    lines.push(`- revision ${r.revision}, arithmetic v${p.arithmetic}; run ${p.runId} at ${p.time}; ${p.mode} L2 (flushed outside every timed launch), arms interleaved with rotated order`);
  }
  if (r.torch && 'version' in r.torch) lines.push(`- PyTorch ${r.torch.version} (CUDA ${r.torch.cuda}) on ${r.torch.device}, same invocation, CUDA events, L2 flushed before each call, host ahead of the GPU (bench/fair_timing.py)`);
  else if (r.torch) lines.push(`- PyTorch: not measured (${r.torch.error})`);
  lines.push('- µs per launch: median [p10, p90]; GB/s = minimal bytes moved / median; ×copy = median / median of a device copy of the same bytes in the same run; ×torch = median / PyTorch eager median', '');
  for (const shape of [...new Set(r.rows.map((x) => x.shape))]) {
    const copy = r.copies.find((c) => c.shape === shape)!;
    const torch = r.torchRows.find((t) => t.shape === shape);
    lines.push(`**${shape}** — copy ${f(copy.medianUs, 1)} µs (${f(copy.gbps, 0)} GB/s)${torch ? `; PyTorch eager ${f(torch.medianUs, 1)} µs [${f(torch.p10Us, 1)}, ${f(torch.p90Us, 1)}]` : ''}`, '');
    lines.push('| arm | mapping | median µs | p10 | p90 | n | GB/s | ×copy | ×torch | note |', '|---|---|---:|---:|---:|---:|---:|---:|---:|---|');
    for (const row of r.rows.filter((x) => x.shape === shape)) {
      const note = [row.correct ? '' : `${Number.isNaN(row.mismatches) ? 'bits not checked' : `${row.mismatches} elements differ from the reference arm`}${row.mapping === 'exact-racy' ? ' (the #305 race)' : ''}`, row.note ?? ''].filter(Boolean).join('; ');
      lines.push(`| ${row.arm} | ${row.mapping ?? ''} | ${f(row.medianUs, 1)} | ${f(row.p10Us, 1)} | ${f(row.p90Us, 1)} | ${row.n} | ${f(row.gbps, 0)} | ${f(row.xCopy)} | ${f(row.xTorch)} | ${note} |`);
    }
    lines.push('');
  }
  if (r.baselines.length) {
    lines.push('**External baselines by timing method** — fair: a GPU-side hold keeps the host ahead, so the call\'s host time is not counted (every ratio above uses it); naive: the host synchronised after every sample, no hold; graph: a CUDA-graph replay of the call, host ahead', '');
    lines.push('| baseline | shape | fair µs | naive µs | naive / fair | graph µs | graph / fair |', '|---|---|---:|---:|---:|---:|---:|');
    for (const b of r.baselines) {
      lines.push(`| ${b.baseline} | ${b.shape} | ${f(b.fairUs, 1)} | ${f(b.naiveUs, 1)} | ${f(b.naiveUs / b.fairUs)} | ${b.graphUs === null ? `– (${b.graphError ?? 'not captured'})` : f(b.graphUs, 1)} | ${b.graphUs === null ? '–' : f(b.graphUs / b.fairUs)} |`);
    }
    const holds = r.baselines.map((b) => b.holdUs).filter(Number.isFinite);
    lines.push('', `Final GPU-side hold ${holds.length ? Math.max(...holds).toFixed(0) : '–'} µs; samples retaken because the host was behind: ${r.baselines.reduce((n, b) => Math.max(n, b.retaken), 0)} (cumulative per process).`, '');
  }
  return lines.join('\n');
}

export function writeJson(file: string, value: unknown): void {
  fs.mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
  fs.writeFileSync(file, JSON.stringify(value, null, 2) + '\n');
}
