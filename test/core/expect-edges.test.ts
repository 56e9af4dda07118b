// The argument checks of lib/expect.ts and the checks and descriptions of lib/dtype.ts at their
// edges: each bound exactly met and just missed, the two wordings of an integer range, every kind of
// value that describe() names, and the exact messages a user reads.

import { strict as assert } from 'assert';
import { expectChoice, expectInt } from '../../lib/expect';
import { checkDType, describe as describeValue, dtypeSize, isFloat, DTYPES } from '../../lib/dtype';

describe('expect: edges', () => {
  it('expectInt: the bounds themselves pass and the value comes back', () => {
    assert.equal(expectInt(0, 'n', 0), 0);
    assert.equal(expectInt(4, 'n', 0, 4), 4);
    assert.equal(expectInt(-3, 'n', -3, 4), -3);
    assert.equal(expectInt(Number.MAX_SAFE_INTEGER, 'n', 1), Number.MAX_SAFE_INTEGER);
  });

  it('expectInt: one past either bound, a fraction, a non-number; the message names the range', () => {
    assert.throws(() => expectInt(-1, 'n', 0), { name: 'RangeError', message: 'n: expected an integer >= 0, got -1' });
    assert.throws(() => expectInt(5, 'rows', 0, 4), { name: 'RangeError', message: 'rows: expected an integer in 0..4, got 5' });
    assert.throws(() => expectInt(-4, 'rows', -3, 4), { name: 'RangeError', message: 'rows: expected an integer in -3..4, got -4' });
    assert.throws(() => expectInt(1.5, 'n', 0), { name: 'RangeError', message: 'n: expected an integer >= 0, got 1.5' });
    assert.throws(() => expectInt('3', 'n', 0), { name: 'RangeError', message: "n: expected an integer >= 0, got '3'" });
    assert.throws(() => expectInt(NaN, 'n', 0), { name: 'RangeError', message: 'n: expected an integer >= 0, got NaN' });
    // Past the default maximum: an integer (2^53 + 2 is one), still refused, with the open-ended wording.
    assert.throws(() => expectInt(2 ** 53 + 2, 'n', 0), { name: 'RangeError', message: 'n: expected an integer >= 0, got 9007199254740994' });
  });

  it('expectChoice: a listed string comes back; anything else is named with the choices', () => {
    assert.equal(expectChoice('b', 'mode', ['a', 'b'] as const), 'b');
    assert.throws(() => expectChoice('c', 'mode', ['a', 'b']), { name: 'TypeError', message: "mode: expected one of 'a', 'b', got 'c'" });
    assert.throws(() => expectChoice(1, 'mode', ['a']), { name: 'TypeError', message: "mode: expected one of 'a', got 1" });
    assert.throws(() => expectChoice(['a'], 'mode', ['a']), { name: 'TypeError', message: "mode: expected one of 'a', got ['a']" });
  });
});

describe('dtype checks: edges', () => {
  it('dtypeSize and isFloat for every dtype', () => {
    assert.deepEqual(DTYPES.map(dtypeSize), [4, 2, 2, 4, 1]);
    assert.deepEqual(DTYPES.map(isFloat), [true, true, true, false, false]);
  });

  it('checkDType: the default list, a narrower list, non-strings', () => {
    assert.equal(checkDType('i8', 'dtype'), 'i8');
    assert.equal(checkDType('bf16', 'dtype', ['bf16']), 'bf16');
    assert.throws(() => checkDType('f64', 'dtype'), { name: 'TypeError', message: "dtype: expected one of 'f32', 'bf16', 'f16', 'i32', 'i8', got 'f64'" });
    assert.throws(() => checkDType('f32', 'x.dtype', ['bf16', 'f16']), { name: 'TypeError', message: "x.dtype: expected one of 'bf16', 'f16', got 'f32'" });
    assert.throws(() => checkDType(4, 'dtype', ['f32']), { name: 'TypeError', message: "dtype: expected one of 'f32', got 4" });
  });

  it('describe: strings quoted, arrays to eight items, null, undefined, objects by constructor', () => {
    assert.equal(describeValue('x'), "'x'");
    assert.equal(describeValue([]), '[]');
    assert.equal(describeValue([1, 2, 3, 4, 5, 6, 7, 8]), '[1, 2, 3, 4, 5, 6, 7, 8]');
    assert.equal(describeValue([1, 2, 3, 4, 5, 6, 7, 8, 9]), '[1, 2, 3, 4, 5, 6, 7, 8, …]');
    assert.equal(describeValue(['a', [null, undefined]]), "['a', [null, undefined]]");
    assert.equal(describeValue(null), 'null');
    assert.equal(describeValue(undefined), 'undefined');
    assert.equal(describeValue({}), 'Object');
    assert.equal(describeValue(new Map()), 'Map');
    assert.equal(describeValue(Object.create(null)), 'object');
    assert.equal(describeValue(-0.5), '-0.5');
    assert.equal(describeValue(true), 'true');
    assert.equal(describeValue(12n), '12');
  });
});
