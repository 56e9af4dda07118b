// Reading one safetensors file: validate the header, then read only the byte ranges asked for.
//
// A file is opened for each operation (header, tensor, rows) and closed before it returns, so
// nothing leaks if a notebook drops the object. Each data read checks the file still has the size
// its header was validated against. Reads go through an IoCounter when one is given, so a test can
// prove which bytes were touched.

import * as fs from 'fs';
import * as os from 'os';
import { DType } from '../dtype';
import { HostStorage, Tensor } from '../tensor';
import {
  SAFETENSORS_DTYPE_BITS,
  SafetensorsDType,
  SafetensorsError,
  SafetensorsHeader,
  TENSOR_DTYPE_OF,
  TensorEntry,
  checkHeaderLength,
  parseHeader,
} from './safetensors-format';

/** A tensor kept as raw little-endian bytes with its safetensors dtype (F8, U16, I64, …). */
export interface RawTensor {
  readonly dtype: SafetensorsDType;
  readonly shape: readonly number[];
  readonly bytes: Uint8Array;
}

export interface ReadOptions {
  /** F64 tensors are converted to f32 (rounded to nearest) only when this is 'f32'. */
  f64?: 'f32';
}

/** Bytes read per file, split into header and tensor data: the I/O accounting hook. */
export class IoCounter {
  readonly files = new Map<string, { headerBytes: number; dataBytes: number; reads: number }>();

  record(file: string, kind: 'header' | 'data', bytes: number): void {
    let f = this.files.get(file);
    if (!f) this.files.set(file, (f = { headerBytes: 0, dataBytes: 0, reads: 0 }));
    if (kind === 'header') f.headerBytes += bytes;
    else f.dataBytes += bytes;
    f.reads++;
  }
  /** Total bytes read, of one kind or both. */
  total(kind?: 'header' | 'data'): number {
    let n = 0;
    for (const f of this.files.values()) n += kind === 'header' ? f.headerBytes : kind === 'data' ? f.dataBytes : f.headerBytes + f.dataBytes;
    return n;
  }
  reset(): void {
    this.files.clear();
  }
}

/** Where a file's bytes come from: the file system (positioned reads) or a buffer in memory. */
interface ByteSource {
  readonly label: string;
  size(): number;
  /** `length` bytes at `position`; the result starts at an offset aligned to `align` bytes. */
  read(position: number, length: number, kind: 'header' | 'data', align: number): Uint8Array;
}

class FileSource implements ByteSource {
  constructor(readonly label: string, readonly io?: IoCounter) {}

  private withFd<T>(fn: (fd: number) => T): T {
    let fd: number;
    try {
      // Refuse FIFOs, devices and directories before opening: opening a FIFO blocks until a writer comes.
      if (!fs.statSync(this.label).isFile()) throw new SafetensorsError(this.label, 'io', 'is not a regular file');
      fd = fs.openSync(this.label, 'r');
    } catch (e) {
      if (e instanceof SafetensorsError) throw e;
      throw new SafetensorsError(this.label, 'io', `cannot open: ${(e as Error).message}`);
    }
    try {
      return fn(fd);
    } finally {
      fs.closeSync(fd);
    }
  }

  size(): number {
    return this.withFd((fd) => {
      const st = fs.fstatSync(fd);
      if (!st.isFile()) throw new SafetensorsError(this.label, 'io', 'is not a regular file');
      return st.size;
    });
  }

  read(position: number, length: number, kind: 'header' | 'data', _align: number, expectSize?: number): Uint8Array {
    const out = new Uint8Array(length);
    this.readInto([[position, length, out, 0]], kind, expectSize);
    return out;
  }

  /** Reads each (position, length) range into dst at dstOffset, through one open file. */
  readInto(ranges: readonly (readonly [number, number, Uint8Array, number])[], kind: 'header' | 'data', expectSize?: number): void {
    this.withFd((fd) => {
      if (expectSize !== undefined) {
        const now = fs.fstatSync(fd).size;
        if (now !== expectSize) throw new SafetensorsError(this.label, 'io', `file size changed from ${expectSize} to ${now} bytes since its header was read`);
      }
      // Fresh buffers start at offset 0 of their own ArrayBuffer: aligned for every typed array.
      for (const [position, length, dst, at] of ranges) {
        let done = 0;
        while (done < length) {
          let n: number;
          try {
            n = fs.readSync(fd, dst, at + done, length - done, position + done);
          } catch (e) {
            throw new SafetensorsError(this.label, 'io', `read of ${length} bytes at ${position} failed: ${(e as Error).message}`);
          }
          if (n === 0) throw new SafetensorsError(this.label, 'truncated', `unexpected end of file reading ${length} bytes at ${position}`);
          this.io?.record(this.label, kind, n);
          done += n;
        }
      }
    });
  }
}

class MemorySource implements ByteSource {
  constructor(readonly label: string, readonly bytes: Uint8Array) {}
  size(): number {
    return this.bytes.byteLength;
  }
  read(position: number, length: number, _kind: 'header' | 'data', align: number): Uint8Array {
    const view = this.bytes.subarray(position, position + length);
    // Zero-copy when the view is aligned for the element type; a copy (aligned at 0) otherwise.
    return view.byteOffset % align === 0 ? view : view.slice();
  }
}

function elementAlign(dtype: SafetensorsDType): number {
  return Math.max(1, SAFETENSORS_DTYPE_BITS[dtype] / 8);
}

/** One validated safetensors file. */
export class SafetensorsFile {
  readonly header: SafetensorsHeader;
  private readonly byName: Map<string, TensorEntry>;
  private readonly fileSize: number;

  private constructor(private readonly source: ByteSource) {
    if (os.endianness() !== 'LE') throw new SafetensorsError(source.label, 'io', 'safetensors data is little-endian; this host is big-endian');
    const size = source.size();
    const prefix = size >= 8 ? source.read(0, 8, 'header', 1) : new Uint8Array(8);
    const n = checkHeaderLength(source.label, prefix, size);
    this.header = parseHeader(source.label, source.read(8, n, 'header', 1), size);
    this.fileSize = size;
    this.byName = new Map(this.header.entries.map((e) => [e.name, e]));
  }

  /** Opens and validates a file (reads only its header). */
  static open(path: string, opts: { io?: IoCounter } = {}): SafetensorsFile {
    return new SafetensorsFile(new FileSource(path, opts.io));
  }

  /** Validates a whole file held in memory; `label` names it in errors. */
  static fromBytes(bytes: Uint8Array, label = '<memory>'): SafetensorsFile {
    return new SafetensorsFile(new MemorySource(label, bytes));
  }

  get path(): string {
    return this.source.label;
  }
  get metadata(): Readonly<Record<string, string>> {
    return this.header.metadata;
  }
  /** Tensor names in data order. */
  names(): string[] {
    return this.header.entries.map((e) => e.name);
  }
  has(name: string): boolean {
    return this.byName.has(name);
  }
  entry(name: string): TensorEntry {
    const e = this.byName.get(name);
    if (!e) throw new SafetensorsError(this.path, 'not-found', `no tensor named ${JSON.stringify(name)} (${this.byName.size} tensors in the file)`);
    return e;
  }

  /** The tensor's raw bytes (only its byte range is read), aligned for its element type. */
  readBytes(name: string): Uint8Array {
    const e = this.entry(name);
    return this.readRange(e.fileOffset, e.byteLength, elementAlign(e.dtype));
  }

  readRaw(name: string): RawTensor {
    const e = this.entry(name);
    return { dtype: e.dtype, shape: e.shape, bytes: this.readBytes(name) };
  }

  /** The tensor as a gdnlab Tensor (F32, BF16, F16, I32, I8; F64 only with { f64: 'f32' }). */
  read(name: string, opts: ReadOptions = {}): Tensor {
    const e = this.entry(name);
    const dtype = this.tensorDTypeFor(e, opts);
    return toTensor(e.dtype, dtype, e.shape, this.readBytes(name));
  }

  /**
   * Rows of a tensor (indices into its first dimension), reading only those rows' bytes:
   * an embedding lookup reads T rows, not the whole table.
   */
  readRows(name: string, rows: ArrayLike<number>, opts: ReadOptions = {}): Tensor {
    const e = this.entry(name);
    const dtype = this.tensorDTypeFor(e, opts);
    if (e.shape.length < 1) throw new SafetensorsError(this.path, 'not-convertible', `tensor ${JSON.stringify(name)} is a scalar; it has no rows`);
    const count = e.shape[0];
    const rowBytes = count === 0 ? 0 : e.byteLength / count;
    const out = new Uint8Array(rows.length * rowBytes);
    const ranges: [number, number, Uint8Array, number][] = [];
    for (let i = 0; i < rows.length; i++) {
      const r = rows[i];
      if (!Number.isInteger(r) || r < 0 || r >= count) throw new RangeError(`rows[${i}]: expected an integer in 0..${count - 1} for tensor ${JSON.stringify(name)}, got ${r}`);
      ranges.push([e.fileOffset + r * rowBytes, rowBytes, out, i * rowBytes]);
    }
    if (this.source instanceof FileSource) this.source.readInto(ranges, 'data', this.fileSize);
    else for (const [pos, len, dst, at] of ranges) dst.set(this.source.read(pos, len, 'data', 1), at);
    return toTensor(e.dtype, dtype, [rows.length, ...e.shape.slice(1)], out);
  }

  private tensorDTypeFor(e: TensorEntry, opts: ReadOptions): DType {
    const direct = TENSOR_DTYPE_OF[e.dtype];
    if (direct) return direct;
    if (e.dtype === 'F64' && opts.f64 === 'f32') return 'f32';
    const hint = e.dtype === 'F64' ? "; F64 is converted to f32 only when asked: read(name, { f64: 'f32' })" : '; use readRaw() for its bytes';
    throw new SafetensorsError(this.path, 'not-convertible', `tensor ${JSON.stringify(e.name)} has dtype ${e.dtype}, which is not a gdnlab tensor dtype (f32, bf16, f16, i32, i8)${hint}`);
  }

  private readRange(position: number, length: number, align: number): Uint8Array {
    if (this.source instanceof FileSource) return this.source.read(position, length, 'data', align, this.fileSize);
    return this.source.read(position, length, 'data', align);
  }
}

/** Wraps bytes of safetensors dtype `from` as a Tensor of dtype `to` (F64 → f32 rounds). */
function toTensor(from: SafetensorsDType, to: DType, shape: readonly number[], bytes: Uint8Array): Tensor {
  if (from === 'F64') {
    const n = bytes.byteLength / 8;
    const src = bytes.byteOffset % 8 === 0 ? bytes : bytes.slice();
    const f64 = new Float64Array(src.buffer, src.byteOffset, n);
    const f32 = Float32Array.from(f64);
    return new Tensor(shape, 'f32', new HostStorage(new Uint8Array(f32.buffer)));
  }
  return new Tensor(shape, to, new HostStorage(bytes));
}
