// lib/native/struct-codec.ts on structs declared here (no libgdn), so that Stryker can mutate it: every
// field kind written at koffi's offsets (negative and top-bit values, 64-bit numbers and bigints, nested
// structs with and without their parent object, reserved arrays left zero), the scratch buffer reused and
// cleared, the decoder's signed and unsigned fields and views at an offset, and every refusal with its
// message (an unsupported type, a misaligned field, a size not a multiple of 8, a bad value of each kind,
// a decoder over nested or 64-bit fields).

import { strict as assert } from 'assert';
import koffi from 'koffi';
import { structDecoder, structEncoder } from '../../lib/native/struct-codec';

/** A struct name not used before in this process (mocha may load this file again, koffi keeps names). */
function fresh(base: string): string {
  const g = globalThis as unknown as { __codecEdgeN?: number };
  g.__codecEdgeN = (g.__codecEdgeN ?? 0) + 1;
  return `${base}_${g.__codecEdgeN}`;
}

const msg = (text: string, type: Function = TypeError) => (e: unknown) => e instanceof type && (e as Error).message === text;

describe('struct-codec at its edges', () => {
  function allKinds() {
    const name = fresh('edge_all');
    const inner = koffi.struct(fresh('edge_in'), { x: 'int32_t', y: 'float' });
    const type = koffi.struct(name, { a: 'int32_t', b: 'uint32_t', c: 'int64_t', d: 'uint64_t', e: 'float', inner, pad: koffi.array('uint32_t', 2) });
    return { name, type };
  }

  it('every field kind at its offset', () => {
    const { type } = allKinds();
    const enc = structEncoder<Record<string, unknown>>(type);
    assert.equal(enc.size, 48);
    const bytes = enc.encode({ a: -2, b: 0xfffffffe, c: -3, d: 2 ** 40 + 7, e: 1.5, inner: { x: -1, y: -0.25 }, pad: [9, 9] });
    assert.equal(bytes.length, 48);
    const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    assert.equal(dv.getInt32(koffi.offsetof(type, 'a'), true), -2);
    assert.equal(dv.getUint32(koffi.offsetof(type, 'b'), true), 0xfffffffe);
    assert.equal(dv.getBigInt64(koffi.offsetof(type, 'c'), true), -3n);
    assert.equal(dv.getBigUint64(koffi.offsetof(type, 'd'), true), 2n ** 40n + 7n);
    assert.equal(dv.getFloat32(koffi.offsetof(type, 'e'), true), 1.5);
    assert.equal(dv.getInt32(28, true), -1);
    assert.equal(dv.getFloat32(32, true), -0.25);
    assert.deepEqual(Array.from(bytes.subarray(36)), new Array(12).fill(0), 'the reserved array and the tail stay zero');
    // A negative u32 is written modulo 2^32; bigints for the 64-bit fields, negative ones as two's complement.
    const big = enc.encode({ a: 0, b: -1, c: -(2n ** 63n), d: 2n ** 64n - 1n, e: 0, inner: { x: 0, y: 0 } });
    const bv = new DataView(big.buffer);
    assert.equal(bv.getUint32(4, true), 0xffffffff);
    assert.equal(bv.getBigInt64(8, true), -(2n ** 63n));
    assert.equal(bv.getBigUint64(16, true), 2n ** 64n - 1n);
    // The largest and smallest safe integers through the number path.
    const edge = enc.encode({ a: 2147483647, b: 0, c: -(2 ** 53 - 1), d: 2 ** 53 - 1, e: 0, inner: { x: -2147483648, y: 0 } });
    const ev = new DataView(edge.buffer);
    assert.equal(ev.getInt32(0, true), 2147483647);
    assert.equal(ev.getBigInt64(8, true), -(2n ** 53n - 1n));
    assert.equal(ev.getBigUint64(16, true), 2n ** 53n - 1n);
    assert.equal(ev.getInt32(28, true), -2147483648);
  });

  it('a missing nested object leaves its fields zero; encode gives fresh buffers, encodeScratch one cleared buffer', () => {
    const { type } = allKinds();
    const enc = structEncoder<Record<string, unknown>>(type);
    const full = { a: 1, b: 2, c: 3, d: 4, e: 5, inner: { x: 6, y: 7 } };
    const noInner = { a: 1, b: 2, c: 3, d: 4, e: 5 };
    const b1 = enc.encode(noInner);
    assert.deepEqual(Array.from(b1.subarray(28, 36)), new Array(8).fill(0));
    assert.notEqual(enc.encode(full), enc.encode(full));
    const s1 = enc.encodeScratch(full);
    assert.equal(new DataView(s1.buffer, s1.byteOffset).getInt32(28, true), 6);
    const s2 = enc.encodeScratch(noInner);
    assert.equal(s2, s1, 'the same buffer');
    assert.deepEqual(Array.from(s2.subarray(28, 36)), new Array(8).fill(0), 'cleared before writing');
    assert.deepEqual(Array.from(s2), Array.from(enc.encode(noInner)));
  });

  it('three levels of nesting: each missing level leaves its fields zero; a packed field aligned in the outer struct is accepted', () => {
    const c = koffi.struct(fresh('edge_c'), { z: 'int32_t', w: 'int32_t' });
    const b = koffi.struct(fresh('edge_b'), { c });
    const type = koffi.struct(fresh('edge_a'), { t: 'int32_t', u: 'int32_t', b });
    const enc = structEncoder<Record<string, unknown>>(type);
    assert.equal(enc.size, 16);
    const words = (bytes: Uint8Array) => Array.from(new Int32Array(bytes.buffer, bytes.byteOffset, 4));
    assert.deepEqual(words(enc.encode({ t: 1, u: 2, b: { c: { z: 3, w: -4 } } })), [1, 2, 3, -4]);
    assert.deepEqual(words(enc.encode({ t: 1, u: 2, b: {} })), [1, 2, 0, 0]);
    assert.deepEqual(words(enc.encode({ t: 1, u: 2 })), [1, 2, 0, 0]);
    // Outer offset 1 plus inner offset 3: byte 4, aligned.
    const inner = koffi.pack(fresh('edge_pi'), { pad: koffi.array('uint8_t', 3), x: 'int32_t' });
    const outer = koffi.pack(fresh('edge_po'), { pad: koffi.array('uint8_t', 1), in: inner });
    const p = structEncoder<Record<string, unknown>>(outer);
    assert.equal(p.size, 8);
    assert.equal(new DataView(p.encode({ in: { x: -7 } }).buffer).getInt32(4, true), -7);
  });

  it('bad values are refused with the field named, for each kind', () => {
    const { name, type } = allKinds();
    const enc = structEncoder<Record<string, unknown>>(type);
    const ok = { a: 1, b: 2, c: 3, d: 4, e: 5, inner: { x: 6, y: 7 } };
    const bad = (patch: Record<string, unknown>, field: string, got: string) => {
      const text = `${name}.${field}: expected an integer (a number below 2^53 or a bigint), got ${got}`;
      assert.throws(() => enc.encode({ ...ok, ...patch }), msg(text));
      assert.throws(() => enc.encodeScratch({ ...ok, ...patch }), msg(text));
    };
    bad({ a: 1.5 }, 'a', '1.5');
    bad({ a: '1' }, 'a', 'string');
    bad({ a: undefined }, 'a', 'undefined');
    bad({ b: 2.5 }, 'b', '2.5');
    bad({ b: 1n }, 'b', 'bigint');
    bad({ c: 2 ** 53 }, 'c', '9007199254740992');
    bad({ c: 0.5 }, 'c', '0.5');
    bad({ d: '4' }, 'd', 'string');
    bad({ e: '5' }, 'e', 'string');
    bad({ inner: { x: 0.5, y: 0 } }, 'inner.x', '0.5');
    bad({ inner: { x: 0, y: null } }, 'inner.y', 'object');
    // A float field takes any number, NaN included.
    assert.ok(Number.isNaN(new DataView(enc.encode({ ...ok, e: NaN }).buffer).getFloat32(24, true)));
  });

  it('structs the codec cannot handle are refused when the codec is made', () => {
    const dbl = fresh('edge_dbl');
    assert.throws(() => structEncoder(koffi.struct(dbl, { a: 'int32_t', f: 'double' })), msg(`struct-codec: ${dbl}.f has type double (Float64), which the codec does not handle`, Error));
    const nested = fresh('edge_nest');
    const inner = koffi.struct(fresh('edge_nin'), { s: 'int16_t', t: 'int16_t' });
    assert.throws(() => structEncoder(koffi.struct(nested, { a: 'int32_t', in: inner })), msg(`struct-codec: ${nested}.in.s has type int16_t (Int16), which the codec does not handle`, Error));
    const packed = fresh('edge_pack');
    assert.throws(() => structEncoder(koffi.pack(packed, { pad: koffi.array('uint8_t', 1), a: 'int32_t' })), msg(`struct-codec: ${packed}.a is not 4-byte aligned`, Error));
    // A nested struct aligned within itself but placed at offset 1 of a packed struct: its fields are not.
    const outer = fresh('edge_pout');
    const pin = koffi.struct(fresh('edge_pin'), { x: 'int32_t', y: 'int32_t' });
    assert.throws(() => structEncoder(koffi.pack(outer, { pad: koffi.array('uint8_t', 1), in: pin, tail: koffi.array('uint8_t', 7) })), msg(`struct-codec: ${outer}.in.x is not 4-byte aligned`, Error));
    const odd = fresh('edge_odd');
    assert.throws(() => structEncoder(koffi.struct(odd, { a: 'int32_t' })), msg(`struct-codec: ${odd} has size 4, not a multiple of 8`, Error));
    const odd3 = fresh('edge_odd3');
    assert.throws(() => structEncoder(koffi.struct(odd3, { a: 'int32_t', b: 'int32_t', c: 'int32_t' })), msg(`struct-codec: ${odd3} has size 12, not a multiple of 8`, Error));
    assert.equal(structEncoder(koffi.struct(fresh('edge_two'), { a: 'int32_t', b: 'float' })).size, 8);
  });

  it('the decoder: signed and unsigned fields, a view at an offset, scratch and fresh buffers, its refusals', () => {
    const name = fresh('edge_res');
    const type = koffi.struct(name, { s: 'int32_t', u: 'uint32_t', t: 'int32_t', v: 'uint32_t' });
    const dec = structDecoder<Record<string, number>>(type);
    assert.equal(dec.size, 16);
    const buf = new Uint8Array(20);
    const dv = new DataView(buf.buffer);
    dv.setInt32(4, -5, true);
    dv.setUint32(8, 0xfffffffb, true);
    dv.setInt32(12, 7, true);
    dv.setUint32(16, 0x80000000, true);
    assert.deepEqual(dec.decode(buf.subarray(4)), { s: -5, u: 0xfffffffb, t: 7, v: 0x80000000 });
    const s = dec.scratch();
    assert.equal(s.length, 16);
    s.fill(1);
    const s2 = dec.scratch();
    assert.equal(s2, s);
    assert.deepEqual(Array.from(s2), new Array(16).fill(0));
    const f1 = dec.fresh();
    assert.equal(f1.length, 16);
    assert.notEqual(dec.fresh(), f1);
    assert.notEqual(f1, s);
    const nested = fresh('edge_dnest');
    const inner = koffi.struct(fresh('edge_din'), { x: 'int32_t', y: 'int32_t' });
    assert.throws(() => structDecoder(koffi.struct(nested, { a: 'int32_t', b: 'int32_t', in: inner })), msg(`struct-codec: decoder for ${nested} handles flat 32-bit fields only (in.x)`, Error));
    const wide = fresh('edge_dwide');
    assert.throws(() => structDecoder(koffi.struct(wide, { a: 'int64_t' })), msg(`struct-codec: decoder for ${wide} handles flat 32-bit fields only (a)`, Error));
    const flt = fresh('edge_dflt');
    assert.throws(() => structDecoder(koffi.struct(flt, { a: 'int32_t', f: 'float' })), msg(`struct-codec: decoder for ${flt} handles flat 32-bit fields only (f)`, Error));
    const u64 = fresh('edge_du64');
    assert.throws(() => structDecoder(koffi.struct(u64, { a: 'uint64_t' })), msg(`struct-codec: decoder for ${u64} handles flat 32-bit fields only (a)`, Error));
  });
});
