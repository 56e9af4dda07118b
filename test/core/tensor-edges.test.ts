// Edge tests for lib/tensor.ts on the host (host storage and the host backend, small shapes; no kernel):
// shapes, strides, offsets, slicing, reshapes, reading and writing, host <-> backend round trips,
// releasing and scopes, with exact messages and one past each edge, so that Stryker can take the file
// in (docs/TESTING.md, "Mutation testing").

import { strict as assert } from 'assert';
import { Tensor, HostStorage, DeviceStorage, releaseTensors, scope, numelOf, checkShape, MAX_HOST_BYTES, Coordinates } from '../../lib/tensor';
import { Backend } from '../../lib/backend';
import { openBackend } from '../backends';
import { throwsExactly } from '../stand-ins';


const coords = (kind: string): Coordinates => ({
  kind,
  names: () => ['i'],
  mapAxes: () => ['a', 'b'],
  check: () => undefined,
  at: (i) => [i],
});

describe('Tensor edges', () => {
  let backend: Backend;
  before(() => {
    backend = openBackend('host');
  });

  describe('construction and facts', () => {
    it('rows, cols, numel and contiguity of each rank', () => {
      const s = Tensor.zeros([]);
      assert.deepEqual([s.rank, s.rows, s.cols, s.numel, s.rowStride, s.offset], [0, 1, 1, 1, 1, 0]);
      assert.equal(s.storage.bytes, 4);
      const t = Tensor.zeros([2, 3, 4], 'bf16');
      assert.deepEqual([t.rank, t.rows, t.cols, t.numel, t.rowStride], [3, 6, 4, 24, 4]);
      assert.equal(t.storage.bytes, 48);
      assert.ok(Object.isFrozen(t.shape));
      const e = Tensor.zeros([0, 3]);
      assert.deepEqual([e.rows, e.cols, e.numel, e.storage.bytes], [0, 3, 0, 0]);
      const e2 = Tensor.zeros([2, 0]);
      assert.deepEqual([e2.rows, e2.cols, e2.numel], [2, 0, 0]);
      assert.ok(Tensor.zeros([1, 3], 'f32', { rowStride: 5 }).contiguous);
      assert.ok(Tensor.zeros([0, 3], 'f32', { rowStride: 5 }).contiguous);
      assert.ok(!Tensor.zeros([2, 3], 'f32', { rowStride: 5 }).contiguous);
      assert.ok(Tensor.zeros([2, 3], 'f32', { rowStride: 3 }).contiguous);
    });

    it('layout bytes, extents and offsets', () => {
      const t = Tensor.zeros([3, 2], 'f16', { rowStride: 5, offset: 1 });
      assert.equal(t.storage.bytes, (1 + 2 * 5 + 2) * 2);
      assert.equal(t.extentElements(), 1 + 2 * 5 + 2);
      assert.equal(t.extentBytes, (2 * 5 + 2) * 2);
      const e = Tensor.zeros([0, 4], 'f32', { offset: 3 });
      assert.equal(e.extentElements(), 3);
      assert.equal(e.extentBytes, 0);
      assert.equal(e.storage.bytes, 12);
      assert.equal(Tensor.zeros([4], 'i8').storage.bytes, 4);
      const none = Tensor.zeros([2, 0], 'f32', { rowStride: 4, offset: 1 });
      assert.deepEqual([none.extentElements(), none.extentBytes, none.storage.bytes], [1, 0, 4]);
      assert.equal(Tensor.zeros([4], 'i32').storage.bytes, 16);
    });

    it('rowStride, offset and storage refused one past the edge, with the argument named', () => {
      Tensor.zeros([2, 4], 'f32', { rowStride: 4 });
      throwsExactly(() => Tensor.zeros([2, 4], 'f32', { rowStride: 3 }), RangeError, 'rowStride: expected an integer >= the row length 4, got 3');
      throwsExactly(() => Tensor.zeros([2, 4], 'f32', { rowStride: 4.5 }), RangeError, 'rowStride: expected an integer >= the row length 4, got 4.5');
      throwsExactly(() => Tensor.zeros([2], 'f32', { offset: -1 }), RangeError, 'offset: expected a non-negative integer, got -1');
      throwsExactly(() => Tensor.zeros([2], 'f32', { offset: 0.5 }), RangeError, 'offset: expected a non-negative integer, got 0.5');
      assert.equal(Tensor.zeros([2], 'f32', { offset: 0 }).offset, 0);
      new Tensor([2, 3], 'f32', new HostStorage(new Uint8Array(24)));
      throwsExactly(() => new Tensor([2, 3], 'f32', new HostStorage(new Uint8Array(23))), RangeError,
        'storage: 24 bytes needed for shape [2,3] f32 (rowStride 3, offset 0), storage has 23');
      throwsExactly(() => new Tensor([2, 3], 'f32', new HostStorage(new Uint8Array(24)), { offset: 1 }), RangeError,
        'storage: 28 bytes needed for shape [2,3] f32 (rowStride 3, offset 1), storage has 24');
      new Tensor([0, 3], 'f32', new HostStorage(new Uint8Array(0)), { offset: 5 });  // no elements, no bytes needed
      throwsExactly(() => new Tensor([2], 'q8' as never, new HostStorage(new Uint8Array(8))), TypeError,
        "dtype: expected one of 'f32', 'bf16', 'f16', 'i32', 'i8', got 'q8'");
    });

    it('checkShape and numelOf', () => {
      assert.deepEqual(numelOf([]), 1);
      assert.deepEqual(numelOf([2, 3, 4]), 24);
      const s = [1, 2];
      const c = checkShape(s, 'w');
      assert.deepEqual(c, [1, 2]);
      assert.notEqual(c, s);
      checkShape([0], 'w');
      throwsExactly(() => checkShape('x' as never, 'w'), TypeError, "w: expected an array of non-negative integers, got 'x'");
      throwsExactly(() => checkShape([2, -1], 'w'), TypeError, 'w: expected an array of non-negative integers, got [2, -1]');
      throwsExactly(() => checkShape([1.5], 'w'), TypeError, 'w: expected an array of non-negative integers, got [1.5]');
    });

    it('from writes each dtype rounded, rows into their strides; refuses a wrong count and non-integers', () => {
      const t = Tensor.from([1, 2, 3, 4], [2, 2], 'f32', { rowStride: 3, offset: 1 });
      assert.deepEqual(Array.from(new Uint32Array((t.storage as HostStorage).data.buffer)),
        [0, 0x3f800000, 0x40000000, 0, 0x40400000, 0x40800000]);
      assert.deepEqual(t.toArray(), [[1, 2], [3, 4]]);
      assert.equal(Tensor.from([1], [1]).dtype, 'f32');
      assert.deepEqual(Array.from(Tensor.from([1 + 2 ** -8, 1 + 3 * 2 ** -8], [2], 'bf16').bits()), [0x3f80, 0x3f82]);
      assert.deepEqual(Array.from(Tensor.from([1 + 2 ** -11, 65504], [2], 'f16').bits()), [0x3c00, 0x7bff]);
      assert.deepEqual(Array.from(Tensor.from([-3, 2 ** 31 - 1], [2], 'i32').bits()), [-3, 2 ** 31 - 1]);
      assert.deepEqual(Array.from(Tensor.from([-128, 127], [2], 'i8').bits()), [-128, 127]);
      throwsExactly(() => Tensor.from([1.5], [1], 'i32'), RangeError, 'values: i32 tensors take integers, got 1.5');
      throwsExactly(() => Tensor.from([0.5], [1], 'i8'), RangeError, 'values: i8 tensors take integers, got 0.5');
      throwsExactly(() => Tensor.from([1, 2], [3]), RangeError, 'values: expected 3 elements for shape [3], got 2');
      throwsExactly(() => Tensor.from([1, 2, 3, 4], [3]), RangeError, 'values: expected 3 elements for shape [3], got 4');
      assert.equal(Tensor.from([7], []).get(), 7);
    });

    it('fromBytes copies exactly the bytes of the shape', () => {
      const b = new Uint8Array([0, 0, 0x80, 0x3f, 0, 0, 0, 0x40]);
      const t = Tensor.fromBytes(b, [2], 'f32');
      b[3] = 0;
      assert.deepEqual(t.toArray(), [1, 2]);
      throwsExactly(() => Tensor.fromBytes(new Uint8Array(7), [2], 'f32'), RangeError, 'bytes: expected 8 bytes for shape [2] f32, got 7');
      throwsExactly(() => Tensor.fromBytes(new Uint8Array(9), [2], 'f32'), RangeError, 'bytes: expected 8 bytes for shape [2] f32, got 9');
      throwsExactly(() => Tensor.fromBytes(new Uint8Array(2), [2], 'q' as never), TypeError, "dtype: expected one of 'f32', 'bf16', 'f16', 'i32', 'i8', got 'q'");
      throwsExactly(() => Tensor.fromBytes(new Uint8Array(2), [-2], 'i8'), TypeError, 'shape: expected an array of non-negative integers, got [-2]');
    });

    it('random: seeded, scaled, uniform on [-1, 1), integers rounded, padding poisoned', () => {
      assert.deepEqual(Tensor.random([5]).bits(), Tensor.random([5], 'f32', { seed: 0 }).bits());
      assert.equal(Tensor.random([5]).dtype, 'f32');
      const a = Tensor.random([6], 'f32', { seed: 9 }).toFloat64();
      const b = Tensor.random([6], 'f32', { seed: 9, scale: 4 }).toFloat64();
      assert.deepEqual(Array.from(b), Array.from(a, (x) => Math.fround(x * 4)));
      const u = Tensor.random([400], 'f32', { seed: 2, dist: 'uniform' }).toFloat64();
      assert.ok(u.every((x) => x >= -1 && x < 1));
      assert.ok(u.some((x) => x < -0.9) && u.some((x) => x > 0.9));
      const n = Tensor.random([400], 'f32', { seed: 2 }).toFloat64();
      assert.ok(n.some((x) => Math.abs(x) > 1.5), 'normal, not uniform');
      const i = Tensor.random([50], 'i32', { seed: 3, scale: 10 }).toFloat64();
      assert.ok(i.every(Number.isInteger) && i.some((x) => x !== 0));
      assert.ok(Tensor.random([50], 'i8', { seed: 3, scale: 10 }).toFloat64().every(Number.isInteger));
      const p = Tensor.random([3, 2], 'f32', { seed: 1, rowStride: 3, padValue: 5 });
      const words = new Float32Array((p.storage as HostStorage).data.buffer);
      assert.deepEqual([words[2], words[5]], [5, 5]);
      const q = Tensor.random([3, 2], 'f32', { seed: 1, rowStride: 3 });
      assert.deepEqual([new Float32Array((q.storage as HostStorage).data.buffer)[2]], [0]);
    });

    it('host size limits: the message names shape, dtype and sizes (nothing allocated)', () => {
      assert.equal(MAX_HOST_BYTES, require('buffer').constants.MAX_LENGTH);
      const limit = `${(MAX_HOST_BYTES / 2 ** 30).toFixed(2)} GiB (${MAX_HOST_BYTES} bytes)`;
      const n = MAX_HOST_BYTES / 4 + 1;
      throwsExactly(() => Tensor.zeros([n], 'f32'), RangeError,
        `shape: [${n}] f32 needs ${((n * 4) / 2 ** 30).toFixed(2)} GiB (${n * 4} bytes) of host memory; a host tensor holds at most ${limit} ` +
          "(Node.js's largest typed array). Make it on a backend instead (Tensor.empty(shape, dtype, { backend })), or use a smaller shape");
      throwsExactly(() => Tensor.empty([2 ** 34], 'i8'), RangeError,
        `shape: [${2 ** 34}] i8 needs 16.0 GiB (${2 ** 34} bytes) of host memory; a host tensor holds at most ${limit} ` +
          "(Node.js's largest typed array). Make it on a backend instead (Tensor.empty(shape, dtype, { backend })), or use a smaller shape");
      assert.throws(() => Tensor.zeros([2 ** 50], 'i8'), (e: Error) => e.message.startsWith(`shape: [${2 ** 50}] i8 needs 1024.0 TiB (${2 ** 50} bytes) of host`));
      assert.throws(() => Tensor.zeros([2 ** 40], 'i8'), (e: Error) => e.message.startsWith(`shape: [${2 ** 40}] i8 needs 1.00 TiB (${2 ** 40} bytes) of host`));
      assert.throws(() => Tensor.zeros([10 * 2 ** 30], 'i8'), (e: Error) => e.message.startsWith(`shape: [${10 * 2 ** 30}] i8 needs 10.0 GiB (`));
      assert.throws(() => Tensor.zeros([2 ** 41], 'i8'), (e: Error) => e.message.startsWith(`shape: [${2 ** 41}] i8 needs 2.00 TiB (`));
      throwsExactly(() => Tensor.random([n], 'f32'), RangeError,
        `shape: [${n}] f32 needs ${((n * 4) / 2 ** 30).toFixed(2)} GiB (${n * 4} bytes) of host memory; a host tensor holds at most ${limit} ` +
          "(Node.js's largest typed array). Make it on a backend instead (Tensor.empty(shape, dtype, { backend })), or use a smaller shape");
      const m = MAX_HOST_BYTES / 8 + 1;
      throwsExactly(() => Tensor.random([m], 'i8'), RangeError,
        `shape: Tensor.random draws [${m}] as ${m} float64 values (${((m * 8) / 2 ** 30).toFixed(2)} GiB (${m * 8} bytes)), more than the ${limit} a host array holds; use a smaller shape`);
      throwsExactly(() => Tensor.random([2, -1]), TypeError, 'shape: expected an array of non-negative integers, got [2, -1]');
    });
  });

  describe('views and reading', () => {
    const grid = () => Tensor.from(Array.from({ length: 12 }, (_, i) => i), [3, 4], 'f32');

    it('sliceCols: the edge columns, one past them refused', () => {
      const g = grid();
      const s = g.sliceCols(1, 3);
      assert.deepEqual([s.shape, s.rowStride, s.offset, s.storage === g.storage], [[3, 3], 4, 1, true]);
      assert.deepEqual(s.toArray(), [[1, 2, 3], [5, 6, 7], [9, 10, 11]]);
      assert.deepEqual(s.sliceCols(1, 1).toArray(), [[2], [6], [10]]);
      assert.deepEqual(g.sliceCols(0, 0).shape, [3, 0]);
      assert.deepEqual(g.sliceCols(4, 0).shape, [3, 0]);
      throwsExactly(() => g.sliceCols(2, 3), RangeError, 'sliceCols: columns [2, 5) are outside 0..4');
      throwsExactly(() => g.sliceCols(-1, 2), RangeError, 'sliceCols: columns [-1, 1) are outside 0..4');
      throwsExactly(() => g.sliceCols(1, -1), RangeError, 'sliceCols: columns [1, 0) are outside 0..4');
      throwsExactly(() => g.sliceCols(0.5, 1), RangeError, 'sliceCols: columns [0.5, 1.5) are outside 0..4');
      throwsExactly(() => g.sliceCols(0, 1.5), RangeError, 'sliceCols: columns [0, 1.5) are outside 0..4');
    });

    it('reshape: contiguous takes the new row length, padded keeps its rows', () => {
      const g = grid();
      const r = g.reshape([2, 6]);
      assert.deepEqual([r.rowStride, r.offset], [6, 0]);
      assert.deepEqual(r.toArray(), [[0, 1, 2, 3, 4, 5], [6, 7, 8, 9, 10, 11]]);
      const one = Tensor.from([3], [1]).reshape([]);
      assert.deepEqual([one.rank, one.rowStride, one.get()], [0, 1, 3]);
      throwsExactly(() => g.reshape([5]), RangeError, 'reshape: [5] has 5 elements, tensor has 12');
      throwsExactly(() => g.reshape([-1]), TypeError, 'shape: expected an array of non-negative integers, got [-1]');
      const s = g.sliceCols(1, 2);
      const k = s.reshape([1, 3, 2]);
      assert.deepEqual([k.rowStride, k.offset], [4, 1]);
      assert.deepEqual(k.toArray(), [[[1, 2], [5, 6], [9, 10]]]);
      throwsExactly(() => s.reshape([6]), Error, 'reshape: a padded tensor can only be reshaped keeping its row length');
      const row = g.sliceCols(1, 2).reshape([3, 2]).sliceCols(0, 2);
      assert.deepEqual(row.toArray(), [[1, 2], [5, 6], [9, 10]]);
      const single = Tensor.from([1, 2, 3, 4], [1, 4]).sliceCols(1, 2).reshape([2]);  // one row: contiguous
      assert.deepEqual([single.rowStride, single.offset, single.toArray()], [2, 1, [2, 3]]);
    });

    it('bits, toFloat32/64 and toArray of each dtype pack rows', () => {
      const s = grid().sliceCols(2, 2);
      assert.deepEqual(Array.from(s.bits()), [2, 3, 6, 7, 10, 11].map((x) => new Uint32Array(new Float32Array([x]).buffer)[0]));
      assert.ok(s.bits() instanceof Uint32Array);
      assert.deepEqual(Array.from(s.toFloat32()), [2, 3, 6, 7, 10, 11]);
      assert.ok(s.toFloat64() instanceof Float64Array);
      assert.deepEqual(Array.from(s.toFloat64()), [2, 3, 6, 7, 10, 11]);
      const bf = Tensor.from([1.5, -2], [2], 'bf16');
      assert.ok(bf.bits() instanceof Uint16Array);
      assert.deepEqual(Array.from(bf.bits()), [0x3fc0, 0xc000]);
      assert.deepEqual(Array.from(bf.toFloat32()), [1.5, -2]);
      const h = Tensor.from([1.5, -2], [2], 'f16');
      assert.deepEqual(Array.from(h.bits()), [0x3e00, 0xc000]);
      assert.deepEqual(Array.from(h.toFloat32()), [1.5, -2]);
      const i = Tensor.from([-5, 7], [2], 'i32');
      assert.ok(i.bits() instanceof Int32Array);
      assert.deepEqual(Array.from(i.toFloat32()), [-5, 7]);
      const b = Tensor.from([-5, 7], [2], 'i8');
      assert.ok(b.bits() instanceof Int8Array);
      assert.deepEqual(Array.from(b.toFloat32()), [-5, 7]);
      assert.equal(Tensor.from([4], []).toArray(), 4);
      assert.deepEqual(Tensor.from([0, 1, 2, 3, 4, 5, 6, 7], [2, 2, 2]).toArray(), [[[0, 1], [2, 3]], [[4, 5], [6, 7]]]);
      assert.deepEqual(Tensor.from([0, 1, 2, 3, 4, 5], [3, 1, 2]).toArray(), [[[0, 1]], [[2, 3]], [[4, 5]]]);
    });

    it('get: each index checked at both edges, values of each dtype', () => {
      const g = grid().sliceCols(1, 3);
      assert.equal(g.get(0, 0), 1);
      assert.equal(g.get(2, 2), 11);
      assert.equal(g.get(1, 1), 6);
      throwsExactly(() => g.get(1), RangeError, 'get: expected 2 indices, got 1');
      throwsExactly(() => g.get(1, 1, 1), RangeError, 'get: expected 2 indices, got 3');
      throwsExactly(() => g.get(3, 0), RangeError, 'get: index 0 = 3 outside 0..2');
      throwsExactly(() => g.get(-1, 0), RangeError, 'get: index 0 = -1 outside 0..2');
      throwsExactly(() => g.get(0.5, 0), RangeError, 'get: index 0 = 0.5 outside 0..2');
      throwsExactly(() => g.get(0, 3), RangeError, 'get: index 1 = 3 outside 0..2');
      throwsExactly(() => g.get(0, -1), RangeError, 'get: index 1 = -1 outside 0..2');
      throwsExactly(() => g.get(0, 0.5), RangeError, 'get: index 1 = 0.5 outside 0..2');
      const t3 = Tensor.from(Array.from({ length: 24 }, (_, i) => i), [2, 3, 4]);
      assert.equal(t3.get(1, 2, 3), 23);
      assert.equal(t3.get(1, 0, 2), 14);
      throwsExactly(() => t3.get(0, 3, 0), RangeError, 'get: index 1 = 3 outside 0..2');
      assert.equal(Tensor.from([1.5], [1], 'bf16').get(0), 1.5);
      assert.equal(Tensor.from([-0.25], [1], 'f16').get(0), -0.25);
      assert.equal(Tensor.from([-7], [1], 'i8').get(0), -7);
      assert.equal(Tensor.from([0.1], [1], 'f32').get(0), Math.fround(0.1));
      assert.equal(Tensor.from([9], []).get(), 9);
    });

    it('reads storage at an odd byte offset (copied to an aligned view)', () => {
      const raw = new Uint8Array(9);
      const view = raw.subarray(1);
      view.set([0, 0, 0x80, 0x3f, 0, 0, 0, 0x40]);
      const t = new Tensor([2], 'f32', new HostStorage(view));
      assert.deepEqual(t.toArray(), [1, 2]);
      assert.equal(t.get(1), 2);
      const h = new Tensor([2], 'f16', new HostStorage(raw.subarray(1, 5)));
      assert.deepEqual(Array.from(h.bits()), [0, 0x3f80]);
    });
  });

  describe('writing, copies, coordinates, printing', () => {
    it('fillPadding writes only the padding, host tensors only', () => {
      const t = Tensor.from([1, 2, 3, 4], [2, 2], 'i8', { rowStride: 3, offset: 1 });
      assert.equal(t.fillPadding(9), t);
      assert.deepEqual(Array.from(new Int8Array((t.storage as HostStorage).data.buffer)), [0, 1, 2, 9, 3, 4]);
      const words = new Float32Array(10);
      const v = new Tensor([2, 2], 'f32', new HostStorage(new Uint8Array(words.buffer, 4, 36)), { rowStride: 3 });
      v.fillPadding(5);  // rows 0 and 1 of a storage of 3 rows: row 2's padding is not the view's
      assert.deepEqual(Array.from(words), [0, 0, 0, 5, 0, 0, 5, 0, 0, 0]);
      const w = new Tensor([2], 'f32', new HostStorage(new Uint8Array(words.buffer, 4, 8)));
      assert.deepEqual(w.toArray(), [0, 0]);
      const d = Tensor.zeros([2]).to(backend);
      throwsExactly(() => d.fillPadding(0), Error, 'fillPadding: host tensors only');
      d.release();
      throwsExactly(() => d.fillPadding(0), Error, 'tensor: tensor [2] f32 was released');
    });

    it('clone and astype: contiguous host copies of their own', () => {
      const s = Tensor.from([1, 2, 3, 4, 5, 6], [2, 3]).sliceCols(1, 2);
      const c = s.clone();
      assert.deepEqual([c.rowStride, c.offset, c.storage.bytes], [2, 0, 16]);
      assert.deepEqual(c.toArray(), [[2, 3], [5, 6]]);
      assert.notEqual(c.storage, s.storage);
      const a = Tensor.from([1 + 2 ** -8, 3], [2]).astype('bf16');
      assert.deepEqual([a.dtype, Array.from(a.bits())], ['bf16', [0x3f80, 0x4040]]);
    });

    it('coordinates: set, checked, evaluated once, kept by same-shape copies only', () => {
      const t = Tensor.zeros([2]);
      assert.equal(t.coordinates, null);
      let made = 0;
      assert.equal(t.withCoordinates(() => { made++; return coords('k'); }), t);
      assert.equal(made, 0);
      assert.equal((t.coordinates as Coordinates | null)?.kind, 'k');
      assert.equal((t.coordinates as Coordinates | null)?.kind, 'k');
      assert.equal(made, 1);
      const c = coords('c');
      const u = Tensor.zeros([2]).withCoordinates(c);
      assert.equal(u.coordinates, c);
      assert.equal(u.clone().coordinates, c);
      assert.equal(u.astype('bf16').coordinates, c);
      assert.equal(u.host().coordinates, c);
      const d = u.to(backend);
      assert.equal(d.coordinates, c);
      assert.equal(d.host().coordinates, c);
      d.release();
      assert.equal(u.reshape([1, 2]).coordinates, null);
      assert.equal(u.sliceCols(0, 1).coordinates, null);
      const bad = Tensor.zeros([2]).withCoordinates(() => { throw new Error('gone'); });
      assert.equal(bad.coordinates, null);
      assert.equal(u.withCoordinates(null).coordinates, null);
      throwsExactly(() => t.withCoordinates(5 as never), TypeError,
        'coordinates: expected a Coordinates mapper (convCoordinates, postconvCoordinates, …) or null, got 5');
      throwsExactly(() => t.withCoordinates({ kind: 'x' } as never), TypeError,
        'coordinates: expected a Coordinates mapper (convCoordinates, postconvCoordinates, …) or null, got Object');
      throwsExactly(() => t.withCoordinates(undefined as never), TypeError,
        'coordinates: expected a Coordinates mapper (convCoordinates, postconvCoordinates, …) or null, got undefined');
    });

    it('toString and inspect say shape, dtype, where, padding and release', () => {
      assert.equal(Tensor.zeros([2, 3], 'bf16').toString(), 'Tensor([2, 3], bf16, host)');
      assert.equal(Tensor.zeros([2, 3], 'f32', { rowStride: 4 }).toString(), 'Tensor([2, 3], f32, host, rowStride 4)');
      const d = Tensor.zeros([2]).to(backend);
      assert.equal(require('util').inspect(d), 'Tensor([2], f32, host)');
      d.release();
      assert.equal(String(d), 'Tensor([2], f32, host, released)');
      assert.equal(d.location, 'device');
    });
  });

  describe('the host backend', () => {
    it('to and host keep layout and bytes; the same tensor when already there', () => {
      const t = Tensor.from([1, 2, 3, 4], [2, 2], 'bf16', { rowStride: 3, offset: 1 });
      assert.equal(t.host(), t);
      assert.equal(t.backend, undefined);
      const d = t.to(backend);
      assert.equal(d.to(backend), d);
      assert.deepEqual([d.location, d.backend === backend, d.rowStride, d.offset, d.storage.bytes], ['device', true, 3, 1, 12]);
      assert.equal(d.addr, (d.storage as DeviceStorage).addr + 2);
      const h = d.host();
      assert.deepEqual([h.location, h.rowStride, h.offset], ['host', 3, 1]);
      assert.deepEqual(Array.from((h.storage as HostStorage).data), Array.from((t.storage as HostStorage).data));
      assert.deepEqual(d.toArray(), [[1, 2], [3, 4]]);
      assert.equal(d.get(1, 1), 4);
      const other = Backend.open('host');
      const elsewhere = d.to(other);
      const back = elsewhere.to(backend);
      assert.ok(back !== elsewhere && back.backend === backend && elsewhere.backend === other);
      assert.deepEqual(back.toArray(), [[1, 2], [3, 4]]);
      for (const x of [elsewhere, back]) x.release();
      other.close();
      const z = Tensor.zeros([0]).to(backend);
      assert.equal(z.storage.bytes, 1);
      assert.deepEqual(z.toArray(), []);
      throwsExactly(() => t.addr, Error, 'tensor: is on the host; call .to(backend) first');
      for (const x of [d, z]) x.release();
      throwsExactly(() => d.addr, Error, 'tensor: tensor [2, 2] bf16 was released');
      throwsExactly(() => d.host(), Error, 'tensor: tensor [2, 2] bf16 was released');
      throwsExactly(() => d.to(backend), Error, 'tensor: tensor [2, 2] bf16 was released');
      const r = Tensor.zeros([1]);
      r.release();
      assert.ok(r.released);
      throwsExactly(() => r.to(backend), Error, 'tensor: tensor [1] f32 was released');
    });

    it('empty and emptyFilled: whole words, at least one', () => {
      const sizes = [[[1], 'bf16', 4], [[3], 'bf16', 8], [[0], 'f32', 4], [[5], 'f32', 20], [[2, 2], 'i8', 4], [[5], 'i8', 8]] as const;
      for (const [shape, dtype, bytes] of sizes) {
        const e = Tensor.empty(shape, dtype, { backend });
        assert.equal(e.storage.bytes, bytes, `${shape} ${dtype}`);
        e.release();
      }
      const p = Tensor.empty([2, 2], 'f32', { backend, rowStride: 3, offset: 1 });
      assert.deepEqual([p.storage.bytes, p.rowStride, p.offset], [24, 3, 1]);
      p.release();
      const h = Tensor.empty([3], 'i8');
      assert.deepEqual([h.location, h.storage.bytes, h.toArray()], ['host', 3, [0, 0, 0]]);
      const [a, b] = Tensor.emptyFilled([[[3], 'bf16'], [[1], 'f32']], [0x12345678, 0x0badf00d], backend);
      assert.deepEqual([a.storage.bytes, b.storage.bytes, a.backend === backend], [8, 4, true]);
      assert.deepEqual(Array.from(a.bits()), [0x5678, 0x1234, 0x5678]);
      assert.deepEqual(Array.from(b.bits()), [0x0badf00d]);
      releaseTensors([a, b]);
      assert.ok(a.released && b.released);
    });

    it('a failed upload releases the buffer it allocated', () => {
      const freed: number[] = [];
      const fake = {
        closed: false,
        alloc: (n: number) => { assert.equal(n, 8); return 1234; },
        upload: () => { throw new Error('upload failed'); },
        free: (a: number) => freed.push(a),
      } as unknown as Backend;
      throwsExactly(() => Tensor.from([1, 2], [2]).to(fake), Error, 'upload failed');
      assert.deepEqual(freed, [1234]);
      const uploads: number[] = [];
      const quiet = { closed: false, alloc: () => 99, upload: (_a: number, b: Uint8Array) => uploads.push(b.byteLength), free: () => undefined } as unknown as Backend;
      Tensor.zeros([0]).to(quiet);
      assert.deepEqual(uploads, []);
      Tensor.zeros([1], 'i8').to(quiet);
      assert.deepEqual(uploads, [1]);
    });

    it('release frees once; releaseTensors batches one backend, frees views once, releases the rest one by one', () => {
      const base = backend.stats().liveBuffers;
      const d = Tensor.zeros([4]).to(backend);
      const v = d.sliceCols(1, 2);
      assert.equal(backend.stats().liveBuffers, base + 1);
      v.release();
      d.release();
      assert.equal(backend.stats().liveBuffers, base);
      assert.ok(d.released && v.released);
      throwsExactly(() => v.get(0), Error, 'tensor: tensor [2] f32 was released');

      const other = Backend.open('host');
      const calls: string[] = [];
      const freeMany = backend.freeMany.bind(backend);
      const free = backend.free.bind(backend);
      Object.assign(backend, {
        freeMany: (a: number[]) => { calls.push(`freeMany ${a.length}`); freeMany(a); },
        free: (a: number) => { calls.push('free'); free(a); },
      });
      try {
        const a = Tensor.zeros([1]).to(backend);
        const b = Tensor.zeros([1]).to(backend);
        const c = Tensor.zeros([1]).to(backend);
        const o = Tensor.zeros([1]).to(other);
        const h = Tensor.zeros([1]);
        const gone = Tensor.zeros([1]).to(backend);
        gone.release();
        calls.length = 0;
        releaseTensors([gone, a, a.sliceCols(0, 1), h, o, b, c]);
        assert.deepEqual(calls, ['freeMany 3']);
        assert.ok([a, b, c, o, h].every((t) => t.released));
        assert.equal(backend.stats().liveBuffers, base);
        calls.length = 0;
        const one = Tensor.zeros([1]).to(backend);
        releaseTensors([one, one]);
        assert.deepEqual(calls, ['free']);
        assert.ok(one.released);
        calls.length = 0;
        const first = Tensor.zeros([1]).to(other);
        const x = Tensor.zeros([1]).to(backend);
        const y = Tensor.zeros([1]).to(backend);
        releaseTensors([first, x, y]);  // the first backend seen batches; another's are released alone
        assert.ok(first.released && x.released && y.released);
        const hostFirst = Tensor.zeros([1]);
        const p = Tensor.zeros([1]).to(backend);
        const q = Tensor.zeros([1]).to(backend);
        calls.length = 0;
        releaseTensors([hostFirst, p, q]);
        assert.ok(hostFirst.released && p.released && q.released);
        assert.deepEqual(calls, ['freeMany 2']);
        releaseTensors([]);
        releaseTensors([Tensor.zeros([1])]);
        const onClosed = Tensor.zeros([1]).to(other);
        const onClosed2 = Tensor.zeros([1]).to(other);
        const mine = Tensor.zeros([1]).to(backend);
        other.close();
        calls.length = 0;
        releaseTensors([onClosed, onClosed2, mine]);  // a closed backend's buffers are not batched (nor freed)
        assert.deepEqual(calls, ['free']);
        assert.ok(onClosed.released && onClosed2.released && mine.released);
        assert.equal(backend.stats().liveBuffers, base);
      } finally {
        delete (backend as unknown as Record<string, unknown>).freeMany;
        delete (backend as unknown as Record<string, unknown>).free;
        if (!other.closed) other.close();
      }
    });

    it('scope releases what it allocated, keeps what it returns (to depth 3) for the enclosing scope', async () => {
      const base = backend.stats().liveBuffers;
      let inner: Tensor[] = [];
      const outer = await scope(async () => {
        const r = await scope(() => {
          const t = [0, 1, 2, 3, 4].map(() => Tensor.zeros([1]).to(backend));
          inner = t;
          return { a: t[0], b: [t[1], { c: t[2] }], d: [[[t[3]]]] };
        });
        assert.deepEqual(inner.map((t) => t.released), [false, false, false, true, true]);
        assert.equal(r.a, inner[0]);
        return inner[1];
      });
      assert.equal(outer, inner[1]);
      assert.deepEqual(inner.map((t) => t.released), [true, false, true, true, true]);
      outer.release();
      assert.equal(backend.stats().liveBuffers, base);
      const kept = await scope(() => Tensor.zeros([1]).to(backend));
      assert.ok(!kept.released);
      kept.release();
      await assert.rejects(scope(() => { Tensor.zeros([1]).to(backend); throw new Error('inside'); }), /inside/);
      const after = Tensor.zeros([1]).to(backend);
      await scope(() => 1);
      assert.ok(!after.released);  // the failed scope was closed: nothing later lands in it
      after.release();
      assert.equal(await scope(() => null), null);
      const h = await scope(() => Tensor.zeros([1]));
      assert.ok(!h.released);
      assert.equal(backend.stats().liveBuffers, base + 1);  // the failed scope's tensor was not its to release
    });
  });
});

describe('host bytes off their element alignment (lib/tensor.ts typedView)', function () {
  // Bytes 1..9 of a buffer: bf16 elements at an odd byte offset, as a view into a file's buffer can be.
  const unaligned = () => {
    const buf = new Uint8Array(10);
    buf.set([0x80, 0x3f, 0x00, 0x40, 0x40, 0x40, 0x80, 0x40], 1); // 1, 2, 3, 4 in bf16, little-endian
    return new Tensor([2, 2], 'bf16', new HostStorage(buf.subarray(1, 9)));
  };

  it('reads them through a copy: the values are right', function () {
    assert.deepEqual([...unaligned().toFloat32()], [1, 2, 3, 4]);
  });

  it('refuses a write into them instead of writing into a copy that is thrown away', function () {
    const t = new Tensor([2, 1], 'bf16', new HostStorage(new Uint8Array(10).subarray(1, 9)), { rowStride: 2 });
    throwsExactly(() => t.fillPadding(7), RangeError,
      "tensor: its host bytes start at byte offset 1, not a multiple of bf16's 2 bytes, so a write would go to a copy and be lost; write into tensor.clone() instead");
    // Aligned bytes take the write (the guard is not a refusal of every view).
    const ok = new Tensor([2, 1], 'bf16', new HostStorage(new Uint8Array(10).subarray(2, 10)), { rowStride: 2 });
    ok.fillPadding(1);
    assert.deepEqual([...new Uint16Array(ok.storage instanceof HostStorage ? ok.storage.data.slice().buffer : new ArrayBuffer(0))], [0, 0x3f80, 0, 0x3f80]);
  });
});
