// Sending on a ZMQ socket without losing or reordering messages.
//
// Stock tslab fires `sock.send()` without awaiting it. zeromq 6 answers a send that finds the
// socket "busy" (one send still pending) with an EBUSY rejection nobody sees, and a PUB socket
// silently drops messages beyond its high-water mark (1000): under bursty output whole messages,
// even the final `idle`, disappear.
//
// Our sockets are created with sendTimeout 0 and sendHighWaterMark 0 (no limit). With a send
// timeout of 0, zeromq hands every message to libzmq synchronously inside send() (it never
// parks a send waiting for the socket to become writable, so a send is never "in progress"), and
// with no high-water mark libzmq queues instead of dropping. Sending is therefore synchronous
// and ordered: messages go out in the order they are produced, even while a synchronous cell
// keeps the event loop busy (its output appears live, as with ipykernel's IO thread).

export interface FrameSocket {
  send(frames: Buffer[]): Promise<void>;
}

export class SocketSender {
  constructor(
    private readonly socket: FrameSocket,
    private readonly onError: (error: unknown) => void,
  ) {}

  enqueue(frames: Buffer[]): void {
    let sent: Promise<void>;
    try {
      sent = this.socket.send(frames);
    } catch (e) {
      this.onError(e);
      return;
    }
    sent.catch(this.onError);
  }

  /** Everything enqueued has already been handed to libzmq. */
  drained(): Promise<void> {
    return Promise.resolve();
  }
}
