import { strict as assert } from 'assert';
import { Tensor, scope } from '../../lib/tensor';
import { forEachBackend } from '../backends';

describe('Tensor', () => {
  it('keeps shape, dtype and values; bits are raw element bits', () => {
    const t = Tensor.from([1, 2, 3, 4, 5, 6], [2, 3], 'bf16');
    assert.deepEqual(t.shape, [2, 3]);
    assert.deepEqual(Array.from(t.toFloat32()), [1, 2, 3, 4, 5, 6]);
    assert.equal((t.bits() as Uint16Array)[0], 0x3f80);
    assert.deepEqual(t.toArray(), [[1, 2, 3], [4, 5, 6]]);
    assert.equal(t.get(1, 2), 6);
  });

  it('padded rows and column views read only their own elements', () => {
    const t = Tensor.random([3, 5], 'f32', { seed: 1, rowStride: 8, padValue: NaN });
    assert.equal(t.rowStride, 8);
    assert.ok(Array.from(t.toFloat32()).every(Number.isFinite));
    const packed = Tensor.from(Array.from({ length: 12 }, (_, i) => i), [3, 4], 'f32');
    const right = packed.sliceCols(2, 2);
    assert.deepEqual(right.toArray(), [[2, 3], [6, 7], [10, 11]]);
  });

  it('seeded random tensors are reproducible', () => {
    const a = Tensor.random([4, 7], 'bf16', { seed: 42 }).bits();
    const b = Tensor.random([4, 7], 'bf16', { seed: 42 }).bits();
    const c = Tensor.random([4, 7], 'bf16', { seed: 43 }).bits();
    assert.deepEqual(a, b);
    assert.notDeepEqual(a, c);
  });

  it('rejects bad shapes and strides with messages naming the argument', () => {
    assert.throws(() => Tensor.from([1, 2], [3], 'f32'), /values: expected 3 elements/);
    assert.throws(() => Tensor.zeros([2, -1]), /shape: expected an array of non-negative integers/);
    assert.throws(() => Tensor.zeros([2, 4], 'f32', { rowStride: 3 }), /rowStride: expected an integer >= the row length 4/);
    assert.throws(() => Tensor.zeros([2], 'q8' as never), /dtype: expected one of/);
  });

  forEachBackend((backend) => {
    it('round-trips through the backend with layout kept, and release is explicit', () => {
      const b = backend();
      const before = b.stats().liveBuffers;
      const t = Tensor.random([5, 9], 'bf16', { seed: 3, rowStride: 12, padValue: 7 });
      const d = t.to(b);
      assert.equal(d.location, 'device');
      assert.equal(b.stats().liveBuffers, before + 1);
      assert.deepEqual(d.bits(), t.bits());
      d.release();
      assert.equal(b.stats().liveBuffers, before);
      assert.throws(() => d.bits(), /was released/);
      d.release(); // twice is fine
    });

    it('scope releases what it allocated except what it returns', async () => {
      const b = backend();
      const before = b.stats().liveBuffers;
      const kept = await scope(() => {
        Tensor.random([100], 'f32', { seed: 1 }).to(b);
        return Tensor.random([10], 'f32', { seed: 2 }).to(b);
      });
      assert.equal(b.stats().liveBuffers, before + 1);
      kept.release();
      assert.equal(b.stats().liveBuffers, before);
    });
  });
});
