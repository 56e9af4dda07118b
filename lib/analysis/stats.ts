// Robust summaries of timing samples and a bootstrap for the ratio of two medians.
//
// Quantiles interpolate linearly between order statistics (the "type 7" rule of R and NumPy's
// default). The median's confidence interval is distribution-free: order statistics at ranks
// n/2 ∓ z·√n/2 (the normal approximation of the binomial), widened to [min, max] for tiny n.

import { Rng } from '../random';

export interface Summary {
  n: number;
  min: number;
  max: number;
  mean: number;
  /** Sample standard deviation (n − 1); 0 for n < 2. */
  sd: number;
  median: number;
  q1: number;
  q3: number;
  iqr: number;
  p10: number;
  p90: number;
}

/** A sorted Float64Array copy of the samples. */
export function sorted(samples: ArrayLike<number>): Float64Array {
  return Float64Array.from(samples).sort();
}

/** Quantile p ∈ [0, 1] of sorted data, linear interpolation between order statistics. */
export function quantileSorted(s: ArrayLike<number>, p: number): number {
  const n = s.length;
  if (n === 0) return NaN;
  if (p <= 0) return s[0];
  if (p >= 1) return s[n - 1];
  const h = (n - 1) * p;
  const lo = Math.floor(h);
  const frac = h - lo;
  return frac === 0 ? s[lo] : s[lo] + frac * (s[lo + 1] - s[lo]);
}

export function median(samples: ArrayLike<number>): number {
  return quantileSorted(sorted(samples), 0.5);
}

export function summarize(samples: ArrayLike<number>): Summary {
  const s = sorted(samples);
  const n = s.length;
  if (n === 0) return { n: 0, min: NaN, max: NaN, mean: NaN, sd: NaN, median: NaN, q1: NaN, q3: NaN, iqr: NaN, p10: NaN, p90: NaN };
  let sum = 0;
  for (let i = 0; i < n; i++) sum += s[i];
  const mean = sum / n;
  let ss = 0;
  for (let i = 0; i < n; i++) ss += (s[i] - mean) ** 2;
  const q1 = quantileSorted(s, 0.25);
  const q3 = quantileSorted(s, 0.75);
  return {
    n,
    min: s[0],
    max: s[n - 1],
    mean,
    sd: n > 1 ? Math.sqrt(ss / (n - 1)) : 0,
    median: quantileSorted(s, 0.5),
    q1,
    q3,
    iqr: q3 - q1,
    p10: quantileSorted(s, 0.1),
    p90: quantileSorted(s, 0.9),
  };
}

/** z such that P(|Z| ≤ z) = confidence for a standard normal Z (Acklam's inverse-normal approximation). */
export function zForConfidence(confidence: number): number {
  if (!(confidence > 0 && confidence < 1)) throw new RangeError(`confidence: expected a number in (0, 1), got ${confidence}`);
  return inverseNormal(0.5 + confidence / 2);
}

function inverseNormal(p: number): number {
  const a = [-3.969683028665376e1, 2.209460984245205e2, -2.759285104469687e2, 1.38357751867269e2, -3.066479806614716e1, 2.506628277459239];
  const b = [-5.447609879822406e1, 1.615858368580409e2, -1.556989798598866e2, 6.680131188771972e1, -1.328068155288572e1];
  const c = [-7.784894002430293e-3, -3.223964580411365e-1, -2.400758277161838, -2.549732539343734, 4.374664141464968, 2.938163982698783];
  const d = [7.784695709041462e-3, 3.224671290700398e-1, 2.445134137142996, 3.754408661907416];
  const pl = 0.02425;
  if (p < pl) {
    const q = Math.sqrt(-2 * Math.log(p));
    return (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) / ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
  }
  if (p > 1 - pl) return -inverseNormal(1 - p);
  const q = p - 0.5;
  const r = q * q;
  return ((((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q) / (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1);
}

/** Distribution-free confidence interval of the median from sorted samples. */
export function medianCI(s: ArrayLike<number>, confidence = 0.95): [number, number] {
  const n = s.length;
  if (n === 0) return [NaN, NaN];
  const z = zForConfidence(confidence);
  const half = (z * Math.sqrt(n)) / 2;
  const lo = Math.floor(n / 2 - half); // 1-based rank
  const hi = Math.ceil(n / 2 + half) + 1;
  return [s[Math.max(lo, 1) - 1], s[Math.min(hi, n) - 1]];
}

export type NoiseMetric = 'ci' | 'iqr';

/**
 * Relative noise of a sample set: 'ci' — half-width of the median's 95% confidence interval over
 * the median; 'iqr' — interquartile range over the median. Infinity for fewer than 2 samples.
 */
export function relativeNoise(samples: ArrayLike<number>, metric: NoiseMetric = 'ci'): number {
  if (samples.length < 2) return Infinity;
  const s = sorted(samples);
  const m = quantileSorted(s, 0.5);
  if (!(m > 0)) return Infinity;
  if (metric === 'iqr') return (quantileSorted(s, 0.75) - quantileSorted(s, 0.25)) / m;
  const [lo, hi] = medianCI(s);
  return (hi - lo) / 2 / m;
}

/** k-th smallest (0-based) of the first n entries of a, reordering a (Hoare's quickselect). */
function select(a: Float64Array, n: number, k: number): number {
  let lo = 0;
  let hi = n - 1;
  while (lo < hi) {
    const pivot = a[(lo + hi) >> 1];
    let i = lo;
    let j = hi;
    while (i <= j) {
      while (a[i] < pivot) i++;
      while (a[j] > pivot) j--;
      if (i <= j) {
        const t = a[i];
        a[i] = a[j];
        a[j] = t;
        i++;
        j--;
      }
    }
    if (k <= j) hi = j;
    else if (k >= i) lo = i;
    else return a[k];
  }
  return a[k];
}

/** Median of the first n entries (reorders them; quickselect, no full sort). */
export function medianInPlace(a: Float64Array, n: number): number {
  const hi = select(a, n, n >> 1);
  if (n % 2 === 1) return hi;
  // The largest element below position n/2 is the max of the (now partitioned) lower part.
  let lo = -Infinity;
  for (let i = 0; i < n >> 1; i++) if (a[i] > lo) lo = a[i];
  return (lo + hi) / 2;
}

export interface BootstrapOptions {
  resamples?: number;
  seed?: number;
  confidence?: number;
  /** Resample the same indices for both (samples taken in the same rounds); needs equal lengths. */
  paired?: boolean;
}

export interface RatioCI {
  ratio: number;
  lo: number;
  hi: number;
  confidence: number;
  resamples: number;
  seed: number;
  paired: boolean;
}

/** median(a) / median(b) with a percentile bootstrap confidence interval (seeded: reproducible). */
export function bootstrapMedianRatio(a: ArrayLike<number>, b: ArrayLike<number>, opts: BootstrapOptions = {}): RatioCI {
  const resamples = opts.resamples ?? 2000;
  const seed = opts.seed ?? 1;
  const confidence = opts.confidence ?? 0.95;
  const paired = !!opts.paired;
  if (!Number.isInteger(resamples) || resamples < 10) throw new RangeError(`resamples: expected an integer ≥ 10, got ${resamples}`);
  if (!(confidence > 0 && confidence < 1)) throw new RangeError(`confidence: expected a number in (0, 1), got ${confidence}`);
  if (a.length < 1) throw new RangeError('a: no samples');
  if (b.length < 1) throw new RangeError('b: no samples');
  if (paired && a.length !== b.length) throw new RangeError(`paired: a has ${a.length} samples and b ${b.length}; paired resampling needs equal counts`);
  const rng = new Rng(seed);
  const na = a.length;
  const nb = b.length;
  const ra = new Float64Array(na);
  const rb = new Float64Array(nb);
  const ratios = new Float64Array(resamples);
  for (let r = 0; r < resamples; r++) {
    for (let i = 0; i < na; i++) {
      const j = rng.int(na);
      ra[i] = a[j];
      if (paired) rb[i] = b[j];
    }
    if (!paired) for (let i = 0; i < nb; i++) rb[i] = b[rng.int(nb)];
    ratios[r] = medianInPlace(ra, na) / medianInPlace(rb, nb);
  }
  ratios.sort();
  const alpha = (1 - confidence) / 2;
  return { ratio: median(a) / median(b), lo: quantileSorted(ratios, alpha), hi: quantileSorted(ratios, 1 - alpha), confidence, resamples, seed, paired };
}
