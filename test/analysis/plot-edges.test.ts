// lib/analysis/plot.ts at its edges, outside a kernel (nothing is displayed), so that Stryker can mutate it:
// the Figure's checks, title, config, summary and bundle; capSamples; plotTiming's checks with their
// messages, its axis, titles, names, provenance line, histogram bins, violins and box fences worked by
// hand; the ulp histogram's categories and titles; coarsenMap and the heat map's cells and titles; and
// the standalone page with a stand-in plotly bundle.

import { strict as assert } from 'assert';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { Figure, PLOTLY_MIME, capSamples, coarsenMap, plotMismatchMap, plotTiming, plotUlpHistogram, plotlyBundlePath, standaloneHtml } from '../../lib/analysis/plot';
import { MismatchMap } from '../../lib/analysis/mismatch-map';
import { UlpHistogramBuilder } from '../../lib/analysis/ulp-histogram';
import { summarize } from '../../lib/analysis/stats';
import { paletteColor, withAlpha } from '../../lib/view/figure';
import * as png from '../../lib/view/png';
import { pngUnavailable } from '../../lib/view/png';
import { MIME_BUNDLE } from '../../lib/view/display';
import { withKernel } from '../view/fake-kernel';

const off = { show: false };
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Any = any;
const msg = (text: string, type: Function = RangeError) => (e: unknown) => e instanceof type && (e as Error).message === text;

/** A timed case as timeArms makes it, with only what the plots read. */
function timed(label: string, samples: number[], extra: Record<string, unknown> = {}): Any {
  return { label, samples, stats: summarize(samples), opKind: 'conv', provenance: undefined, ...extra };
}

describe('plot at its edges', () => {
  it('Figure: its check, title, config, JSON, text and bundle', () => {
    for (const bad of [null, {}, { data: 1, layout: {} }, { data: [] }]) {
      assert.throws(() => new Figure(bad as never), (e: unknown) => e instanceof TypeError && e.message.startsWith('figure: expected { data: [...], layout: {...} }, got '));
    }
    const f = new Figure({ data: [], layout: {} });
    assert.equal(f.title, 'figure');
    assert.deepEqual(f.config, { displaylogo: false, responsive: true });
    const g = new Figure({ data: [{ type: 'bar', name: 'a', x: ['p'], y: [2] } as Any], layout: { title: { text: 'T' } }, config: { responsive: false, x: 1 } });
    assert.equal(g.title, 'T');
    assert.deepEqual(g.config, { displaylogo: false, responsive: false, x: 1 });
    assert.deepEqual(g.toJSON(), { data: g.data, layout: g.layout, config: g.config });
    assert.equal(g.toString(), 'Figure: T (1 traces)');
    const why = pngUnavailable();
    const tail = why ? ` [no PNG: ${why}]` : '';
    assert.equal(g.summary(), `Figure "T" (1 trace: a)${tail}`);
    assert.equal(f.summary(), `Figure "figure" (0 traces)${tail}`);
    const nine = new Figure({ data: Array.from({ length: 9 }, (_, i) => ({ type: 'bar', name: `t${i}`, x: [i], y: [i] }) as Any).concat([{ type: 'bar', x: [1], y: [1] }]), layout: {} });
    assert.equal(nine.summary(), `Figure "figure" (10 traces: t0, t1, t2, t3, t4, t5, t6, t7, … (9 in all))${tail}`);
    const eight = new Figure({ data: Array.from({ length: 8 }, (_, i) => ({ type: 'bar', name: `t${i}`, x: [i], y: [i] }) as Any), layout: {} });
    assert.equal(eight.summary(), `Figure "figure" (8 traces: t0, t1, t2, t3, t4, t5, t6, t7)${tail}`);
    const b = g.bundle();
    assert.deepEqual(Object.keys(b.data), why ? [PLOTLY_MIME, 'image/svg+xml', 'text/plain'] : [PLOTLY_MIME, 'image/png', 'image/svg+xml', 'text/plain']);
    assert.deepEqual(b.data[PLOTLY_MIME], g.toJSON());
    assert.equal(b.data['image/svg+xml'], g.svg());
    assert.ok(g.svg().startsWith('<svg'));
    assert.equal(b.data['text/plain'], g.summary());
    if (!why) {
      assert.equal(b.data['image/png'], g.pngBase64());
      const meta = (b.metadata as Any)['image/png'];
      assert.ok(Number.isInteger(meta.width) && meta.width > 0 && Number.isInteger(meta.height) && meta.height > 0);
    }
    assert.equal(g.outputBytes(), Buffer.byteLength(JSON.stringify(b.data)));
    // Outside a kernel nothing is shown: show() says so, and the bundle comes every time.
    assert.equal(g.show(), false);
    assert.deepEqual(g[MIME_BUNDLE](), b);
    assert.deepEqual(g[MIME_BUNDLE](), b);
  });

  it('the PNG through a stand-in png module: rendered once and cached; left out with the reason where resvg is missing', () => {
    const saved = { pngUnavailable: png.pngUnavailable, svgToPng: png.svgToPng };
    const mod = png as Any;
    try {
      let calls = 0;
      mod.pngUnavailable = () => undefined;
      mod.svgToPng = () => (calls++, { png: Buffer.from('png!'), width: 3, height: 4 });
      const f = new Figure({ data: [], layout: {} });
      const b = f.bundle();
      assert.equal(b.data['image/png'], Buffer.from('png!').toString('base64'));
      assert.deepEqual(b.metadata, { 'image/png': { width: 3, height: 4 } });
      f.bundle();
      assert.equal(f.pngBase64(), Buffer.from('png!').toString('base64'));
      assert.equal(calls, 1);
      mod.pngUnavailable = () => 'stand-in: no resvg';
      mod.svgToPng = () => {
        throw new Error('svgToPng called without resvg');
      };
      const g = new Figure({ data: [], layout: {} });
      assert.equal(g.pngBase64(), undefined);
      const c = g.bundle();
      assert.deepEqual(Object.keys(c.data), [PLOTLY_MIME, 'image/svg+xml', 'text/plain']);
      assert.deepEqual(c.metadata, {});
      assert.equal(g.summary(), 'Figure "figure" (0 traces) [no PNG: stand-in: no resvg]');
    } finally {
      mod.pngUnavailable = saved.pngUnavailable;
      mod.svgToPng = saved.svgToPng;
    }
  });

  it('in a kernel: show() displays once and says so; a shown figure as the last value adds nothing', async () => {
    const f = new Figure({ data: [], layout: {} });
    const { value, outputs } = await withKernel(() => [f.show(), f[MIME_BUNDLE]()]);
    assert.deepEqual(value, [true, null]);
    assert.equal(outputs.length, 1);
    const g = new Figure({ data: [], layout: {} });
    const second = await withKernel(() => [g[MIME_BUNDLE]() !== null, g[MIME_BUNDLE]()]);
    assert.deepEqual(second.value, [true, null]);
    const h = await withKernel(() => plotUlpHistogram(new UlpHistogramBuilder().finish()));
    assert.equal(h.outputs.length, 1, 'shown by default');
    const quiet = await withKernel(() => plotUlpHistogram(new UlpHistogramBuilder().finish(), off));
    assert.equal(quiet.outputs.length, 0);
  });

  it('capSamples: all samples rounded when few, else evenly spaced quantiles', () => {
    assert.deepEqual(capSamples([3, 1.234567, 2], 3), [1.235, 2, 3]);
    assert.deepEqual(capSamples([0, 10, 20, 30, 40], 2), [10, 30]); // quantiles 0.25 and 0.75
    assert.deepEqual(capSamples([0, 1, 2, 3], 4), [0, 1, 2, 3]);
  });

  it('plotTiming: every check with its message', () => {
    const c = [timed('a', [1, 2])];
    assert.throws(() => plotTiming(5 as never), msg('result: expected a TimingResult or an array of timed cases, got 5', TypeError));
    assert.throws(() => plotTiming({ cases: 1 } as never), (e: unknown) => e instanceof TypeError && e.message.startsWith('result: expected a TimingResult'));
    assert.throws(() => plotTiming(null as never), msg('result: expected a TimingResult or an array of timed cases, got null', TypeError));
    assert.throws(() => plotTiming([]), msg('result: no timed cases to plot'));
    assert.throws(() => plotTiming({ cases: [] } as never), msg('result: no timed cases to plot'));
    assert.throws(() => plotTiming(c, { ...off, kind: 'bars' as never }), msg("kind: expected 'violin', 'box' or 'histogram', got 'bars'", TypeError));
    assert.throws(() => plotTiming(c, { ...off, maxSamples: 1 }), msg('maxSamples: expected an integer ≥ 2, got 1'));
    assert.throws(() => plotTiming(c, { ...off, maxSamples: 2.5 }), msg('maxSamples: expected an integer ≥ 2, got 2.5'));
    assert.equal(plotTiming(c, { ...off, maxSamples: 2 }).data.length, 1);
    assert.throws(() => plotTiming([timed('a', [1]), timed('e', [])], off), msg("result: case 'e' has no samples"));
    for (const bins of [1, 401, 2.5]) assert.throws(() => plotTiming(c, { ...off, kind: 'histogram', bins }), msg(`bins: expected an integer in 2..400, got ${bins}`));
    assert.equal((plotTiming(c, { ...off, kind: 'histogram', bins: 400 }).data[0] as Any).x.length, 401);
    assert.equal((plotTiming(c, { ...off, kind: 'histogram', bins: 2 }).data[0] as Any).x.length, 3);
  });

  it('plotTiming: a log axis when the slowest sample is over 20× the fastest; titles; size', () => {
    const axis = (cases: Any[], o = {}) => plotTiming(cases, { ...off, ...o }).layout.xaxis!.type;
    assert.equal(axis([timed('a', [1, 20])]), 'linear');
    assert.equal(axis([timed('a', [2, 40])]), 'linear');
    assert.equal(axis([timed('a', [2, 41])]), 'log');
    assert.equal(axis([timed('a', [1, 2])], { logX: 'auto' }), 'linear');
    assert.equal(axis([timed('a', [1, 20.5])]), 'log');
    assert.equal(axis([timed('a', [1]), timed('b', [21])]), 'log');
    assert.equal(axis([timed('a', [1]), timed('b', [21])], { logX: 'auto' }), 'log');
    assert.equal(axis([timed('a', [0, 100])]), 'linear');
    assert.equal(axis([timed('a', [1, 2])], { logX: true }), 'log');
    assert.equal(axis([timed('a', [1, 100])], { logX: false }), 'linear');
    // The extremes come from the stats when present, else from the samples.
    assert.equal(axis([{ ...timed('a', [1, 2]), stats: { ...summarize([1, 2]), max: 100 } }]), 'log');
    assert.equal(axis([{ ...timed('a', [1, 100]), stats: undefined }]), 'log');
    const one = plotTiming([timed('a', [1, 2])], { ...off, width: 500, height: 300 });
    assert.deepEqual(one.layout.title, { text: 'timing — 1 arm' });
    assert.equal(one.layout.width, 500);
    assert.equal(one.layout.height, 300);
    assert.equal(one.layout.annotations, undefined);
    assert.deepEqual(one.layout.xaxis, { title: { text: 'µs per launch' }, type: 'linear', zeroline: false });
    assert.equal(one.layout.showlegend, false);
    assert.deepEqual(one.layout.margin, { t: 64 });
    const two = plotTiming([timed('a', [1, 2]), timed('b', [1, 2])], { ...off, kind: 'box' });
    assert.deepEqual(two.layout.title, { text: 'timing — 2 arms' });
    assert.equal(two.layout.height, 250);
    assert.deepEqual(two.layout.yaxis, { type: 'category', autorange: 'reversed', automargin: true });
    assert.deepEqual(plotTiming([timed('a', [1, 2])], { ...off, title: 'mine' }).layout.title, { text: 'mine' });
  });

  it("plotTiming: the method in the axis title, shortened; a case's provenance line; a result's names and line", () => {
    const prov = { method: 'm'.repeat(111), backend: 'host', device: 'cpu', revision: 'abc', time: 't0', runId: 'r1' };
    const f = plotTiming([timed('a', [1, 2], { provenance: prov })], off);
    assert.equal(f.layout.xaxis!.title!.text, `µs per launch — ${'m'.repeat(109)}…`);
    assert.deepEqual(f.layout.annotations, [{ text: 'host: cpu; revision abc; t0; run r1', xref: 'paper', yref: 'paper', x: 0.5, y: 1.02, showarrow: false, xanchor: 'center', yanchor: 'bottom', font: { size: 10 } }]);
    const g = plotTiming([timed('a', [1, 2], { provenance: { ...prov, method: 'm'.repeat(110) } })], off);
    assert.equal(g.layout.xaxis!.title!.text, `µs per launch — ${'m'.repeat(110)}`);
    const copy = timed('copy', [1, 2], { opKind: 'copy' });
    const arm = timed('arm', [2, 4]);
    const result = {
      cases: [copy, arm],
      label: 'R',
      provenance: { method: 'events' },
      percentOfCopy: (c: Any) => (c === arm ? 50 : 100),
      provenanceLine: () => 'p'.repeat(131),
    };
    const r = plotTiming(result as never, off);
    assert.deepEqual(r.data.map((t) => t.name), ['copy', 'arm · 50% of copy']);
    assert.equal((r.data[1] as Any).y0, 'arm · 50% of copy');
    assert.deepEqual(r.layout.title, { text: 'R — 2 arms' });
    assert.equal(r.layout.xaxis!.title!.text, 'µs per launch — events');
    assert.equal(r.layout.annotations![0].text, `${'p'.repeat(129)}…`);
    // A result without provenanceLine: the first case's provenance.
    const bare = plotTiming({ cases: [timed('a', [1, 2], { provenance: prov })], provenance: {}, percentOfCopy: () => undefined } as never, off);
    assert.equal(bare.layout.annotations![0].text, 'host: cpu; revision abc; t0; run r1');
    const none = plotTiming({ ...result, percentOfCopy: () => undefined, provenanceLine: () => '' } as never, off);
    assert.deepEqual(none.data.map((t) => t.name), ['copy', 'arm']);
    assert.equal(none.layout.annotations, undefined);
  });

  it('plotTiming, histogram: bin edges, fractions per bin (the last repeated), linear and log', () => {
    const f = plotTiming([timed('a', [0, 1, 1, 4]), timed('b', [4, 4])], { ...off, kind: 'histogram', bins: 4 });
    const [a, b] = f.data as Any[];
    assert.deepEqual(a.x, [0, 1, 2, 3, 4]);
    assert.deepEqual(a.y, [0.25, 0.5, 0, 0.25, 0.25]);
    assert.deepEqual(b.y, [0, 0, 0, 1, 1]);
    assert.equal(a.type, 'scatter');
    assert.equal(a.mode, 'lines');
    assert.deepEqual(a.line, { color: paletteColor(0), shape: 'hv', width: 1.5 });
    assert.equal(a.fill, 'tozeroy');
    assert.equal(b.fillcolor, withAlpha(paletteColor(1), 0.2));
    assert.equal(a.hovertemplate, 'a: %{x} µs, %{y}<extra></extra>');
    assert.deepEqual(f.layout.yaxis, { title: { text: 'fraction of samples' }, type: 'linear' });
    assert.equal(f.layout.showlegend, true);
    assert.equal(f.layout.height, 380);
    assert.equal(plotTiming([timed('a', [1, 2])], { ...off, kind: 'histogram' }).layout.showlegend, false);
    assert.equal((plotTiming([timed('a', [1, 2])], { ...off, kind: 'histogram' }).data[0] as Any).x.length, 41);
    // Log: edges at 1, 10, 100 over two bins.
    const g = plotTiming([timed('a', [1, 5, 100])], { ...off, kind: 'histogram', bins: 2 });
    assert.deepEqual((g.data[0] as Any).x, [1, 10, 100]);
    assert.deepEqual((g.data[0] as Any).y, [0.6667, 0.3333, 0.3333]);
    // The range starts above 0: edges 2 … 6.
    const k = plotTiming([timed('a', [2, 3, 3, 6])], { ...off, kind: 'histogram', bins: 4 });
    assert.deepEqual((k.data[0] as Any).x, [2, 3, 4, 5, 6]);
    assert.deepEqual((k.data[0] as Any).y, [0.25, 0.5, 0, 0.25, 0.25]);
    // All samples equal: one unit wide.
    const h = plotTiming([timed('a', [3, 3])], { ...off, kind: 'histogram', bins: 2 });
    assert.deepEqual((h.data[0] as Any).x, [3, 3.5, 4]);
    assert.deepEqual((h.data[0] as Any).y, [1, 0, 0]);
  });

  it('plotTiming, violin and box: every field; the fences are the extreme samples within 1.5 IQR', () => {
    const v = plotTiming([timed('a', [3, 1, 2])], { ...off, maxSamples: 2 }).data[0] as Any;
    assert.deepEqual(v, {
      type: 'violin', orientation: 'h', name: 'a', y0: 'a', x: [1.5, 2.5], points: false, box: { visible: true }, meanline: { visible: true },
      line: { color: paletteColor(0) }, fillcolor: withAlpha(paletteColor(0), 0.35), spanmode: 'hard',
    });
    // 1..8 and 30: q1 3, q3 7, IQR 4, fences −3 and 13: lower 1, upper 8.
    const s = [30, 1, 2, 3, 4, 5, 6, 7, 8];
    const box = plotTiming([timed('a', s), timed('b', s)], { ...off, kind: 'box' }).data[1] as Any;
    assert.deepEqual(box, {
      type: 'box', orientation: 'h', name: 'b', y: ['b'], q1: [3], median: [5], q3: [7], lowerfence: [1], upperfence: [8], mean: [7.3333],
      boxpoints: false, line: { color: paletteColor(1) }, fillcolor: withAlpha(paletteColor(1), 0.3),
    });
    // A low outlier: −20 below q1 − 1.5 IQR; exactly at a fence is inside.
    const t = [-20, 10, 11, 12, 13, 14];
    const lowBox = plotTiming([{ ...timed('a', t), stats: undefined }], { ...off, kind: 'box' }).data[0] as Any;
    // q1 10.25, q3 12.75, IQR 2.5: fences 6.5 and 16.5.
    assert.deepEqual([lowBox.lowerfence, lowBox.upperfence, lowBox.q1], [[10], [14], [10.25]]);
    const at = [0, 4, 4, 4, 4, 8]; // q1 = q3 = 4, IQR 0: fences 4 and 4
    const atBox = plotTiming([timed('a', at)], { ...off, kind: 'box' }).data[0] as Any;
    assert.deepEqual([atBox.lowerfence, atBox.upperfence], [[4], [4]]);
  });

  it('plotUlpHistogram: inputs of each kind, categories merged, titles, axes', () => {
    const h1 = new UlpHistogramBuilder();
    h1.add(0, 5);
    h1.add(1, 2);
    const a = h1.finish();
    const h2 = new UlpHistogramBuilder();
    h2.add(0, 1);
    h2.add(3, 1);
    h2.inf = 2;
    const b = h2.finish();
    const one = plotUlpHistogram(a, off);
    assert.deepEqual(one.layout.title, { text: 'ulp distances — diff 1' });
    assert.deepEqual(one.data.map((t: Any) => [t.name, t.x, t.y]), [['diff 1', ['0', '1'], [5, 2]]]);
    assert.deepEqual(one.layout.yaxis, { title: { text: 'elements' }, type: 'log' });
    assert.deepEqual(one.layout.xaxis, { title: { text: 'ulp distance (bucket)' }, type: 'category' });
    assert.equal(one.layout.barmode, 'group');
    assert.equal(one.layout.showlegend, false);
    assert.equal(one.layout.height, 360);
    const two = plotUlpHistogram([{ name: 'A', histogram: a }, { histogram: b, label: 'B' } as Any], { ...off, logY: false });
    assert.deepEqual(two.layout.title, { text: 'ulp distances' });
    assert.equal(two.layout.showlegend, true);
    assert.equal(two.layout.yaxis!.type, 'linear');
    assert.deepEqual(two.data.map((t: Any) => [t.name, t.x, t.y]), [
      ['A', ['0', '1', '2', '3–4', 'Inf'], [5, 2, 0, 0, 0]],
      ['B', ['0', '1', '2', '3–4', 'Inf'], [1, 0, 0, 1, 2]],
    ]);
    assert.deepEqual((two.data[1] as Any).marker, { color: paletteColor(1) });
    assert.equal((two.data[0] as Any).hovertemplate, 'A: %{x} ulp — %{y} elements<extra></extra>');
    assert.deepEqual(plotUlpHistogram({ histogram: a } as Any, off).data[0].name, 'diff 1');
    assert.deepEqual(plotUlpHistogram([a, { name: 5, histogram: a } as Any], off).data[1].name, 'diff 2');
    assert.deepEqual(plotUlpHistogram(a, { ...off, title: 'X' }).layout.title, { text: 'X' });
    // The buckets of the histogram with the most of them, even when another has more labels (its classes).
    const h3 = new UlpHistogramBuilder();
    h3.add(1, 1);
    h3.inf = 1;
    h3.nanVsNumber = 1;
    const c = h3.finish();
    const h4 = new UlpHistogramBuilder();
    h4.add(3, 2);
    const d4 = h4.finish();
    for (const order of [[c, d4], [d4, c]]) {
      const f = plotUlpHistogram(order, off);
      assert.deepEqual(f.data.map((t: Any) => t.x), [['0', '1', '2', '3–4', 'Inf', 'NaN≠number'], ['0', '1', '2', '3–4', 'Inf', 'NaN≠number']]);
      assert.deepEqual(f.data.map((t: Any) => t.y), order[0] === c ? [[0, 1, 0, 0, 1, 1], [0, 0, 0, 2, 0, 0]] : [[0, 0, 0, 2, 0, 0], [0, 1, 0, 0, 1, 1]]);
    }
    for (const bad of [null, { histogram: null }, { labels: [] }]) {
      assert.throws(() => plotUlpHistogram(bad as never, off), (e: unknown) => e instanceof TypeError && e.message.startsWith('histograms[0]: expected a DiffResult, an UlpHistogram or { name, histogram }, got '));
    }
    assert.throws(() => plotUlpHistogram([], off), msg('histograms: nothing to plot'));
    // A number or a string is refused in these words (the 'in' operator threw its own TypeError on them).
    assert.throws(() => plotUlpHistogram([a, 3 as never], off), msg('histograms[1]: expected a DiffResult, an UlpHistogram or { name, histogram }, got 3', TypeError));
    assert.throws(() => plotUlpHistogram('h' as never, off), (e: unknown) => e instanceof TypeError && e.message.startsWith('histograms[0]: expected a DiffResult, an UlpHistogram or { name, histogram }, got '));
    assert.throws(() => plotUlpHistogram({ histogram: {} } as never, off), (e: unknown) => e instanceof TypeError && e.message.startsWith('histograms[0]: expected'));
    assert.throws(() => plotUlpHistogram({ counts: [] } as never, off), (e: unknown) => e instanceof TypeError && e.message.startsWith('histograms[0]: expected'));
  });

  const map = (counts: number[][], rowEdges: number[], colEdges: number[], rows: number, cols: number, axes: [string, string] = ['token', 'channel']): MismatchMap =>
    ({ axes, rows, cols, rowEdges, colEdges, counts, total: counts.flat().reduce((s, n) => s + n, 0) });

  it('coarsenMap: whole groups of cells, the last smaller; unchanged when small enough', () => {
    const m = map([[1, 2, 3], [4, 5, 6], [7, 8, 9]], [0, 1, 2, 3], [0, 2, 4, 5], 3, 5);
    assert.equal(coarsenMap(m, 3, 3), m);
    const c = coarsenMap(m, 2, 2);
    assert.deepEqual(c.counts, [[12, 9], [15, 9]]);
    assert.deepEqual(c.rowEdges, [0, 2, 3]);
    assert.deepEqual(c.colEdges, [0, 4, 5]);
    assert.equal(c.total, 45);
    const r = coarsenMap(m, 1, 3);
    assert.deepEqual(r.counts, [[12, 15, 18]]);
    assert.deepEqual(r.rowEdges, [0, 3]);
    assert.deepEqual(r.colEdges, [0, 2, 4, 5]);
    assert.deepEqual(coarsenMap(m, 0, 0).counts, [[45]]);
    const cols = coarsenMap(m, 3, 2);
    assert.deepEqual(cols.counts, [[3, 3], [9, 6], [15, 9]]);
    assert.deepEqual(cols.rowEdges, [0, 1, 2, 3]);
    assert.deepEqual(coarsenMap(m, 2, 3).counts, [[5, 7, 9], [7, 8, 9]]);
    const e = map([], [0], [0], 0, 0);
    assert.equal(coarsenMap(e, 1, 1), e);
  });

  it('plotMismatchMap: fractions per cell, the colour range, titles and axes; its checks', () => {
    const m = map([[0, 2], [1, 4]], [0, 1, 3], [0, 2, 4], 3, 4);
    const f = plotMismatchMap(m, off);
    const t = f.data[0] as Any;
    assert.deepEqual(t.z, [[0, 1], [0.25, 1]]);
    assert.equal(t.zmax, 1);
    assert.equal(t.zmin, 0);
    assert.deepEqual(t.x, [0, 2, 4]);
    assert.deepEqual(t.y, [0, 1, 3]);
    assert.equal(t.type, 'heatmap');
    assert.deepEqual(t.colorscale, [[0, '#ffffff'], [0.0001, '#fde0c5'], [0.5, '#e34a33'], [1, '#7f0000']]);
    assert.deepEqual(t.colorbar, { title: { text: 'fraction mismatching' } });
    assert.equal(t.hovertemplate, 'token %{y}, channel %{x}: %{z}<extra></extra>');
    assert.deepEqual(f.layout, {
      title: { text: 'where elements mismatch (7 of 12)' },
      xaxis: { title: { text: 'channel (2×2 cells over 3×4)' }, type: 'linear' },
      yaxis: { title: { text: 'token' }, type: 'linear', autorange: 'reversed' },
      height: 420,
    });
    const small = plotMismatchMap(map([[1, 0]], [0, 3], [0, 2, 4], 3, 4, ['', '']), off);
    assert.deepEqual((small.data[0] as Any).z, [[0.167, 0]]);
    assert.equal((small.data[0] as Any).zmax, 0.167);
    assert.equal((small.data[0] as Any).hovertemplate, 'row %{y}, column %{x}: %{z}<extra></extra>');
    assert.equal(small.layout.xaxis!.title!.text, 'column (1×2 cells over 3×4)');
    assert.equal(small.layout.yaxis!.title!.text, 'row');
    const zero = plotMismatchMap(map([[0]], [0, 2000], [0, 1000], 2000, 1000), off);
    assert.equal((zero.data[0] as Any).zmax, 1);
    assert.equal(zero.layout.title!.text, 'where elements mismatch (0 of 2,000,000)');
    const fromDiff = plotMismatchMap({ map: m, label: 'L' } as never, { ...off, maxRows: 1, maxCols: 1 });
    assert.equal(fromDiff.layout.title!.text, 'where elements mismatch — L (7 of 12)');
    assert.deepEqual((fromDiff.data[0] as Any).z, [[0.583]]);
    assert.equal(plotMismatchMap({ map: m } as never, off).layout.title!.text, 'where elements mismatch (7 of 12)');
    assert.equal(plotMismatchMap(m, { ...off, title: 'X' }).layout.title!.text, 'X');
    assert.equal(plotMismatchMap(map([], [0], [0], 0, 0), off).layout.xaxis!.title!.text, 'channel (0×0 cells over 0×0)');
    // A cell of no elements (a tensor of no rows) has fraction 0, not 0/0.
    assert.deepEqual((plotMismatchMap(map([[0]], [0, 0], [0, 4], 0, 4), off).data[0] as Any).z, [[0]]);
    assert.throws(() => plotMismatchMap({ map: null } as never, off), msg('diff: this result has no mismatch map (it was computed with { map: false })'));
    assert.throws(() => plotMismatchMap(3 as never, off), msg('input: expected a DiffResult or a MismatchMap, got 3', TypeError));
    assert.throws(() => plotMismatchMap('m' as never, off), (e: unknown) => e instanceof TypeError && e.message.startsWith('input: expected a DiffResult or a MismatchMap, got '));
    assert.throws(() => plotMismatchMap({ counts: [] } as never, off), (e: unknown) => e instanceof TypeError && e.message.startsWith('input: expected'));
    for (const key of ['maxRows', 'maxCols'] as const) {
      for (const v of [0, 1.5]) assert.throws(() => plotMismatchMap(m, { ...off, [key]: v }), msg(`${key}: expected a positive integer, got ${v}`));
    }
  });

  it('standaloneHtml: the page around a stand-in plotly bundle, script-safe; headers; its checks', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gdnlab-plot-'));
    try {
      const bundle = path.join(dir, 'plotly.js');
      fs.writeFileSync(bundle, 'var P="</script><!--";');
      const fig = new Figure({ data: [], layout: { title: { text: '</SCRIPT>' } } });
      const page = standaloneHtml([fig, { data: [], layout: {} }], { plotlyPath: bundle, title: 'A & B', provenanceHeader: 'rev <1>' });
      const lines = page.split('\n');
      assert.deepEqual(lines.slice(0, 3), ['<!DOCTYPE html>', '<html lang="en"><head><meta charset="utf-8">', '<title>A &amp; B</title>']);
      assert.ok(lines[3].startsWith('<style>body{font-family:Helvetica,Arial,sans-serif;'));
      assert.equal(lines[4], '<script>var P="<\\/script><\\!--";</script>');
      assert.deepEqual(lines.slice(5, 8), ['</head><body>', '<h1>A &amp; B</h1>', '<p class="provenance">rev &lt;1&gt;</p>']);
      assert.equal(lines[8], '<section class="figure"><div id="gdnlab-fig-0" class="plot"></div>');
      assert.equal(lines[9], `<noscript>${fig.svg()}</noscript>`.split('\n')[0]);
      assert.ok(page.includes(`<script>(function(){var f=${JSON.stringify(fig.toJSON()).replace('</SCRIPT>', '<\\/SCRIPT>')};Plotly.newPlot('gdnlab-fig-0',f.data,f.layout,f.config);})();</script></section>`));
      assert.ok(page.includes("Plotly.newPlot('gdnlab-fig-1',f.data,f.layout,f.config);})();</script></section>\n</body></html>"));
      assert.ok(page.endsWith('</body></html>'));
      const facts = standaloneHtml([], { plotlyPath: bundle, provenanceHeader: { revision: 'abc', n: 1234567 } });
      assert.ok(facts.includes('\n<title>gdnlab figures</title>\n'));
      assert.ok(facts.includes('\n<table class="provenance"><tr><th>revision</th><td>abc</td></tr><tr><th>n</th><td>1,234,567</td></tr></table>\n\n</body></html>'), facts);
      const bare = standaloneHtml([], { plotlyPath: bundle });
      assert.ok(bare.endsWith('<h1>gdnlab figures</h1>\n\n\n</body></html>'));
      for (const h of [null, 5]) assert.ok(standaloneHtml([], { plotlyPath: bundle, provenanceHeader: h as never }).endsWith('<h1>gdnlab figures</h1>\n\n\n</body></html>'));
      assert.throws(() => standaloneHtml(3 as never), msg('figures: expected an array of figures, got 3', TypeError));
      assert.throws(() => standaloneHtml([fig, { data: 1 } as never], { plotlyPath: bundle }), (e: unknown) => e instanceof TypeError && e.message.startsWith('figures[1]: expected a Figure or { data, layout }, got '));
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
    assert.ok(/plotly\.js-dist(-min)?\/plotly(\.min)?\.js$/.test(plotlyBundlePath()), plotlyBundlePath());
  });
});
