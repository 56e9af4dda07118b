import { strict as assert } from 'assert';
import { f32ToBf16Bits, bf16BitsToF32, bf16ToFloat32, f32ToF16Bits, f16BitsToF32, f16ToFloat32, f32Bits, f32FromBits, roundTo } from '../../lib/dtype';
import { Tensor } from '../../lib/tensor';

describe('dtype conversions', () => {
  it('bf16: exact values round-trip and ties go to even', () => {
    for (const v of [0, 1, -2, 0.5, 3.140625, 65280, -1e-30]) {
      const bits = f32ToBf16Bits(v);
      assert.equal(f32ToBf16Bits(bf16BitsToF32(bits)), bits);
    }
    // 1 + 2^-8 lies exactly halfway between bf16 1 (0x3f80) and 1 + 2^-7 (0x3f81): ties to even → 0x3f80.
    assert.equal(f32ToBf16Bits(1 + 2 ** -8), 0x3f80);
    // 1 + 3·2^-8 lies halfway between 0x3f81 and 0x3f82: ties to even → 0x3f82.
    assert.equal(f32ToBf16Bits(1 + 3 * 2 ** -8), 0x3f82);
    // Just above the tie rounds up.
    assert.equal(f32ToBf16Bits(f32FromBits(0x3f808001)), 0x3f81);
  });

  it('bf16: NaN stays a quiet NaN, infinities and -0 are kept, overflow rounds to Inf', () => {
    const nan = f32ToBf16Bits(f32FromBits(0x7f800001)); // signalling NaN with a low payload
    assert.ok(Number.isNaN(bf16BitsToF32(nan)));
    assert.equal(nan & 0x0040, 0x0040);
    assert.equal(f32ToBf16Bits(Infinity), 0x7f80);
    assert.equal(f32ToBf16Bits(-Infinity), 0xff80);
    assert.equal(f32ToBf16Bits(-0), 0x8000);
    assert.equal(f32ToBf16Bits(f32FromBits(0x7f7fffff)), 0x7f80); // max f32 rounds up to Inf in bf16
  });

  it('bf16ToFloat32: bf16BitsToF32\'s value for every non-NaN pattern; every NaN quiet, with its sign and payload', () => {
    const all = Uint16Array.from({ length: 65536 }, (_, i) => i);
    const values = bf16ToFloat32(all);
    const words = new Uint32Array(values.buffer);
    let differ = 0;
    let nans = 0;
    for (let i = 0; i < 65536; i++) {
      const isNaN = (i & 0x7f80) === 0x7f80 && (i & 0x7f) !== 0;
      if (!isNaN) {
        if (words[i] !== f32Bits(bf16BitsToF32(i))) differ++;
        continue;
      }
      // The sign, the exponent and the bf16 payload kept, the quiet bit set, the low half zero.
      nans++;
      if (!Number.isNaN(values[i]) || words[i] !== (((i << 16) | 0x00400000) >>> 0)) differ++;
    }
    assert.equal(nans, 2 * 127);
    assert.equal(differ, 0, `${differ} of 65536 patterns differ`);
    assert.deepEqual([words[0x7f81], words[0xff81], words[0x8000], words[0x0001], words[0xff80]], [0x7fc10000, 0xffc10000, 0x80000000, 0x00010000, 0xff800000]);
    // Tensor.toFloat32 goes through it.
    const bytes = new Uint8Array(all.buffer);
    assert.deepEqual(Array.from(new Uint32Array(Tensor.fromBytes(bytes, [65536], 'bf16').toFloat32().buffer)), Array.from(words));
  });

  it('f16ToFloat32: f16BitsToF32\'s value for every pattern, to the bit; every NaN quiet, with its sign and payload', () => {
    const all = Uint16Array.from({ length: 65536 }, (_, i) => i);
    const words = new Uint32Array(f16ToFloat32(all).buffer);
    let differ = 0;
    let nans = 0;
    for (let i = 0; i < 65536; i++) {
      const isNaN = (i & 0x7c00) === 0x7c00 && (i & 0x3ff) !== 0;
      nans += isNaN ? 1 : 0;
      // A NaN: the sign, the quiet bit and the 10-bit payload at the top of f32's mantissa (f16BitsToF32 builds it
      // from these bits too; a NaN read back through a number is not compared by its bits).
      const want = isNaN ? (((i & 0x8000) << 16) | 0x7fc00000 | ((i & 0x3ff) << 13)) >>> 0 : f32Bits(f16BitsToF32(i));
      if (words[i] !== want || (isNaN && !Number.isNaN(f16BitsToF32(i)))) differ++;
    }
    assert.equal(nans, 2 * 1023);
    assert.equal(differ, 0, `${differ} of 65536 patterns differ`);
    // -0, the smallest and largest subnormal, the smallest normal, 1, the largest finite, -Inf, a NaN with payload 1.
    assert.deepEqual([0x8000, 0x0001, 0x03ff, 0x0400, 0x3c00, 0x7bff, 0xfc00, 0x7c01].map((i) => words[i]),
      [0x80000000, 0x33800000, 0x387fc000, 0x38800000, 0x3f800000, 0x477fe000, 0xff800000, 0x7fc02000]);
    // Tensor.toFloat32 goes through it.
    const t = Tensor.fromBytes(new Uint8Array(all.buffer), [65536], 'f16').toFloat32();
    assert.deepEqual(Array.from(new Uint32Array(t.buffer)), Array.from(words));
  });

  it('f16: normals, subnormals, ties, overflow', () => {
    assert.equal(f32ToF16Bits(1), 0x3c00);
    assert.equal(f32ToF16Bits(65504), 0x7bff);
    assert.equal(f32ToF16Bits(65520), 0x7c00); // halfway to the next binade: ties to even → Inf
    assert.equal(f32ToF16Bits(2 ** -24), 0x0001); // smallest subnormal
    assert.equal(f32ToF16Bits(2 ** -25), 0x0000); // exactly half of it: ties to even → 0
    assert.equal(f32ToF16Bits(1.5 * 2 ** -25), 0x0001);
    assert.equal(f32ToF16Bits(2 ** -14), 0x0400); // smallest normal
    assert.equal(f32ToF16Bits(1 + 2 ** -11), 0x3c00); // tie → even
    assert.equal(f32ToF16Bits(1 + 3 * 2 ** -11), 0x3c02);
    for (let bits = 0; bits < 0x7c00; bits += 37) assert.equal(f32ToF16Bits(f16BitsToF32(bits)), bits);
    assert.ok(Number.isNaN(f16BitsToF32(f32ToF16Bits(NaN))));
  });

  it('roundTo and f32 bit casts agree', () => {
    assert.equal(f32Bits(1), 0x3f800000);
    assert.equal(roundTo('f32', 0.1), Math.fround(0.1));
    assert.equal(roundTo('bf16', 1 + 2 ** -8), 1);
  });
});
