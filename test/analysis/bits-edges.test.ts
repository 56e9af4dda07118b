// Edges of the bit counter and the rounding-store check that a Stryker run (docs/TESTING.md) found
// unguarded (docs/TESTING.md, "Survivors"): tensors of equal size but other shapes, and the
// exact / NaN bookkeeping of checkRoundingStore.

import { strict as assert } from 'assert';
import { Tensor } from '../../lib/tensor';
import { countBitMismatches, checkRoundingStore } from '../../lib/analysis/bits';

describe('bits: edges the mutation run found', () => {
  it('countBitMismatches refuses tensors of one size but another shape (equal words would otherwise compare)', () => {
    const a = Tensor.zeros([2, 3, 4], 'f32');
    // Every dimension differs, and only one pair does: both must be refused.
    assert.throws(() => countBitMismatches(Tensor.zeros([2, 3], 'f32'), Tensor.zeros([3, 2], 'f32')), /shapes differ \(\[2,3\] vs \[3,2\]\)/);
    assert.throws(() => countBitMismatches(a, Tensor.zeros([2, 4, 3], 'f32')), /shapes differ \(\[2,3,4\] vs \[2,4,3\]\)/);
    // Another rank whose leading dimensions agree.
    assert.throws(() => countBitMismatches(Tensor.zeros([2, 3], 'f32'), Tensor.zeros([2, 3, 1], 'f32')), /shapes differ \(\[2,3\] vs \[2,3,1\]\)/);
    assert.equal(countBitMismatches(a, Tensor.zeros([2, 3, 4], 'f32')), 0);
  });

  it('checkRoundingStore counts an exactly rounded element as exact, not only as inside the window', () => {
    const r = checkRoundingStore([1, 0.5, -2], [1, 0.5, -2], 'bf16', 0.01, 0);
    assert.deepEqual({ exact: r.exact, violations: r.violations }, { exact: 3, violations: 0 });
  });

  it('a NaN stored for a NaN reference is exact; a number stored for a NaN is a violation; -0 for +0 is not exact', () => {
    const same = checkRoundingStore([NaN, 1], [NaN, 1], 'bf16', 0.01, 0);
    assert.deepEqual({ exact: same.exact, violations: same.violations }, { exact: 2, violations: 0 });
    const wrong = checkRoundingStore([0], [NaN], 'bf16', 0.01, 0);
    assert.equal(wrong.violations, 1);
    assert.equal(wrong.exact, 0);
    const zero = checkRoundingStore([-0], [0], 'bf16', 0.01, 0);
    assert.deepEqual({ exact: zero.exact, violations: zero.violations }, { exact: 0, violations: 0 });
  });
});
