// The Jupyter protocol: sockets, the shell queue, and one handler per request type.
//
// Shell requests run one at a time, in arrival order, from an in-process queue that a reader
// fills as messages arrive. Control requests (shutdown, interrupt, kernel_info) are answered at
// once, even while a cell runs. Every request gets busy ... idle on IOPub with itself as parent.

import * as zmq from 'zeromq';
import { Cell, cellContext, KeyboardInterrupt, newCell } from './cell';
import { codePointToUtf16, utf16ToCodePoint } from './code-points';
import { ConnectionInfo, endpoint } from './connection';
import { Engine } from './engine';
import { compileError, ErrorContent, formatValue, interruptError, runtimeError } from './format';
import { History } from './history';
import { IoThread } from './io-thread';
import { IOPubChannel } from './iopub';
import { isComplete } from './is-complete';
import { SocketSender } from './socket-sender';
import { decode, encode, Header, JsonObject, Message, newHeader, PROTOCOL_VERSION, Signer } from './wire';

export interface KernelInfo {
  implementationVersion: string;
  /** The TypeScript version cells are compiled with. */
  languageVersion: string;
  banner: string;
}

export interface KernelServerOptions {
  connection: ConnectionInfo;
  /** This kernel's session id (the `session` of every header it sends). */
  session: string;
  /** The IO thread holding IOPub and heartbeat. */
  io: IoThread;
  engine: Engine;
  info: KernelInfo;
  log: (text: string) => void;
  /** Called after a shutdown_request has been answered and the sockets are closed. */
  onShutdown: (restart: boolean) => void;
}

interface Queued {
  msg: Message;
  /** Set when an earlier execute_request failed with stop_on_error: answer "aborted" without running. */
  aborted: boolean;
}

const LINGER_MS = 1000;
/** See socket-sender.ts: synchronous, ordered sends that are never dropped. */
const SEND_OPTIONS = { linger: LINGER_MS, sendTimeout: 0, sendHighWaterMark: 0 };

const immediate = () => new Promise<void>((resolve) => setImmediate(resolve));

export class KernelServer {
  readonly session: string;
  readonly iopub: IOPubChannel;
  private readonly signer: Signer;
  private readonly shell = new zmq.Router(SEND_OPTIONS);
  private readonly control = new zmq.Router(SEND_OPTIONS);
  private readonly stdin = new zmq.Router(SEND_OPTIONS);
  private readonly shellOut: SocketSender;
  private readonly controlOut: SocketSender;
  private readonly history = new History();
  private queue: Queued[] = [];
  private wakeShell: (() => void) | null = null;
  private executionCount = 0;
  private runningCell: Cell | null = null;
  private lastCell: Cell | null = null;
  private closing = false;
  private readLoops: Promise<void>[] = [];

  constructor(private readonly options: KernelServerOptions) {
    const { connection, log } = options;
    this.signer = new Signer(connection.signature_scheme, connection.key);
    const onSendError = (channel: string) => (e: unknown) => log(`${channel}: send failed: ${(e as Error)?.message ?? e}`);
    this.shellOut = new SocketSender(this.shell, onSendError('shell'));
    this.controlOut = new SocketSender(this.control, onSendError('control'));
    this.session = options.session;
    this.iopub = options.io.iopub;
  }

  /** The cell being executed now, if any. */
  currentCell(): Cell | null {
    return this.runningCell;
  }

  /** Where output with no cell context goes: the running cell, else the last one run. */
  fallbackCell(): Cell | null {
    return this.runningCell ?? this.lastCell;
  }

  currentExecutionCount(): number {
    return this.executionCount;
  }

  async start(): Promise<void> {
    const c = this.options.connection;
    await Promise.all([
      this.shell.bind(endpoint(c, 'shell')),
      this.control.bind(endpoint(c, 'control')),
      this.stdin.bind(endpoint(c, 'stdin')),
    ]);
    this.readLoops = [
      this.readLoop(this.shell, 'shell', (msg) => this.enqueueShell(msg)),
      this.readLoop(this.control, 'control', (msg) => void this.handleControl(msg)),
    ];
    void this.processShell();
    this.iopub.status('starting', {});
  }

  /**
   * Interrupts the running cell: aborts its signal and cuts a pending top-level await short.
   * (A synchronous cell is stopped by SIGINT itself: tslab runs cells with breakOnSigint.)
   */
  interrupt(): boolean {
    const cell = this.runningCell;
    if (!cell) return false;
    if (!cell.controller.signal.aborted) cell.controller.abort(new KeyboardInterrupt());
    this.options.engine.interrupt();
    return true;
  }

  // ---- sockets ----------------------------------------------------------------------------

  private async readLoop(socket: zmq.Router, channel: string, onMessage: (msg: Message) => void): Promise<void> {
    try {
      for await (const frames of socket) {
        let msg: Message;
        try {
          msg = decode(frames, this.signer);
        } catch (e) {
          this.options.log(`${channel}: dropped a message: ${(e as Error).message}`);
          continue;
        }
        onMessage(msg);
      }
    } catch (e) {
      if (!this.closing) this.options.log(`${channel}: stopped reading: ${(e as Error).message}`);
    }
  }

  private reply(out: SocketSender, request: Message, msgType: string, content: JsonObject, metadata: JsonObject = {}): void {
    const header = newHeader(msgType, this.session);
    out.enqueue(encode({ identities: request.identities, header, parentHeader: request.header, metadata, content, buffers: [] }, this.signer));
  }

  // ---- shell queue ------------------------------------------------------------------------

  private enqueueShell(msg: Message): void {
    this.queue.push({ msg, aborted: false });
    const wake = this.wakeShell;
    this.wakeShell = null;
    wake?.();
  }

  private async nextShell(): Promise<Queued> {
    while (this.queue.length === 0) await new Promise<void>((resolve) => (this.wakeShell = resolve));
    return this.queue.shift()!;
  }

  private async processShell(): Promise<void> {
    while (!this.closing) {
      const item = await this.nextShell();
      if (this.closing) break;
      const { msg } = item;
      this.iopub.status('busy', msg.header);
      try {
        if (item.aborted) {
          this.reply(this.shellOut, msg, 'execute_reply', { status: 'aborted' }, { status: 'aborted' });
        } else if (await this.handleShell(msg)) {
          await this.abortQueuedExecutions();
        }
      } catch (e) {
        this.options.log(`shell: ${msg.header.msg_type} failed: ${(e as Error)?.stack ?? e}`);
      } finally {
        if (!this.closing) this.iopub.status('idle', msg.header);
      }
    }
  }

  /**
   * After an execute_request failed with stop_on_error, every execute_request already waiting is
   * answered "aborted" (as ipykernel does). "Already waiting" includes messages that reached the
   * shell socket while the failing cell ran but were not read yet: we let the reader empty the
   * socket first. Requests that arrive afterwards run normally.
   */
  private async abortQueuedExecutions(): Promise<void> {
    for (let i = 0; i < 10000 && this.shell.readable; i++) await immediate();
    await immediate();
    for (const q of this.queue) if (q.msg.header.msg_type === 'execute_request') q.aborted = true;
  }

  /** Handles one shell request; true when the queue behind it must be aborted. */
  private async handleShell(msg: Message): Promise<boolean> {
    const type = msg.header.msg_type;
    switch (type) {
      case 'execute_request':
        return this.execute(msg);
      case 'kernel_info_request':
        this.reply(this.shellOut, msg, 'kernel_info_reply', this.kernelInfo());
        return false;
      case 'shutdown_request':
        await this.shutdown(msg, this.shellOut);
        return false;
      case 'interrupt_request':
        this.interrupt();
        this.reply(this.shellOut, msg, 'interrupt_reply', { status: 'ok' });
        return false;
      case 'comm_open':
        // No comm targets exist in this kernel: close the comm, as ipykernel does for unknown targets.
        this.iopub.publish('comm_close', { comm_id: msg.content.comm_id ?? '', data: {} }, msg.header);
        return false;
      case 'comm_msg':
      case 'comm_close':
        return false;
      default: {
        const handler = this.simpleHandlers[type];
        if (!handler) {
          this.options.log(`shell: no handler for ${type}`);
          return false;
        }
        let content: JsonObject;
        try {
          content = handler(msg.content);
        } catch (e) {
          content = { status: 'error', ...runtimeError(e) };
        }
        this.reply(this.shellOut, msg, type.replace(/_request$/, '_reply'), content);
        return false;
      }
    }
  }

  private readonly simpleHandlers: Record<string, (content: JsonObject) => JsonObject> = {
    is_complete_request: (c) => isComplete(requireString(c, 'code')),
    complete_request: (c) => this.complete(c),
    inspect_request: (c) => this.inspect(c),
    history_request: (c) => ({ status: 'ok', history: this.history.query(c) }),
    comm_info_request: () => ({ status: 'ok', comms: {} }),
    connect_request: () => {
      const { shell_port, iopub_port, stdin_port, control_port, hb_port } = this.options.connection;
      return { status: 'ok', shell_port, iopub_port, stdin_port, control_port, hb_port };
    },
  };

  // ---- control ----------------------------------------------------------------------------

  private async handleControl(msg: Message): Promise<void> {
    this.iopub.status('busy', msg.header);
    try {
      switch (msg.header.msg_type) {
        case 'shutdown_request':
          await this.shutdown(msg, this.controlOut);
          return;
        case 'interrupt_request':
          this.interrupt();
          this.reply(this.controlOut, msg, 'interrupt_reply', { status: 'ok' });
          break;
        case 'kernel_info_request':
          this.reply(this.controlOut, msg, 'kernel_info_reply', this.kernelInfo());
          break;
        default:
          this.options.log(`control: no handler for ${msg.header.msg_type}`);
      }
    } catch (e) {
      this.options.log(`control: ${msg.header.msg_type} failed: ${(e as Error)?.stack ?? e}`);
    } finally {
      if (!this.closing) this.iopub.status('idle', msg.header);
    }
  }

  // ---- requests ---------------------------------------------------------------------------

  private kernelInfo(): JsonObject {
    const { info } = this.options;
    return {
      status: 'ok',
      protocol_version: PROTOCOL_VERSION,
      implementation: 'gdnlab',
      implementation_version: info.implementationVersion,
      language_info: {
        name: 'typescript',
        version: info.languageVersion,
        mimetype: 'text/typescript',
        file_extension: '.ts',
        codemirror_mode: 'typescript',
        pygments_lexer: 'typescript',
      },
      banner: info.banner,
      help_links: [],
      debugger: false,
    };
  }

  /** Runs one cell; true when it failed and the requests queued behind it must be aborted. */
  private async execute(msg: Message): Promise<boolean> {
    const c = msg.content;
    const started = new Date().toISOString();
    if (typeof c.code !== 'string') {
      const err: ErrorContent = { ename: 'BadRequest', evalue: 'execute_request content.code: expected a string', traceback: [] };
      this.reply(this.shellOut, msg, 'execute_reply', { status: 'error', execution_count: this.executionCount, ...err }, { started, status: 'error' });
      return false;
    }
    const code = c.code;
    const silent = c.silent === true;
    const storeHistory = !silent && c.store_history !== false;
    const stopOnError = c.stop_on_error !== false;
    if (!silent) this.executionCount += 1;
    const count = this.executionCount;
    const cell = newCell(msg.header as Header, count);
    if (!silent) this.iopub.publish('execute_input', { code, execution_count: count }, msg.header);
    if (storeHistory) this.history.add(count, code);
    this.runningCell = cell;
    if (!silent) this.lastCell = cell;

    const outcome = await cellContext.run(cell, () => this.options.engine.run(code));

    let error: ErrorContent | null = null;
    switch (outcome.status) {
      case 'ok':
        for (const w of outcome.warnings) this.iopub.stream(cell.parent, 'stderr', `${w}\n`);
        if (outcome.hasValue && !silent) {
          const formatted = cellContext.run(cell, () => formatValue(outcome.value));
          if (formatted?.warning) this.iopub.stream(cell.parent, 'stderr', `${formatted.warning}\n`);
          // null: the value was already displayed by the call that made it (see format.ts).
          if (formatted) {
            this.iopub.publish('execute_result', { execution_count: count, data: formatted.data, metadata: formatted.metadata }, cell.parent);
            if (storeHistory) this.history.setOutput(count, String(formatted.data['text/plain']));
          }
        }
        break;
      case 'compile-error':
        error = compileError(outcome.diagnostics);
        break;
      case 'runtime-error':
        error = runtimeError(outcome.thrown);
        break;
      case 'interrupted':
        if (!cell.controller.signal.aborted) cell.controller.abort(new KeyboardInterrupt(outcome.message));
        error = interruptError(outcome.message);
        break;
    }
    if (error && !silent) this.iopub.publish('error', error, cell.parent);
    this.runningCell = null;
    cell.running = false;
    await this.iopub.drained();
    const status = error ? 'error' : 'ok';
    const content: JsonObject = error
      ? { status, execution_count: count, ...error }
      : { status, execution_count: count, payload: [], user_expressions: {} };
    this.reply(this.shellOut, msg, 'execute_reply', content, { started, status, dependencies_met: true, engine: this.session });
    return error !== null && stopOnError && !silent;
  }

  private complete(c: JsonObject): JsonObject {
    const code = requireString(c, 'code');
    const cursor = codePointToUtf16(code, cursorPos(c, code));
    const info = this.options.engine.complete(code, cursor);
    return {
      status: 'ok',
      matches: info.candidates,
      cursor_start: utf16ToCodePoint(code, info.start),
      cursor_end: utf16ToCodePoint(code, info.end),
      metadata: {},
    };
  }

  private inspect(c: JsonObject): JsonObject {
    const code = requireString(c, 'code');
    const text = this.options.engine.inspect(code, codePointToUtf16(code, cursorPos(c, code)));
    return text === null ? { status: 'ok', found: false, data: {}, metadata: {} } : { status: 'ok', found: true, data: { 'text/plain': text }, metadata: {} };
  }

  // ---- shutdown ---------------------------------------------------------------------------

  private async shutdown(msg: Message, out: SocketSender): Promise<void> {
    const restart = msg.content.restart === true;
    this.closing = true;
    this.interrupt();
    this.reply(out, msg, 'shutdown_reply', { status: 'ok', restart });
    this.iopub.status('idle', msg.header);
    await Promise.all([out.drained(), this.iopub.drained()]);
    await this.close();
    this.options.onShutdown(restart);
  }

  /** Closes every socket at once, blocking; for process.exit() from user code. */
  closeNow(): void {
    this.closing = true;
    this.options.io.closeNow(2000);
    for (const s of [this.shell, this.control, this.stdin]) s.close();
  }

  async close(): Promise<void> {
    this.closing = true;
    this.wakeShell?.();
    try {
      this.options.engine.close();
    } catch (e) {
      this.options.log(`closing the engine failed: ${(e as Error).message}`);
    }
    await this.options.io.close();
    for (const s of [this.shell, this.control, this.stdin]) s.close();
    // Let the readers see their sockets close before the process may exit: exiting while a
    // receive is still being torn down aborts the process inside zeromq's native code.
    await Promise.all(this.readLoops);
  }
}

function requireString(c: JsonObject, field: string): string {
  const v = c[field];
  if (typeof v !== 'string') throw new TypeError(`content.${field}: expected a string, got ${v === null ? 'null' : typeof v}`);
  return v;
}

function cursorPos(c: JsonObject, code: string): number {
  const v = c.cursor_pos;
  if (v === undefined || v === null) return [...code].length;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 0) throw new TypeError(`content.cursor_pos: expected an integer ≥ 0, got ${JSON.stringify(v)}`);
  return v;
}
