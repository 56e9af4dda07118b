// What an arm compiles to (docs/USER-ARMS.md): for any arm, built in or defined in a cell, the body
// is compiled through the same path as a user arm (lib/arms/compile.ts) for a GPU's SM, and we report
// ptxas's resource usage per entry (registers per thread, spills, stack, static shared memory), the
// occupancy that follows from the SM's limits, the PTX, and the SASS when cuobjdump or nvdisasm is
// installed (the message says so when neither is).

import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import { ArmOp, compileModule, findOnPath } from './compile';
import { armDefines, armSpec } from './define';
import { armByName } from './table';
import { MIME_BUNDLE, MimeBundle } from '../view/display';
import { escapeXml, htmlTable, textTable } from '../view/format';

/** Per-SM limits of a compute capability (CUDA C++ Programming Guide, "Technical Specifications per Compute Capability"). */
export interface SmLimits {
  sm: string;
  registersPerSm: number;
  maxThreadsPerSm: number;
  maxBlocksPerSm: number;
  /** Shared memory per SM usable by blocks, bytes. */
  sharedPerSm: number;
  /** Shared memory the system reserves per resident block, bytes. */
  reservedSharedPerBlock: number;
  /** Registers are allocated per warp in units of this many. */
  registerUnit: number;
  /** Shared memory is allocated in units of this many bytes. */
  sharedUnit: number;
}

const KB = 1024;
export const SM_LIMITS: Record<string, SmLimits> = {
  '80': { sm: '80', registersPerSm: 65536, maxThreadsPerSm: 2048, maxBlocksPerSm: 32, sharedPerSm: 164 * KB, reservedSharedPerBlock: KB, registerUnit: 256, sharedUnit: 128 },
  '86': { sm: '86', registersPerSm: 65536, maxThreadsPerSm: 1536, maxBlocksPerSm: 16, sharedPerSm: 100 * KB, reservedSharedPerBlock: KB, registerUnit: 256, sharedUnit: 128 },
  '89': { sm: '89', registersPerSm: 65536, maxThreadsPerSm: 1536, maxBlocksPerSm: 24, sharedPerSm: 100 * KB, reservedSharedPerBlock: KB, registerUnit: 256, sharedUnit: 128 },
  '90': { sm: '90', registersPerSm: 65536, maxThreadsPerSm: 2048, maxBlocksPerSm: 32, sharedPerSm: 228 * KB, reservedSharedPerBlock: KB, registerUnit: 256, sharedUnit: 128 },
  '100': { sm: '100', registersPerSm: 65536, maxThreadsPerSm: 2048, maxBlocksPerSm: 32, sharedPerSm: 228 * KB, reservedSharedPerBlock: KB, registerUnit: 256, sharedUnit: 128 },
  '120': { sm: '120', registersPerSm: 65536, maxThreadsPerSm: 1536, maxBlocksPerSm: 32, sharedPerSm: 100 * KB, reservedSharedPerBlock: KB, registerUnit: 256, sharedUnit: 128 },
};

export interface ResourceUsage {
  entry: string;
  registers: number;
  barriers: number;
  stackBytes: number;
  spillStoreBytes: number;
  spillLoadBytes: number;
  staticSharedBytes: number;
  constantBytes: number;
}

export interface Occupancy {
  entry: string;
  threadsPerBlock: number;
  registers: number;
  sharedBytesPerBlock: number;
  blocksPerSm: number;
  warpsPerSm: number;
  maxWarpsPerSm: number;
  /** warpsPerSm / maxWarpsPerSm */
  occupancy: number;
  /** The resource(s) that set blocksPerSm. */
  limitedBy: string[];
  /** Blocks per SM each resource alone would allow. */
  byResource: { registers: number; sharedMemory: number; threads: number; blocks: number };
}

/** ptxas -v: one record per entry function. */
export function parsePtxasVerbose(log: string): ResourceUsage[] {
  const out: ResourceUsage[] = [];
  let cur: ResourceUsage | null = null;
  for (const line of log.split('\n')) {
    let m = /Compiling entry function '([^']+)'/.exec(line);
    if (m) {
      cur = { entry: m[1], registers: 0, barriers: 0, stackBytes: 0, spillStoreBytes: 0, spillLoadBytes: 0, staticSharedBytes: 0, constantBytes: 0 };
      out.push(cur);
      continue;
    }
    if (!cur) continue;
    m = /(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads/.exec(line);
    if (m) {
      cur.stackBytes = +m[1];
      cur.spillStoreBytes = +m[2];
      cur.spillLoadBytes = +m[3];
    }
    m = /Used (\d+) registers/.exec(line);
    if (m) {
      cur.registers = +m[1];
      cur.barriers = +(/used (\d+) barriers/.exec(line)?.[1] ?? 0);
      cur.staticSharedBytes = +(/(\d+) bytes smem/.exec(line)?.[1] ?? 0);
      cur.constantBytes = [...line.matchAll(/(\d+) bytes cmem\[\d+\]/g)].reduce((s, x) => s + +x[1], 0);
    }
  }
  return out;
}

/** Blocks and warps per SM for a launch of this shape (the CUDA occupancy calculator's rules). */
export function occupancy(limits: SmLimits, entry: string, threadsPerBlock: number, registers: number, sharedBytes: number): Occupancy {
  const warpsPerBlock = Math.ceil(threadsPerBlock / 32);
  const regsPerWarp = Math.ceil((Math.max(registers, 1) * 32) / limits.registerUnit) * limits.registerUnit;
  const byRegisters = Math.floor(Math.floor(limits.registersPerSm / regsPerWarp) / warpsPerBlock);
  const sharedPerBlock = Math.ceil(sharedBytes / limits.sharedUnit) * limits.sharedUnit + limits.reservedSharedPerBlock;
  const bySharedMemory = Math.floor(limits.sharedPerSm / sharedPerBlock);
  const byThreads = Math.floor(limits.maxThreadsPerSm / (warpsPerBlock * 32));
  const byResource = { registers: byRegisters, sharedMemory: bySharedMemory, threads: byThreads, blocks: limits.maxBlocksPerSm };
  const blocks = Math.min(byRegisters, bySharedMemory, byThreads, limits.maxBlocksPerSm);
  const names: Record<keyof typeof byResource, string> = { registers: 'registers', sharedMemory: 'shared memory', threads: 'threads per SM', blocks: 'blocks per SM' };
  const limitedBy = (Object.keys(byResource) as (keyof typeof byResource)[]).filter((k) => byResource[k] === blocks).map((k) => names[k]);
  const maxWarps = limits.maxThreadsPerSm / 32;
  return {
    entry, threadsPerBlock, registers, sharedBytesPerBlock: sharedBytes, blocksPerSm: blocks, warpsPerSm: blocks * warpsPerBlock,
    maxWarpsPerSm: maxWarps, occupancy: (blocks * warpsPerBlock) / maxWarps, limitedBy, byResource,
  };
}

// ------------------------------------------------------------------------------------------ built-in arms

// A built-in arm as a body of the user-arm dialect: the arm's own body from its definition
// (cuda/src/common/arms/*.h), picked out of the family's list by name at compile time, production
// build, variant 0 (vec: window width 4; token-tile: element copies).
const BUILTIN_BODY: Record<ArmOp, string> = {
  conv: `#include "common/arms/conv_list.h"
constexpr bool gdn_same(const char* a, const char* b) { return *a == *b && (*a == 0 || gdn_same(a + 1, b + 1)); }
template <class TX, class TO, class Ctx>
GDN_HD void conv_arm(const Params& p, Ctx& t) {
#define GDN_PICK(A) if constexpr (gdn_same(A::spec.name, GDN_BUILTIN)) A::template body<TX, TO, NoMutant, 0>(p, t);
  GDN_CONV_ARM_LIST(GDN_PICK)
#undef GDN_PICK
}
`,
  postconv: `#include "common/arms/postconv_list.h"
constexpr bool gdn_same(const char* a, const char* b) { return *a == *b && (*a == 0 || gdn_same(a + 1, b + 1)); }
template <class TC, class TQ, class TG, class Ctx>
GDN_HD void postconv_arm(const PostParams& p, Ctx& t) {
#define GDN_PICK(A) if constexpr (gdn_same(A::spec.name, GDN_BUILTIN)) A::template body<TC, TQ, TG, NoMutant, 0>(p, t);
  GDN_POSTCONV_ARM_LIST(GDN_PICK)
#undef GDN_PICK
}
`,
};

interface Source {
  source: string;
  preamble: string;
  defines: Record<string, string | number>;
  threads: number;
  dynamicShared: number;
  builtIn: boolean;
}

function sourceOf(op: ArmOp, name: string): Source {
  const spec = armSpec(op, name);
  if (spec) {
    const defines = armDefines(op, name) ?? {};
    return { source: spec.source, preamble: '', defines, threads: Number(defines.GDN_ARM_THREADS ?? 128), dynamicShared: spec.sharedBytes ?? 0, builtIn: false };
  }
  const info = armByName(op, name);
  if (info.user) throw new TypeError(`arm: '${name}' was registered by another definition than this process's (its source is unknown here)`);
  // Tree-of-D arms size their blocks from Dk: inspected for Dk = 128; shared memory for K = 4.
  const threads = info.threadsFromD ? 128 : info.threadsPerBlock;
  return {
    source: BUILTIN_BODY[op], preamble: '',
    defines: { GDN_ARM_THREADS: threads, GDN_ARM_MIN_BLOCKS: info.minBlocksPerSm || 1, GDN_BUILTIN: JSON.stringify(name) },
    threads, dynamicShared: info.sharedBytes.base + 4 * info.sharedBytes.perK, builtIn: true,
  };
}

export interface InspectOptions {
  /** Compute capability to compile for (default '90', the H200). */
  sm?: string;
  /** Keep the PTX text (default true). */
  ptx?: boolean;
  /** Disassemble to SASS when a tool is present (default true). */
  sass?: boolean;
}

export interface ArmInspection {
  op: ArmOp;
  arm: string;
  builtIn: boolean;
  sm: string;
  cubin: string;
  cached: boolean;
  compileMs: number;
  resources: ResourceUsage[];
  occupancy: Occupancy[];
  ptx: string | null;
  sass: string | null;
  /** Which disassembler produced sass, or why there is none. */
  sassTool: string;
  /** Rows for gdn.table: one per entry (dtype combination). */
  rows: Record<string, unknown>[];
  /** A plain-text account. */
  text: string;
}

/** Compiles an arm for a GPU and reports what it became. */
export function inspectArm(op: ArmOp, name: string, opts: InspectOptions = {}): ArmInspection {
  const sm = opts.sm ?? '90';
  const limits = SM_LIMITS[sm];
  if (!limits) throw new RangeError(`sm: expected one of ${Object.keys(SM_LIMITS).join(', ')}, got '${sm}'`);
  const src = sourceOf(op, name);
  const req = { op, name, source: src.source, preamble: src.preamble, defines: src.defines };
  const cubin = compileModule({ ...req, target: 'cuda', sm });
  const resources = parsePtxasVerbose(cubin.log);
  const occ = resources.map((r) => occupancy(limits, r.entry, src.threads, r.registers, r.staticSharedBytes + src.dynamicShared));
  let ptx: string | null = null;
  if (opts.ptx !== false) ptx = fs.readFileSync(compileModule({ ...req, target: 'ptx', sm }).file, 'utf8');
  let sass: string | null = null;
  let sassTool = '';
  if (opts.sass !== false) {
    const cuobjdump = findOnPath('cuobjdump');
    const nvdisasm = findOnPath('nvdisasm');
    const run = cuobjdump ? spawnSync(cuobjdump, ['-sass', cubin.file], { encoding: 'utf8', maxBuffer: 1 << 26 })
      : nvdisasm ? spawnSync(nvdisasm, ['-c', cubin.file], { encoding: 'utf8', maxBuffer: 1 << 26 }) : null;
    if (run && run.status === 0) {
      sass = run.stdout;
      sassTool = cuobjdump ? `cuobjdump -sass (${cuobjdump})` : `nvdisasm -c (${nvdisasm})`;
    } else if (run) {
      sassTool = `SASS not available: ${cuobjdump || nvdisasm} failed: ${(run.stderr || '').trim().split('\n')[0]}`;
    } else {
      sassTool = 'SASS not available: neither cuobjdump nor nvdisasm is installed on this machine (the CUDA toolkit here has nvcc and ptxas only); registers, spills and shared memory above come from ptxas -v';
    }
  }
  const rows = resources.map((r, i) => ({
    entry: r.entry.replace(/^gdn_arm_(conv|postconv)_/, ''),
    registers: r.registers,
    'spill st/ld B': `${r.spillStoreBytes}/${r.spillLoadBytes}`,
    'stack B': r.stackBytes,
    'static smem B': r.staticSharedBytes,
    'blocks/SM': occ[i].blocksPerSm,
    'warps/SM': `${occ[i].warpsPerSm}/${occ[i].maxWarpsPerSm}`,
    occupancy: `${(occ[i].occupancy * 100).toFixed(0)}%`,
    'limited by': occ[i].limitedBy.join(', '),
  }));
  const lines = [
    `${op} arm '${name}'${src.builtIn ? ' (built-in, compiled from its per-thread body)' : ''} for sm_${sm}: ${src.threads} threads per block, ${src.dynamicShared} B dynamic shared memory`,
    `cubin ${path.basename(cubin.file)} in the arm cache (${cubin.cached ? 'cached' : `compiled in ${(cubin.compileMs / 1000).toFixed(1)} s`})`,
    `sm_${sm} limits: ${limits.registersPerSm} registers, ${limits.maxThreadsPerSm} threads, ${limits.maxBlocksPerSm} blocks, ${limits.sharedPerSm / KB} KiB shared memory per SM; registers allocated per warp in units of ${limits.registerUnit}`,
    ...occ.map((o) => `  ${o.entry}: ${o.registers} registers/thread → ${o.blocksPerSm} blocks/SM (registers allow ${o.byResource.registers}, shared memory ${o.byResource.sharedMemory}, threads ${o.byResource.threads}, block slots ${o.byResource.blocks}): ${o.warpsPerSm} of ${o.maxWarpsPerSm} warps, limited by ${o.limitedBy.join(' and ')}`),
    sass ? `SASS: ${sassTool}` : sassTool,
  ];
  return withDisplay({ op, arm: name, builtIn: src.builtIn, sm, cubin: cubin.file, cached: cubin.cached, compileMs: cubin.compileMs, resources, occupancy: occ, ptx, sass, sassTool, rows, text: lines.join('\n') });
}

/** Lines of a listing a rich display shows inside its details element (the whole text stays in .ptx / .sass). */
export const LISTING_LINES = 400;
/**
 * Characters of a listing the display shows, at most (cut at a line's end): SASS lines carry their encodings and
 * run about twice as long as PTX lines, so 400 of each came to 60 KB on an H100 with cuobjdump.
 */
export const LISTING_CHARS = 24_000;

/**
 * The part of a listing a display shows: the first LISTING_LINES lines, cut at the last line end within
 * LISTING_CHARS (inside the first line when it alone is longer); `lines` counts the lines shown whole.
 */
function shownListing(text: string): { shown: string; lines: number } {
  const shown = text.split('\n').slice(0, LISTING_LINES).join('\n');
  if (shown.length <= LISTING_CHARS) return { shown, lines: lineCount(shown) };
  const end = shown.lastIndexOf('\n', LISTING_CHARS);
  return end > 0 ? { shown: shown.slice(0, end), lines: lineCount(shown.slice(0, end)) } : { shown: shown.slice(0, LISTING_CHARS), lines: 0 };
}

function lineCount(text: string): number {
  return text.split('\n').length;
}

/**
 * The report's compact display, as a notebook cell's value: the resource table (registers, spills, stack,
 * shared memory, occupancy and its limiter per entry) and the account, with the PTX and SASS folded away in
 * details elements (the first LISTING_LINES lines each, at most LISTING_CHARS characters). Non-enumerable, so the plain data (JSON, spreads)
 * is unchanged.
 */
function withDisplay(r: ArmInspection): ArmInspection {
  const columns = r.rows.length ? Object.keys(r.rows[0]) : ['entry'];
  const listing = (title: string, text: string | null, absent: string): string => {
    if (text === null) return `<p><i>${escapeXml(title)}:</i> ${escapeXml(absent)}</p>`;
    const n = lineCount(text);
    const cut = shownListing(text);
    const shown = cut.shown.length < text.length ? `${cut.shown}\n… ${n - cut.lines} more lines (the whole listing is in the report's .${title.toLowerCase()})` : text;
    return `<details><summary>${escapeXml(title)} (${n} lines)</summary><pre style="font-size:smaller;max-height:30em;overflow:auto">${escapeXml(shown)}</pre></details>`;
  };
  const plain = (): string => {
    const listings = [r.ptx === null ? 'PTX not kept' : `PTX ${lineCount(r.ptx)} lines (.ptx)`, r.sass === null ? r.sassTool : `SASS ${lineCount(r.sass)} lines (.sass)`];
    return [textTable(columns, r.rows), r.text, listings.join('; ')].join('\n');
  };
  const bundle = (): MimeBundle => {
    const html = [
      '<div class="gdnlab-inspect">',
      htmlTable(columns, r.rows, { caption: `${r.op} arm '${r.arm}' on sm_${r.sm}: registers, spills, shared memory, occupancy per entry` }),
      `<pre style="font-size:smaller">${escapeXml(r.text)}</pre>`,
      listing('PTX', r.ptx, 'not kept (inspectArm(…, { ptx: false }))'),
      listing('SASS', r.sass, r.sassTool),
      '</div>',
    ].join('\n');
    return { data: { 'text/html': html, 'text/plain': plain() } };
  };
  Object.defineProperty(r, MIME_BUNDLE, { value: bundle, enumerable: false });
  Object.defineProperty(r, 'toString', { value: plain, enumerable: false });
  Object.defineProperty(r, Symbol.for('nodejs.util.inspect.custom'), { value: plain, enumerable: false });
  return r;
}

/** The first `lines` lines of an entry's listing (PTX or SASS) that follow its name. */
export function excerpt(listing: string, entry: string, lines = 40): string {
  const all = listing.split('\n');
  const at = all.findIndex((l) => l.includes(entry));
  return all.slice(Math.max(at, 0), Math.max(at, 0) + lines).join('\n');
}
