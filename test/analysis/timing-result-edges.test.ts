// lib/analysis/timing.ts's TimingResult (lines 342-571: the table rows, column formats, text, HTML, bits warnings,
// JSON, CSV and save) on a result built by hand from made-up cases (no timing loop), so that Stryker can take that
// part in: every row field in both modes, with and without a copy roofline and bit checks, meta flattened,
// formats of each column kind, the caption, stop and provenance lines, warnings once per base, and save's checks.

import { strict as assert } from 'assert';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { CaseTiming, RunProvenance, StopInfo, TimingResult, TimingSettings } from '../../lib/analysis/timing';
import { summarize } from '../../lib/analysis/stats';
import { MIME_BUNDLE } from '../../lib/view/display';

const prov: RunProvenance = {
  runId: 'R1', time: 'T0', backend: 'cuda', device: 'GPU', sm: '9.0', smCount: 1, l2Bytes: 1, smClockMhz: 1980, memClockMhz: 2619,
  maxSmClockMhz: 1, maxMemClockMhz: 1, clocksSource: 'nvml', clocksAfter: { smClockMhz: 1900, memClockMhz: 2600 }, driver: '580', runtime: '13.0',
  revision: 'abc', arithmetic: 3, host: 'h', node: 'v20', mode: 'cold', rotateOrder: true, graphLaunches: 0, method: 'events',
};
const stop: StopInfo = { reason: 'noise-target', detail: 'all met', converged: true, batches: 2, rounds: 6, roundsPerBatch: 3, warmupRounds: 4, wallMs: 1500, warmupMs: 250 } as StopInfo;
const settings = (mode: TimingSettings['mode']): TimingSettings => ({ mode, graphLaunches: 0, rotateOrder: true, warmupMs: 1, minSamples: 1, minTimeMs: 1, noiseTarget: 0.01, noiseMetric: 'ci', maxTimeMs: 1, maxSamples: 1 });

function tc(label: string, samples: number[], extra: Partial<CaseTiming> = {}): CaseTiming {
  return { label, runId: 'R1', opKind: 'conv', meta: {}, samples, stats: summarize(samples), noise: 0.02, measuredMs: 0.01, provenance: prov as CaseTiming['provenance'], ...extra };
}

describe('TimingResult at its edges', () => {
  it('one L2 state: rows with the roofline, bits and meta; formats; text', () => {
    const copy = tc('copy', [2, 2, 2], { opKind: 'copy', meta: { bytes: 10 } });
    const arm = tc('arm', [4, 4, 4], { meta: { T: 3, shape: [2, 3], opt: { a: 1 }, none: null, gone: undefined }, bits: { arm: 'arm', reference: 'scalar', mismatches: 0, planted: false } });
    const bad = tc('bad', [8, 8, 8], { bits: { arm: 'bad/x', reference: 'scalar', mismatches: 1234, planted: false } });
    const planted = tc('mut', [1, 1, 1], { bits: { arm: 'mut', reference: 'scalar', mismatches: 5, planted: true } });
    const r = new TimingResult('L', [copy, arm, bad, planted], prov, stop, settings('cold'));
    const rows = r.rows();
    assert.deepEqual(rows[1], {
      case: 'arm', bits: '= scalar', T: 3, shape: '[2, 3]', opt: '{"a":1}', 'median µs': 4, 'IQR µs': 0, 'p10 µs': 4, 'p90 µs': 4, 'min µs': 4, 'mean µs': 4, 'sd µs': 0,
      '× copy': 2, '% of copy roofline': 50, n: 3, noise: 0.02,
    });
    assert.equal(rows[0].bits, 'not checked');
    assert.equal(rows[0].bytes, 10);
    assert.equal(rows[2].bits, 'DIFFERS: 1234 ≠ scalar');
    assert.equal(rows[3].bits, 'planted: 5 ≠ scalar');
    assert.deepEqual(Object.keys(rows[2]), ['case', 'bits', 'median µs', 'IQR µs', 'p10 µs', 'p90 µs', 'min µs', 'mean µs', 'sd µs', '× copy', '% of copy roofline', 'n', 'noise']);
    assert.equal(r.get('bad'), bad);
    assert.throws(() => r.get('x'), (e: unknown) => e instanceof RangeError && e.message === "label: no case 'x' in this run (cases: 'copy', 'arm', 'bad', 'mut')");
    assert.equal(r.copyCase('cold'), copy);
    assert.equal(r.copyCase('warm'), undefined);
    const f = r.columnFormats() as Record<string, (v: unknown) => string>;
    assert.equal(f.noise(0.02), '2%');
    assert.equal(f.noise('x'), '');
    assert.equal(f['median µs'](1500), '1.500 ms');
    assert.equal(f['median µs']('x'), '');
    assert.equal(f['% of copy roofline'](50), '50%');
    assert.equal(f['% of copy roofline'](undefined), '—');
    assert.equal(f['× copy'](2), '2×');
    assert.equal(f['× copy'](undefined), '—');
    assert.equal(f.case, undefined);
    assert.equal(f.bits, undefined);
    assert.deepEqual(r.bitsWarnings(), ["'bad' (bad/x): 1234 elements differ from scalar at these inputs; its time is not that of a correct arm"]);
    const text = r.toString().split('\n');
    assert.equal(text[0], 'L — timing: events');
    assert.ok(text[1].startsWith('case  bits '), text[1]);
    assert.ok(text[1].includes(' median '), text[1]);
    assert.ok(!text[1].includes('µs'), 'the unit is in the cells');
    assert.equal(text.at(-3), "BITS DIFFER: 'bad' (bad/x): 1234 elements differ from scalar at these inputs; its time is not that of a correct arm");
    assert.equal(text.at(-2), 'stopped by noise-target: all met — 2 batches × 3 rounds, 1.5 s after 4 warm-up rounds (0.25 s)');
    assert.equal(text.at(-1), 'cuda: GPU sm_90, SM 1980 MHz, mem 2619 MHz (nvml; after: 1900/2600), driver 580, runtime 13.0; revision abc, arithmetic v3; cold, rotated order; T0; run R1');
    assert.equal(r.provenanceLine(), text.at(-1));
    const html = (r[MIME_BUNDLE]().data as Record<string, string>)['text/html'];
    assert.ok(html.startsWith('<div class="gdnlab-timing">\n<table'));
    assert.ok(html.includes("<p style=\"color:#b42318\"><b>Bits differ:</b> &#39;bad&#39; (bad/x): 1234 elements differ") || html.includes("<p style=\"color:#b42318\"><b>Bits differ:</b> 'bad' (bad/x): 1234 elements differ"), html);
    assert.ok(!html.includes('Not converged'));
    assert.ok(html.endsWith('<p style="font-size:smaller">stopped by noise-target: all met — 2 batches × 3 rounds, 1.5 s after 4 warm-up rounds (0.25 s)<br>cuda: GPU sm_90, SM 1980 MHz, mem 2619 MHz (nvml; after: 1900/2600), driver 580, runtime 13.0; revision abc, arithmetic v3; cold, rotated order; T0; run R1</p>\n</div>'), html);
    assert.ok(html.includes('<th>median</th>'));
    assert.ok(html.includes('4.000 µs'), html);
  });

  it('no copy and no checks: neither roofline nor bits columns; a bare host provenance; not converged', () => {
    const a = tc('a', [1, 3]);
    const r = new TimingResult(undefined, [a], { ...prov, sm: '', smClockMhz: 0, driver: '', runtime: '', rotateOrder: false, backend: 'host', device: 'cpu' }, { ...stop, converged: false, detail: 'cap <1>' }, settings('cold'));
    assert.deepEqual(Object.keys(r.rows()[0]), ['case', 'median µs', 'IQR µs', 'p10 µs', 'p90 µs', 'min µs', 'mean µs', 'sd µs', 'n', 'noise']);
    assert.equal(r.provenanceLine(), 'host: cpu; revision abc, arithmetic v3; cold; T0; run R1');
    assert.equal(r.toString().split('\n')[0], 'timing: events');
    assert.deepEqual(r.bitsWarnings(), []);
    const html = (r[MIME_BUNDLE]().data as Record<string, string>)['text/html'];
    assert.ok(html.includes('<p style="color:#b42318"><b>Not converged:</b> cap &lt;1&gt;</p>'), html);
    assert.deepEqual(Object.keys(new TimingResult(undefined, [], prov, stop, settings('cold')).columnFormats()), ['noise']);
    // Two copies of one L2 state: no roofline (which would it be?).
    const two = new TimingResult(undefined, [tc('c1', [1], { opKind: 'copy' }), tc('c2', [1], { opKind: 'copy' }), a], prov, stop, settings('cold'));
    assert.equal(two.copyCase('cold'), undefined);
    assert.equal(two.percentOfCopy(a), undefined);
    assert.ok(!('× copy' in two.rows()[2]));
  });

  it("mode 'both': one row per base with cold and warm side by side, each against its own copy", () => {
    const cc = tc('copy · cold L2', [4, 4], { base: 'copy', l2: 'cold', opKind: 'copy' });
    const cw = tc('copy · warm L2', [1, 1], { base: 'copy', l2: 'warm', opKind: 'copy' });
    const ac = tc('arm · cold L2', [8, 8], { base: 'arm', l2: 'cold', noise: 0.01, bits: { arm: 'arm', reference: 'tree', mismatches: 3, planted: false } });
    const aw = tc('arm · warm L2', [2, 2, 2], { base: 'arm', l2: 'warm', noise: 0.05, bits: { arm: 'arm', reference: 'tree', mismatches: 3, planted: false }, meta: { x: 1 } });
    const r = new TimingResult('B', [cc, cw, ac, aw], prov, stop, settings('both'));
    const rows = r.rows();
    assert.equal(rows.length, 2);
    assert.deepEqual(rows[1], {
      case: 'arm', bits: 'DIFFERS: 3 ≠ tree', 'cold median µs': 8, 'cold p10 µs': 8, 'cold p90 µs': 8, 'warm median µs': 2, 'warm p10 µs': 2, 'warm p90 µs': 2,
      'cold ÷ warm': 4, 'cold % of copy roofline': 50, 'warm % of copy roofline': 50, n: 2, noise: 0.05,
    });
    assert.equal(rows[0].bits, 'not checked');
    const f = r.columnFormats() as Record<string, (v: unknown) => string>;
    assert.equal(f['cold ÷ warm'](4.5), '4.5×');
    assert.equal(f['cold ÷ warm']('x'), '—');
    assert.equal(f['warm % of copy roofline'](50), '50%');
    assert.equal(f['warm p90 µs'](2), '2.000 µs');
    assert.deepEqual(r.bitsWarnings(), ["'arm' (arm): 3 elements differ from tree at these inputs; its time is not that of a correct arm"]);
    assert.equal(r.percentOfCopy(aw), 50);
    assert.equal(r.percentOfCopy(tc('plain', [2])), 200, 'a case without l2 is cold: the cold copy (4) over its median (2)');
    // Without copies: no roofline columns.
    const bare = new TimingResult(undefined, [ac, aw], prov, stop, settings('both'));
    assert.ok(!('cold % of copy roofline' in bare.rows()[0]));
    // Warm L2 only (mode 'hot'): the warm copy is the roofline.
    const hot = new TimingResult(undefined, [cw, tc('h', [2], { l2: 'warm' })], prov, stop, settings('hot'));
    assert.deepEqual([hot.rows()[1]['× copy'], hot.rows()[1]['% of copy roofline']], [2, 50]);
  });

  it('JSON, CSV with quoting, and save with its check', () => {
    const a = tc('a,"b"', [1.5, 2], { base: undefined, meta: { k: 1 } });
    const w = tc('w', [3], { base: 'wb', l2: 'warm', opKind: 'copy', bits: { arm: 'w', reference: 'r', mismatches: 0, planted: false } });
    const r = new TimingResult('J', [a, w], prov, stop, settings('cold'));
    const j = r.toJSON();
    assert.equal(j.format, 'gdnlab-timing/1');
    assert.deepEqual([j.label, j.runId, j.provenance, j.settings, j.stop], ['J', 'R1', prov, settings('cold'), stop]);
    assert.deepEqual(j.cases[0], { label: 'a,"b"', base: 'a,"b"', l2: 'cold', opKind: 'conv', meta: { k: 1 }, stats: a.stats, noise: 0.02, measuredMs: 0.01, percentOfCopy: undefined, samplesUs: [1.5, 2] });
    assert.deepEqual(j.cases[1].bits, w.bits);
    assert.equal(j.cases[1].base, 'wb');
    assert.equal(j.cases[1].l2, 'warm');
    assert.equal(j.cases[1].percentOfCopy, 100);
    assert.ok(!('bits' in j.cases[0]));
    assert.equal(r.samplesCsv(), [
      `# gdnlab timing run R1: ${r.provenanceLine()}`, '# events', 'case,l2,op,sample,us',
      '"a,""b""",cold,conv,0,1.5', '"a,""b""",cold,conv,1,2', 'wb,warm,copy,0,3', '',
    ].join('\n'));
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gdnlab-timing-'));
    try {
      const csv = r.save(path.join(dir, 'sub', 'x.CSV'));
      assert.equal(fs.readFileSync(csv, 'utf8'), r.samplesCsv());
      const json = r.save(path.join(dir, 'x.json'));
      assert.equal(fs.readFileSync(json, 'utf8'), JSON.stringify(r.toJSON(), null, 1) + '\n');
      for (const bad of ['', 5, undefined]) assert.throws(() => r.save(bad as never), (e: unknown) => e instanceof TypeError && e.message === 'file: expected a path ending in .json or .csv');
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
    const plain = tc('p', [1]);
    assert.equal(new TimingResult(undefined, [plain], prov, stop, settings('cold')).samplesCsv().split('\n')[3], 'p,cold,conv,0,1');
  });

  it('bits warnings: once per base, with the first mismatch located; planted and identical ones silent', () => {
    const first = { output: 'out', index: 7, coords: { token: 1, channel: 3 }, actual: 0.5, expected: 0.25, actualBits: '0x3f00', expectedBits: '0x3e80' };
    const c1 = tc('x · cold L2', [1], { base: 'x', l2: 'cold', bits: { arm: 'x', reference: 'ref', mismatches: 2, planted: false, firstMismatch: first } });
    const c2 = tc('x · warm L2', [1], { base: 'x', l2: 'warm', bits: { arm: 'x', reference: 'ref', mismatches: 2, planted: false, firstMismatch: first } });
    const r = new TimingResult(undefined, [c1, c2], prov, stop, settings('both'));
    assert.deepEqual(r.bitsWarnings(), ["'x' (x): 2 elements differ from ref at these inputs, first out (token 1, channel 3): 0.5 (0x3f00) vs 0.25 (0x3e80); its time is not that of a correct arm"]);
  });
});
