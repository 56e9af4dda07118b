// The comparison primitives, bit by bit (docs/TESTING.md): pairs of words differing in exactly one
// bit, for every bit position of f32, bf16 and f16, on bases that are normal, subnormal, ±0, ±Inf
// and NaN (with payloads), through every counter — countDifferingWords, countBitMismatches,
// countMismatches, diff, differingRows — and the rounding-store check against an exact RNE.

import { strict as assert } from 'assert';
import { Tensor } from '../../lib/tensor';
import { countBitMismatches, countDifferingWords, checkRoundingStore, roundNearestEven } from '../../lib/analysis/bits';
import { countMismatches, diff } from '../../lib/analysis/diff';
import { differingRows } from '../../lib/check/postconv';
import { FLOAT_FORMATS, isNaNBits, ulpDistance } from '../../lib/analysis/floatbits';
import { bf16BitsToF32, f16BitsToF32, f32ToBf16Bits, f32ToF16Bits, f32FromBits } from '../../lib/dtype';

type F = 'f32' | 'bf16' | 'f16';
const WIDTH: Record<F, number> = { f32: 32, bf16: 16, f16: 16 };

function tensorOf(words: number[], dtype: F, shape: number[] = [words.length]): Tensor {
  const arr = dtype === 'f32' ? Uint32Array.from(words, (w) => w >>> 0) : Uint16Array.from(words);
  return Tensor.fromBytes(new Uint8Array(arr.buffer), shape, dtype);
}

/** Base words of each format: 1.0, -1.5, the smallest subnormal, a large subnormal, ±0, ±Inf, the largest finite, a quiet and a signalling NaN with payloads. */
const BASES: Record<F, number[]> = {
  f32: [0x3f800000, 0xbfc00000, 0x00000001, 0x007fffff, 0x00000000, 0x80000000, 0x7f800000, 0xff800000, 0x7f7fffff, 0x7fc00123, 0xff812345],
  bf16: [0x3f80, 0xbfc0, 0x0001, 0x007f, 0x0000, 0x8000, 0x7f80, 0xff80, 0x7f7f, 0x7fc1, 0xff81],
  f16: [0x3c00, 0xbe00, 0x0001, 0x03ff, 0x0000, 0x8000, 0x7c00, 0xfc00, 0x7bff, 0x7e01, 0xfc81],
};

for (const dtype of ['f32', 'bf16', 'f16'] as const) {
  describe(`comparison primitives, bit by bit: ${dtype}`, () => {
    const width = WIDTH[dtype];
    const fmt = FLOAT_FORMATS[dtype];
    const mask = width === 32 ? 0xffffffff : 0xffff;

    it(`every one of the ${width} bit positions, on ${BASES[dtype].length} bases: each counter sees every pair`, () => {
      const bases = BASES[dtype];
      for (let bit = 0; bit < width; bit++) {
        const flipped = bases.map((w) => ((w ^ (2 ** bit)) & mask) >>> 0);
        const a = tensorOf(bases, dtype);
        const b = tensorOf(flipped, dtype);
        const n = bases.length;
        const where = `${dtype} bit ${bit}`;
        assert.equal(countDifferingWords(a.bits(), b.bits()), n, where);
        assert.equal(countBitMismatches(a, b), n, where);
        assert.equal(countMismatches(a, b), n, where);
        const d = diff(a, b, { map: false });
        assert.equal(d.mismatches, n, where);
        assert.equal(d.mismatchedRows, 1, where);
        // The kinds add up: every mismatching pair is counted in exactly one class.
        assert.equal(d.finiteMismatches + d.signedZeroMismatches + d.infMismatches + d.nanMismatches + d.nanPayloadMismatches, n, where);
        // Each element alone: one mismatch, and it is the right kind.
        for (let i = 0; i < n; i++) {
          const x = tensorOf([bases[i]], dtype);
          const y = tensorOf([flipped[i]], dtype);
          assert.equal(countBitMismatches(x, y), 1, `${where} base 0x${bases[i].toString(16)}`);
          const e = diff(x, y, { map: false });
          assert.equal(e.mismatches, 1);
          const nanX = isNaNBits(fmt, bases[i]);
          const nanY = isNaNBits(fmt, flipped[i]);
          const expectKind = nanX && nanY ? 'nan-payload' : nanX || nanY ? 'nan' : (bases[i] & fmt.magMask) === fmt.infMag || (flipped[i] & fmt.magMask) === fmt.infMag ? 'inf' : ((bases[i] | flipped[i]) & fmt.magMask) === 0 ? 'signed-zero' : 'finite';
          assert.equal(e.first[0].kind, expectKind, `${where} base 0x${bases[i].toString(16)}`);
          if (expectKind === 'finite') assert.equal(e.maxUlp, ulpDistance(fmt, bases[i], flipped[i]));
          // And the same word against itself is no mismatch at all, NaN included.
          assert.equal(countBitMismatches(x, x.clone()), 0);
          assert.equal(diff(x, x.clone(), { map: false }).mismatches, 0);
        }
      }
    });

    it('the lowest bit alone: every 1-ulp neighbour is counted (a counter masking bit 0 would miss them all)', () => {
      const words: number[] = [];
      for (let i = 0; i < 4096; i++) words.push((width === 32 ? 0x3f000000 + i * 977 : 0x3000 + i) & mask);
      const a = tensorOf(words, dtype, [64, 64]);
      const b = tensorOf(words.map((w) => (w ^ 1) >>> 0), dtype, [64, 64]);
      assert.equal(countBitMismatches(a, b), 4096);
      assert.equal(countMismatches(a, b), 4096);
      const d = diff(a, b, { map: false });
      assert.equal(d.mismatches, 4096);
      assert.equal(d.maxUlp, 1);
      assert.equal(d.mismatchedRows, 64);
      assert.equal(differingRows(a, b), 64);
      // One flipped word per second row: half the rows differ.
      const c = words.map((w, i) => (i % 128 === 5 ? (w ^ 1) >>> 0 : w));
      assert.equal(differingRows(a, tensorOf(c, dtype, [64, 64])), 32);
      assert.equal(countBitMismatches(a, tensorOf(c, dtype, [64, 64])), 32);
    });

    it('±0 differ in bits (counted, 0 ulp, signed-zero); NaNs with different payloads differ; equal NaN words do not', () => {
      const sign = fmt.signMask;
      const z = diff(tensorOf([0], dtype), tensorOf([sign], dtype), { map: false });
      assert.equal(z.mismatches, 1);
      assert.equal(z.signedZeroMismatches, 1);
      assert.equal(z.maxUlp, 0);
      const qnan = fmt.infMag | (1 << (fmt.mantissaBits - 1));
      const p = diff(tensorOf([qnan, qnan], dtype), tensorOf([qnan | 1, qnan], dtype), { map: false });
      assert.equal(p.mismatches, 1);
      assert.equal(p.nanPayloadMismatches, 1);
      assert.equal(countBitMismatches(tensorOf([qnan], dtype), tensorOf([qnan | 1], dtype)), 1);
      const inf = diff(tensorOf([fmt.infMag], dtype), tensorOf([fmt.infMag - 1], dtype), { map: false });
      assert.equal(inf.infMismatches, 1);
    });
  });
}

describe('comparison primitives: bf16 exhaustively', () => {
  it('all 65,536 words: equal to themselves, and to no word differing in any one bit', () => {
    const all = Array.from({ length: 65536 }, (_, i) => i);
    const a = tensorOf(all, 'bf16', [256, 256]);
    assert.equal(countBitMismatches(a, a.clone()), 0);
    assert.equal(diff(a, a.clone(), { map: false }).mismatches, 0);
    for (let bit = 0; bit < 16; bit++) {
      const b = tensorOf(all.map((w) => w ^ (1 << bit)), 'bf16', [256, 256]);
      assert.equal(countBitMismatches(a, b), 65536, `bit ${bit}`);
      assert.equal(countMismatches(a, b), 65536, `bit ${bit}`);
      assert.equal(diff(a, b, { map: false }).mismatches, 65536, `bit ${bit}`);
    }
  });

  it('ulp distance of every non-NaN word to its successor is 1 (and +0/−0 are 0 apart)', () => {
    const fmt = FLOAT_FORMATS.bf16;
    for (let w = 0; w < 0x7f80; w++) {
      assert.equal(ulpDistance(fmt, w, w + 1), 1);
      assert.equal(ulpDistance(fmt, w | 0x8000, (w + 1) | 0x8000), 1);
    }
    assert.equal(ulpDistance(fmt, 0, 0x8000), 0);
    assert.equal(ulpDistance(fmt, 1, 0x8001), 2);
  });
});

describe('round to nearest even, checked against exact arithmetic', () => {
  it('roundNearestEven: ties go to even, subnormals, overflow, signed zero', () => {
    assert.equal(roundNearestEven(1 + 2 ** -8, 'bf16'), 1); // tie, 1 is even
    assert.equal(roundNearestEven(1 + 3 * 2 ** -8, 'bf16'), 1 + 2 ** -6); // tie, odd below: up
    assert.equal(roundNearestEven(1 + 2 ** -8 + 2 ** -30, 'bf16'), 1 + 2 ** -7); // just above the tie: up
    assert.equal(roundNearestEven(2 ** -134, 'bf16'), 0); // half the smallest subnormal: tie to 0
    assert.equal(roundNearestEven(3 * 2 ** -134, 'bf16'), 2 ** -132);
    assert.ok(Object.is(roundNearestEven(-(2 ** -140), 'bf16'), -0));
    assert.equal(roundNearestEven(65520, 'f16'), Infinity); // max f16 + half ulp: overflow
    assert.equal(roundNearestEven(65519.99, 'f16'), 65504);
    assert.equal(roundNearestEven(2 ** -25, 'f16'), 0);
    assert.equal(roundNearestEven(2 ** -25 + 2 ** -40, 'f16'), 2 ** -24);
    assert.equal(roundNearestEven(1 / 3, 'f32'), Math.fround(1 / 3));
  });

  it('lib/dtype f32→bf16 and f32→f16 round to nearest even at every midpoint of every word (and one f32 ulp either side)', () => {
    const f32Next = (x: number, d: number) => {
      const u = new Uint32Array(new Float32Array([x]).buffer)[0];
      return f32FromBits(x >= 0 ? u + d : u - d);
    };
    for (let w = 0; w < 0x7f80; w++) {
      const lo = bf16BitsToF32(w);
      const mid = (lo + bf16BitsToF32(w + 1)) / 2; // exact in f32: one more significant bit
      for (const s of [1, -1]) {
        for (const x of [mid, f32Next(mid, 1), f32Next(mid, -1)]) {
          const want = roundNearestEven(s * x, 'bf16');
          const got = bf16BitsToF32(f32ToBf16Bits(s * x));
          if (!Object.is(got, want)) assert.fail(`f32ToBf16Bits(${s * x}) = ${got}, nearest even is ${want}`);
        }
      }
    }
    for (let w = 0; w < 0x7c00; w++) {
      const lo = f16BitsToF32(w);
      const mid = (lo + f16BitsToF32(w + 1)) / 2;
      for (const x of [mid, f32Next(mid, 1), f32Next(mid, -1)]) {
        const want = roundNearestEven(x, 'f16');
        const got = f16BitsToF32(f32ToF16Bits(x));
        if (!Object.is(got, want)) assert.fail(`f32ToF16Bits(${x}) = ${got}, nearest even is ${want}`);
      }
    }
  });

  it('checkRoundingStore: passes nearest-even stores, fails truncation, allows the f32 error window only', () => {
    const ref = Float64Array.from({ length: 2000 }, (_, i) => Math.sin(i + 0.5) * 3);
    const rne = Array.from(ref, (r) => roundNearestEven(r, 'bf16'));
    const trunc = Array.from(ref, (r) => bf16BitsToF32((new Uint32Array(new Float32Array([r]).buffer)[0] >>> 16)));
    assert.equal(checkRoundingStore(rne, ref, 'bf16', 1e-6, 1e-6).violations, 0);
    assert.equal(checkRoundingStore(rne, ref, 'bf16', 1e-6, 1e-6).exact, 2000);
    const t = checkRoundingStore(trunc, ref, 'bf16', 1e-6, 1e-6);
    assert.ok(t.violations > 800, `truncation: only ${t.violations} of 2000 flagged`);
    assert.equal(t.first.length, 5);
    // A value one bf16 ulp off is a violation unless the reference sits within tol of the midpoint.
    const mid = 1 + 2 ** -8;
    assert.equal(checkRoundingStore([1 + 2 ** -7], [mid - 1e-9], 'bf16', 0, 1e-8).violations, 0);
    assert.equal(checkRoundingStore([1 + 2 ** -7], [mid - 1e-6], 'bf16', 0, 1e-8).violations, 1);
    assert.equal(checkRoundingStore([NaN, Infinity, -0], [NaN, Infinity, 0], 'bf16', 0, 0).violations, 0);
  });

  it('argument checks and edge values (mutation-testing survivors, docs/TESTING.md)', () => {
    assert.throws(() => countDifferingWords([1, 2], [1]), /lengths differ \(2 vs 1\)/);
    assert.throws(() => countBitMismatches(tensorOf([1], 'f32'), tensorOf([1], 'bf16')), /dtypes differ \(f32 vs bf16\)/);
    assert.throws(() => countBitMismatches(tensorOf([1, 2], 'f32'), tensorOf([1, 2], 'f32', [1, 2])), /shapes differ/);
    assert.throws(() => countBitMismatches(tensorOf([1, 2], 'f32', [2, 1]), tensorOf([1, 2], 'f32', [1, 2])), /shapes differ/);
    assert.equal(countBitMismatches(tensorOf([1, 2], 'f32', [2, 1]), tensorOf([1, 3], 'f32', [2, 1])), 1);
    for (const v of [0, Infinity, -Infinity]) assert.ok(Object.is(roundNearestEven(v, 'bf16'), v));
    assert.ok(Object.is(roundNearestEven(-0, 'f16'), -0));
    assert.ok(Number.isNaN(roundNearestEven(NaN, 'bf16')));
    assert.throws(() => checkRoundingStore([1, 2], [1], 'bf16', 0, 0), /lengths differ \(2 vs 1\)/);
    // ±0: -0 stored for a +0 reference is inside the window but not exact; NaN for NaN is exact.
    const z = checkRoundingStore([-0, NaN, 0], [0, NaN, 0], 'bf16', 0, 0);
    assert.deepEqual([z.violations, z.exact], [0, 2]);
    assert.equal(checkRoundingStore([NaN], [1], 'bf16', 0, 0).violations, 1);
    assert.equal(checkRoundingStore([1], [NaN], 'bf16', 0, 0).violations, 1);
    // The window is atol + rtol·|ref|, on both sides: each alone admits the neighbour, neither does.
    const mid = 1 + 2 ** -8;
    for (const [rtol, atol, bad] of [[0, 2e-9, 0], [2e-9, 0, 0], [0, 0, 1], [0, 5e-10, 1]] as const) {
      assert.equal(checkRoundingStore([1 + 2 ** -7], [mid - 1e-9], 'bf16', rtol, atol).violations, bad, `rtol ${rtol} atol ${atol}`);
      assert.equal(checkRoundingStore([1], [mid + 1e-9], 'bf16', rtol, atol).violations, bad, `below: rtol ${rtol} atol ${atol}`);
    }
    const f = checkRoundingStore([2, 1], [1, 1], 'bf16', 0, 0, 1);
    assert.deepEqual(f.first, [{ index: 0, stored: 2, reference: 1, nearestEven: 1 }]);
    assert.equal(f.exact, 1);
  });
});
