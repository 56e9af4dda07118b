import { strict as assert } from 'assert';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { Tensor } from '../../lib/tensor';
import { Rng } from '../../lib/random';
import { diff } from '../../lib/analysis/diff';
import { convCoordinates } from '../../lib/analysis/coordinates';
import { timeArms } from '../../lib/analysis/timing';
import { MismatchMap } from '../../lib/analysis/mismatch-map';
import { Figure, PLOTLY_MIME, capSamples, coarsenMap, plotMismatchMap, plotTiming, plotUlpHistogram, plotlyBundlePath, standaloneHtml } from '../../lib/analysis/plot';
import { MIME_BUNDLE } from '../../lib/view/display';
import { FakeTimingBackend, fakeOp } from '../analysis/fake-backend';
import { withKernel } from './fake-kernel';
import { parseXml } from './xml';

async function timing(arms = 3, perArm = 2000) {
  const rngs = Array.from({ length: arms }, (_, i) => new Rng(i + 1));
  const fake = new FakeTimingBackend((i) => (100 + 10 * i) * (1 + 0.03 * rngs[i].normal()));
  return timeArms(
    Array.from({ length: arms }, (_, i) => ({ label: `arm ${i}`, op: fakeOp(`arm ${i}`), meta: { arm: `arm ${i}` } })),
    { backend: fake, clock: fake.clock, progress: false, warmupMs: 0, roundsPerBatch: perArm, minTimeMs: 0, label: 'demo' },
  );
}

function conflictDiff() {
  const T = 256;
  const C = 1024;
  const a = Tensor.random([T, C], 'f32', { seed: 2 });
  const v = a.toFloat32().slice();
  const rng = new Rng(4);
  for (let i = 0; i < v.length; i++) if (rng.uniform() < 0.2) v[i] = v[i] * (1 + 2 ** -22);
  return diff(Tensor.from(v, [T, C]), a, { coordinates: convCoordinates([0, 100, 256]), label: 'mutant vs reference' });
}

describe('plots', () => {
  it('timing violins: capped samples, categories per arm, both outputs in a kernel', async () => {
    const r = await timing();
    const { value: fig, outputs } = await withKernel(() => plotTiming(r));
    assert.ok(fig instanceof Figure);
    assert.equal(fig.data.length, 3);
    for (const t of fig.data) {
      assert.equal(t.type, 'violin');
      assert.ok((t as { x: number[] }).x.length <= 300);
    }
    // ONE display_data: plotly JSON (no plotly.js inside), a PNG made offline, the SVG, a text summary.
    assert.equal(outputs.length, 1);
    const out = outputs[0].data;
    assert.deepEqual(Object.keys(out), [PLOTLY_MIME, 'image/png', 'image/svg+xml', 'text/plain']);
    const spec = out[PLOTLY_MIME] as { data: unknown[]; layout: { title: { text: string } }; config: Record<string, unknown> };
    assert.deepEqual(Object.keys(spec).sort(), ['config', 'data', 'layout']);
    assert.equal(spec.layout.title.text, 'demo — 3 arms');
    assert.ok(!JSON.stringify(out).includes('Plotly.newPlot'), 'no plotly.js in the notebook output');
    parseXml(String(out['image/svg+xml']));
    const png = Buffer.from(String(out['image/png']), 'base64');
    assert.equal(png.subarray(1, 4).toString('latin1'), 'PNG', 'a real PNG');
    const meta = outputs[0].metadata?.['image/png'] as { width: number; height: number };
    assert.equal(png.readUInt32BE(16), meta.width, 'PNG width in the metadata');
    assert.equal(png.readUInt32BE(20), meta.height);
    assert.match(String(out['text/plain']), /^Figure "demo — 3 arms" \(3 traces: /);
    assert.doesNotMatch(String(out['text/plain']), /shown above|next output/);
    // As a cell's last value the figure adds nothing (null: no execute_result).
    assert.equal(fig[MIME_BUNDLE](), null);
    // Compact: 3 arms × 6000 samples → the one output (JSON + PNG + SVG) well under 100 kB, the PNG under 60 kB.
    assert.ok(fig.outputBytes() < 100_000, `${fig.outputBytes()} bytes`);
    assert.ok(String(out["image/png"]).length < 60_000, `PNG ${String(out['image/png']).length} base64 bytes`);
  });

  it('timing box and histogram kinds, log axis, and no kernel → just the figure', async () => {
    const r = await timing(2, 500);
    const box = plotTiming(r, { kind: 'box' });
    assert.equal(box.data[0].type, 'box');
    const b = box.data[0] as { q1: number[]; median: number[]; q3: number[]; lowerfence: number[]; upperfence: number[] };
    const s = r.cases[0].stats;
    assert.ok(Math.abs(b.median[0] - s.median) / s.median < 1e-4);
    assert.ok(b.lowerfence[0] >= s.min && b.upperfence[0] <= s.max);
    const hist = plotTiming(r, { kind: 'histogram', logX: true, bins: 30 });
    assert.equal(hist.layout.xaxis?.type, 'log');
    const h = hist.data[0] as { x: number[]; y: number[] };
    assert.equal(h.x.length, 31);
    assert.ok(Math.abs(h.y.slice(0, 30).reduce((a, c) => a + c, 0) - 1) < 1e-3, 'fractions sum to 1');
    parseXml(hist.svg());
    // Outside a kernel: nothing displayed, the bundle carries every rendering.
    const bundle = box[MIME_BUNDLE]()!;
    assert.ok(bundle.data[PLOTLY_MIME] && bundle.data['image/svg+xml'] && bundle.data['image/png']);
    assert.equal(box.show(), false);
    assert.throws(() => plotTiming(r, { kind: 'pie' as never }), /kind: expected 'violin', 'box' or 'histogram'/);
    assert.throws(() => plotTiming({} as never), /result: expected a TimingResult/);
  });

  it('capSamples keeps evenly spaced quantiles', () => {
    const x = Array.from({ length: 1000 }, (_, i) => i);
    const c = capSamples(x, 10);
    assert.equal(c.length, 10);
    c.forEach((v, k) => assert.ok(Math.abs(v - (999 * (k + 0.5)) / 10) < 0.1, `quantile ${k}: ${v}`));
    assert.deepEqual(capSamples([3, 1, 2], 10), [1, 2, 3]);
  });

  it('ulp histogram: buckets as categories, classes appended, several diffs grouped', () => {
    const d = conflictDiff();
    const fig = plotUlpHistogram(d, { show: false });
    const bar = fig.data[0] as { x: string[]; y: number[] };
    assert.equal(bar.x[0], '0');
    assert.equal(
      bar.y.reduce((a, b) => a + b, 0),
      d.numel,
    );
    assert.equal(fig.layout.yaxis?.type, 'log');
    const nan = diff(Tensor.from([NaN, 1], [2]), Tensor.from([1, 1], [2]));
    const two = plotUlpHistogram([d, { name: 'with NaN', histogram: nan.histogram }]);
    assert.equal(two.data.length, 2);
    assert.ok((two.data[0] as { x: string[] }).x.includes('NaN≠number'));
    parseXml(two.svg());
    assert.throws(() => plotUlpHistogram([{}] as never), /histograms\[0\]/);
  });

  it('mismatch heat map over (token, channel), coarsened, with exact fractions', () => {
    const d = conflictDiff();
    const fig = plotMismatchMap(d, { show: false });
    const t = fig.data[0] as { x: number[]; y: number[]; z: number[][] };
    // The diff's 64 × 128 map, merged by whole 2 × 2 groups to fit 40 × 80.
    assert.equal(t.z.length, 32);
    assert.equal(t.z[0].length, 64);
    assert.equal(t.x.length, 65);
    assert.equal(t.x[64], 1024);
    assert.equal(t.y[32], 256);
    assert.equal(t.y[1] - t.y[0], 8);
    assert.equal(fig.layout.yaxis?.autorange, 'reversed');
    assert.match(fig.layout.xaxis?.title?.text ?? '', /^channel/);
    // Fractions × cell sizes give back the exact mismatch count.
    let recovered = 0;
    t.z.forEach((row, i) => row.forEach((z, j) => (recovered += Math.round(z * (t.y[i + 1] - t.y[i]) * (t.x[j + 1] - t.x[j])))));
    assert.equal(recovered, d.mismatches);
    // Every fraction is near the planted 20%.
    const all = t.z.flat();
    assert.ok(all.every((z) => z > 0.05 && z < 0.4));
    parseXml(fig.svg());
    assert.ok(fig.outputBytes() < 120000, `${fig.outputBytes()} bytes`);
    assert.throws(() => plotMismatchMap(diff(Tensor.zeros([2, 2]), Tensor.zeros([2, 2]), { map: false })), /no mismatch map/);
  });

  it('coarsenMap sums counts and keeps edges consistent', () => {
    const map: MismatchMap = { axes: ['r', 'c'], rows: 6, cols: 6, rowEdges: [0, 2, 4, 6], colEdges: [0, 3, 6], counts: [[1, 2], [3, 4], [5, 6]], total: 21 };
    const m = coarsenMap(map, 2, 1);
    assert.deepEqual(m.rowEdges, [0, 4, 6]);
    assert.deepEqual(m.colEdges, [0, 6]);
    assert.deepEqual(m.counts, [[10], [11]]);
    assert.equal(coarsenMap(map, 3, 2), map);
    const five = coarsenMap({ ...map, rows: 10, rowEdges: [0, 2, 4, 6, 8, 10], counts: [[1, 0], [1, 0], [1, 0], [1, 0], [1, 0]] }, 2, 2);
    assert.deepEqual(five.rowEdges, [0, 6, 10]);
    assert.deepEqual(five.counts, [[3, 0], [2, 0]]);
  });

  it('a notebook with several plots stays well under 1 MB', async () => {
    const r = await timing(4, 3000);
    const d = conflictDiff();
    const figs = [plotTiming(r, { show: false }), plotTiming(r, { kind: 'histogram', show: false }), plotTiming(r, { kind: 'box', show: false }), plotUlpHistogram(d, { show: false }), plotMismatchMap(d, { show: false })];
    const total = figs.reduce((n, f) => n + f.outputBytes(), 0);
    assert.ok(total < 300000, `${total} bytes for ${figs.length} plots`);
  });

  it('standaloneHtml embeds plotly.js once and every figure with an SVG fallback', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gdnlab-plot-'));
    const fakePlotly = path.join(dir, 'plotly.min.js');
    fs.writeFileSync(fakePlotly, '/* plotly stand-in */ window.Plotly={newPlot:function(){}}; var s="</script>";');
    const r = await timing(2, 200);
    const figs = [plotTiming(r, { show: false }), plotUlpHistogram(conflictDiff(), { show: false })];
    const html = standaloneHtml(figs, { title: 'PR #12: conv arms', provenanceHeader: { revision: 'abc1234', backend: 'host', date: '2025-01-01' }, plotlyPath: fakePlotly });
    assert.equal(html.split('plotly stand-in').length - 1, 1);
    assert.equal((html.match(/Plotly\.newPlot\('gdnlab-fig-\d'/g) ?? []).length, 2);
    assert.equal((html.match(/<noscript><svg/g) ?? []).length, 2);
    assert.match(html, /<th>revision<\/th><td>abc1234<\/td>/);
    assert.match(html, /<title>PR #12: conv arms<\/title>/);
    assert.ok(!/var s="<\/script>"/.test(html), 'a </script> inside the bundle is escaped');
    assert.throws(() => standaloneHtml([{ nope: 1 }] as never, { plotlyPath: fakePlotly }), /figures\[0\]/);
    fs.rmSync(dir, { recursive: true });
    // The default bundle is found in node_modules.
    assert.ok(fs.existsSync(plotlyBundlePath()));
  });
});
