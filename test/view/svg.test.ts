import { strict as assert } from 'assert';
import { renderSvg, tickLabel, colorAt, kde } from '../../lib/view/svg';
import { PlotlySpec } from '../../lib/view/figure';
import { parseXml } from './xml';

const violins: PlotlySpec = {
  data: ['reg', 'reg-k4', 'tiled'].map((name, i) => ({
    type: 'violin' as const,
    orientation: 'h' as const,
    name,
    y0: name,
    x: Array.from({ length: 50 }, (_, k) => 100 + i * 10 + Math.sin(k) * 3),
    points: false as const,
    box: { visible: true },
    meanline: { visible: true },
  })),
  layout: { title: { text: 'conv <arms> & "friends"' }, xaxis: { title: { text: 'µs' } }, yaxis: { type: 'category', autorange: 'reversed' } },
};

describe('svg renderer', () => {
  it('renders violins as well-formed SVG with a shape, box and mean line per arm', () => {
    const svg = renderSvg(violins);
    const x = parseXml(svg);
    assert.equal(x.root, 'svg');
    assert.equal(x.rootAttributes.width, '720');
    // One violin outline per arm (stroke-width 1), filled.
    const outlines = x.attributes.filter((a) => a['#name'] === 'path' && a['stroke-width'] === '1');
    assert.equal(outlines.length, 3);
    // Inner boxes: frame rect + background + 3 boxes.
    assert.equal(x.counts.rect, 2 + 3);
    for (const name of ['reg', 'reg-k4', 'tiled']) assert.ok(x.texts.includes(name), `label ${name}`);
    assert.ok(x.texts.includes('conv <arms> & "friends"'), 'title escaped and recovered');
    assert.ok(x.texts.includes('µs'));
    // Reversed category axis: the first arm is drawn on top.
    const labelY = (t: string) => Number(x.attributes[x.attributes.findIndex((a) => a['#name'] === 'text' && a['text-anchor'] === 'end') + ['reg', 'reg-k4', 'tiled'].indexOf(t)].y);
    assert.ok(labelY('reg') < labelY('tiled'));
  });

  it('renders boxes from precomputed statistics', () => {
    const spec: PlotlySpec = {
      data: [
        { type: 'box', orientation: 'h', name: 'a', y: ['a'], q1: [10], median: [11], q3: [12], lowerfence: [8], upperfence: [15], mean: [11.2], boxpoints: false },
        { type: 'box', orientation: 'h', name: 'b', y: ['b'], q1: [20], median: [21], q3: [22], lowerfence: [18], upperfence: [25], boxpoints: false },
      ],
      layout: { xaxis: { type: 'log' } },
    };
    const x = parseXml(renderSvg(spec));
    assert.equal(x.counts.g, 2);
    assert.equal(x.counts.rect, 2 + 2);
    assert.ok(x.texts.includes('10') || x.texts.includes('20'), 'log ticks labelled');
  });

  it('renders grouped bars on a log axis, skipping zero counts, with a legend', () => {
    const spec: PlotlySpec = {
      data: [
        { type: 'bar', name: 'arm A', x: ['0', '1', '2', 'NaN≠number'], y: [1000, 10, 0, 1] },
        { type: 'bar', name: 'arm B', x: ['0', '1', '2', 'NaN≠number'], y: [990, 0, 5, 0] },
      ],
      layout: { yaxis: { type: 'log' }, barmode: 'group' },
    };
    const svg = renderSvg(spec);
    const x = parseXml(svg);
    const barPaths = x.attributes.filter((a) => a['#name'] === 'path' && a.fill && a.fill !== 'none' && !a.stroke);
    assert.equal(barPaths.length, 2);
    // 3 bars for A (zero skipped), 2 for B: count subpaths.
    assert.deepEqual(
      barPaths.map((p) => (p.d.match(/M/g) ?? []).length),
      [3, 2],
    );
    // Every bar lies inside the plot frame.
    const frame = x.attributes.find((a) => a['#name'] === 'rect' && a.stroke === '#444444')!;
    const bottom = Number(frame.y) + Number(frame.height);
    for (const p of barPaths) for (const m of p.d.matchAll(/M([\d.]+) ([\d.]+)h[\d.]+v([\d.]+)/g)) assert.ok(Number(m[2]) + Number(m[3]) <= bottom + 0.2);
    assert.ok(x.texts.includes('arm A') && x.texts.includes('arm B'), 'legend');
    assert.ok(x.texts.includes('NaN≠number'));
  });

  it('renders filled step lines (histograms)', () => {
    const spec: PlotlySpec = {
      data: [{ type: 'scatter', mode: 'lines', name: 'h', x: [1, 2, 3, 4], y: [0.1, 0.5, 0.4, 0.4], line: { shape: 'hv' }, fill: 'tozeroy' }],
      layout: {},
    };
    const x = parseXml(renderSvg(spec));
    const paths = x.attributes.filter((a) => a['#name'] === 'path' && /H/.test(a.d ?? '') && /V/.test(a.d ?? ''));
    assert.ok(paths.length >= 2, 'a fill and a line');
  });

  it('renders a heat map as one path per colour level with merged runs, plus a colour bar', () => {
    const z = [
      [0, 0, 0.5, 0.5],
      [1, 1, 1, 0],
    ];
    const spec: PlotlySpec = {
      data: [{ type: 'heatmap', x: [0, 10, 20, 30, 40], y: [0, 5, 10], z, zmin: 0, zmax: 1, colorscale: [[0, '#ffffff'], [1, '#7f0000']], colorbar: { title: { text: 'fraction' } } }],
      layout: { yaxis: { autorange: 'reversed' } },
    };
    const x = parseXml(renderSvg(spec));
    const cells = x.attributes.filter((a) => a['#name'] === 'path' && a.fill && a.fill !== 'none' && /h[\d.]+v/.test(a.d ?? ''));
    assert.equal(cells.length, 2, 'two colour levels');
    const runs = cells.map((c) => (c.d.match(/M/g) ?? []).length).sort();
    assert.deepEqual(runs, [1, 1], 'each row run merged into one rectangle');
    // The darkest run spans three of the four columns: three quarters of the plot width.
    const frame = x.attributes.find((a) => a['#name'] === 'rect' && a.stroke === '#444444')!;
    const w = Number(cells.find((c) => c.fill === '#7f0000')?.d.match(/h(\d+)/)?.[1]);
    assert.ok(Math.abs(w - (Number(frame.width) * 3) / 4) <= 1, `run width ${w}`);
    assert.ok(x.texts.includes('fraction'));
    assert.ok((x.counts.rect ?? 0) >= 2 + 8 + 1, 'colour bar steps');
  });

  it('tick labels are short and free of float fuzz', () => {
    assert.equal(tickLabel(0.30000000000000004), '0.3');
    assert.equal(tickLabel(1e-6), '1e-6');
    assert.equal(tickLabel(2.5e7), '25,000,000');
    assert.equal(tickLabel(2e5), '200,000');
    assert.equal(tickLabel(2.5e9), '2.5e9');
    assert.equal(tickLabel(1000), '1000');
    assert.equal(tickLabel(0), '0');
  });

  it('colour scale interpolation and kernel density', () => {
    assert.equal(colorAt([[0, '#000000'], [1, '#ffffff']], 0.5), '#808080');
    assert.equal(colorAt([[0, '#ffffff'], [0.5, '#ff0000'], [1, '#000000']], 1), '#000000');
    const { density, bandwidth } = kde([0, 1, 2, 3, 4, 100], [2, 50, 100]);
    assert.ok(density[0] > density[2] && density[2] > density[1]);
    assert.ok(bandwidth > 0);
  });

  it('stays compact: a 3-arm violin under 12 kB, a dense 48×96 heat map under 90 kB', () => {
    assert.ok(renderSvg(violins).length < 12000, `violin ${renderSvg(violins).length} bytes`);
    let seed = 1;
    const rand = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
    const z = Array.from({ length: 48 }, () => Array.from({ length: 96 }, () => Math.round(rand() * 1000) / 1000));
    const spec: PlotlySpec = {
      data: [{ type: 'heatmap', x: Array.from({ length: 97 }, (_, i) => i * 64), y: Array.from({ length: 49 }, (_, i) => i * 100), z, zmin: 0, zmax: 1, colorscale: [[0, '#ffffff'], [1, '#7f0000']] }],
      layout: {},
    };
    const svg = renderSvg(spec);
    parseXml(svg);
    assert.ok(svg.length < 90000, `heat map ${svg.length} bytes`);
  });
});
