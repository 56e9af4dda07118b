import { strict as assert } from 'assert';
import { Rng } from '../../lib/random';
import { bootstrapMedianRatio, median, medianCI, medianInPlace, quantileSorted, relativeNoise, sorted, summarize, zForConfidence } from '../../lib/analysis/stats';

describe('stats', () => {
  it('quantiles interpolate between order statistics (NumPy default)', () => {
    const s = [1, 2, 3, 4];
    assert.equal(quantileSorted(s, 0.25), 1.75);
    assert.equal(quantileSorted(s, 0.5), 2.5);
    assert.equal(quantileSorted(s, 0.9), 3.7);
    assert.equal(quantileSorted(s, 0), 1);
    assert.equal(quantileSorted(s, 1), 4);
    assert.ok(Number.isNaN(quantileSorted([], 0.5)));
    assert.equal(median([5, 1, 3]), 3);
  });

  it('summarize: median, IQR, p10/p90, min, mean ± sd, n', () => {
    const x = Array.from({ length: 101 }, (_, i) => 100 - i); // 0..100 reversed
    const s = summarize(x);
    assert.equal(s.n, 101);
    assert.equal(s.min, 0);
    assert.equal(s.max, 100);
    assert.equal(s.median, 50);
    assert.equal(s.q1, 25);
    assert.equal(s.q3, 75);
    assert.equal(s.iqr, 50);
    assert.equal(s.p10, 10);
    assert.equal(s.p90, 90);
    assert.equal(s.mean, 50);
    assert.ok(Math.abs(s.sd - Math.sqrt((101 * 102) / 12)) < 1e-9); // variance of 0..n with n-1: n(n+2)/12 for n+1 points
    assert.equal(summarize([7]).sd, 0);
    assert.ok(Number.isNaN(summarize([]).median));
  });

  it('z for 95% is 1.96 and the median CI uses ranks n/2 ∓ z√n/2', () => {
    assert.ok(Math.abs(zForConfidence(0.95) - 1.959964) < 1e-5);
    assert.ok(Math.abs(zForConfidence(0.99) - 2.575829) < 1e-5);
    const s = Array.from({ length: 100 }, (_, i) => i + 1); // value = rank
    assert.deepEqual(medianCI(s), [40, 61]);
    assert.deepEqual(medianCI([3]), [3, 3]);
    assert.throws(() => zForConfidence(1), /confidence/);
  });

  it('relative noise: 0 for constant samples, CI and IQR metrics', () => {
    assert.equal(relativeNoise(new Array(50).fill(10)), 0);
    assert.equal(relativeNoise([10]), Infinity);
    const x = Array.from({ length: 100 }, (_, i) => 100 + (i % 10));
    assert.ok(Math.abs(relativeNoise(x, 'iqr') - (quantileSorted(sorted(x), 0.75) - quantileSorted(sorted(x), 0.25)) / 104.5) < 1e-12);
    // More samples from one distribution narrow the median's CI (about as 1/√n).
    const rng = new Rng(2);
    const y = Array.from({ length: 400 }, () => 100 + 5 * rng.normal());
    const few = relativeNoise(y.slice(0, 25));
    const many = relativeNoise(y);
    assert.ok(many < few / 2.5 && many > few / 8, `noise ${few} → ${many}`);
  });

  it('quickselect median agrees with the sorted median, duplicates included', () => {
    const rng = new Rng(3);
    for (let trial = 0; trial < 200; trial++) {
      const n = 1 + rng.int(40);
      const a = Float64Array.from({ length: n }, () => rng.int(6));
      const expected = quantileSorted(sorted(a), 0.5);
      assert.equal(medianInPlace(Float64Array.from(a), n), expected);
    }
  });

  it('bootstrap: ratio of medians, deterministic for a seed, degenerate for constants', () => {
    const a = new Array(40).fill(110);
    const b = new Array(40).fill(100);
    const r = bootstrapMedianRatio(a, b, { resamples: 200 });
    assert.equal(r.ratio, 1.1);
    assert.equal(r.lo, 1.1);
    assert.equal(r.hi, 1.1);
    const rng = new Rng(5);
    const x = Array.from({ length: 200 }, () => 100 + 5 * rng.normal());
    const y = Array.from({ length: 200 }, () => 100 + 5 * rng.normal());
    const one = bootstrapMedianRatio(x, y, { seed: 9, resamples: 500 });
    const two = bootstrapMedianRatio(x, y, { seed: 9, resamples: 500 });
    assert.deepEqual(one, two);
    assert.ok(one.lo <= one.ratio && one.ratio <= one.hi);
    assert.throws(() => bootstrapMedianRatio(x, y.slice(1), { paired: true }), /paired/);
    assert.throws(() => bootstrapMedianRatio([], y), /a: no samples/);
  });

  it('bootstrap CIs cover the true ratio about as often as they claim', () => {
    // Same distribution → true ratio 1; a 95% interval should contain 1 in most of 40 trials.
    const rng = new Rng(11);
    let covered = 0;
    const trials = 40;
    for (let t = 0; t < trials; t++) {
      const x = Array.from({ length: 150 }, () => 50 * Math.exp(0.05 * rng.normal()));
      const y = Array.from({ length: 150 }, () => 50 * Math.exp(0.05 * rng.normal()));
      const r = bootstrapMedianRatio(x, y, { seed: t + 1, resamples: 400 });
      if (r.lo <= 1 && 1 <= r.hi) covered++;
    }
    assert.ok(covered >= 34, `covered ${covered} of ${trials}`);
  });
});
