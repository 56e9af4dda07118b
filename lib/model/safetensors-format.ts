// The safetensors format: dtypes, header validation and the error type.
//
// A file is: an 8-byte little-endian unsigned header length N, N bytes of UTF-8 JSON (an object
// starting with `{`, possibly padded with trailing spaces), then the data section. Every header
// entry but `__metadata__` names a tensor: {"dtype", "shape", "data_offsets": [begin, end)} with
// offsets relative to the data section. The entries must tile the data section exactly.
//
// Everything here validates untrusted input: each check runs before anything is allocated from a
// length read out of the file, and each fault becomes a SafetensorsError naming the file.

import { DType } from '../dtype';
import { JsonDuplicateKeyError, JsonNumber, JsonObject, JsonSyntaxError, JsonValue, jsonTypeName, parseStrictJson } from './strict-json';

/** Every dtype the safetensors format defines (safetensors 0.8), with its size in bits. */
export const SAFETENSORS_DTYPE_BITS = {
  BOOL: 8,
  F4: 4,
  F6_E2M3: 6,
  F6_E3M2: 6,
  U8: 8,
  I8: 8,
  F8_E5M2: 8,
  F8_E4M3: 8,
  F8_E8M0: 8,
  F8_E4M3FNUZ: 8,
  F8_E5M2FNUZ: 8,
  I16: 16,
  U16: 16,
  F16: 16,
  BF16: 16,
  I32: 32,
  U32: 32,
  F32: 32,
  C64: 64,
  F64: 64,
  I64: 64,
  U64: 64,
} as const;

export type SafetensorsDType = keyof typeof SAFETENSORS_DTYPE_BITS;

export const SAFETENSORS_DTYPES = Object.keys(SAFETENSORS_DTYPE_BITS) as SafetensorsDType[];

/** The gdnlab tensor dtype a safetensors dtype loads into as-is (others stay raw bytes). */
export const TENSOR_DTYPE_OF: Partial<Record<SafetensorsDType, DType>> = {
  F32: 'f32',
  BF16: 'bf16',
  F16: 'f16',
  I32: 'i32',
  I8: 'i8',
};

/** The safetensors dtype a gdnlab tensor dtype is written as. */
export const SAFETENSORS_DTYPE_OF: Record<DType, SafetensorsDType> = {
  f32: 'F32',
  bf16: 'BF16',
  f16: 'F16',
  i32: 'I32',
  i8: 'I8',
};

export function isSafetensorsDType(value: unknown): value is SafetensorsDType {
  return typeof value === 'string' && Object.prototype.hasOwnProperty.call(SAFETENSORS_DTYPE_BITS, value);
}

/** The reference implementation's limit on the header length (100 MB). */
export const MAX_HEADER_BYTES = 100_000_000;

/** Deepest JSON nesting a header may use: the format needs 3 (object → entry → offsets). */
const MAX_HEADER_DEPTH = 8;

/** What went wrong, as a stable code tests and callers can match on. */
export type SafetensorsFault =
  | 'too-small'
  | 'header-too-large'
  | 'header-past-end'
  | 'header-utf8'
  | 'header-start'
  | 'header-json'
  | 'header-not-object'
  | 'duplicate-name'
  | 'metadata'
  | 'entry'
  | 'dtype'
  | 'shape'
  | 'offsets'
  | 'size-mismatch'
  | 'overlap'
  | 'hole'
  | 'truncated'
  | 'trailing-data'
  | 'io'
  | 'not-found'
  | 'not-convertible'
  | 'index'
  | 'write';

/** A fault in a safetensors file or checkpoint; the message names the file and the fault. */
export class SafetensorsError extends Error {
  constructor(readonly file: string, readonly fault: SafetensorsFault, detail: string) {
    super(`${file}: ${detail}`);
    this.name = 'SafetensorsError';
  }
}

/** One tensor's header entry, validated. Offsets are absolute within the file. */
export interface TensorEntry {
  readonly name: string;
  readonly dtype: SafetensorsDType;
  readonly shape: readonly number[];
  readonly numel: number;
  readonly byteLength: number;
  /** [begin, end) relative to the data section, as the header states them. */
  readonly dataOffsets: readonly [number, number];
  /** Absolute byte position of the tensor's first byte in the file. */
  readonly fileOffset: number;
}

/** A validated header: tensors in data order, metadata, and the data section's position. */
export interface SafetensorsHeader {
  readonly headerLength: number;
  readonly dataStart: number;
  readonly dataLength: number;
  readonly metadata: Readonly<Record<string, string>>;
  /** Entries sorted by their data offsets. */
  readonly entries: readonly TensorEntry[];
}

/**
 * Reads the 8-byte length prefix and checks it against the limit and the file size, before any
 * allocation; returns the header length N.
 */
export function checkHeaderLength(file: string, prefix: Uint8Array, fileSize: number): number {
  if (fileSize < 8) {
    throw new SafetensorsError(file, 'too-small', `file is ${fileSize} bytes, too small for the 8-byte header length`);
  }
  const n = new DataView(prefix.buffer, prefix.byteOffset, 8).getBigUint64(0, true);
  if (n > BigInt(MAX_HEADER_BYTES)) {
    throw new SafetensorsError(file, 'header-too-large', `header length ${n} exceeds the ${MAX_HEADER_BYTES}-byte limit`);
  }
  const len = Number(n);
  if (8 + len > fileSize) {
    throw new SafetensorsError(file, 'header-past-end', `header length ${len} runs past the end of the file (${fileSize} bytes, so at most ${fileSize - 8})`);
  }
  return len;
}

/** Validates the header bytes (length already checked) against a file of `fileSize` bytes. */
export function parseHeader(file: string, headerBytes: Uint8Array, fileSize: number): SafetensorsHeader {
  const headerLength = headerBytes.byteLength;
  const dataStart = 8 + headerLength;
  const dataLength = fileSize - dataStart;
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(headerBytes);
  } catch {
    throw new SafetensorsError(file, 'header-utf8', `header is not valid UTF-8 (at ${firstInvalidUtf8(headerBytes)} of ${headerLength} bytes)`);
  }
  if (text.charCodeAt(0) !== 0x7b) {
    const what = headerLength === 0 ? 'is empty' : `starts with ${JSON.stringify(text.slice(0, 1))}`;
    throw new SafetensorsError(file, 'header-start', `header ${what}; a safetensors header is a JSON object starting with '{'`);
  }
  let json: JsonValue;
  try {
    json = parseStrictJson(text, { maxDepth: MAX_HEADER_DEPTH });
  } catch (e) {
    if (e instanceof JsonDuplicateKeyError) {
      if (e.depth === 1) {
        const what = e.key === '__metadata__' ? '' : 'tensor ';
        throw new SafetensorsError(file, 'duplicate-name', `header names ${what}${JSON.stringify(e.key)} twice (at character ${e.position}); a JSON reader would silently keep the last`);
      }
      throw new SafetensorsError(file, 'header-json', `header repeats key ${JSON.stringify(e.key)} inside an entry (at character ${e.position})`);
    }
    if (e instanceof JsonSyntaxError) throw new SafetensorsError(file, 'header-json', `header is not valid JSON: ${e.message}`);
    throw e;
  }
  if (!(json instanceof JsonObject)) {
    throw new SafetensorsError(file, 'header-not-object', `header is a JSON ${jsonTypeName(json)}, expected an object`);
  }

  let metadata: Record<string, string> = {};
  const entries: TensorEntry[] = [];
  for (const [name, value] of json.members) {
    if (name === '__metadata__') {
      metadata = parseMetadata(file, value);
      continue;
    }
    entries.push(parseEntry(file, name, value, dataStart));
  }
  checkTiling(file, entries, dataLength);
  return { headerLength, dataStart, dataLength, metadata, entries };
}

function parseMetadata(file: string, value: JsonValue): Record<string, string> {
  if (!(value instanceof JsonObject)) {
    throw new SafetensorsError(file, 'metadata', `__metadata__ is a ${jsonTypeName(value)}, expected an object of strings`);
  }
  const out: Record<string, string> = Object.create(null);
  for (const [k, v] of value.members) {
    if (typeof v !== 'string') throw new SafetensorsError(file, 'metadata', `__metadata__[${JSON.stringify(k)}] is a ${jsonTypeName(v)}, expected a string`);
    out[k] = v;
  }
  return out;
}

function parseEntry(file: string, name: string, value: JsonValue, dataStart: number): TensorEntry {
  const where = `tensor ${JSON.stringify(name)}`;
  if (!(value instanceof JsonObject)) {
    throw new SafetensorsError(file, 'entry', `${where}: entry is a ${jsonTypeName(value)}, expected an object with dtype, shape, data_offsets`);
  }
  for (const key of value.keys()) {
    if (key !== 'dtype' && key !== 'shape' && key !== 'data_offsets') {
      throw new SafetensorsError(file, 'entry', `${where}: unexpected key ${JSON.stringify(key)} (an entry has dtype, shape, data_offsets)`);
    }
  }
  const dtype = value.get('dtype');
  if (dtype === undefined) throw new SafetensorsError(file, 'entry', `${where}: dtype is missing`);
  if (!isSafetensorsDType(dtype)) {
    throw new SafetensorsError(file, 'dtype', `${where}: unknown dtype ${jsonTypeName(dtype)} (known: ${SAFETENSORS_DTYPES.join(', ')})`);
  }
  const shapeValue = value.get('shape');
  if (!Array.isArray(shapeValue)) throw new SafetensorsError(file, 'shape', `${where}: shape is ${jsonTypeName(shapeValue)}, expected an array of non-negative integers`);
  const shape = shapeValue.map((d, i) => {
    const v = d instanceof JsonNumber ? d.safeInteger() : undefined;
    if (v === undefined || v < 0 || Object.is(v, -0)) {
      throw new SafetensorsError(file, 'shape', `${where}: shape[${i}] is ${jsonTypeName(d)}, expected a non-negative integer below 2^53`);
    }
    return v;
  });
  const offs = value.get('data_offsets');
  if (!Array.isArray(offs) || offs.length !== 2) {
    throw new SafetensorsError(file, 'offsets', `${where}: data_offsets is ${jsonTypeName(offs)}, expected [begin, end]`);
  }
  const [begin, end] = offs.map((o, i) => {
    const v = o instanceof JsonNumber ? o.safeInteger() : undefined;
    if (v === undefined || v < 0 || Object.is(v, -0)) {
      throw new SafetensorsError(file, 'offsets', `${where}: data_offsets[${i}] is ${jsonTypeName(o)}, expected a non-negative integer below 2^53`);
    }
    return v;
  });
  if (end < begin) throw new SafetensorsError(file, 'offsets', `${where}: data_offsets [${begin}, ${end}] end before they begin`);

  // Size: numel × bits must be whole bytes and equal the offsets' span. BigInt: no overflow.
  let numel = 1n;
  for (const d of shape) numel *= BigInt(d);
  const bits = numel * BigInt(SAFETENSORS_DTYPE_BITS[dtype]);
  const span = end - begin;
  if (bits % 8n !== 0n) {
    throw new SafetensorsError(file, 'size-mismatch', `${where}: ${numel} ${dtype} elements are ${bits} bits, not a whole number of bytes`);
  }
  if (bits / 8n !== BigInt(span)) {
    throw new SafetensorsError(file, 'size-mismatch', `${where}: shape [${shape}] ${dtype} needs ${bits / 8n} bytes but data_offsets [${begin}, ${end}] span ${span}`);
  }
  return { name, dtype, shape, numel: Number(numel), byteLength: span, dataOffsets: [begin, end], fileOffset: dataStart + begin };
}

/** Entries sorted by offsets must start where the previous ended, from 0 to the end of the file. */
function checkTiling(file: string, entries: TensorEntry[], dataLength: number): void {
  entries.sort((x, y) => x.dataOffsets[0] - y.dataOffsets[0] || x.dataOffsets[1] - y.dataOffsets[1]);
  let expected = 0;
  let previous: TensorEntry | undefined;
  for (const e of entries) {
    const [begin, end] = e.dataOffsets;
    if (begin < expected) {
      throw new SafetensorsError(file, 'overlap', `tensor ${JSON.stringify(e.name)} [${begin}, ${end}) overlaps tensor ${JSON.stringify(previous!.name)} [${previous!.dataOffsets[0]}, ${previous!.dataOffsets[1]})`);
    }
    if (begin > expected) {
      throw new SafetensorsError(file, 'hole', `data bytes [${expected}, ${begin}) belong to no tensor (hole before tensor ${JSON.stringify(e.name)})`);
    }
    if (end > dataLength) {
      throw new SafetensorsError(file, 'truncated', `tensor ${JSON.stringify(e.name)} ends at data byte ${end} but the data section has ${dataLength} bytes (file truncated?)`);
    }
    expected = end;
    previous = e;
  }
  if (expected < dataLength) {
    throw new SafetensorsError(file, 'trailing-data', `data bytes [${expected}, ${dataLength}) after the last tensor belong to no tensor (trailing garbage)`);
  }
}

/** Byte index of the first byte that does not start a valid UTF-8 sequence (RFC 3629), for messages. */
function firstInvalidUtf8(bytes: Uint8Array): number {
  const n = bytes.byteLength;
  let i = 0;
  while (i < n) {
    const b = bytes[i];
    if (b < 0x80) {
      i++;
      continue;
    }
    // Second-byte range and sequence length by lead byte; continuation bytes are 0x80..0xBF.
    let len = 0;
    let lo = 0x80;
    let hi = 0xbf;
    if (b >= 0xc2 && b <= 0xdf) len = 2;
    else if (b >= 0xe0 && b <= 0xef) {
      len = 3;
      if (b === 0xe0) lo = 0xa0;
      if (b === 0xed) hi = 0x9f;
    } else if (b >= 0xf0 && b <= 0xf4) {
      len = 4;
      if (b === 0xf0) lo = 0x90;
      if (b === 0xf4) hi = 0x8f;
    } else return i;
    if (i + len > n) return i;
    if (bytes[i + 1] < lo || bytes[i + 1] > hi) return i;
    for (let k = 2; k < len; k++) if (bytes[i + k] < 0x80 || bytes[i + k] > 0xbf) return i;
    i += len;
  }
  return n;
}
