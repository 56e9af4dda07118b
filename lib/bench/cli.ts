// `gdnlab bench conv|postconv|fused [--backend host|cuda] [--quick] [--no-torch] [--samples] [--vllm DIR] [--json FILE] [--markdown FILE]`
// --samples keeps every timing run with its raw samples in the JSON (report.timings); --vllm (fused): vLLM's own
// conv + post-conv from bench/pack-vllm.sh, timed beside.

import * as fs from 'fs';
import { Backend, activeBackend } from '../backend';
import { benchConv, benchPostconv, benchFused, benchMarkdown, writeJson } from './bench';
import type { Args } from '../cli';

export async function benchCommand(op: 'conv' | 'postconv' | 'fused', args: Args): Promise<number> {
  const b = args.flags.get('backend');
  const backend = b === 'host' || b === 'cuda' ? Backend.open(b) : activeBackend();
  const quick = args.flags.has('quick');
  if (backend.kind === 'host' && !quick) {
    console.error('gdnlab bench: the host backend runs the GPU-sized shapes for minutes; use --quick for a small host run');
  }
  const opts = {
    backend,
    quick,
    torch: !args.flags.has('no-torch'),
    samples: args.flags.has('samples'),
    vllmPath: typeof args.flags.get('vllm') === 'string' ? (args.flags.get('vllm') as string) : process.env.GDN_VLLM_PATH,
    log: (l: string) => console.error(l),
  };
  const report = op === 'conv' ? await benchConv(opts) : op === 'postconv' ? await benchPostconv(opts) : await benchFused(opts);
  // The command as typed, minus where the output went.
  const shown = process.argv.slice(4).filter((a, i, all) => !a.startsWith('--json') && !a.startsWith('--markdown') && all[i - 1] !== '--markdown');
  const command = ['gdnlab bench', op, ...shown].join(' ');
  const md = benchMarkdown(report, command.trim());
  const json = args.flags.get('json');
  const mdFile = args.flags.get('markdown');
  if (typeof json === 'string') writeJson(json, report);
  if (typeof mdFile === 'string') fs.writeFileSync(mdFile, md + '\n');
  if (json === true) console.log(JSON.stringify(report, null, 2));
  else console.log(md);
  return 0;
}
