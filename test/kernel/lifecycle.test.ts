// Shutdown (with and without restart) over control and shell; a restart is the client starting
// a new kernel process on the same connection, as jupyter_client does.

import assert from 'assert';
import { Header } from '../../kernel/wire';
import { KernelClient, ofType } from './kernel-client';

describe('kernel shutdown and restart', function () {
  this.timeout(60000);
  const clients: KernelClient[] = [];
  after(async () => {
    for (const c of clients) await c.close();
  });

  it('answers shutdown_request(restart=true) on control, exits cleanly, and a relaunch on the same ports works', async () => {
    const first = await KernelClient.start();
    clients.push(first);
    await first.execute('const beforeRestart = 1;');
    const id = first.send('control', 'shutdown_request', { restart: true });
    const reply = await first.reply(id);
    assert.deepStrictEqual(reply.content, { status: 'ok', restart: true });
    assert.strictEqual(reply.header.msg_type, 'shutdown_reply');
    await first.waitFor(() => first.isIdle(id), 5000, 'idle after the shutdown');
    assert.strictEqual(await first.waitExit(), 0);
    assert.doesNotMatch(first.stderr, /terminate called|Napi::Error|Aborted/);

    const second = await KernelClient.start({ connection: first.connection, cwd: first.cwd });
    clients.push(second);
    const r = await second.execute('typeof (globalThis as any).beforeRestart');
    assert.strictEqual(r.reply.content.execution_count, 1, 'a new kernel counts from 1');
    assert.strictEqual((ofType(r.outputs, 'execute_result')[0].content as any).data['text/plain'], "'undefined'");
    const bad = await second.execute('beforeRestart');
    assert.strictEqual((ofType(bad.outputs, 'error')[0].content as any).ename, 'CompileError', 'declarations are gone');
  });

  it('shuts down from the shell channel while a cell still has work pending', async () => {
    const k = await KernelClient.start();
    clients.push(k);
    await k.execute('setInterval(() => console.log("tick"), 20); "ticking"');
    const id = k.send('shell', 'shutdown_request', { restart: false });
    assert.deepStrictEqual((await k.reply(id)).content, { status: 'ok', restart: false });
    // On failure, say how it ended: a signal (an abort in teardown) and the kernel's own output.
    assert.strictEqual(await k.waitExit(), 0, `the kernel ended with ${k.exitSignal ?? `code ${k.exitCode}`}; its output:\n${k.stderr.slice(-3000)}`);
    assert.ok(k.messagesOf(id).some((m) => m.header.msg_type === 'status' && m.content.execution_state === 'idle'));
    assert.doesNotMatch(k.stderr, /terminate called|Napi::Error/);
    assert.ok(k.iopubLog.every((m) => typeof (m.parentHeader as Header) === 'object'));
  });

  it('ends with the exit code when a cell calls process.exit(), closing its sockets first', async () => {
    const k = await KernelClient.start();
    clients.push(k);
    k.send('shell', 'execute_request', { code: 'process.exit(3)', silent: false, store_history: true, user_expressions: {}, allow_stdin: false, stop_on_error: true });
    assert.strictEqual(await k.waitExit(), 3);
    assert.strictEqual(k.proc.signalCode, null, 'not killed by a signal (SIGABRT from zeromq)');
    assert.doesNotMatch(k.stderr, /terminate called|Napi::Error/);
  });
});
