// The conversions of lib/dtype.ts at their boundaries: each rounding branch of f32 → f16 on both
// sides of its threshold (overflow at 2^16, the normal/subnormal edge at 2^-14, the flush below
// 2^-25, ties below and above the smallest subnormals), NaN payloads, signs, bf16's NaN path against
// a normal value that shares its mantissa bits, f16 → f32 in every exponent class, and roundTo's
// integer wrap-arounds. Expected bits worked by hand from IEEE-754 binary16/binary32.

import { strict as assert } from 'assert';
import { bf16BitsToF32, f16BitsToF32, f32Bits, f32FromBits, f32ToBf16Bits, f32ToF16Bits, roundTo } from '../../lib/dtype';

describe('dtype conversions: edges', () => {
  it('f32 bit casts both ways, including words with the top bit set', () => {
    assert.equal(f32Bits(-2), 0xc0000000);
    assert.equal(f32FromBits(0xc0490fdb), Math.fround(-Math.PI));
    assert.equal(f32FromBits(-1073741824), -2); // 0xc0000000 given as a signed word
  });

  it('bf16: NaN only for exponent all-ones with a payload; normals with mantissa bits round normally', () => {
    assert.equal(f32ToBf16Bits(1.25), 0x3fa0); // the NaN path would have set bit 6: 0x3fe0
    assert.equal(f32ToBf16Bits(f32FromBits(0x7fa00000)), 0x7fe0); // sNaN: quiet bit set, payload kept
    assert.equal(f32ToBf16Bits(f32FromBits(0xff800001)), 0xffc0); // the sign kept
    assert.equal(f32ToBf16Bits(-Infinity), 0xff80);
    // A quiet NaN with every payload bit set: rounding it like a number would carry out of the word (0x8000).
    assert.equal(f32ToBf16Bits(f32FromBits(0x7fffffff)), 0x7fff);
    assert.equal(f32ToBf16Bits(f32FromBits(0xffff8000)), 0xffff);
    assert.equal(f32ToBf16Bits(f32FromBits(0x3f818000)), 0x3f82); // tie, odd lsb: up to even
    assert.equal(f32ToBf16Bits(f32FromBits(0x3f807fff)), 0x3f80); // just below the tie
    assert.equal(bf16BitsToF32(0x1c049), -3.140625); // bits above the low 16 are ignored
  });

  it('f16: overflow starts at 2^16 (after rounding), 2^15 is normal', () => {
    assert.equal(f32ToF16Bits(32768), 0x7800);
    assert.equal(f32ToF16Bits(65504), 0x7bff);
    assert.equal(f32ToF16Bits(65519.99), 0x7bff); // below the tie to the next binade
    assert.equal(f32ToF16Bits(65536), 0x7c00);
    assert.equal(f32ToF16Bits(-1e6), 0xfc00);
  });

  it('f16: NaN payloads and infinities', () => {
    assert.equal(f32ToF16Bits(Infinity), 0x7c00);
    assert.equal(f32ToF16Bits(-Infinity), 0xfc00);
    assert.equal(f32ToF16Bits(f32FromBits(0x7f800001)), 0x7e00); // payload below the kept bits: quiet bit only
    assert.equal(f32ToF16Bits(f32FromBits(0x7fa00000)), 0x7f00); // top payload bit kept
    assert.equal(f32ToF16Bits(f32FromBits(0xffc00000)), 0xfe00);
  });

  it('f16: normal rounding at the smallest normal and its ties', () => {
    assert.equal(f32ToF16Bits(2 ** -14 * (1 + 2 ** -11)), 0x0400); // tie, even: stays
    assert.equal(f32ToF16Bits(2 ** -14 * (1 + 3 * 2 ** -11)), 0x0402); // tie, odd: up
    assert.equal(f32ToF16Bits(2 ** -14 * (1 + 2 ** -11 + 2 ** -20)), 0x0401); // just above the tie
    assert.equal(f32ToF16Bits(2 ** -14 * (2 - 2 ** -12)), 0x0800); // carries into the exponent
    assert.equal(f32ToF16Bits(-2.5), 0xc100);
  });

  it('f16: subnormals, their ties, the flush to zero', () => {
    assert.equal(f32ToF16Bits(2 ** -15), 0x0200);
    assert.equal(f32ToF16Bits(1023 * 2 ** -24), 0x03ff); // the largest subnormal
    assert.equal(f32ToF16Bits(2.5 * 2 ** -24), 0x0002); // tie, even: stays
    assert.equal(f32ToF16Bits(3.5 * 2 ** -24), 0x0004); // tie, odd: up
    assert.equal(f32ToF16Bits((2.5 + 2 ** -10) * 2 ** -24), 0x0003); // just above the tie
    assert.equal(f32ToF16Bits((2.5 - 2 ** -10) * 2 ** -24), 0x0002); // just below
    assert.equal(f32ToF16Bits(1.25 * 2 ** -25), 0x0001); // e = -25, above half the smallest subnormal
    assert.equal(f32ToF16Bits(2 ** -25), 0x0000); // exactly half: even, 0
    assert.equal(f32ToF16Bits(1.99 * 2 ** -26), 0x0000); // e = -26: flushed
    assert.equal(f32ToF16Bits(-1.5 * 2 ** -26), 0x8000);
    // Far below: a 32-bit shift by 33 or 39 bits would wrap to 1 or 7 and keep significand bits.
    assert.equal(f32ToF16Bits(2 ** -34), 0x0000);
    assert.equal(f32ToF16Bits(-(2 ** -40)), 0x8000);
    assert.equal(f32ToF16Bits(-3 * 2 ** -24), 0x8003);
  });

  it('f16 → f32: subnormals, normals, infinities and NaN, with signs', () => {
    assert.equal(f16BitsToF32(0x0001), 2 ** -24);
    assert.equal(f16BitsToF32(0x8003), -3 * 2 ** -24);
    assert.equal(f16BitsToF32(0x03ff), 1023 * 2 ** -24);
    assert.equal(f16BitsToF32(0x0400), 2 ** -14);
    assert.equal(f16BitsToF32(0xc248), -3.140625);
    assert.equal(f16BitsToF32(0x7bff), 65504);
    assert.equal(f16BitsToF32(0x3555), 0.333251953125);
    assert.equal(f16BitsToF32(0x7c00), Infinity);
    assert.equal(f16BitsToF32(0xfc00), -Infinity);
    assert.ok(Number.isNaN(f16BitsToF32(0x7e00)));
    assert.ok(Number.isNaN(f16BitsToF32(0xfc01)));
    assert.ok(Object.is(f16BitsToF32(0x8000), -0));
  });

  it('roundTo: every dtype, with integer wrap-around', () => {
    assert.equal(roundTo('f32', 0.1), 0.10000000149011612);
    assert.equal(roundTo('bf16', 3.14159), 3.140625);
    assert.equal(roundTo('f16', 0.1), 0.0999755859375);
    assert.equal(roundTo('i32', 2 ** 31 + 5), -2147483643);
    assert.equal(roundTo('i32', -7.9), -7);
    assert.equal(roundTo('i8', 200), -56);
    assert.equal(roundTo('i8', -129), 127);
    assert.equal(roundTo('i8', 100), 100);
  });
});
