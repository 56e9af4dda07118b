// Bursty output: nothing dropped, everything in order, batched into stream messages of bounded
// size, and the final idle always arrives.

import assert from 'assert';
import { Header } from '../../kernel/wire';
import { KernelClient, ofType, streamText } from './kernel-client';

const MAX_STREAM_CHARS = 64 * 1024;

describe('kernel output under bursts', function () {
  this.timeout(60000);
  let k: KernelClient;

  before(async () => {
    k = await KernelClient.start();
  });
  after(async () => {
    await k?.close();
  });

  it('delivers 100,000 printed lines in order, batched, followed by the reply and the final idle', async () => {
    const t0 = Date.now();
    const r = await k.execute('for (let i = 0; i < 100000; i++) console.log(i);\n"done"', {}, 45000);
    const elapsed = Date.now() - t0;
    assert.strictEqual(r.reply.content.status, 'ok');
    const streams = ofType(r.outputs, 'stream');
    const expected = Array.from({ length: 100000 }, (_, i) => `${i}\n`).join('');
    const text = streamText(r.outputs);
    assert.strictEqual(text.length, expected.length, 'every character arrived');
    assert.ok(text === expected, 'lines arrived complete and in order');
    assert.ok(streams.length >= Math.ceil(expected.length / MAX_STREAM_CHARS), `batched into ${streams.length} messages`);
    assert.ok(streams.length <= 100, `${streams.length} stream messages for 100,000 lines: batching works`);
    for (const m of streams) assert.ok(String(m.content.text).length <= MAX_STREAM_CHARS, 'each stream message is at most 64 Ki chars');
    // The result comes after all the text, then idle is the very last message.
    const types = r.iopub.map((m) => m.header.msg_type);
    assert.strictEqual(types[types.length - 2], 'execute_result');
    assert.deepStrictEqual(r.iopub[r.iopub.length - 1].content, { execution_state: 'idle' });
    assert.ok(elapsed < 40000, `took ${elapsed} ms`);
  });

  it('keeps stdout and stderr interleaving in order', async () => {
    const r = await k.execute('for (let i = 0; i < 5; i++) { console.log(`out ${i}`); console.error(`err ${i}`); }');
    const seq = ofType(r.outputs, 'stream').map((m) => `${m.content.name}:${m.content.text}`);
    const expected: string[] = [];
    for (let i = 0; i < 5; i++) expected.push(`stdout:out ${i}\n`, `stderr:err ${i}\n`);
    assert.deepStrictEqual(seq, expected);
  });

  it('joins consecutive writes to one stream into one message', async () => {
    const r = await k.execute('for (let i = 0; i < 50; i++) process.stdout.write("ab");');
    const streams = ofType(r.outputs, 'stream');
    assert.strictEqual(streams.length, 1);
    assert.strictEqual(streams[0].content.text, 'ab'.repeat(50));
  });

  it('sends output of a long async cell while it runs, not only at the end', async () => {
    const id = k.send('shell', 'execute_request', { code: 'console.log("early"); await new Promise((r) => setTimeout(r, 1500)); console.log("late");', silent: false, store_history: true, user_expressions: {}, allow_stdin: false, stop_on_error: true });
    await k.waitFor(() => streamText(k.messagesOf(id)) === 'early\n', 1200, '"early" before the cell ends');
    assert.strictEqual(k.hasReply(id), false, 'the cell is still running');
    const r = await k.finished(id);
    assert.strictEqual(streamText(r.outputs), 'early\nlate\n');
  });

  it('sends output of a synchronous cell while the cell still blocks the main thread', async () => {
    const id = k.send('shell', 'execute_request', { code: 'console.log("before"); console.log("the loop"); const t0 = Date.now(); while (Date.now() - t0 < 1500) {}', silent: false, store_history: true, user_expressions: {}, allow_stdin: false, stop_on_error: true });
    await k.waitFor(() => streamText(k.messagesOf(id)) === 'before\nthe loop\n', 1200, 'output from inside the synchronous loop');
    assert.strictEqual(k.hasReply(id), false, 'the cell is still running');
    assert.strictEqual((await k.finished(id)).reply.content.status, 'ok');
  });

  it('delivers 2,000 display updates and the final idle under a burst', async () => {
    const r = await k.execute(`
const kc = (globalThis as any)[Symbol.for('gdnlab.kernel')];
kc.display({ 'text/plain': 'u0' }, {}, { displayId: 'burst' });
for (let i = 1; i <= 2000; i++) kc.display({ 'text/plain': 'u' + i }, {}, { displayId: 'burst', update: true });`);
    const updates = ofType(r.outputs, 'update_display_data');
    assert.strictEqual(updates.length, 2000);
    assert.deepStrictEqual((updates[1999].content as any).data, { 'text/plain': 'u2000' });
    assert.ok(k.isIdle((r.reply.parentHeader as Header).msg_id));
  });

  it('handles multi-byte characters split across Buffer writes', async () => {
    const r = await k.execute(`const bytes = Buffer.from('é€😀\\n'); for (const b of bytes) process.stdout.write(Buffer.from([b]));`);
    assert.strictEqual(streamText(r.outputs), 'é€😀\n');
  });
});
