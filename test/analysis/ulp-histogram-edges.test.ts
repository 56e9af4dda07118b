// The ulp histogram at its edges: distances beyond 2^32 (where clz32 would wrap), labels that switch
// to exponent notation, and which non-ulp classes histogramCategories appends.

import { strict as assert } from 'assert';
import { UlpHistogram, UlpHistogramBuilder, histogramCategories, ulpBucket, ulpBucketLabel } from '../../lib/analysis/ulp-histogram';

describe('ulp histogram: edges', () => {
  it('distances above 2^32 all land in the last bucket, 34', () => {
    assert.equal(ulpBucket(2 ** 32), 33);
    // 2^32 + 1 - 1 wraps to 0 as a 32-bit integer: only the explicit cap keeps it out of bucket 1.
    assert.equal(ulpBucket(2 ** 32 + 1), 34);
    assert.equal(ulpBucket(2 ** 33 + 1), 34);
    assert.equal(ulpBucket(2 ** 40), 34);
    const b = new UlpHistogramBuilder();
    b.add(2 ** 32 + 1, 3);
    const h = b.finish();
    assert.equal(h.counts.length, 35);
    assert.equal(h.counts[34], 3);
    assert.equal(h.counts.reduce((s, n) => s + n, 0), 3);
    assert.equal(h.labels[34], '4.3e9–8.6e9');
  });

  it('labels: plain integers below 100000, one-digit exponent notation from there on', () => {
    assert.equal(ulpBucketLabel(17), '32769–65536');
    assert.equal(ulpBucketLabel(18), '65537–1.3e5');
    assert.equal(ulpBucketLabel(19), '1.3e5–2.6e5');
    assert.equal(ulpBucketLabel(33), '2.1e9–4.3e9');
  });

  const h: UlpHistogram = { labels: ['0', '1', '2'], counts: [5, 0, 2], inf: 0, nanVsNumber: 0, nanPayload: 0 };

  it('histogramCategories: no classes appended when they are empty (the default)', () => {
    assert.deepEqual(histogramCategories(h), { labels: ['0', '1', '2'], counts: [5, 0, 2] });
    assert.deepEqual(histogramCategories(h, false), { labels: ['0', '1', '2'], counts: [5, 0, 2] });
  });

  it('histogramCategories: only the non-empty classes, in order, unless all are asked for', () => {
    const some = { ...h, inf: 3, nanPayload: 1 };
    assert.deepEqual(histogramCategories(some), { labels: ['0', '1', '2', 'Inf', 'NaN payload'], counts: [5, 0, 2, 3, 1] });
    assert.deepEqual(histogramCategories({ ...h, nanVsNumber: 4 }), { labels: ['0', '1', '2', 'NaN≠number'], counts: [5, 0, 2, 4] });
    assert.deepEqual(histogramCategories(h, true), { labels: ['0', '1', '2', 'Inf', 'NaN≠number', 'NaN payload'], counts: [5, 0, 2, 0, 0, 0] });
    // The input is copied, not extended.
    assert.deepEqual(some.labels, ['0', '1', '2']);
    assert.deepEqual(some.counts, [5, 0, 2]);
  });
});
