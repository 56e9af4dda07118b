// `gdnlab bench conv|postconv [--backend host|cuda] [--quick] [--no-torch] [--samples] [--json FILE] [--markdown FILE]`
// --samples keeps every timing run with its raw samples in the JSON (report.timings).

import * as fs from 'fs';
import { Backend, activeBackend } from '../backend';
import { benchConv, benchPostconv, benchMarkdown, writeJson } from './bench';
import type { Args } from '../cli';

export async function benchCommand(op: 'conv' | 'postconv', args: Args): Promise<number> {
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
    log: (l: string) => console.error(l),
  };
  const report = op === 'conv' ? await benchConv(opts) : await benchPostconv(opts);
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
