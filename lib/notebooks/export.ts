// Exports a notebook for a pull request: executes it (through the gdnlab kernel), then writes
//   <name>.ipynb              the executed notebook, with its provenance in metadata.gdnlab
//   <name>.html               nbconvert's HTML page; plots show as their static SVG images
//   <name>.interactive.html   the same page with live plotly plots, plotly.js embedded once
// Both pages open with a provenance header with two parts: the run the outputs come from (revision,
// backend, device, date) and, apart from it, the export (the exporting machine's facts). An export that
// does not execute keeps the run's metadata.gdnlab.provenance as it was and records the exporter's facts
// in metadata.gdnlab.exportedBy: a notebook run on a GPU and exported elsewhere stays headed by its GPU run.

import { spawn } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { MimeData, Notebook, Output, PLOTLY_MIME, PNG_MIME, SVG_MIME, hasMime, readNotebook, recordedProvenance, writeNotebook } from './ipynb';
import { jupyterPython, nbtoolPath, projectRoot } from './paths';
import { BackendChoice, Report, RunOptions, runNotebook } from './run';
import { revision } from '../provenance';

export interface ExportOptions extends Omit<RunOptions, 'inplace' | 'outDir'> {
  /** Folder for the three files (created when missing). */
  outDir: string;
  /** Execute before exporting (default true); false exports the notebook's saved outputs as they are. */
  execute?: boolean;
}

export interface Provenance {
  notebook: string;
  revision: string;
  /** The backend the kernel ran on ("host" or "cuda"). */
  backend: string;
  /** How it was chosen, e.g. "auto → host (no usable CUDA device)". */
  backendChoice: string;
  device: string;
  /** ISO 8601, UTC. */
  date: string;
  gdnlabVersion: string;
  /** True when the outputs come from this export's own run. */
  executed: boolean;
}

export interface ExportResult {
  notebook: string;
  html: string;
  interactiveHtml: string;
  /**
   * Where the outputs come from: this export's own run (execute: true), else the notebook's recorded run
   * (metadata.gdnlab.provenance, or its gdn.showRunInfo() output), null when it records none.
   */
  provenance: Record<string, unknown> | null;
  /** The exporting machine's facts (metadata.gdnlab.exportedBy). */
  exportedBy: Provenance;
  /** The execution report (absent with execute: false). */
  report?: Report;
}

/** The backend GDN_BACKEND=`choice` resolves to, and its device's name (opened and closed here). */
function describeBackend(choice: BackendChoice): { backend: string; backendChoice: string; device: string } {
  // Loaded here so that running notebooks never loads the native library into this process.
  const b = require('../backend') as typeof import('../backend');
  let kind: 'host' | 'cuda' = choice === 'auto' ? 'host' : choice;
  let why = `GDN_BACKEND=${choice}`;
  if (choice === 'auto') {
    const n = b.cudaDeviceCount();
    kind = n > 0 ? 'cuda' : 'host';
    why = n > 0 ? `auto → cuda (${n} CUDA device${n > 1 ? 's' : ''})` : 'auto → host (no usable CUDA device)';
  }
  const backend = b.Backend.open(kind);
  try {
    return { backend: kind, backendChoice: why, device: backend.info().name };
  } finally {
    backend.close();
  }
}

/** The notebook's path relative to the project when it lies inside it, else absolute. */
function displayPath(file: string): string {
  const rel = path.relative(projectRoot(), file);
  // Outside is "../…" (a file is never the root's parent folder itself); a name inside that merely starts with
  // two dots ("..notes.ipynb") is inside.
  return rel.startsWith(`..${path.sep}`) || path.isAbsolute(rel) ? file : rel;
}

function gdnlabVersion(): string {
  const pkg = JSON.parse(fs.readFileSync(path.join(projectRoot(), 'package.json'), 'utf8')) as { version?: string };
  return pkg.version ?? 'unknown';
}

function escapeHtml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

/**
 * The header both pages open with: the run the outputs come from (class gdnlab-run), then the export
 * (class gdnlab-exported-by), each with its own revision, backend, device and date.
 */
export function provenanceHeader(run: Record<string, unknown> | null, exporter: Provenance): string {
  const text = (v: unknown) => (v === undefined || v === null || v === '' ? '?' : typeof v === 'object' ? JSON.stringify(v) : String(v));
  const row = (k: string, v: unknown) => `<tr><th style="text-align:left;padding:0 1em 0 0">${k}</th><td><code>${escapeHtml(text(v))}</code></td></tr>`;
  const facts = (p: Record<string, unknown>) => [
    row('revision', p.revision),
    row('backend', p.backendChoice ? `${text(p.backend)} (${text(p.backendChoice)})` : p.backend),
    row('device', p.device),
    row('date', p.date),
  ];
  const heading = (t: string) => `<tr><th colspan="2" style="text-align:left;padding-top:4px">${t}</th></tr>`;
  const runPart = run
    ? [heading(exporter.executed ? 'run: executed by this export' : 'run: the outputs as saved in the notebook (not re-executed)'), ...facts(run)]
    : [heading('run: not recorded in the notebook (no metadata.gdnlab.provenance, no gdn.showRunInfo() output); the outputs are as saved')];
  return [
    '<header class="gdnlab-provenance" style="font:14px/1.4 system-ui,sans-serif;border:1px solid #c8c8c8;border-radius:4px;padding:8px 12px;margin:12px auto;max-width:1100px;background:#f7f7f7">',
    `<div style="font-weight:600;margin-bottom:4px">gdnlab notebook export: ${escapeHtml(exporter.notebook)}</div>`,
    `<table class="gdnlab-run" style="border-collapse:collapse">${runPart.join('')}</table>`,
    `<table class="gdnlab-exported-by" style="border-collapse:collapse">${[heading('exported by'), ...facts(exporter as unknown as Record<string, unknown>), row('gdnlab', exporter.gdnlabVersion)].join('')}</table>`,
    '</header>',
  ].join('\n');
}

/** plotly.js for the interactive page: the minified bundle where npm has one, else plotly.js-dist's. */
export function plotlyBundlePath(): string {
  const nm = path.join(projectRoot(), 'node_modules');
  const candidates = [
    path.join(nm, 'plotly.js-dist-min', 'plotly.min.js'),
    path.join(nm, 'plotly.js-dist', 'plotly.min.js'),
    path.join(nm, 'plotly.js-dist', 'plotly.js'),
  ];
  const found = candidates.find((c) => fs.existsSync(c));
  if (!found) throw new Error(`plotly.js not found (looked for ${candidates.join(', ')}): run npm ci`);
  return found;
}

/** JSON that is safe inside a <script> element. */
function scriptJson(value: unknown): string {
  return JSON.stringify(value).replace(/</g, '\\u003c');
}

const isStaticImage = (o: Output) => !hasMime(o, PLOTLY_MIME) && (hasMime(o, SVG_MIME) || hasMime(o, PNG_MIME));

/**
 * The notebook for the interactive page: each plotly output becomes a <div> with its figure as JSON
 * (drawn by the page's one copy of plotly.js), and the static image that directly follows it, its
 * twin for viewers without JavaScript, is dropped.
 */
export function interactiveNotebook(nb: Notebook): Notebook {
  const copy = JSON.parse(JSON.stringify(nb)) as Notebook;
  let plot = 0;
  for (const cell of copy.cells) {
    if (!cell.outputs) continue;
    const outs: Output[] = [];
    for (let i = 0; i < cell.outputs.length; i++) {
      const out = cell.outputs[i];
      if (!hasMime(out, PLOTLY_MIME)) {
        outs.push(out);
        continue;
      }
      const id = `gdnlab-plot-${plot++}`;
      const data = out.data as MimeData; // hasMime: the output has data
      const html = `<div class="gdnlab-plotly" data-spec="${id}-spec" style="width:100%;min-height:420px"></div>\n<script type="application/json" id="${id}-spec">${scriptJson(data[PLOTLY_MIME])}</script>`;
      outs.push({ ...out, data: { 'text/html': html, 'text/plain': data['text/plain'] ?? '' } });
      if (i + 1 < cell.outputs.length && isStaticImage(cell.outputs[i + 1])) i++;
    }
    cell.outputs = outs;
  }
  return copy;
}

const PLOT_RENDERER = `<script>
document.querySelectorAll('div.gdnlab-plotly').forEach(function (div) {
  var spec = JSON.parse(document.getElementById(div.getAttribute('data-spec')).textContent);
  Plotly.newPlot(div, spec.data || [], spec.layout || {}, Object.assign({ responsive: true }, spec.config || {}));
});
</script>`;

/** nbconvert's page, made standalone: no require.js from a CDN, the provenance header, and plotly.js once when asked. */
export function finishPage(html: string, header: string, plotlyJs?: string): string {
  let page = html.replace(/<script src="[^"]*require(?:\.min)?\.js"><\/script>\s*/, '');
  if (!/<body[^>]*>/.test(page)) throw new Error('nbconvert output has no <body>: cannot add the provenance header');
  page = page.replace(/<body[^>]*>/, (body) => `${body}\n${header}\n`);
  if (plotlyJs !== undefined) {
    const inline = plotlyJs.replace(/<\/script/gi, '<\\/script');
    page = page.replace(/<head[^>]*>/, (head) => `${head}\n<script>${inline}</script>\n`);
    page = page.replace(/<\/body>/, `${PLOT_RENDERER}\n</body>`);
  }
  return page;
}

function nbconvertHtml(pairs: [string, string][], python: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(python, [nbtoolPath(), 'html', ...pairs.flat()], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (c: Buffer) => (stderr = (stderr + c.toString('utf8')).slice(-8192)));
    child.on('error', (err) => reject(new Error(`starting ${python}: ${err.message}`)));
    child.on('close', (status) => (status === 0 ? resolve() : reject(new Error(`nbconvert failed (exit status ${String(status)}): ${stderr.trim()}`))));
  });
}

/** Executes (unless told not to) and exports one notebook; see the file comment for what it writes. */
export async function exportNotebook(notebook: string, opts: ExportOptions): Promise<ExportResult> {
  if (!opts || typeof opts.outDir !== 'string' || opts.outDir === '') throw new TypeError('outDir: expected the folder to write the export into');
  const input = path.resolve(notebook);
  if (!fs.existsSync(input)) throw new Error(`notebook: ${notebook} does not exist`);
  const outDir = path.resolve(opts.outDir);
  fs.mkdirSync(outDir, { recursive: true });
  const stem = path.basename(input, '.ipynb');
  const executedPath = path.join(outDir, `${stem}.ipynb`);
  const { execute = true, ...runOpts } = opts;

  let report: Report | undefined;
  if (execute) {
    report = await runNotebook(input, { ...runOpts, inplace: false, outDir });
    if (!report.ok) throw new Error(`${path.basename(input)} did not run cleanly, so it was not exported:\n  ${report.problems.join('\n  ')}`);
  } else if (executedPath !== input) {
    fs.copyFileSync(input, executedPath);
  }

  const choice: BackendChoice = report?.backend ?? (opts.backend ?? ((process.env.GDN_BACKEND as BackendChoice) || 'auto'));
  const exportedBy: Provenance = {
    notebook: displayPath(input),
    revision: revision(),
    ...describeBackend(choice),
    date: new Date().toISOString(),
    gdnlabVersion: gdnlabVersion(),
    executed: execute,
  };
  const nb = readNotebook(executedPath);
  // Executed here: this export's run is the outputs' run. Not executed: the recorded run stays as it was.
  const provenance = execute ? { ...exportedBy } : recordedProvenance(nb);
  const gdnlab = { ...((nb.metadata.gdnlab as object | undefined) ?? {}), exportedBy };
  nb.metadata.gdnlab = execute ? { ...gdnlab, provenance } : gdnlab;
  writeNotebook(executedPath, nb);

  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'gdnlab-export-'));
  const html = path.join(outDir, `${stem}.html`);
  const interactiveHtml = path.join(outDir, `${stem}.interactive.html`);
  try {
    const interactiveNb = path.join(work, `${stem}.ipynb`);
    writeNotebook(interactiveNb, interactiveNotebook(nb));
    const staticRaw = path.join(work, 'static.html');
    const interactiveRaw = path.join(work, 'interactive.html');
    await nbconvertHtml([[executedPath, staticRaw], [interactiveNb, interactiveRaw]], opts.python ?? jupyterPython());
    const header = provenanceHeader(provenance, exportedBy);
    fs.writeFileSync(html, finishPage(fs.readFileSync(staticRaw, 'utf8'), header));
    const plotlyJs = fs.readFileSync(plotlyBundlePath(), 'utf8');
    fs.writeFileSync(interactiveHtml, finishPage(fs.readFileSync(interactiveRaw, 'utf8'), header, plotlyJs));
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
  return { notebook: executedPath, html, interactiveHtml, provenance, exportedBy, report };
}
