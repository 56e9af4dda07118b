// Honest timing of ops ("arms") on a backend, on top of backend.timeOps (samples measured in
// native code: CUDA events around each launch on the GPU, a monotonic clock on the host backend).
//
// timeArms(cases):
//   1. warm-up for a time budget (samples discarded), which also measures how long a round takes;
//   2. batches of rounds; every batch times all cases in ONE timeOps call, each round launching every
//      case once (rotated start), so clock drift and thermal changes hit all arms alike;
//      cold mode (default) flushes L2 before each launch outside the timed region, hot ('warm') mode
//      does not; mode 'both' times every case cold AND warm in the same run (alternating batches),
//      so the two L2 states sit side by side; graphLaunches G > 0 times CUDA-graph replays of G
//      back-to-back launches (per-launch time = replay / G: no launch overhead, warm L2; on the host
//      backend G back-to-back runs, labelled as the emulation it is);
//   3. after each batch it stops when every case has minSamples samples, minTimeMs of measured time
//      and noise ≤ noiseTarget ('noise-target'), or when the wall time reaches maxTimeMs ('time-cap'),
//      or a case reaches maxSamples ('max-samples'); the reason is reported. A kernel interrupt (or
//      opts.signal) aborts between batches.
// compare(a, b): ratio of medians a/b with a seeded bootstrap CI and a verdict:
//   'same'    the whole CI lies inside the equivalence band [1/(1+δ), 1+δ] (δ = 0.02 by default):
//             any difference is smaller than the band, even when it is resolvable;
//   'faster'  otherwise, CI entirely below 1 (a takes less time than b);
//   'slower'  otherwise, CI entirely above 1;
//   'unclear' otherwise (the CI straddles 1 and reaches outside the band: measure more), and
//             always when either case has fewer than 10 samples (a bootstrap of a handful of
//             samples gives intervals far narrower than the truth).
// The default noise target (CI half-width ≤ 1% of the median per case) keeps the ratio's CI
// narrow enough (about ±1.4%) to decide 'same' against the ±2% band.
// Results carry provenance (device, clocks, driver, revision, time, run id, each case's meta), and
// every raw sample: result.toJSON() / result.samplesCsv() / result.save(file) export them.
// Tables show times in µs or ms with 4 significant digits, and, when a copy op was timed in the
// run, each case's % of the copy roofline (copy median / case median, same L2 state).
// Comparing results of different runs is refused unless { acrossRuns: true }, and then labelled.

import { randomBytes } from 'crypto';
import * as fs from 'fs';
import * as path from 'path';
import * as os from 'os';
import type { Backend, DeviceInfo, NativeOp } from '../backend';
import { describe } from '../dtype';
import { ARITHMETIC_VERSION, revision } from '../provenance';
import { MIME_BUNDLE, MimeBundle, interrupted } from '../view/display';
import { CellFormat, escapeXml, formatDuration, formatNumber, formatPercent, htmlTable, textTable } from '../view/format';
import { progress } from '../view/progress';
import { NoiseMetric, RatioCI, Summary, bootstrapMedianRatio, relativeNoise, summarize } from './stats';
import { describeLocated, LocatedMismatch } from './located';

/** What timing needs from a backend (a real Backend, or a fake one in tests). */
export type TimingBackend = Pick<Backend, 'kind' | 'info' | 'timeOps'>;

export interface TimingCase {
  label: string;
  op: NativeOp;
  /** Provenance of this case: arm, mapping, shape, dtypes, … (copied into the result). */
  meta?: Record<string, unknown>;
}

export interface TimingOptions {
  /** Default: the active backend. */
  backend?: TimingBackend;
  /**
   * 'cold' (default): L2 flushed before each launch, outside the timed region; 'hot' (or 'warm'):
   * no flush; 'both': every case timed cold and warm in this one run (cases labelled
   * "<label> · cold L2" and "<label> · warm L2").
   */
  mode?: TimingMode | 'warm';
  /**
   * CUDA-graph replay: each sample is one replay of a graph of this many back-to-back launches,
   * divided by it (removes launch overhead from short kernels; L2 warm, so mode must be 'hot').
   * true = 20. On the host backend: that many back-to-back runs per sample (no graph exists there).
   */
  graphLaunches?: number | boolean;
  /** Round r starts at case r mod n (default true), so no case always follows the flush or another case. */
  rotateOrder?: boolean;
  /** Warm-up wall time budget in ms (default 200; at least one round). */
  warmupMs?: number;
  /** Target wall time of a batch in ms (default 250); sets rounds per batch from the warm-up. */
  batchMs?: number;
  /** Fixed rounds per batch (overrides batchMs). */
  roundsPerBatch?: number;
  /** Samples every case needs before stopping (default 30). */
  minSamples?: number;
  /** Measured time every case needs before stopping, ms (sum of its samples; default 50). */
  minTimeMs?: number;
  /** Relative noise every case must reach (default 0.01). */
  noiseTarget?: number;
  /** 'ci' (default): half-width of the median's 95% CI / median; 'iqr': IQR / median. */
  noiseMetric?: NoiseMetric;
  /** Wall time cap after warm-up, ms (default 10000). */
  maxTimeMs?: number;
  /** Samples per case at which to stop regardless of noise (default 100,000: enough for a 1% CI of any sane distribution, and the per-batch noise check stays cheap). */
  maxSamples?: number;
  /** Live progress display (default true). */
  progress?: boolean;
  /** Name of the run (progress label, summaries). */
  label?: string;
  signal?: AbortSignal;
  /** Wall clock in ms (tests inject a fake one). */
  clock?: () => number;
  /** Run id (default: time + random). */
  runId?: string;
  /**
   * Check each case's bits before timing (default true): a case prepared by conv/postconv/fused.prepareTimed
   * (or conv.prepareTimedUpdate) runs once at its inputs beside the op's reference arm, and the result
   * says per case whether its outputs are identical (CaseTiming.bits, a 'bits' column); a case that
   * differs is still timed, marked. Ops with no reference (copyOp, hand-made ops) are timed as they are.
   * false skips the comparison; an arm defined in a cell still runs once first, so that one that never
   * ends stops within its own time limit rather than inside a timing run.
   */
  validate?: boolean;
  /**
   * How a case prepared by an op is checked and probed before timing. gdnlab's `timeArms` (lib/check/timed.ts)
   * supplies it; this module sits below the ops and the checks and cannot reach them itself. A case with a
   * source and no checker is refused rather than timed unchecked.
   */
  bitsChecker?: BitsChecker;
}

/**
 * What a timed op was prepared from (conv/postconv/fused.prepareTimed, conv.prepareTimedUpdate): the op, its
 * inputs and options, so that timeArms can check the arm's bits against the op's reference arm at the very
 * inputs it times before timing them (lib/check/timed.ts).
 */
export interface TimedSource {
  op: 'conv' | 'conv-update' | 'postconv' | 'fused';
  inputs: unknown;
  opts: unknown;
}

/** A timed case's bits against its op's reference, taken before it was timed. */
export interface BitsCheck {
  /** The arm checked, as asked for (with its mapping for conv: 'vec/exact'). */
  arm: string;
  /** What it was compared with: the op's reference arm ('scalar', 'tree', …) or 'conv(scalar) → post-conv(tree)'. */
  reference: string;
  /** Elements whose bits differ, over every output. */
  mismatches: number;
  /** The first of them, located in the op's coordinates. */
  firstMismatch?: LocatedMismatch;
  /** Wrong on purpose (a planted mutant, a PLANTED DEFECT user arm, or a `mutant` option): must differ. */
  planted: boolean;
}

/** Checks a prepared case's bits (validate: true) or runs a cell-defined arm once (validate: false). */
export interface BitsChecker {
  check(source: TimedSource): Promise<BitsCheck>;
  probe(source: TimedSource): Promise<void>;
}

export interface RunProvenance {
  runId: string;
  /** ISO time the run started. */
  time: string;
  backend: string;
  device: string;
  /** Compute capability, e.g. "9.0" ("" on the host). */
  sm: string;
  smCount: number;
  l2Bytes: number;
  smClockMhz: number;
  memClockMhz: number;
  maxSmClockMhz: number;
  maxMemClockMhz: number;
  clocksSource: string;
  /** Clocks read again when the run ended. */
  clocksAfter: { smClockMhz: number; memClockMhz: number };
  driver: string;
  runtime: string;
  revision: string;
  /** ARITHMETIC_VERSION of lib/provenance.ts: results of different arithmetic are not compared. */
  arithmetic: number;
  host: string;
  node: string;
  mode: TimingMode;
  rotateOrder: boolean;
  /** 0: one timed launch per sample; G: CUDA-graph replays of G launches (host: G back-to-back runs). */
  graphLaunches: number;
  /** How a sample was measured, in words (shown under tables and plots). */
  method: string;
}

export type TimingMode = 'cold' | 'hot' | 'both';

export interface CaseTiming {
  label: string;
  /** The case's label as given (without the " · cold L2" suffix of mode 'both'); timeArms always sets it. */
  base?: string;
  /** L2 state of this case's samples: 'cold' (flushed before each launch) or 'warm'; timeArms always sets it. */
  l2?: 'cold' | 'warm';
  runId: string;
  opKind: string;
  meta: Record<string, unknown>;
  /** Samples in µs, in the order measured. */
  samples: number[];
  stats: Summary;
  /** Final relative noise (by the run's noise metric). */
  noise: number;
  /** Sum of samples, ms. */
  measuredMs: number;
  /** The run's provenance plus this case's meta. */
  provenance: RunProvenance & Record<string, unknown>;
  /** Its bits against the op's reference arm, checked in this run before timing (absent: not checked). */
  bits?: BitsCheck;
}

export type StopReason = 'noise-target' | 'time-cap' | 'max-samples';

export interface StopInfo {
  reason: StopReason;
  /** One sentence, e.g. "every case reached noise ≤ 1% with ≥ 30 samples and ≥ 50 ms measured". */
  detail: string;
  /** True when every case met minSamples, minTimeMs and the noise target. */
  converged: boolean;
  batches: number;
  rounds: number;
  roundsPerBatch: number;
  warmupRounds: number;
  warmupMs: number;
  /** Wall time after warm-up, ms. */
  wallMs: number;
}

export interface TimingSettings {
  mode: TimingMode;
  graphLaunches: number;
  rotateOrder: boolean;
  warmupMs: number;
  minSamples: number;
  minTimeMs: number;
  noiseTarget: number;
  noiseMetric: NoiseMetric;
  maxTimeMs: number;
  maxSamples: number;
}

export interface CompareOptions {
  /** Allow comparing results of different runs (labelled "across runs"). */
  acrossRuns?: boolean;
  /** Equivalence band half-width δ: 'same' needs the CI inside [1/(1+δ), 1+δ] (default 0.02). */
  band?: number;
  resamples?: number;
  seed?: number;
  confidence?: number;
}

export type Verdict = 'same' | 'faster' | 'slower' | 'unclear';

/** Below this many samples in either case compare() answers 'unclear'. */
export const MIN_COMPARE_SAMPLES = 10;

export class Comparison {
  readonly a: string;
  readonly b: string;
  /** median(a) / median(b): below 1 means a takes less time. */
  readonly ratio: number;
  readonly ci: [number, number];
  readonly confidence: number;
  readonly band: [number, number];
  readonly verdict: Verdict;
  readonly scope: 'within run' | 'across runs';
  readonly runIds: [string, string];
  readonly resamples: number;
  readonly seed: number;
  readonly paired: boolean;
  readonly medians: [number, number];
  readonly provenance: { a: CaseTiming['provenance']; b: CaseTiming['provenance'] };
  /** Why the verdict is weaker than the interval suggests (e.g. too few samples), if it is. */
  readonly note: string | undefined;

  /** @internal */
  constructor(a: CaseTiming, b: CaseTiming, r: RatioCI, band: number, scope: Comparison['scope']) {
    this.a = a.label;
    this.b = b.label;
    this.ratio = r.ratio;
    this.ci = [r.lo, r.hi];
    this.confidence = r.confidence;
    this.band = [1 / (1 + band), 1 + band];
    const n = Math.min(a.samples.length, b.samples.length);
    this.note = n < MIN_COMPARE_SAMPLES ? `only ${n} sample${n === 1 ? '' : 's'} in '${a.samples.length <= b.samples.length ? a.label : b.label}': too few for a confidence interval (need ${MIN_COMPARE_SAMPLES})` : undefined;
    this.verdict = this.note ? 'unclear' : verdictOf(r.lo, r.hi, band);
    this.scope = scope;
    this.runIds = [a.runId, b.runId];
    this.resamples = r.resamples;
    this.seed = r.seed;
    this.paired = r.paired;
    this.medians = [a.stats.median, b.stats.median];
    this.provenance = { a: a.provenance, b: b.provenance };
  }

  /** e.g. "reg-k4 vs tiled: 0.937× (95% CI 0.931–0.942) → faster [within run]". */
  sentence(): string {
    const pct = Math.round(this.confidence * 100);
    const change = this.ratio < 1 ? `${formatNumber((1 - this.ratio) * 100, 3)}% less time` : `${formatNumber((this.ratio - 1) * 100, 3)}% more time`;
    return `${this.a} vs ${this.b}: median ratio ${this.ratio.toFixed(4)} (${pct}% CI ${this.ci[0].toFixed(4)}–${this.ci[1].toFixed(4)}; ${change}) → ${this.verdict} [${this.scope}]`;
  }

  toString(): string {
    const lines = [this.sentence(), `  medians ${formatDuration(this.medians[0])} vs ${formatDuration(this.medians[1])}; 'same' band ${this.band[0].toFixed(4)}–${this.band[1].toFixed(4)}; ${this.resamples} ${this.paired ? 'paired ' : ''}bootstrap resamples, seed ${this.seed}`];
    if (this.note) lines.push(`  ${this.note}`);
    if (this.scope === 'across runs') lines.push(`  across runs: ${this.runIds[0]} vs ${this.runIds[1]} — clocks, temperature and load may differ between them`);
    return lines.join('\n');
  }

  [MIME_BUNDLE](): MimeBundle {
    const color = { same: '#555', faster: '#1a7f37', slower: '#b42318', unclear: '#9a6700' }[this.verdict];
    const warn = this.scope === 'across runs' ? `<p style="color:#9a6700"><b>Across runs</b> (${escapeXml(this.runIds[0])} vs ${escapeXml(this.runIds[1])}): clocks, temperature and load may differ.</p>` : '';
    const html = `<div class="gdnlab-compare"><p><b>${escapeXml(this.a)}</b> vs <b>${escapeXml(this.b)}</b>: <b style="color:${color}">${this.verdict}</b></p>${warn}<pre>${escapeXml(this.toString())}</pre></div>`;
    return { data: { 'text/html': html, 'text/plain': this.toString() } };
  }
}

function verdictOf(lo: number, hi: number, band: number): Verdict {
  if (lo >= 1 / (1 + band) && hi <= 1 + band) return 'same';
  if (hi < 1) return 'faster';
  if (lo > 1) return 'slower';
  return 'unclear';
}

/** Compares two timed cases: ratio of medians a/b with a bootstrap CI and a verdict. */
export function compare(a: CaseTiming, b: CaseTiming, opts: CompareOptions = {}): Comparison {
  for (const [v, what] of [
    [a, 'a'],
    [b, 'b'],
  ] as const) {
    if (!v || typeof v !== 'object' || !Array.isArray(v.samples) || typeof v.runId !== 'string') {
      throw new TypeError(`${what}: expected a timed case (an entry of timeArms(...).cases), got ${describe(v)}`);
    }
    if (v.samples.length === 0) throw new RangeError(`${what}: case '${v.label}' has no samples`);
  }
  const band = opts.band ?? 0.02;
  if (!(band > 0 && band < 1)) throw new RangeError(`band: expected a number in (0, 1), got ${describe(opts.band)}`);
  const across = a.runId !== b.runId;
  if (across && !opts.acrossRuns) {
    throw new Error(
      `compare: a ('${a.label}') is from run ${a.runId} and b ('${b.label}') from run ${b.runId}. Results of different runs are not comparable by default ` +
        '(clocks, temperature and other load differ between runs); time both in one timeArms call, or pass { acrossRuns: true } to compare anyway (the result is labelled "across runs").',
    );
  }
  const paired = !across && a.samples.length === b.samples.length;
  const r = bootstrapMedianRatio(a.samples, b.samples, { resamples: opts.resamples, seed: opts.seed, confidence: opts.confidence, paired });
  return new Comparison(a, b, r, band, across ? 'across runs' : 'within run');
}

export class TimingResult {
  readonly label: string | undefined;
  readonly runId: string;
  readonly cases: CaseTiming[];
  readonly provenance: RunProvenance;
  readonly stop: StopInfo;
  readonly settings: TimingSettings;

  /** @internal */
  constructor(label: string | undefined, cases: CaseTiming[], provenance: RunProvenance, stop: StopInfo, settings: TimingSettings) {
    this.label = label;
    this.runId = provenance.runId;
    this.cases = cases;
    this.provenance = provenance;
    this.stop = stop;
    this.settings = settings;
  }

  /** The case with this label. */
  get(label: string): CaseTiming {
    const c = this.cases.find((x) => x.label === label);
    if (!c) throw new RangeError(`label: no case '${label}' in this run (cases: ${this.cases.map((x) => `'${x.label}'`).join(', ')})`);
    return c;
  }

  /** Compares two cases of this run by label. */
  compare(a: string, b: string, opts: CompareOptions = {}): Comparison {
    return compare(this.get(a), this.get(b), opts);
  }

  /** The copy case timed in this run for an L2 state (the roofline), if there is exactly one. */
  copyCase(l2: 'cold' | 'warm'): CaseTiming | undefined {
    const copies = this.cases.filter((c) => c.opKind === 'copy' && (c.l2 ?? 'cold') === l2);
    return copies.length === 1 ? copies[0] : undefined;
  }

  /** % of the copy roofline of a case: copy median / case median × 100 (100% = as fast as the copy of its bytes). */
  percentOfCopy(c: CaseTiming): number | undefined {
    const copy = this.copyCase(c.l2 ?? 'cold');
    return copy ? (100 * copy.stats.median) / c.stats.median : undefined;
  }

  /**
   * One row per case (for table()): times in µs, n, noise, and — when a copy was timed in this run —
   * '× copy' and '% of copy roofline'. In mode 'both' one row per case with its cold and warm
   * columns side by side.
   */
  rows(): Record<string, unknown>[] {
    const roofline = this.copyCase('cold') !== undefined || this.copyCase('warm') !== undefined;
    const checked = this.cases.some((c) => c.bits !== undefined);
    if (this.settings.mode === 'both') {
      const bases = [...new Set(this.cases.map((c) => c.base ?? c.label))];
      return bases.map((base) => {
        const cold = this.cases.find((c) => c.base === base && c.l2 === 'cold') as CaseTiming;
        const warm = this.cases.find((c) => c.base === base && c.l2 === 'warm') as CaseTiming;
        const row: Record<string, unknown> = {
          case: base,
          ...(checked ? { bits: bitsCell(cold.bits) } : {}),
          ...scalarMeta(cold.meta),
          'cold median µs': cold.stats.median,
          'cold p10 µs': cold.stats.p10,
          'cold p90 µs': cold.stats.p90,
          'warm median µs': warm.stats.median,
          'warm p10 µs': warm.stats.p10,
          'warm p90 µs': warm.stats.p90,
          'cold ÷ warm': cold.stats.median / warm.stats.median,
        };
        if (roofline) {
          row['cold % of copy roofline'] = this.percentOfCopy(cold);
          row['warm % of copy roofline'] = this.percentOfCopy(warm);
        }
        row.n = Math.min(cold.stats.n, warm.stats.n);
        row.noise = Math.max(cold.noise, warm.noise);
        return row;
      });
    }
    return this.cases.map((c) => {
      const row: Record<string, unknown> = {
        case: c.label,
        ...(checked ? { bits: bitsCell(c.bits) } : {}),
        ...scalarMeta(c.meta),
        'median µs': c.stats.median,
        'IQR µs': c.stats.iqr,
        'p10 µs': c.stats.p10,
        'p90 µs': c.stats.p90,
        'min µs': c.stats.min,
        'mean µs': c.stats.mean,
        'sd µs': c.stats.sd,
      };
      if (roofline) {
        const copy = this.copyCase(c.l2 ?? 'cold');
        row['× copy'] = copy ? c.stats.median / copy.stats.median : undefined;
        row['% of copy roofline'] = this.percentOfCopy(c);
      }
      row.n = c.stats.n;
      row.noise = c.noise;
      return row;
    });
  }

  /** How the table's columns are shown: times in µs/ms, percentages, ratios. */
  columnFormats(): Record<string, CellFormat> {
    const fmt: Record<string, CellFormat> = { noise: (v) => (typeof v === 'number' ? formatPercent(v * 100) : '') };
    for (const k of Object.keys(this.rows()[0] ?? {})) {
      if (k.endsWith(' µs')) fmt[k] = (v) => (typeof v === 'number' ? formatDuration(v) : '');
      else if (k.includes('% of copy')) fmt[k] = (v) => (typeof v === 'number' ? formatPercent(v) : '—');
      else if (k === '× copy' || k === 'cold ÷ warm') fmt[k] = (v) => (typeof v === 'number' ? `${formatNumber(v, 3)}×` : '—');
    }
    return fmt;
  }

  /** Column titles without the unit (the cells carry µs or ms). */
  private displayRows(): { columns: string[]; rows: Record<string, unknown>[]; format: Record<string, CellFormat> } {
    const rows = this.rows();
    const fmt = this.columnFormats();
    const rename = (k: string) => (k.endsWith(' µs') ? k.slice(0, -3) : k);
    const columns = Object.keys(rows[0] ?? {}).map(rename);
    const format: Record<string, CellFormat> = {};
    for (const [k, f] of Object.entries(fmt)) format[rename(k)] = f;
    return { columns, rows: rows.map((r) => Object.fromEntries(Object.entries(r).map(([k, v]) => [rename(k), v]))), format };
  }

  /** The provenance as one line. */
  provenanceLine(): string {
    const p = this.provenance;
    const clocks = p.smClockMhz ? `, SM ${p.smClockMhz} MHz, mem ${p.memClockMhz} MHz (${p.clocksSource}; after: ${p.clocksAfter.smClockMhz}/${p.clocksAfter.memClockMhz})` : '';
    const gpu = p.sm ? ` sm_${p.sm.replace('.', '')}` : '';
    const drv = p.driver ? `, driver ${p.driver}` : '';
    const rt = p.runtime ? `, runtime ${p.runtime}` : '';
    return `${p.backend}: ${p.device}${gpu}${clocks}${drv}${rt}; revision ${p.revision}, arithmetic v${p.arithmetic}; ${p.mode}${p.rotateOrder ? ', rotated order' : ''}; ${p.time}; run ${p.runId}`;
  }

  private stopLine(): string {
    const s = this.stop;
    return `stopped by ${s.reason}: ${s.detail} — ${s.batches} batches × ${s.roundsPerBatch} rounds, ${formatNumber(s.wallMs / 1000, 3)} s after ${s.warmupRounds} warm-up rounds (${formatNumber(s.warmupMs / 1000, 3)} s)`;
  }

  private caption(): string {
    return `${this.label ? `${this.label} — ` : ''}timing: ${this.provenance.method}`;
  }

  toString(): string {
    const { columns, rows, format } = this.displayRows();
    return [this.caption(), textTable(columns, rows, { format }), ...this.bitsWarnings().map((w) => `BITS DIFFER: ${w}`), this.stopLine(), this.provenanceLine()].join('\n');
  }

  [MIME_BUNDLE](): MimeBundle {
    const { columns, rows, format } = this.displayRows();
    const differ = this.bitsWarnings().map((w) => `<p style="color:#b42318"><b>Bits differ:</b> ${escapeXml(w)}</p>`).join('\n');
    const warn = differ + (this.stop.converged ? '' : `<p style="color:#b42318"><b>Not converged:</b> ${escapeXml(this.stop.detail)}</p>`);
    const html = [
      `<div class="gdnlab-timing">`,
      htmlTable(columns, rows, { caption: this.caption(), format }),
      warn,
      `<p style="font-size:smaller">${escapeXml(this.stopLine())}<br>${escapeXml(this.provenanceLine())}</p>`,
      `</div>`,
    ].join('\n');
    return { data: { 'text/html': html, 'text/plain': this.toString() } };
  }

  /** One sentence per case whose bits differ from its reference and that is not wrong on purpose. */
  bitsWarnings(): string[] {
    const seen = new Set<string>();
    const out: string[] = [];
    for (const c of this.cases) {
      const b = c.bits;
      const base = c.base ?? c.label;
      if (!b || b.mismatches === 0 || b.planted || seen.has(base)) continue;
      seen.add(base);
      out.push(`'${base}' (${b.arm}): ${formatNumber(b.mismatches)} elements differ from ${b.reference} at these inputs${b.firstMismatch ? `, first ${describeLocated(b.firstMismatch)}` : ''}; its time is not that of a correct arm`);
    }
    return out;
  }

  /** Everything measured, raw samples included, as plain JSON (JSON.stringify(result) gives this). */
  toJSON(): TimingExport {
    return {
      format: 'gdnlab-timing/1',
      label: this.label,
      runId: this.runId,
      provenance: this.provenance,
      settings: this.settings,
      stop: this.stop,
      cases: this.cases.map((c) => ({ label: c.label, base: c.base ?? c.label, l2: c.l2 ?? 'cold', opKind: c.opKind, meta: c.meta, ...(c.bits ? { bits: c.bits } : {}), stats: c.stats, noise: c.noise, measuredMs: c.measuredMs, percentOfCopy: this.percentOfCopy(c), samplesUs: c.samples })),
    };
  }

  /** Every raw sample as CSV: one line per sample (case, l2, index in measuring order, µs), with the run's provenance as # comments. */
  samplesCsv(): string {
    const q = (v: string) => (/[",\n]/.test(v) ? `"${v.replace(/"/g, '""')}"` : v);
    const lines = [`# gdnlab timing run ${this.runId}: ${this.provenanceLine()}`, `# ${this.provenance.method}`, 'case,l2,op,sample,us'];
    for (const c of this.cases) c.samples.forEach((v, i) => lines.push(`${q(c.base ?? c.label)},${c.l2 ?? 'cold'},${c.opKind},${i},${v}`));
    return lines.join('\n') + '\n';
  }

  /** Writes the raw samples: FILE.csv as CSV, anything else (FILE.json) as JSON. Returns the path. */
  save(file: string): string {
    if (typeof file !== 'string' || file === '') throw new TypeError('file: expected a path ending in .json or .csv');
    fs.mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
    fs.writeFileSync(file, file.toLowerCase().endsWith('.csv') ? this.samplesCsv() : JSON.stringify(this.toJSON(), null, 1) + '\n');
    return path.resolve(file);
  }
}

export interface TimingExport {
  format: 'gdnlab-timing/1';
  label: string | undefined;
  runId: string;
  provenance: RunProvenance;
  settings: TimingSettings;
  stop: StopInfo;
  cases: { label: string; base: string; l2: 'cold' | 'warm'; opKind: string; meta: Record<string, unknown>; bits?: BitsCheck; stats: Summary; noise: number; measuredMs: number; percentOfCopy: number | undefined; samplesUs: number[] }[];
}

/** The 'bits' cell of a case: identical, planted, differing, or not checked (no reference for its op). */
function bitsCell(b: BitsCheck | undefined): string {
  if (!b) return 'not checked';
  if (b.mismatches === 0) return `= ${b.reference}`;
  return `${b.planted ? 'planted: ' : 'DIFFERS: '}${formatNumber(b.mismatches)} ≠ ${b.reference}`;
}

function scalarMeta(meta: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(meta)) {
    if (v === null || v === undefined) continue;
    out[k] = typeof v === 'object' ? (Array.isArray(v) ? `[${v.join(', ')}]` : JSON.stringify(v)) : v;
  }
  return out;
}

/** Thrown when a kernel interrupt or opts.signal stops a run between batches; `partial` holds what was measured. */
export class TimingAborted extends Error {
  constructor(readonly partial: TimingResult | undefined) {
    super('timing: aborted (interrupt) between batches');
    this.name = 'TimingAborted';
  }
}

function cudaVersion(v: number): string {
  return v > 0 ? `${Math.floor(v / 1000)}.${Math.floor((v % 1000) / 10)}` : '';
}

function newRunId(date: Date): string {
  return `${date.toISOString().replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z')}-${randomBytes(3).toString('hex')}`;
}

/** How a sample is measured, in words. */
export function timingMethod(backend: string, mode: TimingMode, graphLaunches: number): string {
  const l2 = mode === 'cold' ? 'L2 flushed before each launch (cold)' : mode === 'hot' ? 'L2 not flushed (warm)' : 'cold L2 (flushed before each launch) and warm L2 (not flushed), alternating batches of one run';
  if (graphLaunches > 0) {
    return backend === 'cuda'
      ? `CUDA-graph replay: each sample is one replay of ${graphLaunches} back-to-back launches ÷ ${graphLaunches} (launch overhead removed), L2 warm, the host ahead of the GPU`
      : `host backend: ${graphLaunches} back-to-back runs per sample ÷ ${graphLaunches} (CUDA-graph replay exists on CUDA only; the host has no launch overhead to remove)`;
  }
  return backend === 'cuda' ? `CUDA events around each launch, ${l2}, the host ahead of the GPU (a GPU-side hold before each start event; a sample the host fell behind on is retaken)` : `monotonic clock around each run on the host backend, ${l2}`;
}

function runProvenance(info: DeviceInfo, runId: string, time: Date, mode: TimingMode, rotateOrder: boolean, graphLaunches: number): RunProvenance {
  return {
    runId,
    time: time.toISOString(),
    backend: info.backend,
    device: info.name,
    sm: info.smMajor ? `${info.smMajor}.${info.smMinor}` : '',
    smCount: info.smCount,
    l2Bytes: info.l2Bytes,
    smClockMhz: info.smClockMhz,
    memClockMhz: info.memClockMhz,
    maxSmClockMhz: info.maxSmClockMhz,
    maxMemClockMhz: info.maxMemClockMhz,
    clocksSource: String(info.clocksSource),
    clocksAfter: { smClockMhz: info.smClockMhz, memClockMhz: info.memClockMhz },
    driver: info.driverString || cudaVersion(info.driverVersion),
    runtime: cudaVersion(info.runtimeVersion),
    revision: revision(),
    arithmetic: ARITHMETIC_VERSION,
    host: os.hostname(),
    node: process.version,
    mode,
    rotateOrder,
    graphLaunches,
    method: timingMethod(info.backend, mode, graphLaunches),
  };
}

function positive(v: number | undefined, dflt: number, what: string, integer = false): number {
  const x = v ?? dflt;
  if (typeof x !== 'number' || !Number.isFinite(x) || x < 0 || (integer && !Number.isInteger(x))) {
    throw new RangeError(`${what}: expected a ${integer ? 'non-negative integer' : 'finite number ≥ 0'}, got ${describe(v)}`);
  }
  return x;
}

function checkCases(cases: unknown): TimingCase[] {
  if (!Array.isArray(cases) || cases.length === 0) throw new TypeError(`cases: expected a non-empty array of { label, op, meta? }, got ${describe(cases)}`);
  const seen = new Set<string>();
  cases.forEach((c, i) => {
    if (!c || typeof c !== 'object') throw new TypeError(`cases[${i}]: expected { label, op, meta? }, got ${describe(c)}`);
    const { label, op, meta } = c as TimingCase;
    if (typeof label !== 'string' || label === '') throw new TypeError(`cases[${i}].label: expected a non-empty string, got ${describe(label)}`);
    if (seen.has(label)) throw new RangeError(`cases[${i}].label: '${label}' is used twice; labels must be unique`);
    seen.add(label);
    if (!op || typeof op !== 'object' || typeof (op as NativeOp).kind !== 'string') throw new TypeError(`cases[${i}].op: expected a prepared NativeOp ({ kind, args }), got ${describe(op)}`);
    if (meta !== undefined && (meta === null || typeof meta !== 'object')) throw new TypeError(`cases[${i}].meta: expected an object, got ${describe(meta)}`);
  });
  return cases as TimingCase[];
}

function checkSamples(samples: unknown, expected: number): Float32Array {
  if (!(samples instanceof Float32Array) || samples.length !== expected) {
    throw new Error(`backend.timeOps: expected ${expected} samples, got ${describe(samples)}${samples instanceof Float32Array ? ` of length ${samples.length}` : ''}`);
  }
  for (let i = 0; i < samples.length; i++) {
    if (!(samples[i] >= 0) || !Number.isFinite(samples[i])) throw new Error(`backend.timeOps: sample ${i} is ${samples[i]} µs; expected a finite time ≥ 0`);
  }
  return samples;
}

/** Times every case, interleaved, until the noise target, a sample cap or the time cap stops it. */
export async function timeArms(cases: TimingCase[], opts: TimingOptions = {}): Promise<TimingResult> {
  checkCases(cases);
  const g = opts.graphLaunches;
  const graphLaunches = g === undefined || g === false ? 0 : g === true ? 20 : g;
  if (!Number.isInteger(graphLaunches) || graphLaunches < 0 || graphLaunches > 1000) throw new RangeError(`graphLaunches: expected true or an integer in 1..1000, got ${describe(g)}`);
  const asked = opts.mode === 'warm' ? 'hot' : opts.mode;
  const mode: TimingMode = asked ?? (graphLaunches ? 'hot' : 'cold');
  if (mode !== 'cold' && mode !== 'hot' && mode !== 'both') throw new TypeError(`mode: expected 'cold', 'hot' (or 'warm') or 'both', got ${describe(opts.mode)}`);
  if (graphLaunches && mode !== 'hot') throw new RangeError(`mode: graph replay runs ${graphLaunches} launches back to back, so L2 is warm; use mode 'hot' with graphLaunches (got '${mode}')`);
  const noiseMetric = opts.noiseMetric ?? 'ci';
  if (noiseMetric !== 'ci' && noiseMetric !== 'iqr') throw new TypeError(`noiseMetric: expected 'ci' or 'iqr', got ${describe(opts.noiseMetric)}`);
  const settings: TimingSettings = {
    mode,
    graphLaunches,
    rotateOrder: opts.rotateOrder ?? true,
    warmupMs: positive(opts.warmupMs, 200, 'warmupMs'),
    minSamples: positive(opts.minSamples, 30, 'minSamples', true),
    minTimeMs: positive(opts.minTimeMs, 50, 'minTimeMs'),
    noiseTarget: positive(opts.noiseTarget, 0.01, 'noiseTarget'),
    noiseMetric,
    maxTimeMs: positive(opts.maxTimeMs, 10000, 'maxTimeMs'),
    maxSamples: positive(opts.maxSamples, 100_000, 'maxSamples', true),
  };
  const batchMs = positive(opts.batchMs, 250, 'batchMs');
  if (opts.roundsPerBatch !== undefined && (!Number.isInteger(opts.roundsPerBatch) || opts.roundsPerBatch < 1)) {
    throw new RangeError(`roundsPerBatch: expected a positive integer, got ${describe(opts.roundsPerBatch)}`);
  }
  const backend: TimingBackend = opts.backend ?? (await import('../backend')).activeBackend();
  const clock = opts.clock ?? (() => performance.now());
  const aborted = () => !!opts.signal?.aborted || interrupted();
  const ops = cases.map((c) => c.op);
  // Mode 'both': every case twice, cold then warm, timed by alternating batches of the same run.
  const states: ('cold' | 'warm')[] = mode === 'both' ? ['cold', 'warm'] : [mode === 'cold' ? 'cold' : 'warm'];
  const n = cases.length * states.length;
  const caseOf = (j: number) => cases[j % cases.length];
  const stateOf = (j: number) => states[Math.floor(j / cases.length)];
  const labelOf = (j: number) => (mode === 'both' ? `${caseOf(j).label} · ${stateOf(j)} L2` : caseOf(j).label);
  const cfg = (rounds: number, l2: 'cold' | 'warm') => ({ rounds, flushL2: l2 === 'cold', rotateOrder: settings.rotateOrder, graphLaunches });
  /** One timeOps call per L2 state (alternating which goes first), samples appended per case. */
  const timeRounds = async (rounds: number, batch: number, keep: (j: number, v: number) => void) => {
    const order = batch % 2 === 0 ? states : [...states].reverse();
    for (const l2 of order) {
      const got = checkSamples(await backend.timeOps(ops, cfg(rounds, l2)), rounds * cases.length);
      const offset = states.indexOf(l2) * cases.length;
      for (let r = 0; r < rounds; r++) for (let i = 0; i < cases.length; i++) keep(offset + i, got[r * cases.length + i]);
    }
  };

  // Bits first (or, with validate: false, one run of each arm defined in a cell): a forward call waits at
  // most the arm's own time limit, a timing run's wait covers all its launches plus a minute for the others.
  const bits: (BitsCheck | undefined)[] = [];
  const validate = opts.validate ?? true;
  if (typeof validate !== 'boolean') throw new TypeError(`validate: expected true or false, got ${describe(opts.validate)}`);
  for (const [i, c] of cases.entries()) {
    const source = (c.op as { source?: TimedSource }).source;
    if (!source) {
      bits.push(undefined);
      continue;
    }
    const checker = opts.bitsChecker;
    if (!checker) {
      throw new TypeError(`cases[${i}] ('${c.label}'): an op prepared by ${source.op}.prepareTimed is checked before it is timed, `
        + 'and this timeArms has no bitsChecker: call gdnlab\'s timeArms (lib/check/timed.ts), which supplies it');
    }
    try {
      bits.push(validate ? await checker.check(source) : (await checker.probe(source), undefined));
    } catch (e) {
      const err = new Error(`cases[${i}] ('${c.label}'): ${validate ? 'checking its bits' : 'running it once'} before timing: ${(e as Error).message}`);
      (err as Error & { cause?: unknown }).cause = e;
      throw err;
    }
  }

  const started = new Date();
  const runId = opts.runId ?? newRunId(started);
  const provenance = runProvenance(backend.info(), runId, started, mode, settings.rotateOrder, graphLaunches);
  const samples: number[][] = Array.from({ length: n }, () => []);
  const measured = new Float64Array(n);
  const stop: StopInfo = { reason: 'time-cap', detail: '', converged: false, batches: 0, rounds: 0, roundsPerBatch: 0, warmupRounds: 0, warmupMs: 0, wallMs: 0 };
  const noise = () => samples.map((s) => relativeNoise(s, noiseMetric));

  const build = (): TimingResult => {
    const after = backend.info();
    provenance.clocksAfter = { smClockMhz: after.smClockMhz, memClockMhz: after.memClockMhz };
    const finalNoise = noise();
    const timed: CaseTiming[] = samples.map((_, i) => {
      const c = caseOf(i);
      const meta = { ...(c.meta ?? {}) };
      return {
        label: labelOf(i),
        base: c.label,
        l2: stateOf(i),
        runId,
        opKind: c.op.kind,
        meta,
        samples: samples[i],
        stats: summarize(samples[i]),
        noise: finalNoise[i],
        measuredMs: measured[i],
        provenance: { ...provenance, ...meta, label: labelOf(i), opKind: c.op.kind, l2: stateOf(i) },
        ...(bits[i % cases.length] ? { bits: bits[i % cases.length] } : {}),
      };
    });
    return new TimingResult(opts.label, timed, provenance, stop, settings);
  };

  const show = opts.progress ?? true;
  const title = `${opts.label ?? 'timing'}: ${cases.length} case${cases.length > 1 ? 's' : ''} (${mode === 'both' ? 'cold and warm L2' : graphLaunches ? `graph replay ×${graphLaunches}` : mode})`;
  const bar = show ? progress(settings.maxTimeMs, { label: title, clock }) : undefined;
  try {
    // Warm-up: rounds doubling from 1 until the budget is spent; samples discarded.
    const w0 = clock();
    let rounds = 1;
    do {
      if (aborted()) throw new TimingAborted(undefined);
      await timeRounds(rounds, stop.warmupRounds, () => undefined);
      stop.warmupRounds += rounds;
      rounds = Math.min(rounds * 2, 1024);
    } while (clock() - w0 < settings.warmupMs);
    stop.warmupMs = clock() - w0;
    const perRoundMs = stop.warmupMs / stop.warmupRounds;
    stop.roundsPerBatch = opts.roundsPerBatch ?? Math.max(1, Math.min(100_000, Math.round(batchMs / Math.max(perRoundMs, 1e-6))));

    const t0 = clock();
    let lastTick = t0;
    for (;;) {
      if (aborted()) {
        stop.wallMs = clock() - t0;
        throw new TimingAborted(stop.batches ? build() : undefined);
      }
      // The last batch stops at maxSamples rather than overshooting it.
      const R = Math.max(1, Math.min(stop.roundsPerBatch, settings.maxSamples - samples[0].length));
      await timeRounds(R, stop.batches, (j, v) => {
        samples[j].push(v);
        measured[j] += v / 1000;
      });
      stop.batches++;
      stop.rounds += R;
      const now = clock();
      stop.wallMs = now - t0;
      const nz = noise();
      const worst = Math.max(...nz);
      const count = samples[0].length;
      const minMeasured = Math.min(...measured);
      bar?.tick(now - lastTick, `${formatNumber(count)} samples/case, worst noise ${formatNumber(worst * 100, 2)}%`);
      lastTick = now;
      const enough = count >= settings.minSamples && minMeasured >= settings.minTimeMs;
      if (enough && worst <= settings.noiseTarget) {
        stop.reason = 'noise-target';
        stop.converged = true;
        stop.detail = `every case reached ${noiseMetric} noise ≤ ${formatNumber(settings.noiseTarget * 100, 3)}% (worst ${formatNumber(worst * 100, 3)}%) with ≥ ${settings.minSamples} samples and ≥ ${formatNumber(settings.minTimeMs)} ms measured`;
        break;
      }
      const unmet = () => {
        const parts: string[] = [];
        if (count < settings.minSamples) parts.push(`${count} < ${settings.minSamples} samples`);
        if (minMeasured < settings.minTimeMs) parts.push(`${formatNumber(minMeasured, 3)} < ${formatNumber(settings.minTimeMs)} ms measured`);
        if (worst > settings.noiseTarget) {
          const noisiest = labelOf(nz.indexOf(worst));
          parts.push(`noise ${formatNumber(worst * 100, 3)}% > ${formatNumber(settings.noiseTarget * 100, 3)}% ('${noisiest}')`);
        }
        return parts.join(', ');
      };
      if (count >= settings.maxSamples) {
        stop.reason = 'max-samples';
        stop.detail = `reached ${formatNumber(count)} samples per case (maxSamples) before the target: ${unmet()}`;
        break;
      }
      if (stop.wallMs >= settings.maxTimeMs) {
        stop.reason = 'time-cap';
        stop.detail = `reached the ${formatNumber(settings.maxTimeMs)} ms time cap before the target: ${unmet()}`;
        break;
      }
    }
    const result = build();
    bar?.done(`${stop.reason}, ${formatNumber(samples[0].length)} samples per case`);
    return result;
  } catch (e) {
    bar?.done(e instanceof TimingAborted ? 'aborted' : `failed: ${(e as Error).message}`);
    throw e;
  }
}
