// What a benchmark's copy must move: the op's whole traffic, state included (docs/BENCHMARKS.md, "Method").
// Before 22a9d49 the conv benches divided by a copy of x and out only, leaving out 7% of a 32-sequence batch;
// these tests fail if a bench goes back to that, or if fusedBytes counts state reads a sequence does not make.

import { strict as assert } from 'assert';
import { Backend } from '../../lib/backend';
import { benchConv, benchFused, convBenchShapes, fusedBenchShapes } from '../../lib/bench/bench';
import { convBytes } from '../../lib/ops/conv';
import { fusedBytes } from '../../lib/ops/fused';

describe('bench: the bytes a copy of the same traffic moves', function () {
  this.timeout(120000);

  it('convBytes: x read, out written, every final state written, the old state read where there is one', () => {
    // T = 10 tokens of C = 4 bf16 channels in and out: 160 B; 3 final states and 1 old state of C·(K-1) f32: 192 B.
    assert.equal(convBytes({ T: 10, C: 4, K: 4, N: 3, nInitial: 1, xBytes: 2, outBytes: 2 }), 160 + 4 * 4 * 3 * 4);
    assert.equal(convBytes({ T: 10, C: 4, K: 4, N: 3, nInitial: 0, xBytes: 4, outBytes: 2 }), 10 * 4 * 6 + 3 * 4 * 3 * 4);
  });

  it('fusedBytes: state reads only for the sequences with an old state', () => {
    const s = { Hk: 1, Hv: 2, Dk: 128, Dv: 128 };
    const o = { xBytes: 2, qkvBytes: 2, gateBytes: 2, N: 4, K: 4 };
    const C = 2 * 128 + 2 * 128;
    assert.equal(fusedBytes(8, s, { ...o, nInitial: 4 }) - fusedBytes(8, s, { ...o, nInitial: 1 }), 3 * C * 3 * 4);
    assert.equal(fusedBytes(8, s, { ...o, nInitial: 0 }), 8 * (C * 2 + 2 * 2 * 2 + C * 2 + 2 * 2 * 4) + 4 * C * 3 * 4);
  });

  it('bench conv on a varlen batch divides by a copy of x, out and the state traffic', async () => {
    const shape = convBenchShapes(true).find((x) => x.id.startsWith('Qwen3.5-4B varlen'));
    assert.ok(shape, 'the quick shapes hold a 4B varlen batch');
    const T = shape.lengths.reduce((a, b) => a + b, 0);
    const N = shape.lengths.length;
    const nInitial = shape.initialState.filter(Boolean).length;
    assert.ok(N > 1 && nInitial > 0 && nInitial < N, 'a batch with and without old states');
    const backend = Backend.open('host');
    try {
      const timing = { warmupMs: 5, minSamples: 3, minTimeMs: 1, maxTimeMs: 50 };
      const report = await benchConv({ backend, quick: true, torch: false, arms: ['vec/exact'], shapes: [shape.id], timing });
      const row = report.rows.find((r) => r.arm === 'vec');
      assert.ok(row, `rows: ${report.rows.map((r) => `${r.shape} ${r.arm}`).join(', ')}`);
      assert.equal(row.bytes, convBytes({ T, C: shape.C, K: 4, N, nInitial, xBytes: 2, outBytes: 2 }));
      assert.ok(row.bytes > 4 * T * shape.C, `${row.bytes} B must exceed x + out (${4 * T * shape.C} B)`);
      assert.equal(report.copies.length, 1);
      assert.ok(Math.abs(report.copies[0].gbps * report.copies[0].medianUs * 1e3 - row.bytes) < 1, 'the copy moved the same bytes');
    } finally {
      backend.close();
    }
  });

  it('bench fused on a varlen batch counts the old state of the sequences that have one only', async () => {
    const backend = Backend.open('host');
    try {
      const timing = { warmupMs: 5, minSamples: 3, minTimeMs: 1, maxTimeMs: 50 };
      const report = await benchFused({ backend, quick: true, torch: false, shapes: ['varlen'], timing });
      const row = report.rows.find((r) => r.arm === 'fused stream');
      assert.ok(row, `rows: ${report.rows.map((r) => `${r.shape} ${r.arm}`).join(', ')}`);
      const shape = fusedBenchShapes(true).find((x) => x.id === row.shape);
      assert.ok(shape, row.shape);
      const T = shape.lengths.reduce((a, b) => a + b, 0);
      const N = shape.lengths.length;
      const nInitial = shape.initialState.filter(Boolean).length;
      assert.ok(nInitial > 0 && nInitial < N);
      const dims = { Hk: shape.Hk, Hv: shape.Hv, Dk: 128, Dv: 128 };
      assert.equal(row.bytes, fusedBytes(T, dims, { xBytes: 2, qkvBytes: 2, gateBytes: 2, N, nInitial, K: 4 }));
    } finally {
      backend.close();
    }
  });
});
