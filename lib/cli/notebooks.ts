// `gdnlab notebooks run|export|compare`: the command-line side of lib/notebooks (run.ts, export.ts, compare.ts).

import * as fs from 'fs';
import * as path from 'path';
import type { BackendChoice, Report } from '../notebooks/run';
import { projectRoot, shippedNotebooks } from '../notebooks/paths';
import { Command, Flag, Parsed, UsageError } from './args';

const BACKEND: Flag = { name: 'backend', value: 'auto|host|cuda', choices: ['auto', 'host', 'cuda'], help: 'GDN_BACKEND of the kernel that runs the notebooks' };
const TIMEOUT: Flag = { name: 'timeout', value: 'SECONDS', help: 'per notebook, a whole positive number' };
const JSON_OUT: Flag = { name: 'json', help: 'the reports as JSON on stdout' };

function timeoutOf(args: Parsed): number | undefined {
  const v = args.flags.get('timeout');
  if (v === undefined) return undefined;
  const n = Number(v);
  if (!Number.isInteger(n) || n <= 0) throw new UsageError(`--timeout: expected a positive whole number of seconds, got '${String(v)}'`);
  return n;
}

const str = (args: Parsed, name: string) => (typeof args.flags.get(name) === 'string' ? (args.flags.get(name) as string) : undefined);

function describe(r: Report): string {
  const name = path.relative(process.cwd(), r.notebook) || r.notebook;
  const head = `${r.ok ? 'ok    ' : 'FAILED'} ${name}  (${r.executedCells}/${r.codeCells} code cells, ${r.sizeBytes} bytes, ${r.durationS.toFixed(1)} s, GDN_BACKEND=${r.backend})`;
  if (r.ok) return head;
  const lines = [head, ...r.problems.map((p) => `         ${p}`)];
  for (const e of r.errors) lines.push(e.traceback.split('\n').map((l) => `         | ${l}`).join('\n'));
  if (r.errors.length === 0 && r.stderrTail) lines.push(r.stderrTail.split('\n').map((l) => `         ! ${l}`).join('\n'));
  return lines.join('\n');
}

export const notebooksRunCommand: Command = {
  words: ['notebooks', 'run'],
  summary: 'executes notebooks headless through the gdnlab kernel and saves their outputs',
  operands: { usage: '[NOTEBOOK.ipynb ...]', min: 0, max: Infinity },
  flags: [BACKEND, TIMEOUT, { name: 'out', value: 'DIR', aliases: ['out-dir', 'o'], help: 'save copies in DIR instead of in place' }, JSON_OUT],
  details: [
    'Without paths: every notebooks/*.ipynb. Fails on any error output, a kernel that dies or times out,',
    'or a saved notebook of 1 MB or more.',
  ],
  async run(args) {
    const { runNotebooks } = await import('../notebooks/run');
    const paths = args.operands.length > 0 ? args.operands : shippedNotebooks();
    if (paths.length === 0) throw new Error(`no notebooks given and none in ${path.join(projectRoot(), 'notebooks')}`);
    const json = args.flags.has('json');
    const reports = await runNotebooks(paths, {
      backend: str(args, 'backend') as BackendChoice | undefined,
      timeoutS: timeoutOf(args),
      outDir: str(args, 'out'),
      log: json ? undefined : (l) => console.error(l),
    });
    if (json) console.log(JSON.stringify(reports, null, 2));
    else for (const r of reports) console.log(describe(r));
    const failed = reports.filter((r) => !r.ok).length;
    if (!json) console.log(`${reports.length - failed} notebooks ok, ${failed} failed`);
    return failed === 0 ? 0 : 1;
  },
};

export const notebooksExportCommand: Command = {
  words: ['notebooks', 'export'],
  summary: 'executes a notebook and writes it as .ipynb, .html (static plots) and .interactive.html',
  operands: { usage: 'NOTEBOOK.ipynb', min: 1, max: 1 },
  flags: [{ name: 'out', value: 'DIR', aliases: ['out-dir', 'o'], help: 'where the three files go (default out/export)' }, BACKEND, TIMEOUT, { name: 'no-execute', help: 'export the saved outputs as they are' }, JSON_OUT],
  details: ['Each file carries a provenance header (revision, backend, device, date); plotly.js is embedded once.'],
  async run(args) {
    const { exportNotebook } = await import('../notebooks/export');
    const json = args.flags.has('json');
    const result = await exportNotebook(args.operands[0], {
      outDir: str(args, 'out') ?? path.join(projectRoot(), 'out', 'export'),
      backend: str(args, 'backend') as BackendChoice | undefined,
      timeoutS: timeoutOf(args),
      execute: !args.flags.has('no-execute'),
      log: json ? undefined : (l) => console.error(l),
    });
    if (json) console.log(JSON.stringify({ ...result, report: undefined }, null, 2));
    else console.log([`notebook          ${result.notebook}`, `html              ${result.html}`, `interactive html  ${result.interactiveHtml}`].join('\n'));
    return 0;
  },
};

export const notebooksCompareCommand: Command = {
  words: ['notebooks', 'compare'],
  summary: "two runs' tables and timing figures side by side, labelled as a cross-run comparison",
  operands: { usage: 'A.ipynb B.ipynb', min: 2, max: 2 },
  flags: [{ name: 'out', value: 'OUT.html', aliases: ['o'], help: 'write the page to OUT.html (default: stdout)' }, { name: 'json', help: 'the pairs of outputs as JSON on stdout' }],
  async run(args) {
    const { compareNotebooks, comparisonHtml } = await import('../notebooks/compare');
    const c = compareNotebooks(args.operands[0], args.operands[1]);
    if (args.flags.has('json')) {
      console.log(JSON.stringify(c, null, 1));
      return 0;
    }
    const html = comparisonHtml(c);
    const out = str(args, 'out');
    if (out) {
      fs.mkdirSync(path.dirname(path.resolve(out)), { recursive: true });
      fs.writeFileSync(out, html);
      console.error(`${c.label}: ${c.pairs.length} pairs of outputs → ${out}`);
    } else console.log(html);
    return 0;
  },
};
