// Results as danfojs DataFrames, shown as HTML tables in cells.
//
// danfojs-node is required lazily (it loads TensorFlow.js, about a second) on the first table()
// call. The displayed HTML is ours (number formatting per column), not danfo's console print.

import { describe } from '../dtype';
import { MIME_BUNDLE, display, inKernel } from './display';
import { CellFormat, htmlTable, textTable } from './format';

/** The parts of a danfojs DataFrame that gdnlab uses (danfojs-node's own type is loaded lazily). */
export interface DataFrameLike {
  shape: number[];
  columns: string[];
  values: unknown[];
}

export interface TableOptions {
  title?: string;
  /** Columns to show, in this order (default: every key, in order of first appearance). */
  columns?: string[];
  /** Per column: significant digits for numbers, or a function returning the cell text. */
  format?: Record<string, CellFormat>;
  /** Display in the kernel (default true). */
  show?: boolean;
  /** Rows shown in the HTML (default 200; the DataFrame keeps every row). */
  maxRows?: number;
}

let danfo: { DataFrame: new (data: unknown, opts?: { columns?: string[] }) => DataFrameLike } | undefined;

function loadDanfo(): NonNullable<typeof danfo> {
  // eslint-disable-next-line @typescript-eslint/no-var-requires
  danfo ??= require('danfojs-node');
  return danfo as NonNullable<typeof danfo>;
}

/** A cell value danfo can hold: numbers, strings, booleans; everything else as text. */
function cellValue(v: unknown): string | number | boolean | null {
  if (v === null || v === undefined) return null;
  if (typeof v === 'number' || typeof v === 'string' || typeof v === 'boolean') return v;
  if (typeof v === 'bigint') return Number(v);
  if (Array.isArray(v) || ArrayBuffer.isView(v)) return `[${Array.from(v as ArrayLike<unknown>).join(', ')}]`;
  if (v instanceof Date) return v.toISOString();
  const s = String(v);
  return s === '[object Object]' ? JSON.stringify(v) : s;
}

function columnsOf(rows: Record<string, unknown>[]): string[] {
  const cols: string[] = [];
  const seen = new Set<string>();
  for (const r of rows) for (const k of Object.keys(r)) if (!seen.has(k)) {
    seen.add(k);
    cols.push(k);
  }
  return cols;
}

/** The HTML and text renderings of rows (no danfo needed). */
export function renderTable(rows: Record<string, unknown>[], opts: TableOptions = {}): { html: string; text: string } {
  const columns = opts.columns ?? columnsOf(rows);
  const o = { caption: opts.title, format: opts.format, maxRows: opts.maxRows };
  return { html: htmlTable(columns, rows, o), text: textTable(columns, rows, o) };
}

/** Rows (objects) → a danfojs DataFrame over the chosen columns (missing cells are null). */
export function toDataFrame(rows: Record<string, unknown>[], columns?: string[]): DataFrameLike {
  const cols = columns ?? columnsOf(rows);
  const { DataFrame } = loadDanfo();
  if (rows.length === 0) return new DataFrame([], { columns: cols });
  return new DataFrame(
    rows.map((r) => cols.map((c) => cellValue(r[c]))),
    { columns: cols },
  );
}

/**
 * Shows rows as an HTML table (one display_data: text/html + text/plain) and returns them as a
 * DataFrame. As a cell's last value the DataFrame then adds nothing (its bundle method returns
 * null: no execute_result), so the table appears once.
 */
export function table(rows: Record<string, unknown>[], opts: TableOptions = {}): DataFrameLike {
  if (!Array.isArray(rows)) throw new TypeError(`rows: expected an array of objects, got ${describe(rows)}`);
  rows.forEach((r, i) => {
    if (!r || typeof r !== 'object' || Array.isArray(r)) throw new TypeError(`rows[${i}]: expected an object (column → value), got ${describe(r)}`);
  });
  const all = columnsOf(rows);
  if (opts.columns !== undefined) {
    if (!Array.isArray(opts.columns) || !opts.columns.every((c) => typeof c === 'string')) throw new TypeError(`columns: expected an array of column names, got ${describe(opts.columns)}`);
    const missing = opts.columns.filter((c) => !all.includes(c));
    if (rows.length && missing.length) throw new RangeError(`columns: ${missing.map((c) => `'${c}'`).join(', ')} not in the rows (columns: ${all.map((c) => `'${c}'`).join(', ')})`);
  }
  if (opts.format !== undefined) {
    for (const [k, f] of Object.entries(opts.format)) {
      if (typeof f !== 'function' && !(Number.isInteger(f) && f >= 1 && f <= 17)) throw new TypeError(`format.${k}: expected significant digits (1..17) or a function, got ${describe(f)}`);
    }
  }
  const columns = opts.columns ?? all;
  const df = toDataFrame(rows, columns);
  const { html, text } = renderTable(rows, { ...opts, columns });
  const shown = (opts.show ?? true) && inKernel();
  if (shown) display({ data: { 'text/html': html, 'text/plain': text }, metadata: {} });
  Object.defineProperty(df, MIME_BUNDLE, {
    value: () => (shown ? null : { data: { 'text/html': html, 'text/plain': text } }),
    enumerable: false,
    configurable: true,
  });
  return df;
}
