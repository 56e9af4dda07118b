// The post-conv step of a GDN layer (docs/SPEC.md §6): split conv_out into q, k, v; L2-normalise q and
// k per head; gate g = -exp(A_log)·softplus(a + dt_bias) and beta = sigmoid(b).

import { Tensor, releaseTensors } from '../tensor';
import { Backend, NativeOp } from '../backend';
import { PostconvArgs, postconvArgsCodec, postconvResultCodec } from '../native/gdn';
import { describe } from '../dtype';
import { armId, armIsMutant, armName, armNames, arms } from '../arms/table';
import { userArm } from '../arms/registry';
import { namedCoordinates, postconvCoordinates } from '../analysis/coordinates';
import { definePostconvArm, PostconvArmSpec, DefinedArm } from '../arms/define';
import { DTYPE_CODE, NamedRange, Staging, TimedSource, backendOf, opCall, expectChoice, expectContiguous, expectDType, expectInt, expectOut, expectShape, expectTensor, namedRanges } from './common';

/**
 * A post-conv arm's name: any arm of libgdn's registry (postconvArms()). The built-in `seq4` is a
 * PLANTED MUTANT (the sequential fold, flagged `mutant` in arms('postconv')): it exists so checks can
 * prove they catch it.
 */
export type PostconvArm = string;
/** The post-conv arms, in id order, from libgdn (gdn_arm_info_get). */
export function postconvArms(): PostconvArm[] {
  return armNames('postconv');
}

export interface PostconvInputs {
  /** [T, C] contiguous, f32 or bf16, C = 2·Hk·Dk + Hv·Dv, channels [q heads | k heads | v heads]. */
  convOut: Tensor;
  /** [T, Hv] f32 or bf16, any row stride (may be a column view of a packed projection). */
  a: Tensor;
  /** [T, Hv], the dtype of a. */
  b: Tensor;
  /** [Hv] f32. */
  ALog: Tensor;
  /** [Hv] f32. */
  dtBias: Tensor;
}

export interface PostconvShape {
  Hk: number;
  Hv: number;
  Dk: number;
  Dv: number;
}

export interface PostconvOptions extends PostconvShape {
  arm?: PostconvArm;
  qkvDtype?: 'f32' | 'bf16';
  backend?: Backend;
  /**
   * Output buffers to write into instead of allocating new ones (device tensors of this backend, any
   * subset): q, k [T, Hk, Dk] and v [T, Hv, Dv] of qkvDtype, g and beta [T, Hv] f32. They stay the
   * caller's (the result's release() leaves them) and are not poisoned first.
   */
  out?: PostconvOutBuffers;
}

export interface PostconvOutBuffers {
  q?: Tensor;
  k?: Tensor;
  v?: Tensor;
  g?: Tensor;
  beta?: Tensor;
}

const POSTCONV_OUTPUTS = ['q', 'k', 'v', 'g', 'beta'] as const;
const OUT_NAMES = { q: 'out.q', k: 'out.k', v: 'out.v', g: 'out.g', beta: 'out.beta' } as const;

/**
 * The outputs q, k, v, g, beta of post-conv and of the fused op. The caller's `out` buffers are checked
 * here, before anything is allocated: each by expectOut against the op's `inputs` and the other given
 * buffers, errors naming `out.<name>`, and an unknown key names the op. allocate() then pushes, in
 * q, k, v, g, beta order, the given buffer or a fresh poisoned output of `staging` onto `outputs`, and
 * the fresh ones onto `owned` too (the result releases those only; a caller's catch releases `owned`).
 */
export function qkvgbOutputs(
  op: string, out: unknown, dims: { T: number; Hk: number; Hv: number; Dk: number; Dv: number }, qkvDtype: 'f32' | 'bf16',
  inputs: readonly (readonly [string, Tensor | null | undefined])[], backend: Backend,
): { allocate(staging: Staging, outputs: Tensor[], owned: Tensor[]): void } {
  const given = out ?? {};
  if (typeof given !== 'object') throw new TypeError(`out: expected { q?, k?, v?, g?, beta? } (output buffers), got ${describe(given)}`);
  for (const key of Object.keys(given)) {
    if (!(POSTCONV_OUTPUTS as readonly string[]).includes(key)) throw new TypeError(`out.${key}: not an output of ${op} (expected q, k, v, g or beta)`);
  }
  const { T, Hk, Hv, Dk, Dv } = dims;
  const shapes: Record<(typeof POSTCONV_OUTPUTS)[number], [number[], 'f32' | 'bf16']> = {
    q: [[T, Hk, Dk], qkvDtype], k: [[T, Hk, Dk], qkvDtype], v: [[T, Hv, Dv], qkvDtype], g: [[T, Hv], 'f32'], beta: [[T, Hv], 'f32'],
  };
  const g = given as PostconvOutBuffers;
  const chosen: Partial<Record<(typeof POSTCONV_OUTPUTS)[number], Tensor>> = {};
  // Every input and every given output, by name, as device ranges computed once for the five checks
  // (expectOut skips the output it is checking).
  let ranges: NamedRange[] | null = null;
  for (const key of POSTCONV_OUTPUTS) {
    const t = g[key];
    if (t === undefined) continue;
    ranges ??= namedRanges([...inputs, ['out.q', g.q], ['out.k', g.k], ['out.v', g.v], ['out.g', g.g], ['out.beta', g.beta]], backend);
    chosen[key] = expectOut(t, OUT_NAMES[key], backend, shapes[key][0], shapes[key][1], ranges);
  }
  return {
    allocate(staging, outputs, owned) {
      // The outputs not given, allocated and poisoned together (one native call, one fill launch on CUDA).
      const fresh = staging.outputs(POSTCONV_OUTPUTS.filter((key) => !chosen[key]).map((key) => shapes[key]));
      let next = 0;
      for (const key of POSTCONV_OUTPUTS) {
        const t = chosen[key] ?? fresh[next++];
        if (!chosen[key]) owned.push(t);
        outputs.push(t);
      }
    },
  };
}

/** What the elements of q, k, v [T, H, D] (token, head, feature) and g, beta [T, Hv] (token, head) are. */
const QKV_COORDINATES = postconvCoordinates();
const GATE_COORDINATES = namedCoordinates('gates', ['token', 'head']);

/** Sets the coordinates of the outputs q, k, v, g, beta (post-conv's and the fused op's). */
export function qkvgbCoordinates(outputs: readonly Tensor[]): void {
  outputs.forEach((t, i) => t.withCoordinates(i < 3 ? QKV_COORDINATES : GATE_COORDINATES));
}

export interface PostconvResult {
  q: Tensor;
  k: Tensor;
  v: Tensor;
  g: Tensor;
  beta: Tensor;
  requested: PostconvArm;
  /** The arm that ran (after its fallback rule: token-tile, seq4 and vec-tile run tree unless Dk = Dv = 128). */
  arm: PostconvArm;
  /** True when the arm that ran is a planted mutant (its registry entry's flag). */
  mutant: boolean;
  backend: 'host' | 'cuda';
  release(): void;
}

interface Prepared {
  args: PostconvArgs;
  outputs: Tensor[];
  /** Outputs of ours (released with the result); the caller's out buffers are not in it. */
  owned: Tensor[];
  staging: Staging;
  backend: Backend;
  arm: PostconvArm;
}

function prepare(inputs: PostconvInputs, opts: PostconvOptions): Prepared {
  const arm: PostconvArm = opts.arm ?? 'tree';
  const armIndex = armId('postconv', arm);
  const qkvDtype = expectChoice(opts.qkvDtype ?? 'f32', 'qkvDtype', ['f32', 'bf16'] as const);
  const Hk = expectInt(opts.Hk, 'Hk', 1);
  const Hv = expectInt(opts.Hv, 'Hv', 1);
  const Dk = expectInt(opts.Dk, 'Dk', 1, 1024);
  const Dv = expectInt(opts.Dv, 'Dv', 1, 1024);
  if (Hv % Hk !== 0) throw new RangeError(`Hv: expected a multiple of Hk = ${Hk} (grouped value heads), got ${Hv}`);
  const C = 2 * Hk * Dk + Hv * Dv;
  const conv = expectTensor(inputs.convOut, 'convOut');
  expectDType(conv, 'convOut', ['f32', 'bf16']);
  if (conv.rank !== 2 || conv.shape[1] !== C) throw new RangeError(`convOut: expected shape [T, C=${C}] (2·Hk·Dk + Hv·Dv), got [${conv.shape.join(', ')}]`);
  expectContiguous(conv, 'convOut');
  const T = conv.shape[0];
  const { a, b, ALog, dtBias } = expectGateInputs(inputs, T, Hv);

  const backend = backendOf(opts);
  const outs = qkvgbOutputs('postconv.forward', opts.out, { T, Hk, Hv, Dk, Dv }, qkvDtype,
    [['convOut', conv], ['a', a], ['b', b], ['ALog', ALog], ['dtBias', dtBias]], backend);
  const staging = new Staging(backend);
  const outputs: Tensor[] = [];
  const owned: Tensor[] = [];
  try {
    outs.allocate(staging, outputs, owned);
    const [q, k, v, g, beta] = outputs;
    const args: PostconvArgs = {
      T, Hk, Hv, Dk, Dv,
      conv_dtype: DTYPE_CODE[conv.dtype], gate_dtype: DTYPE_CODE[a.dtype], qkv_dtype: DTYPE_CODE[qkvDtype],
      arm: armIndex,
      a_row_stride: a.rowStride,
      b_row_stride: b.rowStride,
      conv_out: staging.input(conv).addr,
      // Column views (a and b inside one packed projection) keep their offset and row stride on the backend.
      a: staging.input(a).addr,
      b: staging.input(b).addr,
      A_log: staging.input(ALog).addr,
      dt_bias: staging.input(dtBias).addr,
      q: q.addr, k: k.addr, v: v.addr, g: g.addr, beta: beta.addr,
    };
    return { args, outputs, owned, staging, backend, arm };
  } catch (e) {
    staging.release();
    for (const t of owned) t.release();
    throw e;
  }
}

function postconvResult(p: Prepared, resultBytes: Uint8Array): PostconvResult {
  const [q, k, v, g, beta] = p.outputs;
  qkvgbCoordinates(p.outputs);
  const ranId = postconvResultCodec.decode(resultBytes).arm_ran;
  const ran = armName('postconv', ranId);
  const owned = p.owned;
  return {
    q, k, v, g, beta,
    requested: p.arm,
    arm: ran,
    mutant: armIsMutant('postconv', ranId),
    backend: p.backend.kind,
    release() {
      releaseTensors(owned);
    },
  };
}

// The staged inputs go after the call either way; the outputs of ours only after a failed one.
const postconvCall = opCall<PostconvInputs, PostconvOptions, Prepared, PostconvResult>({
  what: 'postconv.forward',
  prepare: (inputs, opts) => prepare(inputs, opts),
  entry: (lib) => lib.postconvForwardRaw,
  args: (p, path) => path === 'fresh' ? [postconvArgsCodec.encode(p.args), postconvResultCodec.fresh()] : [postconvArgsCodec.encodeScratch(p.args), postconvResultCodec.scratch()],
  finish: (p, args) => {
    p.staging.release();
    return postconvResult(p, args[1] as Uint8Array);
  },
  abandon: (p) => {
    for (const t of p.owned) t.release();
    p.staging.release();
  },
});

export function forward(inputs: PostconvInputs, opts: PostconvOptions): Promise<PostconvResult> {
  return postconvCall.forward(inputs, opts);
}

/** The same as forward, on the calling thread (no await; for tight loops). */
export function forwardSync(inputs: PostconvInputs, opts: PostconvOptions): PostconvResult {
  return postconvCall.forwardSync(inputs, opts);
}

/** A post-conv launch ready for the native timing loop (inputs staged once). */
export function prepareTimed(inputs: PostconvInputs, opts: PostconvOptions, label?: string): NativeOp & { source: TimedSource; release(): void } {
  if (opts.arm !== undefined) userArm('postconv', opts.arm)?.prepareTiming();  // a defined arm is timed unchecked
  const p = prepare(inputs, opts);
  return {
    kind: 'postconv',
    args: p.args,
    source: { op: 'postconv', inputs, opts },
    label: label ?? p.arm,
    release() {
      p.staging.release();
      for (const t of p.owned) t.release();
    },
  };
}

/** Bytes a post-conv launch must move at least: conv_out, a, b read; q, k, v, g, beta written. */
export function postconvBytes(T: number, s: PostconvShape, convBytes: number, gateBytes: number, qkvBytes: number): number {
  const C = 2 * s.Hk * s.Dk + s.Hv * s.Dv;
  return T * (C * convBytes + 2 * s.Hv * gateBytes + C * qkvBytes + 2 * s.Hv * 4);
}

/** Defines (or replaces) a post-conv arm from a cell (docs/USER-ARMS.md). */
export function defineArm(spec: PostconvArmSpec, opts: { backend?: Backend } = {}): DefinedArm {
  return definePostconvArm(spec, opts);
}

/** The gate inputs of the post-conv and the fused op: a and b [T, Hv] (one dtype, f32 or bf16), A_log and
 * dt_bias [Hv] f32 (docs/SPEC.md §6). Errors name the argument. */
export function expectGateInputs(
  inputs: { a: unknown; b: unknown; ALog: unknown; dtBias: unknown }, T: number, Hv: number,
): { a: Tensor; b: Tensor; ALog: Tensor; dtBias: Tensor } {
  const a = expectTensor(inputs.a, 'a');
  const b = expectTensor(inputs.b, 'b');
  expectDType(a, 'a', ['f32', 'bf16']);
  if (b.dtype !== a.dtype) throw new TypeError(`b: expected dtype ${a.dtype} (the dtype of a), got ${b.dtype}`);
  expectShape(a, 'a', [T, Hv], ['T', 'Hv']);
  expectShape(b, 'b', [T, Hv], ['T', 'Hv']);
  const ALog = expectTensor(inputs.ALog, 'ALog');
  const dtBias = expectTensor(inputs.dtBias, 'dtBias');
  expectDType(ALog, 'ALog', ['f32']);
  expectDType(dtBias, 'dtBias', ['f32']);
  expectShape(ALog, 'ALog', [Hv], ['Hv']);
  expectShape(dtBias, 'dtBias', [Hv], ['Hv']);
  return { a, b, ALog, dtBias };
}
