// `gdnlab bench …`: benchmarks. conv|postconv|fused: every arm (bits checked first) vs a device copy of the same
// bytes, PyTorch eager and, with --vllm DIR (or GDN_VLLM_PATH), vLLM's own Triton kernels from bench/pack-vllm.sh,
// in one run; --json=FILE and --markdown FILE are rewritten after every shape, marked incomplete until the run
// ends (progressWriter). overhead: per-op cost from TypeScript beyond the kernel. host: host-backend arms vs a
// memcpy. verdict: the timing self-check.

import * as fs from 'fs';
import { Backend } from '../backend';
import { BenchReport, benchConv, benchPostconv, benchFused, benchMarkdown, writeJson } from '../bench/bench';
import { Command, Flag, Parsed } from './args';
import { BACKEND_FLAG, DEFINE_FLAG, JSON_FILE_FLAG, QUICK_FLAG, defineArms, pickBackend } from './common';

const MARKDOWN_FLAG: Flag = { name: 'markdown', value: 'FILE', help: 'also write the Markdown table to FILE' };

/** --arms a,b / --shapes x,y as a list (undefined when absent). */
function listFlag(args: Parsed, name: string): string[] | undefined {
  const v = args.flags.get(name);
  if (v === undefined) return undefined;
  return String(v).split(',').map((x) => x.trim()).filter((x) => x !== '');
}

/** The command as the report quotes it: its flags without the output files. */
function commandLine(op: string): string {
  const at = process.argv.indexOf(op, 2);
  const rest = at < 0 ? [] : process.argv.slice(at + 1);
  const shown = rest.filter((a, i, all) => !a.startsWith('--json') && !a.startsWith('--markdown') && all[i - 1] !== '--markdown');
  return ['gdnlab bench', op, ...shown].join(' ').trim();
}

/**
 * With --json=FILE or --markdown FILE: writes each partial report there as the run goes on (after every shape and
 * before each external baseline, marked incomplete), so a run stopped part-way (a time limit, a baseline that
 * hangs) leaves what it measured; emit() overwrites them with the finished report.
 */
export function progressWriter(args: Parsed, command: string): ((partial: BenchReport) => void) | undefined {
  if (typeof args.flags.get('json') !== 'string' && typeof args.flags.get('markdown') !== 'string') return undefined;
  return (partial) => writeFiles(args, partial, benchMarkdown(partial, command));
}

/** The report to --json=FILE and its Markdown to --markdown FILE, where given. */
function writeFiles(args: Parsed, report: unknown, md: string): void {
  const json = args.flags.get('json');
  const mdFile = args.flags.get('markdown');
  if (typeof json === 'string') writeJson(json, report);
  if (typeof mdFile === 'string') fs.writeFileSync(mdFile, md + '\n');
}

/** JSON to stdout (--json), or to a file (--json=FILE) with the Markdown on stdout. */
function emit(args: Parsed, report: unknown, md: string): void {
  writeFiles(args, report, md);
  if (args.flags.get('json') === true) console.log(JSON.stringify(report, null, 2));
  else console.log(md);
}

const log = (l: string) => console.error(l);

function opBench(op: 'conv' | 'postconv' | 'fused', what: string): Command {
  return {
    words: ['bench', op],
    summary: `every ${what} arm vs a device copy of the same bytes, PyTorch eager and (--vllm) vLLM, one run`,
    flags: [
      BACKEND_FLAG, QUICK_FLAG,
      { name: 'no-torch', help: 'skip the PyTorch eager baseline' },
      { name: 'samples', help: 'keep every raw timing sample in the JSON (report.timings)' },
      JSON_FILE_FLAG, MARKDOWN_FLAG,
      { name: 'vllm', value: 'DIR', help: "vLLM's Triton kernels from bench/pack-vllm.sh, timed beside ours (default: GDN_VLLM_PATH)" },
      { name: 'arms', value: 'A,B', help: 'only these arms (or arm/mapping)' },
      { name: 'shapes', value: 'S,T', help: 'only shapes whose name contains one of these' },
      DEFINE_FLAG,
    ],
    details: ['Bits are checked against the reference before any arm is timed.'],
    async run(args) {
      const backend = pickBackend(args);
      await defineArms(args, backend);
      const quick = args.flags.has('quick');
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
    },
  };
}

export const benchConvCommand = opBench('conv', 'conv');
export const benchPostconvCommand = opBench('postconv', 'post-conv');
export const benchFusedCommand = opBench('fused', 'fused conv→post-conv');

export const benchOverheadCommand: Command = {
  words: ['bench', 'overhead'],
  summary: 'per-op cost from TypeScript beyond the kernel (host: call by call); alloc/free',
  flags: [BACKEND_FLAG, QUICK_FLAG, JSON_FILE_FLAG],
  async run(args) {
    const backend = pickBackend(args);
    const { benchOverhead, overheadMarkdown } = await import('../bench/overhead');
    const report = await benchOverhead({ backend, quick: args.flags.has('quick'), log });
    emit(args, report, overheadMarkdown(report, commandLine('overhead')));
    return 0;
  },
};

export const benchHostCommand: Command = {
  words: ['bench', 'host'],
  summary: 'conv, post-conv and fused arms on the host backend vs a memcpy of the same bytes',
  flags: [QUICK_FLAG, JSON_FILE_FLAG, DEFINE_FLAG],
  async run(args) {
    const { benchHost, hostMarkdown } = await import('../bench/host');
    const backend = Backend.open('host');
    try {
      await defineArms(args, backend);
      const report = await benchHost({ backend, quick: args.flags.has('quick'), log });
      emit(args, report, hostMarkdown(report, commandLine('host')));
    } finally {
      backend.close();
    }
    return 0;
  },
};

export const benchVerdictCommand: Command = {
  words: ['bench', 'verdict'],
  summary: 'timing self-check: the same arm twice = same, scalar = slower',
  flags: [BACKEND_FLAG],
  async run(args) {
    const v = await (await import('../bench/verdict')).verdictSelfCheck(pickBackend(args));
    console.log(`${v.same}\n${v.slower}\n${v.line}`);
    return v.same.verdict === 'same' && v.slower.verdict === 'slower' ? 0 : 1;
  },
};
