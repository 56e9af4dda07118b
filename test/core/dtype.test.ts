import { strict as assert } from 'assert';
import { f32ToBf16Bits, bf16BitsToF32, f32ToF16Bits, f16BitsToF32, f32Bits, f32FromBits, roundTo } from '../../lib/dtype';

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
