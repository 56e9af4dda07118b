// Backends: where ops run. `host` replays the kernels on the CPU with the same arithmetic; `cuda`
// runs them on a GPU. GDN_BACKEND=auto|cuda|host picks the active one (auto: CUDA when a GPU is
// usable, else host, and `backendChoice()` says why).

import { gdnLib, GdnLib, Fn, encodeOps, freeNative, OP_KIND, OpKind, ConvArgs, ConvUpdateArgs, PostconvArgs, CopyArgs, FusedArgs, STATUS } from './native/gdn';

export type BackendKind = 'host' | 'cuda';

export interface DeviceInfo {
  backend: BackendKind;
  deviceOrdinal: number;
  name: string;
  smMajor: number;
  smMinor: number;
  smCount: number;
  l2Bytes: number;
  totalMemBytes: number;
  freeMemBytes: number;
  smClockMhz: number;
  memClockMhz: number;
  maxSmClockMhz: number;
  maxMemClockMhz: number;
  memBusWidthBits: number;
  driverVersion: number;
  runtimeVersion: number;
  driverString: string;
  clocksSource: 'unknown' | 'nvml' | 'attributes';
}

/** An op ready for the native timing loop (built by the ops modules: conv.prepare, postconv.prepare, copyOp). */
export interface NativeOp {
  kind: OpKind;
  args: ConvArgs | ConvUpdateArgs | PostconvArgs | CopyArgs | FusedArgs;
  label?: string;
}

/** What the buffer cache holds (see Backend.cacheStats). */
export interface BufferCacheStats {
  /** Bytes held from the device or the OS, in segments. */
  reservedBytes: number;
  /** Bytes in live blocks (rounded up to 512 bytes each). */
  allocatedBytes: number;
  /** Bytes in free blocks kept for reuse. */
  cachedBytes: number;
  peakReservedBytes: number;
  segments: number;
  allocatedBlocks: number;
  freeBlocks: number;
  allocCalls: number;
  /** Segments taken from the backend: the allocations the cache could not serve. */
  segmentMaps: number;
  segmentUnmaps: number;
}

export interface TimingConfig {
  rounds: number;
  flushL2: boolean;
  rotateOrder?: boolean;
  /** > 0: CUDA-graph replay of this many back-to-back launches per sample (gdn_timing_config.graph_launches). */
  graphLaunches?: number;
}

/** A native failure: the status name and the library's message (which names the argument). */
export class GdnError extends Error {
  /**
   * True when a kernel interrupt (SIGINT) stopped the work: the status is GDN_ERR_INTERRUPTED, which the library
   * returns when SIGINT ended the user-arm worker during the call (cuda/src/user/worker.cpp, reap). Read from the
   * status, never the message, so that rewording the message cannot turn an interrupt into a fault. The kernel
   * reports such a cell as KeyboardInterrupt even when this error reaches it before its own SIGINT handler has run.
   */
  readonly interrupted: boolean;
  constructor(readonly status: number, readonly statusName: string, message: string) {
    super(message);
    this.name = 'GdnError';
    this.interrupted = status === STATUS.GDN_ERR_INTERRUPTED;
  }
}

export class Backend {
  private handle: unknown;
  private infoCache: DeviceInfo | undefined;
  private busy = 0;

  private constructor(readonly kind: BackendKind, handle: unknown, readonly lib: GdnLib) {
    this.handle = handle;
  }

  /** Opens a backend of this kind (device 0 for CUDA). */
  static open(kind: BackendKind, deviceOrdinal = 0): Backend {
    if (kind !== 'host' && kind !== 'cuda') throw new TypeError(`kind: expected 'host' or 'cuda', got ${String(kind)}`);
    const lib = gdnLib();
    const out: unknown[] = [null];
    const st = lib.backendOpen(kind === 'host' ? 0 : 1, deviceOrdinal, out) as number;
    if (st !== 0) throw new GdnError(st, lib.statusName(st) as string, `opening the ${kind} backend: ${lib.lastError() as string}`);
    return new Backend(kind, out[0], lib);
  }

  get closed(): boolean {
    return this.handle === null;
  }

  /** The native handle (for the ops modules). Throws once closed. */
  get native(): unknown {
    if (this.handle === null) throw new Error(`backend: the ${this.kind} backend was closed`);
    return this.handle;
  }

  /** Throws a GdnError for a failed status, using this thread's message or, after async calls, the backend's. */
  check(status: number, context: string, asyncCall = false): void {
    if (status === 0) return;
    let message = '';
    if (asyncCall && this.handle !== null) {
      const buf = new Uint8Array(1024);
      this.lib.backendLastError(this.handle, buf, buf.length);
      message = Buffer.from(buf).toString('utf8').replace(/\0.*$/s, '');
    } else {
      message = this.lib.lastError() as string;
    }
    throw new GdnError(status, this.lib.statusName(status) as string, `${context}: ${message || this.lib.statusName(status)}`);
  }

  info(): DeviceInfo {
    if (this.infoCache && this.kind === 'host') return this.infoCache;
    const out: Record<string, unknown>[] = [{}];
    this.check(this.lib.deviceInfo(this.native, out) as number, 'device info');
    const r = out[0] as Record<string, number & string>;
    this.infoCache = {
      backend: r.backend === 1 ? 'cuda' : 'host',
      deviceOrdinal: r.device_ordinal,
      name: r.name,
      smMajor: r.sm_major,
      smMinor: r.sm_minor,
      smCount: r.sm_count,
      l2Bytes: r.l2_bytes,
      totalMemBytes: Number(r.total_mem_bytes),
      freeMemBytes: Number(r.free_mem_bytes),
      smClockMhz: r.sm_clock_mhz,
      memClockMhz: r.mem_clock_mhz,
      maxSmClockMhz: r.max_sm_clock_mhz,
      maxMemClockMhz: r.max_mem_clock_mhz,
      memBusWidthBits: r.mem_bus_width_bits,
      driverVersion: r.driver_version,
      runtimeVersion: r.runtime_version,
      driverString: r.driver_string,
      clocksSource: (['unknown', 'nvml', 'attributes'] as const)[r.clocks_source] ?? 'unknown',
    };
    return this.infoCache;
  }

  alloc(bytes: number): number {
    if (!Number.isSafeInteger(bytes) || bytes <= 0) throw new RangeError(`bytes: expected a positive integer, got ${bytes}`);
    const out = [0];
    this.check(this.lib.bufferAlloc(this.native, bytes, out) as number, `allocating ${bytes} bytes`);
    return Number(out[0]);
  }

  free(addr: number): void {
    this.check(this.lib.bufferFree(this.native, addr) as number, 'freeing a buffer');
  }

  // Scratch arrays of allocFilled / freeMany for up to `scratchFor(n)` buffers: uint64 values as (lo, hi)
  // pairs, and 32-bit patterns.
  private words64 = new Uint32Array(32);
  private words64b = new Uint32Array(32);
  private patterns32 = new Uint32Array(16);
  private scratchFor(n: number): void {
    if (this.patterns32.length >= n) return;
    this.patterns32 = new Uint32Array(n);
    this.words64 = new Uint32Array(2 * n);
    this.words64b = new Uint32Array(2 * n);
  }

  /**
   * Allocates buffers of the given sizes (each a positive multiple of 4 bytes) and fills buffer i with the
   * 32-bit pattern patterns[i], in one native call (gdn_buffers_alloc_filled: one fill launch on CUDA for
   * all of them). An op's fresh outputs are made this way (docs/SPEC.md §2, "Fresh outputs").
   */
  allocFilled(bytes: readonly number[], patterns: readonly number[]): number[] {
    const n = bytes.length;
    if (patterns.length !== n) throw new RangeError(`patterns: expected ${n} patterns (one per buffer), got ${patterns.length}`);
    this.scratchFor(n);
    const sizes = this.words64;
    const addrs = this.words64b;
    for (let i = 0; i < n; i++) {
      const b = bytes[i];
      if (!Number.isSafeInteger(b) || b <= 0 || b % 4 !== 0) throw new RangeError(`bytes[${i}]: expected a positive multiple of 4, got ${b}`);
      sizes[2 * i] = b >>> 0;
      sizes[2 * i + 1] = Math.floor(b / 0x100000000);
      this.patterns32[i] = patterns[i] >>> 0;
    }
    this.check(this.lib.buffersAllocFilled(this.native, n, sizes, this.patterns32, addrs) as number, `allocating ${n} filled buffers`);
    const out = new Array<number>(n);
    for (let i = 0; i < n; i++) out[i] = addrs[2 * i] + addrs[2 * i + 1] * 0x100000000;
    return out;
  }

  /** Frees live buffers in one native call (gdn_buffers_free checks every address before freeing any). */
  freeMany(addrs: readonly number[]): void {
    const n = addrs.length;
    this.scratchFor(n);
    const w = this.words64;
    for (let i = 0; i < n; i++) {
      w[2 * i] = addrs[i] >>> 0;
      w[2 * i + 1] = Math.floor(addrs[i] / 0x100000000);
    }
    this.check(this.lib.buffersFree(this.native, n, w) as number, `freeing ${n} buffers`);
  }

  upload(addr: number, data: Uint8Array): void {
    this.check(this.lib.bufferUpload(this.native, addr, data, data.byteLength) as number, 'upload');
  }

  download(dst: Uint8Array, addr: number): void {
    this.check(this.lib.bufferDownload(this.native, dst, addr, dst.byteLength) as number, 'download');
  }

  fillU32(addr: number, pattern: number, bytes: number): void {
    this.check(this.lib.bufferFillU32(this.native, addr, pattern >>> 0, bytes) as number, 'fill');
  }

  /** Device-to-device copy of bytes (both ranges inside live buffers). */
  copy(dst: number, src: number, bytes: number): void {
    this.check(this.lib.bufferCopy(this.native, dst, src, bytes) as number, 'copy');
  }

  /** Live buffers on this backend (leak checks). Blocks the buffer cache keeps for reuse are not live. */
  stats(): { liveBuffers: number; liveBytes: number } {
    const n = [0];
    const b = [0];
    this.check(this.lib.bufferStats(this.native, n, b) as number, 'buffer stats');
    return { liveBuffers: Number(n[0]), liveBytes: Number(b[0]) };
  }

  /**
   * Host backend: the wall time in µs of the last kernel replay (the kernel inside the last op call), so that an
   * op's cost beyond its kernel can be taken call by call (gdn_last_kernel_ns). null on CUDA, whose kernels run
   * asynchronously (time them with timeOps).
   */
  lastKernelUs(): number | null {
    if (this.kind !== 'host') return null;
    const ns = [0];
    this.check(this.lib.lastKernelNs(this.native, ns) as number, 'last kernel time');
    return Number(ns[0]) / 1000;
  }

  /** The buffer cache behind alloc/free (gdn.h, gdn_buffer_cache_info): what it holds and how often it missed. */
  cacheStats(): BufferCacheStats {
    const out: Record<string, unknown>[] = [{}];
    this.check(this.lib.bufferCacheStats(this.native, out) as number, 'buffer cache stats');
    const r = out[0] as Record<string, number | bigint>;
    return {
      reservedBytes: Number(r.reserved_bytes),
      allocatedBytes: Number(r.allocated_bytes),
      cachedBytes: Number(r.cached_bytes),
      peakReservedBytes: Number(r.peak_reserved_bytes),
      segments: Number(r.segments),
      allocatedBlocks: Number(r.allocated_blocks),
      freeBlocks: Number(r.free_blocks),
      allocCalls: Number(r.alloc_calls),
      segmentMaps: Number(r.segment_maps),
      segmentUnmaps: Number(r.segment_unmaps),
    };
  }

  /** Host backend: threads that replay a launch's blocks where the order allows (0 on CUDA). */
  hostThreads(): number {
    const out = [0];
    this.check(this.lib.hostThreads(this.native, out) as number, 'host threads');
    return Number(out[0]);
  }

  /** Host backend: replay on `threads` threads (0 = every logical CPU, 1 = serial). */
  setHostThreads(threads: number): void {
    if (!Number.isInteger(threads) || threads < 0) throw new RangeError(`threads: expected 0 (every CPU) or a positive integer, got ${threads}`);
    this.check(this.lib.hostSetThreads(this.native, threads) as number, 'setting the host threads');
  }

  /** Returns the cache's wholly unused segments to the device (or the OS); the bytes returned. */
  trim(): number {
    const out = [0];
    this.check(this.lib.bufferTrim(this.native, out) as number, 'buffer trim');
    return Number(out[0]);
  }

  synchronize(): void {
    this.check(this.lib.synchronize(this.native) as number, 'synchronize');
  }

  /** Calls a native function on a worker thread (koffi async) so the event loop and the kernel stay responsive. */
  async callAsync(fn: Fn, args: unknown[], context: string): Promise<void> {
    this.busy++;
    try {
      const status = await new Promise<number>((resolve, reject) => {
        fn.async(...args, (err: unknown, res: number) => (err ? reject(err) : resolve(res)));
      });
      this.check(status, context, true);
    } finally {
      this.busy--;
    }
  }

  /**
   * Times ops natively: each round launches every op once (interleaved); one sample per launch,
   * µs, at [round * ops.length + i]. CUDA: events around each launch, L2 flushed outside them.
   */
  async timeOps(ops: NativeOp[], cfg: TimingConfig): Promise<Float32Array> {
    if (!Array.isArray(ops) || ops.length === 0) throw new RangeError('ops: expected a non-empty array of prepared ops');
    if (!Number.isInteger(cfg.rounds) || cfg.rounds < 1) throw new RangeError(`rounds: expected a positive integer, got ${cfg.rounds}`);
    const samples = new Float32Array(cfg.rounds * ops.length);
    const mem = encodeOps(
      ops.map((op) => {
        const kind = OP_KIND[op.kind];
        if (!kind) throw new TypeError(`ops: unknown op kind ${String(op.kind)}`);
        const member = op.kind === 'conv_update' ? 'update' : op.kind;
        return { kind, [member]: op.args };
      }),
    );
    try {
      await this.callAsync(
        this.lib.timeOps,
        [this.native, mem, ops.length, { rounds: cfg.rounds, flush_l2: cfg.flushL2 ? 1 : 0, rotate_order: cfg.rotateOrder ? 1 : 0, graph_launches: cfg.graphLaunches ?? 0 }, samples],
        'timing',
      );
    } finally {
      freeNative(mem);
    }
    return samples;
  }

  /** Frees every buffer of this backend and the backend itself. */
  close(): void {
    if (this.handle === null) return;
    if (this.busy) throw new Error('backend: cannot close while a native call is in flight');
    this.lib.backendClose(this.handle);
    this.handle = null;
    if (active === this) active = undefined;
  }
}

// ---------------------------------------------------------------------------- the active backend

let active: Backend | undefined;
let choice = '';

/** Number of usable CUDA devices (0 without a CUDA build, driver or GPU). */
export function cudaDeviceCount(): number {
  const lib = gdnLib();
  const out = [0];
  const st = lib.cudaDeviceCount(out) as number;
  return st === 0 ? Number(out[0]) : 0;
}

/** The backend ops use by default, opened on first use from GDN_BACKEND (auto | cuda | host). */
export function activeBackend(): Backend {
  if (active && !active.closed) return active;
  const wanted = (process.env.GDN_BACKEND ?? 'auto').trim().toLowerCase() || 'auto';
  if (wanted !== 'auto' && wanted !== 'cuda' && wanted !== 'host') {
    throw new Error(`GDN_BACKEND: expected auto, cuda or host, got '${process.env.GDN_BACKEND}'`);
  }
  if (wanted === 'auto') {
    const n = cudaDeviceCount();
    if (n > 0) {
      active = Backend.open('cuda');
      choice = `auto → cuda (${n} CUDA device${n > 1 ? 's' : ''} usable)`;
    } else {
      active = Backend.open('host');
      const build = gdnLib().buildInfo() as string;
      choice = `auto → host (${/cuda/i.test(build) ? 'no usable CUDA device' : 'libgdn was built without CUDA'})`;
    }
  } else {
    active = Backend.open(wanted);
    choice = `${wanted} (GDN_BACKEND=${wanted})`;
  }
  return active;
}

/** Makes `kind` (or an open backend) the default for ops. */
export function useBackend(kind: BackendKind | Backend): Backend {
  active = kind instanceof Backend ? kind : Backend.open(kind);
  choice = `${active.kind} (chosen in code)`;
  return active;
}

/** How the active backend was chosen, e.g. "auto → host (no usable CUDA device)". */
export function backendChoice(): string {
  activeBackend();
  return choice;
}

/**
 * How `b` was chosen when it is the active backend (as backendChoice() says), else undefined. Opens nothing: a
 * backend passed in explicitly is described without opening the one GDN_BACKEND names (which may not open).
 */
export function choiceOf(b: Backend): string | undefined {
  return active === b && !b.closed ? choice : undefined;
}

/** Facts about the native library build. */
export function buildInfo(): { path: string; build: string; abi: number } {
  const lib = gdnLib();
  return { path: lib.path, build: lib.buildInfo() as string, abi: lib.abiVersion() as number };
}
