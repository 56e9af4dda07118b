// The float64 causal-conv reference (lib/reference/conv.ts) on small cases worked by hand from
// docs/SPEC.md §3: dyadic inputs, so every pre-activation is exact and written out below; three
// sequences (one of them empty) with and without initial state, a sequence shorter than K - 1, and
// the state each leaves. maxError at its tolerance boundary, with zeros, negative references and NaN.
// Tensors are stand-ins: the reference reads only `shape` and `toFloat64()`.

import { strict as assert } from 'assert';
import { convReference, maxError } from '../../lib/reference/conv';
import type { Tensor } from '../../lib/tensor';

const t = (shape: number[], values: number[]): Tensor => ({ shape, toFloat64: () => Float64Array.from(values) }) as unknown as Tensor;
const silu = (acc: number) => acc / (1 + Math.exp(-acc));

// C = 2 channels, K = 3 taps; x is [4, 2], weight [2, 3].
const x = t([4, 2], [1, 2, -1, 4, 2, -2, 3, 1]);
const weight = t([2, 3], [0.25, 0.5, 1, -0.5, 0.25, 0.125]);

describe('reference conv: edges', () => {
  it('three sequences (3, 0 and 1 tokens), with bias and per-sequence initial state', () => {
    const convState = t([3, 2, 2], [4, -2, 1, 3, 5, 6, 7, 8, -3, 2, 6, -4]);
    const r = convReference({ x, weight, bias: t([2], [0.5, -1]), queryStartLoc: [0, 3, 3, 4], hasInitialState: [1, 0, 1], convState });
    // Sequence 0, channel 0 sees 4, -2 | 1, -1, 2; channel 1 sees 1, 3 | 2, 4, -2.
    // Sequence 2 (token 3), channel 0 sees -3, 2 | 3; channel 1 sees 6, -4 | 1.
    const acc = [1.5, -0.5, -0.5, -1.5, 2.25, -1.25, 3.75, -4.875];
    assert.deepEqual(Array.from(r.out), acc.map(silu));
    // Sequence 1 is empty and had no initial state: its state is kept as it was.
    assert.deepEqual(Array.from(r.convState), [-1, 2, 4, -2, 5, 6, 7, 8, 2, 3, -4, 1]);
    assert.ok(r.out instanceof Float64Array && r.convState instanceof Float64Array);
  });

  it('no bias, no initial state: zeros before each sequence; a 1-token sequence keeps a zero in its state', () => {
    const convState = t([2, 2, 2], [99, 99, 99, 99, 99, 99, 99, 99]);
    const expected = [1, 0.25, -1, 0.5, 1.5, 0.75, 3.75, -2.375].map(silu);
    for (const hasInitialState of [undefined, null, [0, 0], [false, false], new Int8Array(2)]) {
      const r = convReference({ x, weight, queryStartLoc: Int32Array.from([0, 1, 4]), hasInitialState, convState });
      assert.deepEqual(Array.from(r.out), expected);
      assert.deepEqual(Array.from(r.convState), [0, 1, 0, 2, 2, 3, -2, 1]);
    }
  });

  it('initial state chosen per sequence by index, as booleans or Int32Array', () => {
    const convState = t([2, 2, 2], [4, -2, 1, 3, 8, 8, 8, 8]);
    for (const hasInitialState of [[true, false], Int32Array.from([1, 0])]) {
      const r = convReference({ x, weight, bias: null, queryStartLoc: [0, 3, 4], hasInitialState, convState });
      // Sequence 0 as in the first case less the bias; sequence 1 (token 3) from zeros: 1·3 and 0.125·1.
      assert.deepEqual(Array.from(r.out), [1, 0.5, -1, -0.5, 1.75, -0.25, 3, 0.125].map(silu));
      assert.deepEqual(Array.from(r.convState), [-1, 2, 4, -2, 0, 3, 0, 1]);
    }
  });

  it('the SiLU of each pre-activation, to the last bit', () => {
    const r = convReference({ x: t([1, 1], [-2.5]), weight: t([1, 2], [0, 1]), queryStartLoc: [0, 1], convState: t([1, 1, 1], [0]) });
    assert.equal(r.out[0], -2.5 / (1 + Math.exp(2.5)));
    assert.equal(r.out[0], -0.18964545005310887);
    assert.deepEqual(Array.from(r.convState), [-2.5]);
  });
});

describe('reference maxError: edges', () => {
  it('|a - ref| equal to atol + rtol·|ref| is within; |ref| taken for negatives; a zero ref adds no relative error', () => {
    const e = maxError(Float32Array.from([3.25, -3.25, 0.75, 1]), Float64Array.from([2, -2, 0, 1]), 0.5, 0.25);
    assert.deepEqual(e, { maxAbs: 1.25, maxRel: 0.625, withinTolerance: false, violations: 1 });
    assert.deepEqual(maxError(Float64Array.from([3.25, -3.25, 1]), Float64Array.from([2, -2, 1]), 0.5, 0.25), {
      maxAbs: 1.25,
      maxRel: 0.625,
      withinTolerance: true,
      violations: 0,
    });
    assert.deepEqual(maxError(Float64Array.from([2, 5]), Float64Array.from([1, 4]), 0, 0.5), { maxAbs: 1, maxRel: 1, withinTolerance: false, violations: 2 });
    assert.deepEqual(maxError(new Float64Array(0), new Float64Array(0), 0, 0), { maxAbs: 0, maxRel: 0, withinTolerance: true, violations: 0 });
  });

  it('NaN is a violation and stays the maximum, before or after larger differences', () => {
    assert.deepEqual(maxError(Float64Array.from([NaN, 10]), Float64Array.from([0, 0]), 1, 1), { maxAbs: NaN, maxRel: 0, withinTolerance: false, violations: 2 });
    assert.deepEqual(maxError(Float64Array.from([10, NaN]), Float64Array.from([1, 1]), 1, 1), { maxAbs: NaN, maxRel: 9, withinTolerance: false, violations: 2 });
  });
});
