// A cell's error keeps the frames of the gdnlab library it went through (kernel/format.ts): the reader sees
// where in the library it was raised, in order, above the cell's own frames; only the kernel's machinery
// (tslab, dist/kernel, node internals) is hidden. Run against the real package (not the fixture).

import assert from 'assert';
import path from 'path';
import { KernelClient, ofType, PROJECT_ROOT } from './kernel-client';

// eslint-disable-next-line no-control-regex
const plain = (s: string) => s.replace(/\u001b\[[0-9;]*m/g, '');

describe('kernel tracebacks keep the library frames', function () {
  this.timeout(60000);
  let k: KernelClient;

  before(async () => {
    k = await KernelClient.start({ env: { GDNLAB_PACKAGE_ROOT: PROJECT_ROOT } });
  });
  after(async () => {
    await k?.close();
  });

  it('an error thrown inside dist/lib/ shows its dist/lib frames first, then the cell\'s, and no kernel frame', async () => {
    const r = await k.execute("import * as gdn from 'gdnlab';\nfunction cellHelper() { return gdn.Tensor.zeros([2, -1]); }\ncellHelper()");
    const [err] = ofType(r.outputs, 'error');
    assert.ok(err, `an error output, got ${r.outputs.map((m) => m.header.msg_type).join(', ')}`);
    const e = err.content as { ename: string; evalue: string; traceback: string[] };
    assert.strictEqual(e.ename, 'TypeError');
    assert.match(e.evalue, /^shape: expected an array of non-negative integers, got \[2, -1\]/);
    const frames = e.traceback.slice(1).map(plain);
    const lib = path.join(PROJECT_ROOT, 'dist', 'lib') + path.sep;
    const libFrames = frames.filter((f) => f.includes(lib));
    assert.ok(libFrames.length >= 2, `library frames kept: ${frames.join(' | ')}`);
    // The top frame is where the library raised it: tensor.js's shape check, with its line.
    assert.match(frames[0], new RegExp(`^\\s+at checkShape \\(${lib.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}tensor\\.js:\\d+:\\d+\\)$`));
    assert.ok(frames.some((f) => /at Tensor\.zeros \(.*dist[\\/]lib[\\/]tensor\.js:\d+:\d+\)/.test(f)), `the public entry point is shown: ${frames.join(' | ')}`);
    const cell = frames.findIndex((f) => /at cellHelper \(/.test(f));
    assert.ok(cell > 0, `the cell's frame is shown: ${frames.join(' | ')}`);
    assert.ok(frames.slice(0, cell).every((f) => f.includes(lib)), 'the library frames come first, in call order, before the cell\'s');
    assert.ok(frames.every((f) => !/tslab[\\/]dist|dist[\\/]kernel[\\/]|node:internal/.test(f)), `kernel frames hidden: ${frames.join(' | ')}`);
    assert.deepStrictEqual((r.reply.content as { traceback: string[] }).traceback, e.traceback, 'the reply carries the same traceback');
  });
});
