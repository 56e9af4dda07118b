// Tensor: a shape, a dtype, a row stride, and storage either in host memory or in a backend buffer.
//
// Rows are the last dimension: a tensor of shape [d0, …, dn-1] has rows = d0·…·dn-2 rows of dn-1
// elements, and row r starts at element `offset + r · rowStride` of its storage. rowStride > cols
// describes padded rows (e.g. x with a row stride above C); offset and rowStride together describe
// column views (e.g. `b` and `a` inside one packed [T, 2·Hv] projection).
//
// Lifetime: device storage is freed by release() (or by the scope() that created it), never by the
// garbage collector's timing. A released tensor, or a view of released storage, refuses every use.

import { DType, checkDType, dtypeSize, describe, f32ToBf16Bits, f32ToF16Bits, bf16BitsToF32, bf16ToFloat32, f16BitsToF32, f16ToFloat32 } from './dtype';
import type { Backend } from './backend';
import { Rng } from './random';
import { constants as bufferConstants } from 'buffer';

/** Storage shared by a tensor and its views. */
export abstract class Storage {
  released = false;
  constructor(readonly bytes: number) {}
  abstract readonly location: 'host' | 'device';
  abstract release(): void;
}

export class HostStorage extends Storage {
  readonly location = 'host' as const;
  constructor(readonly data: Uint8Array) {
    super(data.byteLength);
  }
  release(): void {
    this.released = true;
  }
}

export class DeviceStorage extends Storage {
  readonly location = 'device' as const;
  constructor(readonly backend: Backend, readonly addr: number, bytes: number) {
    super(bytes);
    liveScopes.at(-1)?.add(this);
  }
  release(): void {
    if (this.released) return;
    this.released = true;
    if (!this.backend.closed) this.backend.free(this.addr);
  }
}

/**
 * Releases tensors as release() does, the device buffers of one backend in one native call
 * (Backend.freeMany): an op result's outputs go back together. Views sharing a storage free it once.
 */
export function releaseTensors(tensors: readonly Tensor[]): void {
  let backend: Backend | null = null;
  const batch: DeviceStorage[] = [];
  for (const t of tensors) {
    const s = t.storage;
    if (s.released || batch.includes(s as DeviceStorage)) continue;
    if (!(s instanceof DeviceStorage) || s.backend.closed || (backend !== null && s.backend !== backend)) {
      s.release();
      continue;
    }
    backend = s.backend;
    batch.push(s);
  }
  if (!backend || batch.length === 0) return;
  if (batch.length === 1) return batch[0].release();
  backend.freeMany(batch.map((s) => s.addr));
  for (const s of batch) s.released = true;
}

// Scopes: every device storage allocated while a scope is open is released when it closes,
// except storage reachable from the scope's return value (kept by `keep`).
const liveScopes: Set<DeviceStorage>[] = [];

/**
 * Runs fn and then releases every device buffer it allocated, except those of tensors listed in
 * the value it returns (a Tensor, an array of them, or an object whose values are tensors).
 */
export async function scope<R>(fn: () => R | Promise<R>): Promise<R> {
  const mine = new Set<DeviceStorage>();
  liveScopes.push(mine);
  let result: R;
  try {
    result = await fn();
  } finally {
    liveScopes.splice(liveScopes.lastIndexOf(mine), 1);
  }
  const kept = new Set<Storage>();
  for (const t of tensorsIn(result)) kept.add(t.storage);
  for (const s of mine) {
    if (kept.has(s)) liveScopes.at(-1)?.add(s);
    else s.release();
  }
  return result;
}

function* tensorsIn(value: unknown, depth = 0): Generator<Tensor> {
  if (value instanceof Tensor) yield value;
  else if (depth < 3 && value && typeof value === 'object') {
    for (const v of Array.isArray(value) ? value : Object.values(value)) yield* tensorsIn(v, depth + 1);
  }
}

export interface TensorOptions {
  /** Elements between starts of consecutive rows; defaults to the row length. */
  rowStride?: number;
  /** Element offset of the first element in the storage (views). */
  offset?: number;
}

export interface RandomOptions extends TensorOptions {
  seed?: number;
  /** 'normal' (default) or 'uniform' on [-1, 1). */
  dist?: 'normal' | 'uniform';
  scale?: number;
  /** Value written into row padding (rowStride > cols): a poison that must never be read. */
  padValue?: number;
}

export type NumericArray = ArrayLike<number>;

/** The largest host tensor in bytes: one typed array of Node.js (buffer.constants.MAX_LENGTH, 4 GiB on Node 20). */
export const MAX_HOST_BYTES: number = bufferConstants.MAX_LENGTH;

/** A host tensor of `bytes` fits in one typed array, or a RangeError naming the shape and the limit. */
function checkHostBytes(shape: readonly number[], dtype: DType, bytes: number): void {
  if (bytes <= MAX_HOST_BYTES) return;
  throw new RangeError(
    `shape: [${shape.join(', ')}] ${dtype} needs ${formatBytes(bytes)} of host memory; a host tensor holds at most ` +
      `${formatBytes(MAX_HOST_BYTES)} (Node.js's largest typed array). Make it on a backend instead ` +
      `(Tensor.empty(shape, dtype, { backend })), or use a smaller shape`,
  );
}

function formatBytes(n: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let i = 0;
  let v = n;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return `${i === 0 ? v : v.toFixed(v < 10 ? 2 : 1)} ${units[i]} (${n} bytes)`;
}

/**
 * What the elements of a tensor mean for the op that made it: a map from a flat element index to named
 * coordinates, e.g. (sequence, token, channel) for the conv's output. Built by lib/analysis/coordinates.ts;
 * an op sets it on the tensors it returns, so a diff of them is located without options.
 */
export interface Coordinates {
  /** Short description, e.g. "conv (sequence, token, channel)". */
  readonly kind: string;
  /** Names of the coordinates `at` returns, in order. */
  names(shape: readonly number[]): string[];
  /** Names of the mismatch map's axes (tensor viewed as [shape[0], numel / shape[0]]). */
  mapAxes(shape: readonly number[]): [string, string];
  /** Throws a clear error when the mapper does not fit a tensor of this shape. */
  check(shape: readonly number[]): void;
  /** The coordinates of flat (row-major, contiguous) element index i. */
  at(index: number, shape: readonly number[]): number[];
}

export class Tensor {
  readonly shape: readonly number[];
  readonly dtype: DType;
  readonly rowStride: number;
  readonly offset: number;
  /** @internal */
  readonly storage: Storage;
  // Facts of the (frozen) shape, computed once: the ops read them several times per call.
  private readonly nRows: number;
  private readonly nCols: number;
  private readonly nElems: number;
  // The op's coordinates of this tensor's elements, or a function making them (built when first read:
  // the conv's need its offsets, which may be on the device).
  private coords: Coordinates | (() => Coordinates) | null = null;

  /** @internal Use the static constructors. */
  constructor(shape: readonly number[], dtype: DType, storage: Storage, opts: TensorOptions = {}) {
    this.shape = Object.freeze(checkShape(shape, 'shape'));
    this.dtype = checkDType(dtype, 'dtype');
    const cols = this.shape.length ? this.shape[this.shape.length - 1] : 1;
    let rows = 1;
    for (let d = 0; d + 1 < this.shape.length; d++) rows *= this.shape[d];
    this.nCols = cols;
    this.nRows = rows;
    this.nElems = this.shape.length ? rows * cols : 1;
    this.rowStride = opts.rowStride ?? cols;
    this.offset = opts.offset ?? 0;
    if (!Number.isInteger(this.rowStride) || this.rowStride < cols) {
      throw new RangeError(`rowStride: expected an integer >= the row length ${cols}, got ${describe(opts.rowStride)}`);
    }
    if (!Number.isInteger(this.offset) || this.offset < 0) {
      throw new RangeError(`offset: expected a non-negative integer, got ${describe(opts.offset)}`);
    }
    const need = this.numel === 0 ? 0 : this.extentElements() * dtypeSize(this.dtype);
    if (need > storage.bytes) {
      throw new RangeError(`storage: ${need} bytes needed for shape [${this.shape}] ${this.dtype} (rowStride ${this.rowStride}, offset ${this.offset}), storage has ${storage.bytes}`);
    }
    this.storage = storage;
  }

  // ------------------------------------------------------------------ construction

  /** A host tensor from numbers, rounded to dtype (round to nearest even for bf16/f16). */
  static from(values: NumericArray, shape: readonly number[], dtype: DType = 'f32', opts: TensorOptions = {}): Tensor {
    const t = Tensor.allocHost(shape, dtype, opts);
    const n = numelOf(t.shape);
    if (values.length !== n) throw new RangeError(`values: expected ${n} elements for shape [${shape}], got ${values.length}`);
    const cols = t.cols;
    const view = typedView(t.dtype, (t.storage as HostStorage).data, true);
    for (let r = 0, i = 0; r < t.rows; r++) {
      const base = t.offset + r * t.rowStride;
      for (let c = 0; c < cols; c++, i++) view[base + c] = encode(t.dtype, values[i]);
    }
    return t;
  }

  /** A host tensor over raw little-endian element bytes (contiguous, no padding). The bytes are copied. */
  static fromBytes(bytes: Uint8Array, shape: readonly number[], dtype: DType): Tensor {
    const n = numelOf(checkShape(shape, 'shape')) * dtypeSize(checkDType(dtype, 'dtype'));
    if (bytes.byteLength !== n) throw new RangeError(`bytes: expected ${n} bytes for shape [${shape}] ${dtype}, got ${bytes.byteLength}`);
    return new Tensor(shape, dtype, new HostStorage(new Uint8Array(bytes)));
  }

  /** An uninitialised (zero-filled on the host) tensor on the host or a backend. */
  static empty(shape: readonly number[], dtype: DType, opts: TensorOptions & { backend?: Backend } = {}): Tensor {
    if (!opts.backend) return Tensor.allocHost(shape, dtype, opts);
    // Whole 32-bit words, at least one: word fills (poison) stay inside the buffer.
    const bytes = Math.max(4, Math.ceil(layoutBytes(shape, dtype, opts) / 4) * 4);
    const addr = opts.backend.alloc(bytes);
    return new Tensor(shape, dtype, new DeviceStorage(opts.backend, addr, bytes), opts);
  }

  /**
   * Contiguous tensors on `backend`, tensor i filled with the 32-bit pattern patterns[i] (poison for an
   * op's fresh outputs, docs/SPEC.md §2), all allocated and filled by one native call (Backend.allocFilled).
   */
  static emptyFilled(specs: readonly (readonly [readonly number[], DType])[], patterns: readonly number[], backend: Backend): Tensor[] {
    const bytes = specs.map(([shape, dtype]) => Math.max(4, Math.ceil(layoutBytes(shape, dtype, {}) / 4) * 4));
    const addrs = backend.allocFilled(bytes, patterns);
    return specs.map(([shape, dtype], i) => new Tensor(shape, dtype, new DeviceStorage(backend, addrs[i], bytes[i])));
  }

  static zeros(shape: readonly number[], dtype: DType = 'f32', opts: TensorOptions = {}): Tensor {
    return Tensor.allocHost(shape, dtype, opts);
  }

  /** Seeded random values (normal or uniform), rounded to dtype; the same seed gives the same bits everywhere. */
  static random(shape: readonly number[], dtype: DType = 'f32', opts: RandomOptions = {}): Tensor {
    const rng = new Rng(opts.seed ?? 0);
    const scale = opts.scale ?? 1;
    const n = numelOf(checkShape(shape, 'shape'));
    checkHostBytes(shape, dtype, layoutBytes(shape, dtype, opts));
    // The values are drawn in float64 first (one rounding, to dtype): that array has its own limit.
    if (n * 8 > MAX_HOST_BYTES) {
      throw new RangeError(`shape: Tensor.random draws [${shape.join(', ')}] as ${n} float64 values (${formatBytes(n * 8)}), more than the ${formatBytes(MAX_HOST_BYTES)} a host array holds; use a smaller shape`);
    }
    const values = new Float64Array(n);
    const integer = dtype === 'i32' || dtype === 'i8';
    for (let i = 0; i < n; i++) {
      const u = opts.dist === 'uniform' ? rng.uniform() * 2 - 1 : rng.normal();
      values[i] = integer ? Math.round(u * scale) : u * scale;
    }
    const t = Tensor.from(values, shape, dtype, opts);
    if (opts.padValue !== undefined) t.fillPadding(opts.padValue);
    return t;
  }

  private static allocHost(shape: readonly number[], dtype: DType, opts: TensorOptions): Tensor {
    const bytes = layoutBytes(shape, dtype, opts);
    checkHostBytes(shape, dtype, bytes);
    return new Tensor(shape, dtype, new HostStorage(new Uint8Array(bytes)), opts);
  }

  // ------------------------------------------------------------------ facts

  get rank(): number {
    return this.shape.length;
  }
  get cols(): number {
    return this.nCols;
  }
  get rows(): number {
    return this.nRows;
  }
  get numel(): number {
    return this.nElems;
  }
  get contiguous(): boolean {
    return this.rowStride === this.cols || this.rows <= 1;
  }
  get location(): 'host' | 'device' {
    return this.storage.location;
  }
  get released(): boolean {
    return this.storage.released;
  }
  /** The backend holding a device tensor (undefined for host tensors). */
  get backend(): Backend | undefined {
    return this.storage instanceof DeviceStorage ? this.storage.backend : undefined;
  }
  /** Device address of element 0 (device tensors only). */
  get addr(): number {
    this.assertLive('tensor');
    if (!(this.storage instanceof DeviceStorage)) throw new Error('tensor: is on the host; call .to(backend) first');
    return this.storage.addr + this.offset * dtypeSize(this.dtype);
  }
  /** Elements from element 0 to one past the last element of the last row. */
  extentElements(): number {
    if (this.numel === 0) return this.offset;
    return this.offset + (this.rows - 1) * this.rowStride + this.cols;
  }
  /** Bytes from element 0 to the end of the last row (what a kernel may touch). */
  get extentBytes(): number {
    return (this.extentElements() - this.offset) * dtypeSize(this.dtype);
  }

  /**
   * What an element index means for the op that wrote this tensor (e.g. conv out: sequence, token,
   * channel), or null when no op said. diff() uses it when no coordinates are given; host(), to(),
   * clone() and astype() keep it (same shape), views and reshapes do not.
   */
  get coordinates(): Coordinates | null {
    if (typeof this.coords === 'function') {
      try {
        this.coords = this.coords();
      } catch {
        this.coords = null;  // what it needed is gone (e.g. offsets released): plain indices then
      }
    }
    return this.coords;
  }

  /** Sets what this tensor's element indices mean (an op's result; a function is called when first needed). Returns this. */
  withCoordinates(coordinates: Coordinates | (() => Coordinates) | null): this {
    if (coordinates !== null && typeof coordinates !== 'function' && typeof (coordinates as Coordinates)?.at !== 'function') {
      throw new TypeError(`coordinates: expected a Coordinates mapper (convCoordinates, postconvCoordinates, …) or null, got ${describe(coordinates)}`);
    }
    this.coords = coordinates;
    return this;
  }

  /** A same-shape copy keeps its source's coordinates (unevaluated). */
  private sameLayout(t: Tensor): Tensor {
    t.coords = this.coords;
    return t;
  }

  assertLive(what: string): void {
    if (this.storage.released) throw new Error(`${what}: tensor [${this.shape.join(", ")}] ${this.dtype} was released`);
  }

  // ------------------------------------------------------------------ movement

  /** This tensor on `backend` (uploaded; the same tensor when it is already there). Layout is kept. */
  to(backend: Backend): Tensor {
    this.assertLive('tensor');
    if (this.storage instanceof DeviceStorage && this.storage.backend === backend) return this;
    const host = this.host();
    const bytes = Math.max(host.storage.bytes, 1);
    const addr = backend.alloc(bytes);
    const storage = new DeviceStorage(backend, addr, bytes);
    try {
      if (host.storage.bytes > 0) backend.upload(addr, (host.storage as HostStorage).data);
    } catch (e) {
      storage.release();
      throw e;
    }
    return this.sameLayout(new Tensor(this.shape, this.dtype, storage, { rowStride: host.rowStride, offset: host.offset }));
  }

  /** This tensor in host memory (downloaded; the same tensor when it is already there). Layout is kept. */
  host(): Tensor {
    this.assertLive('tensor');
    if (this.storage instanceof HostStorage) return this;
    const s = this.storage as DeviceStorage;
    const data = new Uint8Array(s.bytes);
    s.backend.download(data, s.addr);
    return this.sameLayout(new Tensor(this.shape, this.dtype, new HostStorage(data), { rowStride: this.rowStride, offset: this.offset }));
  }

  /** Frees device storage now (views of it become unusable). Safe to call twice. */
  release(): void {
    this.storage.release();
  }

  // ------------------------------------------------------------------ views

  /** A view of columns [start, start + count) of every row (shares storage). */
  sliceCols(start: number, count: number): Tensor {
    if (!Number.isInteger(start) || start < 0 || !Number.isInteger(count) || count < 0 || start + count > this.cols) {
      throw new RangeError(`sliceCols: columns [${start}, ${start + count}) are outside 0..${this.cols}`);
    }
    const shape = [...this.shape.slice(0, -1), count];
    return new Tensor(shape, this.dtype, this.storage, { rowStride: this.rowStride, offset: this.offset + start });
  }

  /** The same elements with another shape of equal size and the same row structure, or contiguous. */
  reshape(shape: readonly number[]): Tensor {
    const s = checkShape(shape, 'shape');
    if (numelOf(s) !== this.numel) throw new RangeError(`reshape: [${shape}] has ${numelOf(s)} elements, tensor has ${this.numel}`);
    if (!this.contiguous && s[s.length - 1] !== this.cols) throw new Error('reshape: a padded tensor can only be reshaped keeping its row length');
    return new Tensor(s, this.dtype, this.storage, { rowStride: this.contiguous ? s[s.length - 1] ?? 1 : this.rowStride, offset: this.offset });
  }

  // ------------------------------------------------------------------ reading

  /** Raw element bits in a contiguous typed array (rows packed; downloads device tensors). */
  bits(): Uint32Array | Uint16Array | Int32Array | Int8Array {
    const host = this.host();
    const src = typedView(this.dtype, (host.storage as HostStorage).data);
    const out = newTyped(this.dtype, this.numel);
    // Rows without padding between them are one run of elements: one copy instead of a view per row.
    if (this.rowStride === this.cols || this.rows === 1) {
      out.set(src.subarray(this.offset, this.offset + this.numel));
      return out;
    }
    for (let r = 0, i = 0; r < this.rows; r++) {
      const base = this.offset + r * this.rowStride;
      out.set(src.subarray(base, base + this.cols), i);
      i += this.cols;
    }
    return out;
  }

  /** Values as f32 (exact for every dtype here), contiguous. */
  toFloat32(): Float32Array {
    const bits = this.bits();
    switch (this.dtype) {
      case 'f32':
        return new Float32Array(bits.buffer, bits.byteOffset, bits.length);
      case 'bf16':
        return bf16ToFloat32(bits as Uint16Array);
      case 'f16':
        return f16ToFloat32(bits as Uint16Array);
      default:
        return Float32Array.from(bits as Int32Array | Int8Array);
    }
  }

  toFloat64(): Float64Array {
    return Float64Array.from(this.toFloat32());
  }

  /** Nested arrays of numbers (small tensors). */
  toArray(): unknown[] | number {
    const flat = Array.from(this.toFloat32());
    if (this.rank === 0) return flat[0];
    const build = (dim: number, at: number): unknown[] | number[] => {
      const n = this.shape[dim];
      if (dim === this.rank - 1) return flat.slice(at, at + n);
      const step = numelOf(this.shape.slice(dim + 1));
      return Array.from({ length: n }, (_, i) => build(dim + 1, at + i * step));
    };
    return build(0, 0);
  }

  /** One element as a number. */
  get(...index: number[]): number {
    if (index.length !== this.rank) throw new RangeError(`get: expected ${this.rank} indices, got ${index.length}`);
    let row = 0;
    for (let d = 0; d < this.rank - 1; d++) {
      if (!Number.isInteger(index[d]) || index[d] < 0 || index[d] >= this.shape[d]) throw new RangeError(`get: index ${d} = ${index[d]} outside 0..${this.shape[d] - 1}`);
      row = row * this.shape[d] + index[d];
    }
    const c = index[this.rank - 1] ?? 0;
    if (this.rank && (!Number.isInteger(c) || c < 0 || c >= this.cols)) throw new RangeError(`get: index ${this.rank - 1} = ${c} outside 0..${this.cols - 1}`);
    const host = this.host();
    const v = typedView(this.dtype, (host.storage as HostStorage).data)[this.offset + row * this.rowStride + c];
    return decode(this.dtype, v);
  }

  // ------------------------------------------------------------------ writing (host tensors)

  /** Writes value into the padding columns of every row (host tensors): a poison for padded inputs. */
  fillPadding(value: number): this {
    this.assertLive('tensor');
    if (!(this.storage instanceof HostStorage)) throw new Error('fillPadding: host tensors only');
    const view = typedView(this.dtype, this.storage.data, true);
    const enc = encode(this.dtype, value);
    for (let r = 0; r < this.rows; r++) {
      const base = this.offset + r * this.rowStride;
      view.fill(enc, base + this.cols, base + this.rowStride);
    }
    return this;
  }

  /** A contiguous copy on the host. */
  clone(): Tensor {
    const bits = this.bits();
    return this.sameLayout(new Tensor(this.shape, this.dtype, new HostStorage(new Uint8Array(bits.buffer, bits.byteOffset, bits.byteLength).slice())));
  }

  /** Values converted to another dtype (rounded to nearest even), contiguous, on the host. */
  astype(dtype: DType): Tensor {
    return this.sameLayout(Tensor.from(this.toFloat32(), this.shape, dtype));
  }

  toString(): string {
    const where = this.storage instanceof DeviceStorage ? `${this.storage.backend.kind}` : 'host';
    const pad = this.contiguous ? '' : `, rowStride ${this.rowStride}`;
    return `Tensor([${this.shape.join(', ')}], ${this.dtype}, ${where}${pad}${this.released ? ', released' : ''})`;
  }

  [Symbol.for('nodejs.util.inspect.custom')](): string {
    return this.toString();
  }
}

// -------------------------------------------------------------------- helpers

export function numelOf(shape: readonly number[]): number {
  let n = 1;
  for (const d of shape) n *= d;
  return n;
}

export function checkShape(shape: readonly number[], what: string): number[] {
  if (!Array.isArray(shape) || !shape.every((d) => Number.isInteger(d) && d >= 0)) {
    throw new TypeError(`${what}: expected an array of non-negative integers, got ${describe(shape)}`);
  }
  return [...shape];
}

function layoutBytes(shape: readonly number[], dtype: DType, opts: TensorOptions): number {
  const s = checkShape(shape, 'shape');
  const cols = s.length ? s[s.length - 1] : 1;
  const rows = s.length ? numelOf(s.slice(0, -1)) : 1;
  const stride = opts.rowStride ?? cols;
  const n = numelOf(s) === 0 ? 0 : (rows - 1) * stride + cols;
  return ((opts.offset ?? 0) + n) * dtypeSize(checkDType(dtype, 'dtype'));
}

type Typed = Float32Array | Uint16Array | Int32Array | Int8Array | Uint32Array;

/** A typed view of raw storage bytes (the f32 view holds bits as numbers via Uint32). */
/**
 * The elements of host bytes as their dtype's typed array. Bytes that start off the element size's alignment (a
 * view into a file's buffer, say) can only be read through a copy; `forWrite` refuses them instead, because a write
 * into that copy would be lost without a word.
 */
function typedView(dtype: DType, data: Uint8Array, forWrite = false): Typed {
  const n = Math.floor(data.byteLength / dtypeSize(dtype));
  const aligned = data.byteOffset % dtypeSize(dtype) === 0;
  if (!aligned && forWrite) {
    throw new RangeError(`tensor: its host bytes start at byte offset ${data.byteOffset}, not a multiple of ${dtype}'s ${dtypeSize(dtype)} bytes, so a write would go to a copy and be lost; write into tensor.clone() instead`);
  }
  const buf = aligned ? data : data.slice();
  switch (dtype) {
    case 'f32':
      return new Uint32Array(buf.buffer, buf.byteOffset, n);
    case 'bf16':
    case 'f16':
      return new Uint16Array(buf.buffer, buf.byteOffset, n);
    case 'i32':
      return new Int32Array(buf.buffer, buf.byteOffset, n);
    case 'i8':
      return new Int8Array(buf.buffer, buf.byteOffset, n);
  }
}

function newTyped(dtype: DType, n: number): Uint32Array | Uint16Array | Int32Array | Int8Array {
  switch (dtype) {
    case 'f32':
      return new Uint32Array(n);
    case 'bf16':
    case 'f16':
      return new Uint16Array(n);
    case 'i32':
      return new Int32Array(n);
    case 'i8':
      return new Int8Array(n);
  }
}

const encScratch = new Float32Array(1);
const encScratchU = new Uint32Array(encScratch.buffer);

function encode(dtype: DType, x: number): number {
  switch (dtype) {
    case 'f32':
      encScratch[0] = x;
      return encScratchU[0];
    case 'bf16':
      return f32ToBf16Bits(x);
    case 'f16':
      return f32ToF16Bits(x);
    case 'i32':
    case 'i8':
      if (!Number.isInteger(x)) throw new RangeError(`values: ${dtype} tensors take integers, got ${x}`);
      return x;
  }
}

function decode(dtype: DType, v: number): number {
  switch (dtype) {
    case 'f32':
      encScratchU[0] = v;
      return encScratch[0];
    case 'bf16':
      return bf16BitsToF32(v);
    case 'f16':
      return f16BitsToF32(v);
    default:
      return v;
  }
}
