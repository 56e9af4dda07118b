// Stand-ins that reach the CUDA-only branches on a machine without a GPU, so that a test can see their options
// are read. reportingCuda: a host backend that reports kind 'cuda' (the checks' cross-backend comparison with a
// hostBackend, the benchmarks' PyTorch and vLLM baselines); every launch still runs on the host backend
// underneath (its methods are bound to it, so its private state is its own). fakePython: an executable that
// answers as bench/torch_reference.py and bench/vllm_reference.py do, tagged so a test can tell which ran.

import * as fs from 'fs';
import * as path from 'path';
import { Backend } from '../../lib/backend';

export function reportingCuda(host: Backend): Backend {
  return new Proxy(host, {
    get(target, prop) {
      if (prop === 'kind') return 'cuda';
      const v = Reflect.get(target, prop, target);
      return typeof v === 'function' ? v.bind(target) : v;
    },
  });
}

/**
 * Writes `dir/python-<tag>`: given the cases on stdin, it prints the scripts' header line (torch 'torch <tag>';
 * with --vllm-path P, vllm 'vllm <tag> at P') and one result per case, as the real scripts do.
 */
export function fakePython(dir: string, tag: string): string {
  const file = path.join(dir, `python-${tag}`);
  fs.writeFileSync(file, `#!${process.execPath}
const cases = JSON.parse(require('fs').readFileSync(0, 'utf8'));
const vllm = process.argv.indexOf('--vllm-path');
const row = (c) => JSON.stringify({ id: c.id, median_us: 100, p10_us: 90, p90_us: 110, n: 5, bytes: 1e6, x_copy: 2, copy_median_us: 50, check: { ok: true } });
console.log(JSON.stringify(vllm > 0 ? { vllm: 'vllm ${tag} at ' + process.argv[vllm + 1], triton: 't' } : { torch: 'torch ${tag}', cuda: '0', device: 'none' }));
for (const c of cases) console.log(row(c));
`);
  fs.chmodSync(file, 0o755);
  return file;
}
