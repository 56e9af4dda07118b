// An op's result knows its layout: diff() of conv, post-conv and fused outputs reports the op's
// coordinates without options, and a failing check row carries its first mismatch, located.

import { strict as assert } from 'assert';
import { Tensor } from '../../lib/tensor';
import * as conv from '../../lib/ops/conv';
import * as postconv from '../../lib/ops/postconv';
import * as fused from '../../lib/ops/fused';
import { diff } from '../../lib/analysis/diff';
import { plainCoordinates } from '../../lib/analysis/coordinates';
import { checkConv, convMatrix } from '../../lib/check/conv';
import { checkPostconv, postconvMatrix } from '../../lib/check/postconv';
import { checkFused, fusedMatrix } from '../../lib/check/fused';
import { forEachBackend } from '../backends';

/** A copy of t on the host with element `index` (flat, contiguous) given other bits. */
function flipped(t: Tensor, index: number): Tensor {
  const bits = t.bits();
  bits[index] ^= 1;
  return Tensor.fromBytes(new Uint8Array(bits.buffer, bits.byteOffset, bits.byteLength), t.shape, t.dtype);
}

forEachBackend((backend) => {
  const C = 64;
  const qsl = [0, 5, 5, 12];  // sequence 1 is empty
  const convInputs = () => ({
    x: Tensor.random([12, C], 'f32', { seed: 1 }),
    weight: Tensor.random([C, 4], 'f32', { seed: 2 }),
    queryStartLoc: qsl,
    hasInitialState: [true, false, true],
    convState: Tensor.random([3, C, 3], 'f32', { seed: 3 }),
  });

  describe('located mismatches: diff of an op result without options', () => {
    it('conv out reports (sequence, token, channel); its state (sequence, channel, tap)', async () => {
      const r = await conv.forward(convInputs(), { backend: backend() });
      try {
        // Element (row 7, channel 3): row 7 is token 2 of sequence 2 (rows 5..11).
        const d = diff(flipped(r.out, 7 * C + 3), r.out);
        assert.equal(d.mismatches, 1);
        assert.deepEqual(d.first[0].coords, { sequence: 2, token: 2, channel: 3 });
        assert.match(d.toString(), /\(sequence 2, token 2, channel 3\)/);
        const s = diff(r.convState, flipped(r.convState, 1 * C * 3 + 5 * 3 + 2));
        assert.deepEqual(s.first[0].coords, { sequence: 1, channel: 5, tap: 2 });
      } finally {
        r.release();
      }
    });

    it('the coordinates travel with host(), clone() and astype(), not with a reshape; options still win', async () => {
      const r = await conv.forward(convInputs(), { backend: backend() });
      try {
        const host = r.out.host();
        assert.deepEqual(host.coordinates?.names(host.shape), ['sequence', 'token', 'channel']);
        assert.deepEqual(r.out.clone().coordinates?.names(host.shape), ['sequence', 'token', 'channel']);
        assert.equal(r.out.reshape([12 * C]).coordinates, null);
        const plain = diff(flipped(r.out, 7 * C + 3), r.out, { coordinates: plainCoordinates() });
        assert.deepEqual(plain.first[0].coords, { row: 7, column: 3 }, 'coordinates given in the options win');
        const bare = diff(Tensor.from(host.toFloat32(), host.shape), Tensor.from(flipped(r.out, 7 * C + 3).toFloat32(), host.shape));
        assert.deepEqual(bare.first[0].coords, { row: 7, column: 3 }, 'a tensor no op made keeps plain indices');
      } finally {
        r.release();
      }
    });

    it('post-conv q, k, v report (token, head, feature), g and beta (token, head)', async () => {
      const Hk = 2, Hv = 4, Dk = 16, Dv = 16;
      const Cp = 2 * Hk * Dk + Hv * Dv;
      const r = await postconv.forward(
        { convOut: Tensor.random([3, Cp], 'f32', { seed: 4 }), a: Tensor.random([3, Hv], 'f32', { seed: 5 }), b: Tensor.random([3, Hv], 'f32', { seed: 6 }),
          ALog: Tensor.random([Hv], 'f32', { seed: 7 }), dtBias: Tensor.random([Hv], 'f32', { seed: 8 }) },
        { Hk, Hv, Dk, Dv, backend: backend() },
      );
      try {
        assert.deepEqual(diff(r.v, flipped(r.v, 2 * Hv * Dv + 3 * Dv + 9)).first[0].coords, { token: 2, head: 3, feature: 9 });
        assert.deepEqual(diff(flipped(r.g, 1 * Hv + 2), r.g).first[0].coords, { token: 1, head: 2 });
      } finally {
        r.release();
      }
    });

    it('fused outputs report (token, head, feature) and the state (sequence, channel, tap)', async () => {
      const Hk = 1, Hv = 2, D = 128;
      const Cf = 2 * Hk * D + Hv * D;
      const r = await fused.forward(
        { x: Tensor.random([9, Cf], 'f32', { seed: 9 }), weight: Tensor.random([Cf, 4], 'f32', { seed: 10 }), queryStartLoc: [0, 4, 9],
          convState: Tensor.random([2, Cf, 3], 'f32', { seed: 11 }), hasInitialState: [1, 0],
          a: Tensor.random([9, Hv], 'f32', { seed: 12 }), b: Tensor.random([9, Hv], 'f32', { seed: 13 }),
          ALog: Tensor.random([Hv], 'f32', { seed: 14 }), dtBias: Tensor.random([Hv], 'f32', { seed: 15 }) },
        { Hk, Hv, Dk: D, Dv: D, backend: backend() },
      );
      try {
        assert.deepEqual(diff(flipped(r.k, 5 * D + 100), r.k).first[0].coords, { token: 5, head: 0, feature: 100 });
        assert.deepEqual(diff(flipped(r.convState, Cf * 3 + 7 * 3 + 1), r.convState).first[0].coords, { sequence: 1, channel: 7, tap: 1 });
      } finally {
        r.release();
      }
    });
  });

  describe('located mismatches: a failing check row carries its first mismatch', () => {
    it('checkConv: a planted mutant row names out\'s first differing (sequence, token, channel) and both values', () => {
      const cases = convMatrix({ quick: true }).slice(0, 1);
      const report = checkConv({ backend: backend(), cases, armMappings: [{ arm: 'reg', mapping: 'exact' }], mutant: 'taps-reversed' });
      const row = report.failures.find((f) => f.arm === 'reg');
      assert.ok(row?.firstMismatch, 'the failing row has firstMismatch');
      const m = row.firstMismatch;
      assert.equal(m.output, 'out');
      assert.deepEqual(Object.keys(m.coords), ['sequence', 'token', 'channel']);
      assert.notEqual(m.actualBits, m.expectedBits);
      assert.ok(Number.isFinite(m.actual) && Number.isFinite(m.expected));
      // Passing rows stay as they were: no located mismatch.
      assert.ok(report.results.filter((r) => r.ok).every((r) => r.firstMismatch === undefined));
    });

    it('checkPostconv: the seq4 mutant\'s row in an f32 case names (token, head, feature)', async () => {
      const cases = postconvMatrix({ quick: true }).filter((c) => c.qkvDtype === 'f32' && c.Dk === 128 && c.T >= 16).slice(0, 1);
      assert.equal(cases.length, 1);
      const report = await checkPostconv({ backend: backend(), cases, arms: ['seq4'], reference: false });
      const row = report.results.find((r) => r.arm === 'seq4' && !r.ok);
      assert.ok(row?.firstMismatch, 'seq4 differs in f32 and the row says where');
      assert.ok(['q', 'k'].includes(row.firstMismatch.output));
      assert.deepEqual(Object.keys(row.firstMismatch.coords), ['token', 'head', 'feature']);
    });

    it('checkFused: a planted mutant row names its output and coordinates', async () => {
      const cases = fusedMatrix({ quick: true }).filter((c) => c.qkvDtype === 'f32').slice(0, 1);
      const report = await checkFused({ backend: backend(), cases, arms: ['head-tile'], mutant: 'seq-fold' });
      const row = report.failures[0];
      assert.ok(row?.firstMismatch, 'the failing row has firstMismatch');
      assert.deepEqual(Object.keys(row.firstMismatch.coords), ['token', 'head', 'feature']);
    });
  });
});

describe('Tensor: a host tensor too large for one typed array', () => {
  it('Tensor.zeros names the shape, the bytes it needs and the limit (not V8\'s "Invalid typed array length")', () => {
    assert.throws(() => Tensor.zeros([1 << 24, 8192], 'bf16'), (e: unknown) => {
      assert.ok(e instanceof RangeError);
      assert.match(e.message, /^shape: \[16777216, 8192\] bf16 needs 256\.0 GiB \(274877906944 bytes\) of host memory; a host tensor holds at most 4\.00 GiB/);
      return true;
    });
    assert.throws(() => Tensor.random([1 << 24, 8192], 'bf16'), /needs 256\.0 GiB/);
    assert.equal(Tensor.zeros([1024, 1024], 'bf16').numel, 1 << 20);
  });
});
