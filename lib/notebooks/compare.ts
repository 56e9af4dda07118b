// `gdnlab notebooks compare A.ipynb B.ipynb`: one HTML page with the tables and figures of two runs
// of a notebook side by side (before/after a change, host/H200), for a pull request.
//
// The page says at the top, in words, that this is a CROSS-RUN comparison: the two columns come from
// different runs (other clocks, load, maybe another device or revision), so a ratio read across
// them is not a within-run measurement (docs/BENCHMARKS.md, "Method"; timeArms refuses such comparisons
// unless asked). Each run's provenance (metadata.gdnlab.provenance, written by `notebooks run` and kept
// by `export`) heads its own column, and every run-specific piece of the page (the title's and the
// banner's halves, the column headings, the provenance tables, each section heading's two cells) names
// its own run's backend, device, revision and date, marked data-run-label="A" or "B" so a test can check
// each against its run. Outputs are paired in order: the k-th table of A beside the k-th table of B,
// likewise figures, under the heading of the section they are in. Figures are shown as their static
// PNG (or SVG), so the page needs no JavaScript.

import * as fs from 'fs';
import * as path from 'path';
import { Notebook, Output, PLOTLY_MIME, PNG_MIME, RUN_INFO_MIME, SVG_MIME, readNotebook, recordedProvenance, sourceText, textOf } from './ipynb';

export const CROSS_RUN_LABEL = 'Cross-run comparison';

export interface CompareItem {
  kind: 'table' | 'figure';
  /** The markdown heading the output is under. */
  section: string;
  cell: number;
  /** text/html of a table; for figures the PNG as base64, else the SVG. */
  html?: string;
  png?: string;
  svg?: string;
  plotly?: unknown;
  text: string;
}

export interface CompareSide {
  file: string;
  provenance: Record<string, unknown>;
  items: CompareItem[];
}

export interface Comparison {
  label: string;
  a: CompareSide;
  b: CompareSide;
  /** Pairs in order; a side is missing when one notebook has more outputs of that kind. */
  pairs: { kind: 'table' | 'figure'; section: string; a?: CompareItem; b?: CompareItem }[];
}

function provenanceOf(nb: Notebook): Record<string, unknown> {
  return recordedProvenance(nb) ?? { note: 'no provenance recorded in this notebook (not run by `gdnlab notebooks run` or `export`)' };
}

function isTable(o: Output): boolean {
  const html = o.data?.['text/html'];
  return typeof html === 'string' || Array.isArray(html) ? /<table[\s>]/.test(textOf(html)) && !o.data?.[RUN_INFO_MIME] : false;
}

function isFigure(o: Output): boolean {
  return !!o.data && (o.data[PLOTLY_MIME] !== undefined || o.data[PNG_MIME] !== undefined || o.data[SVG_MIME] !== undefined);
}

/** The tables and figures of a notebook, in order, each under its section heading. */
export function notebookItems(nb: Notebook): CompareItem[] {
  const items: CompareItem[] = [];
  let section = '(top)';
  nb.cells.forEach((cell, i) => {
    if (cell.cell_type === 'markdown') {
      const h = /^#{1,3}\s+(.+)$/m.exec(sourceText(cell));
      if (h) section = h[1].trim();
      return;
    }
    for (const o of cell.outputs ?? []) {
      if (o.output_type !== 'display_data' && o.output_type !== 'execute_result') continue;
      const text = textOf(o.data?.['text/plain'] ?? '');
      if (isFigure(o)) {
        items.push({ kind: 'figure', section, cell: i, png: o.data?.[PNG_MIME] ? textOf(o.data[PNG_MIME]).replace(/\s+/g, '') : undefined, svg: o.data?.[SVG_MIME] ? textOf(o.data[SVG_MIME]) : undefined, plotly: o.data?.[PLOTLY_MIME], text });
      } else if (isTable(o)) {
        items.push({ kind: 'table', section, cell: i, html: textOf(o.data?.['text/html']), text });
      }
    }
  });
  return items;
}

/** Pairs the two notebooks' tables and figures (k-th with k-th of the same kind). */
export function compareNotebooks(fileA: string, fileB: string): Comparison {
  const side = (file: string): CompareSide => {
    if (!fs.existsSync(file)) throw new Error(`notebook: ${file} does not exist`);
    const nb = readNotebook(file);
    return { file, provenance: provenanceOf(nb), items: notebookItems(nb) };
  };
  const a = side(fileA);
  const b = side(fileB);
  const pairs: Comparison['pairs'] = [];
  for (const kind of ['table', 'figure'] as const) {
    const xa = a.items.filter((x) => x.kind === kind);
    const xb = b.items.filter((x) => x.kind === kind);
    for (let k = 0; k < Math.max(xa.length, xb.length); k++) pairs.push({ kind, section: (xa[k] ?? xb[k]).section, a: xa[k], b: xb[k] });
  }
  // Back into notebook order (by A's cell, else B's).
  pairs.sort((p, q) => (p.a?.cell ?? p.b?.cell ?? 0) - (q.a?.cell ?? q.b?.cell ?? 0));
  return { label: CROSS_RUN_LABEL, a, b, pairs };
}

function esc(t: string): string {
  return t.replace(/[&<>"']/g, (ch) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[ch] as string);
}

/** Our own tables only carry markup; anything active is dropped all the same. */
function inert(html: string): string {
  return html.replace(/<script[\s\S]*?<\/script>/gi, '').replace(/\son\w+\s*=\s*("[^"]*"|'[^']*'|[^\s>]+)/gi, '');
}

function provenanceTable(p: Record<string, unknown>): string {
  const rows = Object.entries(p).map(([k, v]) => `<tr><th>${esc(k)}</th><td>${esc(typeof v === 'object' ? JSON.stringify(v) : String(v))}</td></tr>`);
  return `<table class="prov">${rows.join('')}</table>`;
}

/** backend · device · revision · date of one run ("?" for a fact the notebook does not record). */
export function shortProvenance(p: Record<string, unknown>): string {
  if (p.backend === undefined && p.device === undefined && p.revision === undefined && p.date === undefined) return String(p.note ?? 'unknown run');
  const fact = (v: unknown) => (v === undefined || v === null || v === '' ? '?' : String(v));
  return `${fact(p.backend)} · ${fact(p.device)} · revision ${fact(p.revision)} · ${fact(p.date)}`;
}

/** A run-specific piece of the page: its run's letter and facts, marked for the reader and for tests. */
function runLabel(tag: string, run: 'A' | 'B', p: Record<string, unknown>, inner: string): string {
  return `<${tag} data-run-label="${run}">${inner} <span class="run">(${run}: ${esc(shortProvenance(p))})</span></${tag}>`;
}

function itemHtml(x: CompareItem | undefined): string {
  if (!x) return '<p class="missing">— no matching output in this run —</p>';
  if (x.kind === 'table') return `<div class="tbl">${inert(x.html ?? '')}</div>`;
  if (x.png) return `<img alt="${esc(x.text)}" src="data:image/png;base64,${x.png}">`;
  if (x.svg) return `<img alt="${esc(x.text)}" src="data:image/svg+xml;base64,${Buffer.from(x.svg, 'utf8').toString('base64')}">`;
  return `<pre>${esc(x.text)}</pre>`;
}

/** The comparison as one self-contained HTML page (no scripts). */
export function comparisonHtml(c: Comparison): string {
  const name = (f: string) => path.basename(f);
  const title = `${c.label}: ${name(c.a.file)} (A) vs ${name(c.b.file)} (B)`;
  const pa = c.a.provenance;
  const pb = c.b.provenance;
  const rows = c.pairs
    .map((p, k) => [
      `<tr class="sec">${runLabel('td', 'A', pa, `${esc(p.section)} — ${p.kind} ${k + 1}`)}${runLabel('td', 'B', pb, `${esc(p.section)} — ${p.kind} ${k + 1}`)}</tr>`,
      `<tr><td>${itemHtml(p.a)}</td><td>${itemHtml(p.b)}</td></tr>`,
    ].join('\n'))
    .join('\n');
  return [
    '<!DOCTYPE html>',
    '<html lang="en"><head><meta charset="utf-8">',
    `<title>${esc(title)}</title>`,
    '<style>body{font-family:Helvetica,Arial,sans-serif;margin:1.5em;color:#222}' +
      '.banner{background:#fff4e5;border:2px solid #9a6700;padding:.6em 1em;margin-bottom:1em}' +
      'table.side{border-collapse:collapse;width:100%;table-layout:fixed}table.side>tbody>tr>td{vertical-align:top;padding:6px;border-top:1px solid #ddd;width:50%;overflow-x:auto}' +
      'tr.sec td{background:#f3f3f3;font-weight:bold}.run{font-weight:normal;color:#555;font-size:90%}img{max-width:100%}table.prov{border-collapse:collapse;font-size:12px}table.prov th,table.prov td{border:1px solid #ddd;padding:2px 6px;text-align:left}' +
      '.tbl table{border-collapse:collapse;font-size:12px}.tbl td,.tbl th{border:1px solid #ddd;padding:2px 5px}.missing{color:#888}</style>',
    '</head><body>',
    `<h1>${esc(c.label)}: ${runLabel('span', 'A', pa, esc(name(c.a.file)))} vs ${runLabel('span', 'B', pb, esc(name(c.b.file)))}</h1>`,
    `<div class="banner"><b>${esc(c.label)}</b> — the two columns are <b>different runs</b>: ${runLabel('span', 'A', pa, 'run A')}; ${runLabel('span', 'B', pb, 'run B')}. ` +
      'Clocks, temperature, load, and perhaps the device and the code differ between them: read each column on its own, and trust ratios only within a column (one run).</div>',
    '<table class="side"><thead><tr>',
    `${runLabel('th', 'A', pa, `A: ${esc(c.a.file)}`)}${runLabel('th', 'B', pb, `B: ${esc(c.b.file)}`)}</tr></thead><tbody>`,
    `<tr><td data-run-label="A">${provenanceTable(pa)}</td><td data-run-label="B">${provenanceTable(pb)}</td></tr>`,
    rows,
    '</tbody></table>',
    '</body></html>',
  ].join('\n');
}
