// stop_on_error, as ipykernel implements it: when a cell fails and its request had
// stop_on_error=true, the execute_requests already queued behind it are answered "aborted";
// requests sent after the failure run normally (stock tslab aborted everything arriving within
// 200 ms of an error).

import assert from 'assert';
import { KernelClient, executeRequest, ofType, streamText } from './kernel-client';

const request = executeRequest;

describe('kernel stop_on_error', function () {
  this.timeout(30000);
  let k: KernelClient;

  before(async () => {
    k = await KernelClient.start();
  });
  after(async () => {
    await k?.close();
  });

  it('runs a good cell sent right after an error cell finished', async () => {
    const bad = await k.execute('throw new Error("first fails")');
    assert.strictEqual(bad.reply.content.status, 'error');
    // Sent at once, well within the 200 ms in which stock tslab aborted every request.
    const good = await k.execute('"second runs"');
    assert.strictEqual(good.reply.content.status, 'ok');
    assert.strictEqual((ofType(good.outputs, 'execute_result')[0].content as any).data['text/plain'], "'second runs'");
  });

  it('aborts execute_requests queued behind a failing async cell (stop_on_error=true)', async () => {
    const failing = k.send('shell', 'execute_request', request('await new Promise((r) => setTimeout(r, 300)); throw new Error("late")'));
    const queued1 = k.send('shell', 'execute_request', request('(globalThis as any).ranQueued1 = true; "q1"'));
    const complete = k.send('shell', 'complete_request', { code: 'Math.ma', cursor_pos: 7 });
    const queued2 = k.send('shell', 'execute_request', request('(globalThis as any).ranQueued2 = true; "q2"'));
    assert.strictEqual((await k.finished(failing)).reply.content.status, 'error');
    for (const id of [queued1, queued2]) {
      const r = await k.finished(id);
      assert.strictEqual(r.reply.content.status, 'aborted');
      assert.deepStrictEqual(r.outputs, [], 'an aborted request outputs nothing');
    }
    assert.strictEqual((await k.reply(complete)).content.status, 'ok', 'non-execute requests in the queue are still answered');
    const after = await k.execute('[(globalThis as any).ranQueued1, (globalThis as any).ranQueued2]');
    assert.strictEqual((ofType(after.outputs, 'execute_result')[0].content as any).data['text/plain'], '[ undefined, undefined ]');
  });

  it('aborts requests that reached the socket while a synchronous cell blocked the kernel', async () => {
    const failing = k.send('shell', 'execute_request', request('const t0 = Date.now(); while (Date.now() - t0 < 400) {} throw new Error("sync fail")'));
    await new Promise((r) => setTimeout(r, 100));
    const queued = k.send('shell', 'execute_request', request('"should not run"'));
    assert.strictEqual((await k.finished(failing)).reply.content.status, 'error');
    assert.strictEqual((await k.finished(queued)).reply.content.status, 'aborted');
    const next = await k.execute('"runs again"');
    assert.strictEqual(next.reply.content.status, 'ok');
  });

  it('runs queued requests when the failing request had stop_on_error=false', async () => {
    const failing = k.send('shell', 'execute_request', request('await new Promise((r) => setTimeout(r, 200)); throw new Error("tolerated")', false));
    const queued = k.send('shell', 'execute_request', request('console.log("queued ran")'));
    assert.strictEqual((await k.finished(failing)).reply.content.status, 'error');
    const r = await k.finished(queued);
    assert.strictEqual(r.reply.content.status, 'ok');
    assert.strictEqual(streamText(r.outputs), 'queued ran\n');
  });

  it('does not abort the queue after a failing silent request', async () => {
    const failing = k.send('shell', 'execute_request', { ...request('await new Promise((r) => setTimeout(r, 200)); throw new Error("silent")'), silent: true });
    const queued = k.send('shell', 'execute_request', request('"after silent"'));
    const f = await k.finished(failing);
    assert.strictEqual(f.reply.content.status, 'error');
    assert.strictEqual(ofType(f.outputs, 'error').length, 0, 'a silent request broadcasts no error');
    assert.strictEqual((await k.finished(queued)).reply.content.status, 'ok');
  });
});
