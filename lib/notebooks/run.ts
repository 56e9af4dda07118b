// Headless notebook execution through the gdnlab kernel (nbclient, driven by nbtool.py): outputs are
// saved, and a notebook fails on any error output, on a kernel that dies or times out, or when the
// saved file is 1 MB or more.

import { spawn } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { CellError, Notebook, errorOutputs, codeCells, readNotebook, writeNotebook } from './ipynb';
import { jupyterPython, nbtoolPath } from './paths';

export type BackendChoice = 'auto' | 'host' | 'cuda';

export interface RunOptions {
  /** Longest time one cell may run, in seconds (default 600). */
  timeoutS?: number;
  /** GDN_BACKEND for the kernel (default: this process's GDN_BACKEND, else auto). */
  backend?: BackendChoice;
  /** Save outputs into the notebook file itself (default true). */
  inplace?: boolean;
  /** Where executed copies go when `inplace` is false (required then). The kernel still runs in the notebook's own folder. */
  outDir?: string;
  /** Kernelspec name (default "gdnlab"). */
  kernelName?: string;
  /** Python with nbclient (default: see paths.jupyterPython). */
  python?: string;
  /** Largest allowed saved notebook, in bytes (default 1,000,000: "under 1 MB"). */
  maxBytes?: number;
  /** Extra environment for the kernel. */
  env?: NodeJS.ProcessEnv;
  /** Progress lines (default: none). */
  log?: (line: string) => void;
}

export interface Report {
  /** The notebook that was run. */
  notebook: string;
  /** Where the executed notebook was saved. */
  output: string;
  ok: boolean;
  /** Why it is not ok (empty when ok). */
  problems: string[];
  errors: CellError[];
  kernelName: string;
  backend: BackendChoice;
  codeCells: number;
  /** Code cells that ran (have an execution count). */
  executedCells: number;
  sizeBytes: number;
  durationS: number;
  /** The last lines nbclient and the kernel wrote to stderr (for diagnosing a failed run). */
  stderrTail: string;
  /** The run's facts (backend, device, revision, date) from the notebook's first output, plus its wall time. */
  provenance?: Record<string, unknown>;
}

/** The mime type of gdn.showRunInfo()'s facts (lib/view/run-info.ts; not imported: no native code here). */
export const RUN_INFO_MIME = 'application/vnd.gdnlab.run-info+json';

/**
 * Copies the facts of the notebook's first gdn.showRunInfo() output into metadata.gdnlab.provenance,
 * with the notebook's wall time, so that the file says where its outputs came from.
 */
export function recordProvenance(nb: Notebook, wallS: number): Record<string, unknown> | undefined {
  for (const { cell } of codeCells(nb)) {
    for (const o of cell.outputs ?? []) {
      const facts = o.data?.[RUN_INFO_MIME];
      if (facts && typeof facts === 'object') {
        const provenance = { ...(facts as Record<string, unknown>), wallS: Math.round(wallS * 10) / 10, runner: 'gdnlab notebooks run' };
        nb.metadata.gdnlab = { ...((nb.metadata.gdnlab as object | undefined) ?? {}), provenance };
        return provenance;
      }
    }
  }
  return undefined;
}

export const DEFAULT_MAX_NOTEBOOK_BYTES = 1_000_000;

function checkOptions(opts: RunOptions): void {
  if (opts.timeoutS !== undefined && !(Number.isInteger(opts.timeoutS) && opts.timeoutS > 0)) {
    throw new TypeError(`timeoutS: expected a positive whole number of seconds, got ${String(opts.timeoutS)}`);
  }
  if (opts.backend !== undefined && !['auto', 'host', 'cuda'].includes(opts.backend)) {
    throw new TypeError(`backend: expected 'auto', 'host' or 'cuda', got ${String(opts.backend)}`);
  }
  if (opts.inplace === false && !opts.outDir) {
    throw new TypeError('outDir: required when inplace is false (where should the executed notebooks go?)');
  }
  if (opts.inplace === true && opts.outDir) {
    throw new TypeError('outDir: not allowed with inplace: true (outputs are saved into the notebook itself)');
  }
}

function backendFrom(opts: RunOptions): BackendChoice {
  if (opts.backend) return opts.backend;
  const env = (process.env.GDN_BACKEND ?? '').trim().toLowerCase();
  if (env === '' || env === 'auto') return 'auto';
  if (env === 'host' || env === 'cuda') return env;
  throw new TypeError(`GDN_BACKEND: expected auto, cuda or host, got '${process.env.GDN_BACKEND}'`);
}

interface DriverResult {
  status: number | null;
  stderr: string;
  report?: { completed: boolean; failure: string | null; durationS: number; traceback?: string };
}

function tail(text: string, lines: number): string {
  return text.trimEnd().split('\n').slice(-lines).join('\n');
}

function runDriver(python: string, args: string[], env: NodeJS.ProcessEnv, reportFile: string, killAfterMs: number): Promise<DriverResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(python, [nbtoolPath(), ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    const keep = (chunk: Buffer) => {
      stderr = (stderr + chunk.toString('utf8')).slice(-64 * 1024);
    };
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    const timer = setTimeout(() => child.kill('SIGKILL'), killAfterMs);
    child.on('error', (err) => {
      clearTimeout(timer);
      reject(new Error(`starting ${python}: ${err.message} (run bash scripts/setup.sh to create .venv)`));
    });
    child.on('close', (status) => {
      clearTimeout(timer);
      let report: DriverResult['report'];
      if (fs.existsSync(reportFile)) report = JSON.parse(fs.readFileSync(reportFile, 'utf8')) as DriverResult['report'];
      resolve({ status, stderr, report });
    });
  });
}

/** Executes one notebook; see runNotebooks. */
export async function runNotebook(notebook: string, opts: RunOptions = {}): Promise<Report> {
  checkOptions(opts);
  const input = path.resolve(notebook);
  if (!fs.existsSync(input)) throw new Error(`notebook: ${notebook} does not exist`);
  const inplace = opts.inplace ?? !opts.outDir;
  const output = inplace ? input : path.join(path.resolve(opts.outDir as string), path.basename(input));
  fs.mkdirSync(path.dirname(output), { recursive: true });
  const backend = backendFrom(opts);
  const kernelName = opts.kernelName ?? 'gdnlab';
  const timeoutS = opts.timeoutS ?? 600;
  const cells = codeCells(readNotebook(input)).length;

  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'gdnlab-nbrun-'));
  const reportFile = path.join(work, 'report.json');
  const env = { ...process.env, ...opts.env, GDN_BACKEND: backend, PYTHONUNBUFFERED: '1' };
  opts.log?.(`running ${path.basename(input)} (kernel ${kernelName}, GDN_BACKEND=${backend})`);
  const started = Date.now();
  let result: DriverResult;
  try {
    result = await runDriver(
      opts.python ?? jupyterPython(),
      ['execute', '--input', input, '--output', output, '--cwd', path.dirname(input), '--kernel', kernelName, '--timeout', String(timeoutS), '--report', reportFile],
      env,
      reportFile,
      (timeoutS * (cells + 1) + 180) * 1000,
    );
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }

  const problems: string[] = [];
  let errors: CellError[] = [];
  let executed = 0;
  let sizeBytes = 0;
  if (!result.report) {
    problems.push(`the notebook driver stopped (exit status ${String(result.status)}) without a report: ${tail(result.stderr, 5)}`);
  } else if (result.report.failure) {
    problems.push(result.report.failure);
  }
  let provenance: Record<string, unknown> | undefined;
  if (fs.existsSync(output) && result.report) {
    const nb = readNotebook(output);
    provenance = recordProvenance(nb, result.report.durationS);
    if (provenance) writeNotebook(output, nb);
    errors = errorOutputs(nb);
    executed = codeCells(nb).filter(({ cell }) => typeof cell.execution_count === 'number').length;
    sizeBytes = fs.statSync(output).size;
    for (const e of errors) problems.push(`cell ${e.cell}: ${e.ename}: ${e.evalue}`);
    const maxBytes = opts.maxBytes ?? DEFAULT_MAX_NOTEBOOK_BYTES;
    if (sizeBytes >= maxBytes) problems.push(`the saved notebook is ${sizeBytes} bytes; it must stay under ${maxBytes}`);
  }
  const report: Report = {
    notebook: input,
    output,
    ok: problems.length === 0,
    problems,
    errors,
    kernelName,
    backend,
    codeCells: cells,
    executedCells: executed,
    sizeBytes,
    durationS: result.report?.durationS ?? (Date.now() - started) / 1000,
    stderrTail: tail(result.stderr, 40),
    provenance,
  };
  opts.log?.(`${report.ok ? 'ok' : 'FAILED'} ${path.basename(input)} in ${report.durationS.toFixed(1)} s, ${sizeBytes} bytes${report.ok ? '' : ': ' + problems.join('; ')}`);
  return report;
}

/**
 * Executes notebooks headless through the gdnlab kernel, one after another, saving their outputs
 * (in place by default, or as copies in `outDir`). Every notebook gets a report; a report is not ok
 * when a cell has an error output, the kernel died or timed out, or the saved file is too big.
 */
export async function runNotebooks(paths: string[], opts: RunOptions = {}): Promise<Report[]> {
  if (!Array.isArray(paths) || paths.length === 0) throw new TypeError('paths: expected at least one notebook path');
  checkOptions(opts);
  const reports: Report[] = [];
  for (const p of paths) reports.push(await runNotebook(p, opts));
  return reports;
}
