// Edge tests for lib/ops/copy.ts (the memory-roofline copy op and formatBytes) on the host backend with
// buffers of a few bytes, so that Stryker can take the file in (docs/TESTING.md, "Mutation testing").
// The source fill is watched by wrapping fillU32 on a backend of the test's own; what the op allocates is
// counted with Backend.stats() on that backend, which nothing else uses.

import { strict as assert } from 'assert';
import { Backend, activeBackend } from '../../lib/backend';
import { copyOp, formatBytes } from '../../lib/ops/copy';
import { CopyArgs } from '../../lib/native/gdn';
import { throwsExactly } from '../stand-ins';


describe('ops/copy edges', () => {
  let b: Backend;
  let fills: [number, number, number][];
  before(() => {
    b = Backend.open('host');
    const fill = b.fillU32.bind(b);
    b.fillU32 = (addr: number, pattern: number, bytes: number) => {
      fills.push([addr, pattern, bytes]);
      fill(addr, pattern, bytes);
    };
  });
  beforeEach(() => {
    fills = [];
  });
  after(() => b.close());

  it('bytes: an integer >= 2, named in the refusal; nothing is allocated before the check', () => {
    throwsExactly(() => copyOp(1, { backend: b }), RangeError, 'bytes: expected an integer >= 2, got 1');
    throwsExactly(() => copyOp(6.5, { backend: b }), RangeError, 'bytes: expected an integer >= 2, got 6.5');
    throwsExactly(() => copyOp('8' as never, { backend: b }), RangeError, "bytes: expected an integer >= 2, got '8'");
    assert.deepEqual(b.stats(), { liveBuffers: 0, liveBytes: 0 });
    assert.deepEqual(fills, []);
  });

  it('moves half the bytes from a source filled in whole words with bf16 1.0 pairs to a second buffer', () => {
    const op = copyOp(19, { backend: b });  // half = 9: two whole words are filled, the ninth byte is not
    const args = op.args as CopyArgs;
    assert.equal(op.kind, 'copy');
    assert.equal(args.bytes, 9);
    assert.notEqual(args.src, args.dst);
    assert.deepEqual(fills, [[args.src, 0x3f803f80, 8]]);
    const got = new Uint8Array(8);
    b.download(got, args.src);
    assert.deepEqual(Array.from(got), [0x80, 0x3f, 0x80, 0x3f, 0x80, 0x3f, 0x80, 0x3f]);
    // Two buffers of the 9 bytes moved, each rounded up to a whole word.
    assert.deepEqual(b.stats(), { liveBuffers: 2, liveBytes: 24 });
    b.copy(args.dst, args.src, args.bytes);
    const moved = new Uint8Array(8);
    b.download(moved, args.dst);
    assert.deepEqual(moved, got);
    op.release();
    assert.deepEqual(b.stats(), { liveBuffers: 0, liveBytes: 0 });
  });

  it('the smallest copies: 2 bytes moves 1 (no whole word to fill), 9 bytes moves 4 (one word, the odd byte dropped)', () => {
    const two = copyOp(2, { backend: b });
    assert.equal((two.args as CopyArgs).bytes, 1);
    assert.deepEqual(fills, [[(two.args as CopyArgs).src, 0x3f803f80, 0]]);
    assert.equal(two.label, 'copy 2 B');
    two.release();
    fills = [];
    const nine = copyOp(9, { backend: b });  // odd: the byte left over is not moved
    assert.equal((nine.args as CopyArgs).bytes, 4);
    assert.deepEqual(fills, [[(nine.args as CopyArgs).src, 0x3f803f80, 4]]);
    nine.release();
    assert.equal(b.stats().liveBuffers, 0);
  });

  it('release frees both buffers', () => {
    const op = copyOp(64, { backend: b });
    const { src, dst } = op.args as CopyArgs;
    op.release();
    assert.equal(b.stats().liveBuffers, 0);
    // Both addresses are gone: a copy between them is refused by the library.
    assert.throws(() => b.copy(dst, src, 4));
  });

  it('the label: given, or "copy" and the total bytes', () => {
    const named = copyOp(4000, { backend: b, label: 'roofline' });
    assert.equal(named.label, 'roofline');
    named.release();
    const plain = copyOp(4000, { backend: b });
    assert.equal(plain.label, 'copy 4.0 kB');
    plain.release();
    const empty = copyOp(4, { backend: b, label: '' });  // an empty label is a label
    assert.equal(empty.label, '');
    empty.release();
  });

  it('without a backend the active one is used', () => {
    const active = activeBackend();
    const before = active.stats().liveBuffers;
    const op = copyOp(8);
    assert.equal(active.stats().liveBuffers, before + 2);
    assert.deepEqual(fills, []);  // not the test's backend
    op.release();
    assert.equal(active.stats().liveBuffers, before);
  });

  it('formatBytes: B, kB, MB, GB at and just below each threshold', () => {
    assert.equal(formatBytes(0), '0 B');
    assert.equal(formatBytes(999), '999 B');
    assert.equal(formatBytes(1000), '1.0 kB');
    assert.equal(formatBytes(1250), '1.3 kB');  // 1.25 -> toFixed(1)
    assert.equal(formatBytes(999_999), '1000.0 kB');
    assert.equal(formatBytes(1e6), '1.0 MB');
    assert.equal(formatBytes(2_340_000), '2.3 MB');
    assert.equal(formatBytes(999_999_999), '1000.0 MB');
    assert.equal(formatBytes(1e9), '1.00 GB');
    assert.equal(formatBytes(12_345_678_901), '12.35 GB');
  });
});
