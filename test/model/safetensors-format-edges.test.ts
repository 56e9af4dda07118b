// Header validation at its edges, straight through parseHeader: the byte position named for invalid
// UTF-8 at every lead-byte and second-byte boundary of RFC 3629 (each valid sequence must be stepped
// over whole), the sort of entries by (begin, end) before tiling, zero-length tensors, the duplicate-name
// message for __metadata__ and for a tensor, and a dtype that is not a string.

import { strict as assert } from 'assert';
import { SafetensorsError, isSafetensorsDType, parseHeader } from '../../lib/model/safetensors-format';
import { concat } from './helpers';

const header = (...parts: (string | Uint8Array)[]) => concat(...parts);
const utf8At = (bytes: number[]) => {
  const h = header('{"', new Uint8Array(bytes), '":0}');
  try {
    parseHeader('f', h, 8 + h.byteLength);
  } catch (e) {
    assert.ok(e instanceof SafetensorsError);
    if (e.fault !== 'header-utf8') return `not a UTF-8 fault: ${e.fault}`;
    const m = /^f: header is not valid UTF-8 \(at (\d+) of (\d+) bytes\)$/.exec(e.message);
    assert.ok(m, e.message);
    assert.equal(Number(m[2]), h.byteLength);
    return Number(m[1]) - 2;
  }
  return 'accepted';
};

describe('safetensors header: edges', () => {
  it('invalid UTF-8: the first bad sequence is named, by the position of its lead byte', () => {
    const bad: [number[], number][] = [
      [[0x80], 0], [[0xbf], 0], [[0xc0, 0xaf], 0], [[0xc1, 0xbf], 0], [[0xf5, 0x80, 0x80, 0x80], 0], [[0xff], 0],
      [[0xc2, 0x7f], 0], [[0xc2, 0xc0], 0], [[0xdf, 0x7f], 0],
      [[0xe0, 0x9f, 0x80], 0], [[0xe0, 0xc0, 0x80], 0], [[0xe1, 0x7f, 0x80], 0], [[0xe1, 0x80, 0x7f], 0], [[0xe1, 0x80, 0xc0], 0],
      [[0xed, 0xa0, 0x80], 0], [[0xed, 0x7f, 0x80], 0], [[0xef, 0xc0, 0x80], 0], [[0xee, 0x80, 0xc0], 0],
      [[0xf0, 0x8f, 0x80, 0x80], 0], [[0xf0, 0xc0, 0x80, 0x80], 0], [[0xf4, 0x90, 0x80, 0x80], 0], [[0xf4, 0x7f, 0x80, 0x80], 0],
      [[0xf1, 0x80, 0x80, 0x7f], 0], [[0xf1, 0x80, 0x80, 0xc0], 0], [[0xf1, 0x80, 0x7f, 0x80], 0], [[0xf3, 0xc0, 0x80, 0x80], 0],
      [[0x41, 0x7f, 0x80], 2],
      // Bytes that lead nothing are not taken for 3- or 4-byte leads with continuation bytes after them.
      [[0x80, 0x80, 0x80], 0], [[0x80, 0x80, 0x80, 0x80], 0], [[0xc1, 0x80, 0x80], 0], [[0xc1, 0x80, 0x80, 0x80], 0], [[0xbf, 0xbf, 0xbf, 0xbf], 0],
    ];
    for (const [bytes, at] of bad) assert.equal(utf8At(bytes), at, bytes.map((b) => b.toString(16)).join(' '));
    // Each valid sequence is stepped over whole: the fault is the 0xFF after it.
    const good = [
      [0x7f], [0xc2, 0x80], [0xdf, 0xbf], [0xe0, 0xa0, 0x80], [0xe0, 0xbf, 0xbf], [0xe1, 0x80, 0x80], [0xec, 0xbf, 0xbf], [0xed, 0x80, 0x80], [0xed, 0x9f, 0xbf],
      [0xee, 0x80, 0x80], [0xef, 0xbf, 0xbf], [0xf0, 0x90, 0x80, 0x80], [0xf0, 0xbf, 0xbf, 0xbf], [0xf1, 0x80, 0x80, 0x80], [0xf3, 0xbf, 0xbf, 0xbf], [0xf4, 0x80, 0x80, 0x80], [0xf4, 0x8f, 0xbf, 0xbf],
    ];
    for (const g of good) {
      assert.equal(utf8At(g), 'not a UTF-8 fault: entry', `${g.map((b) => b.toString(16)).join(' ')} alone`);
      assert.equal(utf8At([...g, 0xff]), g.length, `${g.map((b) => b.toString(16)).join(' ')} then ff`);
      assert.equal(utf8At([...g, ...g, 0xc0]), 2 * g.length);
    }
    // A sequence cut by the end of the header is named at its lead byte.
    const cut = new Uint8Array([0x7b, 0x22, 0x41, 0xe1, 0x80]);
    assert.throws(() => parseHeader('f', cut, 8 + cut.byteLength), { message: 'f: header is not valid UTF-8 (at 3 of 5 bytes)' });
    const cut4 = new Uint8Array([0x7b, 0xf1, 0x80, 0x80]);
    assert.throws(() => parseHeader('f', cut4, 8 + cut4.byteLength), { message: 'f: header is not valid UTF-8 (at 1 of 4 bytes)' });
  });

  it('entries are sorted by begin, then end, before the tiling check; zero-length tensors share a begin', () => {
    const h = header('{"b":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"__metadata__":{"k":"v"},"a":{"dtype":"U8","shape":[0],"data_offsets":[0,0]},',
      '"d":{"dtype":"I8","shape":[2,0],"data_offsets":[6,6]},"c":{"dtype":"U16","shape":[1],"data_offsets":[4,6]},"e":{"dtype":"F4","shape":[2],"data_offsets":[6,7]}}  ');
    const p = parseHeader('f', h, 8 + h.byteLength + 7);
    assert.deepEqual(p.entries.map((e) => e.name), ['a', 'b', 'c', 'd', 'e']);
    assert.deepEqual(p.entries.map((e) => [e.dataOffsets[0], e.dataOffsets[1], e.byteLength, e.numel, e.fileOffset]), [
      [0, 0, 0, 0, 8 + h.byteLength],
      [0, 4, 4, 1, 8 + h.byteLength],
      [4, 6, 2, 1, 12 + h.byteLength],
      [6, 6, 0, 0, 14 + h.byteLength],
      [6, 7, 1, 2, 14 + h.byteLength],
    ]);
    assert.deepEqual([p.headerLength, p.dataStart, p.dataLength], [h.byteLength, 8 + h.byteLength, 7]);
    assert.deepEqual({ ...p.metadata }, { k: 'v' });
    assert.equal(Object.getPrototypeOf(p.metadata), null);
    assert.deepEqual(p.entries[1].shape, [1]);
    assert.equal(p.entries[3].dtype, 'I8');
  });

  it('a later tensor listed first still tiles; an end before its begin is refused, an end equal to it is not', () => {
    const h = header('{"z":{"dtype":"U8","shape":[3],"data_offsets":[5,8]},"y":{"dtype":"U8","shape":[5],"data_offsets":[0,5]}}');
    assert.deepEqual(parseHeader('f', h, 8 + h.byteLength + 8).entries.map((e) => e.name), ['y', 'z']);
    const rev = header('{"w":{"dtype":"U8","shape":[0],"data_offsets":[1,0]}}');
    assert.throws(() => parseHeader('f', rev, 8 + rev.byteLength + 1), { message: 'f: tensor "w": data_offsets [1, 0] end before they begin' });
  });

  it('names given twice: __metadata__ is named alone, a tensor as a tensor; a key repeated inside an entry', () => {
    const meta = header('{"__metadata__":{},"__metadata__":{}}');
    assert.throws(() => parseHeader('f', meta, 8 + meta.byteLength), { message: 'f: header names "__metadata__" twice (at character 19); a JSON reader would silently keep the last' });
    const t = header('{"w":{"dtype":"U8","shape":[0],"data_offsets":[0,0]},"w":{}}');
    assert.throws(() => parseHeader('f', t, 8 + t.byteLength), { message: 'f: header names tensor "w" twice (at character 53); a JSON reader would silently keep the last' });
    const inner = header('{"w":{"shape":[0],"shape":[0]}}');
    assert.throws(() => parseHeader('f', inner, 8 + inner.byteLength), { message: 'f: header repeats key "shape" inside an entry (at character 18)' });
  });

  it('a dtype must be a string naming a safetensors dtype (an array holding one is not)', () => {
    const h = header('{"w":{"dtype":["F32"],"shape":[1],"data_offsets":[0,4]}}');
    assert.throws(() => parseHeader('f', h, 8 + h.byteLength + 4), (e: unknown) => e instanceof SafetensorsError && e.fault === 'dtype' && /^f: tensor "w": unknown dtype array of 1 \(known: BOOL, F4, /.test(e.message));
    assert.equal(isSafetensorsDType(['F32']), false);
    assert.equal(isSafetensorsDType('F32'), true);
    assert.equal(isSafetensorsDType('toString'), false);
    assert.equal(isSafetensorsDType(32), false);
  });
});
