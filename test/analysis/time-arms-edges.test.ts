// lib/analysis/timing.ts's timeArms and its helpers (TimingAborted, cudaVersion, newRunId, timingMethod,
// runProvenance, positive, checkCases, checkSamples) with a scripted backend: every timeOps call is recorded, its
// samples come from a function of (call, round, case, L2 state), and a virtual clock advances by a fixed amount
// per call and per round, so the warm-up, the rounds per batch, each stop reason and its detail, mode 'both', the
// bits checks, aborts and the progress display are asserted exactly, in milliseconds, with no kernel.

import { strict as assert } from 'assert';
import * as os from 'os';
import { Stubs } from '../cli/edges-helpers';
import { TimingAborted, TimingCase, TimingOptions, timeArms, timingMethod } from '../../lib/analysis/timing';
import { ARITHMETIC_VERSION, revision } from '../../lib/provenance';
import type { DeviceInfo, NativeOp } from '../../lib/backend';

const backendM = require('../../lib/backend') as Record<string, unknown>;
const progressM = require('../../lib/view/progress') as Record<string, unknown>;

interface Call { rounds: number; flushL2: boolean; rotateOrder: boolean; graphLaunches: number; n: number }

class Scripted {
  kind: 'cuda' | 'host' = 'cuda';
  /** Not 0, so that a clock read is never the same as a difference of two. */
  now = 1000;
  calls: Call[] = [];
  ops: NativeOp[][] = [];
  infos = 0;
  /** ms the clock advances per call and per round. */
  callMs = 0;
  roundMs = 1;
  smClock = 1980;
  onCall?: (k: number) => void;
  override?: (k: number, n: number, rounds: number) => unknown;
  constructor(public sample: (i: number, r: number, cold: boolean, k: number) => number = () => 10, public extra: Partial<DeviceInfo> = {}) {}
  info(): DeviceInfo {
    this.infos++;
    return {
      backend: this.kind, deviceOrdinal: 0, name: 'Dev', smMajor: 9, smMinor: 0, smCount: 132, l2Bytes: 50, totalMemBytes: 1, freeMemBytes: 1,
      smClockMhz: this.smClock, memClockMhz: 2619, maxSmClockMhz: 1980, maxMemClockMhz: 2619, memBusWidthBits: 1,
      driverVersion: 12040, runtimeVersion: 13000, driverString: '580.1', clocksSource: 'nvml', ...this.extra,
    };
  }
  async timeOps(ops: NativeOp[], cfg: { rounds: number; flushL2: boolean; rotateOrder?: boolean; graphLaunches?: number }): Promise<Float32Array> {
    const k = this.calls.length;
    this.ops.push(ops);
    this.calls.push({ rounds: cfg.rounds, flushL2: cfg.flushL2, rotateOrder: cfg.rotateOrder!, graphLaunches: cfg.graphLaunches!, n: ops.length });
    assert.deepEqual(Object.keys(cfg), ['rounds', 'flushL2', 'rotateOrder', 'graphLaunches']);
    this.now += this.callMs + cfg.rounds * this.roundMs;
    this.onCall?.(k);
    if (this.override) return this.override(k, ops.length, cfg.rounds) as Float32Array;
    const out = new Float32Array(cfg.rounds * ops.length);
    for (let r = 0; r < cfg.rounds; r++) for (let i = 0; i < ops.length; i++) out[r * ops.length + i] = this.sample(i, r, cfg.flushL2, k);
    return out;
  }
  clock = (): number => this.now;
}

const op = (label: string, extra: Record<string, unknown> = {}): NativeOp => ({ kind: 'conv', args: {}, label, ...extra } as NativeOp);
const cases = (n: number): TimingCase[] => Array.from({ length: n }, (_, i) => ({ label: `a${i}`, op: op(`a${i}`) }));
const run = (b: Scripted, opts: TimingOptions = {}, cs: TimingCase[] = cases(2)) =>
  timeArms(cs, { backend: b as never, clock: b.clock, progress: false, warmupMs: 0, ...opts });
const rejects = async (p: Promise<unknown>, type: ErrorConstructor, message: string) =>
  assert.rejects(p, (e: unknown) => {
    assert.equal((e as Error).constructor, type, String(e));
    assert.equal((e as Error).message, message);
    return true;
  });

describe('timeArms at its edges', () => {
  const stubs = new Stubs();
  afterEach(() => stubs.restore());

  it('checkCases: each malformed case is refused with its index', async () => {
    const b = new Scripted();
    const t = (cs: unknown) => timeArms(cs as TimingCase[], { backend: b as never, progress: false });
    await rejects(t([]), TypeError, 'cases: expected a non-empty array of { label, op, meta? }, got []');
    await rejects(t('x'), TypeError, "cases: expected a non-empty array of { label, op, meta? }, got 'x'");
    await rejects(t([null]), TypeError, 'cases[0]: expected { label, op, meta? }, got null');
    await rejects(t([{ label: 'a', op: op('a') }, 3]), TypeError, 'cases[1]: expected { label, op, meta? }, got 3');
    await rejects(t([{ label: '', op: op('a') }]), TypeError, "cases[0].label: expected a non-empty string, got ''");
    await rejects(t([{ label: 1, op: op('a') }]), TypeError, 'cases[0].label: expected a non-empty string, got 1');
    await rejects(t([{ label: 'a', op: op('a') }, { label: 'a', op: op('a') }]), RangeError, "cases[1].label: 'a' is used twice; labels must be unique");
    await rejects(t([{ label: 'a' }]), TypeError, 'cases[0].op: expected a prepared NativeOp ({ kind, args }), got undefined');
    await rejects(t([{ label: 'a', op: null }]), TypeError, 'cases[0].op: expected a prepared NativeOp ({ kind, args }), got null');
    await rejects(t([{ label: 'a', op: Object.assign(() => 0, { kind: 'conv' }) }]), TypeError, 'cases[0].op: expected a prepared NativeOp ({ kind, args }), got '
      + (await import('../../lib/dtype')).describe(Object.assign(() => 0, { kind: 'conv' })));
    await rejects(t([{ label: 'a', op: 5 }]), TypeError, 'cases[0].op: expected a prepared NativeOp ({ kind, args }), got 5');
    await rejects(t([{ label: 'a', op: { kind: 3 } }]), TypeError, 'cases[0].op: expected a prepared NativeOp ({ kind, args }), got {…}'.replace('{…}', String((await import('../../lib/dtype')).describe({ kind: 3 }))));
    await rejects(t([{ label: 'a', op: op('a'), meta: null }]), TypeError, 'cases[0].meta: expected an object, got null');
    await rejects(t([{ label: 'a', op: op('a'), meta: 'm' }]), TypeError, "cases[0].meta: expected an object, got 'm'");
    assert.equal(b.calls.length, 0);
  });

  it('options: graphLaunches, mode, noiseMetric, the numbers and roundsPerBatch are checked before timing', async () => {
    const b = new Scripted();
    await rejects(run(b, { graphLaunches: 1.5, mode: 'hot' }), RangeError, 'graphLaunches: expected true or an integer in 1..1000, got 1.5');
    await rejects(run(b, { graphLaunches: -1, mode: 'hot' }), RangeError, 'graphLaunches: expected true or an integer in 1..1000, got -1');
    await rejects(run(b, { graphLaunches: 1001, mode: 'hot' }), RangeError, 'graphLaunches: expected true or an integer in 1..1000, got 1001');
    await rejects(run(b, { mode: 'x' as never }), TypeError, "mode: expected 'cold', 'hot' (or 'warm') or 'both', got 'x'");
    await rejects(run(b, { graphLaunches: 4, mode: 'cold' }), RangeError, "mode: graph replay runs 4 launches back to back, so L2 is warm; use mode 'hot' with graphLaunches (got 'cold')");
    await rejects(run(b, { graphLaunches: true, mode: 'both' }), RangeError, "mode: graph replay runs 20 launches back to back, so L2 is warm; use mode 'hot' with graphLaunches (got 'both')");
    await rejects(run(b, { noiseMetric: 'sd' as never }), TypeError, "noiseMetric: expected 'ci' or 'iqr', got 'sd'");
    for (const [key, integer] of [['warmupMs', false], ['minSamples', true], ['minTimeMs', false], ['noiseTarget', false], ['maxTimeMs', false], ['maxSamples', true], ['batchMs', false]] as const) {
      const what = integer ? 'non-negative integer' : 'finite number ≥ 0';
      for (const [v, d] of [[-1, '-1'], [NaN, 'NaN'], [Infinity, 'Infinity'], ['3', "'3'"]] as const) {
        await rejects(run(b, { [key]: v } as TimingOptions), RangeError, `${key}: expected a ${what}, got ${d}`);
      }
      if (integer) await rejects(run(b, { [key]: 2.5 } as TimingOptions), RangeError, `${key}: expected a ${what}, got 2.5`);
    }
    await rejects(run(b, { roundsPerBatch: 0 }), RangeError, 'roundsPerBatch: expected a positive integer, got 0');
    await rejects(run(b, { roundsPerBatch: 1.5 }), RangeError, 'roundsPerBatch: expected a positive integer, got 1.5');
    await rejects(run(b, { validate: 1 as never }), TypeError, 'validate: expected true or false, got 1');
    assert.equal(b.calls.length, 0);
    // boundaries that pass: 0 for every number, graphLaunches 1000, roundsPerBatch 1
    const r = await run(b, { graphLaunches: 1000, mode: 'warm', warmupMs: 0, minSamples: 0, minTimeMs: 0, noiseTarget: 0, maxTimeMs: 0, maxSamples: 0, batchMs: 0, roundsPerBatch: 1 });
    assert.deepEqual(r.settings, { mode: 'hot', graphLaunches: 1000, rotateOrder: true, warmupMs: 0, minSamples: 0, minTimeMs: 0, noiseTarget: 0, noiseMetric: 'ci', maxTimeMs: 0, maxSamples: 0 });
    // maxSamples 0 still takes one round; constant samples: one sample has no noise estimate, so the cap stops it
    assert.equal(r.stop.reason, 'max-samples');
    assert.deepEqual(r.cases.map((c) => c.samples), [[10], [10]]);
    assert.deepEqual(b.calls.map((c) => [c.rounds, c.graphLaunches, c.flushL2]), [[1, 1000, false], [1, 1000, false]]);
  });

  it('defaults: cold, rotated, the default numbers; graphLaunches true = 20 and hot; false = 0', async () => {
    const b = new Scripted(() => 15);
    const r = await timeArms(cases(1), { backend: b as never, clock: b.clock, progress: false });
    assert.deepEqual(r.settings, { mode: 'cold', graphLaunches: 0, rotateOrder: true, warmupMs: 200, minSamples: 30, minTimeMs: 50, noiseTarget: 0.01, noiseMetric: 'ci', maxTimeMs: 10000, maxSamples: 100_000 });
    // warm-up 1 + 2 + ... + 128 = 255 rounds at 1 ms each; then 250 ms batches: 250 rounds, 15 µs each → 14 batches for 50 ms
    assert.deepEqual(r.stop, {
      reason: 'noise-target', converged: true, batches: 14, rounds: 3500, roundsPerBatch: 250, warmupRounds: 255, warmupMs: 255, wallMs: 3500,
      detail: 'every case reached ci noise ≤ 1% (worst 0%) with ≥ 30 samples and ≥ 50 ms measured',
    });
    assert.ok(b.calls.every((c) => c.flushL2 && c.rotateOrder && c.graphLaunches === 0));
    assert.deepEqual(b.calls.slice(0, 9).map((c) => c.rounds), [1, 2, 4, 8, 16, 32, 64, 128, 250]);

    const g = new Scripted();
    const rg = await run(g, { graphLaunches: true, maxSamples: 1, rotateOrder: false });
    assert.deepEqual([rg.settings.mode, rg.settings.graphLaunches, rg.settings.rotateOrder, rg.provenance.mode, rg.provenance.graphLaunches, rg.provenance.rotateOrder], ['hot', 20, false, 'hot', 20, false]);
    assert.deepEqual(g.calls.map((c) => [c.flushL2, c.rotateOrder, c.graphLaunches]), [[false, false, 20], [false, false, 20]]);
    const f = new Scripted();
    const rf = await run(f, { graphLaunches: false, maxSamples: 1 });
    assert.deepEqual([rf.settings.mode, rf.settings.graphLaunches], ['cold', 0]);
    const h = new Scripted();
    assert.equal((await run(h, { graphLaunches: 3, maxSamples: 1 })).settings.mode, 'hot');
    const w = new Scripted();
    assert.deepEqual((await run(w, { mode: 'hot', noiseMetric: 'iqr', maxSamples: 1 })).settings.noiseMetric, 'iqr');
    assert.deepEqual(w.calls.map((c) => c.flushL2), [false, false]);
  });

  it('warm-up doubles the rounds up to 1024 until its budget is spent; rounds per batch from its pace', async () => {
    const b = new Scripted();
    b.roundMs = 0;
    b.callMs = 1;
    const r = await run(b, { warmupMs: 12, batchMs: 30, maxSamples: 1 });
    assert.deepEqual(b.calls.slice(0, 12).map((c) => c.rounds), [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 1024]);
    assert.equal(r.stop.warmupRounds, 3071);
    assert.equal(r.stop.warmupMs, 12);
    // 30 / (12 / 3071) = 7677.5 → 7678 rounds per batch (the batch itself is cut to maxSamples)
    assert.equal(r.stop.roundsPerBatch, 7678);
    assert.equal(b.calls[12].rounds, 1);

    const z = new Scripted();
    z.roundMs = 0;
    const rz = await run(z, { maxSamples: 2 });
    assert.equal(rz.stop.warmupMs, 0);
    assert.equal(rz.stop.roundsPerBatch, 100_000, 'a warm-up that took no time: the cap');
    const s = new Scripted();
    s.roundMs = 100;
    const rs = await run(s, { warmupMs: 150, batchMs: 10, maxSamples: 1 });
    assert.deepEqual([rs.stop.warmupRounds, rs.stop.warmupMs, rs.stop.roundsPerBatch], [3, 300, 1]);
    const p = new Scripted();
    p.roundMs = 4;
    const rp = await run(p, { warmupMs: 4, batchMs: 10, maxSamples: 1 });
    assert.deepEqual([rp.stop.warmupRounds, rp.stop.roundsPerBatch], [1, 3], '10 / 4 = 2.5 rounds to 3');
    const q = new Scripted();
    q.roundMs = 4;
    const rq = await run(q, { warmupMs: 5, batchMs: 10, maxSamples: 1 });
    assert.deepEqual([rq.stop.warmupRounds, rq.stop.warmupMs], [3, 12], 'the budget is spent only when the clock passes it');
  });

  it('stops on the noise target exactly at minSamples and minTimeMs, and reports the detail', async () => {
    const b = new Scripted(() => 1000);
    const r = await run(b, { roundsPerBatch: 1, minSamples: 3, minTimeMs: 3, noiseTarget: 0 });
    assert.deepEqual(r.stop, {
      reason: 'noise-target', converged: true, batches: 3, rounds: 3, roundsPerBatch: 1, warmupRounds: 1, warmupMs: 1, wallMs: 3,
      detail: 'every case reached ci noise ≤ 0% (worst 0%) with ≥ 3 samples and ≥ 3 ms measured',
    });
    assert.deepEqual(r.cases.map((c) => [c.measuredMs, c.noise, c.stats.n]), [[3, 0, 3], [3, 0, 3]]);
    // 4 samples needed by minSamples, 3 ms by time: the samples decide
    const c = new Scripted(() => 1000);
    assert.equal((await run(c, { roundsPerBatch: 1, minSamples: 4, minTimeMs: 3 })).stop.batches, 4);
    const d = new Scripted(() => 1000);
    assert.equal((await run(d, { roundsPerBatch: 1, minSamples: 2, minTimeMs: 3.5 })).stop.batches, 4);
    // noise exactly at the target stops (iqr of 1, 1, 3, 3 is 2 / 2)
    const e = new Scripted((i, r) => (r % 2 ? 3000 : 1000));
    const re = await run(e, { roundsPerBatch: 4, minSamples: 1, minTimeMs: 0, noiseMetric: 'iqr', noiseTarget: 1 });
    assert.deepEqual([re.stop.reason, re.stop.batches, re.cases[0].noise], ['noise-target', 1, 1]);
    assert.equal(re.stop.detail, 'every case reached iqr noise ≤ 100% (worst 100%) with ≥ 1 samples and ≥ 0 ms measured');
  });

  it('max-samples: the last batch is cut to the cap; the detail lists what was unmet', async () => {
    const b = new Scripted((i, r) => (i === 1 && r % 2 ? 20 : 10));
    const r = await run(b, { roundsPerBatch: 2, maxSamples: 5, minSamples: 6, minTimeMs: 1, noiseTarget: 0.01 });
    assert.deepEqual(b.calls.map((c) => c.rounds), [1, 2, 2, 1]);
    assert.equal(r.stop.reason, 'max-samples');
    assert.equal(r.stop.converged, false);
    assert.deepEqual([r.stop.batches, r.stop.rounds], [3, 5]);
    assert.equal(r.stop.detail, `reached 5 samples per case (maxSamples) before the target: 5 < 6 samples, 0.05 < 1 ms measured, noise ${Math.round(r.cases[1].noise * 1000) / 10}% > 1% ('a1')`);
    assert.ok(r.cases[1].noise > 0.01);
    // targets met exactly are not listed: 2 = minSamples, 4 ms = minTimeMs, iqr noise 0.5 = the target
    const x = new Scripted((i, r) => (r % 2 ? 3000 : 1000));
    const rx = await run(x, { roundsPerBatch: 2, maxSamples: 2, minSamples: 2, minTimeMs: 4, noiseMetric: 'iqr', noiseTarget: 0.1 });
    assert.equal(rx.stop.detail, "reached 2 samples per case (maxSamples) before the target: noise 50% > 10% ('a0')");
    const y = new Scripted((i, r) => (r % 2 ? 3000 : 1000));
    const ry = await run(y, { roundsPerBatch: 2, maxSamples: 2, minSamples: 3, minTimeMs: 4, noiseMetric: 'iqr', noiseTarget: 0.5 });
    assert.equal(ry.stop.detail, 'reached 2 samples per case (maxSamples) before the target: 2 < 3 samples');
    // the cap reached with every target met stops on the target
    const m = new Scripted();
    assert.equal((await run(m, { roundsPerBatch: 2, maxSamples: 2, minSamples: 2, minTimeMs: 0 })).stop.reason, 'noise-target');
    // only the noise unmet: the detail says only that
    const n = new Scripted((i, r) => (r % 2 ? 20 : 10));
    const rn = await run(n, { roundsPerBatch: 4, maxSamples: 4, minSamples: 1, minTimeMs: 0, noiseMetric: 'iqr', noiseTarget: 0.1 });
    assert.equal(rn.stop.detail, "reached 4 samples per case (maxSamples) before the target: noise 66.7% > 10% ('a0')");
  });

  it('time-cap: stops when the wall time after warm-up reaches maxTimeMs', async () => {
    const b = new Scripted((i, r, cold, k) => (k % 2 ? 20 : 10));
    b.roundMs = 10;
    const r = await run(b, { roundsPerBatch: 1, maxTimeMs: 30, minSamples: 1, minTimeMs: 0, noiseMetric: 'iqr', noiseTarget: 0.1 });
    assert.deepEqual([r.stop.reason, r.stop.batches, r.stop.wallMs, r.stop.warmupMs, r.stop.converged], ['time-cap', 3, 30, 10, false]);
    assert.equal(r.stop.detail, `reached the 30 ms time cap before the target: noise ${Math.round(r.cases[0].noise * 1000) / 10}% > 10% ('a0')`);
    // the detail with samples and time unmet too
    const c = new Scripted(() => 10);
    c.roundMs = 10;
    const rc = await run(c, { roundsPerBatch: 1, maxTimeMs: 10, minSamples: 5, minTimeMs: 2 });
    assert.equal(rc.stop.detail, 'reached the 10 ms time cap before the target: 1 < 5 samples, 0.01 < 2 ms measured, noise Inf% > 1% (\'a0\')');
  });

  it("mode 'both': every case cold and warm, alternating which state goes first, labelled and placed per state", async () => {
    const b = new Scripted((i, r, cold) => (cold ? 100 : 10) + i);
    const cs = cases(2);
    const r = await run(b, { mode: 'both', roundsPerBatch: 2, maxSamples: 6, minSamples: 10 }, cs);
    assert.deepEqual(b.calls.map((c) => [c.rounds, c.flushL2]), [[1, true], [1, false], [2, true], [2, false], [2, false], [2, true], [2, true], [2, false]]);
    assert.ok(b.ops.every((o) => o.length === 2 && o[0] === cs[0].op && o[1] === cs[1].op), 'each call times the cases\' ops');
    assert.deepEqual(r.cases.map((c) => [c.label, c.base, c.l2, c.samples]), [
      ['a0 · cold L2', 'a0', 'cold', [100, 100, 100, 100, 100, 100]],
      ['a1 · cold L2', 'a1', 'cold', [101, 101, 101, 101, 101, 101]],
      ['a0 · warm L2', 'a0', 'warm', [10, 10, 10, 10, 10, 10]],
      ['a1 · warm L2', 'a1', 'warm', [11, 11, 11, 11, 11, 11]],
    ]);
    [0.6, 0.606, 0.06, 0.066].forEach((m, k) => assert.ok(Math.abs(r.cases[k].measuredMs - m) < 1e-12, String(r.cases[k].measuredMs)));
    assert.equal(r.stop.detail, 'reached 6 samples per case (maxSamples) before the target: 6 < 10 samples, 0.06 < 50 ms measured');
    assert.equal(r.settings.mode, 'both');
    assert.deepEqual([r.cases[2].provenance.label, r.cases[2].provenance.l2], ['a0 · warm L2', 'warm']);
    // the noisiest case is named by its label with the state
    const n = new Scripted((i, r, cold) => (!cold && i === 1 && r % 2 ? 20 : 10));
    const rn = await run(n, { mode: 'both', roundsPerBatch: 4, maxSamples: 4, minSamples: 1, minTimeMs: 0, noiseMetric: 'iqr' });
    assert.ok(rn.stop.detail.endsWith("('a1 · warm L2')"), rn.stop.detail);
    // the warm-up alternates too: batch index = warm-up rounds so far (0, 1, 3: cold first, then warm first)
    const w = new Scripted();
    w.roundMs = 0;
    w.callMs = 1;
    await run(w, { mode: 'both', warmupMs: 5, roundsPerBatch: 1, maxSamples: 1 });
    assert.deepEqual(w.calls.map((c) => [c.rounds, c.flushL2]), [[1, true], [1, false], [2, false], [2, true], [4, false], [4, true], [1, true], [1, false]]);
    const h = new Scripted();
    const rh = await run(h, { mode: 'hot', maxSamples: 1 });
    assert.deepEqual(rh.cases.map((c) => [c.label, c.base, c.l2]), [['a0', 'a0', 'warm'], ['a1', 'a1', 'warm']]);
  });

  it('result: provenance, per-case meta and provenance, clocks read again at the end, the run id', async () => {
    const b = new Scripted((i) => 10 * (i + 1));
    b.onCall = () => void (b.smClock = 1500);
    const meta = { arm: 'x', shape: [1, 2] };
    const before = Date.now();
    const r = await timeArms([{ label: 'a', op: op('a'), meta }, { label: 'b', op: { kind: 'copy', args: {} } as NativeOp }], { backend: b as never, clock: b.clock, progress: false, warmupMs: 0, maxSamples: 2, label: 'L' });
    assert.equal(r.label, 'L');
    const { time, runId, ...p } = r.provenance;
    assert.match(runId, /^\d{8}T\d{6}Z-[0-9a-f]{6}$/);
    assert.equal(r.runId, runId);
    assert.ok(Date.parse(time) >= before - 1 && Date.parse(time) <= Date.now() + 1);
    assert.equal(runId.slice(0, 15), time.replace(/[-:]/g, '').slice(0, 15));
    assert.deepEqual(p, {
      backend: 'cuda', device: 'Dev', sm: '9.0', smCount: 132, l2Bytes: 50, smClockMhz: 1980, memClockMhz: 2619, maxSmClockMhz: 1980, maxMemClockMhz: 2619,
      clocksSource: 'nvml', clocksAfter: { smClockMhz: 1500, memClockMhz: 2619 }, driver: '580.1', runtime: '13.0', revision: revision(), arithmetic: ARITHMETIC_VERSION,
      host: os.hostname(), node: process.version, mode: 'cold', rotateOrder: true, graphLaunches: 0, method: timingMethod('cuda', 'cold', 0),
    });
    assert.equal(b.infos, 2);
    const [a, c] = r.cases;
    assert.deepEqual(a.meta, meta);
    assert.notEqual(a.meta, meta, 'the meta is copied');
    assert.deepEqual(c.meta, {});
    assert.deepEqual([a.runId, a.opKind, c.opKind, a.samples, c.samples, a.stats.median, c.stats.n], [runId, 'conv', 'copy', [10, 10], [20, 20], 10, 2]);
    assert.deepEqual(a.provenance, { ...r.provenance, arm: 'x', shape: [1, 2], label: 'a', opKind: 'conv', l2: 'cold' });
    assert.deepEqual(c.provenance, { ...r.provenance, label: 'b', opKind: 'copy', l2: 'cold' });
    assert.ok(!('bits' in a) && !('bits' in c));
    assert.deepEqual(Object.keys(a), ['label', 'base', 'l2', 'runId', 'opKind', 'meta', 'samples', 'stats', 'noise', 'measuredMs', 'provenance']);
    // a given run id; the host: no sm, the driver from its version, no runtime
    const hb = new Scripted(() => 1, { smMajor: 0, driverString: '', driverVersion: 12040, runtimeVersion: 0 });
    hb.kind = 'host';
    const rh = await run(hb, { runId: 'RUN', maxSamples: 1 });
    assert.deepEqual([rh.runId, rh.provenance.sm, rh.provenance.driver, rh.provenance.runtime, rh.provenance.backend, rh.provenance.method], ['RUN', '', '12.4', '', 'host', timingMethod('host', 'cold', 0)]);
    const nb = new Scripted(() => 1, { driverString: '', driverVersion: 0, runtimeVersion: 12999, smMinor: 7 });
    const rn = await run(nb, { maxSamples: 1 });
    assert.deepEqual([rn.provenance.driver, rn.provenance.runtime, rn.provenance.sm], ['', '12.99', '9.7']);
  });

  it('timingMethod: the words for each backend, mode and graph replay', () => {
    assert.equal(timingMethod('cuda', 'cold', 0), 'CUDA events around each launch, L2 flushed before each launch (cold), the host ahead of the GPU (a GPU-side hold before each start event; a sample the host fell behind on is retaken)');
    assert.equal(timingMethod('host', 'hot', 0), 'monotonic clock around each run on the host backend, L2 not flushed (warm)');
    assert.equal(timingMethod('host', 'both', 0), 'monotonic clock around each run on the host backend, cold L2 (flushed before each launch) and warm L2 (not flushed), alternating batches of one run');
    assert.equal(timingMethod('cuda', 'hot', 5), 'CUDA-graph replay: each sample is one replay of 5 back-to-back launches ÷ 5 (launch overhead removed), L2 warm, the host ahead of the GPU');
    assert.equal(timingMethod('host', 'hot', 1), 'host backend: 1 back-to-back runs per sample ÷ 1 (CUDA-graph replay exists on CUDA only; the host has no launch overhead to remove)');
  });

  it("checkSamples: the backend's samples must be a Float32Array of rounds × cases finite times ≥ 0", async () => {
    const bad = async (v: unknown, message: string) => {
      const b = new Scripted();
      b.override = () => v;
      await rejects(run(b, {}), Error, message);
    };
    await bad(new Float32Array(3), 'backend.timeOps: expected 2 samples, got Float32Array(3) of length 3'.replace('Float32Array(3)', (await import('../../lib/dtype')).describe(new Float32Array(3))));
    await bad([1, 2], 'backend.timeOps: expected 2 samples, got [1, 2]');
    await bad(Float32Array.of(1, NaN), 'backend.timeOps: sample 1 is NaN µs; expected a finite time ≥ 0');
    await bad(Float32Array.of(-1, 1), 'backend.timeOps: sample 0 is -1 µs; expected a finite time ≥ 0');
    await bad(Float32Array.of(1, Infinity), 'backend.timeOps: sample 1 is Infinity µs; expected a finite time ≥ 0');
    const z = new Scripted(() => 0);
    assert.deepEqual((await run(z, { maxSamples: 1 })).cases.map((c) => c.samples), [[0], [0]]);
  });

  it('bits: checked (or probed) before timing, attached per case, failures wrapped; a source needs a checker', async () => {
    const checked: unknown[] = [];
    const probed: unknown[] = [];
    const source = { op: 'conv', inputs: 1, opts: 2 };
    const check = { arm: 'a/x', reference: 'scalar', mismatches: 0, planted: false };
    const checker = {
      check: async (s: unknown) => (checked.push(s), check),
      probe: async (s: unknown) => void probed.push(s),
    };
    const cs = (): TimingCase[] => [{ label: 'p', op: op('p', { source }) }, { label: 'q', op: op('q') }];
    const b = new Scripted();
    b.onCall = () => assert.equal(checked.length, 1, 'checked before any timing');
    const r = await run(b, { bitsChecker: checker, maxSamples: 1 }, cs());
    assert.deepEqual(checked, [source]);
    assert.equal(r.cases[0].bits, check);
    assert.ok(!('bits' in r.cases[1]));
    const both = await run(new Scripted(), { bitsChecker: checker, maxSamples: 1, mode: 'both' }, cs());
    assert.deepEqual(both.cases.map((c) => c.bits), [check, undefined, check, undefined]);
    const pr = await run(new Scripted(), { bitsChecker: checker, validate: false, maxSamples: 1 }, cs());
    assert.deepEqual(probed, [source]);
    assert.ok(pr.cases.every((c) => !('bits' in c)));
    await rejects(run(new Scripted(), {}, [{ label: 'q', op: op('q') }, { label: 'p', op: op('p', { source }) }]), TypeError,
      "cases[1] ('p'): an op prepared by conv.prepareTimed is checked before it is timed, and this timeArms has no bitsChecker: call gdnlab's timeArms (lib/check/timed.ts), which supplies it");
    const cause = new Error('inner');
    const failing = { check: async () => { throw cause; }, probe: async () => { throw cause; } };
    for (const validate of [true, false]) {
      const fb = new Scripted();
      await assert.rejects(run(fb, { bitsChecker: failing, validate }, cs()), (e: unknown) => {
        assert.equal((e as Error).message, `cases[0] ('p'): ${validate ? 'checking its bits' : 'running it once'} before timing: inner`);
        assert.equal((e as { cause?: unknown }).cause, cause);
        return true;
      });
      assert.equal(fb.calls.length, 0);
    }
  });

  it('aborts: before the warm-up, during it, before the first batch, and after batches with the partial result', async () => {
    const ac = new AbortController();
    ac.abort();
    const b = new Scripted();
    await assert.rejects(run(b, { signal: ac.signal }), (e: unknown) => e instanceof TimingAborted && e.partial === undefined && e.name === 'TimingAborted' && e.message === 'timing: aborted (interrupt) between batches');
    assert.equal(b.calls.length, 0);
    const at = async (k: number, opts: TimingOptions) => {
      const c = new AbortController();
      const s = new Scripted();
      s.onCall = (i) => void (i === k && c.abort());
      let got: TimingAborted | undefined;
      await assert.rejects(run(s, { signal: c.signal, ...opts }), (e: unknown) => ((got = e as TimingAborted), e instanceof TimingAborted));
      return { s, e: got! };
    };
    const w = await at(0, { warmupMs: 5 });
    assert.deepEqual([w.s.calls.length, w.e.partial], [1, undefined]);
    const f = await at(0, {});
    assert.deepEqual([f.s.calls.length, f.e.partial], [1, undefined]);
    const p = await at(2, { roundsPerBatch: 2 });
    assert.equal(p.s.calls.length, 3);
    const partial = p.e.partial!;
    assert.deepEqual([partial.stop.batches, partial.stop.rounds, partial.stop.wallMs, partial.stop.reason], [2, 4, 4, 'time-cap']);
    assert.deepEqual(partial.cases.map((c) => c.samples.length), [4, 4]);
  });

  it('the backend defaults to the active one and the clock to performance.now', async () => {
    const b = new Scripted();
    stubs.set(backendM, 'activeBackend', () => b);
    const r = await timeArms(cases(1), { progress: false, warmupMs: 0, maxSamples: 3, roundsPerBatch: 3 });
    assert.equal(b.calls.length, 2);
    assert.deepEqual(r.cases[0].samples, [10, 10, 10]);
    assert.ok(r.stop.wallMs >= 0 && r.stop.wallMs < 5000 && r.stop.warmupMs >= 0, JSON.stringify(r.stop));
    assert.ok(r.stop.warmupMs > 0 || r.stop.wallMs > 0 || performance.now() > 0);
  });

  it('progress: the title, a tick per batch with its note, and the closing line (also on abort and failure)', async () => {
    const bars: { total: number; opts: Record<string, unknown>; ticks: [number, string][]; done: string[] }[] = [];
    stubs.set(progressM, 'progress', (total: number, opts: Record<string, unknown>) => {
      const bar = { total, opts, ticks: [] as [number, string][], done: [] as string[] };
      bars.push(bar);
      return { tick: (n: number, note: string) => bar.ticks.push([n, note]), done: (s: string) => bar.done.push(s) };
    });
    const b = new Scripted((i, r) => (r % 2 ? 20 : 10));
    b.roundMs = 2;
    const r = await timeArms(cases(2), { backend: b as never, clock: b.clock, warmupMs: 0, roundsPerBatch: 2, maxSamples: 4, maxTimeMs: 77, label: 'Run' });
    assert.equal(bars.length, 1);
    assert.deepEqual([bars[0].total, bars[0].opts.label, bars[0].opts.clock === b.clock], [77, 'Run: 2 cases (cold)', true]);
    assert.deepEqual(bars[0].ticks, [[4, '2 samples/case, worst noise 33%'], [4, '4 samples/case, worst noise 33%']]);
    assert.deepEqual(bars[0].done, ['max-samples, 4 samples per case']);
    const t = (opts: TimingOptions, n = 1) => timeArms(cases(n), { backend: new Scripted() as never, warmupMs: 0, maxSamples: 1, ...opts }).then(() => bars.at(-1)!.opts.label);
    assert.equal(await t({}), 'timing: 1 case (cold)');
    assert.equal(await t({ mode: 'both' }, 3), 'timing: 3 cases (cold and warm L2)');
    assert.equal(await t({ graphLaunches: 7 }), 'timing: 1 case (graph replay ×7)');
    assert.equal(await t({ mode: 'hot' }), 'timing: 1 case (hot)');
    const before = bars.length;
    await run(new Scripted(), { maxSamples: 1 });
    assert.equal(bars.length, before, 'progress: false shows none');
    const ac = new AbortController();
    ac.abort();
    await assert.rejects(timeArms(cases(1), { backend: new Scripted() as never, signal: ac.signal }));
    assert.deepEqual(bars.at(-1)!.done, ['aborted']);
    const f = new Scripted();
    f.override = () => [];
    await assert.rejects(timeArms(cases(1), { backend: f as never }));
    assert.deepEqual(bars.at(-1)!.done, [`failed: backend.timeOps: expected 1 samples, got []`]);
  });
});
