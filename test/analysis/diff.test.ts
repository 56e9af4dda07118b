import { strict as assert } from 'assert';
import { Tensor } from '../../lib/tensor';
import { Rng } from '../../lib/random';
import { diff, countMismatches, isClose } from '../../lib/analysis/diff';
import { convCoordinates, postconvCoordinates, plainCoordinates } from '../../lib/analysis/coordinates';
import { ulpBucket, ulpBucketLabel, histogramCategories } from '../../lib/analysis/ulp-histogram';
import { MIME_BUNDLE } from '../../lib/view/display';

// ---------------------------------------------------------------------------- helpers

function f32Bits(bits: number[], shape: number[] = [bits.length]): Tensor {
  return Tensor.fromBytes(new Uint8Array(Uint32Array.from(bits).buffer), shape, 'f32');
}
function u16Bits(bits: number[], dtype: 'bf16' | 'f16', shape: number[] = [bits.length]): Tensor {
  return Tensor.fromBytes(new Uint8Array(Uint16Array.from(bits).buffer), shape, dtype);
}

/**
 * The independent check: an element's position among representable values, computed from its
 * VALUE with arithmetic (exponent by log2, mantissa by division), not from its bit pattern.
 */
interface Fmt {
  mant: number;
  bias: number;
}
const F32: Fmt = { mant: 23, bias: 127 };
const BF16: Fmt = { mant: 7, bias: 127 };
const F16: Fmt = { mant: 10, bias: 15 };

function positionOf(x: number, f: Fmt): number {
  const ax = Math.abs(x);
  const sign = x < 0 || Object.is(x, -0) ? -1 : 1;
  let idx: number;
  if (ax === Infinity) idx = (2 * f.bias + 1) * 2 ** f.mant;
  else if (ax < 2 ** (1 - f.bias)) idx = ax / 2 ** (1 - f.bias - f.mant); // subnormal steps
  else {
    let e = Math.floor(Math.log2(ax));
    if (2 ** e > ax) e--;
    if (2 ** (e + 1) <= ax) e++;
    idx = (e + f.bias) * 2 ** f.mant + (ax / 2 ** e - 1) * 2 ** f.mant;
  }
  assert.ok(Number.isInteger(idx), `position of ${x} is not an integer (${idx})`);
  return sign * idx;
}
function naiveUlp(a: number, b: number, f: Fmt): number {
  return Math.abs(positionOf(a, f) - positionOf(b, f)) + 0; // + 0 turns -0 into 0
}

describe('diff: hand-made cases against the independent check', () => {
  it('adjacent f32 values are 1 ulp apart, also across a binade', () => {
    const a = f32Bits([0x3f800000, 0x3f7fffff, 0xbf800000, 0x00800000]);
    const b = f32Bits([0x3f800001, 0x3f800000, 0xbf800001, 0x007fffff]);
    const d = diff(a, b);
    assert.equal(d.mismatches, 4);
    assert.equal(d.finiteMismatches, 4);
    assert.equal(d.maxUlp, 1);
    for (const m of d.first) assert.equal(m.ulp, 1);
    // The independent check agrees element by element.
    const va = a.toFloat32();
    const vb = b.toFloat32();
    for (let i = 0; i < 4; i++) assert.equal(naiveUlp(va[i], vb[i], F32), 1);
    assert.equal(d.meanUlp, 1);
    assert.deepEqual(d.histogram.counts, [0, 4]);
  });

  it('+0 and −0: one bitwise mismatch, 0 ulp, equal values', () => {
    const d = diff(f32Bits([0x00000000, 0x3f800000]), f32Bits([0x80000000, 0x3f800000]));
    assert.equal(d.mismatches, 1);
    assert.equal(d.signedZeroMismatches, 1);
    assert.equal(d.finiteMismatches, 0);
    assert.equal(d.maxUlp, 0);
    assert.equal(d.maxAbsError, 0);
    assert.equal(d.first[0].kind, 'signed-zero');
    assert.equal(d.first[0].ulp, 0);
    assert.equal(naiveUlp(0, -0, F32), 0);
    assert.deepEqual(d.histogram.counts, [2]); // both elements sit in the 0-ulp bucket
    assert.ok(d.notes.some((n) => /sign of zero/.test(n)));
  });

  it('NaN payloads: bitwise mismatch without an ulp distance; identical NaNs match', () => {
    const d = diff(f32Bits([0x7fc00000, 0x7fc00000, 0xffc00001, 0x7f800001]), f32Bits([0x7fc00001, 0x7fc00000, 0x7fc00001, 0x7fc00000]));
    assert.equal(d.mismatches, 3);
    assert.equal(d.nanPayloadMismatches, 3);
    assert.equal(d.nanMismatches, 0);
    assert.equal(d.maxUlp, 0);
    assert.ok(d.first.every((m) => m.ulp === null && m.kind === 'nan-payload'));
    assert.equal(d.histogram.nanPayload, 3);
    assert.equal(d.histogram.counts[0], 1); // the identical NaN pair
  });

  it('NaN against a number is counted as nanMismatches', () => {
    const d = diff(f32Bits([0x7fc00000, 0x3f800000, 0x00000000]), f32Bits([0x3f800000, 0xffc00000, 0x00000000]));
    assert.equal(d.nanMismatches, 2);
    assert.equal(d.mismatches, 2);
    assert.equal(d.histogram.nanVsNumber, 2);
    assert.ok(Number.isNaN(d.first[0].absError));
  });

  it('subnormals: the smallest subnormal is 1 ulp from zero, −min to +min is 2', () => {
    const d = diff(f32Bits([0x00000001, 0x80000001, 0x80000001, 0x00000003]), f32Bits([0x00000000, 0x00000001, 0x00000000, 0x00000001]));
    assert.deepEqual(
      d.first.map((m) => m.ulp),
      [1, 2, 1, 2],
    );
    const va = f32Bits([0x00000001, 0x80000001, 0x80000001, 0x00000003]).toFloat32();
    const vb = f32Bits([0x00000000, 0x00000001, 0x00000000, 0x00000001]).toFloat32();
    for (let i = 0; i < 4; i++) assert.equal(naiveUlp(va[i], vb[i], F32), d.first[i].ulp);
    assert.equal(d.maxRelError, Infinity); // expected 0, actual not
  });

  it('±Inf: max finite against Inf is 1 ulp on the ordered line but kept out of the ulp stats', () => {
    const d = diff(f32Bits([0x7f7fffff, 0x7f800000, 0xff800000, 0x7f800000]), f32Bits([0x7f800000, 0xff800000, 0xff800000, 0x7f800000]));
    assert.equal(d.mismatches, 2);
    assert.equal(d.infMismatches, 2);
    assert.equal(d.first[0].ulp, 1);
    assert.equal(d.first[0].kind, 'inf');
    assert.equal(naiveUlp(3.4028234663852886e38, Infinity, F32), 1);
    assert.equal(d.first[1].ulp, 2 * 0x7f800000);
    assert.equal(d.maxUlp, 0);
    assert.equal(d.maxAbsError, 0);
    assert.equal(d.histogram.inf, 2);
  });

  it('bf16: ties round to even, and a 1-ulp bf16 step is counted as 1 ulp', () => {
    // 1 + 2^-8 is halfway between bf16 0x3f80 and 0x3f81: ties to even gives 0x3f80.
    const tie = Tensor.from([1 + 2 ** -8, 1 + 3 * 2 ** -8], [2], 'bf16');
    assert.deepEqual(Array.from(tie.bits()), [0x3f80, 0x3f82]);
    const d = diff(tie, u16Bits([0x3f81, 0x3f82], 'bf16'));
    assert.equal(d.mismatches, 1);
    assert.equal(d.maxUlp, 1);
    assert.equal(naiveUlp(1, 1 + 2 ** -7, BF16), 1);
    assert.equal(d.first[0].actualBits, '0x3f80');
    // bf16 max finite 0x7f7f vs Inf 0x7f80: an Inf mismatch, 1 ulp on the line.
    const e = diff(u16Bits([0x7f7f, 0x0001], 'bf16'), u16Bits([0x7f80, 0x8001], 'bf16'));
    assert.equal(e.infMismatches, 1);
    assert.equal(e.first[0].ulp, 1);
    assert.equal(e.first[1].ulp, 2);
    assert.ok(e.notes.some((n) => /bf16 trap/.test(n)));
  });

  it('f16: adjacent values, smallest subnormal, max finite vs Inf', () => {
    const d = diff(u16Bits([0x3c00, 0x0001, 0x7bff, 0xbc00], 'f16'), u16Bits([0x3c01, 0x0000, 0x7c00, 0xbc02], 'f16'));
    assert.deepEqual(
      d.first.map((m) => [m.ulp, m.kind]),
      [
        [1, 'finite'],
        [1, 'finite'],
        [1, 'inf'],
        [2, 'finite'],
      ],
    );
    assert.equal(naiveUlp(1, 1 + 2 ** -10, F16), 1);
    assert.equal(naiveUlp(2 ** -24, 0, F16), 1);
    assert.equal(naiveUlp(65504, Infinity, F16), 1);
    assert.equal(d.maxUlp, 2);
    assert.equal(d.meanUlpMismatched, 4 / 3);
  });

  it('counts elements, never bytes', () => {
    // One f32 element differing in all four bytes is one mismatch; bf16 elements are two bytes each.
    assert.equal(diff(f32Bits([0x12345678, 0]), f32Bits([0x87654321, 0])).mismatches, 1);
    assert.equal(countMismatches(u16Bits([0x1234, 1, 2], 'bf16'), u16Bits([0x4321, 1, 3], 'bf16')), 2);
  });

  it('kinds add up to mismatches and histogram counts to numel', () => {
    const a = f32Bits([0, 0x3f800000, 0x7fc00000, 0x7fc00001, 0x7f800000, 5, 0x40000000, 0x80000000]);
    const b = f32Bits([0, 0x3f800003, 0x3f800000, 0x7fc00002, 0x7f7fffff, 5, 0x40000100, 0]);
    const d = diff(a, b);
    assert.equal(d.finiteMismatches + d.signedZeroMismatches + d.infMismatches + d.nanMismatches + d.nanPayloadMismatches, d.mismatches);
    const h = histogramCategories(d.histogram);
    assert.equal(
      h.counts.reduce((x, y) => x + y, 0),
      d.numel,
    );
  });
});

describe('diff: ulp buckets', () => {
  it('buckets are 0, 1, 2, 3–4, 5–8, … powers of two', () => {
    const cases: [number, number][] = [
      [0, 0],
      [1, 1],
      [2, 2],
      [3, 3],
      [4, 3],
      [5, 4],
      [8, 4],
      [9, 5],
      [16, 5],
      [17, 6],
      [2 ** 31, 32],
      [2 ** 31 + 1, 33], // (2^31, 2^32]
      [2 ** 32, 33],
    ];
    for (const [d, k] of cases) assert.equal(ulpBucket(d), k, `bucket of ${d}`);
    assert.deepEqual([0, 1, 2, 3, 4, 5].map(ulpBucketLabel), ['0', '1', '2', '3–4', '5–8', '9–16']);
    // Independent: bucket k ≥ 2 holds d with 2^(k-2) < d ≤ 2^(k-1).
    for (let d = 2; d < 5000; d++) {
      const k = ulpBucket(d);
      assert.ok(2 ** (k - 2) < d && d <= 2 ** (k - 1), `d = ${d} in bucket ${k}`);
    }
  });
});

describe('diff: random data against a naive reimplementation', () => {
  for (const dtype of ['f32', 'bf16', 'f16'] as const) {
    it(`${dtype}: counts, max/mean ulp, errors and histogram agree`, () => {
      const rng = new Rng(dtype === 'f32' ? 7 : dtype === 'bf16' ? 8 : 9);
      const n = 20000;
      const wide = dtype === 'f32';
      const A = wide ? new Uint32Array(n) : new Uint16Array(n);
      const B = wide ? new Uint32Array(n) : new Uint16Array(n);
      const mask = wide ? 0xffffffff : 0xffff;
      for (let i = 0; i < n; i++) {
        const a = wide ? rng.nextU32() : rng.nextU32() & 0xffff;
        const r = rng.uniform();
        let b: number;
        if (r < 0.5) b = a; // equal
        else if (r < 0.8) b = (a + rng.int(9) - 4) & mask; // a few ulp away (may cross into NaN/Inf or sign)
        else if (r < 0.85) b = a ^ (wide ? 0x80000000 : 0x8000); // sign flip
        else b = wide ? rng.nextU32() : rng.nextU32() & 0xffff;
        A[i] = a;
        B[i] = b >>> 0;
      }
      // Sprinkle the special values.
      const special = wide ? [0, 0x80000000, 0x7f800000, 0xff800000, 0x7fc00000, 1] : dtype === 'bf16' ? [0, 0x8000, 0x7f80, 0xff80, 0x7fc0, 1] : [0, 0x8000, 0x7c00, 0xfc00, 0x7e00, 1];
      for (let i = 0; i < 300; i++) {
        A[rng.int(n)] = special[rng.int(special.length)];
        B[rng.int(n)] = special[rng.int(special.length)];
      }
      const ta = Tensor.fromBytes(new Uint8Array(A.buffer), [100, 200], dtype);
      const tb = Tensor.fromBytes(new Uint8Array(B.buffer), [100, 200], dtype);
      const d = diff(ta, tb, { firstN: 0 });

      // Naive: from values (exact f32 decodings) and the value-based position; bits only to tell NaN payloads apart.
      const fmt = dtype === 'f32' ? F32 : dtype === 'bf16' ? BF16 : F16;
      const va = ta.toFloat32();
      const vb = tb.toFloat32();
      let mism = 0;
      let finite = 0;
      let zeros = 0;
      let infs = 0;
      let nans = 0;
      let payloads = 0;
      let maxUlp = 0;
      let sumUlp = 0;
      let finitePairs = 0;
      let maxAbs = 0;
      const buckets = new Map<string, number>();
      for (let i = 0; i < n; i++) {
        const a = va[i];
        const b = vb[i];
        const sameBits = A[i] === B[i];
        if (Number.isFinite(a) && Number.isFinite(b)) finitePairs++;
        if (sameBits) {
          buckets.set('0', (buckets.get('0') ?? 0) + 1);
          continue;
        }
        mism++;
        if (Number.isNaN(a) && Number.isNaN(b)) payloads++;
        else if (Number.isNaN(a) || Number.isNaN(b)) nans++;
        else if (!Number.isFinite(a) || !Number.isFinite(b)) infs++;
        else {
          const u = naiveUlp(a, b, fmt);
          const label = ulpBucketLabel(u === 0 ? 0 : u <= 2 ? u : Math.ceil(Math.log2(u)) + 1);
          buckets.set(label, (buckets.get(label) ?? 0) + 1);
          if (u === 0) zeros++;
          else {
            finite++;
            sumUlp += u;
            maxUlp = Math.max(maxUlp, u);
            maxAbs = Math.max(maxAbs, Math.abs(a - b));
          }
        }
      }
      assert.equal(d.mismatches, mism);
      assert.equal(d.finiteMismatches, finite);
      assert.equal(d.signedZeroMismatches, zeros);
      assert.equal(d.infMismatches, infs);
      assert.equal(d.nanMismatches, nans);
      assert.equal(d.nanPayloadMismatches, payloads);
      assert.equal(d.maxUlp, maxUlp);
      assert.equal(d.finitePairs, finitePairs);
      assert.ok(Math.abs(d.meanUlp - sumUlp / finitePairs) <= 1e-9 * Math.max(1, sumUlp / finitePairs));
      assert.equal(d.maxAbsError, maxAbs);
      d.histogram.labels.forEach((label, k) => assert.equal(d.histogram.counts[k], buckets.get(label) ?? 0, `bucket ${label}`));
      assert.ok(mism > 5000 && finite > 1000 && infs > 0 && nans > 0, 'the random data covers every kind');
    });
  }
});

describe('diff: coordinates', () => {
  it('conv: (sequence, token in sequence, channel) from query_start_loc, empty sequences skipped', () => {
    // Lengths 5, 0, 1, 9 → qsl [0, 5, 5, 6, 15]; C = 4.
    const T = 15;
    const C = 4;
    const exp = Tensor.zeros([T, C], 'f32');
    const vals = new Float32Array(T * C);
    const hits: [number, number][] = [
      [0, 0],
      [4, 3],
      [5, 1],
      [6, 2],
      [14, 0],
    ];
    for (const [t, c] of hits) vals[t * C + c] = 1;
    const act = Tensor.from(vals, [T, C], 'f32');
    const d = diff(act, exp, { coordinates: convCoordinates([0, 5, 5, 6, 15]) });
    assert.deepEqual(
      d.first.map((m) => m.coords),
      [
        { sequence: 0, token: 0, channel: 0 },
        { sequence: 0, token: 4, channel: 3 },
        { sequence: 2, token: 0, channel: 1 },
        { sequence: 3, token: 0, channel: 2 },
        { sequence: 3, token: 8, channel: 0 },
      ],
    );
    assert.deepEqual(d.map?.axes, ['token', 'channel']);
    assert.equal(d.mismatchedRows, 5);
    // qsl given as an i32 tensor works the same.
    const d2 = diff(act, exp, { coordinates: convCoordinates(Tensor.from([0, 5, 5, 6, 15], [5], 'i32')) });
    assert.deepEqual(d2.first[2].coords, { sequence: 2, token: 0, channel: 1 });
  });

  it('conv: bad query_start_loc is refused with the argument named', () => {
    assert.throws(() => convCoordinates([1, 5]), /queryStartLoc\[0\]: expected 0/);
    assert.throws(() => convCoordinates([0, 5, 3]), /queryStartLoc\[2\] = 3 is below/);
    const t = Tensor.zeros([6, 2], 'f32');
    assert.throws(() => diff(t, t, { coordinates: convCoordinates([0, 5]) }), /ends at 5 tokens but the tensor has T = 6/);
  });

  it('post-conv: (token, head, feature) for [T, H, D] and [T, H·D]', () => {
    const exp = Tensor.zeros([3, 2, 4], 'f32');
    const vals = new Float32Array(24);
    vals[1 * 8 + 1 * 4 + 3] = 2; // token 1, head 1, feature 3
    const d = diff(Tensor.from(vals, [3, 2, 4], 'f32'), exp, { coordinates: postconvCoordinates() });
    assert.deepEqual(d.first[0].coords, { token: 1, head: 1, feature: 3 });
    const flat = diff(Tensor.from(vals, [3, 8], 'f32'), Tensor.zeros([3, 8], 'f32'), { coordinates: postconvCoordinates({ heads: 2 }) });
    assert.deepEqual(flat.first[0].coords, { token: 1, head: 1, feature: 3 });
    assert.throws(() => diff(Tensor.zeros([3, 8]), Tensor.zeros([3, 8]), { coordinates: postconvCoordinates({ heads: 3 }) }), /heads = 3 × dim/);
  });

  it('plain: indices along each dimension', () => {
    const c = plainCoordinates();
    assert.deepEqual(c.at(23, [2, 3, 4]), [1, 2, 3]);
    assert.deepEqual(c.names([2, 3]), ['row', 'column']);
  });
});

describe('diff: tolerance mode (torch.allclose semantics)', () => {
  it('|a − b| ≤ atol + rtol·|b|, Inf only close to itself, NaN only with equalNan', () => {
    assert.equal(isClose(1.000009, 1, 1e-5, 0), true);
    assert.equal(isClose(1.0000101, 1, 1e-5, 0), false);
    assert.equal(isClose(0, 1e-9, 0, 1e-8), true);
    assert.equal(isClose(Infinity, Infinity, 1, 1), true);
    assert.equal(isClose(Infinity, -Infinity, 1, 1), false);
    assert.equal(isClose(1e38, Infinity, 1, 1), false);
    assert.equal(isClose(NaN, NaN, 1, 1), false);
    assert.equal(isClose(NaN, NaN, 1, 1, true), true);
    assert.equal(isClose(NaN, 1, 1, 1, true), false);
    const a = Tensor.from([1, 2, 3.1, NaN], [4], 'f32');
    const b = Tensor.from([1, 2.01, 3, NaN], [4], 'f32');
    const d = diff(a, b, { tolerance: { rtol: 0.01, atol: 0 } });
    // 2 vs 2.01: |d| = 0.01 ≤ 0.0201 → close; 3.1 vs 3: 0.1 > 0.03 → not; NaN vs NaN (same bits): not close.
    assert.equal(d.tolerance?.violations, 2);
    assert.equal(d.tolerance?.pass, false);
    assert.deepEqual(
      d.tolerance?.first.map((m) => m.index),
      [2, 3],
    );
    assert.equal(d.tolerance?.first[1].kind, 'nan-identical');
    const e = diff(a, b, { tolerance: { rtol: 0.04, equalNan: true } });
    assert.equal(e.tolerance?.violations, 0);
    assert.ok((e.tolerance?.worstRatio ?? 0) > 0.8 && (e.tolerance?.worstRatio ?? 2) <= 1);
    const dflt = diff(a, a, { tolerance: true });
    assert.equal(dflt.tolerance?.rtol, 1e-5);
    assert.equal(dflt.tolerance?.atol, 1e-8);
  });
});

describe('diff: mismatch map', () => {
  it('coarsens (row, column) into grid cells with exact counts', () => {
    const rows = 10;
    const cols = 20;
    const vals = new Float32Array(rows * cols);
    const at = [
      [0, 0],
      [1, 4],
      [9, 19],
      [5, 10],
      [5, 11],
    ];
    for (const [r, c] of at) vals[r * cols + c] = 1;
    const d = diff(Tensor.from(vals, [rows, cols]), Tensor.zeros([rows, cols]), { map: { maxRows: 5, maxCols: 4 } });
    const m = d.map!;
    assert.deepEqual(m.rowEdges, [0, 2, 4, 6, 8, 10]);
    assert.deepEqual(m.colEdges, [0, 5, 10, 15, 20]);
    assert.equal(m.counts[0][0], 2); // (0,0) and (1,4)
    assert.equal(m.counts[4][3], 1);
    assert.equal(m.counts[2][2], 2);
    assert.equal(m.total, 5);
    assert.equal(diff(Tensor.zeros([2, 2]), Tensor.zeros([2, 2]), { map: false }).map, null);
  });

  it('views [T, H, D] as (token, head·feature)', () => {
    const d = diff(Tensor.zeros([4, 2, 3]), Tensor.zeros([4, 2, 3]), { coordinates: postconvCoordinates() });
    assert.equal(d.map?.rows, 4);
    assert.equal(d.map?.cols, 6);
    assert.deepEqual(d.map?.axes, ['token', 'head·feature']);
  });
});

describe('diff: errors and display', () => {
  it('refuses mismatched shapes and dtypes, naming the argument', () => {
    assert.throws(() => diff(Tensor.zeros([2, 3]), Tensor.zeros([3, 2])), /expected: shape \[3, 2\] differs from actual's shape \[2, 3\]/);
    assert.throws(() => diff(Tensor.zeros([2], 'f32'), Tensor.zeros([2], 'bf16')), /expected: dtype bf16 differs from actual's f32/);
    assert.throws(() => diff(Tensor.zeros([2], 'i32'), Tensor.zeros([2], 'i32')), /actual: expected an f32, bf16 or f16 tensor, got i32/);
    assert.throws(() => diff([1, 2] as unknown as Tensor, Tensor.zeros([2])), /actual: expected a Tensor/);
    assert.throws(() => diff(Tensor.zeros([2]), Tensor.zeros([2]), { firstN: -1 }), /firstN/);
    assert.throws(() => diff(Tensor.zeros([2]), Tensor.zeros([2]), { tolerance: { rtol: -1 } }), /tolerance.rtol/);
  });

  it('compares padded (strided) tensors by their elements only', () => {
    const a = Tensor.random([4, 3], 'f32', { seed: 3, rowStride: 5, padValue: 99 });
    const b = Tensor.from(a.toFloat32(), [4, 3], 'f32');
    assert.equal(diff(a, b).mismatches, 0);
  });

  it('gives text/html and text/plain, and a toString with the headline and first mismatches', () => {
    const d = diff(Tensor.from([1, 2, 3], [3]), Tensor.from([1, 2.5, 3], [3]), { label: 'demo' });
    const bundle = d[MIME_BUNDLE]();
    assert.match(String(bundle.data['text/html']), /<table/);
    assert.match(String(bundle.data['text/plain']), /demo: f32 \[3\]: 1 of 3 elements differ/);
    assert.match(d.toString(), /\(index 1\): actual 2 \(0x40000000\) vs expected 2\.5 \(0x40200000\), 2,097,152 ulp/);
    assert.match(diff(Tensor.zeros([2]), Tensor.zeros([2])).toString(), /all 2 elements bit-identical/);
    assert.doesNotThrow(() => JSON.stringify(d));
  });
});
