// The figure model: the subset of plotly.js's JSON schema that gdnlab's plots emit. The same object
// goes to plotly (live, `application/vnd.plotly.v1+json`) and to our SVG renderer (static image).
// Written for plotly.js 3 and 4: titles are always { text }.

export interface AxisTitle {
  text: string;
}

export interface Axis {
  title?: AxisTitle;
  type?: 'linear' | 'log' | 'category';
  autorange?: boolean | 'reversed';
  /** Explicit range (log axes: log10 of the ends, as in plotly). */
  range?: [number, number];
  zeroline?: boolean;
  automargin?: boolean;
}

export interface BarTrace {
  type: 'bar';
  name?: string;
  x: string[];
  y: number[];
  marker?: { color?: string };
  opacity?: number;
  showlegend?: boolean;
  hovertemplate?: string;
}

/** A horizontal box from precomputed statistics (one box per trace). */
export interface BoxTrace {
  type: 'box';
  orientation: 'h';
  name: string;
  y: [string];
  q1: [number];
  median: [number];
  q3: [number];
  lowerfence: [number];
  upperfence: [number];
  mean?: [number];
  boxpoints: false;
  marker?: { color?: string };
  line?: { color?: string };
  fillcolor?: string;
  showlegend?: boolean;
}

/** A horizontal violin over (capped) samples. */
export interface ViolinTrace {
  type: 'violin';
  orientation: 'h';
  name: string;
  y0: string;
  x: number[];
  points: false;
  box: { visible: boolean };
  meanline: { visible: boolean };
  line?: { color?: string };
  fillcolor?: string;
  spanmode?: 'hard' | 'soft';
  showlegend?: boolean;
}

/** Lines (histograms are drawn as filled steps: line.shape 'hv'). */
export interface ScatterTrace {
  type: 'scatter';
  mode: 'lines';
  name?: string;
  x: number[];
  y: number[];
  line?: { color?: string; shape?: 'linear' | 'hv'; width?: number };
  fill?: 'none' | 'tozeroy';
  fillcolor?: string;
  showlegend?: boolean;
  hovertemplate?: string;
}

/** A heat map over bricks: x and y are cell edges (one more than z's columns and rows). */
export interface HeatmapTrace {
  type: 'heatmap';
  x: number[];
  y: number[];
  z: number[][];
  zmin: number;
  zmax: number;
  colorscale: [number, string][];
  colorbar?: { title?: AxisTitle };
  hovertemplate?: string;
  name?: string;
}

export type Trace = BarTrace | BoxTrace | ViolinTrace | ScatterTrace | HeatmapTrace;

export interface Layout {
  title?: AxisTitle;
  width?: number;
  height?: number;
  xaxis?: Axis;
  yaxis?: Axis;
  barmode?: 'group' | 'overlay';
  showlegend?: boolean;
  margin?: { l?: number; r?: number; t?: number; b?: number };
  /** Lines under the title (e.g. provenance), shown in the static image too. */
  annotations?: { text: string; xref: 'paper'; yref: 'paper'; x: number; y: number; showarrow: false; xanchor?: string; yanchor?: string; font?: { size?: number } }[];
  template?: unknown;
}

export interface PlotlySpec {
  data: Trace[];
  layout: Layout;
  config?: Record<string, unknown>;
}

/** plotly's default qualitative palette (D3 category10), set explicitly so both renderers agree. */
export const PALETTE = ['#1f77b4', '#ff7f0e', '#2ca02c', '#d62728', '#9467bd', '#8c564b', '#e377c2', '#7f7f7f', '#bcbd22', '#17becf'];

export function paletteColor(i: number): string {
  return PALETTE[i % PALETTE.length];
}

/** '#rrggbb' with alpha as 'rgba(r,g,b,a)'. */
export function withAlpha(hex: string, alpha: number): string {
  const m = /^#([0-9a-f]{2})([0-9a-f]{2})([0-9a-f]{2})$/i.exec(hex);
  if (!m) return hex;
  return `rgba(${parseInt(m[1], 16)},${parseInt(m[2], 16)},${parseInt(m[3], 16)},${alpha})`;
}
