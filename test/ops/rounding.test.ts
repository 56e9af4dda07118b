// Every rounding store checked (docs/TESTING.md): each op's bf16 outputs — conv forward, conv.update
// (out and state), post-conv q/k/v, matmul — against (a) the same op's f32 output rounded to
// nearest even, bit for bit, and (b) the float64 reference rounded to nearest even, allowing only
// the f32 error window. The rounding is lib/analysis/bits.ts's exact roundNearestEven, not the
// kernels' helper nor lib/dtype's converter, so a truncating store anywhere fails here.

import { strict as assert } from 'assert';
import { Tensor } from '../../lib/tensor';
import * as conv from '../../lib/ops/conv';
import * as postconv from '../../lib/ops/postconv';
import { matmulNT } from '../../lib/ops/matmul';
import { convReference } from '../../lib/reference/conv';
import { postconvReference } from '../../lib/reference/postconv';
import { checkRoundingStore, roundNearestEven } from '../../lib/analysis/bits';
import { forEachBackend } from '../backends';

/** Elements of a bf16 tensor that are not rne(f32 tensor) — compared as values, -0 and NaN included. */
function notNearestEvenOf(bf16: Tensor, f32: Tensor): number {
  const b = bf16.toFloat32();
  const f = f32.toFloat32();
  assert.equal(b.length, f.length);
  let n = 0;
  for (let i = 0; i < f.length; i++) {
    const want = roundNearestEven(f[i], 'bf16');
    if (!(Object.is(b[i], want) || (Number.isNaN(b[i]) && Number.isNaN(want)))) n++;
  }
  return n;
}

/** (b): the store against float64, and the window must be narrow (nearly every element exactly rne(ref)). */
function assertRoundedFromFloat64(what: string, stored: Tensor, ref: ArrayLike<number>, rtol: number, atol: number): void {
  const r = checkRoundingStore(stored.toFloat32(), ref, 'bf16', rtol, atol);
  assert.equal(r.violations, 0, `${what}: ${r.violations} bf16 elements are not the float64 reference rounded to nearest even, e.g. ${JSON.stringify(r.first)}`);
  assert.ok(r.exact >= 0.97 * ref.length, `${what}: only ${r.exact} of ${ref.length} elements equal rne(float64): the window is too wide to test anything`);
}

const silu = (v: number) => v / (1 + Math.exp(-v));

forEachBackend((backend) => {
  describe('every rounding store rounds to nearest even', function () {
    this.timeout(60000);

    for (const xDtype of ['f32', 'bf16'] as const) {
      it(`conv.forward x ${xDtype} -> bf16 out`, () => {
        const lengths = [7, 30, 3, 41];
        const qsl = [0, 7, 37, 40, 81];
        const C = 96;
        const K = 4;
        const inputs = {
          x: Tensor.random([81, C], xDtype, { seed: 71 }),
          weight: Tensor.random([C, K], xDtype, { seed: 72, scale: 0.5 }),
          bias: Tensor.random([C], xDtype, { seed: 73, scale: 0.25 }),
          queryStartLoc: qsl,
          hasInitialState: [1, 0, 1, 1],
          convState: Tensor.random([lengths.length, C, K - 1], 'f32', { seed: 74 }),
        };
        const b = conv.forwardSync(inputs, { arm: 'scalar', outDtype: 'bf16', backend: backend() });
        const f = conv.forwardSync(inputs, { arm: 'scalar', outDtype: 'f32', backend: backend() });
        assert.equal(notNearestEvenOf(b.out, f.out), 0, 'bf16 out != rne(f32 out)');
        const ref = convReference({ ...inputs, hasInitialState: [1, 0, 1, 1] });
        assertRoundedFromFloat64('conv out', b.out, ref.out, 1e-5, 1e-5);
        b.release();
        f.release();
      });
    }

    for (const xDtype of ['f32', 'bf16'] as const) {
      for (const stateDtype of ['f32', 'bf16'] as const) {
        it(`conv.update x ${xDtype} state ${stateDtype} -> bf16 out (and the bf16 state store)`, async () => {
          const B = 6;
          const C = 130;
          const K = 4;
          const x = Tensor.random([B, C], xDtype, { seed: 81 });
          const weight = Tensor.random([C, K], xDtype, { seed: 82, scale: 0.5 });
          const bias = Tensor.random([C], xDtype, { seed: 83, scale: 0.25 });
          const state = Tensor.random([8, C, K - 1], stateDtype, { seed: 84 });
          const stateIndices = [3, 0, 7, 5, 1, 6];
          const b = await conv.update({ x, weight, bias, state, stateIndices }, { arm: 'reference', outDtype: 'bf16', backend: backend() });
          const f = await conv.update({ x, weight, bias, state, stateIndices }, { arm: 'reference', outDtype: 'f32', backend: backend() });
          assert.equal(notNearestEvenOf(b.out, f.out), 0, 'bf16 out != rne(f32 out)');
          // The float64 decode step, written from the spec: window = [state[slot][c][0..K-2], x[b][c]].
          const xv = x.toFloat64();
          const w = weight.toFloat64();
          const bv = bias.toFloat64();
          const sv = state.toFloat64();
          const ref = new Float64Array(B * C);
          const newState = Float64Array.from(sv);
          for (let s = 0; s < B; s++) {
            for (let c = 0; c < C; c++) {
              const base = (stateIndices[s] * C + c) * (K - 1);
              const win = [...sv.subarray(base, base + K - 1), xv[s * C + c]];
              let acc = bv[c];
              for (let j = 0; j < K; j++) acc += w[c * K + j] * win[j];
              ref[s * C + c] = silu(acc);
              for (let j = 0; j < K - 1; j++) newState[base + j] = win[j + 1];
            }
          }
          assertRoundedFromFloat64('update out', b.out, ref, 1e-5, 1e-5);
          if (stateDtype === 'bf16') {
            // The state keeps raw inputs: with x f32 the new token's store is a pure rounding.
            const st = b.state.toFloat32();
            let wrong = 0;
            for (let i = 0; i < st.length; i++) if (!Object.is(st[i], roundNearestEven(newState[i], 'bf16'))) wrong++;
            assert.equal(wrong, 0, `${wrong} bf16 state elements are not rne(raw input)`);
          }
          b.release();
          f.release();
        });
      }
    }

    for (const convDtype of ['f32', 'bf16'] as const) {
      it(`post-conv conv ${convDtype} -> bf16 q, k, v`, async () => {
        const shape = { Hk: 2, Hv: 4, Dk: 128, Dv: 128 };
        const T = 21;
        const C = 2 * 2 * 128 + 4 * 128;
        const packed = Tensor.random([T, 8], 'f32', { seed: 91, scale: 2 });
        const inputs: postconv.PostconvInputs = {
          convOut: Tensor.random([T, C], convDtype, { seed: 92 }),
          a: packed.sliceCols(0, 4), b: packed.sliceCols(4, 4),
          ALog: Tensor.random([4], 'f32', { seed: 93, scale: 0.5 }), dtBias: Tensor.random([4], 'f32', { seed: 94 }),
        };
        const b = await postconv.forward(inputs, { ...shape, arm: 'tree', qkvDtype: 'bf16', backend: backend() });
        const f = await postconv.forward(inputs, { ...shape, arm: 'tree', qkvDtype: 'f32', backend: backend() });
        const ref = postconvReference(inputs, shape);
        for (const o of ['q', 'k', 'v'] as const) {
          assert.equal(notNearestEvenOf(b[o], f[o]), 0, `bf16 ${o} != rne(f32 ${o})`);
          assertRoundedFromFloat64(`post-conv ${o}`, b[o], ref[o], o === 'v' ? 0 : 1e-6, o === 'v' ? 0 : 1e-6);
        }
        b.release();
        f.release();
      });
    }

    for (const inDtype of ['f32', 'bf16'] as const) {
      it(`matmulNT ${inDtype} -> bf16 out`, () => {
        const [M, N, K] = [13, 40, 67];
        const a = Tensor.random([M, K], inDtype, { seed: 101 });
        const bm = Tensor.random([N, K], inDtype, { seed: 102 });
        const ob = matmulNT(a, bm, { outDtype: 'bf16', backend: backend() });
        const of = matmulNT(a, bm, { outDtype: 'f32', backend: backend() });
        assert.equal(notNearestEvenOf(ob, of), 0, 'bf16 out != rne(f32 out)');
        const av = a.toFloat64();
        const bv = bm.toFloat64();
        const ref = new Float64Array(M * N);
        for (let i = 0; i < M; i++) for (let j = 0; j < N; j++) {
          let s = 0;
          for (let k = 0; k < K; k++) s += av[i * K + k] * bv[j * K + k];
          ref[i * N + j] = s;
        }
        assertRoundedFromFloat64('matmul out', ob, ref, 1e-5, 1e-5);
        ob.release();
        of.release();
      });
    }
  });
});
