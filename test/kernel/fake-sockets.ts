// Stand-ins for zeromq sockets (Router, Publisher, Reply) used by the in-process kernel tests: they
// record what is bound and sent, and hand out scripted incoming frames through the async iterator
// the kernel reads with. Nothing here opens a real socket.

export class FakeSocket {
  /** Every socket made while a test had this class installed, in creation order. */
  static made: FakeSocket[] = [];
  readonly bound: string[] = [];
  readonly sent: Buffer[][] = [];
  closed = false;
  /** What `readable` answers; a function is asked each time (and sees how often it was asked). */
  readableAnswer: boolean | ((n: number) => boolean) = false;
  readableReads = 0;
  bindError: Error | null = null;
  /** A send that throws at once, or one whose promise rejects (with any value, null included). */
  sendThrows: unknown = null;
  sendRejects: { error: unknown } | null = null;
  /** When set, closing makes a pending receive fail with this (as zeromq does), instead of ending it. */
  closeError: { error: unknown } | null = null;
  onSend: ((frames: Buffer[]) => void) | null = null;
  private inbox: Buffer[][] = [];
  private waiting: { resolve: (r: IteratorResult<Buffer[]>) => void; reject: (e: unknown) => void } | null = null;
  private failure: unknown = null;

  constructor(readonly options?: Record<string, unknown>) {
    FakeSocket.made.push(this);
  }

  get readable(): boolean {
    this.readableReads += 1;
    const a = this.readableAnswer;
    return typeof a === 'function' ? a(this.readableReads) : a;
  }

  async bind(address: string): Promise<void> {
    if (this.bindError) throw this.bindError;
    this.bound.push(address);
  }

  send(frames: Buffer[]): Promise<void> {
    if (this.sendThrows !== null) throw this.sendThrows;
    this.sent.push(frames);
    this.onSend?.(frames);
    return this.sendRejects !== null ? Promise.reject(this.sendRejects.error) : Promise.resolve();
  }

  /** Delivers one incoming message to the reader. */
  push(frames: Buffer[]): void {
    const w = this.waiting;
    if (w) {
      this.waiting = null;
      w.resolve({ value: frames, done: false });
    } else this.inbox.push(frames);
  }

  /** Makes the pending (or next) receive fail. */
  fail(e: unknown): void {
    const w = this.waiting;
    if (w) {
      this.waiting = null;
      w.reject(e);
    } else this.failure = e;
  }

  close(): void {
    this.closed = true;
    const w = this.waiting;
    this.waiting = null;
    if (w && this.closeError) w.reject(this.closeError.error);
    else w?.resolve({ value: undefined, done: true });
  }

  [Symbol.asyncIterator](): AsyncIterator<Buffer[]> {
    return {
      next: () => {
        if (this.failure !== null) {
          const e = this.failure;
          this.failure = null;
          return Promise.reject(e);
        }
        const frames = this.inbox.shift();
        if (frames) return Promise.resolve({ value: frames, done: false });
        if (this.closed) return Promise.resolve({ value: undefined, done: true });
        return new Promise((resolve, reject) => (this.waiting = { resolve, reject }));
      },
    };
  }
}

/** Runs `body` with zeromq's Router, Publisher and Reply replaced by FakeSocket; restores them after. */
export function withFakeZmq<T>(body: () => T): T {
  // eslint-disable-next-line @typescript-eslint/no-var-requires
  const zmq = require('zeromq') as Record<string, unknown>;
  const real = { Router: zmq.Router, Publisher: zmq.Publisher, Reply: zmq.Reply };
  zmq.Router = FakeSocket;
  zmq.Publisher = FakeSocket;
  zmq.Reply = FakeSocket;
  try {
    return body();
  } finally {
    Object.assign(zmq, real);
  }
}

/** Lets pending promise callbacks and immediates run, `rounds` times. */
export async function settle(rounds = 20): Promise<void> {
  for (let i = 0; i < rounds; i++) await new Promise<void>((resolve) => setImmediate(resolve));
}
