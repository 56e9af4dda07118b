// lib/analysis/stats.ts at its edges, small and fast (a bootstrap of at most a few dozen resamples of a
// handful of samples), so that Stryker can mutate the file: exact quantiles, summaries, ranks of the
// median's interval, the noise metrics, quickselect against a sort, every argument check with its
// message, and the bootstrap against a plain re-implementation drawing from the same seeded generator.

import { strict as assert } from 'assert';
import { Rng } from '../../lib/random';
import { bootstrapMedianRatio, median, medianCI, medianInPlace, quantileSorted, relativeNoise, sorted, summarize, zForConfidence } from '../../lib/analysis/stats';

/** The bootstrap written plainly: the same draws from Rng(seed), medians by sorting, type-7 quantiles. */
function plainBootstrap(a: number[], b: number[], resamples: number, seed: number, confidence: number, paired: boolean): [number, number] {
  const rng = new Rng(seed);
  const med = (x: number[]) => {
    const s = [...x].sort((p, q) => p - q);
    const m = s.length >> 1;
    return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
  };
  const ratios: number[] = [];
  for (let r = 0; r < resamples; r++) {
    const ra: number[] = [];
    const rb: number[] = [];
    for (let i = 0; i < a.length; i++) {
      const j = rng.int(a.length);
      ra.push(a[j]);
      if (paired) rb.push(b[j]);
    }
    if (!paired) for (let i = 0; i < b.length; i++) rb.push(b[rng.int(b.length)]);
    ratios.push(med(ra) / med(rb));
  }
  ratios.sort((p, q) => p - q);
  const q = (p: number) => {
    const h = (ratios.length - 1) * p;
    const lo = Math.floor(h);
    return h === lo ? ratios[lo] : ratios[lo] + (h - lo) * (ratios[lo + 1] - ratios[lo]);
  };
  const alpha = (1 - confidence) / 2;
  return [q(alpha), q(1 - alpha)];
}

describe('stats at its edges', () => {
  it('sorted: a numeric ascending copy, the input untouched', () => {
    const x = [10, 9, 100, -1, 2];
    assert.deepEqual(Array.from(sorted(x)), [-1, 2, 9, 10, 100]);
    assert.deepEqual(x, [10, 9, 100, -1, 2]);
    assert.ok(sorted(x) instanceof Float64Array);
  });

  it('quantileSorted: the ends below 0 and above 1, exact ranks and interpolation', () => {
    const s = [0, 10, 20, 30];
    assert.equal(quantileSorted(s, -0.5), 0);
    assert.equal(quantileSorted(s, 0), 0);
    assert.equal(quantileSorted(s, 1), 30);
    assert.equal(quantileSorted(s, 2), 30);
    assert.equal(quantileSorted(s, 0.5), 15);
    assert.equal(quantileSorted(s, 1 / 3), 10);
    assert.equal(quantileSorted(s, 0.1), 3.0000000000000004);
    assert.equal(quantileSorted([7], 0.5), 7);
    assert.ok(Number.isNaN(quantileSorted([], 0)));
    assert.ok(Number.isNaN(quantileSorted([], 1)));
  });

  it('median of odd and even counts, unsorted', () => {
    assert.equal(median([9, 1, 5]), 5);
    assert.equal(median([4, 1, 3, 2]), 2.5);
    assert.equal(median([-3]), -3);
  });

  it('summarize: every field of four samples, of one, and of none', () => {
    assert.deepEqual(summarize([4, 1, 3, 2]), {
      n: 4, min: 1, max: 4, mean: 2.5, sd: Math.sqrt(5 / 3), median: 2.5, q1: 1.75, q3: 3.25, iqr: 1.5, p10: 1.3, p90: 3.7,
    });
    assert.deepEqual(summarize([6]), { n: 1, min: 6, max: 6, mean: 6, sd: 0, median: 6, q1: 6, q3: 6, iqr: 0, p10: 6, p90: 6 });
    const e = summarize([]);
    assert.equal(e.n, 0);
    for (const k of ['min', 'max', 'mean', 'sd', 'median', 'q1', 'q3', 'iqr', 'p10', 'p90'] as const) assert.ok(Number.isNaN(e[k]), k);
    // The spread is about the mean: 2, 4, 4, 4, 5, 5, 7, 9 has mean 5 and squared deviations summing to 32.
    const s = summarize([2, 4, 4, 4, 5, 5, 7, 9]);
    assert.equal(s.mean, 5);
    assert.equal(s.sd, Math.sqrt(32 / 7));
  });

  it('zForConfidence: known normal quantiles in the centre and the tail; (0, 1) open, with its message', () => {
    const near = (x: number, y: number) => assert.ok(Math.abs(x - y) < 1e-8, `${x} vs ${y}`);
    near(zForConfidence(0.95), 1.959963984540054);
    near(zForConfidence(0.5), 0.6744897501960817);
    near(zForConfidence(0.9), 1.6448536269514722);
    near(zForConfidence(0.99), 2.5758293035489004);
    near(zForConfidence(0.999), 3.2905267314918945);
    near(zForConfidence(1e-6), 1.2533141373155e-6);
    for (const c of [0, 1, -0.5, 1.5, NaN]) {
      assert.throws(() => zForConfidence(c), (e: unknown) => e instanceof RangeError && e.message === `confidence: expected a number in (0, 1), got ${c}`);
    }
  });

  it('medianCI: the ranks n/2 ∓ z√n/2, clamped to [1, n], at other confidences', () => {
    const s = Array.from({ length: 100 }, (_, i) => i); // value = rank − 1
    assert.deepEqual(medianCI(s), [39, 60]);
    // z(0.5) = 0.6745: half = 3.372, ranks floor(46.63) = 46 and ceil(53.37) + 1 = 55.
    assert.deepEqual(medianCI(s, 0.5), [45, 54]);
    // n = 10: half = 3.099, ranks 1 and 10.
    assert.deepEqual(medianCI([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]), [0, 9]);
    // n = 2: ranks −1 and 4 clamp to 1 and 2.
    assert.deepEqual(medianCI([5, 8]), [5, 8]);
    const e = medianCI([]);
    assert.ok(Number.isNaN(e[0]) && Number.isNaN(e[1]));
    assert.throws(() => medianCI([1, 2], 1), /confidence: expected a number in \(0, 1\), got 1/);
  });

  it("relativeNoise: fewer than 2 samples, a median that is not positive, 'ci' and 'iqr' exactly", () => {
    assert.equal(relativeNoise([]), Infinity);
    assert.equal(relativeNoise([5]), Infinity);
    assert.equal(relativeNoise([2, 4]), 1 / 3); // interval [2, 4] about the median 3
    assert.equal(relativeNoise([0, 0, 0]), Infinity);
    assert.equal(relativeNoise([-1, -2, -3]), Infinity);
    assert.equal(relativeNoise([NaN, NaN]), Infinity);
    assert.equal(relativeNoise([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]), 9 / 11);
    assert.equal(relativeNoise([1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 'ci'), 9 / 11);
    assert.equal(relativeNoise([4, 1, 3, 2], 'iqr'), 0.6);
    assert.equal(relativeNoise([2, 4], 'iqr'), 1 / 3);
    // One far sample: the interval [1, 100] about 5.5 against the quartiles 3.25 and 7.75.
    assert.equal(relativeNoise([1, 2, 3, 4, 5, 6, 7, 8, 9, 100], 'iqr'), 9 / 11);
    assert.equal(relativeNoise([1, 2, 3, 4, 5, 6, 7, 8, 9, 100], 'ci'), 9);
  });

  it('medianInPlace: the first n entries only, every order of small arrays with ties', () => {
    assert.equal(medianInPlace(Float64Array.from([5, 1, 3, 100, 100]), 3), 3);
    assert.equal(medianInPlace(Float64Array.from([4, 1, 3, 2, -50]), 4), 2.5);
    assert.equal(medianInPlace(Float64Array.from([7]), 1), 7);
    assert.equal(medianInPlace(Float64Array.from([8, 2]), 2), 5);
    assert.equal(medianInPlace(Float64Array.from([-3, -3]), 2), -3);
    const rng = new Rng(7);
    for (let trial = 0; trial < 300; trial++) {
      const n = 1 + rng.int(9);
      const a = Array.from({ length: n }, () => rng.int(4) - 1);
      const padded = Float64Array.from([...a, 99, -99]);
      assert.equal(medianInPlace(padded, n), median(a), `[${a}]`);
      assert.deepEqual(Array.from(padded.subarray(0, n)).sort(), [...a].sort(), 'a permutation of the first n');
      assert.deepEqual(Array.from(padded.subarray(n)), [99, -99], 'the rest untouched');
    }
  });

  it('bootstrapMedianRatio: every argument check at its bound, with its message', () => {
    const a = [1, 2, 3];
    const bad = (opts: object, msg: string, x = a, y = a) =>
      assert.throws(() => bootstrapMedianRatio(x, y, opts), (e: unknown) => e instanceof RangeError && e.message === msg);
    bad({ resamples: 9 }, 'resamples: expected an integer ≥ 10, got 9');
    bad({ resamples: 10.5 }, 'resamples: expected an integer ≥ 10, got 10.5');
    bad({ resamples: 0 }, 'resamples: expected an integer ≥ 10, got 0');
    assert.equal(bootstrapMedianRatio(a, a, { resamples: 10 }).resamples, 10);
    bad({ resamples: 10, confidence: 0 }, 'confidence: expected a number in (0, 1), got 0');
    bad({ resamples: 10, confidence: 1 }, 'confidence: expected a number in (0, 1), got 1');
    bad({ resamples: 10, confidence: NaN }, 'confidence: expected a number in (0, 1), got NaN');
    bad({ resamples: 10 }, 'a: no samples', []);
    bad({ resamples: 10 }, 'b: no samples', a, []);
    bad({ resamples: 10 }, 'a: no samples', [], []);
    bad({ resamples: 10, paired: true }, 'paired: a has 3 samples and b 2; paired resampling needs equal counts', a, [1, 2]);
    assert.equal(bootstrapMedianRatio([1], [2], { resamples: 10 }).ratio, 0.5);
    assert.equal(bootstrapMedianRatio(a, [1, 2], { resamples: 10 }).paired, false);
  });

  it('bootstrapMedianRatio: the defaults reported, the ratio of the medians', () => {
    const r = bootstrapMedianRatio([3], [2]);
    assert.deepEqual(r, { ratio: 1.5, lo: 1.5, hi: 1.5, confidence: 0.95, resamples: 2000, seed: 1, paired: false });
    const p = bootstrapMedianRatio([3, 1], [2, 4], { resamples: 12, seed: 5, confidence: 0.8, paired: true });
    assert.equal(p.ratio, 2 / 3);
    assert.equal(p.resamples, 12);
    assert.equal(p.seed, 5);
    assert.equal(p.confidence, 0.8);
    assert.equal(p.paired, true);
  });

  it('bootstrapMedianRatio: the interval is what plain resampling with the same seeded draws gives', () => {
    const a = [10, 12, 11, 15, 9];
    const b = [5, 7, 6, 4];
    for (const [seed, confidence, resamples] of [[1, 0.95, 40], [3, 0.5, 25], [8, 0.9, 11]]) {
      const r = bootstrapMedianRatio(a, b, { seed, confidence, resamples });
      assert.deepEqual([r.lo, r.hi], plainBootstrap(a, b, resamples, seed, confidence, false), `seed ${seed}`);
      assert.ok(r.lo < r.hi, 'an interval, not a point');
    }
    const x = [3, 8, 1, 6];
    const y = [2, 2, 5, 1];
    const p = bootstrapMedianRatio(x, y, { seed: 2, resamples: 30, paired: true });
    assert.deepEqual([p.lo, p.hi], plainBootstrap(x, y, 30, 2, 0.95, true));
    assert.notDeepEqual([p.lo, p.hi], plainBootstrap(x, y, 30, 2, 0.95, false));
  });

  it('bootstrapMedianRatio, paired: exactly proportional samples give the ratio for every resample', () => {
    const b = [1, 2, 3, 4, 5];
    const a = b.map((v) => 2 * v);
    const p = bootstrapMedianRatio(a, b, { paired: true, resamples: 20, seed: 4 });
    assert.equal(p.lo, 2);
    assert.equal(p.hi, 2);
    const u = bootstrapMedianRatio(a, b, { resamples: 20, seed: 4 });
    assert.ok(u.lo < 2 && u.hi > 2, `unpaired [${u.lo}, ${u.hi}]`);
  });
});
