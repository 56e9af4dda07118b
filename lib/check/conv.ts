// The conv equivalence matrix: every arm and mapping against the scalar reference, bit for bit in
// out and conv_state, over the shapes, dtypes, masks and sequence mixes that break kernels, plus
// the max error of each case against the float64 reference. `gdnlab check conv` and the tests run it.

import { Tensor } from '../tensor';
import { Backend } from '../backend';
import { Rng } from '../random';
import { forwardSync, ConvArm, ConvMapping, ConvMutant, ConvResult, Schedule } from '../ops/conv';
import { arms, referenceArm } from '../arms/table';
import { convReference, maxError, CONV_TOLERANCE } from '../reference/conv';
import { checkRoundingStore, countBitMismatches } from '../analysis/bits';
import { LocatedMismatch, firstMismatch } from '../analysis/located';

export interface ConvCase {
  name: string;
  C: number;
  K: number;
  xDtype: 'f32' | 'bf16';
  outDtype: 'f32' | 'bf16';
  /** Sequence lengths of the varlen batch. */
  lengths: number[];
  /** Which sequences continue from a state (null: none). */
  initialState: boolean[] | null;
  maskDtype: 'i8' | 'i32';
  bias: boolean;
  /** Row stride of x (> C: padded rows whose padding holds a poison). */
  xRowStride: number;
  seed: number;
  /**
   * 'edge': x, weights and bias chosen so that the pre-activations sweep 80 < |acc| <= 88 (edgeValues), where
   * SiLU's straight-line fast path is not valid and every arm must take gdn_silu's wide path (docs/SPEC.md §9).
   * Random data never gets there. Default 'random'.
   */
  values?: 'random' | 'edge';
}

/**
 * x values for the 'edge' cases: with every weight 1 and no bias, K equal inputs give acc = K·x exactly (a
 * small multiple of a bf16 value). The list covers 80 < |K·x| <= 88 for K = 4 in bf16 steps of 1/8, both
 * signs, and some ordinary values between them, so one group of a vectorised arm mixes both paths.
 */
export function edgeValues(K: number): number[] {
  const out: number[] = [];
  for (let m = 80; m <= 88; m += 0.5) for (const sgn of [-1, 1]) out.push((sgn * m) / K, (sgn * m + 0.25) / K);
  out.push(0.5, -1.25, 3, -7.5);
  return out.map((v) => Math.round(v * 8) / 8); // bf16-exact at these magnitudes
}

/** A [rows, cols] tensor cycling through values (row stride = cols). */
function cycled(values: number[], rows: number, cols: number, dtype: 'f32' | 'bf16'): Tensor {
  const a = new Float32Array(rows * cols);
  for (let i = 0; i < a.length; i++) a[i] = values[(i * 7 + Math.floor(i / cols)) % values.length];
  return Tensor.from(a, [rows, cols], dtype);
}

export interface ConvCaseInputs {
  x: Tensor;
  weight: Tensor;
  bias: Tensor | null;
  queryStartLoc: number[];
  hasInitialState: Tensor | null;
  convState: Tensor;
}

/** Poison in x's row padding: any kernel that reads it produces NaN. */
export const PAD_POISON = NaN;

/**
 * x, unit weights and an old state for the 'edge' cases (conv and fused matrices alike): x is constant over runs
 * of 4 rows per channel, so K consecutive equal inputs give acc = K·x exactly and the pre-activations sweep the
 * edgeValues band; the rows between runs mix two values.
 */
export function edgeTensors(T: number, C: number, K: number, N: number, xDtype: 'f32' | 'bf16'): { x: Tensor; weight: Tensor; convState: Tensor } {
  const vals = edgeValues(K);
  const a = new Float32Array(T * C);
  for (let t = 0; t < T; t++) for (let ch = 0; ch < C; ch++) a[t * C + ch] = vals[(ch * 5 + Math.floor(t / 4)) % vals.length];
  return {
    x: Tensor.from(a, [T, C], xDtype),
    weight: Tensor.from(new Float32Array(C * K).fill(1), [C, K], xDtype),
    convState: cycled(vals, N * C, K - 1, 'f32').reshape([N, C, K - 1]),
  };
}

export function makeConvInputs(c: ConvCase): ConvCaseInputs {
  const T = c.lengths.reduce((a, b) => a + b, 0);
  const qsl = [0];
  for (const l of c.lengths) qsl.push(qsl[qsl.length - 1] + l);
  const N = c.lengths.length;
  const hasInitialState = c.initialState ? Tensor.from(c.initialState.map((b) => (b ? 1 : 0)), [N], c.maskDtype) : null;
  if (c.values === 'edge') return { ...edgeTensors(T, c.C, c.K, N, c.xDtype), bias: null, queryStartLoc: qsl, hasInitialState };
  const x = Tensor.random([T, c.C], c.xDtype, { seed: c.seed, rowStride: c.xRowStride, padValue: c.xRowStride > c.C ? PAD_POISON : undefined });
  const weight = Tensor.random([c.C, c.K], c.xDtype, { seed: c.seed + 1, scale: 0.5 });
  const bias = c.bias ? Tensor.random([c.C], c.xDtype, { seed: c.seed + 2, scale: 0.25 }) : null;
  const convState = Tensor.random([N, c.C, c.K - 1], 'f32', { seed: c.seed + 3 });
  return { x, weight, bias, queryStartLoc: qsl, hasInitialState, convState };
}

/** The whole-chain matrix (issue 2) with the long sequences of issue 3 mixed in, and two batches of long sequences. */
export function convMatrix(opts: { quick?: boolean } = {}): ConvCase[] {
  const cases: ConvCase[] = [];
  const Ks = [2, 3, 4, 5];
  const dtypes: ['f32' | 'bf16', 'f32' | 'bf16'][] = [['f32', 'f32'], ['bf16', 'f32'], ['bf16', 'bf16'], ['f32', 'bf16']];
  const Cs = opts.quick ? [129, 385, 1024] : [129, 385, 1024, 8192];
  let i = 0;
  for (const C of Cs) {
    for (const K of Ks) {
      for (const [xDtype, outDtype] of dtypes) {
        // Rotate the binary factors so every combination of (state, mask, bias) appears for every C.
        const bits = i++;
        const withState = (bits & 1) === 0;
        const maskDtype = (bits & 2) === 0 ? 'i8' : 'i32';
        const bias = (bits & 4) === 0;
        // Varlen mix: an empty sequence, one shorter than K-1, one token, a full chunk, a chunk and
        // one, unequal chunks, and (except at the widest C) 200 tokens: 7 sequences.
        const lengths = C >= 8192 ? [5, 0, K - 2, 8, 9, 33, 17] : [5, 0, K - 2, 8, 9, 33, 200];
        cases.push({
          name: `C=${C}${C === 385 ? '(pad)' : ''} K=${K} ${xDtype}->${outDtype} ${withState ? 'state' : 'nostate'} ${maskDtype} ${bias ? 'bias' : 'nobias'}`,
          C, K, xDtype, outDtype, lengths,
          initialState: withState ? lengths.map((_, s) => s % 3 !== 2) : null,
          maskDtype, bias,
          xRowStride: C === 385 ? 400 : C,
          seed: 1000 + bits * 7,
        });
      }
    }
  }
  // Long sequences (on average more than 128 tokens): the arms that run shorter programs on batches of
  // short sequences (docs/SPEC.md §3.4, `stream`) run their declared length here, over several programs
  // per sequence with a ragged last one. Every varlen mix above averages fewer. Full matrix only (the
  // tests and `gdnlab check conv`); the quick one keeps its case count.
  for (const [xDtype, outDtype] of opts.quick ? [] : [['bf16', 'bf16'], ['f32', 'f32']] as const) {
    const lengths = [300, 9, 200];
    cases.push({
      name: `C=1024 K=4 ${xDtype}->${outDtype} long sequences (300, 9, 200 tokens)`,
      C: 1024, K: 4, xDtype, outDtype, lengths, initialState: [true, false, true], maskDtype: 'i32', bias: true,
      xRowStride: 1024, seed: 300,
    });
  }
  // Pre-activations where SiLU's fast path is not valid (80 < |acc| <= 88): every arm must agree there too.
  for (const [xDtype, outDtype] of [['f32', 'f32'], ['bf16', 'f32']] as const) {
    cases.push({
      name: `C=1024 K=4 ${xDtype}->${outDtype} edge pre-activations (80 < |acc| <= 88)`,
      C: 1024, K: 4, xDtype, outDtype, lengths: [5, 70, 33], initialState: [true, false, true], maskDtype: 'i8', bias: false,
      xRowStride: 1024, seed: 80, values: 'edge',
    });
  }
  return cases;
}

export interface ArmMapping {
  arm: ConvArm;
  mapping: ConvMapping;
}

/**
 * Every arm and mapping that must equal the reference under forward block order: every registered
 * conv arm that is neither the reference nor a planted mutant, with each correct mapping it runs
 * (exact-racy is the #305 shape, correct only by luck of the block order).
 */
export function allArmMappings(): ArmMapping[] {
  const list: ArmMapping[] = [];
  // Arms registered at run time count while they are defined in this process (lib/arms).
  for (const a of arms('conv').filter((x) => !x.reference && !x.mutant)) {  // user arms only while defined
    for (const mapping of a.mappings.filter((m) => m !== 'exact-racy')) list.push({ arm: a.name, mapping });
  }
  return list;
}

export interface ConvCaseResult {
  case: string;
  arm: ConvArm;
  mapping: ConvMapping;
  armRan: ConvArm;
  mappingRan: ConvMapping;
  backend: string;
  outMismatches: number;
  stateMismatches: number;
  /** Against the float64 reference (scalar arm only). */
  maxAbsError?: number;
  withinTolerance?: boolean;
  /**
   * bf16 outputs (scalar arm only): elements whose stored bf16 is not the float64 reference
   * rounded to nearest even (allowing for f32 error near a rounding midpoint). The bf16 tolerance
   * alone would pass a truncating store.
   */
  roundingViolations?: number;
  ok: boolean;
  /** A row whose bits differ: its first differing element (out first, then convState) and the two values. */
  firstMismatch?: LocatedMismatch;
}

export interface ConvCheckReport {
  backend: string;
  results: ConvCaseResult[];
  failures: ConvCaseResult[];
  /** CUDA only: the scalar arm on CUDA vs on the host, per case. */
  crossBackend: { case: string; outMismatches: number; stateMismatches: number; ok: boolean }[];
}

function compareResults(a: ConvResult, b: ConvResult): { out: number; state: number } {
  return { out: countBitMismatches(a.out, b.out), state: countBitMismatches(a.convState, b.convState) };
}

export interface ConvCheckOptions {
  backend: Backend;
  /** A host backend to compare CUDA results with (CUDA only). */
  hostBackend?: Backend;
  cases?: ConvCase[];
  armMappings?: ArmMapping[];
  schedule?: Schedule;
  mutant?: ConvMutant | null;
  onCase?: (done: number, total: number, name: string) => void;
}

export function checkConv(opts: ConvCheckOptions): ConvCheckReport {
  const cases = opts.cases ?? convMatrix();
  const armMappings = opts.armMappings ?? allArmMappings();
  const results: ConvCaseResult[] = [];
  const crossBackend: ConvCheckReport['crossBackend'] = [];
  const reference = referenceArm('conv').name;
  let done = 0;
  for (const c of cases) {
    const inputs = makeConvInputs(c);
    const base = { ...inputs, hasInitialState: inputs.hasInitialState };
    const ref = forwardSync(base, { arm: reference, outDtype: c.outDtype, backend: opts.backend });
    try {
      const f64 = convReference({ ...inputs, hasInitialState: inputs.hasInitialState ? Array.from(inputs.hasInitialState.bits()) : null });
      const tol = CONV_TOLERANCE[c.outDtype];
      const err = maxError(ref.out.toFloat32(), f64.out, tol.rtol, tol.atol);
      const stateErr = maxError(ref.convState.toFloat32(), f64.convState, 0, 0);
      const rounding = c.outDtype === 'bf16' ? checkRoundingStore(ref.out.toFloat32(), f64.out, 'bf16', CONV_TOLERANCE.f32.rtol, CONV_TOLERANCE.f32.atol).violations : 0;
      results.push({
        case: c.name, arm: reference, mapping: 'sequence', armRan: ref.contract.arm, mappingRan: ref.contract.mapping,
        backend: opts.backend.kind, outMismatches: 0, stateMismatches: stateErr.violations,
        maxAbsError: err.maxAbs, withinTolerance: err.withinTolerance, roundingViolations: rounding,
        ok: err.withinTolerance && stateErr.violations === 0 && rounding === 0,
      });
      if (opts.hostBackend && opts.backend.kind === 'cuda') {
        const host = forwardSync(base, { arm: reference, outDtype: c.outDtype, backend: opts.hostBackend });
        const d = compareResults(ref, host);
        crossBackend.push({ case: c.name, outMismatches: d.out, stateMismatches: d.state, ok: d.out === 0 && d.state === 0 });
        host.release();
      }
      for (const am of armMappings) {
        const r = forwardSync(base, { arm: am.arm, mapping: am.mapping, outDtype: c.outDtype, backend: opts.backend, schedule: opts.schedule, mutant: opts.mutant ?? null });
        const d = compareResults(r, ref);
        const ok = d.out === 0 && d.state === 0;
        results.push({
          case: c.name, arm: am.arm, mapping: am.mapping, armRan: r.contract.arm, mappingRan: r.contract.mapping,
          backend: opts.backend.kind, outMismatches: d.out, stateMismatches: d.state, ok,
          ...(ok ? {} : { firstMismatch: firstMismatch([['out', r.out, ref.out], ['convState', r.convState, ref.convState]]) }),
        });
        r.release();
      }
    } finally {
      ref.release();
    }
    opts.onCase?.(++done, cases.length, c.name);
  }
  return { backend: opts.backend.kind, results, failures: results.filter((r) => !r.ok), crossBackend };
}
