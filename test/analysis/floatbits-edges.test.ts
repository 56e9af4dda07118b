// Bit-level helpers at their edges: the sign of orderedKey (ulpDistance alone cannot see it, since
// negating every key keeps every distance) and isInfBits against its neighbours in all three formats.

import { strict as assert } from 'assert';
import { FLOAT_FORMATS, isInfBits, orderedKey, ulpDistance } from '../../lib/analysis/floatbits';

const { f32, bf16, f16 } = FLOAT_FORMATS;

describe('floatbits: orderedKey and isInfBits', () => {
  it('orderedKey keeps positive patterns as they are and negates negative ones', () => {
    assert.equal(orderedKey(f32, 0x3f800000), 0x3f800000); // 1
    assert.equal(orderedKey(f32, 0xbf800000), -0x3f800000); // -1
    assert.equal(orderedKey(f32, 0x00000001), 1); // smallest subnormal
    assert.equal(orderedKey(f32, 0x80000001), -1);
    assert.equal(orderedKey(f32, 0xff800000), -0x7f800000); // -Inf
    assert.equal(orderedKey(bf16, 0x3f80), 0x3f80);
    assert.equal(orderedKey(bf16, 0xbf80), -0x3f80);
    assert.equal(orderedKey(f16, 0x3c00), 0x3c00);
    assert.equal(orderedKey(f16, 0xfc00), -0x7c00);
    // Both zeros sit at 0 on the line (−0 as -0, which is still == 0).
    assert.ok(orderedKey(f32, 0x80000000) === 0 && orderedKey(f32, 0) === 0);
  });

  it('orderedKey orders values as the floats do', () => {
    const patterns = [0xff800000, 0xbf800000, 0x80000001, 0x00000000, 0x00000001, 0x3f800000, 0x7f7fffff, 0x7f800000];
    const keys = patterns.map((b) => orderedKey(f32, b));
    for (let i = 1; i < keys.length; i++) assert.ok(keys[i - 1] < keys[i], `key of ${patterns[i - 1].toString(16)} below key of ${patterns[i].toString(16)}`);
    assert.equal(ulpDistance(f32, 0x80000001, 0x00000001), 2);
  });

  it('isInfBits: exactly ±Inf, not max finite, not NaN, in every format', () => {
    const cases: [typeof f32, number, boolean][] = [
      [f32, 0x7f800000, true],
      [f32, 0xff800000, true],
      [f32, 0x7f7fffff, false],
      [f32, 0xff7fffff, false],
      [f32, 0x7f800001, false],
      [f32, 0x7fc00000, false],
      [f32, 0x00000000, false],
      [bf16, 0x7f80, true],
      [bf16, 0xff80, true],
      [bf16, 0x7f7f, false],
      [bf16, 0x7f81, false],
      [f16, 0x7c00, true],
      [f16, 0xfc00, true],
      [f16, 0x7bff, false],
      [f16, 0x7c01, false],
      [f16, 0x7f80, false], // bf16's Inf is an f16 NaN
    ];
    for (const [fmt, bits, inf] of cases) assert.equal(isInfBits(fmt, bits), inf, `${fmt.dtype} 0x${bits.toString(16)}`);
  });
});
