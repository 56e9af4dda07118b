// `gdnlab notebooks run|export ...`: the command-line side of run.ts and export.ts.

import * as fs from 'fs';
import * as path from 'path';
import { BackendChoice, Report, runNotebooks } from './run';
import { exportNotebook } from './export';
import { projectRoot, shippedNotebooks } from './paths';

export const NOTEBOOKS_USAGE = `usage:
  gdnlab notebooks run [NOTEBOOK.ipynb ...] [--backend auto|host|cuda] [--timeout SECONDS] [--out DIR] [--json]
      Executes notebooks headless through the gdnlab kernel and saves their outputs (in place, or
      as copies in DIR). Without paths: every notebooks/*.ipynb. Fails on any error output, a
      kernel that dies or times out, or a saved notebook of 1 MB or more.
  gdnlab notebooks export NOTEBOOK.ipynb [--out DIR] [--backend auto|host|cuda] [--timeout SECONDS] [--no-execute] [--json]
      Executes the notebook and writes DIR/NAME.ipynb, DIR/NAME.html (static plots) and
      DIR/NAME.interactive.html (live plots, plotly.js embedded once), each with a provenance
      header (revision, backend, device, date). DIR defaults to out/export.
  gdnlab notebooks compare A.ipynb B.ipynb [-o OUT.html] [--json]
      One HTML page with the two runs' tables and figures side by side, labelled as a cross-run
      comparison with both runs' provenance (to OUT.html, else to stdout; --json: the pairs as JSON).`;

interface Io {
  out: (line: string) => void;
  err: (line: string) => void;
}

const defaultIo: Io = { out: (l) => process.stdout.write(l + '\n'), err: (l) => process.stderr.write(l + '\n') };

interface Parsed {
  paths: string[];
  backend?: BackendChoice;
  timeoutS?: number;
  outDir?: string;
  json: boolean;
  execute: boolean;
}

function parse(args: string[]): Parsed {
  const parsed: Parsed = { paths: [], json: false, execute: true };
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    const value = () => {
      const v = args[++i];
      if (v === undefined) throw new Error(`${arg}: expected a value`);
      return v;
    };
    if (arg === '--backend') {
      const v = value();
      if (v !== 'auto' && v !== 'host' && v !== 'cuda') throw new Error(`--backend: expected auto, host or cuda, got '${v}'`);
      parsed.backend = v;
    } else if (arg === '--timeout') {
      const v = Number(value());
      if (!Number.isInteger(v) || v <= 0) throw new Error(`--timeout: expected a positive whole number of seconds, got '${args[i]}'`);
      parsed.timeoutS = v;
    } else if (arg === '--out-dir' || arg === '--out' || arg === '-o') parsed.outDir = value();
    else if (arg === '--json') parsed.json = true;
    else if (arg === '--no-execute') parsed.execute = false;
    else if (arg.startsWith('-')) throw new Error(`unknown option '${arg}'`);
    else parsed.paths.push(arg);
  }
  return parsed;
}

function describe(r: Report): string {
  const name = path.relative(process.cwd(), r.notebook) || r.notebook;
  const head = `${r.ok ? 'ok    ' : 'FAILED'} ${name}  (${r.executedCells}/${r.codeCells} code cells, ${r.sizeBytes} bytes, ${r.durationS.toFixed(1)} s, GDN_BACKEND=${r.backend})`;
  if (r.ok) return head;
  const lines = [head, ...r.problems.map((p) => `         ${p}`)];
  for (const e of r.errors) lines.push(e.traceback.split('\n').map((l) => `         | ${l}`).join('\n'));
  if (r.errors.length === 0 && r.stderrTail) lines.push(r.stderrTail.split('\n').map((l) => `         ! ${l}`).join('\n'));
  return lines.join('\n');
}

/** Runs `gdnlab notebooks <args>`; returns the process exit status (0 ok, 1 failed, 2 usage). */
export async function notebooksCommand(argv: string[], io: Io = defaultIo): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub === undefined || sub === '--help' || sub === '-h' || sub === 'help') {
    io.out(NOTEBOOKS_USAGE);
    return sub === undefined ? 2 : 0;
  }
  let opts: Parsed;
  try {
    opts = parse(rest);
  } catch (e) {
    io.err(`gdnlab notebooks ${sub}: ${(e as Error).message}\n${NOTEBOOKS_USAGE}`);
    return 2;
  }
  try {
    if (sub === 'run') {
      const paths = opts.paths.length > 0 ? opts.paths : shippedNotebooks();
      if (paths.length === 0) throw new Error(`no notebooks given and none in ${path.join(projectRoot(), 'notebooks')}`);
      const reports = await runNotebooks(paths, {
        backend: opts.backend,
        timeoutS: opts.timeoutS,
        outDir: opts.outDir,
        log: opts.json ? undefined : (l) => io.err(l),
      });
      if (opts.json) io.out(JSON.stringify(reports, null, 2));
      else for (const r of reports) io.out(describe(r));
      const failed = reports.filter((r) => !r.ok).length;
      if (!opts.json) io.out(`${reports.length - failed} notebooks ok, ${failed} failed`);
      return failed === 0 ? 0 : 1;
    }
    if (sub === 'export') {
      if (opts.paths.length !== 1) throw new Error(`expected exactly one notebook, got ${opts.paths.length}`);
      const result = await exportNotebook(opts.paths[0], {
        outDir: opts.outDir ?? path.join(projectRoot(), 'out', 'export'),
        backend: opts.backend,
        timeoutS: opts.timeoutS,
        execute: opts.execute,
        log: opts.json ? undefined : (l) => io.err(l),
      });
      if (opts.json) io.out(JSON.stringify({ ...result, report: undefined }, null, 2));
      else io.out([`notebook          ${result.notebook}`, `html              ${result.html}`, `interactive html  ${result.interactiveHtml}`].join('\n'));
      return 0;
    }
    if (sub === 'compare') {
      if (opts.paths.length !== 2) throw new Error(`expected two notebooks (A and B), got ${opts.paths.length}`);
      const { compareNotebooks, comparisonHtml } = await import('./compare');
      const c = compareNotebooks(opts.paths[0], opts.paths[1]);
      if (opts.json) {
        io.out(JSON.stringify(c, null, 1));
        return 0;
      }
      const html = comparisonHtml(c);
      if (opts.outDir) {
        fs.mkdirSync(path.dirname(path.resolve(opts.outDir)), { recursive: true });
        fs.writeFileSync(opts.outDir, html);
        io.err(`${c.label}: ${c.pairs.length} pairs of outputs → ${opts.outDir}`);
      } else io.out(html);
      return 0;
    }
    io.err(`gdnlab notebooks: unknown command '${sub}'\n${NOTEBOOKS_USAGE}`);
    return 2;
  } catch (e) {
    io.err(`gdnlab notebooks ${sub}: ${(e as Error).message}`);
    return 1;
  }
}
