// Starts the IO thread (io-worker.ts: IOPub + heartbeat) and gives the main thread an
// IOPubChannel that forwards to it. If the thread cannot start, IOPub and heartbeat run on the
// main thread instead (output of a synchronous cell then waits for the cell to finish).

import path from 'path';
import { Worker } from 'worker_threads';
import * as zmq from 'zeromq';
import { ConnectionInfo, endpoint } from './connection';
import { IoCommand, IoEvent, IoWorkerData } from './io-worker';
import { IOPub, IOPubChannel, StreamName } from './iopub';
import { SocketSender } from './socket-sender';
import { Header, JsonObject, Signer } from './wire';

export interface IoThread {
  readonly iopub: IOPubChannel;
  /** 'worker' when IOPub and heartbeat run beside the main thread. */
  readonly where: 'worker' | 'main';
  /** Sends what is pending, closes the sockets and waits until they are closed. */
  close(): Promise<void>;
  /**
   * The same, blocking the main thread (at most `timeoutMs`): for process.exit() called by user
   * code, where nothing asynchronous can run any more.
   */
  closeNow(timeoutMs: number): void;
}

class RemoteIOPub implements IOPubChannel {
  private nextDrain = 1;
  private readonly drains = new Map<number, () => void>();
  private dead = false;

  constructor(private readonly worker: Worker) {}

  post(cmd: IoCommand): void {
    if (this.dead) return;
    try {
      this.worker.postMessage(cmd);
    } catch (e) {
      if ((e as Error)?.name === 'DataCloneError') {
        throw new TypeError(`output cannot be sent: it holds a value that is not plain data (${(e as Error).message})`);
      }
      throw e;
    }
  }

  publish(msgType: string, content: JsonObject, parent: Header | JsonObject, metadata: JsonObject = {}): void {
    this.post({ kind: 'publish', msgType, content, parent, metadata });
  }

  status(state: 'busy' | 'idle' | 'starting', parent: Header | JsonObject): void {
    this.publish('status', { execution_state: state }, parent);
  }

  stream(parent: Header, name: StreamName, text: string): void {
    if (text !== '') this.post({ kind: 'stream', parent, name, text });
  }

  flushStreams(): void {
    this.post({ kind: 'flush' });
  }

  drained(): Promise<void> {
    if (this.dead) return Promise.resolve();
    const id = this.nextDrain++;
    return new Promise((resolve) => {
      this.drains.set(id, resolve);
      this.post({ kind: 'drain', id });
    });
  }

  onDrained(id: number): void {
    this.drains.get(id)?.();
    this.drains.delete(id);
  }

  /** The thread is gone: nothing more can be sent; release every waiter. */
  markDead(): void {
    this.dead = true;
    for (const resolve of this.drains.values()) resolve();
    this.drains.clear();
  }
}

async function onWorker(connection: ConnectionInfo, session: string, log: (text: string) => void): Promise<IoThread> {
  const data: IoWorkerData = {
    iopubEndpoint: endpoint(connection, 'iopub'),
    hbEndpoint: endpoint(connection, 'hb'),
    key: connection.key,
    signatureScheme: connection.signature_scheme,
    session,
    closedFlag: new SharedArrayBuffer(4),
  };
  const closedFlag = new Int32Array(data.closedFlag);
  const worker = new Worker(path.join(__dirname, 'io-worker.js'), { workerData: data });
  const iopub = new RemoteIOPub(worker);
  const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
  let ready: () => void;
  let failed: (e: Error) => void;
  const started = new Promise<void>((resolve, reject) => {
    ready = resolve;
    failed = reject;
  });
  worker.on('message', (e: IoEvent) => {
    if (e.kind === 'ready') ready();
    else if (e.kind === 'failed') failed(new Error(e.error));
    else if (e.kind === 'drained') iopub.onDrained(e.id);
    else if (e.kind === 'log') log(e.text);
  });
  worker.on('error', (e) => {
    log(`IO thread failed: ${e.stack ?? e.message}`);
    failed(e);
  });
  let closing = false;
  void exited.then(() => {
    iopub.markDead();
    failed(new Error('the IO thread exited while starting'));
    if (!closing) log('the IO thread exited: IOPub output and heartbeats have stopped');
  });
  await started;
  // Once running, the thread must not keep the process alive on its own...
  worker.unref();
  return {
    iopub,
    where: 'worker',
    async close() {
      // ...but while closing it must: a process that exits while the thread's sockets are
      // still open aborts inside zeromq's native code.
      worker.ref();
      closing = true;
      iopub.post({ kind: 'close' });
      await exited;
    },
    closeNow(timeoutMs: number) {
      if (closing) return;
      closing = true;
      iopub.post({ kind: 'close' });
      Atomics.wait(closedFlag, 0, 0, timeoutMs);
    },
  };
}

async function onMainThread(connection: ConnectionInfo, session: string, log: (text: string) => void): Promise<IoThread> {
  const publisher = new zmq.Publisher({ linger: 1000, sendTimeout: 0, sendHighWaterMark: 0 });
  const heartbeat = new zmq.Reply({ linger: 0 });
  await Promise.all([publisher.bind(endpoint(connection, 'iopub')), heartbeat.bind(endpoint(connection, 'hb'))]);
  const iopub = new IOPub(new SocketSender(publisher, (e) => log(`iopub: send failed: ${(e as Error)?.message ?? e}`)), new Signer(connection.signature_scheme, connection.key), session);
  const echo = (async () => {
    try {
      for await (const frames of heartbeat) await heartbeat.send(frames);
    } catch {
      // closed
    }
  })();
  return {
    iopub,
    where: 'main',
    async close() {
      iopub.flushStreams();
      publisher.close();
      heartbeat.close();
      await echo;
    },
    closeNow() {
      iopub.flushStreams();
      publisher.close();
      heartbeat.close();
    },
  };
}

export async function startIoThread(connection: ConnectionInfo, session: string, log: (text: string) => void): Promise<IoThread> {
  if (process.env.GDNLAB_KERNEL_IO_THREAD !== '0') {
    try {
      return await onWorker(connection, session, log);
    } catch (e) {
      log(`IO thread unavailable (${(e as Error).message}); IOPub and heartbeat run on the main thread`);
    }
  }
  return onMainThread(connection, session, log);
}
