// Interrupts (SIGINT, as the kernelspec's interrupt_mode "signal" asks Jupyter to send): a
// running cell ends with KeyboardInterrupt, the kernel keeps working, and output from work the
// interrupted cell left behind never lands in a later cell.

import assert from 'assert';
import { Header, Message } from '../../kernel/wire';
import { KernelClient, executeRequest, ofType, streamText } from './kernel-client';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const request = executeRequest;

function errorOf(outputs: Message[]): Record<string, any> {
  const e = ofType(outputs, 'error');
  assert.strictEqual(e.length, 1, `one error output, got ${outputs.map((m) => m.header.msg_type)}`);
  return e[0].content as Record<string, any>;
}

describe('kernel interrupt', function () {
  this.timeout(30000);
  let k: KernelClient;

  before(async () => {
    k = await KernelClient.start();
  });
  after(async () => {
    await k?.close();
  });

  /** Starts a cell, waits until it printed `marker`, then interrupts it with `interrupt`. */
  async function startAndInterrupt(code: string, marker: string, interrupt: () => void) {
    const id = k.send('shell', 'execute_request', request(code));
    await k.waitFor(() => streamText(k.messagesOf(id)).includes(marker), 10000, `"${marker}" from the running cell`);
    interrupt();
    const r = await k.finished(id, 10000);
    return { id, ...r };
  }

  it('stops a synchronous busy loop with KeyboardInterrupt, and the kernel keeps working', async () => {
    const r = await startAndInterrupt('console.log("spinning"); while (true) {}', 'spinning', () => setTimeout(() => k.signal('SIGINT'), 200));
    assert.strictEqual(r.reply.content.status, 'error');
    assert.strictEqual(r.reply.content.ename, 'KeyboardInterrupt');
    assert.strictEqual(errorOf(r.outputs).ename, 'KeyboardInterrupt');
    const next = await k.execute('6 * 7');
    assert.strictEqual((ofType(next.outputs, 'execute_result')[0].content as any).data['text/plain'], '42');
  });

  it('stops a cell waiting on a long top-level await', async () => {
    const t0 = Date.now();
    const r = await startAndInterrupt('console.log("waiting"); await new Promise((r) => setTimeout(r, 60000));', 'waiting', () => k.signal('SIGINT'));
    assert.ok(Date.now() - t0 < 10000);
    assert.strictEqual(errorOf(r.outputs).ename, 'KeyboardInterrupt');
    assert.strictEqual(r.reply.content.status, 'error');
  });

  it('answers heartbeats while a synchronous cell blocks the main thread', async () => {
    const id = k.send('shell', 'execute_request', request('console.log("busy"); while (true) {}'));
    await k.waitFor(() => streamText(k.messagesOf(id)).includes('busy'), 10000, 'the busy loop to start');
    await sleep(100);
    const rtt = await k.heartbeat(2000);
    assert.ok(rtt < 2000);
    k.signal('SIGINT');
    assert.strictEqual((await k.finished(id)).reply.content.ename, 'KeyboardInterrupt');
  });

  it('aborts the interrupted cell\'s signal() so library code can cancel its work', async () => {
    const code = `import * as gdn from 'gdnlab';
gdn.abortReason().then((reason) => console.log('abort seen: ' + reason));
console.log('armed');
await new Promise((r) => setTimeout(r, 60000));`;
    const r = await startAndInterrupt(code, 'armed', () => k.signal('SIGINT'));
    assert.strictEqual(errorOf(r.outputs).ename, 'KeyboardInterrupt');
    await k.waitFor(() => streamText(k.messagesOf(r.id)).includes('abort seen: KeyboardInterrupt'), 5000, 'the abort listener output');
  });

  it('sends output of work an interrupted cell left behind with that cell\'s parent, never in the next cell', async () => {
    const code = `setTimeout(() => console.log('stray timer output'), 700);
console.log('started');
await new Promise((r) => setTimeout(r, 900));
console.log('stray continuation output');
await new Promise((r) => setTimeout(r, 60000));`;
    const a = await startAndInterrupt(code, 'started', () => k.signal('SIGINT'));
    assert.strictEqual(errorOf(a.outputs).ename, 'KeyboardInterrupt');
    const aDone = k.messagesOf(a.id).length;
    // B runs while A's leftovers fire (at 700 ms and 900 ms after A started).
    const b = await k.execute('console.log("B start"); await new Promise((r) => setTimeout(r, 1500)); console.log("B end");');
    assert.strictEqual(streamText(b.outputs), 'B start\nB end\n', 'B has only its own output');
    const lateA = k.messagesOf(a.id).slice(aDone);
    assert.strictEqual(streamText(lateA), 'stray timer output\nstray continuation output\n', 'the leftovers are attributed to A');
    const bId = (b.reply.parentHeader as Header).msg_id;
    assert.ok(lateA.every((m) => (m.parentHeader as Header).msg_id !== bId));
  });

  it('handles interrupt_request on the control channel', async () => {
    const id = k.send('shell', 'execute_request', request('console.log("long"); await new Promise((r) => setTimeout(r, 60000));'));
    await k.waitFor(() => streamText(k.messagesOf(id)).includes('long'), 10000);
    const reply = await k.request('interrupt_request', {}, 'control');
    assert.deepStrictEqual(reply.content, { status: 'ok' });
    assert.strictEqual((await k.finished(id)).reply.content.ename, 'KeyboardInterrupt');
  });

  it('ignores SIGINT while idle', async () => {
    k.signal('SIGINT');
    await sleep(200);
    const r = await k.execute('"still alive"');
    assert.strictEqual(r.reply.content.status, 'ok');
    assert.strictEqual(k.exitCode, undefined);
  });
});
