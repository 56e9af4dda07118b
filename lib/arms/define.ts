// gdn.conv.defineArm / gdn.postconv.defineArm (docs/USER-ARMS.md): an arm written in a notebook cell.
// The body is compiled for the host (always: the checked module forward runs, and later the unchecked
// one timing runs) and for CUDA when the active backend is CUDA (or when asked), registered with
// libgdn (gdn_arm_register), and from then on its name works wherever a built-in arm's does. Defining
// a name again replaces the arm (same native id) and both its modules, the checked one and the timing
// one, each looked up under the key of everything it is built from (compile.ts): an unchanged
// definition is a cache hit, and any change (body, contract, flags, a header) is a rebuild.

import { Backend, activeBackend, GdnError } from '../backend';
import { gdnLib, UserArmDesc } from '../native/gdn';
import { ArmOp, CompiledModule, compileModule, cudaSourceDir, ModuleTarget } from './compile';
import { forgetArm, registerArm, userArm } from './registry';
import { arms as armTable, armsChanged } from './table';

const MAPPINGS = ['exact', 'exact-racy', 'sequence'] as const;
type Mapping = (typeof MAPPINGS)[number];
const OP_CODE: Record<ArmOp, number> = { conv: 1, postconv: 3 };

interface CommonSpec {
  /** Unique in its op family; letters, digits, '-', '_' and '.'; not a built-in arm's name. */
  name: string;
  /** The per-thread body: conv_arm / postconv_arm (see docs/USER-ARMS.md for the signature). */
  source: string;
  description?: string;
  /** Threads per block, 1..1024 (default 128). */
  threadsPerBlock?: number;
  /** Dynamic shared memory per block in bytes, t.smem() (default 0, at most 48 KiB). */
  sharedBytes?: number;
  /** The body calls t.sync() or t.shfl_xor(): the host runs its threads as fibers (default false). */
  barriers?: boolean;
  /** A launch running longer is stopped and reported (default 10000 ms). */
  timeLimitMs?: number;
  /** Also compile for CUDA (default: when the active backend is CUDA), for this compute capability ('90'). */
  cudaSm?: string | null;
  /** Compile for the host backend (default true). */
  host?: boolean;
  /**
   * This arm is wrong on purpose, and this says how (docs/USER-ARMS.md, "Planted defects"): the
   * checks then require that the arm is caught instead of that it equals the reference.
   */
  plantedDefect?: string;
}

export interface ConvArmSpec extends CommonSpec {
  /** Channels per block (grid_x = ceil(C / this); default threadsPerBlock). */
  channelsPerBlock?: number;
  /** Tokens of an exact-mapping program (default 8). */
  tokensPerProgram?: number;
  /** Mappings the arm supports (default ['exact', 'sequence']). */
  mappings?: readonly Mapping[];
}

/** A post-conv arm runs in the token-tile layout: one block per (head slot, 16-token tile), tile_of(p, t). */
export interface PostconvArmSpec extends CommonSpec {
  /** Runs only when Dk = Dv = 128 and falls back to tree otherwise, as token-tile does (default true). */
  requiresD128?: boolean;
}

/** How one module of the arm was obtained. */
export interface ModuleInfo {
  target: ModuleTarget;
  file: string;
  cached: boolean;
  compileMs: number;
  sm?: string;
  /** The compiler flags the module was built with (host: the built-in arms' host replay flags). */
  flags: string[];
}

export interface DefinedArm {
  op: ArmOp;
  name: string;
  id: number;
  description: string;
  /** The contract as registered. */
  contract: Record<string, unknown>;
  modules: ModuleInfo[];
  /** True when every module came from the cache (nothing recompiled). */
  cached: boolean;
  /** Sum of the compile times of this definition, ms (0 when cached). */
  compileMs: number;
  /** A one-line account for the cell. */
  summary: string;
}

interface Kept {
  spec: ConvArmSpec | PostconvArmSpec;
  defines: Record<string, string | number>;
  desc: UserArmDesc;
  fast?: CompiledModule;
}
const kept = new Map<string, Kept>();

const NAME_RE = /^[a-z][a-z0-9_.-]{0,30}$/;  // libgdn's rule for arm names

function int(v: unknown, what: string, min: number, max: number, dflt: number): number {
  if (v === undefined) return dflt;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) throw new RangeError(`${what}: expected an integer in ${min}..${max}, got ${String(v)}`);
  return v;
}

function register(desc: UserArmDesc): number {
  const lib = gdnLib();
  const id = [0];
  const st = lib.armRegister(desc, id) as number;
  armsChanged();  // a replaced arm keeps its id but may change its flags
  if (st !== 0) throw new GdnError(st, lib.statusName(st) as string, `defineArm: ${lib.lastError() as string}`);
  return Number(id[0]);
}

function define(op: ArmOp, spec: CommonSpec, contract: Record<string, unknown>, descFields: Partial<UserArmDesc>, defines: Record<string, string | number>, mappings: readonly string[], opts: { backend?: Backend }): DefinedArm {
  if (!spec || typeof spec !== 'object') throw new TypeError(`defineArm: expected { name, source, … }, got ${String(spec)}`);
  if (typeof spec.name !== 'string' || !NAME_RE.test(spec.name)) throw new TypeError(`name: expected 1..31 of a-z, 0-9, '-', '_', '.', starting with a letter, got ${JSON.stringify(spec.name)}`);
  if (armTable(op).some((a) => !a.user && a.name === spec.name)) throw new TypeError(`name: '${spec.name}' is a built-in ${op} arm; choose another name`);
  if (typeof spec.source !== 'string' || spec.source.trim() === '') throw new TypeError(`arm '${spec.name}': source: expected the per-thread body as a string`);
  // gdn_arm_info keeps 224 bytes with the NUL; libgdn would cut a longer text silently (built-in arms are held
  // to the same bound at compile time: cuda/src/host/arms_host.h).
  if (spec.description !== undefined && (typeof spec.description !== 'string' || Buffer.byteLength(spec.description, 'utf8') > 223))
    throw new TypeError(`arm '${spec.name}': description: expected a string of at most 223 bytes in UTF-8, got ${typeof spec.description === 'string' ? `${Buffer.byteLength(spec.description, 'utf8')} bytes` : JSON.stringify(spec.description)}`);
  const threads = int(spec.threadsPerBlock, `arm '${spec.name}': threadsPerBlock`, 1, 1024, 128);
  // Whole warps (docs/USER-ARMS.md, the contract): a partial last warp has lanes that do not exist, and a
  // shuffle reading one is undefined on a GPU (docs/SPEC.md §13), so no arm may rely on one.
  if (threads % 32 !== 0) {
    throw new RangeError(`arm '${spec.name}': threadsPerBlock: expected a multiple of 32 (whole warps of 32 threads), got ${threads}; the nearest are ${Math.max(32, Math.floor(threads / 32) * 32)} and ${Math.min(1024, Math.ceil(threads / 32) * 32)}`);
  }
  const shared = int(spec.sharedBytes, `arm '${spec.name}': sharedBytes`, 0, 49152, 0);
  const limit = int(spec.timeLimitMs, `arm '${spec.name}': timeLimitMs`, 1, 3_600_000, 10000);
  const barriers = spec.barriers === true;
  if (spec.plantedDefect !== undefined && (typeof spec.plantedDefect !== 'string' || spec.plantedDefect.trim() === '')) {
    throw new TypeError(`arm '${spec.name}': plantedDefect: expected a sentence saying what is wrong on purpose, got ${JSON.stringify(spec.plantedDefect)}`);
  }
  const backend = opts.backend ?? activeBackend();
  let sm = spec.cudaSm ?? null;
  if (sm === null && backend.kind === 'cuda') {
    const info = backend.info();
    sm = `${info.smMajor}${info.smMinor}`;
  }
  const allDefines = { ...defines, GDN_ARM_THREADS: threads };
  const modules: CompiledModule[] = [];
  // The headers of the definition's cuda/ folder, for the timing module compiled later too.
  const base = { op, name: spec.name, source: spec.source, defines: allDefines, cudaSource: cudaSourceDir() };
  if (spec.host !== false) modules.push(compileModule({ ...base, target: 'host' }));
  if (sm) modules.push(compileModule({ ...base, target: 'cuda', sm }));
  if (modules.length === 0) throw new Error(`arm '${spec.name}': nothing to compile (host: false and no CUDA target)`);
  const prev = kept.get(`${op}:${spec.name}`);
  // A replaced arm that was timed gets its timing module now, from this definition: the module key decides
  // whether that is the previous file (nothing it is built from changed) or a rebuild.
  const fast = prev?.fast && spec.host !== false ? compileModule({ ...base, target: 'host-fast' }) : undefined;
  if (fast) modules.push(fast);
  const hostMod = modules.find((m) => m.target === 'host');
  const cudaMod = modules.find((m) => m.target === 'cuda');
  const desc: UserArmDesc = {
    op: OP_CODE[op], threads_per_block: threads, channels_per_block: 0, tokens_per_program: 1, mappings: 0,
    shared_bytes: shared, cooperative: barriers ? 1 : 0, time_limit_ms: limit, requires_d128: 0, reserved0: 0,
    name: spec.name, host_module: hostMod?.file ?? null, host_fast_module: fast?.file ?? null, cuda_module: cudaMod?.file ?? null,
    reserved: [0, 0, 0, 0, 0, 0, 0, 0],
    ...descFields,
  };
  const id = register(desc);
  // A copy: a caller that edits its spec object and defines it again must not edit what was kept.
  const k: Kept = { spec: { ...spec }, defines: allDefines, desc, fast };
  kept.set(`${op}:${spec.name}`, k);
  registerArm({
    op, name: spec.name, id, mappings, description: spec.description ?? '', plantedDefect: spec.plantedDefect,
    prepareTiming() {
      if (k.fast || !k.desc.host_module) return;
      k.fast = compileModule({ ...base, target: 'host-fast' });
      k.desc = { ...k.desc, host_fast_module: k.fast.file };
      register(k.desc);
    },
  });
  const infos: ModuleInfo[] = modules.map((m) => ({ target: m.target, file: m.file, cached: m.cached, compileMs: m.compileMs, sm: m.sm, flags: m.flags }));
  const cached = infos.every((m) => m.cached);
  const compileMs = infos.reduce((s, m) => s + m.compileMs, 0);
  const what = infos.map((m) => `${m.target}${m.sm ? ` sm_${m.sm}` : ''} ${m.cached ? 'cached' : `compiled in ${(m.compileMs / 1000).toFixed(1)} s`}`).join(', ');
  return {
    op, name: spec.name, id, description: spec.description ?? '', contract: { ...contract, threadsPerBlock: threads, sharedBytes: shared, barriers, timeLimitMs: limit },
    modules: infos, cached, compileMs,
    summary: `${op} arm '${spec.name}' (id ${id}${prev ? ', replaced' : ''}${spec.plantedDefect ? ', PLANTED DEFECT' : ''}): ${what}`,
  };
}

/** Defines (or replaces) a causal-conv arm from a cell. */
export function defineConvArm(spec: ConvArmSpec, opts: { backend?: Backend } = {}): DefinedArm {
  const name = spec?.name ?? '?';
  const threads = spec?.threadsPerBlock ?? 128;
  const channels = int(spec?.channelsPerBlock, `arm '${name}': channelsPerBlock`, 1, 1 << 20, threads);
  const tokens = int(spec?.tokensPerProgram, `arm '${name}': tokensPerProgram`, 1, 1 << 20, 8);
  const mappings = spec?.mappings ?? ['exact', 'sequence'];
  if (!Array.isArray(mappings) || mappings.length === 0 || mappings.some((m) => !MAPPINGS.includes(m))) {
    throw new TypeError(`arm '${name}': mappings: expected a non-empty list of ${MAPPINGS.map((m) => `'${m}'`).join(', ')}, got ${JSON.stringify(mappings)}`);
  }
  const mask = mappings.reduce((m, x) => m | (1 << MAPPINGS.indexOf(x)), 0);
  return define('conv', spec, { channelsPerBlock: channels, tokensPerProgram: tokens, mappings: [...mappings] },
    { channels_per_block: channels, tokens_per_program: tokens, mappings: mask }, {}, mappings, opts);
}

/** Defines (or replaces) a post-conv arm from a cell. */
export function definePostconvArm(spec: PostconvArmSpec, opts: { backend?: Backend } = {}): DefinedArm {
  const name = spec?.name ?? '?';
  void name;
  const d128 = spec?.requiresD128 ?? true;
  return define('postconv', spec, { layout: 'tile-slots (head slot, 16-token tile)', requiresD128: d128 },
    { tokens_per_program: 16, requires_d128: d128 ? 1 : 0 }, {}, [], opts);
}

/** The arm's definition as given (for inspect). */
export function armSpec(op: ArmOp, name: string): (ConvArmSpec | PostconvArmSpec) | undefined {
  return userArm(op, name) ? kept.get(`${op}:${name}`)?.spec : undefined;
}

export function armDefines(op: ArmOp, name: string): Record<string, string | number> | undefined {
  return kept.get(`${op}:${name}`)?.defines;
}

/**
 * Takes a defined arm out of this process's arm lists (the equivalence checks' defaults). libgdn keeps
 * its id until the process ends (ids are table positions); defining the name again reuses it.
 */
export function undefineArm(op: ArmOp, name: string): boolean {
  if (!userArm(op, name)) return false;
  forgetArm(op, name);
  kept.delete(`${op}:${name}`);
  return true;
}
