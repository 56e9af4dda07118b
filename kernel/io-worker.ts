// The kernel's IO thread: it owns the IOPub and heartbeat sockets, like ipykernel's IO thread.
//
// Because it runs beside the main thread, output a cell produces is sent (batched every 50 ms)
// and heartbeats are answered even while a synchronous cell keeps the main thread busy.
// The main thread posts commands (io-thread.ts); the port is FIFO, so IOPub order is the order
// the main thread produced things in.
//
// To stop, the main thread posts `close`: the sockets close, the loops end, the thread exits by
// itself. (Ending the thread while a receive is pending aborts the process inside zeromq's native
// code, so the kernel never terminates it.)

import { parentPort, workerData } from 'worker_threads';
import * as zmq from 'zeromq';
import { IOPub, StreamName } from './iopub';
import { SocketSender } from './socket-sender';
import { Header, JsonObject, Signer } from './wire';

export interface IoWorkerData {
  iopubEndpoint: string;
  hbEndpoint: string;
  key: string;
  signatureScheme: string;
  session: string;
  /** Int32 set to 1 (and notified) once the sockets are closed and the loops have ended. */
  closedFlag: SharedArrayBuffer;
}

export type IoCommand =
  | { kind: 'publish'; msgType: string; content: JsonObject; parent: Header | JsonObject; metadata: JsonObject }
  | { kind: 'stream'; parent: Header; name: StreamName; text: string }
  | { kind: 'flush' }
  | { kind: 'drain'; id: number }
  | { kind: 'close' };

export type IoEvent = { kind: 'ready' } | { kind: 'drained'; id: number } | { kind: 'log'; text: string } | { kind: 'failed'; error: string };

const port = parentPort!;
const post = (e: IoEvent) => port.postMessage(e);

async function echoHeartbeats(socket: zmq.Reply): Promise<void> {
  try {
    for await (const frames of socket) await socket.send(frames);
  } catch (e) {
    if (!socket.closed) post({ kind: 'log', text: `heartbeat stopped: ${(e as Error).message}` });
  }
}

async function main(): Promise<void> {
  const data = workerData as IoWorkerData;
  const publisher = new zmq.Publisher({ linger: 1000, sendTimeout: 0, sendHighWaterMark: 0 });
  const heartbeat = new zmq.Reply({ linger: 0 });
  try {
    await Promise.all([publisher.bind(data.iopubEndpoint), heartbeat.bind(data.hbEndpoint)]);
  } catch (e) {
    publisher.close();
    heartbeat.close();
    throw e;
  }
  const sender = new SocketSender(publisher, (e) => post({ kind: 'log', text: `iopub: send failed: ${(e as Error)?.message ?? e}` }));
  const iopub = new IOPub(sender, new Signer(data.signatureScheme, data.key), data.session);
  const echo = echoHeartbeats(heartbeat);

  let closed: () => void;
  const closing = new Promise<void>((resolve) => (closed = resolve));
  port.on('message', (cmd: IoCommand) => {
    try {
      switch (cmd.kind) {
        case 'publish':
          iopub.publish(cmd.msgType, cmd.content, cmd.parent, cmd.metadata);
          break;
        case 'stream':
          iopub.stream(cmd.parent, cmd.name, cmd.text);
          break;
        case 'flush':
          iopub.flushStreams();
          break;
        case 'drain':
          iopub.flushStreams();
          post({ kind: 'drained', id: cmd.id });
          break;
        case 'close':
          iopub.flushStreams();
          publisher.close();
          heartbeat.close();
          closed();
          break;
      }
    } catch (e) {
      post({ kind: 'log', text: `iopub: could not send a ${cmd.kind === 'publish' ? cmd.msgType : cmd.kind} message: ${(e as Error)?.message ?? e}` });
    }
  });
  post({ kind: 'ready' });
  await closing;
  await echo;
  const flag = new Int32Array(data.closedFlag);
  Atomics.store(flag, 0, 1);
  Atomics.notify(flag, 0);
  port.close();
}

main().catch((e: unknown) => {
  post({ kind: 'failed', error: e instanceof Error ? e.message : String(e) });
  port.close();
});
