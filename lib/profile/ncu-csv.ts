// Nsight Compute's CSV, read back: `ncu --import REPORT --csv --page raw` (one row per profiled launch,
// one column per metric, the second line the metrics' units), and for robustness its `--page details`
// form (one row per metric: "Metric Name", "Metric Unit", "Metric Value"). Values become numbers in base
// units (ns, bytes, per second) whatever prefix ncu printed; a value ncu could not collect ("n/a") stays
// text, and a metric with no column is absent, so the caller can say which metrics are missing.

export interface NcuKernel {
  /** ncu's launch id (the order it profiled launches in, across processes). */
  id: number;
  processId: string;
  processName: string;
  kernelName: string;
  /** "(x, y, z)" as ncu prints it, or '' when the column is absent. */
  blockSize: string;
  gridSize: string;
  device: string;
  /** Compute capability, e.g. "9.0", or ''. */
  cc: string;
  /** Metric name → value in base units (number), or ncu's text when it is not a number ("n/a"). */
  metrics: Record<string, number | string>;
  /** Metric name → the unit of `metrics` after conversion ('ns', 'byte', '%', '' …). */
  units: Record<string, string>;
}

export interface NcuReport {
  kernels: NcuKernel[];
  /** 'raw' (one row per launch) or 'details' (one row per metric). */
  page: 'raw' | 'details';
  /** Every metric name the report has a column (raw) or a row (details) for. */
  metricNames: string[];
  /** Lines before the header that were not CSV (ncu's ==PROF== / ==WARNING== messages). */
  messages: string[];
}

export class NcuCsvError extends Error {}

/** RFC 4180 records: quoted fields may hold commas, doubled quotes and newlines. */
export function csvRecords(text: string): string[][] {
  const records: string[][] = [];
  let field = '';
  let record: string[] = [];
  let quoted = false;
  let any = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (quoted) {
      if (ch === '"') {
        if (text[i + 1] === '"') {
          field += '"';
          i++;
        } else quoted = false;
      } else field += ch;
      continue;
    }
    if (ch === '"') {
      quoted = true;
      any = true;
    } else if (ch === ',') {
      record.push(field);
      field = '';
      any = true;
    } else if (ch === '\n' || ch === '\r') {
      if (ch === '\r' && text[i + 1] === '\n') i++;
      if (any || field !== '') {
        record.push(field);
        records.push(record);
      }
      record = [];
      field = '';
      any = false;
    } else {
      field += ch;
      any = true;
    }
  }
  if (quoted) throw new NcuCsvError('CSV: a quoted field is not closed before the end of the text');
  if (any || field !== '') {
    record.push(field);
    records.push(record);
  }
  return records;
}

// Unit prefixes ncu prints (SI, as its --print-units auto does): time down to ns, sizes and rates up to T.
const TIME_TO_NS: Record<string, number> = { nsecond: 1, usecond: 1e3, msecond: 1e6, second: 1e9, ns: 1, us: 1e3, ms: 1e6, s: 1e9 };
const SIZE_PREFIX: Record<string, number> = { '': 1, K: 1e3, M: 1e6, G: 1e9, T: 1e12 };

/**
 * A value in base units: durations in ns, sizes in bytes, rates per second; percentages and plain
 * counts unchanged. Unknown units are kept as printed (the value unchanged).
 */
export function toBaseUnit(value: number, unit: string): { value: number; unit: string } {
  const u = unit.trim();
  if (u in TIME_TO_NS) return { value: value * TIME_TO_NS[u], unit: 'ns' };
  let m = /^([KMGT]?)byte$/.exec(u);
  if (m) return { value: value * SIZE_PREFIX[m[1]], unit: 'byte' };
  // ncu 2025.3 prints times as 'ns' where older versions printed 'nsecond'; rates may be spelled either way too.
  m = /^([KMGT]?)(byte|cycle|inst|warp|sector|request)\/(n|u|m)?s(?:econd)?$/.exec(u);
  if (m) {
    const per = m[3] === 'n' ? 1e9 : m[3] === 'u' ? 1e6 : m[3] === 'm' ? 1e3 : 1;
    return { value: value * SIZE_PREFIX[m[1]] * per, unit: `${m[2]}/second` };
  }
  m = /^([KMGT]?)hz$/i.exec(u);
  if (m) return { value: value * SIZE_PREFIX[m[1].toUpperCase()], unit: 'cycle/second' };
  return { value, unit: u };
}

/** A number as ncu prints it ("1,234,567.5" with thousands separators), or null for text ("n/a", ""). */
export function parseNcuNumber(text: string): number | null {
  const t = text.trim();
  if (!/^[-+]?(\d{1,3}(,\d{3})+|\d+)(\.\d+)?([eE][-+]?\d+)?$/.test(t)) return null;
  const v = Number(t.replace(/,/g, ''));
  return Number.isFinite(v) ? v : null;
}

const LAUNCH_COLUMNS: Record<string, keyof Omit<NcuKernel, 'metrics' | 'units' | 'id'>> = {
  'Process ID': 'processId', 'Process Name': 'processName', 'Kernel Name': 'kernelName',
  'Block Size': 'blockSize', 'Grid Size': 'gridSize', Device: 'device', CC: 'cc',
};
// Columns of the raw page that describe the launch rather than measure it.
const NOT_METRICS = new Set(['ID', 'Host Name', 'Context', 'Stream', 'Section Name', ...Object.keys(LAUNCH_COLUMNS)]);

function setMetric(k: NcuKernel, name: string, text: string, unit: string): void {
  const v = parseNcuNumber(text);
  if (v === null) {
    k.metrics[name] = text.trim();
    k.units[name] = unit.trim();
    return;
  }
  const b = toBaseUnit(v, unit);
  k.metrics[name] = b.value;
  k.units[name] = b.unit;
}

/** Parses the CSV of `ncu --csv --page raw` (or `--page details`). Throws NcuCsvError naming what is wrong. */
export function parseNcuCsv(text: string): NcuReport {
  if (typeof text !== 'string') throw new TypeError(`text: expected the CSV text ncu printed, got ${typeof text}`);
  // ncu's own messages (==PROF== …) and the profiled program's output may precede the header.
  const lines = text.split(/\r?\n/);
  const at = lines.findIndex((l) => /^"ID","/.test(l));
  if (at < 0) {
    const first = lines.find((l) => l.trim() !== '') ?? '';
    throw new NcuCsvError(`ncu CSV: no header line starting "ID" (was it printed with --csv?); the text starts ${JSON.stringify(first.slice(0, 120))}`);
  }
  const messages = lines.slice(0, at).filter((l) => l.trim() !== '');
  const records = csvRecords(lines.slice(at).join('\n'));
  const header = records[0];
  const col = (name: string) => header.indexOf(name);
  const kernels = new Map<string, NcuKernel>();
  const kernelFor = (row: string[], key: string): NcuKernel => {
    let k = kernels.get(key);
    if (!k) {
      const idText = row[col('ID')];
      const id = parseNcuNumber(idText);
      if (id === null) throw new NcuCsvError(`ncu CSV: launch id ${JSON.stringify(idText)} is not a number`);
      k = { id, processId: '', processName: '', kernelName: '', blockSize: '', gridSize: '', device: '', cc: '', metrics: {}, units: {} };
      for (const [name, field] of Object.entries(LAUNCH_COLUMNS)) if (col(name) >= 0) k[field] = row[col(name)] ?? '';
      kernels.set(key, k);
    }
    return k;
  };
  const checkWidth = (row: string[], n: number) => {
    if (row.length !== header.length) throw new NcuCsvError(`ncu CSV: line ${n} has ${row.length} fields, the header has ${header.length}`);
  };

  if (col('Metric Name') >= 0 && col('Metric Value') >= 0) {
    // --page details: one row per (launch, metric).
    const names = new Set<string>();
    const iName = col('Metric Name'), iUnit = col('Metric Unit'), iValue = col('Metric Value');
    records.slice(1).forEach((row, r) => {
      checkWidth(row, r + 2);
      const name = row[iName];
      if (!name) return;
      names.add(name);
      setMetric(kernelFor(row, `${row[col('ID')]}|${row[col('Process ID')] ?? ''}`), name, row[iValue], iUnit >= 0 ? row[iUnit] : '');
    });
    return { kernels: [...kernels.values()].sort((a, b) => a.id - b.id), page: 'details', metricNames: [...names], messages };
  }

  // --page raw: the header names the metrics; the next line holds their units (the launch columns' are empty).
  if (records.length < 2) throw new NcuCsvError('ncu CSV: the raw page has a header but no units line (no launch was profiled?)');
  const units = records[1];
  checkWidth(units, 2);
  if (units[col('ID')] !== '') throw new NcuCsvError(`ncu CSV: line 2 should be the units line (an empty "ID"), got ID ${JSON.stringify(units[col('ID')])}`);
  const metricCols = header.map((h, i) => ({ h, i })).filter(({ h }) => !NOT_METRICS.has(h));
  records.slice(2).forEach((row, r) => {
    checkWidth(row, r + 3);
    const k = kernelFor(row, `${row[col('ID')]}|${row[col('Process ID')] ?? ''}`);
    for (const { h, i } of metricCols) setMetric(k, h, row[i], units[i]);
  });
  return { kernels: [...kernels.values()].sort((a, b) => a.id - b.id), page: 'raw', metricNames: metricCols.map((c) => c.h), messages };
}

/** The numeric value of a metric, or null when the report has no number for it. */
export function metricValue(k: NcuKernel, name: string): number | null {
  const v = k.metrics[name];
  return typeof v === 'number' ? v : null;
}
