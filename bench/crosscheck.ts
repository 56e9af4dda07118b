// The harness against a profiler: for each op at one shape (Qwen3.5-4B, T = 8192), the fair event median of
// our fastest arm and of vLLM's kernel (gdnlab bench --json) beside the kernel durations Nsight Compute
// measured for the same launches at the same shape (ncu --csv --page raw --print-units base, clocks left
// alone, caches flushed before each kernel as the bench flushes L2). Agreement says the event method counts
// the kernel and nothing else. Run by bench/gpu-session.sh's crosscheck stage.
//
//   node dist/bench/crosscheck.js OUTDIR     (reads xc-bench-{conv,postconv,fused}.json, xc-ours.csv, xc-vllm.csv)

import * as fs from 'fs';
import * as path from 'path';
import { metricValue, parseNcuCsv } from '../lib/profile/ncu-csv';

const DURATION = 'gpu__time_duration.sum';

/**
 * Kernel name → durations in µs, from ncu's raw CSV, read by the profile's own parser (lib/profile/ncu-csv.ts:
 * its records, units and number forms, whichever spelling ncu's version prints); a launch whose duration is not a
 * number ("n/a") is left out.
 */
export function kernelDurations(csv: string): Map<string, number[]> {
  const report = parseNcuCsv(csv);
  if (!report.metricNames.includes(DURATION)) throw new Error(`ncu CSV: no '${DURATION}' column`);
  const out = new Map<string, number[]>();
  for (const k of report.kernels) {
    const ns = metricValue(k, DURATION);
    if (ns === null) continue;
    if (k.units[DURATION] !== 'ns') throw new Error(`ncu CSV: '${k.units[DURATION]}' is not a unit of time (${DURATION})`);
    const list = out.get(k.kernelName) ?? [];
    list.push(ns / 1e3);
    out.set(k.kernelName, list);
  }
  return out;
}

const median = (xs: number[]) => { const s = [...xs].sort((a, b) => a - b); return s[Math.floor((s.length - 1) / 2)]; };

/** The durations of every kernel whose name matches. */
function durationsOf(map: Map<string, number[]>, pattern: RegExp): number[] {
  return [...map.entries()].filter(([k]) => pattern.test(k)).flatMap(([, v]) => v);
}

interface Row { arm: string; medianUs: number; mapping?: string }

/** The table of one crosscheck stage's output folder (the files named at the top of this file). */
export function crosscheckReport(dir: string): string {
  const read = (f: string) => fs.readFileSync(path.join(dir, f), 'utf8');
  // A side whose profile is missing or unreadable (ncu failed on that process: its log says why) still lets the
  // other side's rows print; the reason is printed under the table instead of a figure.
  const problems: string[] = [];
  const profile = (side: string, file: string): Map<string, number[]> => {
    if (!fs.existsSync(path.join(dir, file))) { problems.push(`${side}: no ${file}`); return new Map(); }
    try {
      return kernelDurations(read(file));
    } catch (e) {
      problems.push(`${side}: ${file} holds no profile (${(e as Error).message}; its ncu log says why)`);
      return new Map();
    }
  };
  const ours = profile('ours', 'xc-ours.csv');
  const vllm = profile('vLLM', 'xc-vllm.csv');
  const lines = ['| op | timed | fair event median µs | Nsight Compute median µs (n) | event / ncu |', '|---|---|---:|---:|---:|'];
  const add = (op: string, label: string, eventUs: number | undefined, durs: number[]) => {
    const n = durs.length ? median(durs) : NaN;
    lines.push(`| ${op} | ${label} | ${eventUs === undefined ? '–' : eventUs.toFixed(1)} | ${durs.length ? `${n.toFixed(1)} (${durs.length})` : '– (none)'} | ${eventUs !== undefined && durs.length ? (eventUs / n).toFixed(3) : '–'} |`);
  };
  const plan: [string, string, RegExp, RegExp | null][] = [
    ['conv', 'stream-mufu', /\bconv_kernel/, /causal_conv1d/],
    ['postconv', 'vec-tile', /\bpostconv_kernel/, /post_conv/],
    ['fused', 'fused stream-mufu', /\bfused_kernel/, null],
  ];
  for (const [op, arm, oursRe, vllmRe] of plan) {
    const file = `xc-bench-${op}.json`;
    if (!fs.existsSync(path.join(dir, file))) { lines.push(`| ${op} | – | ${file} missing | | |`); continue; }
    const rows = (JSON.parse(read(file)).rows as Row[]);
    add(op, `ours: ${arm}`, rows.find((r) => r.arm === arm)?.medianUs, durationsOf(ours, oursRe));
    if (vllmRe) add(op, 'vLLM (Triton)', rows.find((r) => r.arm === 'vLLM (Triton)')?.medianUs, durationsOf(vllm, vllmRe));
  }
  for (const p of problems) lines.push('', `No profiler figure for ${p}.`);
  lines.push('', `kernels profiled: ours ${[...ours.keys()].map((k) => k.slice(0, 60)).join('; ') || 'none'}; vLLM ${[...vllm.keys()].map((k) => k.slice(0, 60)).join('; ') || 'none'}`);
  return lines.join('\n') + '\n';
}

if (require.main === module) {
  const dir = process.argv[2];
  if (!dir) throw new Error('usage: node dist/bench/crosscheck.js OUTDIR');
  process.stdout.write(crosscheckReport(dir));
}
