// A checkpoint's tensors across files, at its edges: which file a directory opens (the index, then
// model.safetensors, then its only *.safetensors file, else refused naming what it found, sorted), every
// reader delegating to the tensor's own file, a shard opened once however many tensors it holds, the
// index checked against its shards both ways, and every refusal of the index file itself, each with
// its exact message (fs.statSync, fs.readdirSync and the JSON parser replaced where a fault cannot be
// made on disk).

import { strict as assert } from 'assert';
import * as fs from 'fs';
import * as path from 'path';
import { IoCounter, SafetensorsCheckpoint, SafetensorsError, SafetensorsFault, writeSafetensors } from '../../lib/model/safetensors';
import { tempDir } from './helpers';

/** The fs module itself (not the import's read-only view of it), so that a test can replace a function. */
const realFs = require('fs') as { statSync: typeof fs.statSync; readdirSync: typeof fs.readdirSync };
// eslint-disable-next-line @typescript-eslint/no-var-requires
const strictJson = require('../../lib/model/strict-json') as { parseStrictJson: unknown };

const raw = (dtype: string, shape: number[], bytes: number[]) => ({ dtype, shape, bytes: new Uint8Array(bytes) }) as never;
const refused = (fn: () => unknown, fault: SafetensorsFault, message: string) =>
  assert.throws(fn, (e: unknown) => {
    assert.ok(e instanceof SafetensorsError, String(e));
    assert.equal(e.message, message);
    assert.equal(e.fault, fault);
    return true;
  });

describe('safetensors checkpoint: edges', () => {
  let tmp: ReturnType<typeof tempDir>;
  let n = 0;
  /** A fresh empty directory. */
  const fresh = () => {
    const d = path.join(tmp.dir, `d${++n}`);
    fs.mkdirSync(d);
    return d;
  };
  before(() => (tmp = tempDir('st-ckpt-edges')));
  after(() => tmp.cleanup());

  it('model.safetensors: names in file order, every reader, the header bytes, no index', () => {
    const dir = fresh();
    const w = writeSafetensors(path.join(dir, 'model.safetensors'), [['b', raw('U8', [2, 2], [1, 2, 3, 4])], ['a', raw('F32', [1], [0, 0, 0x80, 0x3f])]]);
    fs.writeFileSync(path.join(dir, 'other.safetensors'), 'not read');
    const io = new IoCounter();
    const c = SafetensorsCheckpoint.open(dir, { io });
    assert.equal(c.dir, dir);
    assert.equal(c.indexPath, undefined);
    assert.deepEqual([...c.files.keys()], ['model.safetensors']);
    assert.deepEqual(c.names(), ['a', 'b']);
    assert.deepEqual([c.has('a'), c.has('b'), c.has('c')], [true, true, false]);
    assert.equal(c.fileOf('b').path, path.join(dir, 'model.safetensors'));
    assert.deepEqual(c.entry('b').shape, [2, 2]);
    assert.deepEqual(c.read('a').toArray(), [1]);
    assert.deepEqual(c.readRaw('b'), { dtype: 'U8', shape: [2, 2], bytes: new Uint8Array([1, 2, 3, 4]) });
    assert.deepEqual([...c.readBytes('b')], [1, 2, 3, 4]);
    assert.deepEqual([...c.readRaw('a').bytes], [0, 0, 0x80, 0x3f]);
    assert.equal(c.headerBytes(), 8 + w.headerLength);
    assert.deepEqual(io.files.get(path.join(dir, 'model.safetensors')), { headerBytes: 8 + w.headerLength, dataBytes: 4 + 4 + 4 + 4, reads: 2 + 4 });
    refused(() => c.fileOf('zz'), 'not-found', `${dir}: no tensor named "zz" in the checkpoint (2 tensors)`);
    refused(() => c.entry('zz'), 'not-found', `${dir}: no tensor named "zz" in the checkpoint (2 tensors)`);
  });

  it('readRows and read with options go to the tensor\'s file', () => {
    const dir = fresh();
    writeSafetensors(path.join(dir, 'model.safetensors'), { r: raw('I8', [3, 2], [1, 2, 3, 4, 5, 0xfa]), d: raw('F64', [1], [0, 0, 0, 0, 0, 0, 0xf8, 0x3f]) });
    const c = SafetensorsCheckpoint.open(dir);
    assert.deepEqual(c.readRows('r', [2, 0]).toArray(), [[5, -6], [1, 2]]);
    assert.deepEqual(c.read('d', { f64: 'f32' }).toArray(), [1.5]);
    assert.deepEqual(c.readRows('d', [0], { f64: 'f32' }).toArray(), [1.5]);
  });

  it('no model.safetensors: the directory\'s only .safetensors file; none or several are refused, sorted, four named at most', () => {
    const dir = fresh();
    fs.writeFileSync(path.join(dir, 'notes.txt'), '');
    fs.writeFileSync(path.join(dir, 'x.safetensors.bak'), '');
    refused(() => SafetensorsCheckpoint.open(dir), 'not-found', `${dir}: no model.safetensors.index.json or model.safetensors, and no .safetensors file`);
    writeSafetensors(path.join(dir, 'weights.safetensors'), { w: raw('U8', [1], [7]) });
    const c = SafetensorsCheckpoint.open(dir);
    assert.deepEqual([...c.files.keys()], ['weights.safetensors']);
    assert.deepEqual([...c.readBytes('w')], [7]);
    for (const f of ['c', 'a', 'e', 'b']) fs.writeFileSync(path.join(dir, `${f}.safetensors`), '');
    // Listed in reverse, so that only sorting gives the order below.
    const { readdirSync } = realFs;
    realFs.readdirSync = ((d: string) => (readdirSync(d) as string[]).sort().reverse()) as typeof fs.readdirSync;
    try {
      refused(() => SafetensorsCheckpoint.open(dir), 'not-found', `${dir}: no model.safetensors.index.json or model.safetensors, and 5 other .safetensors files (a.safetensors, b.safetensors, c.safetensors, e.safetensors, …): ambiguous`);
      // unlinkSync, not rmSync: rmSync's first use loads a helper that keeps the fs.readdirSync it finds then.
      fs.unlinkSync(path.join(dir, 'weights.safetensors'));
      refused(() => SafetensorsCheckpoint.open(dir), 'not-found', `${dir}: no model.safetensors.index.json or model.safetensors, and 4 other .safetensors files (a.safetensors, b.safetensors, c.safetensors, e.safetensors): ambiguous`);
    } finally {
      realFs.readdirSync = readdirSync;
    }
  });

  it('a directory that cannot be listed', () => {
    const dir = path.join(tmp.dir, 'absent');
    refused(() => SafetensorsCheckpoint.open(dir), 'io', `${dir}: cannot list the checkpoint directory: ENOENT: no such file or directory, scandir '${dir}'`);
  });

  describe('an index and its shards', () => {
    /** A directory with shards s1 (a, b) and s2 (c), and this index text. */
    const sharded = (index: string | object) => {
      const dir = fresh();
      writeSafetensors(path.join(dir, 's1.safetensors'), { a: raw('U8', [1], [1]), b: raw('U8', [2], [2, 3]) });
      writeSafetensors(path.join(dir, 's2.safetensors'), { c: raw('U8', [1], [4]) });
      fs.writeFileSync(path.join(dir, 'model.safetensors.index.json'), typeof index === 'string' ? index : JSON.stringify(index));
      return { dir, indexPath: path.join(dir, 'model.safetensors.index.json') };
    };
    const good = { metadata: { total_size: 4 }, weight_map: { c: 's2.safetensors', b: 's1.safetensors', a: 's1.safetensors' } };

    it('names in weight-map order, each from its shard, each shard opened once; the index wins over model.safetensors', () => {
      const { dir, indexPath } = sharded(good);
      writeSafetensors(path.join(dir, 'model.safetensors'), { z: raw('U8', [1], [9]) });
      const io = new IoCounter();
      const c = SafetensorsCheckpoint.open(dir, { io });
      assert.equal(c.indexPath, indexPath);
      assert.deepEqual(c.names(), ['c', 'b', 'a']);
      assert.deepEqual([...c.files.keys()], ['s2.safetensors', 's1.safetensors']);
      assert.equal(c.fileOf('a').path, path.join(dir, 's1.safetensors'));
      assert.equal(c.fileOf('c').path, path.join(dir, 's2.safetensors'));
      assert.deepEqual([...c.readBytes('b'), ...c.readBytes('c')], [2, 3, 4]);
      assert.equal(io.files.get(path.join(dir, 's1.safetensors'))!.reads, 3);
      assert.equal(io.files.get(path.join(dir, 's2.safetensors'))!.reads, 3);
      assert.equal(c.headerBytes(), io.total('header'));
      assert.equal(c.headerBytes(), [...c.files.values()].reduce((s, f) => s + 8 + f.header.headerLength, 0));
      refused(() => c.fileOf('z'), 'not-found', `${indexPath}: no tensor named "z" in the checkpoint (3 tensors)`);
    });

    it('the index checked against its shards, both ways', () => {
      const cases: [object, string][] = [
        [{ weight_map: { a: 'gone.safetensors' } }, 'weight_map sends "a" to "gone.safetensors", which does not exist'],
        [{ weight_map: { a: 's1.safetensors', b: 's1.safetensors', c: 's1.safetensors' } }, 'weight_map sends "c" to "s1.safetensors", which does not hold it'],
        [{ weight_map: { a: 's1.safetensors', c: 's2.safetensors' } }, 'shard "s1.safetensors" holds "b", which weight_map does not list'],
        [{ weight_map: { a: 's1.safetensors', c: 's2.safetensors', b: 's2.safetensors' } }, 'weight_map sends "b" to "s2.safetensors", which does not hold it'],
      ];
      for (const [index, message] of cases) {
        const { dir, indexPath } = sharded(index);
        refused(() => SafetensorsCheckpoint.open(dir), 'index', `${indexPath}: ${message}`);
      }
      // A shard holding a tensor the map sends to another shard: s3 holds a copy of "a".
      const { dir, indexPath } = sharded({ weight_map: { c: 's3.safetensors', a: 's1.safetensors', b: 's1.safetensors' } });
      writeSafetensors(path.join(dir, 's3.safetensors'), { c: raw('U8', [1], [4]), a: raw('U8', [1], [1]) });
      refused(() => SafetensorsCheckpoint.open(dir), 'index', `${indexPath}: shard "s3.safetensors" holds "a", which weight_map sends to "s1.safetensors"`);
    });

    it('weight_map must be an object of plain file names', () => {
      const cases: [string, string][] = [
        ['[1]', 'weight_map is nothing, expected an object of tensor name → shard file'],
        ['{"metadata":{}}', 'weight_map is nothing, expected an object of tensor name → shard file'],
        ['{"weight_map":[]}', 'weight_map is array of 0, expected an object of tensor name → shard file'],
        ['{"weight_map":"s1"}', 'weight_map is string "s1", expected an object of tensor name → shard file'],
        ['{"weight_map":{"a":3}}', 'weight_map["a"] is number 3, expected a file name'],
        ['{"weight_map":{"a":null}}', 'weight_map["a"] is null, expected a file name'],
      ];
      for (const bad of ['', '.', '..', 'sub/s1.safetensors', 'sub\\\\s1.safetensors', 's1\\u0000.safetensors', '/s1.safetensors']) {
        const shard = JSON.parse(`"${bad}"`) as string;
        cases.push([`{"weight_map":{"a":"${bad}"}}`, `weight_map["a"] = ${JSON.stringify(shard)} is not a plain file name in the checkpoint directory`]);
      }
      // Dots alone are refused only as "." and ".."; these are file names (here missing ones).
      for (const odd of ['...', '.s1', 's1.']) cases.push([`{"weight_map":{"a":"${odd}"}}`, `weight_map sends "a" to "${odd}", which does not exist`]);
      for (const [index, message] of cases) {
        const { dir, indexPath } = sharded(index);
        refused(() => SafetensorsCheckpoint.open(dir), 'index', `${indexPath}: ${message}`);
      }
      // An empty map is a checkpoint of no tensors.
      assert.deepEqual(SafetensorsCheckpoint.open(sharded('{"weight_map":{}}').dir).names(), []);
    });

    it('the index file: JSON syntax, repeated keys, depth 16, UTF-8, a directory', () => {
      const cases: [string | Uint8Array, string][] = [
        ['{"weight_map":', 'index is not valid JSON: unexpected end of JSON at character 14'],
        ['{"weight_map":{"w":"a","w":"b"}}', 'index repeats key "w" (at character 23)'],
        [new Uint8Array([0x7b, 0xff, 0x7d]), 'index is not readable UTF-8 text: The encoded data was not valid for encoding utf-8'],
        [`{"weight_map":{},"x":${'['.repeat(16)}${']'.repeat(16)}}`, 'index is not valid JSON: nesting deeper than 16 levels at character 36'],
      ];
      for (const [text, message] of cases) {
        const { dir, indexPath } = sharded('');
        fs.writeFileSync(indexPath, text);
        refused(() => SafetensorsCheckpoint.open(dir), 'index', `${indexPath}: ${message}`);
      }
      // 15 levels inside the top-level object: 16 in all, accepted.
      assert.deepEqual(SafetensorsCheckpoint.open(sharded(`{"weight_map":{},"x":${'['.repeat(15)}${']'.repeat(15)}}`).dir).names(), []);
      const { dir, indexPath } = sharded('');
      fs.rmSync(indexPath);
      fs.mkdirSync(indexPath);
      refused(() => SafetensorsCheckpoint.open(dir), 'index', `${indexPath}: index is not readable UTF-8 text: EISDIR: illegal operation on a directory, read`);
    });

    it('the index size: a stat that fails, 64 MiB accepted, one byte more refused (fs.statSync replaced)', () => {
      const { dir, indexPath } = sharded(good);
      const { statSync } = realFs;
      let answer: () => unknown = () => statSync(indexPath);
      realFs.statSync = ((p: string, o?: unknown) => (p === indexPath ? answer() : statSync(p, o as never))) as typeof fs.statSync;
      try {
        answer = () => {
          throw new Error('stat failed');
        };
        refused(() => SafetensorsCheckpoint.open(dir), 'io', `${indexPath}: cannot read: stat failed`);
        answer = () => ({ size: 64 * 1024 * 1024 + 1 });
        refused(() => SafetensorsCheckpoint.open(dir), 'index', `${indexPath}: index is 67108865 bytes, more than the 67108864-byte limit`);
        answer = () => ({ size: 64 * 1024 * 1024 });
        assert.deepEqual(SafetensorsCheckpoint.open(dir).names(), ['c', 'b', 'a']);
      } finally {
        realFs.statSync = statSync;
      }
    });

    it('a parser fault that is not a JSON fault is thrown as it is', () => {
      const { dir } = sharded(good);
      const saved = strictJson.parseStrictJson;
      const fault = new TypeError('parser broke');
      strictJson.parseStrictJson = () => {
        throw fault;
      };
      try {
        assert.throws(() => SafetensorsCheckpoint.open(dir), (e: unknown) => e === fault);
      } finally {
        strictJson.parseStrictJson = saved;
      }
    });
  });
});
