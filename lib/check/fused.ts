// The fused-op equivalence suite: gdn.fused.forward against the two-op chain conv (scalar, out = convDtype)
// -> post-conv (tree), bit for bit on q, k, v, g, beta and the final conv state, over dtypes (the
// intermediate rounding included), varlen batches with and without initial state, chunk boundaries,
// K, bias, padded x rows, packed a/b views and the Qwen3.5-4B and 27B head layouts; on CUDA also
// fused-on-CUDA against fused-on-host; and the planted mutants, which the suite must catch. Every fused
// arm libgdn's registry lists (checkedFusedArms) runs through all of it: an arm added to the registry is
// checked, mutant-run, benchmarked and sanitized without a change here.

import { Tensor } from '../tensor';
import { Backend } from '../backend';
import * as fused from '../ops/fused';
import { FusedArm, FusedMutant, FusedOutputs, FUSED_MUTANTS } from '../ops/fused';
import { CONV_STATE_COORDINATES } from '../ops/conv';
import { armIsMutant } from '../arms/table';
import { edgeTensors } from './conv';
import { countBitMismatches } from '../analysis/bits';
import { LocatedMismatch, firstMismatch } from '../analysis/located';
import { diff, DiffResult, DiffOptions } from '../analysis/diff';
import { postconvCoordinates, plainCoordinates } from '../analysis/coordinates';

type Dt = 'f32' | 'bf16';

export interface FusedCase {
  name: string;
  Hk: number;
  Hv: number;
  K: number;
  lengths: number[];
  /** Which sequences continue from a state (null: none). */
  initialState: boolean[] | null;
  maskDtype: 'i8' | 'i32';
  bias: boolean;
  xDtype: Dt;
  convDtype: Dt;
  qkvDtype: Dt;
  gateDtype: Dt;
  /** Row stride of x (> C: padded rows holding NaN, which a kernel reading them would spread). */
  xRowStride: number;
  /** a and b are column views of one packed [T, packedWidth] buffer at these offsets. */
  packedWidth: number;
  bOffset: number;
  aOffset: number;
  seed: number;
  /** 'edge': pre-activations that sweep 80 < |acc| <= 88, where SiLU's fast path is not valid (conv.ts edgeValues). */
  values?: 'random' | 'edge';
}

export const FUSED_OUTPUTS = ['q', 'k', 'v', 'g', 'beta', 'convState'] as const;
export type FusedOutput = (typeof FUSED_OUTPUTS)[number];
export type Mismatches = Record<FusedOutput, number>;

export function fusedChannels(c: { Hk: number; Hv: number }): number {
  return (2 * c.Hk + c.Hv) * fused.FUSED_HEAD_DIM;
}

export function makeFusedInputs(c: FusedCase): fused.FusedInputs {
  const C = fusedChannels(c);
  const T = c.lengths.reduce((x, y) => x + y, 0);
  const N = c.lengths.length;
  const qsl = [0];
  for (const l of c.lengths) qsl.push(qsl[qsl.length - 1] + l);
  const packed = Tensor.random([T, c.packedWidth], c.gateDtype, { seed: c.seed + 5, scale: 2 });
  const edge = c.values === 'edge' ? edgeTensors(T, C, c.K, N, c.xDtype) : null;
  return {
    x: edge ? edge.x : Tensor.random([T, C], c.xDtype, { seed: c.seed, rowStride: c.xRowStride, padValue: c.xRowStride > C ? NaN : undefined }),
    weight: edge ? edge.weight : Tensor.random([C, c.K], c.xDtype, { seed: c.seed + 1, scale: 0.5 }),
    bias: edge ? null : c.bias ? Tensor.random([C], c.xDtype, { seed: c.seed + 2, scale: 0.25 }) : null,
    queryStartLoc: qsl,
    hasInitialState: c.initialState ? Tensor.from(c.initialState.map((s) => (s ? 1 : 0)), [N], c.maskDtype) : null,
    convState: edge ? edge.convState : Tensor.random([N, C, c.K - 1], 'f32', { seed: c.seed + 3 }),
    b: packed.sliceCols(c.bOffset, c.Hv),
    a: packed.sliceCols(c.aOffset, c.Hv),
    ALog: Tensor.random([c.Hv], 'f32', { seed: c.seed + 6, scale: 0.5 }),
    dtBias: Tensor.random([c.Hv], 'f32', { seed: c.seed + 7 }),
  };
}

export function fusedOptions(c: FusedCase, backend: Backend, mutant: FusedMutant | null = null, arm?: FusedArm): fused.FusedOptions {
  return { Hk: c.Hk, Hv: c.Hv, Dk: fused.FUSED_HEAD_DIM, Dv: fused.FUSED_HEAD_DIM, convDtype: c.convDtype, qkvDtype: c.qkvDtype, backend, mutant, ...(arm === undefined ? {} : { arm }) };
}

/**
 * The fused arms that must equal the chain: every arm of fusedArms() (libgdn's registry, in id order)
 * except those the library flags as planted mutants, which are wrong on purpose. The fused family has
 * no reference arm (the chain is its reference), so none is left out for being one.
 */
export function checkedFusedArms(): FusedArm[] {
  // fusedArms() is in id order, so a name's index is its id.
  return fused.fusedArms().filter((_, id) => !armIsMutant('fused', id));
}

const DTS: Dt[] = ['f32', 'bf16'];

/**
 * The matrix. A small layout (Hk = 1, Hv = 2, C = 512) carries every combination of the four dtypes,
 * rotating K, state, mask dtype, bias and padded rows through them, on a varlen batch that crosses the
 * 64-token chunk and 8-token group boundaries (an empty sequence, one shorter than K-1, 64, 65, 130);
 * single sequences cover T = 1 .. 200; the Qwen3.5-4B (Hk 16, Hv 32) and 27B (Hk 16, Hv 48) layouts run
 * at small T in the storage dtypes a model uses and in f32.
 */
export function fusedMatrix(opts: { quick?: boolean } = {}): FusedCase[] {
  const cases: FusedCase[] = [];
  const Ks = [4, 2, 3, 6];
  let i = 0;
  const base = (Hk: number, Hv: number, seed: number) => ({ Hk, Hv, packedWidth: 2 * Hv + 5, bOffset: 1, aOffset: 3 + Hv, seed });
  for (const xDtype of DTS) for (const convDtype of DTS) for (const qkvDtype of DTS) for (const gateDtype of DTS) {
    const bits = i++;
    const K = Ks[bits % Ks.length];
    const withState = (bits & 1) === 0;
    const lengths = [5, 0, Math.max(K - 2, 1), 64, 65, 130, 1, 9];
    const padded = (bits & 2) !== 0;
    cases.push({
      ...base(1, 2, 500 + 11 * bits),
      name: `Hk=1 Hv=2 K=${K} x ${xDtype} conv ${convDtype} qkv ${qkvDtype} gate ${gateDtype} ${withState ? 'state' : 'nostate'}${padded ? ' padded' : ''} varlen ${lengths.length}`,
      K, lengths, initialState: withState ? lengths.map((_, s) => s % 3 !== 1) : null,
      maskDtype: (bits & 4) === 0 ? 'i8' : 'i32', bias: (bits & 8) === 0,
      xDtype, convDtype, qkvDtype, gateDtype, xRowStride: padded ? 520 : 512,
    });
  }
  for (const T of opts.quick ? [1, 63, 65] : [1, 7, 8, 63, 64, 65, 200]) {
    cases.push({
      ...base(2, 4, 700 + T), name: `Hk=2 Hv=4 K=4 T=${T} bf16 x, bf16 conv, f32 qkv, state`, K: 4, lengths: [T], initialState: [true],
      maskDtype: 'i32', bias: true, xDtype: 'bf16', convDtype: 'bf16', qkvDtype: 'f32', gateDtype: 'bf16', xRowStride: 1024,
    });
  }
  for (const [model, Hk, Hv] of [['Qwen3.5-4B', 16, 32], ['Qwen3.5-27B', 16, 48]] as const) {
    const C = (2 * Hk + Hv) * 128;
    cases.push({
      ...base(Hk, Hv, 900 + Hv), name: `${model} layout (Hk=${Hk}, Hv=${Hv}) bf16 throughout, state, varlen 4`, K: 4,
      lengths: [3, 17, 70, 9], initialState: [true, false, true, true], maskDtype: 'i8', bias: false,
      xDtype: 'bf16', convDtype: 'bf16', qkvDtype: 'bf16', gateDtype: 'bf16', xRowStride: C,
    });
    cases.push({
      ...base(Hk, Hv, 950 + Hv), name: `${model} layout (Hk=${Hk}, Hv=${Hv}) f32 throughout, no state, T=${opts.quick ? 20 : 66}`, K: 4,
      lengths: [opts.quick ? 20 : 66], initialState: null, maskDtype: 'i8', bias: true,
      xDtype: 'f32', convDtype: 'f32', qkvDtype: 'f32', gateDtype: 'f32', xRowStride: C,
    });
  }
  // Pre-activations where SiLU's fast path is not valid (80 < |acc| <= 88): every arm must take the wide path.
  for (const dt of DTS) {
    cases.push({
      ...base(1, 2, 80), name: `Hk=1 Hv=2 K=4 ${dt} throughout, edge pre-activations (80 < |acc| <= 88), state`, K: 4,
      lengths: [5, 70, 33], initialState: [true, false, true], maskDtype: 'i8', bias: false,
      xDtype: dt, convDtype: dt, qkvDtype: dt, gateDtype: dt, xRowStride: 512, values: 'edge',
    });
  }
  return cases;
}

export function compareFused(a: FusedOutputs, b: FusedOutputs): Mismatches {
  const m = {} as Mismatches;
  for (const o of FUSED_OUTPUTS) m[o] = countBitMismatches(a[o], b[o]);
  return m;
}

/**
 * diff() of every output of two fused results (or a fused result and the chain): q, k, v with
 * (token, head, feature) coordinates, g and beta as (token, head), the state as (sequence, channel, tap);
 * first mismatches, ulp histograms and mismatch maps as for any other op.
 */
export function diffFused(actual: FusedOutputs, expected: FusedOutputs, opts: Omit<DiffOptions, 'coordinates' | 'label'> = {}): Record<FusedOutput, DiffResult> {
  const out = {} as Record<FusedOutput, DiffResult>;
  // The results carry their coordinates (fused.forward, fused.chain); a tensor that does not gets them here.
  for (const o of FUSED_OUTPUTS) {
    const own = actual[o].coordinates ?? expected[o].coordinates;
    const coordinates = own ?? (o === 'q' || o === 'k' || o === 'v' ? postconvCoordinates() : o === 'convState' ? CONV_STATE_COORDINATES : plainCoordinates());
    out[o] = diff(actual[o], expected[o], { ...opts, coordinates, label: `fused ${o}` });
  }
  return out;
}

export function totalMismatches(m: Mismatches): number {
  return FUSED_OUTPUTS.reduce((s, o) => s + m[o], 0);
}

export interface FusedCaseResult {
  case: string;
  /** The fused arm asked for. */
  arm: FusedArm;
  /** The arm the launch reports it ran (differs where the arm falls back). */
  armRan: FusedArm;
  backend: string;
  mutant: FusedMutant | null;
  /** Mismatching elements per output, fused vs the chain on the same backend. */
  mismatches: Mismatches;
  ok: boolean;
  /** A row whose bits differ: its first differing element (outputs in q, k, v, g, beta, convState order) and the two values. */
  firstMismatch?: LocatedMismatch;
}

export interface FusedCheckReport {
  backend: string;
  /** The fused arms run, in registry order; results hold one entry per (case, arm). */
  arms: FusedArm[];
  results: FusedCaseResult[];
  failures: FusedCaseResult[];
  /** CUDA only: each arm on CUDA vs the same arm on the host, per case. */
  crossBackend: { case: string; arm: FusedArm; mismatches: Mismatches; ok: boolean }[];
}

export async function checkFused(opts: {
  backend: Backend;
  hostBackend?: Backend;
  cases?: FusedCase[];
  /** The fused arms to compare with the chain (default: checkedFusedArms()). */
  arms?: FusedArm[];
  mutant?: FusedMutant | null;
  onCase?: (done: number, total: number, name: string) => void;
}): Promise<FusedCheckReport> {
  const cases = opts.cases ?? fusedMatrix();
  const arms = opts.arms ?? checkedFusedArms();
  if (!Array.isArray(arms) || arms.length === 0) throw new RangeError(`arms: expected at least one fused arm (libgdn lists ${fused.fusedArms().join(', ')}), got ${JSON.stringify(opts.arms)}`);
  const mutant = opts.mutant ?? null;
  const results: FusedCaseResult[] = [];
  const crossBackend: FusedCheckReport['crossBackend'] = [];
  let done = 0;
  for (const c of cases) {
    const inputs = makeFusedInputs(c);
    // One chain per case serves every arm: the reference does not depend on the arm under test.
    const ref = await fused.chain(inputs, fusedOptions(c, opts.backend));
    try {
      for (const arm of arms) {
        const r = await fused.forward(inputs, fusedOptions(c, opts.backend, mutant, arm));
        try {
          const m = compareFused(r, ref);
          const ok = totalMismatches(m) === 0;
          results.push({
            case: c.name, arm, armRan: r.launch.arm, backend: opts.backend.kind, mutant, mismatches: m, ok,
            ...(ok ? {} : { firstMismatch: firstMismatch(FUSED_OUTPUTS.map((o) => [o, r[o], ref[o]] as const)) }),
          });
          if (opts.hostBackend && opts.backend.kind === 'cuda') {
            const host = await fused.forward(inputs, fusedOptions(c, opts.hostBackend, mutant, arm));
            const x = compareFused(r, host);
            crossBackend.push({ case: c.name, arm, mismatches: x, ok: totalMismatches(x) === 0 });
            host.release();
          }
        } finally {
          r.release();
        }
      }
    } finally {
      ref.release();
    }
    opts.onCase?.(++done, cases.length, c.name);
  }
  return { backend: opts.backend.kind, arms: [...arms], results, failures: results.filter((r) => !r.ok), crossBackend };
}

export interface FusedMutantOutcome {
  /** The fused arm whose planted build ran. */
  arm: FusedArm;
  mutant: FusedMutant;
  caught: boolean;
  /** Cases (of those that can show it) in which the mutant differs from the chain. */
  caughtCases: number;
  cases: number;
  /** Mismatching elements per output, summed over the cases. */
  mismatches: Mismatches;
  /** seq-fold: cases with bf16 q/k outputs in which it shows (bf16 hides most of it). */
  caughtInBf16?: number;
  bf16Cases?: number;
  detail: string;
}

/**
 * Runs each planted mutant through the suite, in every arm (each arm has its own planted build, so a
 * mutant caught in one arm says nothing of another): one outcome per (arm, mutant), arms in registry
 * order. seq-fold changes only the f32 sum of squares, so the cases with f32 q/k must catch it; no-round
 * changes every conv output that bf16 does not represent, so the cases with a bf16 conv dtype must catch it.
 */
export async function runFusedMutants(backend: Backend, cases = fusedMatrix({ quick: true }), arms: FusedArm[] = checkedFusedArms()): Promise<FusedMutantOutcome[]> {
  const out: FusedMutantOutcome[] = [];
  for (const arm of arms) {
    for (const mutant of FUSED_MUTANTS) {
      const relevant = cases.filter((c) => (mutant === 'seq-fold' ? c.qkvDtype === 'f32' : c.convDtype === 'bf16'));
      const report = await checkFused({ backend, cases: relevant, arms: [arm], mutant });
      const sum = {} as Mismatches;
      for (const o of FUSED_OUTPUTS) sum[o] = report.results.reduce((s, r) => s + r.mismatches[o], 0);
      const caughtCases = report.failures.length;
      const o: FusedMutantOutcome = {
        arm, mutant, caught: caughtCases > 0, caughtCases, cases: relevant.length, mismatches: sum,
        detail: `differs from the chain in ${caughtCases}/${relevant.length} ${mutant === 'seq-fold' ? 'f32-q/k' : 'bf16-conv'} cases (${FUSED_OUTPUTS.map((x) => `${x} ${sum[x]}`).join(', ')})`,
      };
      if (mutant === 'seq-fold') {
        const bf16 = cases.filter((c) => c.qkvDtype === 'bf16' && c.convDtype === 'f32').slice(0, 4);
        const r16 = await checkFused({ backend, cases: bf16, arms: [arm], mutant });
        o.caughtInBf16 = r16.failures.length;
        o.bf16Cases = bf16.length;
        o.detail += `; in ${o.caughtInBf16}/${o.bf16Cases} bf16-q/k cases`;
      }
      out.push(o);
    }
  }
  return out;
}
