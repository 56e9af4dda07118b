// `gdnlab bench host`: the host backend against the host's own memory roofline (issue 10, item 6;
// docs/BENCHMARKS.md, "Host backend"). At Qwen3.5-4B T = 2048 (C = 8192, bf16), every correct conv
// arm and a memcpy of the same bytes are timed interleaved in one gdn_time_ops run; post-conv
// (Hk = 16, Hv = 32, Dk = Dv = 128) and the fused conv -> post-conv op the same way. The ratio arm /
// memcpy is the figure; the target is the fastest conv arm within 4× a memcpy on a 2-core machine.
//
// Before timing, each arm runs once and its outputs are compared bit for bit with the reference
// (conv: the scalar arm, out and final state; post-conv: tree, q, k, v, g and beta; fused: the chain
// conv scalar -> post-conv tree, q, k, v, g, beta and the final state); the table says how many
// elements differed (0 for every correct arm).

import * as os from 'os';
import { Backend, NativeOp } from '../backend';
import { Tensor } from '../tensor';
import * as conv from '../ops/conv';
import * as postconv from '../ops/postconv';
import * as fused from '../ops/fused';
import { copyOp } from '../ops/copy';
import { arms as armTable } from '../arms/table';
import { revision } from '../provenance';
import { summarize } from '../analysis/stats';
import { countDifferingWords } from '../analysis/bits';

export const HOST_TARGET_X_MEMCPY = 4;

export interface HostRow {
  op: 'conv' | 'postconv' | 'fused';
  shape: string;
  arm: string;
  mapping?: string;
  /** Elements (over all outputs) whose bits differ from the reference arm's. */
  mismatches: number;
  elements: number;
  medianMs: number;
  p10Ms: number;
  p90Ms: number;
  n: number;
  /** Median of the memcpy of the same bytes, same run. */
  memcpyMs: number;
  xMemcpy: number;
  note?: string;
}

export interface HostReport {
  bench: 'host';
  cpu: string;
  logicalCpus: number;
  /** Threads the host backend replays blocks on (forward schedule). */
  threads: number;
  revision: string;
  time: string;
  rounds: number;
  targetXMemcpy: number;
  rows: HostRow[];
  copies: { op: string; shape: string; bytes: number; medianMs: number; gbps: number }[];
}

export interface HostBenchOptions {
  backend: Backend;
  quick?: boolean;
  rounds?: number;
  log?: (line: string) => void;
}

/** Elements differing between each output's bits and its reference's, summed over the outputs. */
function mismatchesOver(got: ArrayLike<number>[], ref: ArrayLike<number>[]): number {
  return got.reduce((n, b, i) => n + countDifferingWords(b, ref[i]), 0);
}

/** Times ops (and a copy of `bytes`) interleaved with rotated order; ms per op: sorted samples. */
async function timeTogether(backend: Backend, ops: NativeOp[], bytes: number, rounds: number): Promise<{ arms: number[][]; copy: number[] }> {
  const copy = copyOp(bytes, { backend, label: 'memcpy' });
  try {
    const all = [...ops, copy];
    await backend.timeOps(all, { rounds: 1, flushL2: false }); // warm-up: first touches, caches
    const s = await backend.timeOps(all, { rounds, flushL2: false, rotateOrder: true });
    const per = all.map((_, i) => {
      const v: number[] = [];
      for (let r = 0; r < rounds; r++) v.push(s[r * all.length + i] / 1000);
      return v;
    });
    return { arms: per.slice(0, ops.length), copy: per[ops.length] };
  } finally {
    copy.release();
  }
}

/**
 * Times the checked arms of one op (their prepared launches `ops`, in the same order) beside a memcpy of
 * `bytes` and adds a row per arm and the op's memcpy to the report.
 */
async function timeRows(
  report: HostReport, backend: Backend, rounds: number, op: HostRow['op'], shape: string, bytes: number,
  checked: { arm: string; mapping?: string; mismatches: number; elements: number }[], ops: NativeOp[], log?: (line: string) => void,
): Promise<void> {
  log?.(`bench host: ${op === 'postconv' ? 'post-conv' : op} ${shape}: timing ${ops.length} arms + memcpy of ${(bytes / 2 ** 20).toFixed(0)} MiB, ${rounds} rounds`);
  const t = await timeTogether(backend, ops, bytes, rounds);
  const copy = summarize(t.copy);
  report.copies.push({ op, shape, bytes, medianMs: copy.median, gbps: bytes / (copy.median * 1e6) });
  checked.forEach((a, i) => {
    const s = summarize(t.arms[i]);
    report.rows.push({ op, shape, ...a, medianMs: s.median, p10Ms: s.p10, p90Ms: s.p90, n: s.n, memcpyMs: copy.median, xMemcpy: s.median / copy.median });
  });
}

/** Every correct (arm, mapping) pair of the registry: not a planted mutant, not the racy mapping. */
function correctConvArms(): { arm: conv.ConvArm; mapping: conv.ConvMapping }[] {
  const out: { arm: conv.ConvArm; mapping: conv.ConvMapping }[] = [];
  for (const a of armTable('conv')) {
    if (a.mutant) continue;
    for (const mapping of a.mappings) if (mapping !== 'exact-racy') out.push({ arm: a.name, mapping });
  }
  return out;
}

export async function benchHost(opts: HostBenchOptions): Promise<HostReport> {
  const CONV_CORRECT = correctConvArms();
  const backend = opts.backend;
  if (backend.kind !== 'host') throw new Error(`bench host: measures the host backend; got the ${backend.kind} backend (use --backend host)`);
  const rounds = opts.rounds ?? (opts.quick ? 3 : 7);
  const T = opts.quick ? 256 : 2048;
  const report: HostReport = {
    bench: 'host',
    cpu: backend.info().name,
    logicalCpus: os.cpus().length,
    threads: backend.hostThreads(),
    revision: revision(),
    time: new Date().toISOString(),
    rounds,
    targetXMemcpy: HOST_TARGET_X_MEMCPY,
    rows: [],
    copies: [],
  };

  // ---- conv: Qwen3.5-4B, C = 8192, K = 4, bf16 in and out, one sequence of T tokens
  {
    const C = 8192;
    const K = 4;
    const shape = `Qwen3.5-4B T=${T} (C=${C}, bf16)`;
    const inputs = {
      x: Tensor.random([T, C], 'bf16', { seed: 1 }).to(backend),
      weight: Tensor.random([C, K], 'bf16', { seed: 2, scale: 0.5 }).to(backend),
      queryStartLoc: [0, T],
      hasInitialState: [1],
      convState: Tensor.random([1, C, K - 1], 'f32', { seed: 3 }).to(backend),
    };
    const bytes = conv.convBytes({ T, C, K, N: 1, nInitial: 1, xBytes: 2, outBytes: 2 });
    const ops: (NativeOp & { release(): void })[] = [];
    try {
      opts.log?.(`bench host: conv ${shape}: validating ${CONV_CORRECT.length} arms against scalar`);
      const ref = conv.forwardSync(inputs, { arm: 'scalar', mapping: 'sequence', outDtype: 'bf16', backend });
      const refOut = ref.out.bits();
      const refState = ref.convState.bits();
      ref.release();
      const checked = CONV_CORRECT.map((a) => {
        const r = conv.forwardSync(inputs, { ...a, outDtype: 'bf16', backend });
        const mismatches = countDifferingWords(r.out.bits(), refOut) + countDifferingWords(r.convState.bits(), refState);
        r.release();
        return { ...a, mismatches, elements: refOut.length + refState.length };
      });
      for (const a of CONV_CORRECT) ops.push(conv.prepareTimed(inputs, { ...a, outDtype: 'bf16', backend }, `${a.arm}/${a.mapping}`));
      await timeRows(report, backend, rounds, 'conv', shape, bytes, checked, ops, opts.log);
    } finally {
      for (const o of ops) o.release();
      inputs.x.release();
      inputs.weight.release();
      inputs.convState.release();
    }
  }

  // ---- post-conv: Qwen3.5-4B heads, bf16 conv output and gates, bf16 q/k/v, f32 g and beta
  {
    const dims = { Hk: 16, Hv: 32, Dk: 128, Dv: 128 };
    const C = 2 * dims.Hk * dims.Dk + dims.Hv * dims.Dv;
    const shape = `Qwen3.5-4B (Hk=16, Hv=32) T=${T}`;
    const packed = Tensor.random([T, 2 * dims.Hv], 'bf16', { seed: 5 }).to(backend);
    const inputs = {
      convOut: Tensor.random([T, C], 'bf16', { seed: 4 }).to(backend),
      b: packed.sliceCols(0, dims.Hv),
      a: packed.sliceCols(dims.Hv, dims.Hv),
      ALog: Tensor.random([dims.Hv], 'f32', { seed: 6 }).to(backend),
      dtBias: Tensor.random([dims.Hv], 'f32', { seed: 7 }).to(backend),
    };
    const bytes = postconv.postconvBytes(T, dims, 2, 2, 2);
    const arms = armTable('postconv').filter((a) => !a.mutant).map((a) => a.name); // planted mutants are wrong on purpose
    const ops: (NativeOp & { release(): void })[] = [];
    try {
      opts.log?.(`bench host: post-conv ${shape}: validating ${arms.length} arms against tree`);
      const outputsOf = async (arm: postconv.PostconvArm) => {
        const r = await postconv.forward(inputs, { ...dims, arm, qkvDtype: 'bf16', backend });
        const bits = [r.q, r.k, r.v, r.g, r.beta].map((t) => t.bits());
        r.release();
        return bits;
      };
      const ref = await outputsOf('tree');
      const elements = ref.reduce((n, b) => n + b.length, 0);
      const checked: { arm: postconv.PostconvArm; mismatches: number; elements: number }[] = [];
      for (const arm of arms) {
        const got = await outputsOf(arm);
        checked.push({ arm, mismatches: mismatchesOver(got, ref), elements });
      }
      for (const arm of arms) ops.push(postconv.prepareTimed(inputs, { ...dims, arm, qkvDtype: 'bf16', backend }, arm));
      await timeRows(report, backend, rounds, 'postconv', shape, bytes, checked, ops, opts.log);
    } finally {
      for (const o of ops) o.release();
      for (const t of [packed, inputs.convOut, inputs.ALog, inputs.dtBias]) t.release();
    }
  }

  // ---- fused conv -> post-conv: the same layout, bf16 x, gates and q/k/v, f32 state, g and beta
  {
    const dims = { Hk: 16, Hv: 32, Dk: 128, Dv: 128 };
    const C = 2 * dims.Hk * dims.Dk + dims.Hv * dims.Dv;
    const K = 4;
    const shape = `Qwen3.5-4B (Hk=16, Hv=32) T=${T}`;
    const packed = Tensor.random([T, 2 * dims.Hv], 'bf16', { seed: 9 }).to(backend);
    const inputs: fused.FusedInputs = {
      x: Tensor.random([T, C], 'bf16', { seed: 8 }).to(backend),
      weight: Tensor.random([C, K], 'bf16', { seed: 2, scale: 0.5 }).to(backend),
      queryStartLoc: [0, T],
      hasInitialState: [1],
      convState: Tensor.random([1, C, K - 1], 'f32', { seed: 3 }).to(backend),
      b: packed.sliceCols(0, dims.Hv),
      a: packed.sliceCols(dims.Hv, dims.Hv),
      ALog: Tensor.random([dims.Hv], 'f32', { seed: 6 }).to(backend),
      dtBias: Tensor.random([dims.Hv], 'f32', { seed: 7 }).to(backend),
    };
    const fopts = { ...dims, convDtype: 'bf16' as const, qkvDtype: 'bf16' as const, backend };
    const bytes = fused.fusedBytes(T, dims, { xBytes: 2, qkvBytes: 2, gateBytes: 2, N: 1, nInitial: 1, K });
    const arms = armTable('fused').filter((a) => !a.mutant).map((a) => a.name); // planted mutants are wrong on purpose
    const ops: (NativeOp & { release(): void })[] = [];
    const bitsOf = (r: fused.FusedOutputs) => [r.q, r.k, r.v, r.g, r.beta, r.convState].map((t) => t.bits());
    try {
      opts.log?.(`bench host: fused ${shape}: validating ${arms.length} arms against the chain conv scalar -> post-conv tree`);
      const chained = await fused.chain(inputs, fopts);
      const ref = bitsOf(chained);
      chained.release();
      const elements = ref.reduce((n, b) => n + b.length, 0);
      const checked = arms.map((arm) => {
        const r = fused.forwardSync(inputs, { ...fopts, arm });
        const mismatches = mismatchesOver(bitsOf(r), ref);
        r.release();
        return { arm, mismatches, elements };
      });
      for (const arm of arms) ops.push(fused.prepareTimed(inputs, { ...fopts, arm }, arm));
      await timeRows(report, backend, rounds, 'fused', shape, bytes, checked, ops, opts.log);
    } finally {
      for (const o of ops) o.release();
      for (const t of [packed, inputs.x, inputs.weight, inputs.convState, inputs.ALog, inputs.dtBias]) t.release();
    }
  }
  return report;
}

export function hostMarkdown(r: HostReport, command: string): string {
  const f = (x: number, d = 2) => (Number.isFinite(x) ? x.toFixed(d) : '–');
  const lines = [
    `### Host backend — \`${command}\``,
    '',
    `- CPU: ${r.cpu}; ${r.logicalCpus} logical CPUs; blocks replayed on ${r.threads} thread${r.threads === 1 ? '' : 's'} (forward schedule)`,
    `- revision ${r.revision}; ${r.time}; ${r.rounds} rounds, arms and the memcpy interleaved in one gdn_time_ops run (rotated order, no cache flush)`,
    `- ms per run: median [p10, p90]; ×memcpy = median / median of a memcpy of the same bytes in the same run; target: the fastest conv arm ≤ ${r.targetXMemcpy}× memcpy`,
    `- mismatching = elements whose bits differ from the reference (conv: scalar, out + final state; post-conv: tree, q/k/v/g/beta; fused: the chain conv scalar → post-conv tree, q/k/v/g/beta + final state), checked before timing; fused ×memcpy is against a memcpy of the fused op's own traffic`,
    '',
  ];
  for (const c of r.copies) {
    const rows = r.rows.filter((x) => x.shape === c.shape && x.op === c.op);
    const best = rows.filter((x) => x.mismatches === 0).sort((a, b) => a.medianMs - b.medianMs)[0];
    lines.push(`**${c.op === 'conv' ? 'Causal conv' : c.op === 'postconv' ? 'Post-conv' : 'Fused conv → post-conv'}, ${c.shape}** — memcpy of ${(c.bytes / 2 ** 20).toFixed(0)} MiB: ${f(c.medianMs)} ms (${f(c.gbps, 1)} GB/s)${best ? `; fastest correct arm ${best.arm}${best.mapping ? '/' + best.mapping : ''} at ${f(best.xMemcpy)}× memcpy` : ''}`, '');
    lines.push('| arm | mapping | median ms | p10 | p90 | n | ×memcpy | mismatching |', '|---|---|---:|---:|---:|---:|---:|---:|');
    for (const x of rows) lines.push(`| ${x.arm} | ${x.mapping ?? ''} | ${f(x.medianMs)} | ${f(x.p10Ms)} | ${f(x.p90Ms)} | ${x.n} | ${f(x.xMemcpy)} | ${x.mismatches} / ${x.elements} |`);
    lines.push('');
  }
  return lines.join('\n');
}
