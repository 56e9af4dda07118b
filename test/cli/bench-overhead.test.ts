// Per-op overhead on the host backend is taken call by call: each call's wall time minus the time its own kernel
// replay took inside it (gdn_last_kernel_ns), because a host kernel's time varies by more than the overhead between
// calls on a shared machine — the difference of two medians measured apart swung from −9 to +33 µs between cases
// of one run (CHANGELOG 2026-12-04, f3bf26d). These tests fail if the kernel time is not the call's own, or if the bench
// stops attributing the call's extra work to the overhead.

import { strict as assert } from 'assert';
import { performance } from 'perf_hooks';
import { Backend } from '../../lib/backend';
import { Tensor } from '../../lib/tensor';
import * as conv from '../../lib/ops/conv';
import { timeOverheadCases } from '../../lib/bench/overhead';
import { matmulNT } from '../../lib/ops/matmul';

describe('bench overhead: the host kernel time of each call', function () {
  this.timeout(120000);
  let backend: Backend;
  let inputs: conv.ConvInputs;
  before(() => {
    backend = Backend.open('host');
    const C = 256, K = 4, T = 64;
    inputs = {
      x: Tensor.random([T, C], 'bf16', { seed: 1 }).to(backend),
      weight: Tensor.random([C, K], 'bf16', { seed: 2, scale: 0.5 }).to(backend),
      queryStartLoc: [0, T],
      convState: Tensor.random([1, C, K - 1], 'f32', { seed: 3 }).to(backend),
    };
  });
  after(() => {
    for (const t of [inputs.x, inputs.weight, inputs.convState]) t.release();
    backend.close();
  });
  const call = (arm: conv.ConvArm) => () => conv.forwardSync(inputs, { arm, mapping: 'sequence', backend }).release();
  const busy = (us: number) => {
    const end = performance.now() + us / 1000;
    while (performance.now() < end) { /* the call's own extra work */ }
  };

  it('lastKernelUs is the kernel of the last call: positive, inside the call, and the slower arm takes longer', () => {
    const time = (arm: conv.ConvArm) => {
      const ks: number[] = [];
      for (let i = 0; i < 30; i++) {
        const t0 = performance.now();
        call(arm)();
        const wall = (performance.now() - t0) * 1000;
        const k = backend.lastKernelUs();
        assert.ok(k !== null && k > 0, `kernel time ${k}`);
        assert.ok(k <= wall, `the kernel (${k} µs) runs inside the call (${wall} µs)`);
        ks.push(k);
      }
      return ks.sort((a, b) => a - b)[15];
    };
    const scalar = time('scalar'), vec = time('vec');
    assert.ok(scalar > 1.5 * vec, `scalar/sequence (${scalar} µs) is the slow reference, vec (${vec} µs) the fast arm`);
  });

  it('an op call that ran no kernel reads 0, not an earlier call\'s kernel (matmul)', () => {
    const a = Tensor.random([2, 32], 'bf16', { seed: 4 }).to(backend);
    try {
      call('scalar')();
      matmulNT(a, a, { backend }).release();
      assert.equal(backend.lastKernelUs(), 0, 'matmul replays no kernel');
    } finally {
      a.release();
    }
  });

  it('overhead is taken call by call: extra work in a call is overhead, and a kernel that varies between calls is not', async () => {
    const kernel = conv.prepareTimed(inputs, { arm: 'scalar', mapping: 'sequence', backend });
    let i = 0;
    try {
      const rows = await timeOverheadCases([
        { op: 'conv', variant: 'plain', kernel, call: call('scalar') },
        { op: 'conv', variant: 'plus 300 µs', kernel, call: () => { call('scalar')(); busy(300); } },
        // Two calls in three run the fast arm: the wall median is a vec call's, the twin's kernel median scalar's.
        // Only a per-call difference gives this case the plain overhead; two medians give a large negative one.
        { op: 'conv', variant: 'vec, vec, scalar, ...', kernel, call: () => call(i++ % 3 === 2 ? 'scalar' : 'vec')() },
      ], { backend, calls: 60 });
      for (const r of rows) {
        assert.equal(r.method, 'per-call');
        assert.ok(r.overheadUs !== null && r.overheadUs >= 0, `${r.variant}: overhead ${r.overheadUs} µs is a part of each call`);
      }
      const [plain, extra, mixed] = rows;
      assert.ok(extra.kernelUs! < 2.5 * plain.kernelUs! && plain.kernelUs! < 2.5 * extra.kernelUs!, `kernels ${plain.kernelUs} and ${extra.kernelUs} µs: the same op`);
      const d = extra.overheadUs! - plain.overheadUs!;
      assert.ok(d > 250 && d < 600, `the extra 300 µs lands in the overhead (difference ${d.toFixed(1)} µs)`);
      assert.ok(mixed.kernelUs! < 0.7 * plain.kernelUs!, `the mixed case's kernels are mostly vec's (${mixed.kernelUs} vs ${plain.kernelUs} µs)`);
      assert.ok(Math.abs(mixed.overheadUs! - plain.overheadUs!) < 60, `mixed arms: overhead ${mixed.overheadUs} µs, plain ${plain.overheadUs} µs`);
    } finally {
      kernel.release();
    }
  });
});
