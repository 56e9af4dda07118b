// Reading one safetensors file at its edges: the I/O counter's arithmetic, zero-copy views from
// memory only where the element type's alignment holds (and copies, aligned, where it does not),
// every dtype path of read/readRaw/readRows, a tensor name that is not there, file descriptors all
// closed, and the positioned-read loop under short reads, end of file and a failing read (fs.readSync
// replaced for the test).

import { strict as assert } from 'assert';
import * as fs from 'fs';
import * as path from 'path';
import { IoCounter, SafetensorsError, SafetensorsFile } from '../../lib/model/safetensors';
import { concat, tempDir, u64le } from './helpers';

/** A file whose header JSON is padded with spaces to exactly `headerLength` bytes. */
function build(json: string, headerLength: number, data: Uint8Array): Uint8Array {
  assert.ok(json.length <= headerLength, `${json.length} > ${headerLength}`);
  return concat(u64le(headerLength), json.padEnd(headerLength, ' '), data);
}
const entry = (name: string, dtype: string, shape: number[], begin: number, end: number) => `"${name}":{"dtype":"${dtype}","shape":[${shape}],"data_offsets":[${begin},${end}]}`;

const f64 = new Float64Array([1.5, 0.1]);
const f32 = new Float32Array([1, 2, 3, 4, 5, 6]);
// b: F64 [2] at 0..16, a: F32 [3,2] at 16..40, c: U8 [1], d: F4 [2], i: I8 [4], s: F32 scalar, u: U16 [1], z: F32 [0,2]
const JSON_ALL = `{${[
  entry('b', 'F64', [2], 0, 16), entry('a', 'F32', [3, 2], 16, 40), entry('c', 'U8', [1], 40, 41), entry('d', 'F4', [2], 41, 42),
  entry('i', 'I8', [4], 42, 46), entry('u', 'U16', [1], 46, 48), entry('s', 'F32', [], 48, 52), entry('z', 'F32', [0, 2], 52, 52),
].join(',')}}`;
const DATA = concat(new Uint8Array(f64.buffer), new Uint8Array(f32.buffer), new Uint8Array([0x7f, 0x21, 1, 0xfe, 3, 4, 0x34, 0x12]), new Uint8Array(new Float32Array([9]).buffer));

describe('safetensors file: edges', () => {
  let tmp: ReturnType<typeof tempDir>;
  before(() => (tmp = tempDir('st-file-edges')));
  after(() => tmp.cleanup());

  it('IoCounter: bytes per file and kind, reads counted, totals, reset', () => {
    const io = new IoCounter();
    io.record('a', 'header', 10);
    io.record('a', 'data', 5);
    io.record('b', 'data', 7);
    io.record('a', 'header', 1);
    assert.deepEqual([...io.files], [['a', { headerBytes: 11, dataBytes: 5, reads: 3 }], ['b', { headerBytes: 0, dataBytes: 7, reads: 1 }]]);
    assert.deepEqual([io.total(), io.total('header'), io.total('data')], [23, 11, 12]);
    io.reset();
    assert.equal(io.files.size, 0);
    assert.equal(io.total(), 0);
  });

  it('a file on disk: the header and then only the tensor\'s bytes are read, each counted', () => {
    const file = path.join(tmp.dir, 'all.safetensors');
    fs.writeFileSync(file, build(JSON_ALL, 600, DATA));
    const io = new IoCounter();
    const f = SafetensorsFile.open(file, { io });
    assert.deepEqual(io.files.get(file), { headerBytes: 608, dataBytes: 0, reads: 2 });
    assert.deepEqual(f.read('a').toArray(), [[1, 2], [3, 4], [5, 6]]);
    assert.deepEqual(io.files.get(file), { headerBytes: 608, dataBytes: 24, reads: 3 });
    assert.deepEqual(f.readRows('a', [2, 0]).toArray(), [[5, 6], [1, 2]]);
    assert.deepEqual(io.files.get(file), { headerBytes: 608, dataBytes: 40, reads: 5 });
    assert.equal(f.path, file);
  });

  it('from memory: views where aligned for the element type, aligned copies where not', () => {
    for (const headerLength of [600, 602, 604]) {
      const bytes = build(JSON_ALL, headerLength, DATA);
      const f = SafetensorsFile.fromBytes(bytes);
      const start = 8 + headerLength;
      const view = (name: string, at: number) => {
        const b = f.readBytes(name);
        return b.buffer === bytes.buffer && b.byteOffset === start + at;
      };
      const copy = (name: string) => {
        const b = f.readBytes(name);
        return b.buffer !== bytes.buffer && b.byteOffset === 0;
      };
      // F64 at start: aligned only when start % 8 === 0; F32 at start + 16 when start % 4 === 0.
      assert.equal(view('b', 0), start % 8 === 0, `F64, data at ${start}`);
      assert.equal(copy('b'), start % 8 !== 0, `F64 copy, data at ${start}`);
      assert.equal(view('a', 16), start % 4 === 0, `F32, data at ${start}`);
      assert.equal(copy('a'), start % 4 !== 0, `F32 copy, data at ${start}`);
      // U8 and F4 need no alignment.
      assert.ok(view('c', 40) && view('d', 41), `U8/F4, data at ${start}`);
      assert.deepEqual([...f.readBytes('a')], [...new Uint8Array(f32.buffer)]);
      assert.deepEqual([...f.readBytes('b')], [...new Uint8Array(f64.buffer)]);
    }
  });

  it('read: F64 only when asked (rounded to f32), other non-tensor dtypes refused pointing at readRaw', () => {
    const f = SafetensorsFile.fromBytes(build(JSON_ALL, 602, DATA), 'mem');
    assert.deepEqual(f.read('b', { f64: 'f32' }).toArray(), [1.5, Math.fround(0.1)]);
    assert.equal(f.read('b', { f64: 'f32' }).dtype, 'f32');
    assert.deepEqual(f.readRows('b', [1], { f64: 'f32' }).toArray(), [Math.fround(0.1)]);
    assert.throws(() => f.read('b'), { name: 'SafetensorsError', message: `mem: tensor "b" has dtype F64, which is not a gdnlab tensor dtype (f32, bf16, f16, i32, i8); F64 is converted to f32 only when asked: read(name, { f64: 'f32' })` });
    assert.throws(() => f.read('u', { f64: 'f32' }), { name: 'SafetensorsError', message: 'mem: tensor "u" has dtype U16, which is not a gdnlab tensor dtype (f32, bf16, f16, i32, i8); use readRaw() for its bytes' });
    assert.throws(() => f.read('c'), (e: unknown) => e instanceof SafetensorsError && e.fault === 'not-convertible');
    const raw = f.readRaw('u');
    assert.deepEqual([raw.dtype, raw.shape, [...raw.bytes]], ['U16', [1], [0x34, 0x12]]);
    assert.deepEqual(f.read('i').toArray(), [1, -2, 3, 4]);
    assert.equal(f.read('i').dtype, 'i8');
    assert.equal(f.read('s').toArray(), 9);
  });

  it('readRows: rows of a 1-D tensor, no rows of an empty one, a scalar refused, a row out of range named', () => {
    const f = SafetensorsFile.fromBytes(build(JSON_ALL, 600, DATA), 'mem');
    assert.deepEqual(f.readRows('i', [3, 0, 3]).toArray(), [4, 1, 4]);
    const none = f.readRows('z', []);
    assert.deepEqual([none.shape, none.numel], [[0, 2], 0]);
    assert.throws(() => f.readRows('s', [0]), { name: 'SafetensorsError', message: 'mem: tensor "s" is a scalar; it has no rows' });
    assert.throws(() => f.readRows('a', [0, 3]), { name: 'RangeError', message: 'rows[1]: expected an integer in 0..2 for tensor "a", got 3' });
    assert.throws(() => f.readRows('z', [0]), { name: 'RangeError', message: 'rows[0]: expected an integer in 0..-1 for tensor "z", got 0' });
  });

  it('a name that is not there: not-found, with the file\'s tensor count; the default label of bytes', () => {
    const f = SafetensorsFile.fromBytes(build(JSON_ALL, 600, DATA));
    assert.equal(f.has('a'), true);
    assert.equal(f.has('nope'), false);
    assert.deepEqual(f.names(), ['b', 'a', 'c', 'd', 'i', 'u', 's', 'z']);
    assert.deepEqual({ ...f.metadata }, {});
    const withMeta = SafetensorsFile.fromBytes(build('{"__metadata__":{"format":"pt","note":"x"}}', 48, new Uint8Array(0)));
    assert.deepEqual({ ...withMeta.metadata }, { format: 'pt', note: 'x' });
    assert.equal(withMeta.metadata, withMeta.header.metadata);
    for (const read of [() => f.entry('nope'), () => f.read('nope'), () => f.readRaw('nope'), () => f.readRows('nope', [])]) {
      assert.throws(read, (e: unknown) => e instanceof SafetensorsError && e.fault === 'not-found' && e.message === '<memory>: no tensor named "nope" (8 tensors in the file)');
    }
  });

  it('an 8-byte file is read for its length prefix', () => {
    assert.throws(() => SafetensorsFile.fromBytes(u64le(5), 'm'), (e: unknown) => e instanceof SafetensorsError && e.fault === 'header-past-end' && /^m: header length 5 runs past the end of the file \(8 bytes, so at most 0\)$/.test(e.message));
  });

  it('readRows on a file that changed size since its header was read is refused', () => {
    const file = path.join(tmp.dir, 'shrinks.safetensors');
    fs.writeFileSync(file, build(JSON_ALL, 600, DATA));
    const f = SafetensorsFile.open(file);
    fs.truncateSync(file, fs.statSync(file).size - 1);
    assert.throws(() => f.readRows('a', [0]), (e: unknown) => e instanceof SafetensorsError && e.fault === 'io' && e.message === `${file}: file size changed from ${8 + 600 + DATA.byteLength} to ${8 + 600 + DATA.byteLength - 1} bytes since its header was read`);
  });

  it('every file descriptor is closed, after reads and after faults', function () {
    if (!fs.existsSync('/proc/self/fd')) this.skip();
    const file = path.join(tmp.dir, 'fds.safetensors');
    fs.writeFileSync(file, build(JSON_ALL, 600, DATA));
    const open = () => fs.readdirSync('/proc/self/fd').length;
    const before = open();
    for (let k = 0; k < 20; k++) {
      const f = SafetensorsFile.open(file);
      f.read('a');
      f.readRows('a', [1]);
      assert.throws(() => f.read('u'));
    }
    assert.equal(open(), before);
  });

  describe('the read loop, with fs.readSync and fs.fstatSync replaced', () => {
    // eslint-disable-next-line @typescript-eslint/no-var-requires
    const realFs = require('fs') as { readSync: typeof fs.readSync; fstatSync: typeof fs.fstatSync };
    const { readSync, fstatSync } = realFs;
    let file = '';
    before(() => {
      file = path.join(tmp.dir, 'loop.safetensors');
      fs.writeFileSync(file, build(JSON_ALL, 600, DATA));
    });
    afterEach(() => {
      realFs.readSync = readSync;
      realFs.fstatSync = fstatSync;
    });

    it('short reads: the loop continues where each stopped, into the right place', () => {
      const io = new IoCounter();
      const f = SafetensorsFile.open(file, { io });
      io.reset();
      realFs.readSync = ((fd: number, buf: Uint8Array, off: number, len: number, pos: number) => readSync(fd, buf, off, Math.min(len, 5), pos)) as typeof fs.readSync;
      assert.deepEqual(f.read('a').toArray(), [[1, 2], [3, 4], [5, 6]]);
      assert.deepEqual(io.files.get(file), { headerBytes: 0, dataBytes: 24, reads: 5 });
      assert.deepEqual(f.readRows('a', [2, 1]).toArray(), [[5, 6], [3, 4]]);
      assert.deepEqual(f.read('b', { f64: 'f32' }).toArray(), [1.5, Math.fround(0.1)]);
    });

    it('end of file mid-read is truncated; a failing read is an io fault naming the range', () => {
      const f = SafetensorsFile.open(file);
      realFs.readSync = ((fd: number, buf: Uint8Array, off: number, len: number, pos: number) => (len > 20 ? readSync(fd, buf, off, 20, pos) : 0)) as typeof fs.readSync;
      assert.throws(() => f.read('a'), (e: unknown) => e instanceof SafetensorsError && e.fault === 'truncated' && e.message === `${file}: unexpected end of file reading 24 bytes at ${8 + 600 + 16}`);
      realFs.readSync = (() => {
        throw new Error('EIO: i/o error');
      }) as typeof fs.readSync;
      assert.throws(() => f.read('b', { f64: 'f32' }), (e: unknown) => e instanceof SafetensorsError && e.fault === 'io' && e.message === `${file}: read of 16 bytes at 608 failed: EIO: i/o error`);
    });

    it('a path that stops being a regular file between stat and open is refused', () => {
      realFs.fstatSync = ((fd: number) => ({ ...fstatSync(fd), isFile: () => false })) as unknown as typeof fs.fstatSync;
      assert.throws(() => SafetensorsFile.open(file), (e: unknown) => e instanceof SafetensorsError && e.fault === 'io' && e.message === `${file}: is not a regular file`);
    });
  });
});
