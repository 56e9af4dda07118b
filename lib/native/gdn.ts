// The koffi binding of cuda/include/gdn.h — declared once, in this module, never in notebook cells
// (koffi refuses to declare a named type twice, so re-running a cell that declared one would throw).
//
// Addresses of backend memory are gdn_addr (uint64) and travel as JS numbers: user-space
// addresses on x86-64 and arm64 stay below 2^53.

import * as fs from 'fs';
import * as path from 'path';
import koffi from 'koffi';
import type { LibraryHandle } from 'koffi';
import { structEncoder, structDecoder } from './struct-codec';

/** A bound native function (sync call, or .async with a node-style callback). */
export type Fn = ((...args: unknown[]) => unknown) & { async: (...args: unknown[]) => void };

export const ABI_VERSION = 9;

/**
 * gdn_status of cuda/include/gdn.h, by name: what lib/ compares a failure's status with, so that it never has to
 * read a message to tell one failure from another. test/native/abi.test.ts checks every value against the header
 * and against the library's gdn_status_name.
 */
export const STATUS = {
  GDN_OK: 0,
  GDN_ERR_INVALID_ARGUMENT: 1,
  GDN_ERR_UNSUPPORTED: 2,
  GDN_ERR_OUT_OF_MEMORY: 3,
  GDN_ERR_NO_DEVICE: 4,
  GDN_ERR_DEVICE: 5,
  GDN_ERR_INVALID_BUFFER: 6,
  GDN_ERR_INTERNAL: 7,
  GDN_ERR_ARM_FAULT: 8,
  /** An interrupt (SIGINT) stopped the call in the process that ran it (the user-arm worker). Added in ABI 9. */
  GDN_ERR_INTERRUPTED: 9,
} as const;

export { projectRoot } from '../paths';
import { projectRoot } from '../paths';
import { ARITHMETIC_VERSION } from '../provenance';

/** Where libgdn is looked for, in order: $GDN_LIBRARY, build/cuda, build/host. */
export function libraryCandidates(): string[] {
  const root = projectRoot();
  const env = process.env.GDN_LIBRARY;
  return [
    ...(env ? [env] : []),
    path.join(root, 'build', 'cuda', 'libgdn.so'),
    path.join(root, 'build', 'host', 'libgdn.so'),
  ];
}

// ---------------------------------------------------------------------------- types (declared once)

const gdn_backend = koffi.opaque('gdn_backend');
const gdn_backend_ptr = koffi.pointer('gdn_backend_ptr', gdn_backend);

export const DeviceInfoT = koffi.struct('gdn_device_info', {
  backend: 'int32_t',
  device_ordinal: 'int32_t',
  name: koffi.array('char', 256, 'String'),
  sm_major: 'int32_t',
  sm_minor: 'int32_t',
  sm_count: 'int32_t',
  l2_bytes: 'int32_t',
  total_mem_bytes: 'uint64_t',
  free_mem_bytes: 'uint64_t',
  sm_clock_mhz: 'int32_t',
  mem_clock_mhz: 'int32_t',
  max_sm_clock_mhz: 'int32_t',
  max_mem_clock_mhz: 'int32_t',
  mem_bus_width_bits: 'int32_t',
  driver_version: 'int32_t',
  runtime_version: 'int32_t',
  driver_string: koffi.array('char', 64, 'String'),
  clocks_source: 'int32_t',
  reserved: koffi.array('int32_t', 7),
});

const ScheduleT = koffi.struct('gdn_schedule', {
  kind: 'int32_t',
  order_len: 'int32_t',
  seed: 'uint64_t',
  order: 'uint64_t', // const int32_t* — passed as an address from koffi.alloc
});

export const ConvArgsT = koffi.struct('gdn_conv_args', {
  T: 'int64_t',
  C: 'int64_t',
  K: 'int64_t',
  num_seqs: 'int32_t',
  x_dtype: 'int32_t',
  out_dtype: 'int32_t',
  his_dtype: 'int32_t',
  x_row_stride: 'int64_t',
  x: 'uint64_t',
  weight: 'uint64_t',
  bias: 'uint64_t',
  query_start_loc: 'uint64_t',
  has_initial_state: 'uint64_t',
  conv_state: 'uint64_t',
  out: 'uint64_t',
  arm: 'int32_t',
  mapping: 'int32_t',
  mutant: 'int32_t',
  widen_cycles: 'int32_t',
  schedule: ScheduleT,
  query_start_loc_host: 'uint64_t', // const int32_t* — a host copy of the offsets (scratchInt32 / allocInt32), or 0
});

export const LaunchContractT = koffi.struct('gdn_launch_contract', {
  arm_ran: 'int32_t',
  mapping_ran: 'int32_t',
  threads_per_block: 'int32_t',
  channels_per_block: 'int32_t',
  channel_tiles: 'int32_t',
  programs: 'int32_t',
  grid_x: 'int32_t',
  grid_y: 'int32_t',
  grid_z: 'int32_t',
  shared_bytes: 'int32_t',
  tokens_per_program: 'int32_t',
  reserved: koffi.array('int32_t', 5),
});

export const ConvUpdateArgsT = koffi.struct('gdn_conv_update_args', {
  B: 'int64_t',
  C: 'int64_t',
  K: 'int64_t',
  x_dtype: 'int32_t',
  out_dtype: 'int32_t',
  state_dtype: 'int32_t',
  arm: 'int32_t',
  num_slots: 'int64_t',
  x: 'uint64_t',
  weight: 'uint64_t',
  bias: 'uint64_t',
  state: 'uint64_t',
  state_indices: 'uint64_t',
  out: 'uint64_t',
  state_indices_host: 'uint64_t', // const int32_t* — a host copy of the slots (scratchInt32 / allocInt32), or 0
});

export const PostconvArgsT = koffi.struct('gdn_postconv_args', {
  T: 'int64_t',
  Hk: 'int64_t',
  Hv: 'int64_t',
  Dk: 'int64_t',
  Dv: 'int64_t',
  conv_dtype: 'int32_t',
  gate_dtype: 'int32_t',
  qkv_dtype: 'int32_t',
  arm: 'int32_t',
  a_row_stride: 'int64_t',
  b_row_stride: 'int64_t',
  conv_out: 'uint64_t',
  a: 'uint64_t',
  b: 'uint64_t',
  A_log: 'uint64_t',
  dt_bias: 'uint64_t',
  q: 'uint64_t',
  k: 'uint64_t',
  v: 'uint64_t',
  g: 'uint64_t',
  beta: 'uint64_t',
});

export const PostconvResultT = koffi.struct('gdn_postconv_result', {
  arm_ran: 'int32_t',
  threads_per_block: 'int32_t',
  grid_x: 'int32_t',
  grid_y: 'int32_t',
  reserved: koffi.array('int32_t', 4),
});

export const MatmulArgsT = koffi.struct('gdn_matmul_args', {
  M: 'int64_t',
  N: 'int64_t',
  Kd: 'int64_t',
  in_dtype: 'int32_t',
  out_dtype: 'int32_t',
  a: 'uint64_t',
  b: 'uint64_t',
  out: 'uint64_t',
});

export const FusedArgsT = koffi.struct('gdn_fused_args', {
  T: 'int64_t',
  Hk: 'int64_t',
  Hv: 'int64_t',
  Dk: 'int64_t',
  Dv: 'int64_t',
  K: 'int64_t',
  num_seqs: 'int32_t',
  x_dtype: 'int32_t',
  conv_dtype: 'int32_t',
  qkv_dtype: 'int32_t',
  gate_dtype: 'int32_t',
  his_dtype: 'int32_t',
  arm: 'int32_t',
  mutant: 'int32_t',
  x_row_stride: 'int64_t',
  a_row_stride: 'int64_t',
  b_row_stride: 'int64_t',
  x: 'uint64_t',
  weight: 'uint64_t',
  bias: 'uint64_t',
  query_start_loc: 'uint64_t',
  has_initial_state: 'uint64_t',
  conv_state: 'uint64_t',
  a: 'uint64_t',
  b: 'uint64_t',
  A_log: 'uint64_t',
  dt_bias: 'uint64_t',
  q: 'uint64_t',
  k: 'uint64_t',
  v: 'uint64_t',
  g: 'uint64_t',
  beta: 'uint64_t',
  query_start_loc_host: 'uint64_t', // const int32_t*, as gdn_conv_args's
});

export const FusedResultT = koffi.struct('gdn_fused_result', {
  arm_ran: 'int32_t',
  threads_per_block: 'int32_t',
  grid_x: 'int32_t',
  grid_y: 'int32_t',
  tokens_per_program: 'int32_t',
  reserved: koffi.array('int32_t', 3),
});

const CopyArgsT = koffi.struct('gdn_copy_args', {
  dst: 'uint64_t',
  src: 'uint64_t',
  bytes: 'uint64_t',
});

export const OpT = koffi.struct('gdn_op', {
  kind: 'int32_t',
  reserved: 'int32_t',
  conv: ConvArgsT,
  update: ConvUpdateArgsT,
  postconv: PostconvArgsT,
  copy: CopyArgsT,
  fused: FusedArgsT,
});

export const BufferCacheInfoT = koffi.struct('gdn_buffer_cache_info', {
  reserved_bytes: 'uint64_t',
  allocated_bytes: 'uint64_t',
  cached_bytes: 'uint64_t',
  peak_reserved_bytes: 'uint64_t',
  segments: 'int64_t',
  allocated_blocks: 'int64_t',
  free_blocks: 'int64_t',
  alloc_calls: 'uint64_t',
  segment_maps: 'uint64_t',
  segment_unmaps: 'uint64_t',
  reserved: koffi.array('uint64_t', 6),
});

/** gdn_user.h: an arm defined at run time (lib/arms). */
export const UserArmDescT = koffi.struct('gdn_user_arm_desc', {
  op: 'int32_t',
  threads_per_block: 'int32_t',
  channels_per_block: 'int32_t',
  tokens_per_program: 'int32_t',
  mappings: 'int32_t',
  shared_bytes: 'int32_t',
  cooperative: 'int32_t',
  time_limit_ms: 'int32_t',
  requires_d128: 'int32_t',
  reserved0: 'int32_t',
  name: 'const char*',
  host_module: 'const char*',
  host_fast_module: 'const char*',
  cuda_module: 'const char*',
  reserved: koffi.array('int32_t', 8),
});

const TimingConfigT = koffi.struct('gdn_timing_config', {
  rounds: 'int32_t',
  flush_l2: 'int32_t',
  rotate_order: 'int32_t',
  graph_launches: 'int32_t',
});

export const ArmInfoT = koffi.struct('gdn_arm_info', {
  op: 'int32_t',
  id: 'int32_t',
  name: koffi.array('char', 32, 'String'),
  description: koffi.array('char', 224, 'String'),
  threads_per_block: 'int32_t',
  per_block: 'int32_t',
  tokens_per_program: 'int32_t',
  mappings: 'int32_t',
  shared_bytes_base: 'int32_t',
  shared_bytes_per_k: 'int32_t',
  fixed_k: 'int32_t',
  data_requires: 'int32_t',
  fallback: 'int32_t',
  flags: 'int32_t',
  layout: 'int32_t',
  min_blocks_per_sm: 'int32_t',
  fallback_rule: koffi.array('char', 128, 'String'),
  reserved: koffi.array('int32_t', 8),
});

/**
 * Every koffi struct of this binding with its C name, for the ABI test that compares koffi's sizes
 * and offsets with the C compiler's (test/native/abi.test.ts).
 */
export const ABI_STRUCTS: Record<string, unknown> = {
  gdn_device_info: DeviceInfoT,
  gdn_schedule: ScheduleT,
  gdn_conv_args: ConvArgsT,
  gdn_launch_contract: LaunchContractT,
  gdn_conv_update_args: ConvUpdateArgsT,
  gdn_postconv_args: PostconvArgsT,
  gdn_postconv_result: PostconvResultT,
  gdn_matmul_args: MatmulArgsT,
  gdn_copy_args: CopyArgsT,
  gdn_op: OpT,
  gdn_timing_config: TimingConfigT,
  gdn_arm_info: ArmInfoT,
  gdn_fused_args: FusedArgsT,
  gdn_fused_result: FusedResultT,
  gdn_buffer_cache_info: BufferCacheInfoT,
};

// ---------------------------------------------------------------------------- plain TS mirrors

/** gdn_arm_info as koffi decodes it. */
export interface ArmInfoStruct {
  op: number; id: number; name: string; description: string;
  threads_per_block: number; per_block: number; tokens_per_program: number; mappings: number;
  shared_bytes_base: number; shared_bytes_per_k: number; fixed_k: number; data_requires: number;
  fallback: number; flags: number; layout: number; min_blocks_per_sm: number; fallback_rule: string;
}
/** gdn_arm_info.flags, gdn_arm_info.data_requires and gdn_arm_info.layout (gdn.h). */
export const ARM_FLAGS = { reference: 0x1, mutant: 0x2, barrier: 0x4, shuffle: 0x8, user: 0x10, fallbackTarget: 0x20, threadsFromD: 0x40 } as const;
export const ARM_REQUIRES = { vec8: 0x1, d128: 0x2 } as const;
export const ARM_LAYOUTS = ['none', 'token-slot', 'tile-slots'] as const;

export interface ScheduleStruct {
  kind: number;
  order_len: number;
  seed: number | bigint;
  order: number | bigint;
}
export interface ConvArgs {
  T: number; C: number; K: number; num_seqs: number;
  x_dtype: number; out_dtype: number; his_dtype: number; x_row_stride: number;
  x: number; weight: number; bias: number; query_start_loc: number; has_initial_state: number;
  conv_state: number; out: number;
  arm: number; mapping: number; mutant: number; widen_cycles: number;
  schedule: ScheduleStruct;
  query_start_loc_host: number;
}
export interface LaunchContractStruct {
  arm_ran: number; mapping_ran: number; threads_per_block: number; channels_per_block: number;
  channel_tiles: number; programs: number; grid_x: number; grid_y: number; grid_z: number;
  shared_bytes: number; tokens_per_program: number;
}
export interface ConvUpdateArgs {
  B: number; C: number; K: number; x_dtype: number; out_dtype: number; state_dtype: number; arm: number;
  num_slots: number; x: number; weight: number; bias: number; state: number; state_indices: number; out: number;
  state_indices_host: number;
}
export interface PostconvArgs {
  T: number; Hk: number; Hv: number; Dk: number; Dv: number;
  conv_dtype: number; gate_dtype: number; qkv_dtype: number; arm: number;
  a_row_stride: number; b_row_stride: number;
  conv_out: number; a: number; b: number; A_log: number; dt_bias: number;
  q: number; k: number; v: number; g: number; beta: number;
}
export interface PostconvResultStruct { arm_ran: number; threads_per_block: number; grid_x: number; grid_y: number }
export interface MatmulArgs { M: number; N: number; Kd: number; in_dtype: number; out_dtype: number; a: number; b: number; out: number }
export interface CopyArgs { dst: number; src: number; bytes: number }
export interface FusedArgs {
  T: number; Hk: number; Hv: number; Dk: number; Dv: number; K: number; num_seqs: number;
  x_dtype: number; conv_dtype: number; qkv_dtype: number; gate_dtype: number; his_dtype: number;
  arm: number; mutant: number;
  x_row_stride: number; a_row_stride: number; b_row_stride: number;
  x: number; weight: number; bias: number; query_start_loc: number; has_initial_state: number; conv_state: number;
  a: number; b: number; A_log: number; dt_bias: number;
  q: number; k: number; v: number; g: number; beta: number;
  query_start_loc_host: number;
}
export interface FusedResultStruct { arm_ran: number; threads_per_block: number; grid_x: number; grid_y: number; tokens_per_program: number }
export interface UserArmDesc {
  op: number; threads_per_block: number; channels_per_block: number; tokens_per_program: number; mappings: number;
  shared_bytes: number; cooperative: number; time_limit_ms: number; requires_d128: number; reserved0: number;
  name: string; host_module: string | null; host_fast_module: string | null; cuda_module: string | null; reserved: number[];
}

export const OP_KIND = { conv: 1, conv_update: 2, postconv: 3, copy: 4, fused: 5 } as const;
export type OpKind = keyof typeof OP_KIND;

// ---------------------------------------------------------------------------- functions


export interface GdnLib {
  path: string;
  abiVersion: Fn;
  buildInfo: Fn;
  statusName: Fn;
  lastError: Fn;
  cudaDeviceCount: Fn;
  backendOpen: Fn;
  backendClose: Fn;
  backendLastError: Fn;
  deviceInfo: Fn;
  bufferAlloc: Fn;
  bufferFree: Fn;
  bufferUpload: Fn;
  bufferDownload: Fn;
  bufferFillU32: Fn;
  bufferCopy: Fn;
  buffersAllocFilled: Fn;
  buffersFree: Fn;
  bufferStats: Fn;
  lastKernelNs: Fn;
  synchronize: Fn;
  convLaunchContract: Fn;
  convForward: Fn;
  convUpdate: Fn;
  postconvForward: Fn;
  matmulNT: Fn;
  timeOps: Fn;
  bufferCacheStats: Fn;
  bufferTrim: Fn;
  hostSetThreads: Fn;
  hostThreads: Fn;
  /** The op entry points with `void*` arguments: bytes from the encoders below (lib/native/struct-codec.ts). */
  convForwardRaw: Fn;
  convUpdateRaw: Fn;
  postconvForwardRaw: Fn;
  matmulNTRaw: Fn;
  fusedForwardRaw: Fn;
  armCount: Fn;
  armRegister: Fn;
  armInfo: Fn;
  convMutantName: Fn;
  fusedForward: Fn;
}

let loaded: GdnLib | undefined;
let loadError: Error | undefined;

/** Loads libgdn once. Throws a clear error naming the paths tried when it cannot. */
export function gdnLib(): GdnLib {
  if (loaded) return loaded;
  if (loadError) throw loadError;
  const tried: string[] = [];
  for (const candidate of libraryCandidates()) {
    if (!fs.existsSync(candidate)) {
      tried.push(`${candidate} (missing)`);
      continue;
    }
    let lib: LibraryHandle;
    try {
      lib = koffi.load(candidate);
    } catch (e) {
      tried.push(`${candidate} (${(e as Error).message})`);
      continue;
    }
    const abi = lib.func('int32_t gdn_abi_version(void)')() as number;
    if (abi !== ABI_VERSION) {
      tried.push(`${candidate} (ABI version ${abi}, this binding needs ${ABI_VERSION}: rebuild with npm run build)`);
      continue;
    }
    const arith = lib.func('int32_t gdn_arith_version(void)')() as number;
    if (arith !== ARITHMETIC_VERSION) {
      tried.push(`${candidate} (arithmetic version ${arith}, this checkout pins ${ARITHMETIC_VERSION} in lib/provenance.ts: rebuild with npm run build)`);
      continue;
    }
    loaded = bind(lib, candidate);
    return loaded;
  }
  loadError = new Error(`libgdn could not be loaded; tried:\n  ${tried.join('\n  ')}\nBuild it with \`npm run build\` or set GDN_LIBRARY.`);
  throw loadError;
}

function bind(lib: LibraryHandle, libPath: string): GdnLib {
  const st = 'int32_t';
  return {
    path: libPath,
    abiVersion: lib.func('gdn_abi_version', 'int32_t', []),
    buildInfo: lib.func('gdn_build_info', 'const char*', []),
    statusName: lib.func('gdn_status_name', 'const char*', ['int32_t']),
    lastError: lib.func('gdn_last_error', 'const char*', []),
    cudaDeviceCount: lib.func('gdn_cuda_device_count', st, [koffi.out(koffi.pointer('int32_t'))]),
    backendOpen: lib.func('gdn_backend_open', st, ['int32_t', 'int32_t', koffi.out(koffi.pointer(gdn_backend_ptr))]),
    backendClose: lib.func('gdn_backend_close', st, [gdn_backend_ptr]),
    backendLastError: lib.func('gdn_backend_last_error', st, [gdn_backend_ptr, 'uint8_t*', 'int32_t']),
    deviceInfo: lib.func('gdn_device_info_get', st, [gdn_backend_ptr, koffi.out(koffi.pointer(DeviceInfoT))]),
    bufferAlloc: lib.func('gdn_buffer_alloc', st, [gdn_backend_ptr, 'uint64_t', koffi.out(koffi.pointer('uint64_t'))]),
    bufferFree: lib.func('gdn_buffer_free', st, [gdn_backend_ptr, 'uint64_t']),
    bufferUpload: lib.func('gdn_buffer_upload', st, [gdn_backend_ptr, 'uint64_t', 'const uint8_t*', 'uint64_t']),
    bufferDownload: lib.func('gdn_buffer_download', st, [gdn_backend_ptr, 'uint8_t*', 'uint64_t', 'uint64_t']),
    bufferFillU32: lib.func('gdn_buffer_fill_u32', st, [gdn_backend_ptr, 'uint64_t', 'uint32_t', 'uint64_t']),
    bufferCopy: lib.func('gdn_buffer_copy', st, [gdn_backend_ptr, 'uint64_t', 'uint64_t', 'uint64_t']),
    // Sizes and addresses travel as little-endian uint64 pairs of a Uint32Array (no BigInt per call).
    buffersAllocFilled: lib.func('gdn_buffers_alloc_filled', st, [gdn_backend_ptr, 'uint32_t', 'void*', 'void*', 'void*']),
    buffersFree: lib.func('gdn_buffers_free', st, [gdn_backend_ptr, 'uint32_t', 'void*']),
    bufferStats: lib.func('gdn_buffer_stats', st, [gdn_backend_ptr, koffi.out(koffi.pointer('int64_t')), koffi.out(koffi.pointer('uint64_t'))]),
    lastKernelNs: lib.func('gdn_last_kernel_ns', st, [gdn_backend_ptr, koffi.out(koffi.pointer('uint64_t'))]),
    synchronize: lib.func('gdn_synchronize', st, [gdn_backend_ptr]),
    convLaunchContract: lib.func('gdn_conv_launch_contract', st, [
      'int32_t', 'int32_t', 'int64_t', 'int64_t', 'const int32_t*', 'int32_t',
      koffi.out(koffi.pointer(LaunchContractT)), 'int32_t*', 'int32_t',
    ]),
    convForward: lib.func('gdn_conv_forward', st, [gdn_backend_ptr, koffi.pointer(ConvArgsT), koffi.out(koffi.pointer(LaunchContractT))]),
    convUpdate: lib.func('gdn_conv_update', st, [gdn_backend_ptr, koffi.pointer(ConvUpdateArgsT)]),
    postconvForward: lib.func('gdn_postconv_forward', st, [gdn_backend_ptr, koffi.pointer(PostconvArgsT), koffi.out(koffi.pointer(PostconvResultT))]),
    matmulNT: lib.func('gdn_matmul_nt', st, [gdn_backend_ptr, koffi.pointer(MatmulArgsT)]),
    timeOps: lib.func('gdn_time_ops', st, [gdn_backend_ptr, 'void*', 'int32_t', koffi.pointer(TimingConfigT), 'float*']),
    bufferCacheStats: lib.func('gdn_buffer_cache_stats', st, [gdn_backend_ptr, koffi.out(koffi.pointer(BufferCacheInfoT))]),
    bufferTrim: lib.func('gdn_buffer_trim', st, [gdn_backend_ptr, koffi.out(koffi.pointer('uint64_t'))]),
    hostSetThreads: lib.func('gdn_host_set_threads', st, [gdn_backend_ptr, 'int32_t']),
    hostThreads: lib.func('gdn_host_threads', st, [gdn_backend_ptr, koffi.out(koffi.pointer('int32_t'))]),
    convForwardRaw: lib.func('gdn_conv_forward', st, [gdn_backend_ptr, 'void*', 'void*']),
    convUpdateRaw: lib.func('gdn_conv_update', st, [gdn_backend_ptr, 'void*']),
    postconvForwardRaw: lib.func('gdn_postconv_forward', st, [gdn_backend_ptr, 'void*', 'void*']),
    matmulNTRaw: lib.func('gdn_matmul_nt', st, [gdn_backend_ptr, 'void*']),
    fusedForwardRaw: lib.func('gdn_fused_forward', st, [gdn_backend_ptr, 'void*', 'void*']),
    armCount: lib.func('gdn_arm_count', 'int32_t', ['int32_t']),
    armRegister: lib.func('gdn_arm_register', st, [koffi.pointer(UserArmDescT), koffi.out(koffi.pointer('int32_t'))]),
    armInfo: lib.func('gdn_arm_info_get', st, ['int32_t', 'int32_t', koffi.out(koffi.pointer(ArmInfoT))]),
    convMutantName: lib.func('gdn_conv_mutant_name', 'const char*', ['int32_t']),
    fusedForward: lib.func('gdn_fused_forward', st, [gdn_backend_ptr, koffi.pointer(FusedArgsT), koffi.out(koffi.pointer(FusedResultT))]),
  };
}

/** Encodes ops into native memory (an array of gdn_op); the caller frees it with koffi.free. */
export function encodeOps(ops: { kind: number; conv?: ConvArgs; update?: ConvUpdateArgs; postconv?: PostconvArgs; copy?: CopyArgs; fused?: FusedArgs }[]): unknown {
  const size = koffi.sizeof(OpT);
  const mem = koffi.alloc(OpT, ops.length);
  const blank = koffi.decode(new Uint8Array(size), OpT);
  for (let i = 0; i < ops.length; i++) {
    koffi.encode(mem, i * size, OpT, { ...blank, reserved: 0, ...ops[i] });
  }
  return mem;
}

/** Native memory holding an int32 array; its address goes into pointer-typed uint64 fields. */
export function allocInt32(values: ArrayLike<number>): { mem: unknown; addr: number } {
  const mem = koffi.alloc('int32_t', Math.max(values.length, 1));
  koffi.encode(mem, 'int32_t', Array.from(values), values.length);
  return { mem, addr: Number(koffi.address(mem)) };
}

export function freeNative(mem: unknown): void {
  koffi.free(mem);
}

// One native int32 array reused by synchronous calls for small host arguments (the conv's offsets):
// written through a typed-array view of its memory, so a call costs no allocation and no koffi call.
// A synchronous call finishes before the next can start, so one array serves them all; async calls,
// whose native side runs after the function has returned, use allocInt32 instead.
let scratchI32: { mem: unknown; addr: number; view: Int32Array } | undefined;

/** The address of the shared scratch array, holding `values` (valid until the next scratchInt32 call). */
export function scratchInt32(values: ArrayLike<number>): number {
  if (!scratchI32 || scratchI32.view.length < values.length) {
    if (scratchI32) koffi.free(scratchI32.mem);
    const n = Math.max(256, 2 * values.length);
    const mem = koffi.alloc('int32_t', n);
    scratchI32 = { mem, addr: Number(koffi.address(mem)), view: new Int32Array(koffi.view(mem, 4 * n)) };
  }
  scratchI32.view.set(values);
  return scratchI32.addr;
}

export const TIMING_CONFIG = TimingConfigT;

// Byte codecs of the op structs for the `...Raw` entry points (koffi's object marshalling of
// gdn_conv_args alone costs ~7 µs a call; these write the same layout in well under one).
export const convArgsCodec = structEncoder<ConvArgs>(ConvArgsT);
export const convUpdateArgsCodec = structEncoder<ConvUpdateArgs>(ConvUpdateArgsT);
export const postconvArgsCodec = structEncoder<PostconvArgs>(PostconvArgsT);
export const matmulArgsCodec = structEncoder<MatmulArgs>(MatmulArgsT);
export const launchContractCodec = structDecoder<LaunchContractStruct>(LaunchContractT);
export const postconvResultCodec = structDecoder<PostconvResultStruct>(PostconvResultT);
export const fusedArgsCodec = structEncoder<FusedArgs>(FusedArgsT);
export const fusedResultCodec = structDecoder<FusedResultStruct>(FusedResultT);
export const BACKEND_PTR = gdn_backend_ptr;
