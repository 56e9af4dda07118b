// The fused conv -> post-conv op (docs/SPEC.md, "Fused conv -> post-conv"): the causal conv + SiLU and
// the split / q,k L2 norm / gates in one pass. x is read once; q, k, v, g, beta and the final conv state
// are written; the conv output never reaches memory. Its bits are those of `chain()`: conv (scalar, out
// dtype = convDtype) followed by post-conv (tree).

import { describe } from '../dtype';
import { Tensor, releaseTensors } from '../tensor';
import { Backend, NativeOp } from '../backend';
import { FusedArgs, FusedResultStruct, freeNative, fusedArgsCodec, fusedResultCodec } from '../native/gdn';
import * as conv from './conv';
import * as postconv from './postconv';
import { armId, armName, armNames } from '../arms/table';
import { PostconvShape, PostconvOutBuffers } from './postconv';
import { DTYPE_CODE, Staging, TimedSource, backendOf, opCall, expectChoice, expectDType, expectInt, expectShape, expectTensor, expectContiguous } from './common';

/**
 * The arm gdn.fused.forward runs when none is named: `stream-mufu`, 0.88-0.95 of `stream`'s time on an H200
 * with the same bits (CHANGELOG 2026-12-03, f0e44e1); elsewhere (host, other GPUs, f32 convDtype) it runs
 * `stream`'s arithmetic.
 */
export const DEFAULT_FUSED_ARM = 'stream-mufu';

/** The fused op's arms, read from libgdn's registry (`gdnlab arms`); 'head-tile', 'stream' and 'stream-mufu' are built in. */
export function fusedArms(): string[] {
  return armNames('fused');
}
export type FusedArm = string;
/** Planted mutations (tests and teaching): a summation order that is not the tree's; no rounding of the conv output. */
export const FUSED_MUTANTS = ['seq-fold', 'no-round'] as const;
export type FusedMutant = (typeof FUSED_MUTANTS)[number];
/** Tokens per program: (sequence, 64-token chunk) pairs. */
export const FUSED_CHUNK = 64;
/** The head size the fused op needs (Dk = Dv, every Qwen3.5 model). */
export const FUSED_HEAD_DIM = 128;

/**
 * The conv's inputs (conv.ConvInputs: x [T, C] with C = 2·Hk·Dk + Hv·Dv and a row stride that is a multiple of
 * 4 here, weight, bias, queryStartLoc, hasInitialState, convState — not modified unless `inPlace`) and the
 * post-conv's gate inputs.
 */
export interface FusedInputs extends conv.ConvInputs, Omit<postconv.PostconvInputs, 'convOut'> {}

export interface FusedOptions extends PostconvShape {
  /** Default DEFAULT_FUSED_ARM (`stream-mufu`); every arm gives the same bits (docs/SPEC.md §7). */
  arm?: FusedArm;
  /** The dtype the two-op chain would store the conv output in: the fused op rounds to it where the chain stores. */
  convDtype?: 'f32' | 'bf16';
  qkvDtype?: 'f32' | 'bf16';
  mutant?: FusedMutant | null;
  backend?: Backend;
  /** Update `convState` itself (a device tensor on the backend) instead of returning a new state tensor. */
  inPlace?: boolean;
  /**
   * Buffers to write q, k, v, g, beta into (any subset), as postconv.forward's `out`: tensors on the
   * backend of the call with the outputs' shapes and dtypes, contiguous, sharing no byte with an input
   * or another output. They stay the caller's (release() leaves them) and are not poisoned first.
   */
  out?: PostconvOutBuffers;
}


export interface FusedLaunch {
  arm: FusedArm;
  threadsPerBlock: number;
  /** [head slots (2·Hk + Hv + 1), programs] */
  grid: [number, number];
  tokensPerProgram: number;
}

/** The outputs of the fused op, or of the two-op chain it must equal. */
export interface FusedOutputs {
  q: Tensor;
  k: Tensor;
  v: Tensor;
  g: Tensor;
  beta: Tensor;
  convState: Tensor;
  release(): void;
}

export interface FusedResult extends FusedOutputs {
  requested: FusedArm;
  launch: FusedLaunch;
  mutant: FusedMutant | null;
  backend: 'host' | 'cuda';
}

interface Prepared {
  args: FusedArgs;
  outputs: Tensor[];
  owned: Tensor[];  // the outputs this call allocated (the others are the caller's `out` buffers)
  convState: Tensor;
  stateIsCaller: boolean;
  staging: Staging;
  natives: unknown[];  // native memory of this call (a fresh host copy of the offsets), freed after it
  backend: Backend;
  arm: FusedArm;
  mutant: FusedMutant | null;
}

// offsetsPath: as conv.forward's (conv.OffsetsPath) — offsets given as numbers travel as a host copy
// (no upload by TypeScript, no read-back by libgdn) except in timing runs, which replay the launch later.
function prepare(inputs: FusedInputs, opts: FusedOptions, offsetsPath: conv.OffsetsPath): Prepared {
  if (!inputs || typeof inputs !== 'object') throw new TypeError(`inputs: expected { x, weight, queryStartLoc, convState, a, b, ALog, dtBias, … }, got ${describe(inputs)}`);
  const arm = armName('fused', armId('fused', opts.arm ?? DEFAULT_FUSED_ARM));
  const convDtype = expectChoice(opts.convDtype ?? 'f32', 'convDtype', ['f32', 'bf16'] as const);
  const qkvDtype = expectChoice(opts.qkvDtype ?? 'f32', 'qkvDtype', ['f32', 'bf16'] as const);
  const mutant = opts.mutant == null ? null : expectChoice(opts.mutant, 'mutant', FUSED_MUTANTS);
  const Hk = expectInt(opts.Hk, 'Hk', 1);
  const Hv = expectInt(opts.Hv, 'Hv', 1);
  const Dk = expectInt(opts.Dk, 'Dk', 1);
  const Dv = expectInt(opts.Dv, 'Dv', 1);
  if (Dk !== FUSED_HEAD_DIM || Dv !== FUSED_HEAD_DIM) {
    throw new RangeError(`Dk, Dv: the fused op needs Dk = Dv = ${FUSED_HEAD_DIM} (every Qwen3.5 model), got Dk = ${Dk}, Dv = ${Dv}; run conv.forward then postconv.forward for other sizes`);
  }
  if (Hv % Hk !== 0) throw new RangeError(`Hv: expected a multiple of Hk = ${Hk} (grouped value heads), got ${Hv}`);
  const C = 2 * Hk * Dk + Hv * Dv;

  const x = expectTensor(inputs.x, 'x');
  expectDType(x, 'x', ['f32', 'bf16']);
  if (x.rank !== 2 || x.shape[1] !== C) throw new RangeError(`x: expected shape [T, C=${C}] (2·Hk·Dk + Hv·Dv), got [${x.shape.join(', ')}]`);
  if (x.rowStride % 4 !== 0) throw new RangeError(`x: expected a row stride that is a multiple of 4 elements (rows are read in 4-element vectors), got ${x.rowStride}`);
  const T = x.shape[0];
  const { weight, K, bias } = conv.checkTaps(inputs, x, C);
  const offsets = conv.expectOffsets(inputs.queryStartLoc, T);
  const N = offsets.N;
  let his: Tensor | null = null;
  if (inputs.hasInitialState != null) {
    his = expectTensor(conv.int32Tensor(inputs.hasInitialState, 'hasInitialState'), 'hasInitialState');
    expectDType(his, 'hasInitialState', ['i8', 'i32']);
    expectShape(his, 'hasInitialState', [N], ['N']);
  }
  const state = expectTensor(inputs.convState, 'convState');
  expectDType(state, 'convState', ['f32']);
  expectShape(state, 'convState', [N, C, K - 1], ['N', 'C', 'K-1']);
  expectContiguous(state, 'convState');
  const { a, b, ALog, dtBias } = postconv.expectGateInputs(inputs, T, Hv);

  const backend = backendOf(opts);
  if (opts.inPlace && !(state.location === 'device' && state.backend === backend)) {
    throw new Error('inPlace: convState must already be on the backend (convState.to(backend)) to be updated in place');
  }
  const outs = postconv.qkvgbOutputs('fused.forward', opts.out, { T, Hk, Hv, Dk, Dv }, qkvDtype,
    [['x', x], ['weight', weight], ['bias', bias], ['queryStartLoc', offsets.given], ['hasInitialState', his], ['convState', state],
      ['a', a], ['b', b], ['ALog', ALog], ['dtBias', dtBias]], backend);
  const staging = new Staging(backend);
  const outputs: Tensor[] = [];
  const owned: Tensor[] = [];
  const natives: unknown[] = [];
  let dstate: Tensor | null = null;
  try {
    const qsl = conv.stageOffsets(offsets, offsetsPath, staging, natives);
    dstate = opts.inPlace ? state : staging.mutableCopy(state);
    outs.allocate(staging, outputs, owned);
    const [q, k, v, g, beta] = outputs;
    const args: FusedArgs = {
      T, Hk, Hv, Dk, Dv, K, num_seqs: N,
      x_dtype: DTYPE_CODE[x.dtype], conv_dtype: DTYPE_CODE[convDtype], qkv_dtype: DTYPE_CODE[qkvDtype],
      gate_dtype: DTYPE_CODE[a.dtype], his_dtype: DTYPE_CODE[his?.dtype ?? 'i8'],
      arm: armId('fused', arm),
      mutant: mutant ? FUSED_MUTANTS.indexOf(mutant) + 1 : 0,
      x_row_stride: x.rowStride, a_row_stride: a.rowStride, b_row_stride: b.rowStride,
      x: staging.input(x).addr,
      weight: staging.input(weight).addr,
      bias: bias ? staging.input(bias).addr : 0,
      query_start_loc: qsl.query_start_loc,
      has_initial_state: his ? staging.input(his).addr : 0,
      conv_state: dstate.addr,
      // Column views (a and b inside one packed projection) keep their offset and row stride on the backend.
      a: staging.input(a).addr,
      b: staging.input(b).addr,
      A_log: staging.input(ALog).addr,
      dt_bias: staging.input(dtBias).addr,
      q: q.addr, k: k.addr, v: v.addr, g: g.addr, beta: beta.addr,
      query_start_loc_host: qsl.query_start_loc_host,
    };
    return { args, outputs, owned, convState: dstate, stateIsCaller: !!opts.inPlace, staging, natives, backend, arm, mutant };
  } catch (e) {
    staging.release();
    for (const m of natives) freeNative(m);
    for (const t of owned) t.release();
    if (dstate && !opts.inPlace) dstate.release();
    throw e;
  }
}

function releaseAll(p: Prepared): void {
  releaseTensors(p.stateIsCaller ? p.owned : [...p.owned, p.convState]);
}

// Everything a call staged for itself: the staged inputs and the native memory of its arguments.
function releaseStaged(p: Prepared): void {
  p.staging.release();
  for (const m of p.natives) freeNative(m);
  p.natives.length = 0;
}

function finish(p: Prepared, r: FusedResultStruct): FusedResult {
  releaseStaged(p);
  const [q, k, v, g, beta] = p.outputs;
  postconv.qkvgbCoordinates(p.outputs);
  p.convState.withCoordinates(conv.CONV_STATE_COORDINATES);
  return {
    q, k, v, g, beta,
    convState: p.convState,
    requested: p.arm,
    launch: { arm: armName('fused', r.arm_ran), threadsPerBlock: r.threads_per_block, grid: [r.grid_x, r.grid_y], tokensPerProgram: r.tokens_per_program },
    mutant: p.mutant,
    backend: p.backend.kind,
    release: () => releaseAll(p),
  };
}

// Both calls pass the argument bytes written by fusedArgsCodec (koffi's object marshalling of this
// struct cost several µs a call, docs/BENCHMARKS.md "Per-op overhead").
const fusedCall = opCall<FusedInputs, FusedOptions, Prepared, FusedResult>({
  what: 'fused.forward',
  prepare,
  entry: (lib) => lib.fusedForwardRaw,
  args: (p, path) => path === 'fresh' ? [fusedArgsCodec.encode(p.args), fusedResultCodec.fresh()] : [fusedArgsCodec.encodeScratch(p.args), fusedResultCodec.scratch()],
  finish: (p, args) => finish(p, fusedResultCodec.decode(args[1] as Uint8Array)),
  abandon: (p) => {
    releaseStaged(p);
    releaseAll(p);
  },
});

/** Runs the fused op on a worker thread. */
export function forward(inputs: FusedInputs, opts: FusedOptions): Promise<FusedResult> {
  return fusedCall.forward(inputs, opts);
}

/** The same as forward, on the calling thread. */
export function forwardSync(inputs: FusedInputs, opts: FusedOptions): FusedResult {
  return fusedCall.forwardSync(inputs, opts);
}

/** A fused launch ready for the native timing loop (inputs staged once; the state is a private copy). */
export function prepareTimed(inputs: FusedInputs, opts: FusedOptions, label?: string): NativeOp & { source: TimedSource; release(): void } {
  const p = prepare(inputs, opts, 'device');
  return {
    kind: 'fused',
    args: p.args,
    source: { op: 'fused', inputs, opts },
    label: label ?? `fused ${p.arm}`,
    release() {
      releaseStaged(p);
      releaseAll(p);
    },
  };
}

/** What the fused op must equal: conv (scalar, out = convDtype) then post-conv (tree), the intermediate freed. */
export async function chain(inputs: FusedInputs, opts: FusedOptions): Promise<FusedOutputs> {
  const backend = backendOf(opts);
  const convDtype = opts.convDtype ?? 'f32';
  const c = await conv.forward(
    { x: inputs.x, weight: inputs.weight, bias: inputs.bias, queryStartLoc: inputs.queryStartLoc, hasInitialState: inputs.hasInitialState, convState: inputs.convState },
    { arm: 'scalar', outDtype: convDtype, backend, inPlace: opts.inPlace },
  );
  try {
    const pc = await postconv.forward(
      { convOut: c.out, a: inputs.a, b: inputs.b, ALog: inputs.ALog, dtBias: inputs.dtBias },
      { Hk: opts.Hk, Hv: opts.Hv, Dk: opts.Dk, Dv: opts.Dv, arm: 'tree', qkvDtype: opts.qkvDtype ?? 'f32', backend },
    );
    c.out.release();
    const state = c.convState;
    const inPlace = !!opts.inPlace;
    return {
      q: pc.q, k: pc.k, v: pc.v, g: pc.g, beta: pc.beta, convState: state,
      release() {
        pc.release();
        if (!inPlace) state.release();
      },
    };
  } catch (e) {
    c.release();
    throw e;
  }
}

/**
 * Bytes the fused op must move at least: x read once, a and b read, q, k, v, g, beta written, the final
 * state written (N·C·(K-1) f32) and the old state read for the nInitial sequences that have one (as
 * conv.convBytes; default N, every sequence; the benches pass the batch's count since 22a9d49).
 */
export function fusedBytes(T: number, s: PostconvShape, o: { xBytes: number; qkvBytes: number; gateBytes: number; N: number; nInitial?: number; K: number }): number {
  const C = 2 * s.Hk * s.Dk + s.Hv * s.Dv;
  return T * (C * o.xBytes + 2 * s.Hv * o.gateBytes + C * o.qkvBytes + 2 * s.Hv * 4) + conv.stateBytes(o.N, o.nInitial ?? o.N, C, o.K);
}
