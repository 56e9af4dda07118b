// Writing safetensors at its edges: the exact bytes of small files (length prefix, header text, its
// padding to 8 bytes counted in UTF-8 bytes, tensors by element size then name or as given), every
// input form (entry arrays, Maps, generators, plain objects, gdnlab tensors, raw and lazy tensors),
// every refusal with its message, the write loop under short writes (fs.writeSync replaced for a test)
// and the file closed when a tensor fails, and how writeShardedSafetensors groups tensors into shards.

import { strict as assert } from 'assert';
import * as fs from 'fs';
import * as path from 'path';
import { LazyTensor, SafetensorsError, SafetensorsFile, encodeSafetensors, writeSafetensors, writeShardedSafetensors } from '../../lib/model/safetensors';
import { Tensor } from '../../lib/tensor';
import { concat, tempDir, u64le } from './helpers';

/** The fs module itself (not the import's read-only view of it), so that a test can replace a function. */
const realFs = require('fs') as { writeSync: typeof fs.writeSync; closeSync: typeof fs.closeSync };

const raw = (dtype: string, shape: number[], bytes: number[] | Uint8Array) => ({ dtype, shape, bytes: bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes) }) as never;
const lazy = (dtype: string, shape: number[], bytes: number[]): LazyTensor => ({ dtype: dtype as 'F32', shape, produce: () => new Uint8Array(bytes) });
const text = (b: Uint8Array) => new TextDecoder().decode(b);
const entry = (name: string, dtype: string, shape: number[], begin: number, end: number) => `"${name}":{"dtype":"${dtype}","shape":[${shape}],"data_offsets":[${begin},${end}]}`;
/** A file as the writer must lay it out: prefix, header (already padded), data. */
const file = (header: string, ...data: number[][]) => concat(u64le(new TextEncoder().encode(header).byteLength), header, new Uint8Array(data.flat()));
const refused = (fn: () => unknown, message: string) =>
  assert.throws(fn, (e: unknown) => e instanceof SafetensorsError && e.fault === 'write' && e.message === message);

const A = [1, 2, 3, 4];
const C = [5, 6, 7, 8];
const B = [9, 10, 11];

describe('safetensors writer: edges', () => {
  let tmp: ReturnType<typeof tempDir>;
  before(() => (tmp = tempDir('st-writer-edges')));
  after(() => tmp.cleanup());

  it('encode: the length prefix, the header with metadata first, tensors by element size then name, padded with spaces', () => {
    const out = encodeSafetensors([['b', raw('U8', [3], B)], ['c', raw('BF16', [2], C)], ['a', raw('F32', [1], A)]], { k: 'v' });
    // 186 bytes of JSON, padded by 6 spaces to 192.
    const header = `{"__metadata__":{"k":"v"},${entry('a', 'F32', [1], 0, 4)},${entry('c', 'BF16', [2], 4, 8)},${entry('b', 'U8', [3], 8, 11)}}      `;
    assert.equal(header.length, 192);
    assert.deepEqual(out, file(header, A, C, B));
    const f = SafetensorsFile.fromBytes(out);
    assert.deepEqual({ ...f.metadata }, { k: 'v' });
    assert.deepEqual([...f.readBytes('b')], B);
  });

  it('encode: order "given" keeps the order; padHeader false leaves the header as is; no metadata key for {} or none', () => {
    const tensors = [['b', raw('U8', [3], B)], ['a', raw('F32', [1], A)]] as const;
    const json = `{${entry('b', 'U8', [3], 0, 3)},${entry('a', 'F32', [1], 3, 7)}}`;
    assert.equal(json.length, 106);
    assert.deepEqual(encodeSafetensors(tensors, {}, { order: 'given', padHeader: false }), file(json, B, A));
    assert.deepEqual(encodeSafetensors(tensors, undefined, { order: 'given' }), file(json + ' '.repeat(6), B, A));
    assert.deepEqual(encodeSafetensors(tensors, {}, { order: 'alignment', padHeader: true }), file(`{${entry('a', 'F32', [1], 0, 4)},${entry('b', 'U8', [3], 4, 7)}}` + ' '.repeat(6), A, B));
  });

  it('equal element sizes go by name (code units), whatever the given order', () => {
    const out = encodeSafetensors([['y', raw('I32', [1], A)], ['x', raw('F32', [1], C)], ['Z', raw('U32', [1], B.concat(0))], ['x0', raw('F32', [1], A)]], undefined, { padHeader: false });
    const names = SafetensorsFile.fromBytes(out).header.entries.map((e) => e.name);
    assert.deepEqual(names, ['Z', 'x', 'x0', 'y']);
  });

  it('padding counts UTF-8 bytes, and a header already a multiple of 8 gets none', () => {
    // {"é":…} is 54 characters, 55 bytes: one space makes 56.
    const e = `{${entry('é', 'F32', [1], 0, 4)}}`;
    assert.deepEqual(encodeSafetensors({ é: raw('F32', [1], A) }), file(e + ' ', A));
    const exact = `{${entry('abc', 'F32', [1], 0, 4)}}`;
    assert.equal(exact.length, 56);
    assert.deepEqual(encodeSafetensors({ abc: raw('F32', [1], A) }), file(exact, A));
  });

  it('inputs: a Map and a generator keep their order, a plain object gives its entries; gdnlab tensors by dtype', () => {
    const given = { order: 'given' as const, padHeader: false };
    const viaMap = encodeSafetensors(new Map([['q', raw('U8', [1], [7])], ['p', raw('U8', [1], [8])]]), undefined, given);
    assert.deepEqual(SafetensorsFile.fromBytes(viaMap).names(), ['q', 'p']);
    function* gen(): Generator<readonly [string, LazyTensor]> {
      yield ['n', lazy('U8', [2], [1, 2])];
      yield ['m', lazy('U8', [1], [3])];
    }
    const viaGen = encodeSafetensors(gen(), undefined, given);
    assert.deepEqual(viaGen, file(`{${entry('n', 'U8', [2], 0, 2)},${entry('m', 'U8', [1], 2, 3)}}`, [1, 2, 3]));
    const viaObject = encodeSafetensors({ s: raw('U8', [1], [4]), r: raw('U8', [1], [5]) }, undefined, given);
    assert.deepEqual(SafetensorsFile.fromBytes(viaObject).names(), ['s', 'r']);

    const t32 = Tensor.from([1.5, -2], [2], 'f32');
    const t16 = Tensor.from([1, 2, 3, 4, 5, 6], [2, 3], 'bf16').sliceCols(1, 2);
    const t8 = Tensor.from([-1, 2, 3], [3], 'i8');
    const out = encodeSafetensors({ h: t16, w: t32, i: t8 }, undefined, { padHeader: false });
    const json = `{${entry('w', 'F32', [2], 0, 8)},${entry('h', 'BF16', [2, 2], 8, 16)},${entry('i', 'I8', [3], 16, 19)}}`;
    const f32 = new Uint8Array(new Float32Array([1.5, -2]).buffer);
    const bf = new Uint8Array(new Uint16Array([0x4000, 0x4040, 0x40a0, 0x40c0]).buffer);
    assert.deepEqual(out, file(json, [...f32], [...bf], [0xff, 2, 3]));
  });

  it('zero-size tensors, scalars and sub-byte dtypes with a whole number of bytes', () => {
    const out = encodeSafetensors([['z', raw('F32', [0, 3], [])], ['s', raw('F64', [], [0, 0, 0, 0, 0, 0, 0xf0, 0x3f])], ['q', raw('F4', [2, 3], [1, 2, 3])]], undefined, { padHeader: false });
    assert.deepEqual(out, file(`{${entry('s', 'F64', [], 0, 8)},${entry('z', 'F32', [0, 3], 8, 8)},${entry('q', 'F4', [2, 3], 8, 11)}}`, [0, 0, 0, 0, 0, 0, 0xf0, 0x3f], [1, 2, 3]));
  });

  it('refuses names that are empty, not strings, reserved or repeated', () => {
    refused(() => encodeSafetensors([['', raw('U8', [1], [1])]]), "<memory>: tensor names must be non-empty strings, got ''");
    refused(() => encodeSafetensors([[5 as never, raw('U8', [1], [1])]]), '<memory>: tensor names must be non-empty strings, got 5');
    refused(() => encodeSafetensors({ __metadata__: raw('U8', [1], [1]) }), "<memory>: '__metadata__' is reserved and cannot name a tensor");
    refused(() => encodeSafetensors([['a', raw('U8', [1], [1])], ['a', raw('U8', [1], [1])]]), '<memory>: tensor "a" is given twice');
  });

  it('refuses a dtype, a shape or a byte count that does not fit', () => {
    refused(() => encodeSafetensors({ a: raw('F33', [1], [1]) }), "<memory>: tensor \"a\": dtype 'F33' is not a safetensors dtype");
    refused(() => encodeSafetensors({ a: null as never }), '<memory>: tensor "a": dtype undefined is not a safetensors dtype');
    refused(() => encodeSafetensors({ a: { dtype: 'U8', bytes: new Uint8Array(0) } as never }), '<memory>: tensor "a": shape undefined is not an array of non-negative integers');
    for (const [shape, said] of [[[-1], '[-1]'], [[1.5], '[1.5]'], [[NaN], '[NaN]'], [[2 ** 53], '[9007199254740992]'], [['1'], "['1']"]] as const) {
      refused(() => encodeSafetensors({ a: raw('U8', shape as never, []) }), `<memory>: tensor "a": shape ${said} is not an array of non-negative integers`);
    }
    // An iterable of good sizes that is not an array is refused too.
    refused(() => encodeSafetensors({ a: raw('U8', new Int32Array([1]) as never, [1]) }), '<memory>: tensor "a": shape Int32Array is not an array of non-negative integers');
    refused(() => encodeSafetensors({ a: raw('F4', [3], [1, 2]) }), '<memory>: tensor "a": 3 F4 elements are not a whole number of bytes');
    refused(() => encodeSafetensors({ a: raw('F6_E2M3', [3, 1], [1, 2, 3]) }), '<memory>: tensor "a": 3×1 F6_E2M3 elements are not a whole number of bytes');
    refused(() => encodeSafetensors({ a: raw('F32', [1], [1, 2, 3]) }), '<memory>: tensor "a": expected 4 bytes for [1] F32, got 3');
    refused(() => encodeSafetensors({ a: raw('F32', [2, 1], [1, 2, 3, 4, 5]) }), '<memory>: tensor "a": expected 8 bytes for [2,1] F32, got 5');
    refused(() => encodeSafetensors({ a: { dtype: 'F32', shape: [1], bytes: [1, 2, 3, 4] } as never }), '<memory>: tensor "a": expected 4 bytes for [1] F32, got undefined');
    refused(() => encodeSafetensors({ a: { dtype: 'F32', shape: [1], bytes: null } as never }), '<memory>: tensor "a": expected 4 bytes for [1] F32, got undefined');
    // Four bytes, but not a Uint8Array.
    refused(() => encodeSafetensors({ a: { dtype: 'F32', shape: [1], bytes: new Uint16Array(2) } as never }), '<memory>: tensor "a": expected 4 bytes for [1] F32, got 4');
  });

  it('a lazy tensor is checked when produced: its length and its type', () => {
    const make = (b: unknown) => ({ a: { dtype: 'F32', shape: [1], produce: () => b } as never });
    refused(() => encodeSafetensors(make(new Uint8Array(3))), '<memory>: tensor "a": produce() gave 3 bytes, expected 4');
    refused(() => encodeSafetensors(make(null)), '<memory>: tensor "a": produce() gave undefined bytes, expected 4');
    refused(() => encodeSafetensors(make(new Uint16Array(2))), '<memory>: tensor "a": produce() gave 4 bytes, expected 4');
    assert.deepEqual(encodeSafetensors(make(new Uint8Array(A)), undefined, { padHeader: false }), file(`{${entry('a', 'F32', [1], 0, 4)}}`, A));
  });

  it('refuses metadata values that are not strings, naming the key', () => {
    refused(() => encodeSafetensors({ a: raw('U8', [1], [1]) }, { ok: 'x', n: 2 as never }), '<memory>: metadata["n"] must be a string, got 2');
  });

  it('writeSafetensors: the same bytes as encode, its facts, and whole writes under short fs.writeSync', () => {
    const tensors = [['b', raw('U8', [3], B)], ['c', raw('BF16', [2], C)], ['a', raw('F32', [1], A)]] as const;
    const want = encodeSafetensors(tensors, { k: 'v' });
    const target = path.join(tmp.dir, 'short.safetensors');
    const realWrite = fs.writeSync;
    const chunks: number[] = [];
    realFs.writeSync = ((fd: number, b: Uint8Array, offset: number, length: number) => {
      const n = Math.min(length, 5);
      chunks.push(n);
      return realWrite(fd, b, offset, n);
    }) as typeof fs.writeSync;
    let written;
    try {
      written = writeSafetensors(target, tensors, { k: 'v' });
    } finally {
      realFs.writeSync = realWrite;
    }
    assert.deepEqual(fs.readFileSync(target), Buffer.from(want));
    assert.deepEqual(written, { path: target, headerLength: 192, fileSize: want.byteLength, names: ['a', 'c', 'b'] });
    assert.equal(chunks.reduce((s, n) => s + n, 0), want.byteLength);
    assert.ok(chunks.length > 40, `${chunks.length} writes`);
    const plain = writeSafetensors(path.join(tmp.dir, 'plain.safetensors'), tensors, undefined, { order: 'given', padHeader: false });
    assert.deepEqual(plain.names, ['b', 'c', 'a']);
    assert.equal(plain.headerLength, `{${entry('b', 'U8', [3], 0, 3)},${entry('c', 'BF16', [2], 3, 7)},${entry('a', 'F32', [1], 7, 11)}}`.length);
    assert.deepEqual(fs.readFileSync(plain.path), Buffer.from(encodeSafetensors(tensors, undefined, { order: 'given', padHeader: false })));
  });

  it('writeSafetensors closes the file when a tensor fails while writing', () => {
    const realClose = fs.closeSync;
    const closed: number[] = [];
    realFs.closeSync = ((fd: number) => {
      closed.push(fd);
      realClose(fd);
    }) as typeof fs.closeSync;
    try {
      refused(
        () => writeSafetensors(path.join(tmp.dir, 'fails.safetensors'), { a: { dtype: 'U8', shape: [2], produce: () => new Uint8Array(1) } }),
        `${path.join(tmp.dir, 'fails.safetensors')}: tensor "a": produce() gave 1 bytes, expected 2`,
      );
    } finally {
      realFs.closeSync = realClose;
    }
    assert.equal(closed.length, 1);
  });

  describe('writeShardedSafetensors', () => {
    const u8 = (n: number) => lazy('U8', [n], new Array<number>(n).fill(n));
    /** Shard sizes (tensor counts) for tensors of these byte sizes. */
    const groups = (sizes: number[], shards: number | undefined, tag: string) => {
      const dir = path.join(tmp.dir, tag);
      const r = writeShardedSafetensors(dir, sizes.map((n, i) => [`t${i}`, u8(n)] as const), { shards });
      return r.files.map((f) => SafetensorsFile.open(path.join(dir, f)).names().length);
    };

    it('files, index and weight map: names padded to 5 digits, total_size, metadata in each shard', () => {
      const dir = path.join(tmp.dir, 'sharded');
      const r = writeShardedSafetensors(dir, [['b', u8(5)], ['a', raw('F32', [1], A)], ['c', u8(1)]], { shards: 2, metadata: { m: 'x' } });
      assert.deepEqual(r, {
        files: ['model-00001-of-00002.safetensors', 'model-00002-of-00002.safetensors'],
        weightMap: { b: 'model-00001-of-00002.safetensors', a: 'model-00002-of-00002.safetensors', c: 'model-00002-of-00002.safetensors' },
        totalSize: 10,
      });
      assert.equal(fs.readFileSync(path.join(dir, 'model.safetensors.index.json'), 'utf8'), JSON.stringify({ metadata: { total_size: 10 }, weight_map: r.weightMap }, null, 2) + '\n');
      const second = fs.readFileSync(path.join(dir, r.files[1]));
      // Within a shard, alignment order (a before c) and padding, metadata included.
      assert.deepEqual(new Uint8Array(second), file(`{"__metadata__":{"m":"x"},${entry('a', 'F32', [1], 0, 4)},${entry('c', 'U8', [1], 4, 5)}}` + ' '.repeat(5), A, [1]));
      assert.deepEqual({ ...SafetensorsFile.open(path.join(dir, r.files[0])).metadata }, { m: 'x' });
    });

    it('order and padHeader reach every shard', () => {
      const dir = path.join(tmp.dir, 'given');
      const r = writeShardedSafetensors(dir, [['c', u8(1)], ['a', raw('F32', [1], A)]], { order: 'given', padHeader: false });
      assert.deepEqual(r.files, ['model-00001-of-00001.safetensors']);
      assert.deepEqual(new Uint8Array(fs.readFileSync(path.join(dir, r.files[0]))), file(`{${entry('c', 'U8', [1], 0, 1)},${entry('a', 'F32', [1], 1, 5)}}`, [1], A));
    });

    it('groups consecutive tensors by their share of the bytes, and keeps a tensor for every later shard', () => {
      assert.deepEqual(groups([4, 4, 4, 4], 2, 'g1'), [2, 2]);
      assert.deepEqual(groups([12, 4, 4, 4], 2, 'g2'), [1, 3]);
      assert.deepEqual(groups([4, 4, 4, 12], 2, 'g3'), [3, 1]);
      assert.deepEqual(groups([1, 1, 100], 2, 'g4'), [2, 1]);
      assert.deepEqual(groups([100, 1, 1], 3, 'g5'), [1, 1, 1]);
      assert.deepEqual(groups([3, 3, 3, 3, 3, 3], 3, 'g6'), [2, 2, 2]);
      assert.deepEqual(groups([5, 1, 1, 1, 1, 1], 2, 'g7'), [1, 5]);
      assert.deepEqual(groups([1, 1, 1, 1, 1, 5], 2, 'g8'), [5, 1]);
      // Zero-size tensors: a shard is never left empty, and the last shard takes what remains.
      assert.deepEqual(groups([0, 0, 0], 2, 'g9'), [1, 2]);
      assert.deepEqual(groups([4, 0], undefined, 'g10'), [2]);
      assert.deepEqual(groups([4, 0, 0], 2, 'g11'), [1, 2]);
    });

    it('refuses a shard count outside 1..tensors, naming it; no tensors make one empty shard', () => {
      const dir = path.join(tmp.dir, 'bad');
      const two = [['a', u8(1)], ['b', u8(1)]] as const;
      for (const [shards, said] of [[0, '0'], [3, '3'], [1.5, '1.5'], [NaN, 'NaN'], ['2', "'2'"]] as const) {
        refused(() => writeShardedSafetensors(dir, two, { shards: shards as number }), `${dir}: shards: expected an integer in 1..2 (one tensor at least per shard), got ${said}`);
      }
      assert.equal(fs.existsSync(dir), false, 'nothing written before the check');
      refused(() => writeShardedSafetensors(dir, [], { shards: 2 }), `${dir}: shards: expected an integer in 1..1 (one tensor at least per shard), got 2`);
      const empty = writeShardedSafetensors(path.join(tmp.dir, 'empty'), []);
      assert.deepEqual(empty, { files: ['model-00001-of-00001.safetensors'], weightMap: {}, totalSize: 0 });
      assert.deepEqual(SafetensorsFile.open(path.join(tmp.dir, 'empty', empty.files[0])).names(), []);
      assert.deepEqual(groups([1, 1], 2, 'two'), [1, 1]);
    });
  });
});
