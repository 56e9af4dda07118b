// Fast encoding of the op argument structs of gdn.h into plain bytes, and decoding of result structs.
//
// Why: koffi marshals a JS object into a C struct field by field through its generic converter,
// which costs ~7 µs for gdn_conv_args on this machine — more than a small op's whole host kernel
// (docs/BENCHMARKS.md, "Per-op overhead"). The ops instead write the fields straight into a byte
// buffer, at the offsets koffi computed for the struct declared in lib/native/gdn.ts (so the layout
// is still declared once), and pass the bytes to a `void*` binding of the same function.
//
// Only the primitive members of gdn.h structs are handled: int32_t, uint32_t, int64_t, uint64_t,
// float, nested structs and fixed arrays (arrays are written as zeros: they are the reserved tails).
// A 64-bit field takes a JS number (an integer below 2^53, as addresses are here) or a bigint.

import koffi from 'koffi';

type Kind = 'i32' | 'u32' | 'i64' | 'u64' | 'f32';

interface Field {
  path: string[];
  offset: number;
  kind: Kind;
}

interface TypeInfo {
  name: string;
  primitive: string;
  size: number;
  members?: Record<string, { name: string; type: unknown; offset: number }>;
  ref?: unknown;
}

const PRIMITIVE_KINDS: Record<string, Kind | undefined> = {
  Int32: 'i32', UInt32: 'u32', Int64: 'i64', UInt64: 'u64', Float32: 'f32',
};

/** The primitive fields of `type`, nested structs flattened; `root` names the outermost struct in messages. */
function fieldsOf(type: unknown, base: number, prefix: string[], out: Field[], root?: string): void {
  const info = koffi.type(type as never) as unknown as TypeInfo;
  const name = root ?? info.name;
  for (const m of Object.values(info.members ?? {})) {
    const mt = koffi.type(m.type as never) as unknown as TypeInfo;
    const path = [...prefix, m.name];
    if (mt.primitive === 'Record') fieldsOf(m.type, base + m.offset, path, out, name);
    else if (mt.primitive === 'Array') continue; // reserved tails: left zero
    else {
      const kind = PRIMITIVE_KINDS[mt.primitive];
      if (!kind) throw new Error(`struct-codec: ${name}.${path.join('.')} has type ${mt.name} (${mt.primitive}), which the codec does not handle`);
      if ((base + m.offset) % 4 !== 0) throw new Error(`struct-codec: ${name}.${path.join('.')} is not 4-byte aligned`);
      out.push({ path, offset: base + m.offset, kind });
    }
  }
}

/** Writes a JS object of a gdn.h struct's shape into bytes laid out as koffi lays out that struct. */
export interface StructEncoder<T> {
  readonly size: number;
  /** A fresh zeroed buffer holding obj (for asynchronous calls, which read it later). */
  encode(obj: T): Uint8Array;
  /** Writes obj into a reused buffer and returns it (synchronous calls only). */
  encodeScratch(obj: T): Uint8Array;
}

/** Reads a result struct back from bytes (only the listed primitive fields). */
export interface StructDecoder<T> {
  readonly size: number;
  /** A zeroed scratch buffer to pass as the out-pointer of a synchronous call. */
  scratch(): Uint8Array;
  fresh(): Uint8Array;
  decode(bytes: Uint8Array): T;
}

function accessor(path: string[]): string {
  return 'o' + path.map((p) => `[${JSON.stringify(p)}]`).join('');
}

/**
 * An encoder for a koffi struct type. The per-field code is generated once per type (a flat list
 * of typed-array stores), which is what makes it cheap.
 */
export function structEncoder<T>(type: unknown): StructEncoder<T> {
  const info = koffi.type(type as never) as unknown as TypeInfo;
  const fields: Field[] = [];
  fieldsOf(type, 0, [], fields);
  const lines: string[] = [];
  for (const f of fields) {
    // Nested structs: a missing parent object leaves its fields zero.
    const get = f.path.length > 1
      ? `(${f.path.slice(0, -1).map((_, d) => accessor(f.path.slice(0, d + 1))).join(' && ')} ? ${accessor(f.path)} : 0)`
      : accessor(f.path);
    const name = JSON.stringify(`${info.name}.${f.path.join('.')}`);
    const w = f.offset / 4;
    lines.push(`v = ${get};`);
    switch (f.kind) {
      case 'i32':
      case 'u32':
        lines.push(`if (typeof v !== 'number' || !Number.isInteger(v)) v = bad(${name}, v);`);
        lines.push(f.kind === 'i32' ? `i32[${w}] = v;` : `u32[${w}] = v >>> 0;`);
        break;
      case 'f32':
        lines.push(`if (typeof v !== 'number') v = bad(${name}, v);`);
        lines.push(`f32[${w}] = v;`);
        break;
      default:
        lines.push(`if (typeof v === 'bigint') { u64[${w / 2}] = BigInt.asUintN(64, v); }`);
        lines.push(`else { if (typeof v !== 'number' || !Number.isSafeInteger(v)) v = bad(${name}, v); u32[${w}] = v >>> 0; u32[${w + 1}] = Math.floor(v / 4294967296) >>> 0; }`);
    }
  }
  if (info.size % 8 !== 0) throw new Error(`struct-codec: ${info.name} has size ${info.size}, not a multiple of 8`);
  const bad = (name: string, v: unknown): never => {
    throw new TypeError(`${name}: expected an integer (a number below 2^53 or a bigint), got ${typeof v === 'number' ? v : typeof v}`);
  };
  // eslint-disable-next-line no-new-func
  const write = new Function('o', 'i32', 'u32', 'u64', 'f32', 'bad', `let v;\n${lines.join('\n')}`) as (
    o: T, i32: Int32Array, u32: Uint32Array, u64: BigUint64Array, f32: Float32Array, bad: (n: string, v: unknown) => never,
  ) => void;
  const views = (bytes: Uint8Array) => ({
    i32: new Int32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 4),
    u32: new Uint32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 4),
    u64: new BigUint64Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 8),
    f32: new Float32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 4),
  });
  const scratch = new Uint8Array(info.size);
  const sv = views(scratch);
  return {
    size: info.size,
    encode(obj: T): Uint8Array {
      const bytes = new Uint8Array(info.size);
      const v = views(bytes);
      write(obj, v.i32, v.u32, v.u64, v.f32, bad);
      return bytes;
    },
    encodeScratch(obj: T): Uint8Array {
      scratch.fill(0);
      write(obj, sv.i32, sv.u32, sv.u64, sv.f32, bad);
      return scratch;
    },
  };
}

/** A decoder for a koffi struct type whose fields are 32-bit integers (the result structs of gdn.h). */
export function structDecoder<T>(type: unknown): StructDecoder<T> {
  const info = koffi.type(type as never) as unknown as TypeInfo;
  const fields: Field[] = [];
  fieldsOf(type, 0, [], fields);
  for (const f of fields) {
    if (f.path.length !== 1 || (f.kind !== 'i32' && f.kind !== 'u32')) {
      throw new Error(`struct-codec: decoder for ${info.name} handles flat 32-bit fields only (${f.path.join('.')})`);
    }
  }
  const scratch = new Uint8Array(info.size);
  return {
    size: info.size,
    scratch(): Uint8Array {
      scratch.fill(0);
      return scratch;
    },
    fresh(): Uint8Array {
      return new Uint8Array(info.size);
    },
    decode(bytes: Uint8Array): T {
      const i32 = new Int32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 4);
      const out: Record<string, number> = {};
      for (const f of fields) out[f.path[0]] = f.kind === 'u32' ? i32[f.offset / 4] >>> 0 : i32[f.offset / 4];
      return out as unknown as T;
    },
  };
}
