// The exactness audit: a pair of results stored as bf16 (or f16) checked together with the f32
// results they were rounded from.
//
// bf16 keeps 8 significant bits, so two f32 results a few ulp apart usually round to the same bf16
// value: a "0 mismatches" comparison in bf16 is then a tolerance check in disguise (DOMAIN §4, the
// bf16 trap). The audit compares both pairs and says plainly when the storage dtype hides
// differences that exist in f32. It also checks that each stored tensor is the round-to-nearest-even
// image of its source, so a mix-up of pairs is reported instead of trusted.

import { describe } from '../dtype';
import { Tensor } from '../tensor';
import { MIME_BUNDLE, MimeBundle } from '../view/display';
import { escapeXml, formatNumber, htmlTable } from '../view/format';
import { Coordinates } from './coordinates';
import { DiffResult, checkComparable, countMismatches, diff } from './diff';

export interface AuditInput {
  /** The two results as stored (bf16 or f16), [actual, expected]. */
  stored: [Tensor, Tensor];
  /** The f32 results they were rounded from, in the same order. */
  sources: [Tensor, Tensor];
  coordinates?: Coordinates;
  firstN?: number;
  label?: string;
}

/**
 * 'exact'          identical in f32 and in storage
 * 'hidden'         differences exist in f32, none survive in storage: the storage comparison proves nothing
 * 'partly-hidden'  storage shows some of the elements that differ in f32
 * 'visible'        every f32 difference is also a storage difference
 * 'inconsistent'   storage differs where f32 does not: stored is not the rounding of sources
 */
export type AuditVerdict = 'exact' | 'hidden' | 'partly-hidden' | 'visible' | 'inconsistent';

export class ExactnessAudit {
  readonly label: string | undefined;
  readonly storageDtype: string;
  readonly storage: DiffResult;
  readonly f32: DiffResult;
  /** Elements of stored[i] that are not the rounding of sources[i] to the storage dtype (0 expected). */
  readonly roundingMismatches: [number, number];
  readonly verdict: AuditVerdict;
  /** Differences present in f32 that the storage dtype rounds away. */
  readonly hiddenElements: number;
  readonly message: string;

  /** @internal */
  constructor(label: string | undefined, storage: DiffResult, f32: DiffResult, rounding: [number, number]) {
    this.label = label;
    this.storageDtype = storage.dtype;
    this.storage = storage;
    this.f32 = f32;
    this.roundingMismatches = rounding;
    const s = storage.mismatches;
    const f = f32.mismatches;
    const dt = storage.dtype;
    this.hiddenElements = Math.max(0, f - s);
    if (f === 0 && s === 0) {
      this.verdict = 'exact';
      this.message = `Identical in f32 and in ${dt}: all ${formatNumber(f32.numel)} elements have the same bits.`;
    } else if (s === 0) {
      this.verdict = 'hidden';
      this.message =
        `The ${dt} comparison shows 0 mismatches, but the f32 results differ in ${formatNumber(f)} elements (max ${formatNumber(f32.maxUlp)} ulp): ` +
        `the ${dt} storage hides them (DOMAIN §4, the bf16 trap). A ${dt} 0-ulp result is not evidence that the computations agree; compare f32.`;
    } else if (f > s) {
      this.verdict = 'partly-hidden';
      this.message = `The f32 results differ in ${formatNumber(f)} elements; the ${dt} storage shows only ${formatNumber(s)} of them (${formatNumber(f - s)} rounded away). Judge exactness on f32.`;
    } else if (f === 0) {
      this.verdict = 'inconsistent';
      this.message = `The ${dt} results differ in ${formatNumber(s)} elements although their f32 sources are identical: the stored tensors are not the rounding of these sources.`;
    } else {
      this.verdict = 'visible';
      this.message = `Every one of the ${formatNumber(f)} f32 differences is also visible in ${dt}.`;
    }
    if (rounding[0] || rounding[1]) {
      this.message += ` Warning: stored[0] differs from round(sources[0]) in ${formatNumber(rounding[0])} elements and stored[1] from round(sources[1]) in ${formatNumber(rounding[1])}: the pairs may not belong together.`;
    }
  }

  /** True when the storage comparison hides at least one f32 difference. */
  get hides(): boolean {
    return this.verdict === 'hidden' || this.verdict === 'partly-hidden';
  }

  toString(): string {
    const name = this.label ? `${this.label}: ` : '';
    return [`${name}exactness audit (${this.storageDtype} vs f32): ${this.verdict}`, `  ${this.message}`, `  storage: ${this.storage.headline()}`, `  f32:     ${this.f32.headline()}`].join('\n');
  }

  [MIME_BUNDLE](): MimeBundle {
    const color = this.verdict === 'exact' || this.verdict === 'visible' ? '#1a7f37' : '#b42318';
    const rows = [
      { comparison: `stored (${this.storageDtype})`, mismatches: this.storage.mismatches, 'rows with a mismatch': this.storage.mismatchedRows, 'max ulp': this.storage.maxUlp },
      { comparison: 'sources (f32)', mismatches: this.f32.mismatches, 'rows with a mismatch': this.f32.mismatchedRows, 'max ulp': this.f32.maxUlp },
    ];
    const html = [
      `<div class="gdnlab-audit"><p><b>${escapeXml(this.label ? `${this.label}: ` : '')}exactness audit — <span style="color:${color}">${this.verdict}</span></b></p>`,
      `<p>${escapeXml(this.message)}</p>`,
      htmlTable(['comparison', 'mismatches', 'rows with a mismatch', 'max ulp'], rows),
      '</div>',
    ].join('\n');
    return { data: { 'text/html': html, 'text/plain': this.toString() } };
  }
}

function roundingMismatches(stored: Tensor, source: Tensor): number {
  return countMismatches(stored, source.astype(stored.dtype));
}

/** Compares stored (bf16/f16) results and their f32 sources and says whether storage hides differences. */
export function auditExactness(input: AuditInput): ExactnessAudit {
  if (!input || typeof input !== 'object') throw new TypeError(`auditExactness: expected { stored: [a, b], sources: [a32, b32] }, got ${describe(input)}`);
  const { stored, sources } = input;
  if (!Array.isArray(stored) || stored.length !== 2) throw new TypeError(`stored: expected [a, b] (two bf16 or f16 tensors), got ${describe(stored)}`);
  if (!Array.isArray(sources) || sources.length !== 2) throw new TypeError(`sources: expected [a32, b32] (two f32 tensors), got ${describe(sources)}`);
  checkComparable(stored[0], stored[1], ['stored[0]', 'stored[1]']);
  checkComparable(sources[0], sources[1], ['sources[0]', 'sources[1]']);
  if (stored[0].dtype !== 'bf16' && stored[0].dtype !== 'f16') throw new TypeError(`stored: expected bf16 or f16 tensors, got ${stored[0].dtype}`);
  if (sources[0].dtype !== 'f32') throw new TypeError(`sources: expected f32 tensors, got ${sources[0].dtype}`);
  const same = stored[0].shape.length === sources[0].shape.length && stored[0].shape.every((d, i) => d === sources[0].shape[i]);
  if (!same) throw new RangeError(`sources: shape [${sources[0].shape.join(', ')}] differs from stored's shape [${stored[0].shape.join(', ')}]`);
  const opts = { coordinates: input.coordinates, firstN: input.firstN };
  const storage = diff(stored[0], stored[1], { ...opts, label: `stored ${stored[0].dtype}` });
  const f32 = diff(sources[0], sources[1], { ...opts, label: 'f32 sources' });
  return new ExactnessAudit(input.label, storage, f32, [roundingMismatches(stored[0], sources[0]), roundingMismatches(stored[1], sources[1])]);
}
