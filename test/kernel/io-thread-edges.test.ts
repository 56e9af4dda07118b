// kernel/io-thread.ts and kernel/io-worker.ts in process. worker_threads' Worker, parentPort and
// workerData, and zeromq's Publisher / Reply are replaced (CommonJS exports, restored after each test)
// by recorders: the worker module is loaded afresh into the test's own thread with a stand-in port, and
// startIoThread talks to a stand-in Worker whose events the test scripts. Checked: which commands the
// main thread posts, how the worker turns them into IOPub messages (order, batching, drain ids), the
// heartbeat echo, start-up failures and the fallback to the main thread, closing (close, closeNow, the
// closed flag) and what is logged. Written against the survivors of a StrykerJS run (docs/TESTING.md).

import assert from 'assert';
import { EventEmitter } from 'events';
import path from 'path';
import { startIoThread } from '../../kernel/io-thread';
import { IoCommand, IoEvent, IoWorkerData } from '../../kernel/io-worker';
import { decode, Header, newHeader, Signer } from '../../kernel/wire';
import { FakeSocket, settle } from './fake-sockets';

/* eslint-disable @typescript-eslint/no-var-requires */
const wt = require('worker_threads') as Record<string, unknown>;
const zmq = require('zeromq') as Record<string, unknown>;
/* eslint-enable @typescript-eslint/no-var-requires */

const signer = new Signer('hmac-sha256', 'k');
const connection = { transport: 'tcp' as const, ip: '10.0.0.1', shell_port: 1, iopub_port: 2, stdin_port: 3, control_port: 4, hb_port: 5, key: 'k', signature_scheme: 'hmac-sha256' };
const cell = (id: string): Header => ({ ...newHeader('execute_request', 'client'), msg_id: id });
const decoded = (s: FakeSocket) => s.sent.map((f) => decode(f, signer));

/** What the tests replace, saved before each test and put back after it. */
let realWt: Record<string, unknown>;
let realZmq: Record<string, unknown>;
let realEnv: string | undefined;

class FakePort extends EventEmitter {
  readonly posted: IoEvent[] = [];
  closed = 0;
  postMessage(e: IoEvent): void {
    this.posted.push(e);
  }
  close(): void {
    this.closed += 1;
  }
  command(cmd: IoCommand): void {
    this.emit('message', cmd);
  }
}

/** Loads io-worker.js afresh with `port` as its parentPort; returns its publisher and heartbeat sockets. */
function loadWorker(port: FakePort, setUp?: (pub: FakeSocket, hb: FakeSocket) => void) {
  const data: IoWorkerData = { iopubEndpoint: 'tcp://x:2', hbEndpoint: 'tcp://x:5', key: 'k', signatureScheme: 'hmac-sha256', session: 'ses', closedFlag: new SharedArrayBuffer(4) } as unknown as IoWorkerData;
  wt.parentPort = port;
  wt.workerData = data;
  if (setUp) {
    const prepare = setUp;
    // Sockets are made as the module loads; let the test prepare them before they are bound.
    zmq.Publisher = class extends FakeSocket {
      constructor(o?: Record<string, unknown>) {
        super(o);
        if (FakeSocket.made.length === 2) prepare(FakeSocket.made[0], FakeSocket.made[1]);
      }
    };
    zmq.Reply = zmq.Publisher;
  }
  const file = require.resolve('../../kernel/io-worker');
  delete require.cache[file];
  require(file);
  wt.parentPort = realWt.parentPort;
  wt.workerData = realWt.workerData;
  const [pub, hb] = FakeSocket.made;
  return { pub, hb, flag: new Int32Array(data.closedFlag) };
}

/** A stand-in Worker: records how it was made and what it was sent; the test emits its events. */
class FakeWorker extends EventEmitter {
  static made: FakeWorker[] = [];
  static throwOnCreate: Error | null = null;
  readonly posted: IoCommand[] = [];
  readonly refs: string[] = [];
  postError: unknown = null;
  onClose: (() => void) | null = null;
  constructor(readonly file: string, readonly options: { workerData: IoWorkerData }) {
    super();
    if (FakeWorker.throwOnCreate) throw FakeWorker.throwOnCreate;
    FakeWorker.made.push(this);
  }
  throwNull = false;
  postMessage(cmd: IoCommand): void {
    if (this.throwNull) throw null;
    if (this.postError) throw this.postError;
    this.posted.push(cmd);
    if (cmd.kind === 'close') this.onClose?.();
  }
  ref(): void {
    this.refs.push('ref');
  }
  unref(): void {
    this.refs.push('unref');
  }
}

/** Starts the IO thread on a FakeWorker that says `first` once it exists. */
async function startOnWorker(first: (w: FakeWorker) => void, logs: string[]) {
  FakeWorker.made = [];
  wt.Worker = FakeWorker;
  delete process.env.GDNLAB_KERNEL_IO_THREAD;
  const started = startIoThread(connection, 'sess', (t) => void logs.push(t));
  const w = FakeWorker.made[0];
  if (w) first(w);
  return { io: await started, w };
}

// Hooks inside this describe only: at the top level of a file they would run around every test of a run.
describe('kernel IO edges', function () {
  beforeEach(() => {
    realWt = { Worker: wt.Worker, parentPort: wt.parentPort, workerData: wt.workerData };
    realZmq = { Publisher: zmq.Publisher, Reply: zmq.Reply };
    realEnv = process.env.GDNLAB_KERNEL_IO_THREAD;
    zmq.Publisher = FakeSocket;
    zmq.Reply = FakeSocket;
    FakeSocket.made = [];
  });
  afterEach(() => {
    Object.assign(wt, realWt);
    Object.assign(zmq, realZmq);
    if (realEnv === undefined) delete process.env.GDNLAB_KERNEL_IO_THREAD;
    else process.env.GDNLAB_KERNEL_IO_THREAD = realEnv;
  });

  describe('kernel IO worker edges (loaded in process)', function () {
    // A change that leaves a request unanswered fails here quickly instead of hanging.
    this.timeout(2000);
    it('binds IOPub and heartbeat, says ready, and turns commands into IOPub messages in order', async () => {
      const port = new FakePort();
      const { pub, hb, flag } = loadWorker(port);
      assert.deepStrictEqual([pub.options, hb.options], [{ linger: 1000, sendTimeout: 0, sendHighWaterMark: 0 }, { linger: 0 }]);
      await settle(3);
      assert.deepStrictEqual([pub.bound, hb.bound], [['tcp://x:2'], ['tcp://x:5']]);
      assert.deepStrictEqual(port.posted, [{ kind: 'ready' }]);
      port.command({ kind: 'stream', parent: cell('a'), name: 'stdout', text: 'one ' });
      port.command({ kind: 'stream', parent: cell('a'), name: 'stdout', text: 'two' });
      assert.strictEqual(pub.sent.length, 0, 'stream text is batched');
      port.command({ kind: 'publish', msgType: 'execute_result', content: { data: { 'text/plain': '1' } }, parent: cell('a'), metadata: { m: 1 } });
      port.command({ kind: 'stream', parent: cell('a'), name: 'stderr', text: 'err' });
      port.command({ kind: 'flush' });
      port.command({ kind: 'stream', parent: cell('b'), name: 'stdout', text: 'tail' });
      port.command({ kind: 'drain', id: 7 });
      const m = decoded(pub);
      assert.deepStrictEqual(m.map((x) => [x.header.msg_type, x.content, (x.parentHeader as Header).msg_id, x.header.session]), [
        ['stream', { name: 'stdout', text: 'one two' }, 'a', 'ses'],
        ['execute_result', { data: { 'text/plain': '1' } }, 'a', 'ses'],
        ['stream', { name: 'stderr', text: 'err' }, 'a', 'ses'],
        ['stream', { name: 'stdout', text: 'tail' }, 'b', 'ses'],
      ]);
      assert.deepStrictEqual(m[1].metadata, { m: 1 });
      assert.deepStrictEqual(port.posted, [{ kind: 'ready' }, { kind: 'drained', id: 7 }]);
      // Heartbeats are echoed.
      hb.push([Buffer.from('ping')]);
      await settle(2);
      assert.deepStrictEqual(hb.sent.map((f) => f.map(String)), [['ping']]);
      // close: batched text goes first, then both sockets close, the flag is set, the port closes.
      port.command({ kind: 'stream', parent: cell('b'), name: 'stdout', text: 'last' });
      port.command({ kind: 'close' });
      assert.strictEqual(decoded(pub).at(-1)!.content.text, 'last');
      assert.deepStrictEqual([pub.closed, hb.closed], [true, true]);
      assert.strictEqual(Atomics.load(flag, 0), 0, 'not before the heartbeat loop has ended');
      await settle(3);
      assert.strictEqual(Atomics.load(flag, 0), 1);
      assert.strictEqual(port.closed, 1);
      assert.deepStrictEqual(port.posted.map((e) => e.kind), ['ready', 'drained']);
    });

    it('a command that cannot be sent, a send that fails, and a heartbeat that stops are logged', async () => {
      const port = new FakePort();
      const { pub, hb } = loadWorker(port);
      await settle(3);
      const big = { n: BigInt(1) };
      port.command({ kind: 'publish', msgType: 'display_data', content: big, parent: cell('a'), metadata: {} });
      port.command({ kind: 'stream', parent: { ...cell('a'), n: BigInt(2) }, name: 'stdout', text: 'x' });
      port.command({ kind: 'flush' });
      port.command({ kind: 'stream', parent: { ...cell('a'), n: BigInt(2) }, name: 'stdout', text: 'y' });
      port.command({ kind: 'drain', id: 1 });
      pub.sendRejects = { error: new Error('EAGAIN') };
      port.command({ kind: 'publish', msgType: 'status', content: {}, parent: {}, metadata: {} });
      pub.sendRejects = { error: 'plain' };
      port.command({ kind: 'publish', msgType: 'status', content: {}, parent: {}, metadata: {} });
      pub.sendRejects = { error: null };
      port.command({ kind: 'publish', msgType: 'status', content: {}, parent: {}, metadata: {} });
      pub.sendRejects = null;
      port.command({ kind: 'publish', msgType: 'odd', content: { toJSON: () => { throw null; } }, parent: {}, metadata: {} });
      await settle(2);
      hb.fail(new Error('ETERM'));
      await settle(2);
      const texts = port.posted.filter((e) => e.kind === 'log').map((e) => (e as { text: string }).text);
      assert.strictEqual(texts.length, 8);
      assert.match(texts[0], /^iopub: could not send a display_data message: Do not know how to serialize a BigInt/);
      assert.match(texts[1], /^iopub: could not send a flush message: Do not know how to serialize a BigInt/);
      assert.match(texts[2], /^iopub: could not send a drain message: Do not know how to serialize a BigInt/);
      assert.deepStrictEqual(texts.slice(3), ['iopub: could not send a odd message: null', 'iopub: send failed: EAGAIN', 'iopub: send failed: plain', 'iopub: send failed: null', 'heartbeat stopped: ETERM']);
      assert.ok(!port.posted.some((e) => e.kind === 'drained'), 'a drain that failed says nothing drained');
    });

    it('a heartbeat failure after closing is not logged', async () => {
      const port = new FakePort();
      const { hb } = loadWorker(port);
      await settle(3);
      hb.closed = true;
      hb.fail(new Error('closed'));
      await settle(2);
      assert.deepStrictEqual(port.posted, [{ kind: 'ready' }]);
    });

    it('a bind that fails closes both sockets and reports failed (Error or not), and closes the port', async () => {
      for (const [err, text] of [[new Error('EADDRINUSE'), 'EADDRINUSE'], ['no such host', 'no such host']] as const) {
        FakeSocket.made = [];
        const port = new FakePort();
        const { pub, hb } = loadWorker(port, (p) => (p.bindError = err as Error));
        await settle(3);
        assert.deepStrictEqual(port.posted, [{ kind: 'failed', error: text }]);
        assert.deepStrictEqual([pub.closed, hb.closed, port.closed], [true, true, 1]);
      }
    });
  });

  describe('kernel IO thread edges (stand-in Worker)', function () {
    // A change that leaves a request unanswered fails here quickly instead of hanging.
    this.timeout(2000);
    it('starts the worker with the endpoints, key and id; once ready it no longer keeps the process alive', async () => {
      const logs: string[] = [];
      const { io, w } = await startOnWorker((w) => w.emit('message', { kind: 'ready' }), logs);
      assert.strictEqual(io.where, 'worker');
      assert.strictEqual(w.file, path.join(path.dirname(require.resolve('../../kernel/io-thread')), 'io-worker.js'));
      const d = w.options.workerData;
      assert.deepStrictEqual({ ...d, closedFlag: null }, { iopubEndpoint: 'tcp://10.0.0.1:2', hbEndpoint: 'tcp://10.0.0.1:5', key: 'k', signatureScheme: 'hmac-sha256', session: 'sess', closedFlag: null });
      assert.ok(d.closedFlag instanceof SharedArrayBuffer && d.closedFlag.byteLength === 4);
      assert.deepStrictEqual(w.refs, ['unref']);
      assert.deepStrictEqual(FakeSocket.made, [], 'no socket on the main thread');

      io.iopub.publish('display_data', { a: 1 }, cell('p'));
      io.iopub.publish('display_data', { a: 2 }, cell('p'), { m: 2 });
      io.iopub.status('busy', cell('p'));
      io.iopub.stream(cell('p'), 'stdout', '');
      io.iopub.stream(cell('p'), 'stderr', 'text');
      io.iopub.flushStreams();
      const withParentId = w.posted.map((c) => ('parent' in c ? { ...c, parent: (c.parent as Header).msg_id } : c));
      assert.deepStrictEqual(withParentId, [
        { kind: 'publish', msgType: 'display_data', content: { a: 1 }, parent: 'p', metadata: {} },
        { kind: 'publish', msgType: 'display_data', content: { a: 2 }, parent: 'p', metadata: { m: 2 } },
        { kind: 'publish', msgType: 'status', content: { execution_state: 'busy' }, parent: 'p', metadata: {} },
        { kind: 'stream', parent: 'p', name: 'stderr', text: 'text' },
        { kind: 'flush' },
      ]);
      assert.deepStrictEqual(w.posted.map((c) => ('parent' in c ? (c.parent as Header).msg_id : null)), ['p', 'p', 'p', 'p', null]);

      // drained(): one id per call, resolved by the matching event only.
      w.posted.length = 0;
      let one = false;
      let two = false;
      void io.iopub.drained().then(() => (one = true));
      void io.iopub.drained().then(() => (two = true));
      assert.deepStrictEqual(w.posted, [{ kind: 'drain', id: 1 }, { kind: 'drain', id: 2 }]);
      w.emit('message', { kind: 'drained', id: 2 });
      w.emit('message', { kind: 'drained', id: 9 });
      await settle(1);
      assert.deepStrictEqual([one, two], [false, true]);
      w.emit('message', { kind: 'drained', id: 2 });
      w.emit('message', { kind: 'drained', id: 1 });
      await settle(1);
      assert.deepStrictEqual([one, two], [true, true]);
      w.emit('message', { kind: 'log', text: 'from the thread' });
      w.emit('message', { kind: 'something else', text: 'not a log' });
      assert.deepStrictEqual(logs, ['from the thread']);

      // close(): keeps the process alive again, posts close, waits for the thread to exit.
      w.posted.length = 0;
      let closed = false;
      const closing = io.close().then(() => (closed = true));
      assert.deepStrictEqual(w.refs, ['unref', 'ref']);
      assert.deepStrictEqual(w.posted, [{ kind: 'close' }]);
      await settle(2);
      assert.strictEqual(closed, false);
      let late = false;
      void io.iopub.drained().then(() => (late = true));
      w.emit('exit', 0);
      await closing;
      await settle(1);
      assert.ok(late, 'a drain pending when the thread exits is released');
      assert.deepStrictEqual(logs, ['from the thread'], 'an exit while closing is not reported');
      // The thread is gone: nothing more is posted and drained() resolves at once.
      w.posted.length = 0;
      io.iopub.publish('x', {}, {});
      await io.iopub.drained();
      assert.deepStrictEqual(w.posted, []);
      // closeNow after close does nothing.
      io.closeNow(10000);
      assert.deepStrictEqual(w.posted, []);
    });

    it('output that is not plain data is a TypeError naming why; other post failures pass through', async () => {
      const { io, w } = await startOnWorker((w) => w.emit('message', { kind: 'ready' }), []);
      w.postError = Object.assign(new Error('function could not be cloned'), { name: 'DataCloneError' });
      assert.throws(() => io.iopub.publish('display_data', { f: 1 }, {}), (e: Error) => e instanceof TypeError && e.message === 'output cannot be sent: it holds a value that is not plain data (function could not be cloned)');
      const other = new RangeError('other');
      w.postError = other;
      assert.throws(() => io.iopub.flushStreams(), (e) => e === other);
      let thrown: unknown = 'nothing';
      w.postError = null;
      w.throwNull = true;
      try {
        io.iopub.flushStreams();
      } catch (e) {
        thrown = e;
      }
      assert.strictEqual(thrown, null, 'a null thrown by postMessage passes through as it is');
      w.throwNull = false;
      w.postError = null;
    });

    it('closeNow(): posts close once and waits on the closed flag, at most the time given', async () => {
      const { io, w } = await startOnWorker((w) => w.emit('message', { kind: 'ready' }), []);
      const t0 = Date.now();
      io.closeNow(40);
      assert.ok(Date.now() - t0 >= 30, `waited ${Date.now() - t0} ms for a flag nobody sets`);
      assert.deepStrictEqual(w.posted, [{ kind: 'close' }]);
      io.closeNow(40);
      assert.deepStrictEqual(w.posted, [{ kind: 'close' }], 'only once');

      const b = await startOnWorker((w) => w.emit('message', { kind: 'ready' }), []);
      b.w.onClose = () => Atomics.store(new Int32Array(b.w.options.workerData.closedFlag), 0, 1);
      const t1 = Date.now();
      b.io.closeNow(5000);
      assert.ok(Date.now() - t1 < 1000, 'returns as soon as the flag is set');
    });

    it('an exit after starting is reported; a thread that fails, errors or exits while starting falls back to the main thread', async () => {
      const logs: string[] = [];
      const a = await startOnWorker((w) => w.emit('message', { kind: 'ready' }), logs);
      a.w.emit('exit', 1);
      await settle(1);
      assert.deepStrictEqual(logs, ['the IO thread exited: IOPub output and heartbeats have stopped']);

      for (const [event, expected] of [
        [(w: FakeWorker) => w.emit('message', { kind: 'failed', error: 'EADDRINUSE' }), ['IO thread unavailable (EADDRINUSE); IOPub and heartbeat run on the main thread']],
        [(w: FakeWorker) => w.emit('error', Object.assign(new Error('crashed'), { stack: 'Error: crashed\n    at here' })), ['IO thread failed: Error: crashed\n    at here', 'IO thread unavailable (crashed); IOPub and heartbeat run on the main thread']],
        [(w: FakeWorker) => w.emit('error', Object.assign(new Error('no stack'), { stack: undefined })), ['IO thread failed: no stack', 'IO thread unavailable (no stack); IOPub and heartbeat run on the main thread']],
        [(w: FakeWorker) => w.emit('exit', 1), ['the IO thread exited: IOPub output and heartbeats have stopped', 'IO thread unavailable (the IO thread exited while starting); IOPub and heartbeat run on the main thread']],
      ] as const) {
        const logs2: string[] = [];
        FakeSocket.made = [];
        const { io } = await startOnWorker(event, logs2);
        await settle(1);
        assert.strictEqual(io.where, 'main');
        assert.deepStrictEqual(logs2, expected);
        assert.strictEqual(FakeSocket.made.length, 2);
        await io.close();
      }
      FakeWorker.throwOnCreate = new Error('no workers here');
      try {
        const logs3: string[] = [];
        const { io } = await startOnWorker(() => undefined, logs3);
        assert.strictEqual(io.where, 'main');
        assert.deepStrictEqual(logs3, ['IO thread unavailable (no workers here); IOPub and heartbeat run on the main thread']);
        await io.close();
      } finally {
        FakeWorker.throwOnCreate = null;
      }
    });
  });

  describe('kernel IO on the main thread (GDNLAB_KERNEL_IO_THREAD=0)', function () {
    // A change that leaves a request unanswered fails here quickly instead of hanging.
    this.timeout(2000);
    it('no worker: IOPub and heartbeat sockets here; publishing, echo, send failures, close and closeNow', async () => {
      FakeWorker.made = [];
      wt.Worker = FakeWorker;
      process.env.GDNLAB_KERNEL_IO_THREAD = '0';
      const logs: string[] = [];
      const io = await startIoThread(connection, 'sess', (t) => void logs.push(t));
      assert.deepStrictEqual(FakeWorker.made, []);
      assert.strictEqual(io.where, 'main');
      const [pub, hb] = FakeSocket.made;
      assert.deepStrictEqual([pub.options, hb.options], [{ linger: 1000, sendTimeout: 0, sendHighWaterMark: 0 }, { linger: 0 }]);
      assert.deepStrictEqual([pub.bound, hb.bound], [['tcp://10.0.0.1:2'], ['tcp://10.0.0.1:5']]);
      io.iopub.status('idle', cell('q'));
      const m = decoded(pub);
      assert.deepStrictEqual(m.map((x) => [x.header.msg_type, x.header.session, x.content, (x.parentHeader as Header).msg_id]), [['status', 'sess', { execution_state: 'idle' }, 'q']]);
      hb.push([Buffer.from('beat')]);
      await settle(2);
      assert.deepStrictEqual(hb.sent.map((f) => f.map(String)), [['beat']]);
      pub.sendRejects = { error: new Error('EAGAIN') };
      io.iopub.status('busy', {});
      pub.sendRejects = { error: 'plain' };
      io.iopub.status('busy', {});
      pub.sendRejects = { error: null };
      io.iopub.status('busy', {});
      await settle(2);
      assert.deepStrictEqual(logs, ['iopub: send failed: EAGAIN', 'iopub: send failed: plain', 'iopub: send failed: null']);
      pub.sendRejects = null;
      io.iopub.stream(cell('q'), 'stdout', 'pending');
      let done = false;
      const closing = io.close().then(() => (done = true));
      assert.deepStrictEqual(decoded(pub).at(-1)!.content, { name: 'stdout', text: 'pending' });
      assert.deepStrictEqual([pub.closed, hb.closed], [true, true]);
      await closing;
      assert.ok(done);

      FakeSocket.made = [];
      const io2 = await startIoThread(connection, 'sess', () => undefined);
      const [pub2, hb2] = FakeSocket.made;
      hb2.fail(new Error('gone'));
      io2.iopub.stream(cell('r'), 'stderr', 'now');
      io2.closeNow(1);
      assert.deepStrictEqual(decoded(pub2).map((x) => x.content), [{ name: 'stderr', text: 'now' }]);
      assert.deepStrictEqual([pub2.closed, hb2.closed], [true, true]);
    });
  });
});
