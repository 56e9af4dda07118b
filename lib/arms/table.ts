// The arms of every op family, read from libgdn's registry (gdn_arm_count / gdn_arm_info_get;
// docs/SPEC.md §3.5, §12): names, one-line descriptions and launch contracts. Nothing here lists an
// arm by hand: an arm added to libgdn (built in, or registered at run time) appears in every table,
// check, benchmark and CLI listing that reads these functions.

import { userArm } from './registry';
import { gdnLib, ArmInfoStruct, ARM_FLAGS, ARM_REQUIRES, ARM_LAYOUTS, OP_KIND } from '../native/gdn';
import { expectChoice } from '../expect';

/** The op families that have arms. */
export const ARM_OPS = ['conv', 'conv-update', 'postconv', 'fused'] as const;
export type ArmOp = (typeof ARM_OPS)[number];

const OP_CODE: Record<ArmOp, number> = { conv: OP_KIND.conv, 'conv-update': OP_KIND.conv_update, postconv: OP_KIND.postconv, fused: OP_KIND.fused };
const MAPPING_NAMES = ['exact', 'exact-racy', 'sequence'] as const;

export interface ArmInfo {
  op: ArmOp;
  /** The value of args.arm that selects it (built-in ids never change; registered arms follow). */
  id: number;
  name: string;
  description: string;
  threadsPerBlock: number;
  /** conv, conv-update: channels per block; postconv: head slots per block. */
  perBlock: number;
  /** conv: tokens per exact-mapping program (0: whole sequences only); postconv: tokens per block. */
  tokensPerProgram: number;
  /** conv: the mappings that run as asked (any other runs 'sequence'). */
  mappings: ('exact' | 'exact-racy' | 'sequence')[];
  /** Shared memory per block = base + perK · K bytes. */
  sharedBytes: { base: number; perK: number };
  /** 0: any K; else the arm runs only with this K (else its fallback runs). */
  fixedK: number;
  /** Conditions on the data, else the fallback runs: 'vec8' (C, x_row_stride multiples of 8, 16-byte aligned x/out), 'd128' (Dk = Dv = 128). */
  requires: ('vec8' | 'd128')[];
  fallback: string | null;
  fallbackRule: string;
  reference: boolean;
  /** A PLANTED MUTANT arm (wrong on purpose: checks must catch it). */
  mutant: boolean;
  barrier: boolean;
  shuffle: boolean;
  /** Registered at run time, not built into libgdn. */
  user: boolean;
  fallbackTarget: boolean;
  /** postconv: threads = max(32, next power of two >= Dk), at most threadsPerBlock. */
  threadsFromD: boolean;
  layout: (typeof ARM_LAYOUTS)[number];
  minBlocksPerSm: number;
}

/** The live definition of a user arm of this family (undefined: built in, or undefined since). */
function definedArm(op: ArmOp, name: string) {
  return op === 'conv' || op === 'postconv' ? userArm(op, name) : undefined;
}

function decode(op: ArmOp, s: ArmInfoStruct, names: string[]): ArmInfo {
  const flag = (f: number) => (s.flags & f) !== 0;
  // A user arm defined as a planted defect is a mutant like the built-in ones (lib/arms/registry.ts).
  const defined = flag(ARM_FLAGS.user) ? definedArm(op, s.name) : undefined;
  const planted = defined?.plantedDefect !== undefined;
  return {
    op,
    id: s.id,
    name: s.name,
    // A user arm's own one-line description (libgdn only records that it was defined at run time).
    description: defined?.description ? `${defined.description} (user arm${planted ? ', PLANTED DEFECT' : ''})` : s.description,
    threadsPerBlock: s.threads_per_block,
    perBlock: s.per_block,
    tokensPerProgram: s.tokens_per_program,
    mappings: op === 'conv' ? MAPPING_NAMES.filter((_, m) => (s.mappings & (1 << m)) !== 0) : [],
    sharedBytes: { base: s.shared_bytes_base, perK: s.shared_bytes_per_k },
    fixedK: s.fixed_k,
    requires: (Object.keys(ARM_REQUIRES) as ('vec8' | 'd128')[]).filter((k) => (s.data_requires & ARM_REQUIRES[k]) !== 0),
    fallback: s.fallback >= 0 ? names[s.fallback] ?? String(s.fallback) : null,
    fallbackRule: s.fallback_rule,
    reference: flag(ARM_FLAGS.reference),
    mutant: flag(ARM_FLAGS.mutant) || planted,
    barrier: flag(ARM_FLAGS.barrier),
    shuffle: flag(ARM_FLAGS.shuffle),
    user: flag(ARM_FLAGS.user),
    fallbackTarget: flag(ARM_FLAGS.fallbackTarget),
    threadsFromD: flag(ARM_FLAGS.threadsFromD),
    layout: ARM_LAYOUTS[s.layout] ?? 'none',
    minBlocksPerSm: s.min_blocks_per_sm,
  };
}

function rawTable(op: ArmOp): ArmInfoStruct[] {
  const lib = gdnLib();
  const code = OP_CODE[expectChoice(op, 'op', ARM_OPS)];
  const n = lib.armCount(code) as number;
  if (n < 0) throw new Error(`arms(${op}): ${lib.lastError() as string}`);
  const out: ArmInfoStruct[] = [];
  for (let id = 0; id < n; id++) {
    const info: ArmInfoStruct[] = [{} as ArmInfoStruct];
    const st = lib.armInfo(code, id, info) as number;
    if (st !== 0) throw new Error(`arms(${op}): ${lib.lastError() as string}`);
    out.push(info[0]);
  }
  return out;
}

/**
 * Every arm of an op family with its contract, in id order (read fresh: arms may be registered at run
 * time). A user arm that was undefined (undefineArm) keeps its id in libgdn until the process ends
 * but is no longer listed.
 */
export function arms(op: ArmOp): ArmInfo[] {
  const raw = rawTable(op);
  const names = raw.map((r) => r.name);
  return raw.filter((r) => (r.flags & ARM_FLAGS.user) === 0 || definedArm(op, r.name) !== undefined).map((r) => decode(op, r, names));
}

// Names by family, kept until an arm is registered: lib/arms/define.ts, the only registrar in this
// process, calls armsChanged() after every gdn_arm_register. A name or id not in the cache is looked up
// once more in libgdn before it is refused, so a registration by any other path is still seen. No
// native call on the common path: each gdn_arm_count was a koffi call, three per op call
// (docs/BENCHMARKS.md, "Per-op overhead").
const namesCache = new Map<ArmOp, { names: string[]; mutant: boolean[]; mappings: number[] }>();

function cachedNames(op: ArmOp, refresh = false): { names: string[]; mutant: boolean[]; mappings: number[] } {
  const hit = refresh ? undefined : namesCache.get(op);
  if (hit) return hit;
  const raw = rawTable(op);
  const entry = { names: raw.map((r) => r.name), mutant: raw.map((r) => (r.flags & ARM_FLAGS.mutant) !== 0), mappings: raw.map((r) => r.mappings) };
  namesCache.set(op, entry);
  return entry;
}

/** Forgets the cached arm names (called after an arm is registered). */
export function armsChanged(): void {
  namesCache.clear();
}

/** The names of an op family's arms, in id order. */
export function armNames(op: ArmOp): string[] {
  return [...cachedNames(op).names];
}

/** Whether arm `id` of a family is a planted mutant (as a launch reports the arm that ran). */
export function armIsMutant(op: ArmOp, id: number): boolean {
  const c = cachedNames(op);
  return (id < c.mutant.length ? c : cachedNames(op, true)).mutant[id] ?? false;
}

/** The arm called `name`, or a TypeError naming the argument and every arm there is. */
export function armByName(op: ArmOp, name: unknown, what = 'arm'): ArmInfo {
  const table = arms(op);
  expectChoice(name, what, table.map((a) => a.name));
  return table.find((a) => a.name === name)!;
}

/** The id that selects arm `name` (args.arm). */
export function armId(op: ArmOp, name: unknown, what = 'arm'): number {
  let names = cachedNames(op).names;
  if (typeof name !== 'string' || !names.includes(name)) names = cachedNames(op, true).names;
  return names.indexOf(expectChoice(name, what, names));
}

/** The conv mappings arm `id` lists in its registry entry (ArmInfo.mappings), from the cache of names. */
export function convArmMappings(id: number): ('exact' | 'exact-racy' | 'sequence')[] {
  const c = cachedNames('conv');
  const bits = (id < c.mappings.length ? c : cachedNames('conv', true)).mappings[id] ?? 0;
  return MAPPING_NAMES.filter((_, m) => (bits & (1 << m)) !== 0);
}

/** The name of arm `id` (as a launch reports it). */
export function armName(op: ArmOp, id: number): string {
  let names = cachedNames(op).names;
  if (id >= names.length) names = cachedNames(op, true).names;
  if (id < 0 || id >= names.length) throw new RangeError(`${op} arm id ${id}: libgdn has arms 0..${names.length - 1}`);
  return names[id];
}

/** The family's reference arm: every other arm must equal it bit for bit. */
export function referenceArm(op: ArmOp): ArmInfo {
  const ref = arms(op).find((a) => a.reference);
  if (!ref) throw new Error(`${op}: libgdn declares no reference arm`);
  return ref;
}

/** The planted conv mutants (gdn_conv_mutant 1..), by the library's names. */
export function convMutantNames(): string[] {
  const lib = gdnLib();
  const out: string[] = [];
  for (let m = 1; ; m++) {
    const name = lib.convMutantName(m) as string | null;
    if (!name) return out;
    out.push(name);
  }
}
