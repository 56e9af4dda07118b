// Bitwise comparison of two float tensors, element by element (never bytes).
//
// Policy (tested in test/analysis/diff.test.ts):
// - A mismatch is an element whose bit patterns differ. Every mismatch is one of five kinds:
//     'finite'       both finite, ulp distance ≥ 1
//     'signed-zero'  +0 against −0: equal values, different bits (counted as a bitwise mismatch, 0 ulp)
//     'inf'          at least one side ±Inf, neither NaN (ulp distance on the ordered line is reported
//                    per element — max finite against Inf is 1 — but kept out of the ulp and error stats)
//     'nan'          exactly one side NaN (`nanMismatches`)
//     'nan-payload'  both NaN with different bits: no ulp distance (`nanPayloadMismatches`)
//   Bit-identical elements (NaNs included) are matches.
// - Ulp distance is the difference on the ordered-integer line (floatbits.ts): adjacent floats are 1
//   apart, ±0 are 0 apart, the smallest subnormal is 1 from zero. maxUlp, meanUlp and the error
//   maxima are over pairs where both sides are finite; meanUlp divides by all such pairs,
//   meanUlpMismatched by the finite mismatches only.
// - Relative error is |a − b| / |b| with b the expected value (Inf when b = 0 and a ≠ 0).
// - Tolerance mode follows torch.allclose: |a − b| ≤ atol + rtol·|b|, computed in float64 from the
//   exact element values; ±Inf is close only to the same Inf; NaN is close to NaN only with
//   equalNan (then any two NaNs are close, as in torch).

import { describe } from '../dtype';
import { Tensor } from '../tensor';
import { MIME_BUNDLE, MimeBundle } from '../view/display';
import { escapeXml, formatNumber, htmlTable, textTable } from '../view/format';
import { Coordinates, plainCoordinates } from './coordinates';
import { FLOAT_FORMATS, FloatDType, FloatFormat, hexBits, isFloatDType } from './floatbits';
import { MapGrid, MismatchMap, MismatchMapBuilder } from './mismatch-map';
import { UlpHistogram, UlpHistogramBuilder, histogramCategories } from './ulp-histogram';
import { countDifferingWords } from './bits';

export type MismatchKind = 'finite' | 'signed-zero' | 'inf' | 'nan' | 'nan-payload';

export interface ToleranceOptions {
  /** Relative tolerance (torch default 1e-5). */
  rtol?: number;
  /** Absolute tolerance (torch default 1e-8). */
  atol?: number;
  /** Treat NaN as close to NaN (default false). */
  equalNan?: boolean;
}

export interface DiffOptions {
  /**
   * Maps element indices to the op's coordinates. Default: the coordinates an op set on `actual` (or else
   * `expected`), e.g. (sequence, token, channel) for conv.forward's out; plain indices for other tensors.
   */
  coordinates?: Coordinates;
  /** How many mismatches (and tolerance violations) to list, in index order (default 10). */
  firstN?: number;
  /** Also check closeness (torch.allclose semantics); true uses torch's defaults. */
  tolerance?: ToleranceOptions | boolean;
  /** Grid size of the mismatch map, or false for none (default 64 × 128 cells at most). */
  map?: MapGrid | false;
  /** A name for the comparison, shown in summaries and plots. */
  label?: string;
}

/** One differing element. */
export interface Mismatch {
  /** Flat index in the contiguous tensor. */
  index: number;
  /** The element's coordinates, named by the Coordinates mapper. */
  coords: Record<string, number>;
  actual: number;
  expected: number;
  actualBits: string;
  expectedBits: string;
  /** Ulp distance, null when a side is NaN. */
  ulp: number | null;
  /** |actual − expected| (NaN when a side is NaN). */
  absError: number;
  kind: MismatchKind | 'nan-identical';
}

export interface ToleranceResult {
  rtol: number;
  atol: number;
  equalNan: boolean;
  /** Elements that are not close. */
  violations: number;
  pass: boolean;
  /** The largest |a − b| / (atol + rtol·|b|) over finite pairs: ≤ 1 means within tolerance. */
  worstRatio: number;
  first: Mismatch[];
}

export interface DiffCounts {
  mismatches: number;
  finiteMismatches: number;
  signedZeroMismatches: number;
  infMismatches: number;
  nanMismatches: number;
  nanPayloadMismatches: number;
}

/** What diff() returns: plain data plus a toString and a rich display. */
export class DiffResult implements DiffCounts {
  readonly label: string | undefined;
  readonly dtype: FloatDType;
  readonly shape: number[];
  readonly numel: number;
  readonly coordinateKind: string;
  mismatches = 0;
  finiteMismatches = 0;
  signedZeroMismatches = 0;
  infMismatches = 0;
  nanMismatches = 0;
  nanPayloadMismatches = 0;
  /** Tensor rows (all dimensions but the last) with at least one mismatch, and the row count. */
  mismatchedRows = 0;
  rows: number;
  /** Pairs where both sides are finite. */
  finitePairs = 0;
  maxUlp = 0;
  meanUlp = 0;
  meanUlpMismatched = 0;
  maxAbsError = 0;
  maxRelError = 0;
  /** The finite mismatch with the largest ulp distance (first of equals). */
  worst: Mismatch | null = null;
  first: Mismatch[] = [];
  histogram: UlpHistogram;
  map: MismatchMap | null;
  tolerance: ToleranceResult | null = null;
  notes: string[] = [];

  /** @internal */
  constructor(init: { label?: string; dtype: FloatDType; shape: number[]; rows: number; coordinateKind: string; histogram: UlpHistogram; map: MismatchMap | null }) {
    this.label = init.label;
    this.dtype = init.dtype;
    this.shape = init.shape;
    this.numel = init.shape.reduce((a, b) => a * b, 1);
    this.rows = init.rows;
    this.coordinateKind = init.coordinateKind;
    this.histogram = init.histogram;
    this.map = init.map;
  }

  /** True when every element has identical bits. */
  get identical(): boolean {
    return this.mismatches === 0;
  }

  /** The headline, e.g. "f32 [64, 6144]: 12 of 393,216 elements differ (0.0031%) in 3 of 64 rows". */
  headline(): string {
    const name = this.label ? `${this.label}: ` : '';
    const what = `${this.dtype} [${this.shape.join(', ')}]`;
    if (this.mismatches === 0) return `${name}${what}: all ${formatNumber(this.numel)} elements bit-identical`;
    const pct = (100 * this.mismatches) / this.numel;
    return `${name}${what}: ${formatNumber(this.mismatches)} of ${formatNumber(this.numel)} elements differ (${formatNumber(pct, 3)}%) in ${formatNumber(this.mismatchedRows)} of ${formatNumber(this.rows)} rows`;
  }

  private facts(): Record<string, unknown>[] {
    const rows: Record<string, unknown>[] = [
      { measure: 'mismatching elements', value: this.mismatches },
      { measure: '  finite (≥ 1 ulp)', value: this.finiteMismatches },
      { measure: '  +0 vs −0 (0 ulp)', value: this.signedZeroMismatches },
      { measure: '  ±Inf involved', value: this.infMismatches },
      { measure: '  NaN vs number', value: this.nanMismatches },
      { measure: '  NaN payloads differ', value: this.nanPayloadMismatches },
      { measure: 'rows with a mismatch', value: `${formatNumber(this.mismatchedRows)} of ${formatNumber(this.rows)}` },
      { measure: 'max ulp (finite pairs)', value: this.maxUlp },
      { measure: 'mean ulp (finite pairs)', value: this.meanUlp },
      { measure: 'mean ulp (finite mismatches)', value: this.meanUlpMismatched },
      { measure: 'max abs error', value: this.maxAbsError },
      { measure: 'max rel error', value: this.maxRelError },
    ];
    if (this.tolerance) {
      const t = this.tolerance;
      rows.push({ measure: `tolerance rtol ${formatNumber(t.rtol)} atol ${formatNumber(t.atol)}`, value: `${t.pass ? 'pass' : 'FAIL'}: ${formatNumber(t.violations)} not close, worst ratio ${formatNumber(t.worstRatio, 3)}` });
    }
    return rows;
  }

  private mismatchRows(list: Mismatch[]): Record<string, unknown>[] {
    return list.map((m) => ({
      ...m.coords,
      actual: m.actual,
      expected: m.expected,
      'actual bits': m.actualBits,
      'expected bits': m.expectedBits,
      ulp: m.ulp === null ? '—' : m.ulp,
      kind: m.kind,
    }));
  }

  private mismatchColumns(list: Mismatch[]): string[] {
    const coords = list.length ? Object.keys(list[0].coords) : [];
    return [...coords, 'actual', 'expected', 'actual bits', 'expected bits', 'ulp', 'kind'];
  }

  toString(): string {
    const lines = [this.headline()];
    if (this.mismatches > 0) {
      lines.push(`  kinds: finite ${this.finiteMismatches}, ±0 ${this.signedZeroMismatches}, Inf ${this.infMismatches}, NaN vs number ${this.nanMismatches}, NaN payload ${this.nanPayloadMismatches}`);
      lines.push(`  ulp over finite pairs: max ${formatNumber(this.maxUlp)}, mean ${formatNumber(this.meanUlp)} (mean over finite mismatches ${formatNumber(this.meanUlpMismatched)})`);
      lines.push(`  error: max abs ${formatNumber(this.maxAbsError)}, max rel ${formatNumber(this.maxRelError)}`);
    }
    if (this.tolerance) {
      const t = this.tolerance;
      lines.push(`  tolerance rtol ${formatNumber(t.rtol)}, atol ${formatNumber(t.atol)}: ${t.pass ? 'pass' : 'FAIL'} (${formatNumber(t.violations)} not close, worst ratio ${formatNumber(t.worstRatio, 3)})`);
    }
    if (this.first.length) {
      lines.push(`  first ${this.first.length} mismatches (${this.coordinateKind}):`);
      for (const m of this.first) lines.push(`    ${describeMismatch(m)}`);
    }
    for (const n of this.notes) lines.push(`  note: ${n}`);
    return lines.join('\n');
  }

  [MIME_BUNDLE](): MimeBundle {
    const parts = [`<div class="gdnlab-diff"><p><b>${escapeXml(this.headline())}</b></p>`];
    if (this.mismatches > 0 || this.tolerance) parts.push(htmlTable(['measure', 'value'], this.facts()));
    if (this.mismatches > 0) {
      const h = histogramCategories(this.histogram);
      parts.push(`<p>ulp histogram: ${h.labels.map((l, i) => `${escapeXml(l)}: ${formatNumber(h.counts[i])}`).join(' · ')}</p>`);
    }
    if (this.first.length) {
      const cap = `first ${this.first.length} mismatches (${this.coordinateKind})`;
      parts.push(htmlTable(this.mismatchColumns(this.first), this.mismatchRows(this.first), { caption: cap, format: { actual: 9, expected: 9 } }));
    }
    if (this.tolerance?.first.length) {
      parts.push(htmlTable(this.mismatchColumns(this.tolerance.first), this.mismatchRows(this.tolerance.first), { caption: 'first elements not within tolerance', format: { actual: 9, expected: 9 } }));
    }
    for (const n of this.notes) parts.push(`<p><i>note:</i> ${escapeXml(n)}</p>`);
    parts.push('</div>');
    return { data: { 'text/html': parts.join('\n'), 'text/plain': this.toString() } };
  }

  /** The facts as rows for table(). */
  summaryRows(): Record<string, unknown>[] {
    return this.facts();
  }

  /** The listed mismatches as plain text (a table). */
  firstAsText(): string {
    return textTable(this.mismatchColumns(this.first), this.mismatchRows(this.first));
  }
}

function describeMismatch(m: Mismatch): string {
  const where = Object.entries(m.coords).map(([k, v]) => `${k} ${v}`).join(', ');
  const ulp = m.ulp === null ? '' : `, ${formatNumber(m.ulp)} ulp`;
  return `(${where}): actual ${formatNumber(m.actual, 9)} (${m.actualBits}) vs expected ${formatNumber(m.expected, 9)} (${m.expectedBits})${ulp} [${m.kind}]`;
}

/** torch.isclose for one pair of values. */
export function isClose(a: number, b: number, rtol: number, atol: number, equalNan = false): boolean {
  if (Number.isNaN(a) || Number.isNaN(b)) return equalNan && Number.isNaN(a) && Number.isNaN(b);
  if (!Number.isFinite(a) || !Number.isFinite(b)) return a === b;
  return Math.abs(a - b) <= atol + rtol * Math.abs(b);
}

function checkTensor(value: unknown, what: string): Tensor {
  if (!(value instanceof Tensor)) throw new TypeError(`${what}: expected a Tensor, got ${describe(value)}`);
  return value;
}

/** Checks two tensors can be compared element by element; returns their float format. */
export function checkComparable(actual: unknown, expected: unknown, names: [string, string] = ['actual', 'expected']): FloatFormat {
  const a = checkTensor(actual, names[0]);
  const b = checkTensor(expected, names[1]);
  if (!isFloatDType(a.dtype)) throw new TypeError(`${names[0]}: expected an f32, bf16 or f16 tensor, got ${a.dtype}`);
  if (a.dtype !== b.dtype) throw new TypeError(`${names[1]}: dtype ${b.dtype} differs from ${names[0]}'s ${a.dtype}; compare tensors of one dtype (convert explicitly with astype)`);
  if (a.shape.length !== b.shape.length || a.shape.some((d, i) => d !== b.shape[i])) {
    throw new RangeError(`${names[1]}: shape [${b.shape.join(', ')}] differs from ${names[0]}'s shape [${a.shape.join(', ')}]`);
  }
  return FLOAT_FORMATS[a.dtype];
}

function checkTolerance(t: ToleranceOptions | boolean | undefined): Required<ToleranceOptions> | null {
  if (t === undefined || t === false) return null;
  const o = t === true ? {} : t;
  if (typeof o !== 'object' || o === null) throw new TypeError(`tolerance: expected { rtol, atol, equalNan } or true, got ${describe(t)}`);
  const rtol = o.rtol ?? 1e-5;
  const atol = o.atol ?? 1e-8;
  if (typeof rtol !== 'number' || !(rtol >= 0) || !Number.isFinite(rtol)) throw new RangeError(`tolerance.rtol: expected a finite number ≥ 0, got ${describe(o.rtol)}`);
  if (typeof atol !== 'number' || !(atol >= 0) || !Number.isFinite(atol)) throw new RangeError(`tolerance.atol: expected a finite number ≥ 0, got ${describe(o.atol)}`);
  return { rtol, atol, equalNan: !!o.equalNan };
}

/**
 * Compares actual against expected element by element: counts, ulp statistics, errors, the first
 * mismatches in the op's coordinates, an ulp histogram, a mismatch map and optionally a tolerance check.
 */
export function diff(actual: Tensor, expected: Tensor, opts: DiffOptions = {}): DiffResult {
  const fmt = checkComparable(actual, expected);
  const firstN = opts.firstN ?? 10;
  if (!Number.isInteger(firstN) || firstN < 0) throw new RangeError(`firstN: expected a non-negative integer, got ${describe(opts.firstN)}`);
  const tol = checkTolerance(opts.tolerance);
  const shape = [...actual.shape];
  // An op's result knows its layout (Tensor.coordinates): actual's, else expected's, else plain indices.
  const coordinates = opts.coordinates ?? actual.coordinates ?? expected.coordinates ?? plainCoordinates();
  if (typeof coordinates?.at !== 'function') throw new TypeError(`coordinates: expected a Coordinates mapper (convCoordinates, postconvCoordinates, …), got ${describe(opts.coordinates)}`);
  coordinates.check(shape);
  const names = coordinates.names(shape);

  const A = actual.bits() as Uint32Array | Uint16Array;
  const B = expected.bits() as Uint32Array | Uint16Array;
  const n = A.length;
  const cols = shape.length ? shape[shape.length - 1] : 1;
  const rows = cols > 0 ? n / cols : 0;
  const hist = new UlpHistogramBuilder();
  const mapper = opts.map === false ? null : new MismatchMapBuilder(shape, coordinates.mapAxes(shape), opts.map ?? {});
  const result = new DiffResult({ label: opts.label, dtype: fmt.dtype, shape, rows, coordinateKind: coordinates.kind, histogram: hist.finish(), map: null });
  const tolerance: ToleranceResult | null = tol ? { ...tol, violations: 0, pass: true, worstRatio: 0, first: [] } : null;

  const { magMask, infMag, signMask } = fmt;
  const value = fmt.value;
  const record = (i: number, kind: Mismatch['kind'], ulp: number | null, absError: number): Mismatch => {
    const coords: Record<string, number> = {};
    const at = coordinates.at(i, shape);
    names.forEach((name, d) => (coords[name] = at[d]));
    return { index: i, coords, actual: value(A[i]), expected: value(B[i]), actualBits: hexBits(fmt, A[i]), expectedBits: hexBits(fmt, B[i]), ulp, absError, kind };
  };

  let exactFinite = 0;
  let exactOther = 0; // identical Inf or NaN patterns
  let sumUlp = 0;
  let lastRow = -1;
  let worstIndex = -1;
  for (let i = 0; i < n; i++) {
    const a = A[i];
    const b = B[i];
    if (a === b) {
      if ((a & magMask) < infMag) exactFinite++;
      else {
        exactOther++;
        if (tolerance && (a & magMask) > infMag && !tolerance.equalNan) {
          tolerance.violations++;
          if (tolerance.first.length < firstN) tolerance.first.push(record(i, 'nan-identical', null, NaN));
        }
      }
      continue;
    }
    result.mismatches++;
    const row = Math.floor(i / cols);
    if (row !== lastRow) {
      result.mismatchedRows++;
      lastRow = row;
    }
    mapper?.add(i);
    const magA = a & magMask;
    const magB = b & magMask;
    const nanA = magA > infMag;
    const nanB = magB > infMag;
    let kind: MismatchKind;
    let ulp: number | null = null;
    let absError = NaN;
    if (nanA && nanB) {
      kind = 'nan-payload';
      result.nanPayloadMismatches++;
      hist.nanPayload++;
    } else if (nanA || nanB) {
      kind = 'nan';
      result.nanMismatches++;
      hist.nanVsNumber++;
    } else {
      ulp = Math.abs((a & signMask ? -magA : magA) - (b & signMask ? -magB : magB));
      const va = value(a);
      const vb = value(b);
      absError = Math.abs(va - vb);
      if (magA === infMag || magB === infMag) {
        kind = 'inf';
        result.infMismatches++;
        hist.inf++;
      } else {
        result.finitePairs++;
        hist.add(ulp);
        if (ulp === 0) {
          kind = 'signed-zero';
          result.signedZeroMismatches++;
        } else {
          kind = 'finite';
          result.finiteMismatches++;
          sumUlp += ulp;
          if (ulp > result.maxUlp) {
            result.maxUlp = ulp;
            worstIndex = i;
          }
          if (absError > result.maxAbsError) result.maxAbsError = absError;
          const rel = vb === 0 ? Infinity : absError / Math.abs(vb);
          if (rel > result.maxRelError) result.maxRelError = rel;
        }
      }
    }
    if (result.first.length < firstN) result.first.push(record(i, kind, ulp, absError));
    if (tolerance) {
      const va = value(a);
      const vb = value(b);
      if (!isClose(va, vb, tolerance.rtol, tolerance.atol, tolerance.equalNan)) {
        tolerance.violations++;
        if (tolerance.first.length < firstN) tolerance.first.push(record(i, kind, ulp, absError));
      }
      if (Number.isFinite(va) && Number.isFinite(vb)) {
        const bound = tolerance.atol + tolerance.rtol * Math.abs(vb);
        const ratio = bound > 0 ? Math.abs(va - vb) / bound : Math.abs(va - vb) > 0 ? Infinity : 0;
        if (ratio > tolerance.worstRatio) tolerance.worstRatio = ratio;
      }
    }
  }

  result.finitePairs += exactFinite;
  hist.add(0, exactFinite + exactOther);
  result.histogram = hist.finish();
  result.map = mapper ? mapper.finish() : null;
  result.meanUlp = result.finitePairs ? sumUlp / result.finitePairs : 0;
  result.meanUlpMismatched = result.finiteMismatches ? sumUlp / result.finiteMismatches : 0;
  if (worstIndex >= 0) result.worst = record(worstIndex, 'finite', result.maxUlp, Math.abs(value(A[worstIndex]) - value(B[worstIndex])));
  if (tolerance) {
    tolerance.pass = tolerance.violations === 0;
    result.tolerance = tolerance;
  }
  if (result.signedZeroMismatches > 0) {
    result.notes.push(`${result.signedZeroMismatches} element(s) differ only in the sign of zero: equal values, different bits (counted as mismatches, 0 ulp).`);
  }
  if (fmt.dtype !== 'f32') {
    result.notes.push(
      `${fmt.dtype} keeps ${fmt.mantissaBits + 1} significant bits: ${result.mismatches === 0 ? 'identical' : 'these'} ${fmt.dtype} values can hide differences that exist in f32 (DOMAIN §4, the bf16 trap). ` +
        'Compare the f32 outputs too, e.g. with auditExactness().',
    );
  }
  return result;
}

/**
 * Just the number of elements whose bits differ (no statistics): diff's argument checks in front
 * of the one counter every exactness claim uses (lib/analysis/bits.ts).
 */
export function countMismatches(actual: Tensor, expected: Tensor): number {
  checkComparable(actual, expected);
  return countDifferingWords(actual.bits(), expected.bits());
}

