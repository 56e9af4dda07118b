// `gdnlab bench conv|postconv|fused [--backend host|cuda] [--quick] [--no-torch] [--samples] [--vllm DIR] [--arms A,B] [--shapes S,T] [--json[=FILE]] [--markdown FILE]`
// --samples keeps every timing run with its raw samples in the JSON (report.timings); --vllm DIR (or GDN_VLLM_PATH):
// vLLM's own Triton kernels from bench/pack-vllm.sh, timed beside ours in the same invocation. --json=FILE and
// --markdown FILE are rewritten after every shape, marked incomplete until the run ends (progressWriter).
// `gdnlab bench overhead [--backend host|cuda] [--quick] [--json[=FILE]]`
// `gdnlab bench host [--quick] [--json[=FILE]]`

import * as fs from 'fs';
import { Backend, activeBackend } from '../backend';
import { BenchReport, benchConv, benchPostconv, benchFused, benchMarkdown, writeJson } from './bench';
import type { Args } from '../cli';

/** --arms a,b / --shapes x,y as a list (undefined when absent). */
function listFlag(args: Args, name: string): string[] | undefined {
  const v = args.flags.get(name);
  if (v === undefined) return undefined;
  if (v === true) throw new RangeError(`--${name}: expected a comma-separated list`);
  return v.split(',').map((x) => x.trim()).filter((x) => x !== '');
}

function commandLine(op: string): string {
  const shown = process.argv.slice(4).filter((a, i, all) => !a.startsWith('--json') && !a.startsWith('--markdown') && all[i - 1] !== '--markdown');
  return ['gdnlab bench', op, ...shown].join(' ').trim();
}

/**
 * With --json=FILE or --markdown FILE: writes each partial report there as the run goes on (after every shape and
 * before each external baseline, marked incomplete), so a run stopped part-way (a time limit, a baseline that
 * hangs) leaves what it measured; emit() overwrites them with the finished report.
 */
export function progressWriter(args: Args, command: string): ((partial: BenchReport) => void) | undefined {
  if (typeof args.flags.get('json') !== 'string' && typeof args.flags.get('markdown') !== 'string') return undefined;
  return (partial) => writeFiles(args, partial, benchMarkdown(partial, command));
}

/** The report to --json=FILE and its Markdown to --markdown FILE, where given. */
function writeFiles(args: Args, report: unknown, md: string): void {
  const json = args.flags.get('json');
  const mdFile = args.flags.get('markdown');
  if (typeof json === 'string') writeJson(json, report);
  if (typeof mdFile === 'string') fs.writeFileSync(mdFile, md + '\n');
}

/** JSON to stdout (--json), or to a file (--json=FILE) with the Markdown on stdout. */
function emit(args: Args, report: unknown, md: string): void {
  writeFiles(args, report, md);
  if (args.flags.get('json') === true) console.log(JSON.stringify(report, null, 2));
  else console.log(md);
}

export async function benchCommand(op: 'conv' | 'postconv' | 'fused' | 'overhead' | 'host', args: Args): Promise<number> {
  const b = args.flags.get('backend');
  const quick = args.flags.has('quick');
  const log = (l: string) => console.error(l);
  if (op === 'host') {
    if (b !== undefined && b !== 'host') console.error(`gdnlab bench host: measures the host backend (--backend ${String(b)} ignored)`);
    const { benchHost, hostMarkdown } = await import('./host');
    const backend = Backend.open('host');
    try {
      const report = await benchHost({ backend, quick, log });
      emit(args, report, hostMarkdown(report, commandLine(op)));
    } finally {
      backend.close();
    }
    return 0;
  }
  const backend = b === 'host' || b === 'cuda' ? Backend.open(b) : activeBackend();
  if (op === 'overhead') {
    const { benchOverhead, overheadMarkdown } = await import('./overhead');
    const report = await benchOverhead({ backend, quick, log });
    emit(args, report, overheadMarkdown(report, commandLine(op)));
    return 0;
  }
  if (backend.kind === 'host' && !quick) {
    console.error('gdnlab bench: the host backend runs the GPU-sized shapes for minutes; use --quick for a small host run');
  }
  const opts = {
    backend,
    quick,
    torch: !args.flags.has('no-torch'),
    samples: args.flags.has('samples'),
    arms: listFlag(args, 'arms'),
    shapes: listFlag(args, 'shapes'),
    vllmPath: typeof args.flags.get('vllm') === 'string' ? (args.flags.get('vllm') as string) : process.env.GDN_VLLM_PATH,
    log,
    onProgress: progressWriter(args, commandLine(op)),
  };
  const report = op === 'conv' ? await benchConv(opts) : op === 'postconv' ? await benchPostconv(opts) : await benchFused(opts);
  emit(args, report, benchMarkdown(report, commandLine(op)));
  return 0;
}
