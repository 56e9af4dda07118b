// Sends what user code writes to process.stdout / process.stderr (console.log included) to IOPub
// as `stream` output of the cell that wrote it.

import { TextDecoder } from 'util';
import { Cell, cellContext } from './cell';
import { IOPubChannel, StreamName } from './iopub';

type WriteFn = typeof process.stdout.write;

export interface OutputCaptureOptions {
  iopub: IOPubChannel;
  /** The cell output goes to when the writer has no cell context (the running or last cell). */
  fallbackCell: () => Cell | null;
}

export class OutputCapture {
  private readonly decoders = new Map<StreamName, TextDecoder>();

  constructor(private readonly options: OutputCaptureOptions) {}

  install(): void {
    this.hook('stdout', process.stdout);
    this.hook('stderr', process.stderr);
  }

  private hook(name: StreamName, stream: NodeJS.WriteStream): void {
    const original = stream.write.bind(stream) as WriteFn;
    this.decoders.set(name, new TextDecoder('utf-8'));
    const capture = (chunk: unknown, encoding?: unknown, callback?: unknown): boolean => {
      const done = typeof encoding === 'function' ? encoding : callback;
      const text = this.toText(name, chunk, typeof encoding === 'string' ? (encoding as BufferEncoding) : undefined);
      const cell = cellContext.getStore() ?? this.options.fallbackCell();
      if (cell) {
        this.options.iopub.stream(cell.parent, name, text);
      } else {
        original(text);
      }
      if (typeof done === 'function') process.nextTick(done as () => void);
      return true;
    };
    stream.write = capture as WriteFn;
  }

  private toText(name: StreamName, chunk: unknown, encoding: BufferEncoding | undefined): string {
    if (typeof chunk === 'string') {
      return encoding && encoding !== 'utf8' && encoding !== 'utf-8' ? Buffer.from(chunk, encoding).toString('utf8') : chunk;
    }
    if (chunk instanceof Uint8Array) return this.decoders.get(name)!.decode(chunk, { stream: true });
    return String(chunk);
  }
}
