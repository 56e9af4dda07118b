// The new-user path of interrupts and user arms, as JupyterLab drives it: a real `jupyter server` (private Jupyter
// folders, a token, a random port) runs the gdnlab kernel with the real gdnlab package on the host backend, and
// @jupyterlab/services interrupts it — Jupyter's interrupt is SIGINT to the kernel's whole process group, the
// user-arm worker included (docs/USER-ARMS.md, "Isolation"). An interrupt while idle leaves the next user-arm call
// working; an interrupt during a user-arm call ends that cell with KeyboardInterrupt and the next call works.

import assert from 'assert';
import { ChildProcess } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { KernelManager, KernelMessage, Session, SessionManager } from '@jupyterlab/services';
import { PROJECT_ROOT } from './kernel-client';
import { startJupyterServer, stopJupyterServer } from './jupyter-server';
import { installKernel, jupyterSandbox, JupyterSandbox } from './python-env';
import { FAULTS, REG16_SOURCE } from '../arms/sources';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Run {
  reply: KernelMessage.IExecuteReplyMsg;
  iopub: KernelMessage.IIOPubMessage[];
}

const streamText = (iopub: KernelMessage.IIOPubMessage[]) =>
  iopub.filter((m) => m.header.msg_type === 'stream').map((m) => (m.content as KernelMessage.IStreamMsg['content']).text).join('');

function resultText(r: Run): string {
  const res = r.iopub.find((m) => m.header.msg_type === 'execute_result');
  const err = r.iopub.find((m) => m.header.msg_type === 'error')?.content as KernelMessage.IErrorMsg['content'] | undefined;
  assert.ok(res, `an execute_result, got ${err ? `${err.ename}: ${err.evalue}` : r.iopub.map((m) => m.header.msg_type).join(', ')}`);
  return (res!.content as KernelMessage.IExecuteResultMsg['content']).data['text/plain'] as string;
}

describe('user arms and interrupts through jupyter server and @jupyterlab/services', function () {
  this.timeout(300000);
  let sandbox: JupyterSandbox;
  let server: ChildProcess | undefined;
  let serverLog: () => string = () => '';
  let cache: string;
  let kernelManager: KernelManager;
  let sessionManager: SessionManager;
  let session: Session.ISessionConnection;

  const kernel = () => {
    const k = session.kernel;
    if (!k) throw new Error('the session has no kernel');
    return k;
  };

  async function run(code: string, onIOPub?: (m: KernelMessage.IIOPubMessage) => void): Promise<Run> {
    const future = kernel().requestExecute({ code });
    const iopub: KernelMessage.IIOPubMessage[] = [];
    future.onIOPub = (m) => {
      iopub.push(m);
      onIOPub?.(m);
    };
    const reply = (await future.done) as KernelMessage.IExecuteReplyMsg;
    return { reply, iopub };
  }

  /** reg16 against scalar on the quick case: '0' mismatching elements when the call works. */
  const userArmCall = () => run(`const again = await gdn.conv.forward(inputs, { arm: 'reg16' });
gdn.countBitMismatches(again.out, ref.out) + gdn.countBitMismatches(again.convState, ref.convState)`);

  before(async function () {
    sandbox = jupyterSandbox();
    cache = fs.mkdtempSync(path.join(os.tmpdir(), 'gdnlab-arm-cache-'));
    installKernel(sandbox, ['--env', `GDNLAB_PACKAGE_ROOT=${PROJECT_ROOT}`, '--env', 'GDN_BACKEND=host', '--env', `GDNLAB_ARM_CACHE=${cache}`]);
    const started = await startJupyterServer(sandbox);
    server = started.server;
    serverLog = started.log;
    const settings = started.settings;
    kernelManager = new KernelManager({ serverSettings: settings });
    sessionManager = new SessionManager({ kernelManager, serverSettings: settings });
    await sessionManager.ready;
    session = await sessionManager.startNew({ path: 'notebooks/user-arm-interrupt.ipynb', name: 'user-arm-interrupt.ipynb', type: 'notebook', kernel: { name: 'gdnlab' } });
    await kernel().info;
    const spin = FAULTS.find((f) => f.name === 'fault-spin')!.source;
    const setup = await run(`import * as gdn from 'gdnlab';
const c = gdn.check.convMatrix({ quick: true })[0];
const inputs = gdn.check.makeConvInputs(c);
const ref = await gdn.conv.forward(inputs, { arm: 'scalar' });
gdn.conv.defineArm({ name: 'reg16', source: ${JSON.stringify(REG16_SOURCE)}, tokensPerProgram: 16 });
gdn.conv.defineArm({ name: 'fault-spin', source: ${JSON.stringify(spin)}, timeLimitMs: 60000 });
gdn.activeBackend().kind`);
    assert.strictEqual(resultText(setup), "'host'");
  });

  after(async () => {
    await stopJupyterServer(server, session, sessionManager, kernelManager);
    sandbox?.cleanup();
    if (cache) fs.rmSync(cache, { recursive: true, force: true });
  });

  it('an interrupt while the kernel is idle: the next user-arm call succeeds', async () => {
    assert.strictEqual(resultText(await userArmCall()), '0', 'the worker runs');
    await kernel().interrupt();
    await sleep(500);
    const r = await userArmCall();
    assert.strictEqual(r.reply.content.status, 'ok', streamText(r.iopub));
    assert.strictEqual(resultText(r), '0');
  });

  it('an interrupt during a user-arm call ends that cell with KeyboardInterrupt; the next call succeeds', async () => {
    let started = false;
    const t0 = Date.now();
    const spinning = run(`console.log('calling'); await gdn.conv.forward(inputs, { arm: 'fault-spin' });`, (m) => {
      if (m.header.msg_type === 'stream') started = true;
    });
    while (!started) await sleep(50);
    await sleep(1000);  // the arm spins in the worker now
    await kernel().interrupt();
    const r = await spinning;
    assert.ok(Date.now() - t0 < 30000, `the cell ended after ${Date.now() - t0} ms, far below the arm's 60 s limit`);
    assert.strictEqual(r.reply.content.status, 'error');
    const err = r.iopub.find((m) => m.header.msg_type === 'error')!.content as KernelMessage.IErrorMsg['content'];
    assert.strictEqual(err.ename, 'KeyboardInterrupt', err.evalue);
    const next = await userArmCall();
    assert.strictEqual(next.reply.content.status, 'ok', streamText(next.iopub));
    assert.strictEqual(resultText(next), '0');
  });
});
