// A small offline SVG renderer for the figure model in figure.ts: axes (linear, log, category),
// ticks, grid, labels, legend, bars, boxes, violins, step lines and heat maps. It draws what
// gdnlab's plots emit, readably, with no JavaScript, so nbconvert's HTML and GitHub show the plot.
//
// Output stays compact: coordinates rounded to 0.1 px, heat-map cells merged into one <path> per
// colour level (runs of equal cells joined), no clip paths or ids (several SVGs can share a page).

import { escapeXml } from './format';
import { Axis, BarTrace, BoxTrace, HeatmapTrace, PlotlySpec, ScatterTrace, Trace, ViolinTrace, paletteColor } from './figure';

const FONT = 12;
const CHAR_W = 6.6; // average glyph width of a 12px sans-serif, for layout estimates

function r1(x: number): number {
  return Math.round(x * 10) / 10;
}

/** fill/stroke attributes for a colour, with rgba() split into colour + opacity (SVG 1.1 safe). */
function paint(attr: 'fill' | 'stroke', color: string, opacity = 1): string {
  const m = /^rgba\((\d+),\s*(\d+),\s*(\d+),\s*([\d.]+)\)$/.exec(color);
  let c = color;
  let a = opacity;
  if (m) {
    c = '#' + [m[1], m[2], m[3]].map((v) => Number(v).toString(16).padStart(2, '0')).join('');
    a *= Number(m[4]);
  }
  return a < 1 ? `${attr}="${c}" ${attr}-opacity="${r1(a * 100) / 100}"` : `${attr}="${c}"`;
}

// ------------------------------------------------------------------------------------------ scales

interface Scale {
  kind: 'linear' | 'log' | 'category';
  /** Data value → pixel (categories: the category's index). */
  px(v: number): number;
  ticks: { at: number; label: string }[];
  /** Category band width in px (categories only). */
  band: number;
  categories: string[];
}

/** A tick label: short, no float fuzz. */
export function tickLabel(v: number): string {
  if (v === 0) return '0';
  const a = Math.abs(v);
  // Exponent notation only outside [0.001, 1e9), as everywhere in gdnlab's numbers (format.ts).
  if (a >= 1e9 || a < 1e-3) {
    const [m, e] = v.toExponential(2).split('e');
    const mant = String(Number(m));
    return `${mant === '1' ? '' : mant === '-1' ? '-' : `${mant}×`}1e${Number(e)}`.replace('×1e', 'e');
  }
  const x = Number(v.toPrecision(6));
  return a >= 1e4 ? x.toLocaleString('en-US', { maximumFractionDigits: 6 }) : String(x);
}

function niceStep(span: number, target: number): number {
  const raw = span / Math.max(target, 1);
  const mag = 10 ** Math.floor(Math.log10(raw));
  const f = raw / mag;
  return (f < 1.5 ? 1 : f < 3 ? 2 : f < 7 ? 5 : 10) * mag;
}

function linearTicks(lo: number, hi: number, target: number): number[] {
  if (!(hi > lo)) return [lo];
  const step = niceStep(hi - lo, target);
  const out: number[] = [];
  for (let v = Math.ceil(lo / step - 1e-9) * step; v <= hi + step * 1e-9; v += step) out.push(Math.abs(v) < step * 1e-9 ? 0 : Number(v.toPrecision(12)));
  return out;
}

function logTicks(lo: number, hi: number, target: number): number[] {
  const a = Math.log10(lo);
  const b = Math.log10(hi);
  if (b - a < 1) return linearTicks(lo, hi, Math.min(target, 5));
  const every = Math.max(1, Math.ceil((b - a) / target));
  const out: number[] = [];
  for (let e = Math.ceil(a - 1e-9); e <= b + 1e-9; e += every) {
    out.push(10 ** e);
    if (every === 1 && b - a < 3) for (const m of [2, 5]) if (m * 10 ** e <= hi && m * 10 ** e >= lo) out.push(m * 10 ** e);
  }
  return out.sort((x, y) => x - y);
}

function numericScale(kind: 'linear' | 'log', lo: number, hi: number, p0: number, p1: number, target: number): Scale {
  if (kind === 'log') {
    const a = Math.log10(lo);
    const b = Math.log10(hi);
    const span = b - a || 1;
    return { kind, px: (v) => p0 + ((Math.log10(v) - a) / span) * (p1 - p0), ticks: logTicks(lo, hi, target).map((at) => ({ at, label: tickLabel(at) })), band: 0, categories: [] };
  }
  const span = hi - lo || 1;
  return { kind, px: (v) => p0 + ((v - lo) / span) * (p1 - p0), ticks: linearTicks(lo, hi, target).map((at) => ({ at, label: tickLabel(at) })), band: 0, categories: [] };
}

function categoryScale(categories: string[], p0: number, p1: number): Scale {
  const n = Math.max(categories.length, 1);
  const band = (p1 - p0) / n;
  return { kind: 'category', px: (i) => p0 + (i + 0.5) * band, ticks: categories.map((c, i) => ({ at: i, label: c })), band: Math.abs(band), categories };
}

/** Pads a numeric extent: linear by 5% (keeping 0 when the data starts there), log by a factor. */
function padExtent(kind: 'linear' | 'log', lo: number, hi: number, fromZero: boolean): [number, number] {
  if (kind === 'log') {
    if (!(lo > 0)) lo = hi > 0 ? hi / 10 : 1;
    if (!(hi > 0)) hi = 10;
    if (hi / lo < 1.0001) return [lo / 1.5, hi * 1.5];
    const f = (hi / lo) ** 0.04;
    return [lo / f, hi * f];
  }
  if (!(hi > lo)) {
    const d = Math.abs(lo) * 0.1 || 1;
    return [fromZero ? Math.min(0, lo) : lo - d, hi + d];
  }
  const pad = (hi - lo) * 0.05;
  return [fromZero && lo >= 0 ? 0 : lo - pad, hi + pad];
}

// ------------------------------------------------------------------------------------------ layout

function traceName(t: Trace): string {
  return ('name' in t && t.name) || '';
}

function extent(values: number[], positiveOnly: boolean): [number, number] {
  let lo = Infinity;
  let hi = -Infinity;
  for (const v of values) {
    if (!Number.isFinite(v) || (positiveOnly && v <= 0)) continue;
    if (v < lo) lo = v;
    if (v > hi) hi = v;
  }
  return [lo, hi];
}

function textWidth(s: string, size = FONT): number {
  return s.length * CHAR_W * (size / FONT);
}

// ------------------------------------------------------------------------------------------ shapes

/** Gaussian kernel density at `points`, Silverman bandwidth (computed on transformed values). */
export function kde(values: number[], points: number[]): { density: number[]; bandwidth: number } {
  const n = values.length;
  const mean = values.reduce((a, b) => a + b, 0) / n;
  const sd = Math.sqrt(values.reduce((a, b) => a + (b - mean) ** 2, 0) / Math.max(n - 1, 1));
  const s = [...values].sort((a, b) => a - b);
  const q = (p: number) => s[Math.min(n - 1, Math.max(0, Math.round(p * (n - 1))))];
  const iqr = q(0.75) - q(0.25);
  const spread = Math.min(sd, iqr > 0 ? iqr / 1.34 : sd);
  const h = 0.9 * (spread > 0 ? spread : Math.abs(mean) * 1e-3 || 1e-3) * n ** -0.2;
  const density = points.map((x) => {
    let acc = 0;
    for (const v of values) acc += Math.exp(-0.5 * ((x - v) / h) ** 2);
    return acc;
  });
  return { density, bandwidth: h };
}

interface Frame {
  x0: number;
  x1: number;
  y0: number;
  y1: number;
}

function drawBars(traces: BarTrace[], xs: Scale, ys: Scale, overlay: boolean, baseline: number, out: string[]): void {
  const k = overlay ? 1 : traces.length;
  const width = (xs.band * 0.8) / k;
  traces.forEach((t, ti) => {
    const color = t.marker?.color ?? paletteColor(ti);
    const parts: string[] = [];
    t.x.forEach((cat, i) => {
      const v = t.y[i];
      if (!Number.isFinite(v) || v === 0 || (ys.kind === 'log' && v <= 0)) return;
      const ci = xs.categories.indexOf(cat);
      const left = xs.px(ci) - xs.band * 0.4 + (overlay ? 0 : ti * width);
      const top = ys.px(v);
      const yb = baseline;
      parts.push(`M${r1(left)} ${r1(Math.min(top, yb))}h${r1(width)}v${r1(Math.abs(yb - top))}h${r1(-width)}z`);
    });
    if (parts.length) out.push(`<path d="${parts.join('')}" ${paint('fill', color, t.opacity ?? 1)}/>`);
  });
}

function drawBox(t: BoxTrace, i: number, xs: Scale, ys: Scale, out: string[]): void {
  const color = t.line?.color ?? t.marker?.color ?? paletteColor(i);
  const yc = ys.px(ys.categories.indexOf(t.y[0]));
  const h = ys.band * 0.5;
  const [q1, med, q3, lo, hi] = [t.q1[0], t.median[0], t.q3[0], t.lowerfence[0], t.upperfence[0]].map((v) => xs.px(v));
  out.push(`<g ${paint('stroke', color)} stroke-width="1.5">`);
  out.push(`<rect x="${r1(Math.min(q1, q3))}" y="${r1(yc - h / 2)}" width="${r1(Math.abs(q3 - q1))}" height="${r1(h)}" ${paint('fill', t.fillcolor ?? color, t.fillcolor ? 1 : 0.3)}/>`);
  out.push(`<path d="M${r1(med)} ${r1(yc - h / 2)}V${r1(yc + h / 2)}M${r1(lo)} ${r1(yc)}H${r1(Math.min(q1, q3))}M${r1(Math.max(q1, q3))} ${r1(yc)}H${r1(hi)}M${r1(lo)} ${r1(yc - h / 4)}V${r1(yc + h / 4)}M${r1(hi)} ${r1(yc - h / 4)}V${r1(yc + h / 4)}" fill="none"/>`);
  if (t.mean) out.push(`<path d="M${r1(xs.px(t.mean[0]))} ${r1(yc - h / 2)}V${r1(yc + h / 2)}" stroke-dasharray="3 2" fill="none"/>`);
  out.push('</g>');
}

function drawViolin(t: ViolinTrace, i: number, xs: Scale, ys: Scale, out: string[]): void {
  const color = t.line?.color ?? paletteColor(i);
  const ci = ys.categories.indexOf(t.y0);
  const yc = ys.px(ci);
  const half = ys.band * 0.42;
  const fwd = xs.kind === 'log' ? (v: number) => Math.log10(v) : (v: number) => v;
  const back = xs.kind === 'log' ? (v: number) => 10 ** v : (v: number) => v;
  const vals = t.x.filter((v) => Number.isFinite(v) && (xs.kind !== 'log' || v > 0)).map(fwd);
  if (vals.length === 0) return;
  const lo = Math.min(...vals);
  const hi = Math.max(...vals);
  if (hi - lo <= Math.abs(lo) * 1e-9) {
    const x = xs.px(back(lo));
    out.push(`<path d="M${r1(x)} ${r1(yc - half)}V${r1(yc + half)}" ${paint('stroke', color)} stroke-width="2"/>`);
    return;
  }
  const steps = 48;
  const points = Array.from({ length: steps + 1 }, (_, k) => lo + ((hi - lo) * k) / steps);
  const { density } = kde(vals, points);
  const peak = Math.max(...density) || 1;
  const top = points.map((p, k) => `${r1(xs.px(back(p)))} ${r1(yc - (density[k] / peak) * half)}`);
  const bottom = points.map((p, k) => `${r1(xs.px(back(p)))} ${r1(yc + (density[k] / peak) * half)}`).reverse();
  out.push(`<path d="M${top.join('L')}L${bottom.join('L')}z" ${paint('fill', t.fillcolor ?? color, t.fillcolor ? 1 : 0.35)} ${paint('stroke', color)} stroke-width="1"/>`);
  if (t.box.visible || t.meanline.visible) {
    const s = [...vals].sort((a, b) => a - b);
    const q = (p: number) => {
      const h = (s.length - 1) * p;
      const f = Math.floor(h);
      return s[f] + (h - f) * ((s[Math.min(f + 1, s.length - 1)] ?? s[f]) - s[f]);
    };
    if (t.box.visible) {
      const bh = Math.max(3, half * 0.18);
      const x1 = xs.px(back(q(0.25)));
      const x3 = xs.px(back(q(0.75)));
      out.push(`<rect x="${r1(x1)}" y="${r1(yc - bh / 2)}" width="${r1(Math.max(x3 - x1, 0.5))}" height="${r1(bh)}" ${paint('fill', color)}/>`);
      out.push(`<path d="M${r1(xs.px(back(q(0.5))))} ${r1(yc - bh / 2)}V${r1(yc + bh / 2)}" stroke="#ffffff" stroke-width="2"/>`);
    }
    if (t.meanline.visible) {
      const mean = back(vals.reduce((a, b) => a + b, 0) / vals.length);
      out.push(`<path d="M${r1(xs.px(mean))} ${r1(yc - half * 0.7)}V${r1(yc + half * 0.7)}" ${paint('stroke', color)} stroke-dasharray="3 2"/>`);
    }
  }
}

function drawScatter(t: ScatterTrace, i: number, xs: Scale, ys: Scale, baseline: number, out: string[]): void {
  const color = t.line?.color ?? paletteColor(i);
  const pts: [number, number][] = [];
  for (let k = 0; k < t.x.length; k++) {
    const x = t.x[k];
    const y = t.y[k];
    if (!Number.isFinite(x) || !Number.isFinite(y) || (xs.kind === 'log' && x <= 0) || (ys.kind === 'log' && y <= 0)) continue;
    pts.push([xs.px(x), ys.px(y)]);
  }
  if (pts.length === 0) return;
  const segs: string[] = [`M${r1(pts[0][0])} ${r1(pts[0][1])}`];
  for (let k = 1; k < pts.length; k++) {
    if (t.line?.shape === 'hv') segs.push(`H${r1(pts[k][0])}V${r1(pts[k][1])}`);
    else segs.push(`L${r1(pts[k][0])} ${r1(pts[k][1])}`);
  }
  const line = segs.join('');
  if (t.fill === 'tozeroy') {
    out.push(`<path d="${line}V${r1(baseline)}H${r1(pts[0][0])}z" ${paint('fill', t.fillcolor ?? color, t.fillcolor ? 1 : 0.25)}/>`);
  }
  out.push(`<path d="${line}" fill="none" ${paint('stroke', color)} stroke-width="${t.line?.width ?? 1.5}"/>`);
}

function parseHex(c: string): [number, number, number] {
  const m = /^#([0-9a-f]{2})([0-9a-f]{2})([0-9a-f]{2})$/i.exec(c);
  return m ? [parseInt(m[1], 16), parseInt(m[2], 16), parseInt(m[3], 16)] : [0, 0, 0];
}

/** The colour of t ∈ [0, 1] on a colorscale of [position, '#rrggbb'] stops. */
export function colorAt(scale: [number, string][], t: number): string {
  const u = Math.min(1, Math.max(0, t));
  let k = 0;
  while (k < scale.length - 2 && u > scale[k + 1][0]) k++;
  const [p0, c0] = scale[k];
  const [p1, c1] = scale[Math.min(k + 1, scale.length - 1)];
  const f = p1 > p0 ? (u - p0) / (p1 - p0) : 0;
  const a = parseHex(c0);
  const b = parseHex(c1);
  return '#' + a.map((v, i) => Math.round(v + (b[i] - v) * f).toString(16).padStart(2, '0')).join('');
}

const HEAT_LEVELS = 9;

function drawHeatmap(t: HeatmapTrace, xs: Scale, ys: Scale, out: string[]): void {
  const span = t.zmax - t.zmin || 1;
  const levelOf = (v: number) => (v > t.zmin ? Math.max(1, Math.min(HEAT_LEVELS - 1, Math.ceil(((v - t.zmin) / span) * (HEAT_LEVELS - 1)))) : 0);
  // Whole-pixel cell edges, rounded once, so neighbouring cells share edges (no gaps) and paths stay short.
  const px = t.x.map((v) => Math.round(xs.px(v)));
  const py = t.y.map((v) => Math.round(ys.px(v)));
  const paths: string[][] = Array.from({ length: HEAT_LEVELS }, () => []);
  for (let i = 0; i < t.z.length; i++) {
    const row = t.z[i];
    const top = Math.min(py[i], py[i + 1]);
    const h = Math.abs(py[i + 1] - py[i]);
    if (h === 0) continue;
    let j = 0;
    while (j < row.length) {
      const level = levelOf(row[j]);
      let k = j + 1;
      while (k < row.length && levelOf(row[k]) === level) k++;
      const w = px[k] - px[j];
      if (level > 0 && w > 0) paths[level].push(`M${px[j]} ${top}h${w}v${h}h-${w}z`);
      j = k;
    }
  }
  paths.forEach((p, level) => {
    if (p.length) out.push(`<path d="${p.join('')}" fill="${colorAt(t.colorscale, level / (HEAT_LEVELS - 1))}"/>`);
  });
}

function drawColorbar(t: HeatmapTrace, x: number, y0: number, y1: number, out: string[]): void {
  const h = (y1 - y0) / (HEAT_LEVELS - 1);
  for (let level = 1; level < HEAT_LEVELS; level++) {
    const top = y1 - level * h;
    out.push(`<rect x="${r1(x)}" y="${r1(top)}" width="12" height="${r1(h)}" fill="${colorAt(t.colorscale, level / (HEAT_LEVELS - 1))}"/>`);
  }
  out.push(`<rect x="${r1(x)}" y="${r1(y0)}" width="12" height="${r1(y1 - y0)}" fill="none" stroke="#888"/>`);
  out.push(`<text x="${r1(x + 16)}" y="${r1(y0 + 4)}" font-size="10">${escapeXml(tickLabel(Number(t.zmax.toPrecision(3))))}</text>`);
  out.push(`<text x="${r1(x + 16)}" y="${r1(y1 + 3)}" font-size="10">${escapeXml(tickLabel(t.zmin))}</text>`);
  const title = t.colorbar?.title?.text;
  if (title) out.push(`<text transform="translate(${r1(x + 46)} ${r1((y0 + y1) / 2)}) rotate(90)" text-anchor="middle" font-size="10">${escapeXml(title)}</text>`);
}

// ------------------------------------------------------------------------------------------ render

export interface SvgOptions {
  width?: number;
  height?: number;
}

/** Renders the figure as a standalone SVG document (a string). */
export function renderSvg(fig: PlotlySpec, opts: SvgOptions = {}): string {
  const layout = fig.layout ?? {};
  const W = opts.width ?? layout.width ?? 720;
  const H = opts.height ?? layout.height ?? 400;
  const traces = fig.data ?? [];
  const bars = traces.filter((t): t is BarTrace => t.type === 'bar');
  const boxes = traces.filter((t): t is BoxTrace => t.type === 'box');
  const violins = traces.filter((t): t is ViolinTrace => t.type === 'violin');
  const lines = traces.filter((t): t is ScatterTrace => t.type === 'scatter');
  const heat = traces.filter((t): t is HeatmapTrace => t.type === 'heatmap');
  const xAxis: Axis = layout.xaxis ?? {};
  const yAxis: Axis = layout.yaxis ?? {};

  // Which axis is categorical, and the categories in order of appearance.
  const catX = bars.length > 0;
  const catY = boxes.length + violins.length > 0;
  const catsX: string[] = [];
  const catsY: string[] = [];
  for (const t of bars) for (const c of t.x) if (!catsX.includes(c)) catsX.push(c);
  for (const t of boxes) if (!catsY.includes(t.y[0])) catsY.push(t.y[0]);
  for (const t of violins) if (!catsY.includes(t.y0)) catsY.push(t.y0);

  // Numeric extents.
  const xKind = catX ? 'category' : xAxis.type === 'log' ? 'log' : 'linear';
  const yKind = catY ? 'category' : yAxis.type === 'log' ? 'log' : 'linear';
  const xVals: number[] = [];
  const yVals: number[] = [];
  for (const t of boxes) xVals.push(t.lowerfence[0], t.upperfence[0], t.q1[0], t.q3[0]);
  for (const t of violins) xVals.push(...t.x);
  for (const t of lines) {
    xVals.push(...t.x);
    yVals.push(...t.y);
  }
  for (const t of bars) yVals.push(...t.y);
  for (const t of heat) {
    xVals.push(t.x[0], t.x[t.x.length - 1]);
    yVals.push(t.y[0], t.y[t.y.length - 1]);
  }
  const fromZeroY = bars.length > 0 || lines.some((t) => t.fill === 'tozeroy');

  // Margins.
  const legendItems = [...bars, ...lines].filter((t) => traceName(t) && t.showlegend !== false);
  const showLegend = layout.showlegend ?? legendItems.length > 1;
  const legendW = showLegend && legendItems.length ? Math.min(220, Math.max(...legendItems.map((t) => textWidth(traceName(t)))) + 34) : 0;
  const colorbarW = heat.length ? 64 : 0;
  const title = layout.title?.text ?? '';
  const notes = (layout.annotations ?? []).map((a) => a.text);
  const top = (title ? 30 : 12) + notes.length * 14;
  const xTitle = xAxis.title?.text ?? '';
  const yTitle = yAxis.title?.text ?? '';
  const bottom = 34 + (xTitle ? 16 : 0);

  // Provisional y scale for tick label widths.
  let yExt = catY ? ([0, 0] as [number, number]) : extent(yVals, yKind === 'log');
  if (!catY) yExt = heat.length ? yExt : padExtent(yKind as 'linear' | 'log', yExt[0], yExt[1], fromZeroY);
  if (!catY && !Number.isFinite(yExt[0])) yExt = [0, 1];
  const yTickProbe = catY ? catsY : (yKind === 'log' ? logTicks(yExt[0], yExt[1], 6) : linearTicks(yExt[0], yExt[1], 6)).map(tickLabel);
  const left = Math.min(300, Math.max(44, Math.max(0, ...yTickProbe.map((s) => textWidth(s))) + 14 + (yTitle ? 18 : 0)));
  const right = 16 + legendW + colorbarW;
  const frame: Frame = { x0: left, x1: W - right, y0: top, y1: H - bottom };

  // Scales.
  let xs: Scale;
  if (catX) xs = categoryScale(catsX, frame.x0, frame.x1);
  else {
    let [lo, hi] = extent(xVals, xKind === 'log');
    if (!Number.isFinite(lo)) [lo, hi] = xKind === 'log' ? [1, 10] : [0, 1];
    if (!heat.length) [lo, hi] = padExtent(xKind as 'linear' | 'log', lo, hi, false);
    if (xAxis.range) [lo, hi] = xKind === 'log' ? [10 ** xAxis.range[0], 10 ** xAxis.range[1]] : xAxis.range;
    xs = numericScale(xKind as 'linear' | 'log', lo, hi, frame.x0, frame.x1, Math.max(3, Math.floor((frame.x1 - frame.x0) / 90)));
  }
  const yReversed = yAxis.autorange === 'reversed';
  let ys: Scale;
  if (catY) ys = yReversed ? categoryScale(catsY, frame.y0, frame.y1) : categoryScale(catsY, frame.y1, frame.y0);
  else {
    let [lo, hi] = yExt;
    if (yAxis.range) [lo, hi] = yKind === 'log' ? [10 ** yAxis.range[0], 10 ** yAxis.range[1]] : yAxis.range;
    ys = numericScale(yKind as 'linear' | 'log', lo, hi, yReversed ? frame.y0 : frame.y1, yReversed ? frame.y1 : frame.y0, Math.max(3, Math.floor((frame.y1 - frame.y0) / 50)));
  }

  const out: string[] = [];
  out.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="Helvetica, Arial, sans-serif" font-size="${FONT}">`);
  out.push(`<rect x="0" y="0" width="${W}" height="${H}" fill="#ffffff"/>`);
  if (title) out.push(`<text x="${r1(W / 2)}" y="20" text-anchor="middle" font-size="15" font-weight="bold">${escapeXml(title)}</text>`);
  notes.forEach((n, k) => out.push(`<text x="${r1(W / 2)}" y="${r1((title ? 34 : 14) + k * 14)}" text-anchor="middle" font-size="10" fill="#555555">${escapeXml(n)}</text>`));

  // Grid and ticks.
  const grid: string[] = [];
  const tickMarks: string[] = [];
  const labels: string[] = [];
  for (const t of xs.ticks) {
    const x = xs.px(t.at);
    if (x < frame.x0 - 0.5 || x > frame.x1 + 0.5) continue;
    if (xs.kind !== 'category') grid.push(`M${r1(x)} ${r1(frame.y0)}V${r1(frame.y1)}`);
    tickMarks.push(`M${r1(x)} ${r1(frame.y1)}v4`);
    labels.push(`<text x="${r1(x)}" y="${r1(frame.y1 + 16)}" text-anchor="middle">${escapeXml(clip(t.label, xs.kind === 'category' ? Math.max(4, Math.floor(xs.band / CHAR_W)) : 14))}</text>`);
  }
  for (const t of ys.ticks) {
    const y = ys.px(t.at);
    if (y < frame.y0 - 0.5 || y > frame.y1 + 0.5) continue;
    if (ys.kind !== 'category') grid.push(`M${r1(frame.x0)} ${r1(y)}H${r1(frame.x1)}`);
    tickMarks.push(`M${r1(frame.x0)} ${r1(y)}h-4`);
    labels.push(`<text x="${r1(frame.x0 - 7)}" y="${r1(y + 4)}" text-anchor="end">${escapeXml(clip(t.label, 44))}</text>`);
  }
  if (grid.length) out.push(`<path d="${grid.join('')}" stroke="#e6e6e6" fill="none"/>`);

  // Traces.
  if (heat.length) for (const t of heat) drawHeatmap(t, xs, ys, out);
  // Bars and filled lines rise from 0 (linear) or from the bottom edge (log).
  const baseline = ys.kind === 'log' ? (yReversed ? frame.y0 : frame.y1) : ys.kind === 'linear' ? Math.min(frame.y1, Math.max(frame.y0, ys.px(0))) : frame.y1;
  if (bars.length) drawBars(bars, xs, ys, layout.barmode === 'overlay', baseline, out);
  lines.forEach((t, i) => drawScatter(t, i, xs, ys, baseline, out));
  boxes.forEach((t, i) => drawBox(t, i, xs, ys, out));
  violins.forEach((t, i) => drawViolin(t, i, xs, ys, out));

  // Frame, ticks, labels, axis titles.
  out.push(`<rect x="${r1(frame.x0)}" y="${r1(frame.y0)}" width="${r1(frame.x1 - frame.x0)}" height="${r1(frame.y1 - frame.y0)}" fill="none" stroke="#444444"/>`);
  if (tickMarks.length) out.push(`<path d="${tickMarks.join('')}" stroke="#444444"/>`);
  out.push(...labels);
  if (xTitle) out.push(`<text x="${r1((frame.x0 + frame.x1) / 2)}" y="${r1(H - 8)}" text-anchor="middle">${escapeXml(xTitle)}</text>`);
  if (yTitle) out.push(`<text transform="translate(14 ${r1((frame.y0 + frame.y1) / 2)}) rotate(-90)" text-anchor="middle">${escapeXml(yTitle)}</text>`);

  if (heat.length) drawColorbar(heat[0], frame.x1 + 10, frame.y0, frame.y1, out);

  // Legend.
  if (showLegend && legendItems.length) {
    const lx = frame.x1 + colorbarW + 12;
    legendItems.forEach((t, k) => {
      const y = frame.y0 + 8 + k * 18;
      const color = (t.type === 'bar' ? t.marker?.color : t.line?.color) ?? paletteColor(traces.filter((u) => u.type === t.type).indexOf(t));
      out.push(`<rect x="${r1(lx)}" y="${r1(y - 5)}" width="14" height="10" ${paint('fill', color)}/>`);
      out.push(`<text x="${r1(lx + 20)}" y="${r1(y + 4)}">${escapeXml(clip(traceName(t), 28))}</text>`);
    });
  }
  out.push('</svg>');
  return out.join('\n');
}

function clip(s: string, max: number): string {
  return s.length <= max ? s : `${s.slice(0, Math.max(1, max - 1))}…`;
}
