// Small notebooks made on the fly for the runner's, exporter's and browser tests.

import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { Notebook, writeNotebook } from '../../lib/notebooks/ipynb';

export const GDNLAB_KERNELSPEC = { name: 'gdnlab', display_name: 'gdnlab (TypeScript)', language: 'typescript' };

/** A notebook of code cells (markdown cells when a source starts with "md:"), for the gdnlab kernel. */
export function makeNotebook(sources: string[]): Notebook {
  return {
    cells: sources.map((src, i) =>
      src.startsWith('md:')
        ? { id: `cell-${i}`, cell_type: 'markdown' as const, source: src.slice(3), metadata: {} }
        : { id: `cell-${i}`, cell_type: 'code' as const, source: src, metadata: {}, outputs: [], execution_count: null },
    ),
    metadata: { kernelspec: GDNLAB_KERNELSPEC },
    nbformat: 4,
    nbformat_minor: 5,
  };
}

export function tempDir(prefix: string): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), `gdnlab-${prefix}-`));
}

export function writeTempNotebook(dir: string, name: string, sources: string[]): string {
  const file = path.join(dir, name);
  writeNotebook(file, makeNotebook(sources));
  return file;
}

/** A cell that shows a small figure as gdnlab does: ONE output with plotly JSON, a PNG, the SVG and a text line. */
export const PLOT_CELL = `
const channel = (globalThis as any)[Symbol.for('gdnlab.kernel')];
const figure = { data: [{ type: 'scatter', x: [1, 2, 3], y: [3, 1, 2], name: 'arm' }], layout: { title: { text: 'runner test plot' } } };
const svg = '<svg xmlns="http://www.w3.org/2000/svg" width="120" height="60"><rect width="120" height="60" fill="#3366cc"/></svg>';
// A 1×1 PNG stands in for the rasterised figure (lib/view/png.ts makes the real one).
const png = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';
channel.display({ 'application/vnd.plotly.v1+json': figure, 'image/png': png, 'image/svg+xml': svg, 'text/plain': 'Figure "runner test plot"' });
`;

/** A cell that shows an HTML table through the display channel. */
export const TABLE_CELL = `
(globalThis as any)[Symbol.for('gdnlab.kernel')].display({ 'text/html': '<table class="gdnlab-test-table"><tr><th>arm</th><th>mismatches</th></tr><tr><td>tiled</td><td>0</td></tr></table>', 'text/plain': 'table' });
`;

/** Decoded SVG images of an nbconvert HTML page (nbconvert embeds each as a base64 data URI). */
export function svgImagesInHtml(html: string): string[] {
  const images: string[] = [];
  const re = /data-mime-type="image\/svg\+xml"[^>]*>\s*<img[^>]*src="data:image\/svg\+xml;base64,([A-Za-z0-9+/=]+)"/g;
  for (let m = re.exec(html); m !== null; m = re.exec(html)) images.push(Buffer.from(m[1], 'base64').toString('utf8'));
  return images;
}
