// Number formatting and small HTML helpers shared by tables, summaries and figures.

/** Escapes text for HTML and XML (element content and attribute values). */
export function escapeXml(text: string): string {
  return text.replace(/[&<>"']/g, (ch) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[ch] as string);
}

/**
 * A number for people: whole numbers in full (thousands separated when over 4 digits), other values with
 * `digits` significant digits and never in exponent notation between 0.001 and 10^9 (values of
 * 10^digits or more are rounded to whole numbers and grouped: 17,702, not 1.770e+4). Exponent
 * notation only below 0.001 or from 10^9 on. NaN and ±Inf as words.
 */
export function formatNumber(x: number, digits = 4): string {
  if (Number.isNaN(x)) return 'NaN';
  if (x === Infinity) return 'Inf';
  if (x === -Infinity) return '-Inf';
  // Counts and sizes are exact: whole numbers in full, grouped.
  if (Number.isInteger(x) && Math.abs(x) < 1e15) return groupThousands(x);
  const ax = Math.abs(x);
  if (ax !== 0 && (ax < 1e-3 || ax >= 1e9)) return x.toExponential(Math.max(digits - 1, 0)).replace(/\.?0+e/, 'e').replace('e+', 'e');
  return significant(x, digits).replace(/(\.\d*?)0+$/, '$1').replace(/\.$/, '');
}

/**
 * v at `digits` significant digits, trailing zeros kept, never in exponent notation: from 10^digits on, and where
 * rounding carries there (9999.5 → "1.000e+4" by toPrecision), a whole number, grouped. For |v| ≥ 0.001.
 */
function significant(v: number, digits: number): string {
  if (Math.abs(v) >= 10 ** digits) return groupThousands(Math.round(v));
  const s = v.toPrecision(digits);
  return s.includes('e') ? groupThousands(Number(s)) : s;
}

/**
 * A duration given in µs, as people read it: 4 significant digits in µs below 1 ms, in ms below
 * 1 s, else in s ("0.8123 µs", "412.3 µs", "17.70 ms", "2.345 s"); trailing zeros kept, so the
 * precision shows.
 */
export function formatDuration(us: number, digits = 4): string {
  if (!Number.isFinite(us)) return formatNumber(us);
  const ax = Math.abs(us);
  const [v, unit] = ax < 1000 ? [us, 'µs'] : ax < 1e6 ? [us / 1000, 'ms'] : [us / 1e6, 's'];
  if (v === 0) return `0 ${unit}`;
  if (Math.abs(v) < 1e-3) return `${formatNumber(v, digits)} ${unit}`;
  return `${significant(v, digits)} ${unit}`;
}

/** A percentage with 3–4 significant digits ("97.3%", "112.4%", "0.512%"). */
export function formatPercent(p: number): string {
  if (!Number.isFinite(p)) return formatNumber(p);
  return `${formatNumber(p, Math.abs(p) >= 100 ? 4 : 3)}%`;
}

function groupThousands(n: number): string {
  const s = Math.abs(n).toString();
  if (s.length <= 4) return n < 0 ? `-${s}` : s;
  const grouped = s.replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  return n < 0 ? `-${grouped}` : grouped;
}

/** x rounded to `digits` significant digits (for compact JSON); integers and non-finite values unchanged. */
export function roundSig(x: number, digits = 4): number {
  if (!Number.isFinite(x) || x === 0 || Number.isInteger(x)) return x;
  return Number(x.toPrecision(digits));
}

/** A cell value as text: numbers through formatNumber, arrays joined, objects as compact JSON. */
export function formatValue(v: unknown, digits = 4): string {
  if (v === null || v === undefined) return '';
  if (typeof v === 'number') return formatNumber(v, digits);
  if (typeof v === 'bigint') return v.toString();
  if (typeof v === 'string') return v;
  if (typeof v === 'boolean') return v ? 'yes' : 'no';
  if (v instanceof Date) return v.toISOString();
  if (Array.isArray(v) || ArrayBuffer.isView(v)) {
    const items = Array.from(v as ArrayLike<unknown>);
    if (items.every((x) => typeof x === 'number') && items.length <= 8) return `[${items.map((x) => formatNumber(x as number, digits)).join(', ')}]`;
    if (items.length > 8) return `[${items.length} items]`;
    return `[${items.map((x) => formatValue(x, digits)).join(', ')}]`;
  }
  if (typeof v === 'object') {
    const s = (v as object).toString();
    if (s !== '[object Object]') return s;
    try {
      return JSON.stringify(v);
    } catch {
      return '[object]';
    }
  }
  return String(v);
}

export type CellFormat = number | ((value: unknown) => string);

/** Formats one cell by the column's format (significant digits or a function). */
export function formatCell(value: unknown, format?: CellFormat): string {
  if (typeof format === 'function') return format(value);
  return formatValue(value, format ?? 4);
}

export interface HtmlTableOptions {
  caption?: string;
  format?: Record<string, CellFormat>;
  /** Rows shown at most (the rest is summarised in a last line). */
  maxRows?: number;
}

/** An HTML table of rows over columns; numbers right-aligned. */
export function htmlTable(columns: readonly string[], rows: readonly Record<string, unknown>[], opts: HtmlTableOptions = {}): string {
  const maxRows = opts.maxRows ?? 200;
  const shown = rows.slice(0, maxRows);
  const head = columns.map((c) => `<th>${escapeXml(c)}</th>`).join('');
  const body = shown
    .map((r) => {
      const cells = columns.map((c) => {
        const v = r[c];
        const align = typeof v === 'number' ? ' style="text-align:right"' : '';
        return `<td${align}>${escapeXml(formatCell(v, opts.format?.[c]))}</td>`;
      });
      return `<tr>${cells.join('')}</tr>`;
    })
    .join('\n');
  const more = rows.length > shown.length ? `\n<tr><td colspan="${columns.length}">… ${rows.length - shown.length} more rows</td></tr>` : '';
  const caption = opts.caption ? `<caption style="caption-side:top;text-align:left;font-weight:bold">${escapeXml(opts.caption)}</caption>` : '';
  return `<table class="gdnlab-table">${caption}<thead><tr>${head}</tr></thead>\n<tbody>\n${body}${more}\n</tbody></table>`;
}

/** A plain-text table with aligned columns (text/plain fallbacks). */
export function textTable(columns: readonly string[], rows: readonly Record<string, unknown>[], opts: HtmlTableOptions = {}): string {
  const maxRows = opts.maxRows ?? 200;
  const shown = rows.slice(0, maxRows);
  const cells = shown.map((r) => columns.map((c) => formatCell(r[c], opts.format?.[c])));
  const widths = columns.map((c, j) => Math.max(c.length, ...cells.map((row) => row[j].length)));
  const numeric = columns.map((c) => shown.length > 0 && shown.every((r) => typeof r[c] === 'number' || r[c] === undefined || r[c] === null));
  const line = (vals: string[]) => vals.map((v, j) => (numeric[j] ? v.padStart(widths[j]) : v.padEnd(widths[j]))).join('  ').trimEnd();
  const out = [];
  if (opts.caption) out.push(opts.caption);
  out.push(line([...columns]), widths.map((w) => '-'.repeat(w)).join('  '));
  for (const row of cells) out.push(line(row));
  if (rows.length > shown.length) out.push(`… ${rows.length - shown.length} more rows`);
  return out.join('\n');
}
