// Every option proven live (docs/TESTING.md, "Every option proven live"): for each option of timeArms, of
// the ops' prepareTimed and of diff, a run with the option set gives a result or message that differs from
// the default's in the way the option promises, so an option that is silently ignored fails here. The
// timing options run against the fake backend (deterministic sample streams and clock); graphLaunches and
// rotateOrder also against the host backend's own timing loop.

import { strict as assert } from 'assert';
import { TimingOptions, TimingResult } from '../../lib/analysis/timing';
import { timeArms } from '../../lib/check/timed';
import { relativeNoise } from '../../lib/analysis/stats';
import { diff } from '../../lib/analysis/diff';
import { namedCoordinates } from '../../lib/analysis/coordinates';
import { Tensor } from '../../lib/tensor';
import * as conv from '../../lib/ops/conv';
import * as postconv from '../../lib/ops/postconv';
import { NativeOp } from '../../lib/backend';
import { FakeTimingBackend } from '../analysis/fake-backend';
import { openBackend } from '../backends';

const op = (label: string): NativeOp => ({ kind: 'copy', args: { src: 0, dst: 0, bytes: 0 }, label });

/** Two cases; case 0's samples are `a(k)`, case 1's `b(k)`. */
async function run(opts: TimingOptions, a: (k: number) => number = () => 10, b: (k: number) => number = () => 20, fake?: FakeTimingBackend): Promise<{ r: TimingResult; fake: FakeTimingBackend }> {
  const f = fake ?? new FakeTimingBackend((i, k) => (i === 0 ? a(k) : b(k)));
  const r = await timeArms([{ label: 'a', op: op('a') }, { label: 'b', op: op('b') }], { backend: f, progress: false, clock: () => f.now, ...opts });
  return { r, fake: f };
}

describe('timeArms: every option changes what the run does or reports', () => {
  it('mode: cold flushes, hot does not, both times each case twice with its L2 state in the label', async () => {
    const cold = await run({});
    assert.ok(cold.fake.calls.every((c) => c.flushL2));
    assert.deepEqual(cold.r.cases.map((c) => c.l2), ['cold', 'cold']);
    const hot = await run({ mode: 'hot' });
    assert.ok(hot.fake.calls.every((c) => !c.flushL2));
    assert.deepEqual(hot.r.cases.map((c) => c.l2), ['warm', 'warm']);
    assert.equal(hot.r.provenance.mode, 'hot');
    const both = await run({ mode: 'both' });
    assert.deepEqual(both.r.cases.map((c) => c.label), ['a · cold L2', 'b · cold L2', 'a · warm L2', 'b · warm L2']);
  });

  it('graphLaunches: passed to every call and recorded in the provenance', async () => {
    const g = await run({ mode: 'hot', graphLaunches: 7 });
    assert.ok(g.fake.calls.every((c) => c.graphLaunches === 7));
    assert.equal(g.r.provenance.graphLaunches, 7);
    const plain = await run({ mode: 'hot' });
    assert.ok(plain.fake.calls.every((c) => c.graphLaunches === 0));
  });

  it('rotateOrder: false reaches the backend and the provenance', async () => {
    const off = await run({ rotateOrder: false });
    assert.ok(off.fake.calls.every((c) => c.rotateOrder === false));
    assert.equal(off.r.provenance.rotateOrder, false);
    const on = await run({});
    assert.ok(on.fake.calls.every((c) => c.rotateOrder === true));
  });

  it('warmupMs, batchMs and roundsPerBatch set the warm-up and the batch size', async () => {
    const base = await run({});
    const longWarm = await run({ warmupMs: 2000 });
    assert.ok(longWarm.r.stop.warmupRounds > base.r.stop.warmupRounds, `${longWarm.r.stop.warmupRounds} vs ${base.r.stop.warmupRounds}`);
    const bigBatch = await run({ batchMs: 1000 });
    assert.ok(bigBatch.r.stop.roundsPerBatch > base.r.stop.roundsPerBatch, `${bigBatch.r.stop.roundsPerBatch} vs ${base.r.stop.roundsPerBatch}`);
    const fixed = await run({ roundsPerBatch: 3 });
    assert.equal(fixed.r.stop.roundsPerBatch, 3);
    assert.notEqual(base.r.stop.roundsPerBatch, 3);
  });

  it('minSamples and minTimeMs: constant samples stop at the noise target only once both are met', async () => {
    const base = await run({ roundsPerBatch: 1 });
    assert.equal(base.r.stop.reason, 'noise-target');
    const many = await run({ roundsPerBatch: 1, minSamples: base.r.cases[0].samples.length + 40 });
    assert.ok(many.r.cases[0].samples.length >= base.r.cases[0].samples.length + 40);
    const long = await run({ roundsPerBatch: 100, minTimeMs: 60 });
    assert.ok(long.r.cases[0].measuredMs >= 60 && base.r.cases[0].measuredMs < 60, `${long.r.cases[0].measuredMs} vs ${base.r.cases[0].measuredMs}`);
  });

  // Samples alternating 10 and 13: the median's CI narrows as samples come, the IQR does not (30%).
  const alternating = (k: number) => (k % 2 ? 13 : 10);

  it('noiseTarget: a target the samples cannot reach ends at the time cap instead', async () => {
    const loose = await run({ noiseTarget: 0.5, maxTimeMs: 200 }, alternating, alternating);
    assert.equal(loose.r.stop.reason, 'noise-target');
    const tight = await run({ noiseTarget: 1e-9, maxTimeMs: 200 }, alternating, alternating);
    assert.equal(tight.r.stop.reason, 'time-cap');
    assert.match(tight.r.stop.detail, /reached the 200 ms time cap before the target: noise/);
  });

  // 7 samples of 10 in every 10, the rest 13: the median and its CI settle at 10 (ci noise 0); the IQR
  // stays 10..13, 30% of the median, however many samples come.
  const mostlyTen = (k: number) => (k % 10 < 7 ? 10 : 13);

  it('noiseMetric: the run stops on, reports and names the metric asked for', async () => {
    const ci = await run({ noiseTarget: 0.05, maxTimeMs: 300 }, mostlyTen, mostlyTen);
    assert.equal(ci.r.stop.reason, 'noise-target');
    assert.match(ci.r.stop.detail, /ci noise/);
    const iqr = await run({ noiseTarget: 0.05, maxTimeMs: 300, noiseMetric: 'iqr' }, mostlyTen, mostlyTen);
    assert.equal(iqr.r.stop.reason, 'time-cap');
    assert.match(iqr.r.stop.detail, /noise 30(\.0+)?% > 5%/);
    assert.equal(iqr.r.settings.noiseMetric, 'iqr');
    for (const c of iqr.r.cases) assert.equal(c.noise, relativeNoise(c.samples, 'iqr'));
    for (const c of ci.r.cases) assert.equal(c.noise, relativeNoise(c.samples, 'ci'));
  });

  it('maxTimeMs and maxSamples bound the run and say which bound ended it', async () => {
    const capped = await run({ noiseTarget: 1e-9, maxTimeMs: 50 }, alternating, alternating);
    assert.equal(capped.r.stop.reason, 'time-cap');
    assert.match(capped.r.stop.detail, /50 ms time cap/);
    const counted = await run({ noiseTarget: 1e-9, maxSamples: 37, roundsPerBatch: 10 }, alternating, alternating);
    assert.equal(counted.r.stop.reason, 'max-samples');
    assert.equal(counted.r.cases[0].samples.length, 37);
  });

  it('label, runId, clock and signal', async () => {
    const named = await run({ label: 'my run', runId: 'run-42' });
    assert.equal(named.r.label, 'my run');
    assert.equal(named.r.runId, 'run-42');
    assert.ok(named.r.cases.every((c) => c.runId === 'run-42'));
    // The clock decides when the warm-up ends: a clock that races ahead ends it after one round.
    let t = 0;
    const fast = await run({ clock: () => (t += 1000) });
    assert.equal(fast.r.stop.warmupRounds, 1);
    const ac = new AbortController();
    ac.abort();
    await assert.rejects(run({ signal: ac.signal }), /abort/i);
  });

  // The progress line goes to stderr when it is a terminal (outside a kernel).
  it('progress: true draws a progress line on a terminal, false draws none', async () => {
    const err = process.stderr as unknown as { write: (s: string) => boolean; isTTY?: boolean };
    const [write, tty] = [err.write, err.isTTY];
    const captured: string[] = [];
    err.isTTY = true;
    err.write = (s: string) => (captured.push(String(s)), true);
    try {
      const f = new FakeTimingBackend(() => 10);
      await timeArms([{ label: 'a', op: op('a') }], { backend: f, clock: () => f.now, progress: false, label: 'quiet-run' });
      const quiet = captured.join('');
      await timeArms([{ label: 'a', op: op('a') }], { backend: f, clock: () => f.now, progress: true, label: 'loud-run' });
      const loud = captured.join('').slice(quiet.length);
      assert.ok(!quiet.includes('quiet-run'), quiet);
      assert.ok(loud.includes('loud-run'), `no progress line: ${JSON.stringify(loud.slice(0, 200))}`);
    } finally {
      err.write = write;
      err.isTTY = tty;
    }
  });
});

describe('[host] the host timing loop honours graphLaunches and rotateOrder', function () {
  this.timeout(120000);
  const backend = () => openBackend('host');

  it('graphLaunches: a sample is the per-launch time of G back-to-back runs, not their sum', async () => {
    const x = Tensor.random([512, 256], 'f32', { seed: 1 });
    const p = conv.prepareTimed({ x, weight: Tensor.random([256, 4], 'f32', { seed: 2 }), queryStartLoc: [0, 512], convState: Tensor.zeros([1, 256, 3], 'f32') }, { backend: backend() });
    try {
      const median = (s: Float32Array) => [...s].sort((a, b) => a - b)[s.length >> 1];
      await backend().timeOps([p], { rounds: 3, flushL2: false });
      const one = median(await backend().timeOps([p], { rounds: 9, flushL2: false }));
      const twenty = median(await backend().timeOps([p], { rounds: 9, flushL2: false, graphLaunches: 20 }));
      // Divided by G the two agree within the host's noise; undivided they differ twentyfold.
      assert.ok(twenty / one < 4 && twenty / one > 0.25, `per-sample ${twenty} µs with G = 20 vs ${one} µs with G = 1`);
    } finally {
      p.release();
    }
  });

  it('rotateOrder: round r starts at case r mod n (seen through a state the first case changes and the second copies)', async () => {
    // The conv with T = 1 < K - 1 shifts its state by one column per run; the copy takes a snapshot of it.
    // Two rounds: in order, the snapshot is taken after the second shift; rotated, round 1 copies first.
    const C = 8;
    const snap = async (rotateOrder: boolean): Promise<number[]> => {
      const state = Tensor.random([1, C, 3], 'f32', { seed: 3 }).to(backend());
      const conv0 = conv.prepareTimed({ x: Tensor.random([1, C], 'f32', { seed: 4 }), weight: Tensor.random([C, 4], 'f32', { seed: 5 }), queryStartLoc: [0, 1], hasInitialState: [1], convState: state }, { backend: backend(), inPlace: true });
      const out = Tensor.zeros([1, C, 3], 'f32').to(backend());
      try {
        const copy: NativeOp = { kind: 'copy', args: { src: state.addr, dst: out.addr, bytes: C * 3 * 4 }, label: 'snapshot' };
        await backend().timeOps([conv0, copy], { rounds: 2, flushL2: false, rotateOrder });
        return Array.from(out.host().toFloat32());
      } finally {
        conv0.release();
        out.release();
        state.release();
      }
    };
    const inOrder = await snap(false);
    const rotated = await snap(true);
    assert.notDeepEqual(rotated, inOrder);
    // Rotated, the snapshot holds the state after one shift: column 2 of it is x's row, column 1 the old column 2.
    assert.deepEqual(rotated.filter((_, i) => i % 3 === 2), inOrder.filter((_, i) => i % 3 === 1));
  });
});

describe('prepareTimed: every option reaches the op it prepares', () => {
  const backend = () => openBackend('host');

  it('conv: arm, mapping, outDtype, mutant, label and inPlace', () => {
    const inputs = () => ({ x: Tensor.random([16, 8], 'f32', { seed: 6 }), weight: Tensor.random([8, 4], 'f32', { seed: 7 }), queryStartLoc: [0, 16], convState: Tensor.zeros([1, 8, 3], 'f32').to(backend()) });
    const base = conv.prepareTimed(inputs(), { backend: backend() });
    const set = conv.prepareTimed(inputs(), { backend: backend(), arm: 'reg', mapping: 'exact-racy', outDtype: 'bf16', mutant: 'chunk-off-by-one' as conv.ConvOptions['mutant'] }, 'custom label');
    try {
      const [a, b] = [base.args as unknown as Record<string, unknown>, set.args as unknown as Record<string, unknown>];
      for (const k of ['arm', 'mapping', 'out_dtype', 'mutant']) assert.notEqual(b[k], a[k], `${k} is the default's`);
      assert.equal(set.label, 'custom label');
      assert.notEqual(base.label, 'custom label');
    } finally {
      base.release();
      set.release();
    }
    const ins = inputs();
    const inPlace = conv.prepareTimed(ins, { backend: backend(), inPlace: true });
    const copied = conv.prepareTimed(ins, { backend: backend() });
    try {
      assert.equal((inPlace.args as unknown as Record<string, unknown>).conv_state, ins.convState.addr);
      assert.notEqual((copied.args as unknown as Record<string, unknown>).conv_state, ins.convState.addr);
    } finally {
      inPlace.release();
      copied.release();
    }
  });

  it('post-conv: arm, qkvDtype and the head shape', () => {
    const s = { Hk: 1, Hv: 2, Dk: 128, Dv: 128 };
    const C = 2 * 128 + 2 * 128;
    const inputs = { convOut: Tensor.random([4, C], 'f32', { seed: 8 }), a: Tensor.random([4, 2], 'f32', { seed: 9 }), b: Tensor.random([4, 2], 'f32', { seed: 10 }), ALog: Tensor.random([2], 'f32', { seed: 11 }), dtBias: Tensor.random([2], 'f32', { seed: 12 }) };
    const base = postconv.prepareTimed(inputs, { ...s, backend: backend() });
    const set = postconv.prepareTimed(inputs, { ...s, backend: backend(), arm: 'token-tile', qkvDtype: 'bf16' } as postconv.PostconvOptions);
    try {
      const [a, b] = [base.args as unknown as Record<string, unknown>, set.args as unknown as Record<string, unknown>];
      assert.notEqual(b.arm, a.arm);
      assert.notEqual(b.qkv_dtype, a.qkv_dtype);
      assert.deepEqual([a.Hk, a.Hv, a.Dk, a.Dv], [1, 2, 128, 128]);
    } finally {
      base.release();
      set.release();
    }
  });
});

describe('diff: every option changes the result', () => {
  const a = Tensor.from(Float32Array.from({ length: 64 }, (_, i) => i + 0.5), [8, 8], 'f32');
  const bv = Float32Array.from({ length: 64 }, (_, i) => i + 0.5);
  for (let i = 0; i < 64; i += 4) bv[i] += 1e-4 * (i + 1);
  const b = Tensor.from(bv, [8, 8], 'f32');

  it('firstN lists that many mismatches (default 10)', () => {
    assert.equal(diff(a, b).first.length, 10);
    assert.equal(diff(a, b, { firstN: 3 }).first.length, 3);
  });

  it('tolerance: absent gives no closeness verdict; a wide one passes where a narrow one fails', () => {
    assert.equal(diff(a, b).tolerance, null);
    const wide = diff(a, b, { tolerance: { rtol: 1e-2, atol: 0 } }).tolerance!;
    const narrow = diff(a, b, { tolerance: { rtol: 1e-9, atol: 0 } }).tolerance!;
    assert.notDeepEqual(wide, narrow);
    assert.ok(JSON.stringify(wide) !== JSON.stringify(narrow));
  });

  it('map: false gives none; a grid size gives that grid', () => {
    assert.ok(diff(a, b).map !== null);
    assert.equal(diff(a, b, { map: false }).map, null);
    const small = diff(a, b, { map: { maxRows: 2, maxCols: 2 } }).map!;
    const dflt = diff(a, b).map!;
    assert.notDeepEqual(JSON.stringify(small), JSON.stringify(dflt));
  });

  it('label names the comparison; coordinates name the mismatch', () => {
    assert.equal(diff(a, b, { label: 'mine' }).label, 'mine');
    assert.equal(diff(a, b).label, undefined);
    const plain = diff(a, b).first[1].coords;
    const named = diff(a, b, { coordinates: namedCoordinates('grid', ['row', 'col']) }).first[1].coords;
    assert.deepEqual(Object.keys(named), ['row', 'col']);
    assert.notDeepEqual(plain, named);
  });
});
