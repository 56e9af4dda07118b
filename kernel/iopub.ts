// The IOPub channel: every broadcast (status, execute_input, stream, display, results, errors)
// goes through here, in the order it was produced.
//
// stdout/stderr text is batched: consecutive writes for the same cell and stream are joined into
// one `stream` message, sent when it reaches `maxStreamChars`, after `flushDelayMs` of quiet, or
// before any other message (so a cell's text always precedes its result, its error and `idle`).

import { encode, Header, JsonObject, newHeader, Signer } from './wire';

export type StreamName = 'stdout' | 'stderr';

export interface FrameQueue {
  enqueue(frames: Buffer[]): void;
  drained(): Promise<void>;
}

export interface IOPubOptions {
  /** Largest text of one stream message, in UTF-16 code units (default 64 Ki). */
  maxStreamChars?: number;
  /** How long batched text may wait for more before it is sent (default 50 ms). */
  flushDelayMs?: number;
}

interface PendingStream {
  parent: Header;
  name: StreamName;
  parts: string[];
  length: number;
}

/** What the rest of the kernel publishes through (an IOPub here, or one on the IO thread). */
export interface IOPubChannel {
  publish(msgType: string, content: JsonObject, parent: Header | JsonObject, metadata?: JsonObject): void;
  status(state: 'busy' | 'idle' | 'starting', parent: Header | JsonObject): void;
  stream(parent: Header, name: StreamName, text: string): void;
  flushStreams(): void;
  /** Resolves once everything published so far has been handed to ZMQ. */
  drained(): Promise<void>;
}

export class IOPub implements IOPubChannel {
  private pendingStream: PendingStream | null = null;
  private timer: NodeJS.Timeout | null = null;
  private readonly maxStreamChars: number;
  private readonly flushDelayMs: number;

  constructor(
    private readonly out: FrameQueue,
    private readonly signer: Signer,
    private readonly session: string,
    options: IOPubOptions = {},
  ) {
    this.maxStreamChars = options.maxStreamChars ?? 64 * 1024;
    this.flushDelayMs = options.flushDelayMs ?? 50;
    if (!(this.maxStreamChars >= 16)) throw new RangeError(`maxStreamChars: expected a number ≥ 16, got ${options.maxStreamChars}`);
  }

  /** Broadcasts one message with `parent` as its parent header (after any batched text). */
  publish(msgType: string, content: JsonObject, parent: Header | JsonObject, metadata: JsonObject = {}): void {
    this.flushStreams();
    this.send(msgType, content, parent, metadata);
  }

  status(state: 'busy' | 'idle' | 'starting', parent: Header | JsonObject): void {
    this.publish('status', { execution_state: state }, parent);
  }

  /** Adds text to the batched stream output of the cell whose header is `parent`. */
  stream(parent: Header, name: StreamName, text: string): void {
    if (text === '') return;
    const p = this.pendingStream;
    if (p && (p.name !== name || p.parent.msg_id !== parent.msg_id)) this.flushStreams();
    if (!this.pendingStream) this.pendingStream = { parent, name, parts: [], length: 0 };
    const pending = this.pendingStream;
    pending.parts.push(text);
    pending.length += text.length;
    if (pending.length >= this.maxStreamChars) {
      this.flushFullPieces();
    }
    if (this.pendingStream && !this.timer) {
      this.timer = setTimeout(() => {
        this.timer = null;
        this.flushStreams();
      }, this.flushDelayMs);
      this.timer.unref();
    }
  }

  /** Sends batched stream text now. */
  flushStreams(): void {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = null;
    }
    const p = this.pendingStream;
    if (!p) return;
    this.pendingStream = null;
    for (const piece of splitText(p.parts.join(''), this.maxStreamChars)) {
      this.send('stream', { name: p.name, text: piece }, p.parent, {});
    }
  }

  /** Sends the batched text in full-size pieces, keeping the shorter rest batched. */
  private flushFullPieces(): void {
    const p = this.pendingStream!;
    const pieces = splitText(p.parts.join(''), this.maxStreamChars);
    const rest = pieces.pop()!;
    for (const piece of pieces) this.send('stream', { name: p.name, text: piece }, p.parent, {});
    p.parts = [rest];
    p.length = rest.length;
    if (rest.length >= this.maxStreamChars) this.flushStreams();
  }

  /** Resolves once everything published so far has been handed to ZMQ. */
  drained(): Promise<void> {
    this.flushStreams();
    return this.out.drained();
  }

  private send(msgType: string, content: JsonObject, parent: Header | JsonObject, metadata: JsonObject): void {
    const header = newHeader(msgType, this.session);
    const topic = Buffer.from(`kernel.${this.session}.${msgType}`);
    this.out.enqueue(encode({ identities: [topic], header, parentHeader: parent, metadata, content, buffers: [] }, this.signer));
  }
}

/**
 * Splits text into pieces of at most `max` UTF-16 code units, preferring to cut after a newline
 * and never between the two halves of a surrogate pair.
 */
export function splitText(text: string, max: number): string[] {
  if (text.length <= max) return [text];
  const pieces: string[] = [];
  let start = 0;
  while (text.length - start > max) {
    let end = start + max;
    const newline = text.lastIndexOf('\n', end - 1);
    if (newline >= start + max / 2) {
      end = newline + 1;
    } else {
      const code = text.charCodeAt(end - 1);
      if (code >= 0xd800 && code <= 0xdbff) end -= 1;
    }
    pieces.push(text.slice(start, end));
    start = end;
  }
  pieces.push(text.slice(start));
  return pieces;
}
