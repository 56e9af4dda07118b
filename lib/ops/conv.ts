// The causal conv1d + SiLU of a GDN layer (docs/SPEC.md §3, §5): prefill over a varlen batch (forward), the
// decode step (update), and the launch contracts of every arm and mapping.

import { describe } from '../dtype';
import { Tensor } from '../tensor';
import { Backend } from '../backend';
import { allocInt32, freeNative, scratchInt32, ConvArgs, ConvUpdateArgs, LaunchContractStruct, convArgsCodec, convUpdateArgsCodec, launchContractCodec } from '../native/gdn';
import { gdnLib } from '../native/gdn';
import { armByName, armId, armName, armNames, arms, convArmMappings } from '../arms/table';
import type { NativeOp } from '../backend';
import { userArm } from '../arms/registry';
import { convCoordinates, namedCoordinates } from '../analysis/coordinates';
import { defineConvArm, ConvArmSpec, DefinedArm } from '../arms/define';
import {
  DTYPE_CODE, Staging, TimedSource, backendOf, opCall, expectChoice, expectContiguous, expectDType, expectInt, expectOut, expectShape, expectTensor, namedRanges,
} from './common';

/** A conv arm's name: any arm of libgdn's registry (convArms(); built in or registered at run time). */
export type ConvArm = string;
/** The conv arms, in id order, from libgdn (gdn_arm_info_get): never a hand-written list. */
export function convArms(): ConvArm[] {
  return armNames('conv');
}
export const CONV_MAPPINGS = ['exact', 'exact-racy', 'sequence'] as const;
export type ConvMapping = (typeof CONV_MAPPINGS)[number];
export const CONV_MUTANTS = ['taps-reversed', 'state-from-output', 'no-tail-guard', 'chunk-off-by-one'] as const;
export type ConvMutant = (typeof CONV_MUTANTS)[number];
/** A conv decode-update arm's name (updateArms()). */
export type UpdateArm = string;
export function updateArms(): UpdateArm[] {
  return armNames('conv-update');
}

/** What the elements of the conv's results are: out by sequence offsets (convCoordinates), these by dimension. */
export const CONV_STATE_COORDINATES = namedCoordinates('conv state', ['sequence', 'channel', 'tap']);
const UPDATE_OUT_COORDINATES = namedCoordinates('conv update out', ['sequence', 'channel']);
const STATE_POOL_COORDINATES = namedCoordinates('conv state pool', ['slot', 'channel', 'tap']);

/** The largest K the kernels support. */
export const MAX_K = 8;
/** Tokens per exact-mapping program of the register arms (GDN_CONV_CHUNK); each arm's own is arms('conv')[i].tokensPerProgram. */
export const CHUNK = 8;

/**
 * Block order on the host backend: 'forward', 'reverse', { shuffle: seed }, or an explicit
 * permutation of the linear block indices (y · grid_x + x).
 */
export type Schedule = 'forward' | 'reverse' | { shuffle: number } | readonly number[];

export interface ConvInputs {
  /** [T, C], f32 or bf16; the row stride may exceed C (padded rows). */
  x: Tensor;
  /** [C, K], the dtype of x. */
  weight: Tensor;
  /** [C], the dtype of x; omit for no bias. */
  bias?: Tensor | null;
  /** [N+1] int32 offsets of the sequences: 0 = q[0] <= … <= q[N] = T. */
  queryStartLoc: Tensor | readonly number[];
  /** [N] i8 or i32, non-zero = continue from conv_state; omit when no sequence has state. */
  hasInitialState?: Tensor | readonly (boolean | number)[] | null;
  /** [N, C, K-1] f32: the state read by sequences with initial state. Not modified (see `inPlace`). */
  convState: Tensor;
}

export interface ConvOptions {
  arm?: ConvArm;
  /**
   * One of the arm's mappings (arms('conv')[i].mappings); another is refused. Default 'exact' where the arm
   * has it, else 'sequence' (scalar and tiled own whole sequences).
   */
  mapping?: ConvMapping;
  outDtype?: 'f32' | 'bf16';
  /** Host backend only. */
  schedule?: Schedule;
  /** CUDA only: cycles chunk 0 spins before reading the state, to widen the #305 race window. */
  widenCycles?: number;
  /** A planted mutation (tests and teaching). */
  mutant?: ConvMutant | null;
  backend?: Backend;
  /** Update `convState` itself (a device tensor on the backend) instead of returning a new state tensor. */
  inPlace?: boolean;
  /**
   * Output buffers to write into instead of allocating new ones (device tensors of this backend):
   * `out` [T, C] of outDtype, `convState` [N, C, K-1] f32 (receives the input state, then the final
   * state). They are the result's tensors and stay the caller's: the result's release() leaves them.
   * They are not poisoned first (an element the kernel does not write keeps its old value).
   */
  out?: ConvOutBuffers;
}

export interface ConvOutBuffers {
  out?: Tensor;
  convState?: Tensor;
}

export interface LaunchContract {
  /** The arm and mapping that run after fallbacks (reg-k4 with K ≠ 4 runs reg). */
  arm: ConvArm;
  mapping: ConvMapping;
  threadsPerBlock: number;
  channelsPerBlock: number;
  channelTiles: number;
  /** (sequence, chunk) programs (exact mappings) or sequences. */
  programs: number;
  grid: [number, number, number];
  sharedBytes: number;
  /** Tokens per program (exact mappings), 0 for whole sequences. */
  tokensPerProgram: number;
}

export interface ConvResult {
  out: Tensor;
  convState: Tensor;
  /** What was asked for, and what ran (they differ when an arm falls back). */
  requested: { arm: ConvArm; mapping: ConvMapping };
  contract: LaunchContract;
  backend: 'host' | 'cuda';
  /** Frees out and convState (unless convState was updated in place). */
  release(): void;
}

// ------------------------------------------------------------------------------------------ contracts

function contractFrom(s: LaunchContractStruct): LaunchContract {
  return {
    arm: armName('conv', s.arm_ran),
    mapping: CONV_MAPPINGS[s.mapping_ran],
    threadsPerBlock: s.threads_per_block,
    channelsPerBlock: s.channels_per_block,
    channelTiles: s.channel_tiles,
    programs: s.programs,
    grid: [s.grid_x, s.grid_y, s.grid_z],
    sharedBytes: s.shared_bytes,
    tokensPerProgram: s.tokens_per_program,
  };
}

/**
 * The launch an arm and mapping make for C channels, K taps and these sequence offsets, with the
 * list of (sequence, chunk) programs. Pure: no backend, no data.
 */
export function launchContract(
  arm: ConvArm,
  mapping: ConvMapping,
  C: number,
  K: number,
  queryStartLoc: readonly number[] | Int32Array,
): LaunchContract & { programList: [number, number][] } {
  const id = armId('conv', arm);
  convMapping(arm, id, mapping);
  expectInt(C, 'C', 1);
  expectInt(K, 'K', 2, MAX_K);
  const qsl = Int32Array.from(queryStartLoc as ArrayLike<number>);
  if (qsl.length < 2) throw new RangeError(`queryStartLoc: expected at least 2 offsets (one sequence), got ${qsl.length}`);
  const lib = gdnLib();
  const total = qsl[qsl.length - 1];
  // Room for every (sequence, chunk) program at this arm's declared chunk length (its registry entry).
  // A batch of short sequences may run shorter programs (docs/SPEC.md §3.4); the contract then reports
  // more programs than that room holds, and the call is repeated with room for all of them.
  const chunk = Math.max(1, armByName('conv', arm).tokensPerProgram || CHUNK);
  let capacity = Math.max(1, Math.ceil(Math.max(total, 0) / chunk) + qsl.length);
  let programs = new Int32Array(2 * capacity);
  const out: LaunchContractStruct[] = [{} as LaunchContractStruct];
  const ask = (): void => {
    const st = lib.convLaunchContract(id, CONV_MAPPINGS.indexOf(mapping), C, K, qsl, qsl.length - 1, out, programs, capacity) as number;
    if (st !== 0) throw new Error(`launchContract: ${lib.lastError() as string}`);
  };
  ask();
  if (out[0].mapping_ran !== CONV_MAPPINGS.indexOf('sequence') && out[0].programs > capacity) {
    capacity = out[0].programs;
    programs = new Int32Array(2 * capacity);
    ask();
  }
  const c = contractFrom(out[0]);
  const programList: [number, number][] = [];
  const listed = c.mapping === 'sequence' ? 0 : Math.min(c.programs, capacity);
  for (let i = 0; i < listed; i++) programList.push([programs[2 * i], programs[2 * i + 1]]);
  return { ...c, programList };
}

// ------------------------------------------------------------------------------------------ forward

interface PreparedConv {
  args: ConvArgs;
  out: Tensor;
  convState: Tensor;
  staging: Staging;
  natives: unknown[];
  stateIsCaller: boolean;
  outIsCaller: boolean;
  requested: { arm: ConvArm; mapping: ConvMapping };
  backend: Backend;
  /** The offsets, for out's (sequence, token, channel) coordinates (read when a diff first needs them). */
  offsets: Int32Array | Tensor;
}

/**
 * The sequence offsets `queryStartLoc` ([N+1] i32: a tensor, or numbers) of a prefill op over T rows.
 * Host offsets are checked here (0 first, non-decreasing, T last); a device tensor's are checked by
 * libgdn, which reads them back anyway (reading them here too would cost a second device round trip
 * per call). Shared by conv.forward and fused.forward.
 */
/**
 * queryStartLoc checked: i32 [N+1], starting at 0, never decreasing, ending at T (checked here when it is
 * on the host; libgdn checks a device copy). Plain numbers stay an Int32Array (`host`), with no Tensor
 * made unless a caller needs one (`tensor()`, e.g. to stage it on the device): the conv's fast route
 * (docs/SPEC.md §3.1) then costs no allocation here (docs/BENCHMARKS.md, "Per-op overhead").
 */
export function expectOffsets(value: Tensor | readonly number[], T: number): { N: number; host: Int32Array | null; given: Tensor | null; tensor(): Tensor } {
  let given: Tensor | null = null;
  let host: Int32Array | null = null;
  if (Array.isArray(value)) {
    host = int32Values(value, 'queryStartLoc');
    if (host.length < 2) throw new RangeError(`queryStartLoc: expected shape [N+1] with N >= 1, got [${host.length}]`);
  } else {
    given = expectTensor(int32Tensor(value, 'queryStartLoc'), 'queryStartLoc');
    expectDType(given, 'queryStartLoc', ['i32']);
    if (given.rank !== 1 || given.numel < 2) throw new RangeError(`queryStartLoc: expected shape [N+1] with N >= 1, got [${given.shape.join(', ')}]`);
    if (given.location === 'host') host = given.bits() as Int32Array;
  }
  const N = (host ? host.length : (given as Tensor).numel) - 1;
  if (host) {
    if (host[0] !== 0) throw new RangeError(`queryStartLoc: must start at 0, got ${host[0]}`);
    for (let s = 0; s < N; s++) {
      if (host[s + 1] < host[s]) throw new RangeError(`queryStartLoc: must not decrease, but [${s}] = ${host[s]} > [${s + 1}] = ${host[s + 1]}`);
    }
    if (host[N] !== T) throw new RangeError(`queryStartLoc: must end at T = ${T} (rows of x), got ${host[N]}`);
  }
  let made: Tensor | null = null;
  return { N, host, given, tensor: () => given ?? (made ??= Tensor.from(host as Int32Array, [N + 1], 'i32')) };
}

/** An array of integers (booleans as 0 / 1) as i32 values; an element that is not an i32 is refused by index. */
function int32Values(value: readonly (number | boolean)[], what: string): Int32Array {
  const out = new Int32Array(value.length);
  for (let i = 0; i < value.length; i++) {
    const v = value[i];
    const n = typeof v === 'boolean' ? (v ? 1 : 0) : v;
    if (!Number.isInteger(n) || n < -(2 ** 31) || n >= 2 ** 31) throw new TypeError(`${what}[${i}]: expected an integer, got ${describe(v)}`);
    out[i] = n;
  }
  return out;
}

export function int32Tensor(value: Tensor | readonly (number | boolean)[], what: string): Tensor {
  if (value instanceof Tensor) return value;
  if (!Array.isArray(value)) throw new TypeError(`${what}: expected a Tensor or an array of integers, got ${describe(value)}`);
  const nums = int32Values(value, what);
  return Tensor.from(nums, [nums.length], 'i32');
}

function scheduleStruct(schedule: Schedule | undefined, natives: unknown[]): ConvArgs['schedule'] {
  if (schedule === undefined || schedule === 'forward') return { kind: 0, order_len: 0, seed: 0, order: 0 };
  if (schedule === 'reverse') return { kind: 1, order_len: 0, seed: 0, order: 0 };
  if (Array.isArray(schedule)) {
    const { mem, addr } = allocInt32(schedule);
    natives.push(mem);
    return { kind: 3, order_len: schedule.length, seed: 0, order: addr };
  }
  if (typeof schedule === 'object' && schedule !== null && 'shuffle' in schedule) {
    const seed = (schedule as { shuffle: number }).shuffle;
    expectInt(seed, 'schedule.shuffle', 0);
    return { kind: 2, order_len: 0, seed, order: 0 };
  }
  throw new TypeError(`schedule: expected 'forward', 'reverse', { shuffle: seed } or an array of block indices, got ${describe(schedule)}`);
}

/** weight [C, K] and optional bias [C], both of x's dtype; K within the supported range. */
export function checkTaps(inputs: { weight: Tensor; bias?: Tensor | null }, x: Tensor, C: number): { weight: Tensor; K: number; bias: Tensor | null } {
  const weight = expectTensor(inputs.weight, 'weight');
  if (weight.dtype !== x.dtype) throw new TypeError(`weight: expected dtype ${x.dtype} (the dtype of x), got ${weight.dtype}`);
  if (weight.rank !== 2 || weight.shape[0] !== C) throw new RangeError(`weight: expected shape [C=${C}, K], got [${weight.shape.join(', ')}]`);
  expectContiguous(weight, 'weight');
  const K = weight.shape[1];
  if (K < 2 || K > MAX_K) throw new RangeError(`weight: K = ${K} is outside the supported range 2..${MAX_K}`);
  const bias = inputs.bias == null ? null : expectTensor(inputs.bias, 'bias');
  if (bias) {
    if (bias.dtype !== x.dtype) throw new TypeError(`bias: expected dtype ${x.dtype} (the dtype of x), got ${bias.dtype}`);
    expectShape(bias, 'bias', [C], ['C']);
  }
  return { weight, K, bias };
}

/**
 * Where host offsets (queryStartLoc given as numbers or a host tensor) travel: 'scratch' — a host copy
 * in the shared scratch array (synchronous calls), 'fresh' — a host copy of the call's own (async
 * calls), 'device' — uploaded like any input (timing runs, which replay the launch later). A host copy
 * spares libgdn the device-to-host read-back of the offsets (docs/SPEC.md §3.1, "the offsets' two routes").
 */
export type OffsetsPath = 'scratch' | 'fresh' | 'device';

/**
 * The two fields of a prefill op's arguments that carry the offsets, for one call on `path`: the host
 * copy's address (query_start_loc_host) when the offsets are on the host and the path allows it, else
 * the offsets staged on the backend (query_start_loc). A 'fresh' copy is pushed on `natives` for the
 * caller to free after the call. Shared by conv.forward and fused.forward.
 */
export function stageOffsets(offsets: ReturnType<typeof expectOffsets>, path: OffsetsPath, staging: Staging, natives: unknown[]): { query_start_loc: number; query_start_loc_host: number } {
  if (path === 'device' || !offsets.host) return { query_start_loc: staging.input(offsets.tensor()).addr, query_start_loc_host: 0 };
  return { query_start_loc: 0, query_start_loc_host: hostInt32Copy(offsets.host, path, natives) };
}

/** The update's slots in host memory: each below the pool size, no slot named twice (negative = skip). */
function checkHostSlots(v: Int32Array, slots: number): void {
  const seen = v.length > 16 ? new Map<number, number>() : null;  // a short batch compares pairs
  for (let b = 0; b < v.length; b++) {
    const s = v[b];
    if (s >= slots) throw new RangeError(`stateIndices[${b}]: slot ${s} is outside the pool of ${slots} slots`);
    if (s < 0) continue;
    let other = -1;
    if (seen) other = seen.get(s) ?? -1;
    else for (let a = 0; a < b && other < 0; a++) if (v[a] === s) other = a;
    if (other >= 0) throw new RangeError(`stateIndices[${b}]: slot ${s} is also used by sequence ${other} (two sequences cannot update one slot)`);
    seen?.set(s, b);
  }
}

/**
 * The address of a native copy of host int32 values for one call on a path other than 'device': the
 * reused scratch array ('scratch', synchronous calls) or a fresh copy pushed on `natives` ('fresh').
 * Shared by the offsets (stageOffsets) and the update's slots.
 */
function hostInt32Copy(values: ArrayLike<number>, path: Exclude<OffsetsPath, 'device'>, natives: unknown[]): number {
  if (path === 'scratch') return scratchInt32(values);
  const m = allocInt32(values);
  natives.push(m.mem);
  return m.addr;
}

/**
 * The mapping a conv call runs: the one asked for, which the arm must list (docs/SPEC.md §3.4: asking for
 * another is an error naming the arm and its mappings; arms that own whole sequences, such as `scalar`,
 * list only 'sequence'); without one, 'exact' where the arm lists it, else 'sequence'. An arm that falls
 * back (fixed K, data requirements) is still asked by its own list: the contract reports what ran.
 */
function convMapping(arm: ConvArm, armIndex: number, asked: unknown): ConvMapping {
  const listed = convArmMappings(armIndex);
  if (asked === undefined) return listed.includes('exact') ? 'exact' : 'sequence';
  const mapping = expectChoice(asked, 'mapping', CONV_MAPPINGS);
  if (!listed.includes(mapping)) {
    throw new RangeError(`mapping: arm '${arm}' runs ${listed.map((m) => `'${m}'`).join(', ')}, not '${mapping}'${listed.length === 1 ? ` (it owns whole sequences; omit mapping or pass '${listed[0]}')` : ''}`);
  }
  return mapping;
}

function prepare(inputs: ConvInputs, opts: ConvOptions, offsetsPath: OffsetsPath): PreparedConv {
  if (!inputs || typeof inputs !== 'object') throw new TypeError(`inputs: expected { x, weight, queryStartLoc, convState, … }, got ${describe(inputs)}`);
  const arm: ConvArm = opts.arm ?? 'scalar';
  const armIndex = armId('conv', arm);
  const mapping = convMapping(arm, armIndex, opts.mapping);
  const outDtype = expectChoice(opts.outDtype ?? 'f32', 'outDtype', ['f32', 'bf16'] as const);
  const mutant = opts.mutant == null ? null : expectChoice(opts.mutant, 'mutant', CONV_MUTANTS);
  const widen = expectInt(opts.widenCycles ?? 0, 'widenCycles', 0, 2 ** 31 - 1);

  const x = expectTensor(inputs.x, 'x');
  expectDType(x, 'x', ['f32', 'bf16']);
  if (x.rank !== 2) throw new RangeError(`x: expected shape [T, C], got [${x.shape.join(', ')}]`);
  const [T, C] = x.shape;
  const { weight, K, bias } = checkTaps(inputs, x, C);
  const offsets = expectOffsets(inputs.queryStartLoc, T);
  const N = offsets.N;
  let his: Tensor | null = null;
  if (inputs.hasInitialState != null) {
    his = expectTensor(int32Tensor(inputs.hasInitialState, 'hasInitialState'), 'hasInitialState');
    expectDType(his, 'hasInitialState', ['i8', 'i32']);
    expectShape(his, 'hasInitialState', [N], ['N']);
  }
  const state = expectTensor(inputs.convState, 'convState');
  expectDType(state, 'convState', ['f32']);
  expectShape(state, 'convState', [N, C, K - 1], ['N', 'C', 'K-1']);
  expectContiguous(state, 'convState');

  const backend = backendOf(opts);
  if (opts.schedule !== undefined && opts.schedule !== 'forward' && backend.kind !== 'host') {
    throw new Error(`schedule: block orders other than 'forward' run on the host backend only (this is ${backend.kind}); on the GPU use widenCycles`);
  }
  if (widen > 0 && backend.kind !== 'cuda') throw new Error('widenCycles: runs on the CUDA backend only (the host backend reproduces the race with schedule: \'reverse\')');
  if (opts.inPlace && !(state.location === 'device' && state.backend === backend)) {
    throw new Error('inPlace: convState must already be on the backend (convState.to(backend)) to be updated in place');
  }

  const given = opts.out ?? {};
  if (typeof given !== 'object') throw new TypeError(`out: expected { out?, convState? } (output buffers), got ${describe(given)}`);
  for (const k of Object.keys(given)) if (k !== 'out' && k !== 'convState') throw new TypeError(`out.${k}: not an output of conv.forward (expected out or convState)`);
  if (opts.inPlace && given.convState) throw new Error('out.convState: cannot be combined with inPlace (inPlace already updates convState itself)');
  const inputsNamed = [['x', x], ['weight', weight], ['bias', bias], ['queryStartLoc', offsets.given], ['hasInitialState', his], ['convState', state]] as const;
  // The alias checks' byte ranges, only when an output buffer was given (the common call gives none).
  const ranges = given.out === undefined && given.convState === undefined ? [] : namedRanges([...inputsNamed, ['out.out', given.out], ['out.convState', given.convState]], backend);
  const givenOut = given.out === undefined ? null : expectOut(given.out, 'out.out', backend, [T, C], outDtype, ranges);
  const givenState = given.convState === undefined ? null : expectOut(given.convState, 'out.convState', backend, [N, C, K - 1], 'f32', ranges);

  const staging = new Staging(backend);
  const natives: unknown[] = [];
  // The state copy and the output this call allocates: released if anything after them throws (a
  // schedule is only checked below, once they exist).
  const made: Tensor[] = [];
  try {
    const dx = staging.input(x);
    const dw = staging.input(weight);
    const db = bias ? staging.input(bias) : null;
    const qsl = stageOffsets(offsets, offsetsPath, staging, natives);
    const dh = his ? staging.input(his) : null;
    const dstate = opts.inPlace ? state : givenState ? staging.copyInto(givenState, state) : staging.mutableCopy(state);
    if (!opts.inPlace && !givenState) made.push(dstate);
    const out = givenOut ?? staging.output([T, C], outDtype);
    if (!givenOut) made.push(out);
    const args: ConvArgs = {
      T, C, K, num_seqs: N,
      x_dtype: DTYPE_CODE[x.dtype], out_dtype: DTYPE_CODE[outDtype], his_dtype: DTYPE_CODE[his?.dtype ?? 'i8'],
      x_row_stride: x.rowStride,
      x: dx.addr,
      weight: dw.addr,
      bias: db ? db.addr : 0,
      query_start_loc: qsl.query_start_loc,
      has_initial_state: dh ? dh.addr : 0,
      conv_state: dstate.addr,
      out: out.addr,
      arm: armIndex,
      mapping: CONV_MAPPINGS.indexOf(mapping),
      mutant: mutant ? CONV_MUTANTS.indexOf(mutant) + 1 : 0,
      widen_cycles: widen,
      schedule: scheduleStruct(opts.schedule, natives),
      query_start_loc_host: qsl.query_start_loc_host,
    };
    return { args, out, convState: dstate, staging, natives, stateIsCaller: !!opts.inPlace || !!givenState, outIsCaller: !!givenOut, requested: { arm, mapping }, backend, offsets: offsets.host ?? offsets.tensor() };
  } catch (e) {
    for (const t of made) t.release();
    staging.release();
    for (const m of natives) freeNative(m);
    throw e;
  }
}

function finish(p: PreparedConv, contract: LaunchContractStruct): ConvResult {
  p.staging.release();
  for (const m of p.natives) freeNative(m);
  const { out, convState, stateIsCaller, outIsCaller, offsets } = p;
  out.withCoordinates(() => convCoordinates(offsets));
  convState.withCoordinates(CONV_STATE_COORDINATES);
  return {
    out,
    convState,
    requested: p.requested,
    contract: contractFrom(contract),
    backend: p.backend.kind,
    release() {
      if (!outIsCaller) out.release();
      if (!stateIsCaller) convState.release();
    },
  };
}

function abandon(p: PreparedConv): void {
  p.staging.release();
  for (const m of p.natives) freeNative(m);
  if (!p.outIsCaller) p.out.release();
  if (!p.stateIsCaller) p.convState.release();
}

const convCall = opCall<ConvInputs, ConvOptions, PreparedConv, ConvResult>({
  what: 'conv.forward',
  prepare,
  entry: (lib) => lib.convForwardRaw,
  args: (p, path) => path === 'fresh' ? [convArgsCodec.encode(p.args), launchContractCodec.fresh()] : [convArgsCodec.encodeScratch(p.args), launchContractCodec.scratch()],
  finish: (p, args) => finish(p, launchContractCodec.decode(args[1] as Uint8Array)),
  abandon,
});

/**
 * Runs the prefill conv: out[t, c] = silu(bias[c] + Σ_j w[c][j] · x[t-(K-1)+j, c]) per sequence, and
 * the final state (the last K-1 raw inputs of each non-empty sequence). Runs on a worker thread.
 */
export function forward(inputs: ConvInputs, opts: ConvOptions = {}): Promise<ConvResult> {
  return convCall.forward(inputs, opts);
}

/**
 * Bytes the conv must move at least (a benchmark's copy of "the same traffic", docs/BENCHMARKS.md): x read once,
 * out written once, the final state written (N·C·(K-1) f32) and the old state read for the sequences that
 * have one (nInitial of them). Before 22a9d49 the benches counted x and out only, which left out 7% of a
 * 32-sequence varlen batch's traffic (CHANGELOG 2026-12-04, 22a9d49).
 */
export function convBytes(o: { T: number; C: number; K: number; N: number; nInitial: number; xBytes: number; outBytes: number }): number {
  return o.T * o.C * (o.xBytes + o.outBytes) + stateBytes(o.N, o.nInitial, o.C, o.K);
}

/** The f32 conv state an op moves: N final states written, nInitial old states read, C·(K-1) values each. */
export function stateBytes(N: number, nInitial: number, C: number, K: number): number {
  return (N + nInitial) * C * (K - 1) * 4;
}

/** The same as forward, on the calling thread (no await; for tight loops in tests and checks). */
export function forwardSync(inputs: ConvInputs, opts: ConvOptions = {}): ConvResult {
  return convCall.forwardSync(inputs, opts);
}

/**
 * A conv launch ready for the native timing loop. Inputs are staged on the backend once; the
 * state is a private copy (each timed launch updates it, which does not change the work done).
 */
export function prepareTimed(inputs: ConvInputs, opts: ConvOptions = {}, label?: string): NativeOp & { source: TimedSource; release(): void } {
  if (opts.schedule !== undefined && opts.schedule !== 'forward') throw new Error('schedule: timing runs blocks in their natural order');
  if (opts.arm !== undefined) userArm('conv', opts.arm)?.prepareTiming();  // a defined arm is timed unchecked
  const p = prepare(inputs, opts, 'device');
  const kept = p.staging;
  return {
    kind: 'conv',
    args: p.args,
    source: { op: 'conv', inputs, opts },
    label: label ?? `${p.requested.arm}/${p.requested.mapping}`,
    release() {
      kept.release();
      for (const m of p.natives) freeNative(m);
      if (!p.outIsCaller) p.out.release();
      if (!p.stateIsCaller) p.convState.release();
    },
  };
}

// ------------------------------------------------------------------------------------------ update

export interface ConvUpdateInputs {
  /** [B, C] one new token per sequence, f32 or bf16. */
  x: Tensor;
  /** [C, K], the dtype of x. */
  weight: Tensor;
  bias?: Tensor | null;
  /** [slots, C, K-1] f32 or bf16: the state pool. Not modified (see `inPlace`). */
  state: Tensor;
  /** [B] int32: the slot of each sequence; negative skips the sequence (its out row and state stay untouched). */
  stateIndices: Tensor | readonly number[];
}

export interface ConvUpdateOptions {
  arm?: UpdateArm;
  outDtype?: 'f32' | 'bf16';
  backend?: Backend;
  inPlace?: boolean;
  /**
   * A Tensor: the initial contents of out (copied; rows of skipped sequences keep them; poisoned when
   * omitted). Or output buffers to write into, device tensors of this backend: { out: [B, C] of
   * outDtype, state: the pool's shape and dtype (receives the input pool, then the update) }; they stay
   * the caller's (release() leaves them) and are not poisoned.
   */
  out?: Tensor | ConvUpdateOutBuffers;
}

export interface ConvUpdateOutBuffers {
  out?: Tensor;
  state?: Tensor;
}

export interface ConvUpdateResult {
  out: Tensor;
  state: Tensor;
  arm: UpdateArm;
  backend: 'host' | 'cuda';
  release(): void;
}

interface PreparedUpdate {
  args: ConvUpdateArgs;
  out: Tensor;
  state: Tensor;
  staging: Staging;
  natives: unknown[];  // native memory of this call (a fresh host copy of the slots), freed after it
  arm: UpdateArm;
  backend: Backend;
  outIsCaller: boolean;
  stateIsCaller: boolean;
}

// indicesPath: as the offsets' (OffsetsPath) — slots given as numbers or a host tensor travel as a host
// copy (args.state_indices_host: no upload by TypeScript, no read-back by libgdn, and up to 64 of them go
// to the kernel inside its parameters) except in timing runs ('device'), which replay the launch later.
function prepareUpdate(inputs: ConvUpdateInputs, opts: ConvUpdateOptions, indicesPath: OffsetsPath): PreparedUpdate {
  const arm: UpdateArm = opts.arm ?? 'reference';
  const armIndex = armId('conv-update', arm);
  const outDtype = expectChoice(opts.outDtype ?? 'f32', 'outDtype', ['f32', 'bf16'] as const);
  const x = expectTensor(inputs.x, 'x');
  expectDType(x, 'x', ['f32', 'bf16']);
  if (x.rank !== 2) throw new RangeError(`x: expected shape [B, C], got [${x.shape.join(', ')}]`);
  expectContiguous(x, 'x');
  const [B, C] = x.shape;
  const { weight, K, bias } = checkTaps(inputs, x, C);
  const state = expectTensor(inputs.state, 'state');
  expectDType(state, 'state', ['f32', 'bf16']);
  if (state.rank !== 3 || state.shape[1] !== C || state.shape[2] !== K - 1) {
    throw new RangeError(`state: expected shape [slots, C=${C}, K-1=${K - 1}], got [${state.shape.join(', ')}]`);
  }
  // The slots: numbers stay an Int32Array (no host Tensor unless a device copy is staged, as the
  // offsets do: expectOffsets); a tensor is checked as one.
  let idxTensor: Tensor | null = null;
  let hostSlots: Int32Array | null = null;
  if (Array.isArray(inputs.stateIndices)) {
    hostSlots = int32Values(inputs.stateIndices, 'stateIndices');
    if (hostSlots.length !== B) throw new RangeError(`stateIndices: expected shape [B=${B}], got [${hostSlots.length}]`);
  } else {
    idxTensor = expectTensor(int32Tensor(inputs.stateIndices, 'stateIndices'), 'stateIndices');
    expectDType(idxTensor, 'stateIndices', ['i32']);
    expectShape(idxTensor, 'stateIndices', [B], ['B']);
    if (idxTensor.location === 'host') hostSlots = idxTensor.bits() as Int32Array;
  }
  const slots = state.shape[0];
  // Slots in host memory are checked here; a device tensor's are checked by libgdn (which reads them
  // back anyway), saving a second device round trip per call.
  if (hostSlots) checkHostSlots(hostSlots, slots);
  const idx = (): Tensor => (idxTensor ??= Tensor.from(hostSlots as Int32Array, [B], 'i32'));
  const backend = backendOf(opts);
  if (opts.inPlace && !(state.location === 'device' && state.backend === backend)) {
    throw new Error('inPlace: state must already be on the backend to be updated in place');
  }
  // out: a Tensor = initial contents (copied; rows of skipped sequences keep them); { out, state } =
  // buffers written in place.
  const legacyOut = opts.out instanceof Tensor ? opts.out : null;
  const given: ConvUpdateOutBuffers = legacyOut || opts.out == null ? {} : (opts.out as ConvUpdateOutBuffers);
  if (typeof given !== 'object') throw new TypeError(`out: expected { out?, state? } (output buffers) or a Tensor (initial contents of out), got ${describe(given)}`);
  for (const k of Object.keys(given)) if (k !== 'out' && k !== 'state') throw new TypeError(`out.${k}: not an output of conv.update (expected out or state)`);
  if (opts.inPlace && given.state) throw new Error('out.state: cannot be combined with inPlace (inPlace already updates state itself)');
  const inputsNamed = [['x', x], ['weight', weight], ['bias', bias], ['state', state], ['stateIndices', idxTensor]] as const;
  const ranges = given.out === undefined && given.state === undefined ? [] : namedRanges([...inputsNamed, ['out.out', given.out], ['out.state', given.state]], backend);
  const givenOut = given.out === undefined ? null : expectOut(given.out, 'out.out', backend, [B, C], outDtype, ranges);
  const givenState = given.state === undefined ? null : expectOut(given.state, 'out.state', backend, state.shape, state.dtype, ranges);

  const staging = new Staging(backend);
  const made: Tensor[] = [];
  const natives: unknown[] = [];
  try {
    // The slots: a host copy (checked above) where the path allows it, else staged on the backend.
    let stateIndices = 0, stateIndicesHost = 0;
    if (hostSlots && indicesPath !== 'device') stateIndicesHost = hostInt32Copy(hostSlots, indicesPath, natives);
    else stateIndices = staging.input(idx()).addr;
    const dstate = opts.inPlace ? state : givenState ? staging.copyInto(givenState, state) : staging.mutableCopy(state);
    if (!opts.inPlace && !givenState) made.push(dstate);
    let out: Tensor;
    if (legacyOut) {
      const init = expectTensor(legacyOut, 'out');
      expectShape(init, 'out', [B, C], ['B', 'C']);
      if (init.dtype !== outDtype) throw new TypeError(`out: expected dtype ${outDtype} (outDtype), got ${init.dtype}`);
      out = staging.mutableCopy(init);
      made.push(out);
    } else if (givenOut) {
      out = givenOut;
    } else {
      out = staging.output([B, C], outDtype);
      made.push(out);
    }
    const args: ConvUpdateArgs = {
      B, C, K,
      x_dtype: DTYPE_CODE[x.dtype], out_dtype: DTYPE_CODE[outDtype], state_dtype: DTYPE_CODE[state.dtype],
      arm: armIndex,
      num_slots: slots,
      x: staging.input(x).addr,
      weight: staging.input(weight).addr,
      bias: bias ? staging.input(bias).addr : 0,
      state: dstate.addr,
      state_indices: stateIndices,
      out: out.addr,
      state_indices_host: stateIndicesHost,
    };
    return { args, out, state: dstate, staging, natives, arm, backend, outIsCaller: !!givenOut, stateIsCaller: !!opts.inPlace || !!givenState };
  } catch (e) {
    for (const t of made) t.release();
    staging.release();
    for (const m of natives) freeNative(m);
    throw e;
  }
}

// What a call staged for itself: the staged inputs and a fresh host copy of the slots.
function releaseUpdateStaged(p: PreparedUpdate): void {
  p.staging.release();
  for (const m of p.natives) freeNative(m);
  p.natives.length = 0;
}

function updateResult(p: PreparedUpdate): ConvUpdateResult {
  releaseUpdateStaged(p);
  const { out, state, outIsCaller, stateIsCaller } = p;
  out.withCoordinates(UPDATE_OUT_COORDINATES);
  state.withCoordinates(STATE_POOL_COORDINATES);
  return {
    out,
    state,
    arm: p.arm,
    backend: p.backend.kind,
    release() {
      if (!outIsCaller) out.release();
      if (!stateIsCaller) state.release();
    },
  };
}

function abandonUpdate(p: PreparedUpdate): void {
  releaseUpdateStaged(p);
  if (!p.outIsCaller) p.out.release();
  if (!p.stateIsCaller) p.state.release();
}

const updateCall = opCall<ConvUpdateInputs, ConvUpdateOptions, PreparedUpdate, ConvUpdateResult>({
  what: 'conv.update',
  prepare: prepareUpdate,
  entry: (lib) => lib.convUpdateRaw,
  args: (p, path) => [path === 'fresh' ? convUpdateArgsCodec.encode(p.args) : convUpdateArgsCodec.encodeScratch(p.args)],
  finish: (p) => updateResult(p),
  abandon: abandonUpdate,
});

/** The decode step: each sequence appends one token to its window in the state pool. */
export function update(inputs: ConvUpdateInputs, opts: ConvUpdateOptions = {}): Promise<ConvUpdateResult> {
  return updateCall.forward(inputs, opts);
}

/** The same as update, on the calling thread. */
export function updateSync(inputs: ConvUpdateInputs, opts: ConvUpdateOptions = {}): ConvUpdateResult {
  return updateCall.forwardSync(inputs, opts);
}

/** A decode update ready for the native timing loop (its state is a private copy unless inPlace or out.state). */
export function prepareTimedUpdate(inputs: ConvUpdateInputs, opts: ConvUpdateOptions = {}, label?: string): NativeOp & { source: TimedSource; release(): void } {
  const p = prepareUpdate(inputs, opts, 'device');
  return {
    kind: 'conv_update',
    args: p.args,
    source: { op: 'conv-update', inputs, opts },
    label: label ?? `update ${p.arm}`,
    release() {
      abandonUpdate(p);
    },
  };
}


// ------------------------------------------------------------------------------------------ user arms

/**
 * Defines (or replaces) a conv arm from a cell: a per-thread body compiled for the host (and CUDA when
 * that is the active backend), usable as `arm: name` everywhere. See docs/USER-ARMS.md.
 */
export function defineArm(spec: ConvArmSpec, opts: { backend?: Backend } = {}): DefinedArm {
  return defineConvArm(spec, opts);
}
