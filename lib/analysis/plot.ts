// Figures for timing distributions, ulp histograms and mismatch heat maps.
//
// In the gdnlab kernel a plot call makes ONE display_data output carrying
//   - `application/vnd.plotly.v1+json` ({ data, layout, config }): drawn live by JupyterLab's /
//     Notebook 7's plotly renderer, which brings its own plotly.js (never embedded);
//   - `image/png`: the same figure rasterised offline from our SVG (png.ts), which JupyterLab shows
//     even when the notebook is reopened untrusted, and nbconvert and GitHub show without JavaScript;
//   - `image/svg+xml`: the static figure drawn by svg.ts (sharp in nbconvert's HTML);
//   - `text/plain`: one line that says what the figure shows.
// The frontend picks the richest of these it can render, so the figure appears once. As a cell's
// last value an already shown Figure adds nothing (its bundle method returns null, which the
// kernel takes as "no execute_result"). Outside a kernel a plot call just returns the Figure.
// Outputs stay compact: numbers rounded to 4 significant digits, violins get at most 300 samples
// per arm (evenly spaced quantiles, so the shape is kept), heat maps at most 40 × 80 cells.
// standaloneHtml() writes one self-contained page that embeds plotly.js once (for export).

import * as fs from 'fs';
import { describe } from '../dtype';
import type { CaseTiming, TimingResult } from './timing';
import type { DiffResult } from './diff';
import type { MismatchMap } from './mismatch-map';
import type { UlpHistogram } from './ulp-histogram';
import { histogramCategories } from './ulp-histogram';
import { quantileSorted, sorted, summarize } from './stats';
import { MIME_BUNDLE, MimeBundle, display, inKernel } from '../view/display';
import { escapeXml, formatPercent, formatValue, roundSig } from '../view/format';
import { BarTrace, BoxTrace, HeatmapTrace, Layout, PlotlySpec, ScatterTrace, Trace, ViolinTrace, paletteColor, withAlpha } from '../view/figure';
import { renderSvg } from '../view/svg';
import { pngUnavailable, svgToPng } from '../view/png';

export const PLOTLY_MIME = 'application/vnd.plotly.v1+json';

const DEFAULT_CONFIG = { displaylogo: false, responsive: true };

/** A figure: plotly JSON plus its static SVG; shown in a kernel, returned everywhere. */
export class Figure {
  readonly data: Trace[];
  readonly layout: Layout;
  readonly config: Record<string, unknown>;
  private svgCache: string | undefined;
  private pngCache: { base64: string; width: number; height: number } | undefined;
  private shown = false;

  constructor(spec: PlotlySpec) {
    if (!spec || !Array.isArray(spec.data) || typeof spec.layout !== 'object') throw new TypeError(`figure: expected { data: [...], layout: {...} }, got ${describe(spec)}`);
    this.data = spec.data;
    this.layout = spec.layout;
    this.config = { ...DEFAULT_CONFIG, ...(spec.config ?? {}) };
  }

  get title(): string {
    return this.layout.title?.text ?? 'figure';
  }

  toJSON(): PlotlySpec {
    return { data: this.data, layout: this.layout, config: this.config };
  }

  /** The static SVG rendering (cached). */
  svg(): string {
    this.svgCache ??= renderSvg(this.toJSON());
    return this.svgCache;
  }

  /** The static PNG, base64 (cached); undefined when resvg cannot be loaded here. */
  pngBase64(): string | undefined {
    if (this.pngCache === undefined && !pngUnavailable()) {
      const img = svgToPng(this.svg());
      this.pngCache = { base64: img.png.toString('base64'), width: img.width, height: img.height };
    }
    return this.pngCache?.base64;
  }

  /** Bytes the output adds to a notebook (JSON text of its bundle). */
  outputBytes(): number {
    return Buffer.byteLength(JSON.stringify(this.bundle().data));
  }

  /** What text/plain says: the title, the traces, and which static images came along. */
  summary(): string {
    const traces = this.data.map((t) => t.name).filter((n): n is string => !!n);
    const names = traces.length ? `: ${traces.slice(0, 8).join(', ')}${traces.length > 8 ? `, … (${traces.length} in all)` : ''}` : '';
    const why = pngUnavailable();
    return `Figure "${this.title}" (${this.data.length} trace${this.data.length === 1 ? '' : 's'}${names})${why ? ` [no PNG: ${why}]` : ''}`;
  }

  /** The one output of this figure: plotly JSON, PNG, SVG and a text summary. */
  bundle(): MimeBundle {
    const data: Record<string, unknown> = { [PLOTLY_MIME]: this.toJSON() };
    const metadata: Record<string, unknown> = {};
    const png = this.pngBase64();
    if (png && this.pngCache) {
      data['image/png'] = png;
      metadata['image/png'] = { width: this.pngCache.width, height: this.pngCache.height };
    }
    data['image/svg+xml'] = this.svg();
    data['text/plain'] = this.summary();
    return { data, metadata };
  }

  /** Displays the figure's one output in the kernel; false (and nothing shown) outside one. */
  show(): boolean {
    if (!inKernel()) return false;
    display(this.bundle());
    this.shown = true;
    return true;
  }

  toString(): string {
    return `Figure: ${this.title} (${this.data.length} traces)`;
  }

  /**
   * As a cell's last value: nothing when already shown (null: the kernel adds no execute_result),
   * else the figure's one output.
   */
  [MIME_BUNDLE](): MimeBundle | null {
    if (this.shown) return null;
    if (inKernel()) this.shown = true;
    return this.bundle();
  }
}

export interface PlotOptions {
  title?: string;
  /** Display in the kernel (default true; no effect outside a kernel). */
  show?: boolean;
  width?: number;
  height?: number;
}

function finish(spec: PlotlySpec, opts: PlotOptions): Figure {
  if (opts.width) spec.layout.width = opts.width;
  if (opts.height) spec.layout.height = opts.height;
  const fig = new Figure(spec);
  if (opts.show ?? true) fig.show();
  return fig;
}

// ---------------------------------------------------------------------------------------- timing

export interface TimingPlotOptions extends PlotOptions {
  /** 'violin' (default), 'box' or 'histogram' per arm. */
  kind?: 'violin' | 'box' | 'histogram';
  /** Logarithmic time axis; 'auto' (default) when the slowest sample is over 20× the fastest. */
  logX?: boolean | 'auto';
  /** Samples per arm kept for violins (default 300). */
  maxSamples?: number;
  /** Histogram bins (default 40). */
  bins?: number;
}

/** At most max values that keep the distribution: evenly spaced quantiles of the sorted samples. */
export function capSamples(samples: ArrayLike<number>, max: number): number[] {
  const s = sorted(samples);
  if (s.length <= max) return Array.from(s, (v) => roundSig(v, 4));
  return Array.from({ length: max }, (_, k) => roundSig(quantileSorted(s, (k + 0.5) / max), 4));
}

function timingCases(input: TimingResult | CaseTiming[]): { cases: CaseTiming[]; result?: TimingResult } {
  if (Array.isArray(input)) return { cases: input };
  if (input && Array.isArray((input as TimingResult).cases)) return { cases: (input as TimingResult).cases, result: input as TimingResult };
  throw new TypeError(`result: expected a TimingResult or an array of timed cases, got ${describe(input)}`);
}

/** Timing distributions per arm (violin, box or histogram), in µs per launch. */
export function plotTiming(input: TimingResult | CaseTiming[], opts: TimingPlotOptions = {}): Figure {
  const { cases, result } = timingCases(input);
  if (cases.length === 0) throw new RangeError('result: no timed cases to plot');
  const kind = opts.kind ?? 'violin';
  if (!['violin', 'box', 'histogram'].includes(kind)) throw new TypeError(`kind: expected 'violin', 'box' or 'histogram', got ${describe(opts.kind)}`);
  const maxSamples = opts.maxSamples ?? 300;
  if (!Number.isInteger(maxSamples) || maxSamples < 2) throw new RangeError(`maxSamples: expected an integer ≥ 2, got ${describe(opts.maxSamples)}`);
  let lo = Infinity;
  let hi = -Infinity;
  for (const c of cases) {
    if (!c.samples.length) throw new RangeError(`result: case '${c.label}' has no samples`);
    lo = Math.min(lo, c.stats?.min ?? Math.min(...c.samples));
    hi = Math.max(hi, c.stats?.max ?? Math.max(...c.samples));
  }
  const logX = opts.logX === undefined || opts.logX === 'auto' ? lo > 0 && hi / lo > 20 : opts.logX;
  const method = result?.provenance.method ?? (cases[0].provenance?.method as string | undefined);
  const xTitle = `µs per launch${method ? ` — ${shorten(method, 110)}` : ''}`;
  // Each arm's name carries its % of the copy roofline when a copy of the same bytes was timed.
  const named = (c: CaseTiming) => {
    const pct = result?.percentOfCopy(c);
    return pct === undefined || c.opKind === 'copy' ? c.label : `${c.label} · ${formatPercent(pct)} of copy`;
  };
  const data: Trace[] = [];
  const layout: Layout = {
    title: { text: opts.title ?? `${result?.label ?? 'timing'} — ${cases.length} arm${cases.length > 1 ? 's' : ''}` },
    xaxis: { title: { text: xTitle }, type: logX ? 'log' : 'linear', zeroline: false },
    showlegend: false,
    margin: { t: 64 },
  };
  const prov = result?.provenanceLine?.() ?? provenanceOfCase(cases[0]);
  if (prov) layout.annotations = [{ text: shorten(prov, 130), xref: 'paper', yref: 'paper', x: 0.5, y: 1.02, showarrow: false, xanchor: 'center', yanchor: 'bottom', font: { size: 10 } }];

  if (kind === 'histogram') {
    const bins = opts.bins ?? 40;
    if (!Number.isInteger(bins) || bins < 2 || bins > 400) throw new RangeError(`bins: expected an integer in 2..400, got ${describe(opts.bins)}`);
    const f = logX ? Math.log10 : (v: number) => v;
    const inv = logX ? (v: number) => 10 ** v : (v: number) => v;
    const a = f(lo);
    const b = f(hi) > a ? f(hi) : a + 1;
    const edges = Array.from({ length: bins + 1 }, (_, k) => inv(a + ((b - a) * k) / bins));
    cases.forEach((c, i) => {
      const counts = new Array<number>(bins).fill(0);
      for (const v of c.samples) counts[Math.min(bins - 1, Math.max(0, Math.floor(((f(v) - a) / (b - a)) * bins)))]++;
      const frac = counts.map((n) => roundSig(n / c.samples.length, 4));
      const trace: ScatterTrace = {
        type: 'scatter',
        mode: 'lines',
        name: named(c),
        x: edges.map((e) => roundSig(e, 5)),
        y: [...frac, frac[frac.length - 1]],
        line: { color: paletteColor(i), shape: 'hv', width: 1.5 },
        fill: 'tozeroy',
        fillcolor: withAlpha(paletteColor(i), 0.2),
        hovertemplate: `${c.label}: %{x} µs, %{y}<extra></extra>`,
      };
      data.push(trace);
    });
    layout.yaxis = { title: { text: 'fraction of samples' }, type: 'linear' };
    layout.showlegend = cases.length > 1;
    layout.height = 380;
  } else {
    cases.forEach((c, i) => {
      const color = paletteColor(i);
      if (kind === 'violin') {
        const trace: ViolinTrace = {
          type: 'violin',
          orientation: 'h',
          name: named(c),
          y0: named(c),
          x: capSamples(c.samples, maxSamples),
          points: false,
          box: { visible: true },
          meanline: { visible: true },
          line: { color },
          fillcolor: withAlpha(color, 0.35),
          spanmode: 'hard',
        };
        data.push(trace);
      } else {
        const st = c.stats ?? summarize(c.samples);
        const s = sorted(c.samples);
        const lowF = st.q1 - 1.5 * st.iqr;
        const highF = st.q3 + 1.5 * st.iqr;
        let lowerfence = st.min;
        let upperfence = st.max;
        for (let k = 0; k < s.length; k++) if (s[k] >= lowF) { lowerfence = s[k]; break; }
        for (let k = s.length - 1; k >= 0; k--) if (s[k] <= highF) { upperfence = s[k]; break; }
        const trace: BoxTrace = {
          type: 'box',
          orientation: 'h',
          name: named(c),
          y: [named(c)],
          q1: [roundSig(st.q1, 5)],
          median: [roundSig(st.median, 5)],
          q3: [roundSig(st.q3, 5)],
          lowerfence: [roundSig(lowerfence, 5)],
          upperfence: [roundSig(upperfence, 5)],
          mean: [roundSig(st.mean, 5)],
          boxpoints: false,
          line: { color },
          fillcolor: withAlpha(color, 0.3),
        };
        data.push(trace);
      }
    });
    layout.yaxis = { type: 'category', autorange: 'reversed', automargin: true };
    layout.height = 130 + 60 * cases.length;
  }
  return finish({ data, layout, config: {} }, opts);
}

function provenanceOfCase(c: CaseTiming): string {
  const p = c.provenance;
  if (!p) return '';
  return `${p.backend}: ${p.device}; revision ${p.revision}; ${p.time}; run ${p.runId}`;
}

function shorten(s: string, n: number): string {
  return s.length <= n ? s : `${s.slice(0, n - 1)}…`;
}

// ---------------------------------------------------------------------------------- ulp histogram

export interface UlpHistogramPlotOptions extends PlotOptions {
  /** Logarithmic count axis (default true: the 0-ulp bucket usually dwarfs the rest). */
  logY?: boolean;
}

type HistogramInput = DiffResult | UlpHistogram | { name: string; histogram: UlpHistogram };

function asNamedHistogram(x: HistogramInput, i: number): { name: string; histogram: UlpHistogram } {
  if (x && typeof x === 'object' && 'histogram' in x && x.histogram && Array.isArray(x.histogram.counts)) {
    const name = ('name' in x && typeof x.name === 'string' ? x.name : (x as DiffResult).label) ?? `diff ${i + 1}`;
    return { name, histogram: x.histogram };
  }
  if (x && Array.isArray((x as UlpHistogram).counts) && Array.isArray((x as UlpHistogram).labels)) return { name: `diff ${i + 1}`, histogram: x as UlpHistogram };
  throw new TypeError(`histograms[${i}]: expected a DiffResult, an UlpHistogram or { name, histogram }, got ${describe(x)}`);
}

/** Ulp histogram(s): elements per ulp bucket (0, 1, 2, 3–4, 5–8, …) plus Inf / NaN classes. */
export function plotUlpHistogram(input: HistogramInput | HistogramInput[], opts: UlpHistogramPlotOptions = {}): Figure {
  const list = (Array.isArray(input) ? input : [input]).map(asNamedHistogram);
  if (list.length === 0) throw new RangeError('histograms: nothing to plot');
  const cats = list.map((h) => histogramCategories(h.histogram));
  // The ulp buckets are one fixed sequence (0, 1, 2, 3–4, …): the longest list of them holds every other one.
  const longest = cats.map((c) => c.labels.filter((l) => /^\d/.test(l))).reduce((a, b) => (b.length > a.length ? b : a));
  const classes = ['Inf', 'NaN≠number', 'NaN payload'].filter((c) => cats.some((x) => x.labels.includes(c)));
  const labels = [...longest, ...classes];
  const logY = opts.logY ?? true;
  const data: BarTrace[] = list.map((h, i) => {
    const c = cats[i];
    return {
      type: 'bar',
      name: h.name,
      x: labels,
      y: labels.map((l) => {
        const k = c.labels.indexOf(l);
        return k < 0 ? 0 : c.counts[k];
      }),
      marker: { color: paletteColor(i) },
      hovertemplate: `${h.name}: %{x} ulp — %{y} elements<extra></extra>`,
    };
  });
  const layout: Layout = {
    title: { text: opts.title ?? (list.length === 1 ? `ulp distances — ${list[0].name}` : 'ulp distances') },
    xaxis: { title: { text: 'ulp distance (bucket)' }, type: 'category' },
    yaxis: { title: { text: 'elements' }, type: logY ? 'log' : 'linear' },
    barmode: 'group',
    showlegend: list.length > 1,
    height: 360,
  };
  return finish({ data, layout, config: {} }, opts);
}

// -------------------------------------------------------------------------------------- heat map

export interface HeatmapPlotOptions extends PlotOptions {
  /** Cells kept at most (the diff's map is merged further when larger; default 40 × 80). */
  maxRows?: number;
  maxCols?: number;
}

/**
 * Merges a mismatch map's cells down to at most maxRows × maxCols, by whole groups of fr × fc
 * cells (fr = ceil(rows / maxRows)), so merged cells stay alike in size (only the last may be smaller).
 */
export function coarsenMap(map: MismatchMap, maxRows: number, maxCols: number): MismatchMap {
  const g = map.counts.length;
  const h = g ? map.counts[0].length : 0;
  const fr = Math.max(1, Math.ceil(g / Math.max(1, maxRows)));
  const fc = Math.max(1, Math.ceil(h / Math.max(1, maxCols)));
  if (fr === 1 && fc === 1) return map;
  const gr = Math.ceil(g / fr);
  const gc = Math.ceil(h / fc);
  const counts = Array.from({ length: gr }, () => new Array<number>(gc).fill(0));
  for (let i = 0; i < g; i++) for (let j = 0; j < h; j++) counts[Math.floor(i / fr)][Math.floor(j / fc)] += map.counts[i][j];
  const rowEdges = Array.from({ length: gr + 1 }, (_, k) => map.rowEdges[Math.min(k * fr, g)]);
  const colEdges = Array.from({ length: gc + 1 }, (_, k) => map.colEdges[Math.min(k * fc, h)]);
  return { ...map, rowEdges, colEdges, counts };
}

/** Heat map of where elements mismatch, over (token, channel) or the tensor's (row, column). */
export function plotMismatchMap(input: DiffResult | MismatchMap, opts: HeatmapPlotOptions = {}): Figure {
  let map: MismatchMap;
  let name = '';
  if (input && typeof input === 'object' && 'counts' in input && 'rowEdges' in input) map = input as MismatchMap;
  else if (input && typeof input === 'object' && 'map' in input) {
    if (!input.map) throw new RangeError('diff: this result has no mismatch map (it was computed with { map: false })');
    map = input.map;
    name = input.label ?? '';
  } else throw new TypeError(`input: expected a DiffResult or a MismatchMap, got ${describe(input)}`);
  for (const key of ['maxRows', 'maxCols'] as const) {
    const v = opts[key];
    if (v !== undefined && (!Number.isInteger(v) || v < 1)) throw new RangeError(`${key}: expected a positive integer, got ${describe(v)}`);
  }
  const m = coarsenMap(map, opts.maxRows ?? 40, opts.maxCols ?? 80);
  const z = m.counts.map((row, i) => row.map((n, j) => (n === 0 ? 0 : roundSig(n / ((m.rowEdges[i + 1] - m.rowEdges[i]) * (m.colEdges[j + 1] - m.colEdges[j])), 3))));
  const zmax = Math.max(0, ...z.map((row) => Math.max(0, ...row)));
  const [rowName, colName] = m.axes;
  const trace: HeatmapTrace = {
    type: 'heatmap',
    x: m.colEdges,
    y: m.rowEdges,
    z,
    zmin: 0,
    zmax: zmax > 0 ? zmax : 1,
    colorscale: [
      [0, '#ffffff'],
      [0.0001, '#fde0c5'],
      [0.5, '#e34a33'],
      [1, '#7f0000'],
    ],
    colorbar: { title: { text: 'fraction mismatching' } },
    hovertemplate: `${rowName || 'row'} %{y}, ${colName || 'column'} %{x}: %{z}<extra></extra>`,
  };
  const cells = `${m.counts.length}×${m.counts[0]?.length ?? 0} cells over ${m.rows}×${m.cols}`;
  const layout: Layout = {
    title: { text: opts.title ?? `where elements mismatch${name ? ` — ${name}` : ''} (${m.total.toLocaleString('en-US')} of ${(m.rows * m.cols).toLocaleString('en-US')})` },
    xaxis: { title: { text: `${colName || 'column'} (${cells})` }, type: 'linear' },
    yaxis: { title: { text: rowName || 'row' }, type: 'linear', autorange: 'reversed' },
    height: 420,
  };
  return finish({ data: [trace], layout, config: {} }, opts);
}

// ---------------------------------------------------------------------------- standalone export

export interface StandaloneOptions {
  title?: string;
  /** Shown above the figures: a line of text or facts (revision, backend, device, date, …). */
  provenanceHeader?: string | Record<string, unknown>;
  /** plotly.js to embed (default: plotly.js-dist-min's or plotly.js-dist's bundle from node_modules). */
  plotlyPath?: string;
}

/** The plotly.js bundle to embed: the first of plotly.js-dist-min, plotly.js-dist (min, then full). */
export function plotlyBundlePath(): string {
  const tries = ['plotly.js-dist-min/plotly.min.js', 'plotly.js-dist/plotly.min.js', 'plotly.js-dist/plotly.js'];
  for (const t of tries) {
    try {
      return require.resolve(t);
    } catch {
      // next
    }
  }
  throw new Error(`standaloneHtml: no plotly.js bundle found (tried ${tries.join(', ')}); install plotly.js-dist-min or pass plotlyPath`);
}

function scriptSafe(text: string): string {
  return text.replace(/<\/(script)/gi, '<\\/$1').replace(/<!--/g, '<\\!--');
}

/** One self-contained HTML page with every figure live (plotly.js embedded once) and its SVG as a no-script fallback. */
export function standaloneHtml(figures: (Figure | PlotlySpec)[], opts: StandaloneOptions = {}): string {
  if (!Array.isArray(figures)) throw new TypeError(`figures: expected an array of figures, got ${describe(figures)}`);
  const figs = figures.map((f, i) => {
    if (f instanceof Figure) return f;
    try {
      return new Figure(f);
    } catch {
      throw new TypeError(`figures[${i}]: expected a Figure or { data, layout }, got ${describe(f)}`);
    }
  });
  const plotlyPath = opts.plotlyPath ?? plotlyBundlePath();
  const plotly = fs.readFileSync(plotlyPath, 'utf8');
  const title = opts.title ?? 'gdnlab figures';
  let header = '';
  if (typeof opts.provenanceHeader === 'string') header = `<p class="provenance">${escapeXml(opts.provenanceHeader)}</p>`;
  else if (opts.provenanceHeader && typeof opts.provenanceHeader === 'object') {
    const rows = Object.entries(opts.provenanceHeader)
      .map(([k, v]) => `<tr><th>${escapeXml(k)}</th><td>${escapeXml(formatValue(v, 6))}</td></tr>`)
      .join('');
    header = `<table class="provenance">${rows}</table>`;
  }
  const body = figs
    .map((f, i) => {
      const json = scriptSafe(JSON.stringify(f.toJSON()));
      return [
        `<section class="figure"><div id="gdnlab-fig-${i}" class="plot"></div>`,
        `<noscript>${f.svg()}</noscript>`,
        `<script>(function(){var f=${json};Plotly.newPlot('gdnlab-fig-${i}',f.data,f.layout,f.config);})();</script></section>`,
      ].join('\n');
    })
    .join('\n');
  return [
    '<!DOCTYPE html>',
    '<html lang="en"><head><meta charset="utf-8">',
    `<title>${escapeXml(title)}</title>`,
    '<style>body{font-family:Helvetica,Arial,sans-serif;margin:2em auto;max-width:1000px;color:#222}' +
      'table.provenance{border-collapse:collapse;font-size:13px;margin-bottom:1.5em}table.provenance th,table.provenance td{border:1px solid #ddd;padding:3px 8px;text-align:left}' +
      'section.figure{margin:1.5em 0}</style>',
    `<script>${scriptSafe(plotly)}</script>`,
    '</head><body>',
    `<h1>${escapeXml(title)}</h1>`,
    header,
    body,
    '</body></html>',
  ].join('\n');
}
