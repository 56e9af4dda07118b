// Checked mode at its edges (docs/USER-ARMS.md, "Isolation"; docs/TESTING.md, "Every bound at its edge"):
// every typed load and store of the arm dialect (cuda/src/user/prelude.h) is run at exactly the last
// element of its buffer, which must pass, and at exactly one past it, which must fail with the checked-mode
// message naming the buffer, the element and the extent. The far-away faults of test/arms/sources.ts (2^24
// rows out) pass with an extent that is wrong by one element or by a row stride; these do not.
//
// One probe arm per op reads its orders from its first input through a raw, unchecked pointer: which helper
// to call and with which indices. One compile per op serves every probe.

import { strict as assert } from 'assert';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { Tensor } from '../../lib/tensor';
import * as conv from '../../lib/ops/conv';
import * as postconv from '../../lib/ops/postconv';
import { undefineArm } from '../../lib/arms/define';
import { openBackend } from '../backends';

const cacheRoot = fs.mkdtempSync(path.join(os.tmpdir(), 'gdnlab-arm-cache-'));
process.env.GDNLAB_ARM_CACHE = cacheRoot;
after(() => fs.rmSync(cacheRoot, { recursive: true, force: true }));

const CONV_PROBE = `template <class TX, class TO, class Ctx>
GDN_HD void conv_arm(const Params& p, Ctx& t) {
  if (t.bx() != 0 || t.by() != 0 || t.tid() != 0) return;
  const float* order = static_cast<const float*>(p.w);  // raw: the orders themselves are not checked
  const int what = (int)order[0];
  const int64_t i = (int64_t)order[1], j = (int64_t)order[2], k = (int64_t)order[3];
  float y = 0.0f;
  switch (what) {
    case 1: y = x_at<TX>(p, i, j); break;
    case 2: y = w_at<TX>(p, i, (int)j); break;
    case 3: y = bias_at<TX>(p, i); break;
    case 4: y = state_at(p, (int32_t)i, j, (int)k); break;
    case 5: set_state(p, (int32_t)i, j, (int)k, 1.0f); break;
    case 6: out_store<TO>(p, i, j, 1.0f); break;
  }
  out_store<TO>(p, 0, 0, y);
}
`;

const POSTCONV_PROBE = `template <class TC, class TQ, class TG, class Ctx>
GDN_HD void postconv_arm(const PostParams& p, Ctx& t) {
  if (t.bx() != 0 || t.by() != 0 || t.tid() != 0) return;
  const float* order = static_cast<const float*>(p.conv);  // raw: the orders themselves are not checked
  const int what = (int)order[0];
  const int64_t slot = (int64_t)order[1], tok = (int64_t)order[2], i = (int64_t)order[3];
  switch (what) {
    case 1: head_store<TQ>(p, decode_slot(p, 0), 0, 0, head_x<TC>(p, decode_slot(p, slot), tok, i)); break;
    case 2: head_store<TQ>(p, decode_slot(p, slot), tok, i, 1.0f); break;
    case 3: gates<TG>(p, tok, i); break;
  }
}
`;

describe('[host] checked mode: every typed load and store at its last element and one past', function () {
  this.timeout(600_000);
  const backend = () => openBackend('host');
  after(() => {
    undefineArm('conv', 'probe-conv');
    undefineArm('postconv', 'probe-postconv');
  });

  // conv: T = 5 rows of x with a row stride of 9 for C = 6 channels (so a bound missing the stride, or
  // counting T full rows, is off), K = 4, two sequences with initial state, a bias.
  const [T, S, C, K, N] = [5, 9, 6, 4, 2];
  const xElems = (T - 1) * S + C;
  async function convProbe(what: number, i: number, j = 0, k = 0): Promise<string> {
    const w = Tensor.random([C, K], 'f32', { seed: 2 });
    const wf = w.toFloat32();
    wf.set([what, i, j, k]);
    const inputs: conv.ConvInputs = {
      x: Tensor.random([T, S], 'f32', { seed: 1 }).sliceCols(0, C), weight: Tensor.from(wf, [C, K], 'f32'),
      bias: Tensor.random([C], 'f32', { seed: 3 }), queryStartLoc: [0, 2, T], hasInitialState: [1, 1],
      convState: Tensor.random([N, C, K - 1], 'f32', { seed: 4 }),
    };
    try {
      (await conv.forward(inputs, { arm: 'probe-conv', backend: backend() })).release();
      return '';
    } catch (e) {
      return (e as Error).message;
    }
  }

  it('conv: x, weight, bias, conv_state (read and write) and out', async () => {
    conv.defineArm({ name: 'probe-conv', source: CONV_PROBE, timeLimitMs: 20000 }, { backend: backend() });
    const cases: { label: string; last: [number, number, number?, number?]; past: [number, number, number?, number?]; expect: string }[] = [
      { label: 'x', last: [1, T - 1, C - 1], past: [1, T - 1, C], expect: `read x at element ${xElems}, outside [0, ${xElems})` },
      { label: 'x below 0', last: [1, 0, 0], past: [1, 0, -1], expect: `read x at element -1, outside [0, ${xElems})` },
      { label: 'weight', last: [2, C - 1, K - 1], past: [2, C - 1, K], expect: `read weight at element ${C * K}, outside [0, ${C * K})` },
      { label: 'bias', last: [3, C - 1], past: [3, C], expect: `read bias at element ${C}, outside [0, ${C})` },
      { label: 'conv_state read', last: [4, N - 1, C - 1, K - 2], past: [4, N - 1, C - 1, K - 1], expect: `read conv_state at element ${N * C * (K - 1)}, outside [0, ${N * C * (K - 1)})` },
      { label: 'conv_state write', last: [5, N - 1, C - 1, K - 2], past: [5, N - 1, C - 1, K - 1], expect: `wrote conv_state at element ${N * C * (K - 1)}, outside [0, ${N * C * (K - 1)})` },
      { label: 'out', last: [6, T - 1, C - 1], past: [6, T - 1, C], expect: `wrote out at element ${T * C}, outside [0, ${T * C})` },
    ];
    for (const c of cases) {
      const [w0, a0, b0 = 0, c0 = 0] = c.last;
      assert.equal(await convProbe(w0, a0, b0, c0), '', `${c.label} at its last element must pass`);
      const [w1, a1, b1 = 0, c1 = 0] = c.past;
      const msg = await convProbe(w1, a1, b1, c1);
      assert.equal(msg.includes(`arm 'probe-conv' ${c.expect} (checked mode)`), true, `${c.label} one past its last element: ${msg || 'no error'}`);
    }
  });

  it('timing runs the unchecked build: the one-past read that faults forward is timed without a fault, and forward stays checked after', async () => {
    const w = Tensor.random([C, K], 'f32', { seed: 2 });
    const wf = w.toFloat32();
    wf.set([1, T - 1, C, 0]);
    const inputs: conv.ConvInputs = {
      x: Tensor.random([T, S], 'f32', { seed: 1 }).sliceCols(0, C), weight: Tensor.from(wf, [C, K], 'f32'),
      queryStartLoc: [0, 2, T], convState: Tensor.random([N, C, K - 1], 'f32', { seed: 4 }),
    };
    await assert.rejects(conv.forward(inputs, { arm: 'probe-conv', backend: backend() }), /read x at element 42, outside \[0, 42\) \(checked mode\)/);
    const op = conv.prepareTimed(inputs, { arm: 'probe-conv', backend: backend() });
    try {
      const samples = await backend().timeOps([op], { rounds: 2, flushL2: false });
      assert.equal(samples.length, 2);
    } finally {
      op.release();
    }
    // Once timed, the arm holds both builds: forward must still run the checked one.
    await assert.rejects(conv.forward(inputs, { arm: 'probe-conv', backend: backend() }), /read x at element 42, outside \[0, 42\) \(checked mode\)/);
  });

  it('timeLimitMs is the limit the worker enforces, and the message says which', async () => {
    const spin = `template <class TX, class TO, class Ctx>
GDN_HD void conv_arm(const Params& p, Ctx& t) {
  for (int64_t i = 0;; ++i) out_store<TO>(p, 0, 0, (float)i);
}
`;
    conv.defineArm({ name: 'probe-spin', source: spin, timeLimitMs: 300 }, { backend: backend() });
    try {
      const inputs: conv.ConvInputs = { x: Tensor.random([2, 4], 'f32', { seed: 1 }), weight: Tensor.random([4, 3], 'f32', { seed: 2 }), queryStartLoc: [0, 2], convState: Tensor.zeros([1, 4, 2], 'f32') };
      const started = Date.now();
      await assert.rejects(conv.forward(inputs, { arm: 'probe-spin', backend: backend() }), /arm 'probe-spin' \(conv\): ran past its time limit of 300 ms/);
      assert.ok(Date.now() - started < 5000, `the 300 ms limit took ${Date.now() - started} ms to fire`);
    } finally {
      undefineArm('conv', 'probe-spin');
    }
  });

  // post-conv: Hk = 1, Hv = 2, Dk = 4, Dv = 3 (C = 14), T = 3; a with a row stride of 7, b with 5.
  const P = { Hk: 1, Hv: 2, Dk: 4, Dv: 3 };
  const PT = 3;
  const PC = 2 * P.Hk * P.Dk + P.Hv * P.Dv;
  const [AS, BS] = [7, 5];
  async function postconvProbe(what: number, slot: number, tok: number, i: number): Promise<string> {
    const x = Tensor.random([PT, PC], 'f32', { seed: 5 });
    const xf = x.toFloat32();
    xf.set([what, slot, tok, i]);
    const inputs: postconv.PostconvInputs = {
      convOut: Tensor.from(xf, [PT, PC], 'f32'), a: Tensor.random([PT, AS], 'f32', { seed: 6 }).sliceCols(0, P.Hv),
      b: Tensor.random([PT, BS], 'f32', { seed: 7 }).sliceCols(0, P.Hv), ALog: Tensor.random([P.Hv], 'f32', { seed: 8 }),
      dtBias: Tensor.random([P.Hv], 'f32', { seed: 9 }),
    };
    try {
      (await postconv.forward(inputs, { ...P, arm: 'probe-postconv', backend: backend() })).release();
      return '';
    } catch (e) {
      return (e as Error).message;
    }
  }

  it('post-conv: conv_out, q, k, v, a, b, g and A_log', async () => {
    postconv.defineArm({ name: 'probe-postconv', source: POSTCONV_PROBE, requiresD128: false, timeLimitMs: 20000 }, { backend: backend() });
    const lastV = 2 * P.Hk + P.Hv - 1;
    const aElems = (PT - 1) * AS + P.Hv;
    const bElems = (PT - 1) * BS + P.Hv;
    const cases: { label: string; last: [number, number, number, number]; past: [number, number, number, number]; expect: string }[] = [
      { label: 'conv_out', last: [1, lastV, PT - 1, P.Dv - 1], past: [1, lastV, PT - 1, P.Dv], expect: `read conv_out at element ${PT * PC}, outside [0, ${PT * PC})` },
      { label: 'q', last: [2, P.Hk - 1, PT - 1, P.Dk - 1], past: [2, P.Hk - 1, PT - 1, P.Dk], expect: `wrote q at element ${PT * P.Hk * P.Dk}, outside [0, ${PT * P.Hk * P.Dk})` },
      { label: 'k', last: [2, 2 * P.Hk - 1, PT - 1, P.Dk - 1], past: [2, 2 * P.Hk - 1, PT - 1, P.Dk], expect: `wrote k at element ${PT * P.Hk * P.Dk}, outside [0, ${PT * P.Hk * P.Dk})` },
      { label: 'v', last: [2, lastV, PT - 1, P.Dv - 1], past: [2, lastV, PT - 1, P.Dv], expect: `wrote v at element ${PT * P.Hv * P.Dv}, outside [0, ${PT * P.Hv * P.Dv})` },
      // gates(p, t, h) checks a, then b, then g, then the value head h: each one-past probe keeps the
      // checks before it inside their buffers (a's stride 7 > b's 5 > Hv = 2).
      { label: 'a', last: [3, 0, PT - 1, P.Hv - 1], past: [3, 0, PT - 1, P.Hv], expect: `read a at element ${aElems}, outside [0, ${aElems})` },
      { label: 'b', last: [3, 0, PT - 1, P.Hv - 1], past: [3, 0, PT - 2, BS + P.Hv], expect: `read b at element ${bElems}, outside [0, ${bElems})` },
      { label: 'g', last: [3, 0, PT - 1, P.Hv - 1], past: [3, 0, PT - 2, 2 * P.Hv], expect: `wrote g at element ${PT * P.Hv}, outside [0, ${PT * P.Hv})` },
      { label: 'A_log (the value head)', last: [3, 0, 0, P.Hv - 1], past: [3, 0, 0, P.Hv], expect: `read A_log at element ${P.Hv}, outside [0, ${P.Hv})` },
    ];
    for (const c of cases) {
      assert.equal(await postconvProbe(...c.last), '', `${c.label} at its last element must pass`);
      const msg = await postconvProbe(...c.past);
      assert.equal(msg.includes(`arm 'probe-postconv' ${c.expect} (checked mode)`), true, `${c.label} one past its last element: ${msg || 'no error'}`);
    }
  });
});
