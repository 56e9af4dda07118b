import { strict as assert } from 'assert';
import { Tensor } from '../../lib/tensor';
import { auditExactness } from '../../lib/analysis/audit';
import { MIME_BUNDLE } from '../../lib/view/display';

const ulp = 2 ** -23; // f32 ulp at 1

function pair(a: number[], b: number[], dtype: 'bf16' | 'f16' = 'bf16') {
  const a32 = Tensor.from(a, [a.length], 'f32');
  const b32 = Tensor.from(b, [b.length], 'f32');
  return { stored: [a32.astype(dtype), b32.astype(dtype)] as [Tensor, Tensor], sources: [a32, b32] as [Tensor, Tensor] };
}

describe('auditExactness: the bf16 trap', () => {
  it('says plainly when bf16 hides f32 differences', () => {
    // 1 ulp apart in f32, both round to bf16 1.0.
    const a = auditExactness(pair([1 + 8 * ulp, 2, 3], [1 + 9 * ulp, 2, 3]));
    assert.equal(a.storage.mismatches, 0);
    assert.equal(a.f32.mismatches, 1);
    assert.equal(a.f32.maxUlp, 1);
    assert.equal(a.verdict, 'hidden');
    assert.equal(a.hides, true);
    assert.equal(a.hiddenElements, 1);
    assert.match(a.message, /bf16 comparison shows 0 mismatches, but the f32 results differ in 1 elements.*hides them.*bf16 trap/);
    assert.deepEqual(a.roundingMismatches, [0, 0]);
  });

  it('partly hidden: a change across the rounding tie survives, the rest do not', () => {
    // 1 + 2^-8 is the bf16 tie (→ 1.0); one f32 ulp above rounds up to 0x3f81.
    const a = auditExactness(pair([1 + 2 ** -8, 5 + 4 * 4 * ulp], [1 + 2 ** -8 + ulp, 5 + 5 * 4 * ulp]));
    assert.equal(a.f32.mismatches, 2);
    assert.equal(a.storage.mismatches, 1);
    assert.equal(a.verdict, 'partly-hidden');
    assert.match(a.message, /shows only 1 of them \(1 rounded away\)/);
  });

  it('exact and visible verdicts', () => {
    assert.equal(auditExactness(pair([1, 2], [1, 2])).verdict, 'exact');
    const v = auditExactness(pair([1, 2], [1, 4]));
    assert.equal(v.verdict, 'visible');
    assert.equal(v.hides, false);
  });

  it('f16 storage works the same', () => {
    const a = auditExactness(pair([1 + ulp], [1 + 2 * ulp], 'f16'));
    assert.equal(a.storageDtype, 'f16');
    assert.equal(a.verdict, 'hidden');
  });

  it('flags pairs that do not belong together', () => {
    const s = pair([1, 2], [1, 2]);
    const bad = { stored: [s.stored[0], Tensor.from([1, 3], [2], 'bf16')] as [Tensor, Tensor], sources: s.sources };
    const a = auditExactness(bad);
    assert.equal(a.verdict, 'inconsistent');
    assert.deepEqual(a.roundingMismatches, [0, 1]);
    assert.match(a.message, /not belong together/);
  });

  it('refuses wrong dtypes and shapes, naming the argument', () => {
    const s = pair([1, 2], [1, 2]);
    assert.throws(() => auditExactness({ stored: s.sources, sources: s.sources }), /stored: expected bf16 or f16 tensors, got f32/);
    assert.throws(() => auditExactness({ stored: s.stored, sources: s.stored }), /sources: expected f32 tensors, got bf16/);
    assert.throws(() => auditExactness({ stored: s.stored, sources: [Tensor.zeros([3]), Tensor.zeros([3])] }), /sources: shape \[3\] differs from stored's shape \[2\]/);
    assert.throws(() => auditExactness({ stored: [s.stored[0]] as unknown as [Tensor, Tensor], sources: s.sources }), /stored: expected \[a, b\]/);
    assert.throws(() => auditExactness({ stored: [s.stored[0], s.sources[1]], sources: s.sources }), /stored\[1\]: dtype f32 differs from stored\[0\]'s bf16/);
  });

  it('displays the verdict', () => {
    const a = auditExactness({ ...pair([1 + ulp], [1 + 2 * ulp]), label: 'q' });
    const b = a[MIME_BUNDLE]();
    assert.match(String(b.data['text/html']), /hidden/);
    assert.match(a.toString(), /^q: exactness audit \(bf16 vs f32\): hidden/);
  });
});
