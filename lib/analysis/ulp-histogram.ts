// Ulp histogram: how far apart the compared elements are, in buckets 0, 1, 2, 3–4, 5–8, 9–16, …
// (powers of two), plus three classes that have no ulp distance:
//   'Inf'          the pair differs and at least one side is ±Inf (neither is NaN)
//   'NaN≠number'   exactly one side is NaN
//   'NaN payload'  both are NaN with different bits
// Every compared element lands in exactly one bucket or class, so the counts add up to numel.

/** Bucket of a finite ulp distance d ≥ 0: 0 → 0, 1 → 1, 2 → 2, 3–4 → 3, 5–8 → 4, (2^(k-2), 2^(k-1)] → k. */
export function ulpBucket(d: number): number {
  if (d <= 0) return 0;
  if (d > 2 ** 32) return 34;
  return 1 + (32 - Math.clz32(d - 1));
}

/** The label of bucket k. */
export function ulpBucketLabel(k: number): string {
  if (k <= 2) return String(k);
  const lo = 2 ** (k - 2) + 1;
  const hi = 2 ** (k - 1);
  return `${compactPow(lo)}–${compactPow(hi)}`;
}

function compactPow(n: number): string {
  if (n < 100000) return String(n);
  return n.toExponential(1).replace('e+', 'e');
}

export interface UlpHistogram {
  /** Bucket labels, '0' up to the largest non-empty bucket. */
  labels: string[];
  /** Elements per bucket. */
  counts: number[];
  /** Pairs with ±Inf that differ. */
  inf: number;
  /** Exactly one side NaN. */
  nanVsNumber: number;
  /** Both NaN, different bits. */
  nanPayload: number;
}

/** Collects bucket counts; `finish` trims to the largest non-empty bucket. */
export class UlpHistogramBuilder {
  private readonly buckets = new Float64Array(35);
  inf = 0;
  nanVsNumber = 0;
  nanPayload = 0;

  /** Adds `count` elements at finite ulp distance d. */
  add(d: number, count = 1): void {
    this.buckets[ulpBucket(d)] += count;
  }

  finish(): UlpHistogram {
    let last = 0;
    for (let k = 0; k < this.buckets.length; k++) if (this.buckets[k] > 0) last = k;
    const counts = Array.from(this.buckets.subarray(0, last + 1));
    return { labels: counts.map((_, k) => ulpBucketLabel(k)), counts, inf: this.inf, nanVsNumber: this.nanVsNumber, nanPayload: this.nanPayload };
  }
}

/** The histogram's categories and counts, with the non-ulp classes appended when non-empty. */
export function histogramCategories(h: UlpHistogram, alwaysClasses = false): { labels: string[]; counts: number[] } {
  const labels = [...h.labels];
  const counts = [...h.counts];
  const extra: [string, number][] = [
    ['Inf', h.inf],
    ['NaN≠number', h.nanVsNumber],
    ['NaN payload', h.nanPayload],
  ];
  for (const [label, n] of extra) {
    if (n > 0 || alwaysClasses) {
      labels.push(label);
      counts.push(n);
    }
  }
  return { labels, counts };
}
