// The float64 post-conv reference (lib/reference/postconv.ts) on a case worked from docs/SPEC.md §6:
// two key heads and two value heads, each of two dimensions, so that every head and token reads
// its own slice of the conv output; q and k each L2-normalised with the 1e-6 in the root (an
// all-zero head gives zeros); softplus on both sides of its z > 20 cut; g = -exp(A_log)·softplus;
// beta the sigmoid of b. Tensors are stand-ins (the reference reads `shape` and `toFloat64()`).

import { strict as assert } from 'assert';
import { postconvReference } from '../../lib/reference/postconv';
import type { Tensor } from '../../lib/tensor';

const t = (shape: number[], values: number[]): Tensor => ({ shape, toFloat64: () => Float64Array.from(values) }) as unknown as Tensor;
/** x · (1 / sqrt(Σx² + 1e-6)), the rule of SPEC §6, per head. */
const unit = (xs: number[], sumsq: number) => xs.map((v) => v * (1 / Math.sqrt(sumsq + 1e-6)));
const softplus = (z: number) => Math.log1p(Math.exp(z));

describe('reference post-conv: edges', () => {
  // C = 2·Hk·Dk + Hv·Dv = 12: q(h0) q(h1) k(h0) k(h1) v(h0) v(h1).
  const convOut = t([2, 12], [3, 4, 0, 2, 1, 0, 0, -5, 7, 8, 5, 6, 0, 0, 6, 8, -1, 1, 2, 0, 9, 10, 11, 12]);
  // Run inside each test (a call while mocha collects the tests would be no test's coverage).
  const run = () => postconvReference(
    { convOut, a: t([2, 2], [0.5, 21, 20.75, -3]), b: t([2, 2], [0, 2, -1, 40]), ALog: t([2], [0, 1]), dtBias: t([2], [0.25, -1]) },
    { Hk: 2, Dk: 2, Hv: 2, Dv: 2 },
  );

  it('q and k: each head of each token normalised on its own, the epsilon inside the root', () => {
    const r = run();
    assert.deepEqual(Array.from(r.q), [...unit([3, 4], 25), ...unit([0, 2], 4), 0, 0, ...unit([6, 8], 100)]);
    assert.deepEqual(Array.from(r.k), [...unit([1, 0], 1), ...unit([0, -5], 25), ...unit([-1, 1], 2), ...unit([2, 0], 4)]);
    assert.ok(Math.abs(r.q[0] - 0.6) < 2e-8 && Math.abs(r.q[1] - 0.8) < 2e-8 && r.q[0] < 0.6);
    assert.equal(r.q.length, 8);
  });

  it('v copied per head and token', () => {
    const r = run();
    assert.deepEqual(Array.from(r.v), [7, 8, 5, 6, 9, 10, 11, 12]);
  });

  it('g: -exp(A_log[h]) · softplus(a + dt_bias[h]), softplus(z) = z only above 20', () => {
    const r = run();
    // z: 0.75, 20 (still log1p(exp(20)), 2e-9 above 20), 21 (taken as is), -4.
    assert.deepEqual(Array.from(r.g), [-1 * softplus(0.75), -Math.exp(1) * softplus(20), -1 * 21, -Math.exp(1) * softplus(-4)]);
    assert.ok(r.g[1] !== -Math.exp(1) * 20);
  });

  it('beta: the sigmoid of b', () => {
    const r = run();
    assert.deepEqual(Array.from(r.beta), [0.5, 1 / (1 + Math.exp(-2)), 1 / (1 + Math.exp(1)), 1 / (1 + Math.exp(-40))]);
    assert.ok(Math.abs(r.beta[1] - 0.8807970779778823) < 1e-15);
  });
});
