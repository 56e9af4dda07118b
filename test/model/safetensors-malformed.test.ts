// A corpus of malformed and hostile safetensors files, each generated here, written to disk and
// opened: every one must be rejected with a SafetensorsError naming the file and the fault — no
// crash, no hang (each within a time bound), no allocation sized from an unchecked length.

import { strict as assert } from 'assert';
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import { MAX_HEADER_BYTES, SafetensorsError, SafetensorsFault, SafetensorsFile, SafetensorsCheckpoint } from '../../lib/model/safetensors';
import { concat, rawFile, tempDir, u64le } from './helpers';

const ok = (name: string, dtype: string, shape: number[], begin: number, end: number) =>
  `${JSON.stringify(name)}:{"dtype":"${dtype}","shape":[${shape}],"data_offsets":[${begin},${end}]}`;

interface Case {
  what: string;
  bytes: () => Uint8Array;
  fault: SafetensorsFault;
  /** A word the message must contain (beyond the file name). */
  says: RegExp;
}

const F32x4 = ok('w', 'F32', [2, 2], 0, 16);

const CASES: Case[] = [
  { what: 'empty file', bytes: () => new Uint8Array(0), fault: 'too-small', says: /0 bytes.*8-byte/ },
  { what: '7-byte file', bytes: () => new Uint8Array(7), fault: 'too-small', says: /7 bytes/ },
  { what: 'header length 2^63', bytes: () => concat(u64le(2n ** 63n), '{}'), fault: 'header-too-large', says: /9223372036854775808 exceeds/ },
  { what: 'header length 2^64 - 1', bytes: () => concat(u64le(2n ** 64n - 1n), '{}'), fault: 'header-too-large', says: /18446744073709551615/ },
  { what: 'header > 100 MB claimed', bytes: () => rawFile('{}', 0, BigInt(MAX_HEADER_BYTES + 1)), fault: 'header-too-large', says: /100000000-byte limit/ },
  { what: 'header length beyond the file', bytes: () => rawFile('{}', 0, 1000n), fault: 'header-past-end', says: /1000 runs past the end/ },
  { what: 'header length just under the limit, tiny file', bytes: () => rawFile('{}', 0, BigInt(MAX_HEADER_BYTES)), fault: 'header-past-end', says: /runs past the end/ },
  { what: 'header length 0', bytes: () => rawFile(''), fault: 'header-start', says: /empty/ },
  { what: 'header of spaces only', bytes: () => rawFile('        '), fault: 'header-start', says: /starts with " "/ },
  { what: 'JSON array, not an object', bytes: () => rawFile('[1,2]   '), fault: 'header-start', says: /JSON object/ },
  { what: 'JSON string, not an object', bytes: () => rawFile('"x"'), fault: 'header-start', says: /JSON object/ },
  { what: 'byte-order mark before {', bytes: () => rawFile(concat(new Uint8Array([0xef, 0xbb, 0xbf]), `{${F32x4}}`), 16), fault: 'header-start', says: /starts with/ },
  { what: 'truncated JSON', bytes: () => rawFile('{"w":{"dtype":'), fault: 'header-json', says: /not valid JSON/ },
  { what: 'trailing comma', bytes: () => rawFile(`{${F32x4},}`, 16), fault: 'header-json', says: /expected a string key/ },
  { what: 'garbage after the object', bytes: () => rawFile(`{${F32x4}}x`, 16), fault: 'header-json', says: /after the JSON value/ },
  { what: 'NaN literal', bytes: () => rawFile('{"w":{"dtype":"F32","shape":[NaN],"data_offsets":[0,0]}}'), fault: 'header-json', says: /unexpected character/ },
  { what: 'control character in a name', bytes: () => rawFile('{"a\u0001":{"dtype":"U8","shape":[0],"data_offsets":[0,0]}}'), fault: 'header-json', says: /control character/ },
  { what: 'lone surrogate escape in a name', bytes: () => rawFile('{"\\ud800":{"dtype":"U8","shape":[0],"data_offsets":[0,0]}}'), fault: 'header-json', says: /lone surrogate/ },
  { what: 'deeply nested JSON', bytes: () => rawFile(`{"w":${'['.repeat(200_000)}${']'.repeat(200_000)}}`), fault: 'header-json', says: /nesting deeper than 8/ },
  { what: 'non-UTF-8 header (0xFF)', bytes: () => rawFile(concat('{"w', new Uint8Array([0xff]), '":{}}')), fault: 'header-utf8', says: /not valid UTF-8 \(at 3 of/ },
  { what: 'overlong UTF-8 encoding', bytes: () => rawFile(concat('{"', new Uint8Array([0xc0, 0xaf]), '":{}}')), fault: 'header-utf8', says: /UTF-8/ },
  { what: 'UTF-8 surrogate code point (ED A0 80)', bytes: () => rawFile(concat('{"', new Uint8Array([0xed, 0xa0, 0x80]), '":{}}')), fault: 'header-utf8', says: /UTF-8/ },
  { what: 'duplicate tensor names', bytes: () => rawFile(`{${ok('w', 'F32', [2], 0, 8)},${ok('w', 'F32', [2], 8, 16)}}`, 16), fault: 'duplicate-name', says: /tensor "w" twice/ },
  { what: 'duplicate key inside an entry', bytes: () => rawFile('{"w":{"dtype":"F32","dtype":"I32","shape":[1],"data_offsets":[0,4]}}', 4), fault: 'header-json', says: /repeats key "dtype"/ },
  { what: 'unknown dtype', bytes: () => rawFile('{"w":{"dtype":"F128","shape":[1],"data_offsets":[0,16]}}', 16), fault: 'dtype', says: /unknown dtype string "F128"/ },
  { what: 'lower-case dtype', bytes: () => rawFile('{"w":{"dtype":"f32","shape":[1],"data_offsets":[0,4]}}', 4), fault: 'dtype', says: /unknown dtype/ },
  { what: 'dtype not a string', bytes: () => rawFile('{"w":{"dtype":32,"shape":[1],"data_offsets":[0,4]}}', 4), fault: 'dtype', says: /number 32/ },
  { what: 'dtype missing', bytes: () => rawFile('{"w":{"shape":[1],"data_offsets":[0,4]}}', 4), fault: 'entry', says: /dtype is missing/ },
  { what: 'entry not an object', bytes: () => rawFile('{"w":"F32"}'), fault: 'entry', says: /entry is a string/ },
  { what: 'entry null', bytes: () => rawFile('{"w":null}'), fault: 'entry', says: /entry is a null/ },
  { what: 'unexpected key in an entry', bytes: () => rawFile('{"w":{"dtype":"F32","shape":[1],"data_offsets":[0,4],"offset":0}}', 4), fault: 'entry', says: /unexpected key "offset"/ },
  { what: 'shape missing', bytes: () => rawFile('{"w":{"dtype":"F32","data_offsets":[0,4]}}', 4), fault: 'shape', says: /shape is nothing/ },
  { what: 'shape with a negative dim', bytes: () => rawFile('{"w":{"dtype":"F32","shape":[-1,4],"data_offsets":[0,16]}}', 16), fault: 'shape', says: /shape\[0\] is number -1/ },
  { what: 'shape with a float dim', bytes: () => rawFile('{"w":{"dtype":"F32","shape":[2.5],"data_offsets":[0,10]}}', 10), fault: 'shape', says: /shape\[0\] is number 2.5/ },
  { what: 'shape dim beyond 2^53', bytes: () => rawFile('{"w":{"dtype":"U8","shape":[9007199254740993],"data_offsets":[0,1]}}', 1), fault: 'shape', says: /below 2\^53/ },
  { what: 'shape a string', bytes: () => rawFile('{"w":{"dtype":"U8","shape":"4","data_offsets":[0,4]}}', 4), fault: 'shape', says: /expected an array/ },
  { what: 'negative offset', bytes: () => rawFile('{"w":{"dtype":"U8","shape":[4],"data_offsets":[-4,0]}}', 4), fault: 'offsets', says: /data_offsets\[0\] is number -4/ },
  { what: 'float offset', bytes: () => rawFile('{"w":{"dtype":"U8","shape":[4],"data_offsets":[0,4.0]}}', 4), fault: 'offsets', says: /data_offsets\[1\] is number 4.0/ },
  { what: 'exponent offset 4e0', bytes: () => rawFile('{"w":{"dtype":"U8","shape":[4],"data_offsets":[0,4e0]}}', 4), fault: 'offsets', says: /4e0/ },
  { what: 'offset -0', bytes: () => rawFile('{"w":{"dtype":"U8","shape":[0],"data_offsets":[-0,0]}}'), fault: 'offsets', says: /-0/ },
  { what: 'offset with 400 digits', bytes: () => rawFile(`{"w":{"dtype":"U8","shape":[4],"data_offsets":[0,${'9'.repeat(400)}]}}`, 4), fault: 'offsets', says: /below 2\^53/ },
  { what: 'offsets as strings', bytes: () => rawFile('{"w":{"dtype":"U8","shape":[4],"data_offsets":["0","4"]}}', 4), fault: 'offsets', says: /string "0"/ },
  { what: 'three offsets', bytes: () => rawFile('{"w":{"dtype":"U8","shape":[4],"data_offsets":[0,4,8]}}', 8), fault: 'offsets', says: /array of 3/ },
  { what: 'offsets reversed', bytes: () => rawFile('{"w":{"dtype":"U8","shape":[4],"data_offsets":[4,0]}}', 4), fault: 'offsets', says: /end before they begin/ },
  { what: 'size not matching shape', bytes: () => rawFile('{"w":{"dtype":"F32","shape":[2,2],"data_offsets":[0,12]}}', 12), fault: 'size-mismatch', says: /needs 16 bytes but .* span 12/ },
  { what: 'shape whose size overflows 64 bits', bytes: () => rawFile('{"w":{"dtype":"F64","shape":[4294967296,4294967296,4294967296],"data_offsets":[0,8]}}', 8), fault: 'size-mismatch', says: /needs 633825300114114700748351602688 bytes/ },
  { what: 'F4 with an odd element count', bytes: () => rawFile('{"w":{"dtype":"F4","shape":[3],"data_offsets":[0,2]}}', 2), fault: 'size-mismatch', says: /not a whole number of bytes/ },
  { what: 'overlapping offsets', bytes: () => rawFile(`{${ok('a', 'F32', [4], 0, 16)},${ok('b', 'F32', [2], 8, 16)}}`, 16), fault: 'overlap', says: /"b" \[8, 16\) overlaps tensor "a"/ },
  { what: 'two tensors on the same bytes', bytes: () => rawFile(`{${ok('a', 'F32', [2], 0, 8)},${ok('b', 'I32', [2], 0, 8)}}`, 8), fault: 'overlap', says: /overlaps/ },
  { what: 'hole between tensors', bytes: () => rawFile(`{${ok('a', 'F32', [2], 0, 8)},${ok('b', 'F32', [2], 12, 20)}}`, 20), fault: 'hole', says: /\[8, 12\) belong to no tensor/ },
  { what: 'first tensor not at 0', bytes: () => rawFile(`{${ok('a', 'F32', [2], 4, 12)}}`, 12), fault: 'hole', says: /\[0, 4\)/ },
  { what: 'truncated data', bytes: () => rawFile(`{${ok('a', 'F32', [4], 0, 16)},${ok('b', 'F32', [4], 16, 32)}}`, 20), fault: 'truncated', says: /"b" ends at data byte 32 but the data section has 20/ },
  { what: 'trailing garbage after the last tensor', bytes: () => rawFile(`{${F32x4}}`, 19), fault: 'trailing-data', says: /\[16, 19\) after the last tensor/ },
  { what: 'data but no tensors', bytes: () => rawFile('{}', 8), fault: 'trailing-data', says: /\[0, 8\)/ },
  { what: '__metadata__ not an object', bytes: () => rawFile('{"__metadata__":"x"}'), fault: 'metadata', says: /__metadata__ is a string/ },
  { what: '__metadata__ with a number value', bytes: () => rawFile('{"__metadata__":{"format":1}}'), fault: 'metadata', says: /__metadata__\["format"\] is a number 1/ },
  { what: '__metadata__ nested object', bytes: () => rawFile('{"__metadata__":{"a":{"b":"c"}}}'), fault: 'metadata', says: /expected a string/ },
  { what: 'duplicate __metadata__', bytes: () => rawFile('{"__metadata__":{},"__metadata__":{}}'), fault: 'duplicate-name', says: /"__metadata__" twice/ },
];

describe('safetensors: malformed and hostile files', function () {
  this.timeout(60_000);
  let tmp: ReturnType<typeof tempDir>;
  before(() => (tmp = tempDir('malformed')));
  after(() => tmp.cleanup());

  it(`the corpus has at least 30 distinct faults (${CASES.length} cases)`, () => {
    assert.ok(CASES.length >= 30);
    assert.equal(new Set(CASES.map((c) => c.what)).size, CASES.length);
  });

  CASES.forEach((c, i) => {
    it(`rejects: ${c.what} → ${c.fault}`, () => {
      const bytes = c.bytes();
      const file = path.join(tmp.dir, `case-${String(i).padStart(2, '0')}.safetensors`);
      fs.writeFileSync(file, bytes);
      const buffersBefore = process.memoryUsage().arrayBuffers;
      const t0 = process.hrtime.bigint();
      let err: unknown;
      try {
        SafetensorsFile.open(file);
      } catch (e) {
        err = e;
      }
      const ms = Number(process.hrtime.bigint() - t0) / 1e6;
      const grew = process.memoryUsage().arrayBuffers - buffersBefore;
      assert.ok(err instanceof SafetensorsError, `expected a SafetensorsError, got ${err}`);
      assert.equal(err.fault, c.fault, err.message);
      assert.ok(err.message.startsWith(file + ': '), `message must name the file: ${err.message}`);
      assert.match(err.message, c.says);
      assert.equal(err.file, file);
      assert.ok(ms < 2000, `took ${ms.toFixed(0)} ms`);
      // Nothing is allocated from an untrusted length: live buffers grow by far less than any claimed size.
      assert.ok(grew < 8 * 1024 * 1024 + bytes.byteLength * 4, `array buffers grew by ${grew} bytes`);
      // The in-memory reader gives the same verdict.
      assert.throws(() => SafetensorsFile.fromBytes(bytes, 'mem'), (e: unknown) => e instanceof SafetensorsError && e.fault === c.fault && e.message.startsWith('mem: '));
    });
  });

  it('a missing file and a directory are I/O faults naming the path', () => {
    const missing = path.join(tmp.dir, 'nope.safetensors');
    assert.throws(() => SafetensorsFile.open(missing), (e: unknown) => e instanceof SafetensorsError && e.fault === 'io' && e.message.startsWith(missing));
    assert.throws(() => SafetensorsFile.open(tmp.dir), (e: unknown) => e instanceof SafetensorsError && e.fault === 'io' && /not a regular file|EISDIR/.test(e.message));
  });

  it('a FIFO or a device is refused without blocking', function () {
    const fifo = path.join(tmp.dir, 'pipe.safetensors');
    const made = spawnSync('mkfifo', [fifo]);
    if (made.status !== 0) this.skip();
    for (const p of [fifo, '/dev/zero']) {
      assert.throws(() => SafetensorsFile.open(p), (e: unknown) => e instanceof SafetensorsError && e.fault === 'io' && e.message === `${p}: is not a regular file`);
    }
  });

  it('a file that shrinks after its header was read is caught at the tensor read', () => {
    const file = path.join(tmp.dir, 'shrinks.safetensors');
    fs.writeFileSync(file, rawFile(`{${F32x4}}`, 16));
    const f = SafetensorsFile.open(file);
    fs.truncateSync(file, fs.statSync(file).size - 4);
    assert.throws(() => f.read('w'), (e: unknown) => e instanceof SafetensorsError && e.fault === 'io' && /size changed/.test(e.message));
  });

  describe('sharded index faults', () => {
    const shard = () => rawFile(`{${F32x4}}`, 16);
    const cases: { what: string; index: string; says: RegExp }[] = [
      { what: 'index not JSON', index: '{"weight_map":', says: /not valid JSON/ },
      { what: 'weight_map missing', index: '{"metadata":{}}', says: /weight_map is nothing/ },
      { what: 'shard name escapes the directory', index: '{"weight_map":{"w":"../model.safetensors"}}', says: /not a plain file name/ },
      { what: 'absolute shard path', index: '{"weight_map":{"w":"/etc/passwd"}}', says: /not a plain file name/ },
      { what: 'shard file missing', index: '{"weight_map":{"w":"gone.safetensors"}}', says: /does not exist/ },
      { what: 'tensor not in its shard', index: '{"weight_map":{"w":"a.safetensors","x":"a.safetensors"}}', says: /"x" to "a.safetensors", which does not hold it/ },
      { what: 'shard holds an unlisted tensor', index: '{"weight_map":{"v":"b.safetensors"}}', says: /holds "w", which weight_map does not list/ },
      { what: 'duplicate name in weight_map', index: '{"weight_map":{"w":"a.safetensors","w":"a.safetensors"}}', says: /repeats key "w"/ },
      { what: 'shard name not a string', index: '{"weight_map":{"w":3}}', says: /expected a file name/ },
    ];
    for (const c of cases) {
      it(`rejects: ${c.what}`, () => {
        const d = tempDir('index');
        try {
          fs.writeFileSync(path.join(d.dir, 'a.safetensors'), shard());
          fs.writeFileSync(path.join(d.dir, 'b.safetensors'), rawFile(`{${ok('v', 'F32', [2, 2], 0, 16)},${ok('w', 'F32', [2, 2], 16, 32)}}`, 32));
          const indexPath = path.join(d.dir, 'model.safetensors.index.json');
          fs.writeFileSync(indexPath, c.index);
          assert.throws(() => SafetensorsCheckpoint.open(d.dir), (e: unknown) => e instanceof SafetensorsError && e.fault === 'index' && e.message.startsWith(indexPath) && c.says.test(e.message));
        } finally {
          d.cleanup();
        }
      });
    }
  });
});
