// Edge tests for lib/ops/matmul.ts (matmulNT) on the host backend with matrices of a few elements:
// every argument check with its exact message, the out buffer's checks and aliasing, exact products in
// each dtype, and what a failed native call leaves behind (docs/TESTING.md, "Mutation testing").
// Allocations are counted with Backend.stats() on a backend of the test's own.

import { strict as assert } from 'assert';
import { Tensor } from '../../lib/tensor';
import { Backend, GdnError, activeBackend } from '../../lib/backend';
import { matmulNT } from '../../lib/ops/matmul';
import { throwsExactly } from '../stand-ins';


// a [2, 3] · b [4, 3]ᵀ: small integers, so every product is exact in f32 and bf16.
const A = [1, 2, 3, 4, 5, 6];
const B = [1, 0, 0, 0, 1, 0, 0, 0, 1, 1, -1, 2];
const AB = [[1, 2, 3, 5], [4, 5, 6, 11]];

describe('ops/matmul edges', () => {
  let b: Backend;
  before(() => {
    b = Backend.open('host');
  });
  after(() => b.close());
  const live = () => b.stats().liveBuffers;

  it('exact products: f32 and bf16 inputs, f32 and bf16 outputs, host or device inputs', () => {
    for (const dt of ['f32', 'bf16'] as const) {
      const a = Tensor.from(A, [2, 3], dt);
      const bb = Tensor.from(B, [4, 3], dt);
      const out = matmulNT(a, bb, { backend: b });
      assert.equal(out.dtype, 'f32');
      assert.deepEqual(out.shape, [2, 4]);
      assert.equal(out.backend, b);
      assert.deepEqual(out.toArray(), AB);
      out.release();
      const o16 = matmulNT(a, bb, { backend: b, outDtype: 'bf16' });
      assert.equal(o16.dtype, 'bf16');
      assert.deepEqual(o16.toArray(), AB);
      o16.release();
      // Inputs already on the backend are used as they are (no copy left behind either way).
      const da = a.to(b);
      const db = bb.to(b);
      const n = live();
      const od = matmulNT(da, db, { backend: b });
      assert.equal(live(), n + 1);
      assert.deepEqual(od.toArray(), AB);
      od.release();
      da.release();
      db.release();
    }
    assert.equal(live(), 0);
  });

  it('rounds once to bf16, from the f32 sum', () => {
    // 1 + 2^-8 + 2^-8: the f32 sum 1 + 2^-7 is a bf16 value; rounding each product to bf16 first would not be.
    const a = Tensor.from([1, 1, 1], [1, 3], 'f32');
    const bb = Tensor.from([1, 2 ** -8, 2 ** -8], [1, 3], 'f32');
    const o = matmulNT(a, bb, { backend: b, outDtype: 'bf16' });
    assert.deepEqual(Array.from(o.bits()), [0x3f81]);
    o.release();
  });

  it('without a backend the active one runs it', () => {
    const o = matmulNT(Tensor.from(A, [2, 3]), Tensor.from(B, [4, 3]));
    assert.equal(o.backend, activeBackend());
    assert.deepEqual(o.toArray(), AB);
    o.release();
  });

  it('argument checks, each naming the argument, in order, before anything is allocated', () => {
    const a = Tensor.from(A, [2, 3]);
    const bb = Tensor.from(B, [4, 3]);
    throwsExactly(() => matmulNT(a, bb, { backend: b, outDtype: 'f16' as never }), TypeError, "outDtype: expected one of 'f32', 'bf16', got 'f16'");
    throwsExactly(() => matmulNT([1] as never, bb, { backend: b }), TypeError, 'a: expected a Tensor, got [1]');
    throwsExactly(() => matmulNT(a, null as never, { backend: b }), TypeError, 'b: expected a Tensor, got null');
    const gone = Tensor.from(A, [2, 3]).to(b);
    gone.release();
    throwsExactly(() => matmulNT(gone, bb, { backend: b }), Error, 'a: tensor [2, 3] f32 was released');
    throwsExactly(() => matmulNT(Tensor.zeros([2, 3], 'f16'), Tensor.zeros([4, 3], 'f16'), { backend: b }), TypeError, 'a: expected dtype f32 or bf16, got f16');
    throwsExactly(() => matmulNT(a, Tensor.from(B, [4, 3], 'bf16'), { backend: b }), TypeError, 'b: expected dtype f32 (the dtype of a), got bf16');
    throwsExactly(() => matmulNT(Tensor.zeros([6]), bb, { backend: b }), RangeError, 'a: expected shape [M, K], got [6]');
    throwsExactly(() => matmulNT(Tensor.zeros([1, 2, 3]), bb, { backend: b }), RangeError, 'a: expected shape [M, K], got [1, 2, 3]');
    throwsExactly(() => matmulNT(a, Tensor.zeros([4, 2]), { backend: b }), RangeError, 'b: expected shape [N, K=3], got [4, 2]');
    // the right K in the second place but not a matrix
    throwsExactly(() => matmulNT(a, Tensor.zeros([4, 3, 1]), { backend: b }), RangeError, 'b: expected shape [N, K=3], got [4, 3, 1]');
    throwsExactly(() => matmulNT(a, Tensor.zeros([3]), { backend: b }), RangeError, 'b: expected shape [N, K=3], got [3]');
    throwsExactly(() => matmulNT(Tensor.zeros([2, 3], 'f32', { rowStride: 4 }), bb, { backend: b }), RangeError,
      'a: expected a contiguous tensor, got row stride 4 for rows of 3');
    throwsExactly(() => matmulNT(a, Tensor.zeros([4, 3], 'f32', { rowStride: 5 }), { backend: b }), RangeError,
      'b: expected a contiguous tensor, got row stride 5 for rows of 3');
    assert.equal(live(), 0);
  });

  it('out: an object with only `out`, a tensor of [M, N] and outDtype on this backend', () => {
    const a = Tensor.from(A, [2, 3]);
    const bb = Tensor.from(B, [4, 3]);
    throwsExactly(() => matmulNT(a, bb, { backend: b, out: 7 as never }), TypeError, 'out: expected { out } (an output buffer), got 7');
    throwsExactly(() => matmulNT(a, bb, { backend: b, out: 'x' as never }), TypeError, "out: expected { out } (an output buffer), got 'x'");
    throwsExactly(() => matmulNT(a, bb, { backend: b, out: { q: Tensor.zeros([2, 4]) } as never }), TypeError, 'out.q: not an output of matmulNT (expected out)');
    throwsExactly(() => matmulNT(a, bb, { backend: b, out: { out: Tensor.zeros([2, 4]) } }), TypeError,
      'out.out: expected a tensor on the host backend of this call (Tensor.empty(shape, dtype, { backend })), got a host tensor');
    const wrong = Tensor.empty([4, 2], 'f32', { backend: b });
    throwsExactly(() => matmulNT(a, bb, { backend: b, out: { out: wrong } }), RangeError, 'out.out: expected shape [2, 4], got [4, 2]');
    const o16 = Tensor.empty([2, 4], 'bf16', { backend: b });
    throwsExactly(() => matmulNT(a, bb, { backend: b, out: { out: o16 } }), TypeError, 'out.out: expected dtype f32, got bf16');
    wrong.release();
    // The right one: written in place, not poisoned first, returned as the result.
    const r16 = matmulNT(a, bb, { backend: b, outDtype: 'bf16', out: { out: o16 } });
    assert.equal(r16, o16);
    assert.deepEqual(o16.toArray(), AB);
    // `out: {}` and `out: { out: undefined }` allocate as usual.
    const n = live();
    for (const out of [{}, { out: undefined }]) {
      const r = matmulNT(a, bb, { backend: b, out });
      assert.notEqual(r, o16);
      assert.deepEqual(r.toArray(), AB);
      assert.equal(live(), n + 1);
      r.release();
    }
    o16.release();
    assert.equal(live(), 0);
  });

  it('out.out must not share a byte with a or b on the backend (touching is fine)', () => {
    // One buffer: a at elements 0..5, then room for an out of 8 elements.
    const arena = Tensor.empty([24], 'f32', { backend: b });
    const at = (off: number, shape: number[]) => new Tensor(shape, 'f32', arena.storage, { offset: off });
    const a = at(0, [2, 3]);
    b.upload(a.addr, new Uint8Array(new Float32Array(A).buffer));
    const bb = at(16, [2, 3]);  // elements 16..21
    b.upload(bb.addr, new Uint8Array(new Float32Array([1, 0, 0, 0, 1, 0]).buffer));
    throwsExactly(() => matmulNT(a, bb, { backend: b, out: { out: at(5, [2, 2]) } }), RangeError,
      'out.out: shares memory with a (an output must not alias an input or another output)');
    throwsExactly(() => matmulNT(a, bb, { backend: b, out: { out: at(13, [2, 2]) } }), RangeError,
      'out.out: shares memory with b (an output must not alias an input or another output)');
    const o = at(6, [2, 2]);  // elements 6..9: after a, before b
    assert.equal(matmulNT(a, bb, { backend: b, out: { out: o } }), o);
    assert.deepEqual(o.toArray(), [[1, 2], [4, 5]]);
    const o2 = at(12, [2, 2]);  // elements 12..15: ends where b starts
    matmulNT(a, bb, { backend: b, out: { out: o2 } });
    assert.deepEqual(o2.toArray(), [[1, 2], [4, 5]]);
    arena.release();
    assert.equal(live(), 0);
  });

  it('a failed native call releases the fresh output and the staged inputs, not a given out', () => {
    const other = Backend.open('host');
    try {
      const lib = other.lib;
      // The library refuses every product on this backend (status 1, invalid argument).
      (other as unknown as { lib: unknown }).lib = { ...lib, matmulNTRaw: () => 1 };
      const a = Tensor.from(A, [2, 3]);
      const bb = Tensor.from(B, [4, 3]);
      assert.throws(() => matmulNT(a, bb, { backend: other }), (e: Error) => e instanceof GdnError && e.message.startsWith('matmulNT: '));
      assert.equal(other.stats().liveBuffers, 0);
      const given = Tensor.empty([2, 4], 'f32', { backend: other });
      assert.throws(() => matmulNT(a, bb, { backend: other, out: { out: given } }), GdnError);
      assert.equal(given.released, false);
      assert.equal(other.stats().liveBuffers, 1);
      given.release();
    } finally {
      other.close();
    }
  });
});
