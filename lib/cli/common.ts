// What several commands share: their common flags, the backend choice, user arms from --define, output.

import { Backend, activeBackend } from '../backend';
import { Flag, Parsed, UsageError } from './args';

export const BACKEND_FLAG: Flag = { name: 'backend', value: 'host|cuda', choices: ['host', 'cuda'], help: 'the backend to run on (default: GDN_BACKEND, else cuda where a GPU is found)' };
export const JSON_FLAG: Flag = { name: 'json', help: 'the result as JSON on stdout' };
export const JSON_FILE_FLAG: Flag = { name: 'json', value: 'FILE', optional: true, help: 'the report as JSON: on stdout, or to FILE (then the Markdown on stdout)' };
export const QUICK_FLAG: Flag = { name: 'quick', help: 'a small subset of the cases or shapes' };
export const MUTANTS_FLAG: Flag = { name: 'mutants', help: 'also run the planted mutants and planted-defect user arms; each must be caught' };
export const DEFINE_FLAG: Flag = {
  name: 'define', value: 'FILE[,FILE]',
  help: 'user arms from .json/.js/.cjs specs, as defineArm takes them (docs/USER-ARMS.md): listed, checked and timed like built-ins',
};

/** The backend of --backend, else the active one. */
export function pickBackend(args: Parsed): Backend {
  const b = args.flags.get('backend');
  if (b === undefined) return activeBackend();
  if (b !== 'host' && b !== 'cuda') throw new UsageError(`--backend: expected host or cuda, got ${String(b)}`);
  return Backend.open(b);
}

/**
 * Defines the user arms of --define on `backend` before the command reads the arm table, so every check and
 * benchmark lists them as it lists the built-ins (docs/USER-ARMS.md, "From the command line").
 */
export async function defineArms(args: Parsed, backend: Backend): Promise<void> {
  const files = args.flags.get('define');
  if (files === undefined) return;
  if (files === true) throw new UsageError('--define: expected FILE[,FILE] (.json, .js or .cjs arm specs)');
  const { defineArmsFromFiles } = await import('../arms/file');
  for (const d of defineArmsFromFiles(files, backend)) console.error(`gdnlab: ${d.summary}`);
}

/**
 * Runs an equivalence check (`check conv|postconv|fused`) on the backend of --backend, after defining the arms of
 * --define there. On CUDA the check also gets a host backend, for its cuda == host comparison; that twin is closed
 * however the check ends, since a check that throws must not leave it open.
 */
export async function withHostTwin<T>(args: Parsed, check: (backend: Backend, hostBackend: Backend | undefined) => Promise<T>): Promise<T> {
  const backend = pickBackend(args);
  await defineArms(args, backend);
  const hostBackend = backend.kind === 'cuda' ? Backend.open('host') : undefined;
  try {
    return await check(backend, hostBackend);
  } finally {
    hostBackend?.close();
  }
}

/** Writes to stdout and resolves once the text is handed to the OS (the caller may exit after). */
export function writeOut(text: string): Promise<void> {
  return new Promise((resolve, reject) => process.stdout.write(text, (e) => (e ? reject(e) : resolve())));
}

/** The `[d/n] name` progress line of a long check, rewritten in place on stderr. */
export function progressLine(width: number): (done: number, total: number, name: string) => void {
  return (d, n, name) => process.stderr.write(`\r[${d}/${n}] ${name}`.padEnd(width) + (d === n ? '\n' : ''));
}
