// A static PNG of a figure, rasterised offline from our own SVG (svg.ts) with @resvg/resvg-js.
//
// Why a PNG as well as the SVG: JupyterLab does not render an untrusted notebook's SVG (a reopened
// notebook is untrusted), but it does render PNG; nbconvert's HTML and GitHub show either. Fonts:
// the system's, plus $GDNLAB_FONT_DIR (the GPU bundle carries Liberation Sans there, because a bare
// GPU machine may have no fonts at all and resvg then draws no text).

import * as fs from 'fs';

interface ResvgModule {
  Resvg: new (svg: string, opts?: Record<string, unknown>) => { render(): { asPng(): Buffer; width: number; height: number } };
}

let resvg: ResvgModule | undefined;
let loadError: string | undefined;

function load(): ResvgModule | undefined {
  if (resvg || loadError) return resvg;
  try {
    // eslint-disable-next-line @typescript-eslint/no-var-requires
    resvg = require('@resvg/resvg-js') as ResvgModule;
  } catch (e) {
    loadError = `@resvg/resvg-js could not be loaded (${(e as Error).message.split('\n')[0]})`;
  }
  return resvg;
}

/** Why PNGs cannot be made in this process, or undefined when they can. */
export function pngUnavailable(): string | undefined {
  load();
  return loadError;
}

function fontOptions(): Record<string, unknown> {
  const dirs = (process.env.GDNLAB_FONT_DIR ?? '').split(':').filter((d) => d && fs.existsSync(d));
  return {
    loadSystemFonts: true,
    fontDirs: dirs,
    // svg.ts asks for "Helvetica, Arial, sans-serif"; Liberation Sans has Arial's metrics.
    sansSerifFamily: 'Liberation Sans',
    defaultFontFamily: 'Liberation Sans',
  };
}

export interface PngImage {
  png: Buffer;
  width: number;
  height: number;
}

/** Rasterises an SVG document (white background, `scale` × its own size); throws when resvg is missing. */
export function svgToPng(svg: string, scale = 1): PngImage {
  if (typeof svg !== 'string' || !svg.includes('<svg')) throw new TypeError('svg: expected an SVG document as a string');
  if (!(scale > 0 && scale <= 4)) throw new RangeError(`scale: expected a number in (0, 4], got ${String(scale)}`);
  const mod = load();
  if (!mod) throw new Error(`svgToPng: ${loadError}`);
  const img = new mod.Resvg(svg, { background: '#ffffff', fitTo: { mode: 'zoom', value: scale }, font: fontOptions(), logLevel: 'off' }).render();
  return { png: img.asPng(), width: img.width, height: img.height };
}

/**
 * Shows a hand-drawn SVG diagram (diagrams.ts) as one output: the SVG, its PNG (so that an
 * untrusted notebook still shows it) and a text line. Returns false outside a kernel.
 */
export function showDiagram(svg: string, text: string): boolean {
  if (typeof text !== 'string' || text === '') throw new TypeError('text: expected a non-empty description of the diagram');
  // eslint-disable-next-line @typescript-eslint/no-var-requires
  const { display } = require('./display') as typeof import('./display');
  const data: Record<string, unknown> = {};
  const metadata: Record<string, unknown> = {};
  if (!pngUnavailable()) {
    const img = svgToPng(svg);
    data['image/png'] = img.png.toString('base64');
    metadata['image/png'] = { width: img.width, height: img.height };
  }
  data['image/svg+xml'] = svg;
  data['text/plain'] = text;
  return display({ data, metadata });
}
