// kernel/capture.ts: what user code writes to stdout/stderr goes to IOPub as the writing cell's stream
// output. A recording IOPub and stand-in streams; process.stdout/stderr are hooked in one test only, and
// put back before it ends.

import { strict as assert } from 'assert';
import { cellContext, newCell } from '../../kernel/cell';
import { OutputCapture } from '../../kernel/capture';
import type { IOPubChannel } from '../../kernel/iopub';
import type { Header } from '../../kernel/wire';

// Only the fields these tests read; the cast stands in for the rest of a header.
const header = (id: string) => ({ msg_id: id, msg_type: 'execute_request', username: 'u', date: 'd', version: '5.3' }) as unknown as Header;

function setup(fallback: ReturnType<typeof newCell> | null = null) {
  const sent: [string, string, string][] = [];
  const iopub = { stream: (parent: { msg_id: string }, name: string, text: string) => sent.push([parent.msg_id, name, text]) } as unknown as IOPubChannel;
  const cap = new OutputCapture({ iopub, fallbackCell: () => fallback });
  const direct: { self: unknown; args: unknown[] }[] = [];
  const stream = {
    write(this: unknown, ...args: unknown[]) {
      direct.push({ self: this, args });
      return false;
    },
  };
  (cap as unknown as { hook(n: string, s: unknown): void }).hook('stdout', stream);
  const write = stream.write as unknown as (chunk: unknown, enc?: unknown, cb?: unknown) => boolean;
  return { sent, direct, stream, write };
}

describe('output capture: edges', () => {
  it('a write inside a cell goes to that cell, even when another is the fallback; the stream itself gets nothing', () => {
    const { sent, direct, write } = setup(newCell(header('fallback'), 1));
    const cell = newCell(header('mine'), 2);
    assert.equal(cellContext.run(cell, () => write('hello')), true);
    assert.deepEqual(sent, [['mine', 'stdout', 'hello']]);
    assert.deepEqual(direct, []);
  });

  it('outside any cell: the fallback cell; with none, the original stream, called on itself with the text', () => {
    const f = setup(newCell(header('fallback'), 1));
    f.write('x');
    assert.deepEqual(f.sent, [['fallback', 'stdout', 'x']]);
    const n = setup(null);
    assert.equal(n.write(Buffer.from('raw')), true);
    assert.deepEqual(n.sent, []);
    assert.equal(n.direct.length, 1);
    assert.equal(n.direct[0].self, n.stream);
    assert.deepEqual(n.direct[0].args, ['raw']);
  });

  it('strings: utf8 (either spelling) or no encoding as they are, even unpaired surrogates; another encoding decoded', () => {
    const { sent, write } = setup(newCell(header('c'), 1));
    const odd = 'a\ud800b';
    write(odd);
    write(odd, 'utf8');
    write(odd, 'utf-8');
    write('68690a', 'hex');
    write('aGk=', 'base64');
    write(odd, () => undefined);
    assert.deepEqual(sent.map((s) => s[2]), [odd, odd, odd, 'hi\n', 'hi', odd]);
  });

  it('bytes: decoded as a UTF-8 stream, a character split across writes kept whole, per stream', () => {
    const { sent, write } = setup(newCell(header('c'), 1));
    const euro = Buffer.from('€');
    write(euro.subarray(0, 2));
    write(euro.subarray(2));
    write(new Uint8Array([0x41]));
    write(12);
    assert.deepEqual(sent.map((s) => s[2]), ['', '€', 'A', '12']);
  });

  it('the callback, given second or third, runs on a later tick', async () => {
    const { write } = setup(newCell(header('c'), 1));
    const order: string[] = [];
    write('a', () => order.push('second-arg'));
    write('b', 'utf8', () => order.push('third-arg'));
    write('c', 'utf8', 'not a function');
    order.push('sync');
    await new Promise((r) => setImmediate(r));
    assert.deepEqual(order, ['sync', 'second-arg', 'third-arg']);
  });

  it('install hooks process.stdout and process.stderr, each with its own name', () => {
    const sent: [string, string][] = [];
    const iopub = { stream: (_p: unknown, name: string, text: string) => sent.push([name, text]) } as unknown as IOPubChannel;
    const out = process.stdout.write;
    const err = process.stderr.write;
    try {
      new OutputCapture({ iopub, fallbackCell: () => null }).install();
      cellContext.run(newCell(header('c'), 1), () => {
        process.stdout.write('o');
        process.stderr.write(Buffer.from([0xe2, 0x82]));
        process.stdout.write(Buffer.from([0xac]));
        process.stderr.write(Buffer.from([0xac]));
      });
    } finally {
      process.stdout.write = out;
      process.stderr.write = err;
    }
    assert.deepEqual(sent, [['stdout', 'o'], ['stderr', ''], ['stdout', '\ufffd'], ['stderr', '€']]);
  });
});
