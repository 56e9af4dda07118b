// The parts of the Jupyter notebook format (nbformat 4) that the runner, the exporter and the tests read.

import * as fs from 'fs';

export const PLOTLY_MIME = 'application/vnd.plotly.v1+json';
export const SVG_MIME = 'image/svg+xml';
export const PNG_MIME = 'image/png';

export type MimeData = Record<string, unknown>;

export interface Output {
  output_type: 'stream' | 'display_data' | 'execute_result' | 'error' | 'update_display_data';
  name?: 'stdout' | 'stderr';
  text?: string | string[];
  data?: MimeData;
  metadata?: Record<string, unknown>;
  execution_count?: number | null;
  ename?: string;
  evalue?: string;
  traceback?: string[];
}

export interface Cell {
  cell_type: 'code' | 'markdown' | 'raw';
  source: string | string[];
  metadata: Record<string, unknown>;
  outputs?: Output[];
  execution_count?: number | null;
  id?: string;
}

export interface Notebook {
  cells: Cell[];
  metadata: Record<string, unknown>;
  nbformat: number;
  nbformat_minor: number;
}

/** An error output of a cell, as the report names it. */
export interface CellError {
  /** Index of the cell in the notebook (0-based, all cell types counted). */
  cell: number;
  ename: string;
  evalue: string;
  /** The traceback with terminal colour codes removed. */
  traceback: string;
}

export function readNotebook(file: string): Notebook {
  const nb = JSON.parse(fs.readFileSync(file, 'utf8')) as Notebook;
  if (!nb || !Array.isArray(nb.cells) || typeof nb.nbformat !== 'number') {
    throw new Error(`${file}: not a Jupyter notebook (expected a JSON object with "cells" and "nbformat")`);
  }
  return nb;
}

/** Writes a notebook the way Jupyter does (one-space indent, trailing newline), so diffs stay small. */
export function writeNotebook(file: string, nb: Notebook): void {
  fs.writeFileSync(file, JSON.stringify(nb, null, 1) + '\n');
}

export function sourceText(cell: Cell): string {
  return Array.isArray(cell.source) ? cell.source.join('') : cell.source;
}

export function textOf(value: unknown): string {
  if (Array.isArray(value)) return value.join('');
  return typeof value === 'string' ? value : JSON.stringify(value);
}

export function stripAnsi(text: string): string {
  return text.replace(/\u001b\[[0-9;]*[A-Za-z]/g, '');
}

export function codeCells(nb: Notebook): { index: number; cell: Cell }[] {
  return nb.cells.map((cell, index) => ({ index, cell })).filter(({ cell }) => cell.cell_type === 'code');
}

/** Code cells with something to run (an empty or whitespace-only cell produces no output by design). */
export function nonEmptyCodeCells(nb: Notebook): { index: number; cell: Cell }[] {
  return codeCells(nb).filter(({ cell }) => sourceText(cell).trim() !== '');
}

export function errorOutputs(nb: Notebook): CellError[] {
  const errors: CellError[] = [];
  nb.cells.forEach((cell, index) => {
    for (const out of cell.outputs ?? []) {
      if (out.output_type !== 'error') continue;
      errors.push({
        cell: index,
        ename: out.ename ?? '',
        evalue: out.evalue ?? '',
        traceback: stripAnsi((out.traceback ?? []).join('\n')),
      });
    }
  });
  return errors;
}

/** The facts of gdn.showRunInfo()'s output (lib/view/run-info.ts), as a MIME type of its display. */
export const RUN_INFO_MIME = 'application/vnd.gdnlab.run-info+json';

/**
 * Where the notebook's saved outputs came from: metadata.gdnlab.provenance (written by `notebooks run` and
 * by an executing export), else the facts of its first gdn.showRunInfo() output; null when it records neither.
 */
export function recordedProvenance(nb: Notebook): Record<string, unknown> | null {
  const meta = (nb.metadata.gdnlab as { provenance?: unknown } | undefined)?.provenance;
  if (meta && typeof meta === 'object' && !Array.isArray(meta)) return meta as Record<string, unknown>;
  for (const c of nb.cells) {
    for (const o of c.outputs ?? []) {
      const f = o.data?.[RUN_INFO_MIME];
      if (f && typeof f === 'object' && !Array.isArray(f)) return f as Record<string, unknown>;
    }
  }
  return null;
}

export function hasMime(out: Output, mime: string): boolean {
  return out.data !== undefined && Object.prototype.hasOwnProperty.call(out.data, mime);
}

/**
 * The figures of a notebook, per cell with a plotly output: a figure is ONE output carrying the
 * plotly JSON, a PNG (shown untrusted) and an SVG (lib/analysis/plot.ts), never a second image output.
 */
export interface PlotCheck {
  cell: number;
  plotlyOutputs: number;
  /** Plotly outputs that carry both image/png and image/svg+xml themselves. */
  withStaticImages: number;
  /** Image outputs in the cell without plotly JSON (a second copy of a figure). */
  separateImageOutputs: number;
}

export function plotChecks(nb: Notebook): PlotCheck[] {
  const checks: PlotCheck[] = [];
  nb.cells.forEach((cell, index) => {
    const outs = cell.outputs ?? [];
    const plotly = outs.filter((o) => hasMime(o, PLOTLY_MIME));
    if (plotly.length === 0) return;
    const withStaticImages = plotly.filter((o) => hasMime(o, PNG_MIME) && hasMime(o, SVG_MIME)).length;
    const separateImageOutputs = outs.filter((o) => !hasMime(o, PLOTLY_MIME) && (hasMime(o, SVG_MIME) || hasMime(o, PNG_MIME))).length;
    checks.push({ cell: index, plotlyOutputs: plotly.length, withStaticImages, separateImageOutputs });
  });
  return checks;
}
