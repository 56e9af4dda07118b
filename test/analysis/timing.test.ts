import { strict as assert } from 'assert';
import { Rng } from '../../lib/random';
import { summarize } from '../../lib/analysis/stats';
import { TimingAborted, compare, timeArms } from '../../lib/analysis/timing';
import { ARITHMETIC_VERSION } from '../../lib/provenance';
import { MIME_BUNDLE } from '../../lib/view/display';
import { FakeTimingBackend, fakeOp } from './fake-backend';

const KERNEL = Symbol.for('gdnlab.kernel');

function cases(n: number) {
  return Array.from({ length: n }, (_, i) => ({ label: `arm${i}`, op: fakeOp(`arm${i}`), meta: { arm: `arm${i}`, shape: [64, 6144], dtypes: 'bf16' } }));
}

/** Seeded normal samples per case: mean[i] ± sd[i]·mean[i]. */
function noisy(means: number[], rel: number, seed = 1) {
  const rngs = means.map((_, i) => new Rng(seed * 100 + i));
  return (i: number) => Math.max(0.1, means[i] * (1 + rel * rngs[i].normal()));
}

describe('timeArms with a fake backend', () => {
  it('constant samples: stops on the noise target as soon as minSamples and minTime are met', async () => {
    const fake = new FakeTimingBackend(() => 10);
    const r = await timeArms(cases(2), { backend: fake, clock: fake.clock, progress: false, warmupMs: 1, roundsPerBatch: 10, minSamples: 30, minTimeMs: 0.5 });
    assert.equal(r.stop.reason, 'noise-target');
    assert.equal(r.stop.converged, true);
    // 30 samples (3 batches of 10) give 0.3 ms; 0.5 ms needs 50 samples → 5 batches.
    assert.equal(r.stop.batches, 5);
    for (const c of r.cases) {
      assert.equal(c.stats.n, 50);
      assert.equal(c.stats.median, 10);
      assert.equal(c.stats.iqr, 0);
      assert.equal(c.noise, 0);
      assert.ok(Math.abs(c.measuredMs - 0.5) < 1e-9);
    }
  });

  it('noisy samples: stops when the median CI is within 1%, with the expected statistics', async () => {
    const fake = new FakeTimingBackend(noisy([100, 120], 0.05));
    const r = await timeArms(cases(2), { backend: fake, clock: fake.clock, progress: false, warmupMs: 5, roundsPerBatch: 20, minSamples: 30, minTimeMs: 1 });
    assert.equal(r.stop.reason, 'noise-target');
    for (const c of r.cases) assert.ok(c.noise <= 0.01, `${c.label} noise ${c.noise}`);
    // A 5% spread needs roughly (1.96·1.25·0.05/0.01)² ≈ 150 samples for a 1% CI; allow a wide margin.
    const n = r.cases[0].stats.n;
    assert.ok(n >= 60 && n <= 800, `n = ${n}`);
    assert.ok(Math.abs(r.cases[0].stats.median / 100 - 1) < 0.02);
    assert.ok(Math.abs(r.cases[1].stats.median / 120 - 1) < 0.02);
    const s = r.cases[0].stats;
    assert.ok(s.p10 < s.q1 && s.q1 < s.median && s.median < s.q3 && s.q3 < s.p90);
    assert.ok(Math.abs(s.sd / s.mean - 0.05) < 0.015);
  });

  it('drifting samples never settle: stops at the time cap and says why', async () => {
    // Every sample 0.1% slower than the one before: the spread grows faster than n.
    const fake = new FakeTimingBackend((_, k) => 50 * 1.001 ** k);
    const r = await timeArms(cases(2), { backend: fake, clock: fake.clock, progress: false, warmupMs: 1, roundsPerBatch: 50, maxTimeMs: 200, noiseMetric: 'iqr' });
    assert.equal(r.stop.reason, 'time-cap');
    assert.equal(r.stop.converged, false);
    assert.ok(r.stop.wallMs >= 200);
    assert.match(r.stop.detail, /time cap before the target: .*noise .*% > 1%/);
    assert.match(String(r[MIME_BUNDLE]().data['text/html']), /Not converged/);
  });

  it('stops at maxSamples when the target is out of reach', async () => {
    const fake = new FakeTimingBackend(noisy([100], 0.05));
    const r = await timeArms(cases(1), { backend: fake, clock: fake.clock, progress: false, warmupMs: 1, roundsPerBatch: 30, noiseTarget: 1e-6, maxSamples: 100 });
    assert.equal(r.stop.reason, 'max-samples');
    assert.equal(r.cases[0].stats.n, 100); // 30 + 30 + 30 + 10: the last batch is cut to the cap
    assert.deepEqual(
      fake.calls.slice(-4).map((c) => c.rounds),
      [30, 30, 30, 10],
    );
  });

  it('warm-up is spent by time budget and discarded; rounds per batch follow batchMs', async () => {
    // The first 10 samples of each case are slow (cold caches, clocks ramping): they must not count.
    const fake = new FakeTimingBackend((_, k) => (k < 10 ? 1000 : 10));
    const r = await timeArms(cases(2), { backend: fake, clock: fake.clock, progress: false, warmupMs: 30, batchMs: 1, minSamples: 30, minTimeMs: 0 });
    assert.ok(r.stop.warmupMs >= 30);
    assert.ok(r.stop.warmupRounds >= 15);
    assert.equal(r.cases[0].stats.max, 10);
    // Warm-up calls double their rounds: 1, 2, 4, 8, …
    assert.deepEqual(
      fake.calls.slice(0, 4).map((c) => c.rounds),
      [1, 2, 4, 8],
    );
    assert.ok(r.stop.roundsPerBatch >= 1);
  });

  it('interleaves every arm in one timeOps call per batch; cold flushes L2, hot does not', async () => {
    const fake = new FakeTimingBackend(() => 5);
    await timeArms(cases(3), { backend: fake, clock: fake.clock, progress: false, warmupMs: 0, roundsPerBatch: 10, minTimeMs: 0 });
    assert.ok(fake.calls.every((c) => c.labels.join() === 'arm0,arm1,arm2' && c.flushL2 && c.rotateOrder));
    const hot = new FakeTimingBackend(() => 5);
    const r = await timeArms(cases(2), { backend: hot, clock: hot.clock, progress: false, warmupMs: 0, roundsPerBatch: 10, minTimeMs: 0, mode: 'hot', rotateOrder: false });
    assert.ok(hot.calls.every((c) => !c.flushL2 && !c.rotateOrder));
    assert.equal(r.provenance.mode, 'hot');
  });

  it('puts provenance on every result', async () => {
    const fake = new FakeTimingBackend(() => 5);
    fake.onCall = () => (fake.smClock = 1755); // clocks drop during the run
    const r = await timeArms(cases(2), { backend: fake, clock: fake.clock, progress: false, warmupMs: 0, roundsPerBatch: 10, minTimeMs: 0, label: 'conv arms' });
    const p = r.provenance;
    assert.equal(p.backend, 'cuda');
    assert.equal(p.device, 'Fake H200');
    assert.equal(p.sm, '9.0');
    assert.equal(p.smClockMhz, 1980);
    assert.equal(p.clocksAfter.smClockMhz, 1755);
    assert.equal(p.memClockMhz, 3201);
    assert.equal(p.driver, '580.00.00');
    assert.equal(p.runtime, '13.0');
    assert.equal(typeof p.revision, 'string');
    assert.ok(p.revision.length > 0);
    assert.equal(p.arithmetic, ARITHMETIC_VERSION);
    assert.ok(r.provenanceLine().includes(`arithmetic v${ARITHMETIC_VERSION};`), r.provenanceLine());
    assert.ok(!Number.isNaN(Date.parse(p.time)));
    assert.match(p.runId, /^\d{8}T\d{6}Z-[0-9a-f]{6}$/);
    const c = r.get('arm1');
    assert.equal(c.runId, p.runId);
    assert.equal(c.provenance.arm, 'arm1');
    assert.deepEqual(c.provenance.shape, [64, 6144]);
    assert.equal(c.provenance.device, 'Fake H200');
    assert.match(r.provenanceLine(), /Fake H200 sm_90, SM 1980 MHz/);
    assert.match(r.toString(), /conv arms — timing: CUDA events around each launch, L2 flushed before each launch \(cold\)/);
    assert.throws(() => r.get('nope'), /no case 'nope'/);
  });

  it('aborts between batches on opts.signal and on the kernel interrupt, keeping what was measured', async () => {
    const fake = new FakeTimingBackend(() => 5);
    const ctl = new AbortController();
    fake.onCall = (i) => i === 3 && ctl.abort();
    await assert.rejects(
      timeArms(cases(2), { backend: fake, clock: fake.clock, progress: false, warmupMs: 0, roundsPerBatch: 10, noiseTarget: 0, minSamples: 1e6, signal: ctl.signal }),
      (e: unknown) => e instanceof TimingAborted && e.partial !== undefined && e.partial.cases[0].stats.n === 30,
    );
    const calls = fake.calls.length;
    assert.equal(calls, 4); // 1 warm-up + 3 batches, nothing after the abort

    const kctl = new AbortController();
    const shown: unknown[] = [];
    (globalThis as Record<symbol, unknown>)[KERNEL] = {
      display: (data: unknown, _m: unknown, o: unknown) => shown.push({ data, o }),
      clearOutput() {},
      signal: () => kctl.signal,
      executionCount: () => 1,
    };
    try {
      const k = new FakeTimingBackend(() => 5);
      k.onCall = (i) => i === 2 && kctl.abort();
      await assert.rejects(timeArms(cases(1), { backend: k, clock: k.clock, warmupMs: 0, roundsPerBatch: 10, noiseTarget: 0, minSamples: 1e6 }), TimingAborted);
      assert.equal(k.calls.length, 3);
      // Progress was shown in place and ended with a summary.
      assert.ok(shown.length >= 2);
      const last = shown[shown.length - 1] as { data: Record<string, string>; o: { update: boolean } };
      assert.equal(last.o.update, true);
      assert.match(last.data['text/plain'], /aborted/);
    } finally {
      delete (globalThis as Record<symbol, unknown>)[KERNEL];
    }
  });

  it('validates its arguments and the backend’s samples', async () => {
    const fake = new FakeTimingBackend(() => 5);
    const o = { backend: fake, clock: fake.clock, progress: false };
    await assert.rejects(timeArms([], o), /cases: expected a non-empty array/);
    await assert.rejects(timeArms([{ label: 'a', op: fakeOp('a') }, { label: 'a', op: fakeOp('a') }], o), /cases\[1\].label: 'a' is used twice/);
    await assert.rejects(timeArms([{ label: '', op: fakeOp('a') }], o), /cases\[0\].label/);
    await assert.rejects(timeArms([{ label: 'a', op: null as never }], o), /cases\[0\].op/);
    await assert.rejects(timeArms(cases(1), { ...o, mode: 'lukewarm' as never }), /mode: expected 'cold', 'hot' \(or 'warm'\) or 'both'/);
    await assert.rejects(timeArms(cases(1), { ...o, mode: 'cold', graphLaunches: 10 }), /mode: graph replay runs 10 launches back to back, so L2 is warm/);
    await assert.rejects(timeArms(cases(1), { ...o, graphLaunches: 1001 }), /graphLaunches: expected true or an integer in 1\.\.1000/);
    await assert.rejects(timeArms(cases(1), { ...o, minSamples: 2.5 }), /minSamples/);
    const broken = new FakeTimingBackend(() => NaN);
    await assert.rejects(timeArms(cases(1), { backend: broken, clock: broken.clock, progress: false }), /sample 0 is NaN/);
  });
});

describe('compare', () => {
  it('the same arm timed twice in one run is "same"', async () => {
    const fake = new FakeTimingBackend(noisy([100, 100], 0.03, 4));
    const r = await timeArms(cases(2), { backend: fake, clock: fake.clock, progress: false, warmupMs: 1, roundsPerBatch: 50, minSamples: 200, minTimeMs: 0, noiseTarget: 0.005 });
    const c = r.compare('arm0', 'arm1');
    assert.equal(c.verdict, 'same', c.toString());
    assert.equal(c.scope, 'within run');
    assert.equal(c.paired, true);
    assert.ok(c.ci[0] <= c.ratio && c.ratio <= c.ci[1]);
    assert.ok(c.ci[0] >= 1 / 1.02 && c.ci[1] <= 1.02);
  });

  it('a 10% slower arm is "slower" (and the other "faster") with its CI', async () => {
    const fake = new FakeTimingBackend(noisy([100, 110], 0.03, 5));
    const r = await timeArms(cases(2), { backend: fake, clock: fake.clock, progress: false, warmupMs: 1, roundsPerBatch: 50, minTimeMs: 0 });
    const slow = r.compare('arm1', 'arm0');
    assert.equal(slow.verdict, 'slower');
    assert.ok(slow.ci[0] > 1.05 && slow.ci[1] < 1.15, slow.toString());
    assert.match(slow.sentence(), /arm1 vs arm0: median ratio 1\.\d+ \(95% CI .*more time\) → slower \[within run\]/);
    assert.equal(r.compare('arm0', 'arm1').verdict, 'faster');
  });

  it('a few noisy samples of nearly equal arms are "unclear"', () => {
    const spread = [75, 80, 85, 90, 95, 100, 100, 105, 110, 115, 120, 125];
    const mk = (label: string, m: number) => {
      const samples = (m === 100 ? spread : [...spread].reverse()).map((v) => (v * m) / 100);
      return {
      label,
      base: label,
      l2: 'cold' as const,
      runId: 'run-1',
      opKind: 'copy',
      meta: {},
      samples,
      stats: summarize(samples),
      noise: 1,
      measuredMs: 0,
      provenance: {} as never,
      };
    };
    const c = compare(mk('a', 100), mk('b', 103));
    assert.equal(c.verdict, 'unclear', c.toString());
    assert.equal(c.note, undefined);
  });

  it('too few samples are always "unclear", whatever the interval says', () => {
    const mk = (label: string, samples: number[]) => ({ label, base: label, l2: 'cold' as const, runId: 'r', opKind: 'copy', meta: {}, samples, stats: summarize(samples), noise: 1, measuredMs: 0, provenance: {} as never });
    const c = compare(mk('a', [100, 100.5, 101]), mk('b', [200, 201, 202]));
    assert.ok(c.ci[0] < 0.6, 'the interval alone would say faster');
    assert.equal(c.verdict, 'unclear');
    assert.match(c.toString(), /only 3 samples in 'a': too few/);
  });

  it('refuses results of different runs unless asked, then labels them', async () => {
    const one = new FakeTimingBackend(() => 5);
    const two = new FakeTimingBackend(() => 5);
    const o = { progress: false, warmupMs: 0, roundsPerBatch: 10, minTimeMs: 0 };
    const r1 = await timeArms(cases(1), { ...o, backend: one, clock: one.clock });
    const r2 = await timeArms(cases(1), { ...o, backend: two, clock: two.clock });
    assert.notEqual(r1.runId, r2.runId);
    assert.throws(() => compare(r1.cases[0], r2.cases[0]), /from run .* and b .* from run .*acrossRuns: true/);
    const c = compare(r1.cases[0], r2.cases[0], { acrossRuns: true });
    assert.equal(c.scope, 'across runs');
    assert.equal(c.paired, false);
    assert.equal(c.verdict, 'same');
    assert.match(c.toString(), /across runs/);
    assert.match(String(c[MIME_BUNDLE]().data['text/html']), /Across runs/);
    assert.throws(() => compare(r1.cases[0], r1.cases[0], { band: 2 }), /band/);
  });

  it("mode 'both': cold and warm L2 in one run, side by side, each against the copy of its L2 state", async () => {
    const fake = new FakeTimingBackend((i) => [100, 50][i]);
    fake.warmFactor = 0.5;
    const cs = [
      { label: 'arm', op: fakeOp('arm'), meta: { arm: 'arm' } },
      { label: 'copy', op: { kind: 'copy' as const, args: { dst: 0, src: 0, bytes: 0 }, label: 'copy' }, meta: {} },
    ];
    cs[0].op = { ...cs[0].op, kind: 'conv' as never };
    const r = await timeArms(cs, { backend: fake, clock: fake.clock, progress: false, warmupMs: 0, roundsPerBatch: 10, minTimeMs: 0, mode: 'both' });
    assert.deepEqual(r.cases.map((c) => c.label), ['arm · cold L2', 'copy · cold L2', 'arm · warm L2', 'copy · warm L2']);
    assert.deepEqual(r.cases.map((c) => [c.base, c.l2]), [['arm', 'cold'], ['copy', 'cold'], ['arm', 'warm'], ['copy', 'warm']]);
    // Every batch is two timeOps calls, one flushed and one not, in alternating order.
    const flags = fake.calls.map((c) => c.flushL2);
    assert.ok(flags.filter((f) => f).length === flags.filter((f) => !f).length, `calls: ${flags}`);
    assert.equal(r.get('arm · cold L2').stats.median, 100);
    assert.equal(r.get('arm · warm L2').stats.median, 50);
    const rows = r.rows();
    assert.equal(rows.length, 2);
    assert.equal(rows[0]['cold median µs'], 100);
    assert.equal(rows[0]['warm median µs'], 50);
    assert.equal(rows[0]['cold ÷ warm'], 2);
    assert.equal(rows[0]['cold % of copy roofline'], 50);
    assert.equal(rows[0]['warm % of copy roofline'], 50);
    const text = r.toString();
    assert.match(text, /cold L2 \(flushed before each launch\) and warm L2 \(not flushed\)/);
    assert.match(text, /100\.0 µs/);
    assert.match(text, / 50% /);
  });

  it('graph replay: asks the backend for G launches per sample and labels the method', async () => {
    const fake = new FakeTimingBackend(() => 3);
    const r = await timeArms(cases(1), { backend: fake, clock: fake.clock, progress: false, warmupMs: 0, roundsPerBatch: 10, minTimeMs: 0, graphLaunches: 50 });
    assert.ok(fake.calls.every((c) => c.graphLaunches === 50 && !c.flushL2));
    assert.equal(r.settings.mode, 'hot');
    assert.match(r.provenance.method, /^CUDA-graph replay: each sample is one replay of 50 back-to-back launches ÷ 50 \(launch overhead removed\), L2 warm, the host ahead of the GPU$/);
    assert.match(r.toString(), /CUDA-graph replay/);
    assert.match(String(r[MIME_BUNDLE]().data['text/html']), /CUDA-graph replay/);
  });

  it('exports every raw sample as JSON and CSV, with % of the copy roofline', async () => {
    const fake = new FakeTimingBackend((i, k) => [200, 100][i] + (k % 3));
    const cs = [
      { label: 'arm, "quoted"', op: { ...fakeOp('a'), kind: 'conv' as never }, meta: { T: 8 } },
      { label: 'copy', op: fakeOp('copy'), meta: {} },
    ];
    const r = await timeArms(cs, { backend: fake, clock: fake.clock, progress: false, warmupMs: 0, roundsPerBatch: 10, minTimeMs: 0, minSamples: 30 });
    const j = JSON.parse(JSON.stringify(r));
    assert.equal(j.format, 'gdnlab-timing/1');
    assert.equal(j.cases[0].samplesUs.length, r.cases[0].samples.length);
    assert.deepEqual(j.cases[0].samplesUs, r.cases[0].samples);
    assert.ok(Math.abs(j.cases[0].percentOfCopy - (100 * r.cases[1].stats.median) / r.cases[0].stats.median) < 1e-9);
    assert.equal(j.provenance.runId, r.runId);
    const csv = r.samplesCsv().trimEnd().split('\n');
    assert.match(csv[0], /^# gdnlab timing run /);
    assert.equal(csv[2], 'case,l2,op,sample,us');
    assert.equal(csv.length, 3 + r.cases[0].samples.length + r.cases[1].samples.length);
    assert.equal(csv[3], `"arm, ""quoted""",cold,conv,0,${r.cases[0].samples[0]}`);
    const row = r.rows()[0];
    assert.ok(Math.abs((row['% of copy roofline'] as number) - 50.2) < 1, String(row['% of copy roofline']));
    assert.match(String(r[MIME_BUNDLE]().data['text/html']), /<th>% of copy roofline<\/th>/);
    const os = await import('os');
    const path = await import('path');
    const fs = await import('fs');
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gdnlab-timing-export-'));
    try {
      assert.deepEqual(JSON.parse(fs.readFileSync(r.save(path.join(dir, 'r.json')), 'utf8')).cases[1].samplesUs, r.cases[1].samples);
      assert.equal(fs.readFileSync(r.save(path.join(dir, 'r.csv')), 'utf8'), r.samplesCsv());
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
