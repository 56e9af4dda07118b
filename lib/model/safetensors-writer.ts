// Writing safetensors files (tests, synthetic checkpoints): single files and sharded checkpoints.
//
// Layout follows the reference writer: tensors ordered by descending element size then name (so
// every tensor's offset is aligned for its element type), the header padded with spaces to a
// multiple of 8 bytes. Options allow other orders and no padding, to make unaligned test files.
// Tensor bytes are produced and written one tensor at a time, so a file larger than memory can be
// written from lazy tensors.

import * as fs from 'fs';
import * as path from 'path';
import { describe } from '../dtype';
import { Tensor } from '../tensor';
import { SAFETENSORS_DTYPE_BITS, SAFETENSORS_DTYPE_OF, SafetensorsDType, SafetensorsError, isSafetensorsDType } from './safetensors-format';
import { RawTensor } from './safetensors-file';

/** A tensor whose bytes are made only when it is written. */
export interface LazyTensor {
  readonly dtype: SafetensorsDType;
  readonly shape: readonly number[];
  produce(): Uint8Array;
}

export type WritableTensor = Tensor | RawTensor | LazyTensor;
export type TensorMap = readonly (readonly [string, WritableTensor])[] | Iterable<readonly [string, WritableTensor]> | Record<string, WritableTensor>;

export interface WriteOptions {
  /** 'alignment' (default): descending element size, then name. 'given': the order supplied. */
  order?: 'alignment' | 'given';
  /** Pad the header with spaces to a multiple of 8 bytes (default true). */
  padHeader?: boolean;
}

interface Planned {
  name: string;
  dtype: SafetensorsDType;
  shape: number[];
  byteLength: number;
  bytes: () => Uint8Array;
}

function plan(target: string, tensors: TensorMap, opts: WriteOptions): Planned[] {
  // Iterables (arrays of entries, Maps) keep their order; a plain object gives its own entries.
  const list: (readonly [string, WritableTensor])[] = Symbol.iterator in Object(tensors)
    ? [...(tensors as Iterable<readonly [string, WritableTensor]>)]
    : Object.entries(tensors as Record<string, WritableTensor>);
  const seen = new Set<string>();
  const out: Planned[] = list.map(([name, t]) => {
    if (typeof name !== 'string' || name.length === 0) throw new SafetensorsError(target, 'write', `tensor names must be non-empty strings, got ${describe(name)}`);
    if (name === '__metadata__') throw new SafetensorsError(target, 'write', `'__metadata__' is reserved and cannot name a tensor`);
    if (seen.has(name)) throw new SafetensorsError(target, 'write', `tensor ${JSON.stringify(name)} is given twice`);
    seen.add(name);
    return planOne(target, name, t);
  });
  if ((opts.order ?? 'alignment') === 'alignment') {
    out.sort((a, b) => SAFETENSORS_DTYPE_BITS[b.dtype] - SAFETENSORS_DTYPE_BITS[a.dtype] || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }
  return out;
}

function planOne(target: string, name: string, t: WritableTensor): Planned {
  const where = `tensor ${JSON.stringify(name)}`;
  if (t instanceof Tensor) {
    const shape = [...t.shape];
    return {
      name,
      dtype: SAFETENSORS_DTYPE_OF[t.dtype],
      shape,
      byteLength: t.numel * (SAFETENSORS_DTYPE_BITS[SAFETENSORS_DTYPE_OF[t.dtype]] / 8),
      bytes: () => {
        const b = t.bits();
        return new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
      },
    };
  }
  if (!t || !isSafetensorsDType((t as RawTensor).dtype)) throw new SafetensorsError(target, 'write', `${where}: dtype ${describe((t as RawTensor)?.dtype)} is not a safetensors dtype`);
  if (!Array.isArray(t.shape) || !t.shape.every((d) => Number.isSafeInteger(d) && d >= 0)) {
    throw new SafetensorsError(target, 'write', `${where}: shape ${describe(t.shape)} is not an array of non-negative integers`);
  }
  const shape = [...t.shape];
  let bits = BigInt(SAFETENSORS_DTYPE_BITS[t.dtype]);
  for (const d of shape) bits *= BigInt(d);
  if (bits % 8n !== 0n) throw new SafetensorsError(target, 'write', `${where}: ${shape.join('×')} ${t.dtype} elements are not a whole number of bytes`);
  const byteLength = Number(bits / 8n);
  if ('bytes' in t) {
    if (!(t.bytes instanceof Uint8Array) || t.bytes.byteLength !== byteLength) {
      throw new SafetensorsError(target, 'write', `${where}: expected ${byteLength} bytes for [${shape}] ${t.dtype}, got ${t.bytes?.byteLength}`);
    }
    return { name, dtype: t.dtype, shape, byteLength, bytes: () => t.bytes };
  }
  return {
    name,
    dtype: t.dtype,
    shape,
    byteLength,
    bytes: () => {
      const b = t.produce();
      if (!(b instanceof Uint8Array) || b.byteLength !== byteLength) throw new SafetensorsError(target, 'write', `${where}: produce() gave ${b?.byteLength} bytes, expected ${byteLength}`);
      return b;
    },
  };
}

function headerBytes(target: string, planned: Planned[], metadata: Record<string, string> | undefined, pad: boolean): Uint8Array {
  const parts: string[] = [];
  if (metadata && Object.keys(metadata).length) {
    const kv = Object.entries(metadata).map(([k, v]) => {
      if (typeof v !== 'string') throw new SafetensorsError(target, 'write', `metadata[${JSON.stringify(k)}] must be a string, got ${describe(v)}`);
      return `${JSON.stringify(k)}:${JSON.stringify(v)}`;
    });
    parts.push(`"__metadata__":{${kv.join(',')}}`);
  }
  let offset = 0;
  for (const p of planned) {
    parts.push(`${JSON.stringify(p.name)}:{"dtype":"${p.dtype}","shape":[${p.shape.join(',')}],"data_offsets":[${offset},${offset + p.byteLength}]}`);
    offset += p.byteLength;
  }
  let text = `{${parts.join(',')}}`;
  let bytes = new TextEncoder().encode(text);
  if (pad && bytes.byteLength % 8 !== 0) {
    text += ' '.repeat(8 - (bytes.byteLength % 8));
    bytes = new TextEncoder().encode(text);
  }
  return bytes;
}

function prefix(n: number): Uint8Array {
  const b = new Uint8Array(8);
  new DataView(b.buffer).setBigUint64(0, BigInt(n), true);
  return b;
}

/** The bytes of a safetensors file holding `tensors` (small files, tests). */
export function encodeSafetensors(tensors: TensorMap, metadata?: Record<string, string>, opts: WriteOptions = {}): Uint8Array {
  const planned = plan('<memory>', tensors, opts);
  const header = headerBytes('<memory>', planned, metadata, opts.padHeader ?? true);
  const total = 8 + header.byteLength + planned.reduce((s, p) => s + p.byteLength, 0);
  const out = new Uint8Array(total);
  out.set(prefix(header.byteLength), 0);
  out.set(header, 8);
  let at = 8 + header.byteLength;
  for (const p of planned) {
    out.set(p.bytes(), at);
    at += p.byteLength;
  }
  return out;
}

export interface WrittenFile {
  path: string;
  headerLength: number;
  fileSize: number;
  names: string[];
}

/** Writes a safetensors file, one tensor at a time. */
export function writeSafetensors(file: string, tensors: TensorMap, metadata?: Record<string, string>, opts: WriteOptions = {}): WrittenFile {
  const planned = plan(file, tensors, opts);
  const header = headerBytes(file, planned, metadata, opts.padHeader ?? true);
  const fd = fs.openSync(file, 'w');
  let size = 0;
  try {
    const put = (b: Uint8Array) => {
      let done = 0;
      while (done < b.byteLength) done += fs.writeSync(fd, b, done, b.byteLength - done);
      size += b.byteLength;
    };
    put(prefix(header.byteLength));
    put(header);
    for (const p of planned) put(p.bytes());
  } finally {
    fs.closeSync(fd);
  }
  return { path: file, headerLength: header.byteLength, fileSize: size, names: planned.map((p) => p.name) };
}

export interface ShardOptions extends WriteOptions {
  /** Number of shards (default 1: still written with an index). */
  shards?: number;
  /** Metadata written into every shard (the index gets total_size). */
  metadata?: Record<string, string>;
}

/**
 * Writes a sharded checkpoint into `dir`: model-0000K-of-0000N.safetensors files holding
 * consecutive tensors of about equal bytes (in the order given), and model.safetensors.index.json.
 */
export function writeShardedSafetensors(dir: string, tensors: TensorMap, opts: ShardOptions = {}): { files: string[]; weightMap: Record<string, string>; totalSize: number } {
  const planned = plan(dir, tensors, { order: 'given' });
  const shards = opts.shards ?? 1;
  if (!Number.isInteger(shards) || shards < 1 || shards > Math.max(1, planned.length)) {
    throw new SafetensorsError(dir, 'write', `shards: expected an integer in 1..${Math.max(1, planned.length)} (one tensor at least per shard), got ${describe(opts.shards)}`);
  }
  const totalSize = planned.reduce((s, p) => s + p.byteLength, 0);
  // Consecutive groups: move to the next shard once this one holds its share of the bytes, or
  // when the tensors left are only just enough to give every later shard one.
  const groups: Planned[][] = Array.from({ length: shards }, () => []);
  let k = 0;
  let acc = 0;
  planned.forEach((p, i) => {
    const mustMove = planned.length - i <= shards - 1 - k;
    if (groups[k].length > 0 && k < shards - 1 && (mustMove || acc >= ((k + 1) * totalSize) / shards)) k++;
    groups[k].push(p);
    acc += p.byteLength;
  });
  fs.mkdirSync(dir, { recursive: true });
  const pad = (n: number) => String(n).padStart(5, '0');
  const weightMap: Record<string, string> = {};
  const files: string[] = [];
  groups.forEach((g, i) => {
    const name = `model-${pad(i + 1)}-of-${pad(shards)}.safetensors`;
    const entries = g.map((p) => [p.name, { dtype: p.dtype, shape: p.shape, produce: p.bytes }] as const);
    writeSafetensors(path.join(dir, name), entries, opts.metadata, { order: opts.order ?? 'alignment', padHeader: opts.padHeader });
    for (const p of g) weightMap[p.name] = name;
    files.push(name);
  });
  const index = { metadata: { total_size: totalSize }, weight_map: weightMap };
  fs.writeFileSync(path.join(dir, 'model.safetensors.index.json'), JSON.stringify(index, null, 2) + '\n');
  return { files, weightMap, totalSize };
}
