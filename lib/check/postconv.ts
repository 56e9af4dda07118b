// The post-conv equivalence suite: every registered arm against the tree reference on q, k, v, g and beta,
// bit for bit, over dtypes, token counts (incl. partial 16-token tiles), head layouts, packed a/b
// views with offsets and wide strides, and head sizes that force the fallback; plus the max error
// of each output against the float64 reference, and the planted seq4 mutant.

import { arms as armTable } from '../arms/table';
import { Tensor } from '../tensor';
import { Backend } from '../backend';
import * as postconv from '../ops/postconv';
import { PostconvArm, PostconvShape } from '../ops/postconv';
import { postconvReference } from '../reference/postconv';
import { maxError } from '../reference/conv';
import { countBitMismatches } from '../analysis/bits';
import { LocatedMismatch, firstMismatch } from '../analysis/located';
import { userArm } from '../arms/registry';

export interface PostconvCase extends PostconvShape {
  name: string;
  T: number;
  convDtype: 'f32' | 'bf16';
  gateDtype: 'f32' | 'bf16';
  qkvDtype: 'f32' | 'bf16';
  /** Width of the packed [T, width] buffer holding b at column bOffset and a at aOffset. */
  packedWidth: number;
  bOffset: number;
  aOffset: number;
  seed: number;
}

export const OUTPUTS = ['q', 'k', 'v', 'g', 'beta'] as const;
export type PostconvOutput = (typeof OUTPUTS)[number];

export function makePostconvInputs(c: PostconvCase): postconv.PostconvInputs {
  const C = 2 * c.Hk * c.Dk + c.Hv * c.Dv;
  const packed = Tensor.random([c.T, c.packedWidth], c.gateDtype, { seed: c.seed + 1, scale: 2 });
  return {
    convOut: Tensor.random([c.T, C], c.convDtype, { seed: c.seed }),
    b: packed.sliceCols(c.bOffset, c.Hv),
    a: packed.sliceCols(c.aOffset, c.Hv),
    ALog: Tensor.random([c.Hv], 'f32', { seed: c.seed + 2, scale: 0.5 }),
    dtBias: Tensor.random([c.Hv], 'f32', { seed: c.seed + 3 }),
  };
}

/** The issue-4 matrix: 8 dtype combinations × T × head layouts, plus fallback head sizes. */
export function postconvMatrix(opts: { quick?: boolean } = {}): PostconvCase[] {
  const cases: PostconvCase[] = [];
  const Ts = opts.quick ? [0, 1, 15, 16, 17, 128] : [0, 1, 15, 16, 17, 128, 2048];
  const heads: [number, number][] = [[4, 8], [16, 32], [16, 48]];
  const dt = ['f32', 'bf16'] as const;
  let seed = 400;
  for (const [Hk, Hv] of heads) {
    for (const T of Ts) {
      for (const convDtype of dt) for (const gateDtype of dt) for (const qkvDtype of dt) {
        // The largest layout at T = 2048 runs with one dtype combination per conv dtype (time on the host).
        if (T === 2048 && Hv === 48 && gateDtype !== qkvDtype) continue;
        const wide = (seed & 1) === 0;
        cases.push({
          name: `T=${T} Hk=${Hk} Hv=${Hv} conv ${convDtype} gate ${gateDtype} qkv ${qkvDtype} ${wide ? 'packed b|a+pad' : 'packed pad|a|b'}`,
          T, Hk, Hv, Dk: 128, Dv: 128, convDtype, gateDtype, qkvDtype,
          packedWidth: 2 * Hv + (wide ? 37 : 3), bOffset: wide ? 0 : 3 + Hv, aOffset: wide ? Hv : 3, seed: seed++,
        });
      }
    }
  }
  for (const [Dk, Dv] of [[64, 64], [300, 300], [128, 64]]) {
    cases.push({
      name: `T=33 Hk=2 Hv=4 Dk=${Dk} Dv=${Dv} (falls back to tree) f32`, T: 33, Hk: 2, Hv: 4, Dk, Dv,
      convDtype: 'f32', gateDtype: 'f32', qkvDtype: 'f32', packedWidth: 11, bOffset: 1, aOffset: 6, seed: seed++,
    });
  }
  return cases;
}

/**
 * Bounds on |tree − float64 reference| per output, by the dtype it is stored in (the inputs of
 * makePostconvInputs: |g| reaches ~10, |v| ~5). The tree row of a check is ok only within them.
 */
export function postconvErrorBound(output: PostconvOutput, c: Pick<PostconvCase, 'convDtype' | 'qkvDtype'>): number {
  if (output === 'g') return 1e-4; // a few f32 ulps of |g| <= ~10
  if (output === 'beta') return 1e-6;
  if (output === 'v') return c.qkvDtype === 'bf16' && c.convDtype === 'f32' ? 1.6e-2 : 0; // a copy, or its bf16 rounding
  return c.qkvDtype === 'f32' ? 1e-6 : 4e-3; // |q| <= 1: f32 ulps, or half a bf16 ulp
}

export interface PostconvCaseResult {
  case: string;
  arm: PostconvArm;
  armRan: PostconvArm;
  backend: string;
  /** Mismatching elements per output against tree on the same backend. */
  mismatches: Record<PostconvOutput, number>;
  ok: boolean;
  /** A row whose bits differ: its first differing element (outputs in q, k, v, g, beta order) and the two values. */
  firstMismatch?: LocatedMismatch;
  /** tree only: max |error| per output against the float64 reference. */
  maxAbsError?: Record<PostconvOutput, number>;
  /** tree only: elements outside postconvErrorBound, per output. */
  referenceViolations?: Record<PostconvOutput, number>;
}

export interface PostconvCheckReport {
  backend: string;
  results: PostconvCaseResult[];
  failures: PostconvCaseResult[];
  crossBackend: { case: string; mismatches: Record<PostconvOutput, number>; ok: boolean }[];
}

function compareOutputs(a: postconv.PostconvResult, b: postconv.PostconvResult): Record<PostconvOutput, number> {
  const m = {} as Record<PostconvOutput, number>;
  for (const o of OUTPUTS) m[o] = countBitMismatches(a[o], b[o]);
  return m;
}

const total = (m: Record<PostconvOutput, number>) => OUTPUTS.reduce((s, o) => s + m[o], 0);

export async function checkPostconv(opts: {
  backend: Backend;
  hostBackend?: Backend;
  cases?: PostconvCase[];
  arms?: PostconvArm[];
  reference?: boolean;
  onCase?: (done: number, total: number, name: string) => void;
}): Promise<PostconvCheckReport> {
  const cases = opts.cases ?? postconvMatrix();
  // Default: every registered arm that must equal the tree (neither the reference nor a planted mutant).
  // armTable lists user arms only while they are defined.
  const arms = opts.arms ?? armTable('postconv').filter((a) => !a.reference && !a.mutant).map((a) => a.name);
  const mutants = new Set(armTable('postconv').filter((a) => a.mutant).map((a) => a.name));
  const results: PostconvCaseResult[] = [];
  const crossBackend: PostconvCheckReport['crossBackend'] = [];
  let done = 0;
  for (const c of cases) {
    const inputs = makePostconvInputs(c);
    const dims = { Hk: c.Hk, Hv: c.Hv, Dk: c.Dk, Dv: c.Dv, qkvDtype: c.qkvDtype, backend: opts.backend };
    const tree = await postconv.forward(inputs, { ...dims, arm: 'tree' });
    try {
      // The tree row is a comparison with the float64 reference made here, never a given: without
      // the reference (runSeq4Mutant) there is no tree row at all.
      if (opts.reference ?? true) {
        const ref = postconvReference(inputs, c);
        const maxAbs = { q: 0, k: 0, v: 0, g: 0, beta: 0 };
        const violations = { q: 0, k: 0, v: 0, g: 0, beta: 0 };
        for (const o of OUTPUTS) {
          const e = maxError(tree[o].toFloat32(), ref[o], 0, postconvErrorBound(o, c));
          maxAbs[o] = e.maxAbs;
          violations[o] = e.violations;
        }
        results.push({
          case: c.name, arm: 'tree', armRan: tree.arm, backend: opts.backend.kind, mismatches: { q: 0, k: 0, v: 0, g: 0, beta: 0 },
          ok: total(violations) === 0, maxAbsError: maxAbs, referenceViolations: violations,
        });
      }
      if (opts.hostBackend && opts.backend.kind === 'cuda') {
        const host = await postconv.forward(inputs, { ...dims, arm: 'tree', backend: opts.hostBackend });
        const m = compareOutputs(tree, host);
        crossBackend.push({ case: c.name, mismatches: m, ok: total(m) === 0 });
        host.release();
      }
      for (const arm of arms) {
        const r = await postconv.forward(inputs, { ...dims, arm });
        const m = compareOutputs(r, tree);
        const ok = total(m) === 0;
        results.push({
          case: c.name, arm, armRan: r.arm, backend: opts.backend.kind, mismatches: m, ok,
          ...(ok ? {} : { firstMismatch: firstMismatch(OUTPUTS.map((o) => [o, r[o], tree[o]] as const)) }),
        });
        r.release();
      }
    } finally {
      tree.release();
    }
    opts.onCase?.(++done, cases.length, c.name);
  }
  return { backend: opts.backend.kind, results, failures: results.filter((r) => !r.ok && !mutants.has(r.arm)), crossBackend };
}

export interface Seq4Outcome {
  /** Comparisons of the f32-output cases in which seq4 differs from tree in q or k. */
  caughtInF32: number;
  f32Cases: number;
  /** Comparisons of the bf16-output cases in which seq4 differs. */
  caughtInBf16: number;
  bf16Cases: number;
  caught: boolean;
}

/** Runs seq4 through the suite: the f32 half must catch it; counts what the bf16 half sees. */
export async function runSeq4Mutant(backend: Backend, cases = postconvMatrix({ quick: true })): Promise<Seq4Outcome> {
  const report = await checkPostconv({ backend, cases: cases.filter((c) => c.Dk === 128 && c.Dv === 128), arms: ['seq4'], reference: false });
  const seq4 = report.results.filter((r) => r.arm === 'seq4');
  const byCase = new Map(cases.map((c) => [c.name, c]));
  const f32 = seq4.filter((r) => byCase.get(r.case)!.qkvDtype === 'f32');
  const bf16 = seq4.filter((r) => byCase.get(r.case)!.qkvDtype === 'bf16');
  const caughtInF32 = f32.filter((r) => r.mismatches.q + r.mismatches.k > 0).length;
  return {
    caughtInF32, f32Cases: f32.length,
    caughtInBf16: bf16.filter((r) => r.mismatches.q + r.mismatches.k > 0).length, bf16Cases: bf16.length,
    caught: caughtInF32 > 0,
  };
}

export interface PostconvDefectOutcome {
  arm: string;
  plantedDefect: string;
  /** Comparisons with the tree (every output) that differ, by the output dtype of the case. */
  caughtInF32: number;
  f32Cases: number;
  caughtInBf16: number;
  bf16Cases: number;
  caught: boolean;
}

/**
 * The user post-conv arms defined as planted defects (defineArm({ plantedDefect })), through the same
 * check as seq4: the Dk = Dv = 128 cases of the quick matrix, every output compared with the tree.
 * Caught when any comparison differs; the split by output dtype shows what bf16 storage hides.
 */
export async function runPostconvDefects(backend: Backend, cases = postconvMatrix({ quick: true })): Promise<PostconvDefectOutcome[]> {
  const out: PostconvDefectOutcome[] = [];
  const byCase = new Map(cases.map((c) => [c.name, c]));
  for (const a of armTable('postconv').filter((x) => x.user && x.mutant)) {
    const report = await checkPostconv({ backend, cases: cases.filter((c) => c.Dk === 128 && c.Dv === 128), arms: [a.name], reference: false });
    const rows = report.results.filter((r) => r.arm === a.name);
    const differs = (r: PostconvCaseResult) => total(r.mismatches) > 0;
    const f32 = rows.filter((r) => byCase.get(r.case)!.qkvDtype === 'f32');
    const bf16 = rows.filter((r) => byCase.get(r.case)!.qkvDtype === 'bf16');
    out.push({
      arm: a.name, plantedDefect: userArm('postconv', a.name)?.plantedDefect ?? '',
      caughtInF32: f32.filter(differs).length, f32Cases: f32.length,
      caughtInBf16: bf16.filter(differs).length, bf16Cases: bf16.length,
      caught: rows.some(differs),
    });
  }
  return out;
}

/** Rows (token, head) of q and k in which two results differ: the unit the published counts use. */
export function differingRows(a: Tensor, b: Tensor): number {
  const x = a.bits();
  const y = b.bits();
  const D = a.cols;
  let rows = 0;
  for (let i = 0; i < x.length; i += D) {
    for (let j = 0; j < D; j++) {
      if (x[i + j] !== y[i + j]) {
        rows++;
        break;
      }
    }
  }
  return rows;
}
