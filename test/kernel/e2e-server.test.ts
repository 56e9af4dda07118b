// End to end, as JupyterLab uses the kernel: a real `jupyter server` (from the project venv, on
// 127.0.0.1, a random port, a token, private temp Jupyter folders) started over the project root,
// and the gdnlab kernel driven through @jupyterlab/services with a session path inside
// notebooks/, so the kernel runs in notebooks/ as it does for a notebook opened in the UI.

import assert from 'assert';
import { ChildProcess } from 'child_process';
import path from 'path';
import { KernelManager, KernelMessage, ServerConnection, Session, SessionManager } from '@jupyterlab/services';
import { FIXTURE_PACKAGE, PROJECT_ROOT } from './kernel-client';
import { startJupyterServer, stopJupyterServer } from './jupyter-server';
import { installKernel, jupyterSandbox, JupyterSandbox } from './python-env';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Run {
  reply: KernelMessage.IExecuteReplyMsg;
  iopub: KernelMessage.IIOPubMessage[];
}

function streamText(iopub: KernelMessage.IIOPubMessage[]): string {
  return iopub
    .filter((m) => m.header.msg_type === 'stream')
    .map((m) => (m.content as KernelMessage.IStreamMsg['content']).text)
    .join('');
}

function outputsOf(iopub: KernelMessage.IIOPubMessage[], type: string): KernelMessage.IIOPubMessage[] {
  return iopub.filter((m) => m.header.msg_type === type);
}

describe('kernel end to end through jupyter server and @jupyterlab/services', function () {
  this.timeout(120000);
  let sandbox: JupyterSandbox;
  let server: ChildProcess | undefined;
  let serverLog: () => string = () => '';
  let settings: ServerConnection.ISettings;
  let kernelManager: KernelManager;
  let sessionManager: SessionManager;
  let session: Session.ISessionConnection;

  const kernel = () => {
    const k = session.kernel;
    if (!k) throw new Error('the session has no kernel');
    return k;
  };

  /** Runs a cell like a notebook does; collects the IOPub messages of this request. */
  async function run(code: string, opts: Partial<KernelMessage.IExecuteRequestMsg['content']> = {}, onIOPub?: (m: KernelMessage.IIOPubMessage) => void): Promise<Run> {
    const future = kernel().requestExecute({ code, ...opts });
    const iopub: KernelMessage.IIOPubMessage[] = [];
    future.onIOPub = (m) => {
      iopub.push(m);
      onIOPub?.(m);
    };
    const reply = (await future.done) as KernelMessage.IExecuteReplyMsg;
    return { reply, iopub };
  }

  before(async function () {
    sandbox = jupyterSandbox();
    installKernel(sandbox, ['--env', `GDNLAB_PACKAGE_ROOT=${FIXTURE_PACKAGE}`]);
    const started = await startJupyterServer(sandbox);
    server = started.server;
    serverLog = started.log;
    settings = started.settings;
    kernelManager = new KernelManager({ serverSettings: settings });
    sessionManager = new SessionManager({ kernelManager, serverSettings: settings });
    await sessionManager.ready;
    session = await sessionManager.startNew({ path: 'notebooks/kernel-e2e.ipynb', name: 'kernel-e2e.ipynb', type: 'notebook', kernel: { name: 'gdnlab' } });
    await kernel().info;
  });

  after(async () => {
    await stopJupyterServer(server, session, sessionManager, kernelManager);
    sandbox?.cleanup();
  });

  it('runs the kernel in the notebook\'s folder (notebooks/)', async () => {
    assert.strictEqual((await kernel().info).implementation, 'gdnlab');
    const r = await run('process.cwd()');
    const res = outputsOf(r.iopub, 'execute_result')[0].content as KernelMessage.IExecuteResultMsg['content'];
    assert.strictEqual(res.data['text/plain'], `'${path.join(PROJECT_ROOT, 'notebooks')}'`);
  });

  it('shows a library value\'s rich bundle as the execute_result', async () => {
    const r = await run("import * as gdn from 'gdnlab';\ngdn.richValue('e2e')");
    assert.strictEqual(r.reply.content.status, 'ok');
    const res = outputsOf(r.iopub, 'execute_result')[0].content as KernelMessage.IExecuteResultMsg['content'];
    assert.deepStrictEqual(Object.keys(res.data).sort(), ['application/vnd.plotly.v1+json', 'image/svg+xml', 'text/plain']);
    assert.strictEqual(res.data['text/plain'], 'RichValue(e2e)');
  });

  it('runs a good cell sent at once after an error cell', async () => {
    const bad = run('throw new TypeError("bad cell")');
    const good = run('"good cell"');
    const [b, g] = await Promise.all([bad, good]);
    assert.strictEqual(b.reply.content.status, 'error');
    const err = outputsOf(b.iopub, 'error')[0].content as KernelMessage.IErrorMsg['content'];
    assert.deepStrictEqual([err.ename, err.evalue], ['TypeError', 'bad cell']);
    assert.strictEqual(g.reply.content.status, 'ok');
    const res = outputsOf(g.iopub, 'execute_result')[0].content as KernelMessage.IExecuteResultMsg['content'];
    assert.strictEqual(res.data['text/plain'], "'good cell'");
  });

  it('aborts a cell queued behind a failing one when stop_on_error is set (as JupyterLab cells do), then runs the next', async () => {
    const bad = run('await new Promise((r) => setTimeout(r, 300)); throw new Error("stop here")', { stop_on_error: true });
    const queued = run('"queued"', { stop_on_error: true });
    const [b, q] = await Promise.all([bad, queued]);
    assert.strictEqual(b.reply.content.status, 'error');
    assert.strictEqual(q.reply.content.status as string, 'aborted');
    assert.strictEqual((await run('"next"')).reply.content.status, 'ok');
  });

  it('delivers 100,000 printed lines and completes the cell', async () => {
    const r = await run('for (let i = 0; i < 100000; i++) console.log(i);');
    assert.strictEqual(r.reply.content.status, 'ok');
    const text = streamText(r.iopub);
    const expected = Array.from({ length: 100000 }, (_, i) => `${i}\n`).join('');
    assert.strictEqual(text.length, expected.length);
    assert.ok(text === expected, 'all lines, in order');
    const last = r.iopub[r.iopub.length - 1];
    assert.strictEqual(last.header.msg_type, 'status');
    assert.strictEqual((last.content as KernelMessage.IStatusMsg['content']).execution_state, 'idle');
  });

  it('interrupts a busy cell; the kernel keeps working and no late output lands in a later cell', async () => {
    // A synchronous busy loop, stopped through the server's interrupt (SIGINT to the kernel).
    let spinning = false;
    const busy = run('console.log("spinning"); while (true) {}', {}, (m) => {
      if (m.header.msg_type === 'stream') spinning = true;
    });
    while (!spinning) await sleep(50);
    await kernel().interrupt();
    const b = await busy;
    assert.strictEqual(b.reply.content.status, 'error');
    assert.strictEqual((b.reply.content as KernelMessage.IReplyErrorContent).ename, 'KeyboardInterrupt');

    // An async cell that leaves output behind, interrupted while it waits.
    const lateParents: string[] = [];
    const watch = (_: unknown, msg: KernelMessage.IMessage) => {
      if (msg.header.msg_type === 'stream' && /left behind/.test((msg.content as KernelMessage.IStreamMsg['content']).text)) {
        lateParents.push((msg.parent_header as KernelMessage.IHeader).msg_id);
      }
    };
    kernel().iopubMessage.connect(watch);
    let waiting = false;
    const pending = run('setTimeout(() => console.log("left behind"), 800);\nconsole.log("waiting");\nawait new Promise((r) => setTimeout(r, 60000));', {}, (m) => {
      if (m.header.msg_type === 'stream') waiting = true;
    });
    while (!waiting) await sleep(50);
    await kernel().interrupt();
    const p = await pending;
    assert.strictEqual((p.reply.content as KernelMessage.IReplyErrorContent).ename, 'KeyboardInterrupt');
    const later = await run('console.log("later cell"); await new Promise((r) => setTimeout(r, 1500)); 7');
    kernel().iopubMessage.disconnect(watch);
    assert.strictEqual(streamText(later.iopub), 'later cell\n', 'the later cell has only its own output');
    assert.deepStrictEqual(lateParents, [p.reply.parent_header.msg_id], 'the late output went out under the interrupted cell');
    const res = outputsOf(later.iopub, 'execute_result')[0].content as KernelMessage.IExecuteResultMsg['content'];
    assert.strictEqual(res.data['text/plain'], '7');
  });

  it('restarts: a fresh kernel that counts from 1 and has forgotten earlier cells', async () => {
    await run('const beforeRestart = 1;');
    await kernel().restart();
    const r = await run('typeof (globalThis as any).beforeRestart');
    assert.strictEqual(r.reply.content.status, 'ok');
    assert.strictEqual(r.reply.content.execution_count, 1);
    const res = outputsOf(r.iopub, 'execute_result')[0].content as KernelMessage.IExecuteResultMsg['content'];
    assert.strictEqual(res.data['text/plain'], "'undefined'");
    const again = await run("import * as gdn from 'gdnlab';\ngdn.add(40, 2)");
    assert.strictEqual((outputsOf(again.iopub, 'execute_result')[0].content as KernelMessage.IExecuteResultMsg['content']).data['text/plain'], '42');
    assert.doesNotMatch(serverLog(), /terminate called|Napi::Error/);
  });
});
