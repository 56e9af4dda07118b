// A test client for the gdnlab kernel: starts dist/kernel/main.js with a real connection file and
// talks to it over ZMQ (DEALER for shell/control, SUB for iopub, REQ for heartbeat), recording
// every IOPub message it sees.

import type { ConnectionInfo } from '../../kernel/connection';
import { ChildProcess, spawn } from 'child_process';
import { randomBytes, randomUUID } from 'crypto';
import fs from 'fs';
import net from 'net';
import os from 'os';
import path from 'path';
import * as zmq from 'zeromq';
import { decode, encode, Header, JsonObject, Message, PROTOCOL_VERSION, Signer } from '../../kernel/wire';

export const PROJECT_ROOT = path.resolve(__dirname, '..', '..', '..');
export const KERNEL_MAIN = path.join(PROJECT_ROOT, 'dist', 'kernel', 'main.js');
export const FIXTURE_PACKAGE = path.join(PROJECT_ROOT, 'test', 'kernel', 'fixtures', 'gdnlab-fixture');
export const VENV_PYTHON = path.join(PROJECT_ROOT, '.venv', 'bin', 'python');

export async function freePorts(n: number): Promise<number[]> {
  const servers = await Promise.all(
    Array.from({ length: n }, () => new Promise<net.Server>((resolve, reject) => {
      const s = net.createServer();
      s.once('error', reject);
      s.listen(0, '127.0.0.1', () => resolve(s));
    })),
  );
  const ports = servers.map((s) => (s.address() as net.AddressInfo).port);
  await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
  return ports;
}

/** A connection file's contents (the kernel's own type), on TCP. */
export type Connection = ConnectionInfo & { transport: 'tcp' };

export async function newConnection(): Promise<Connection> {
  const [shell_port, iopub_port, stdin_port, control_port, hb_port] = await freePorts(5);
  return { transport: 'tcp', ip: '127.0.0.1', key: randomBytes(16).toString('hex'), signature_scheme: 'hmac-sha256', shell_port, iopub_port, stdin_port, control_port, hb_port };
}

export interface StartOptions {
  /** The kernel's working folder (the notebook's folder); default: a fresh temp folder. */
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  /** Reuse a connection (a restart binds the same ports). */
  connection?: Connection;
}

export interface ExecuteResult {
  reply: Message;
  /** IOPub messages of this request between busy and idle, without status and execute_input. */
  outputs: Message[];
  /** Every IOPub message of this request, in order. */
  iopub: Message[];
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export class KernelClient {
  readonly session = randomUUID();
  readonly iopubLog: Message[] = [];
  readonly stderrChunks: string[] = [];
  private readonly signer: Signer;
  private readonly shell = new zmq.Dealer({ linger: 0 });
  private readonly control = new zmq.Dealer({ linger: 0 });
  private readonly iopub = new zmq.Subscriber({ linger: 0, receiveHighWaterMark: 0 });
  private readonly replies = new Map<string, Message>();
  private waiters: (() => void)[] = [];
  private exited: Promise<number | null>;
  exitCode: number | null | undefined = undefined;
  /** The signal that ended the kernel, when one did (exitCode is then null). */
  exitSignal: NodeJS.Signals | null = null;

  private constructor(
    readonly proc: ChildProcess,
    readonly connection: Connection,
    readonly connectionFile: string,
    readonly cwd: string,
    /** True when start() made the working folder (close() removes it). */
    private readonly ownsCwd: boolean,
  ) {
    this.signer = new Signer(connection.signature_scheme, connection.key);
    proc.stderr!.on('data', (d: Buffer) => this.stderrChunks.push(d.toString()));
    proc.stdout!.on('data', (d: Buffer) => this.stderrChunks.push(d.toString()));
    this.exited = new Promise((resolve) => proc.once('exit', (code, signal) => {
      this.exitSignal = signal;
      this.exitCode = code;
      this.notify();
      resolve(code);
    }));
  }

  static async start(options: StartOptions = {}): Promise<KernelClient> {
    const connection = options.connection ?? (await newConnection());
    const cwd = options.cwd ?? fs.mkdtempSync(path.join(os.tmpdir(), 'gdnlab-kernel-test-'));
    const connectionFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'gdnlab-conn-')), 'kernel.json');
    fs.writeFileSync(connectionFile, JSON.stringify(connection));
    const env: NodeJS.ProcessEnv = { ...process.env, GDNLAB_PACKAGE_ROOT: FIXTURE_PACKAGE, ...options.env };
    const proc = spawn(process.execPath, [KERNEL_MAIN, '--connection-file', connectionFile], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    const client = new KernelClient(proc, connection, connectionFile, cwd, options.cwd === undefined);
    await client.connect();
    return client;
  }

  get stderr(): string {
    return this.stderrChunks.join('');
  }

  private url(port: number): string {
    return `tcp://${this.connection.ip}:${port}`;
  }

  private async connect(): Promise<void> {
    this.shell.connect(this.url(this.connection.shell_port));
    this.control.connect(this.url(this.connection.control_port));
    this.iopub.connect(this.url(this.connection.iopub_port));
    this.iopub.subscribe();
    void this.readReplies(this.shell);
    void this.readReplies(this.control);
    void this.readIopub();
    // Nudge: IOPub subscriptions take a moment; ask for kernel_info until IOPub answers.
    const deadline = Date.now() + 30000;
    while (this.iopubLog.length === 0) {
      if (this.exitCode !== undefined) throw new Error(`kernel exited with ${this.exitCode} while starting:\n${this.stderr}`);
      if (Date.now() > deadline) throw new Error(`kernel did not answer within 30 s:\n${this.stderr}`);
      const id = this.send('shell', 'kernel_info_request', {});
      await this.waitFor(() => this.replies.has(id) || this.exitCode !== undefined, 30000).catch(() => undefined);
      await sleep(50);
    }
  }

  private notify(): void {
    const w = this.waiters;
    this.waiters = [];
    for (const f of w) f();
  }

  private async readReplies(socket: zmq.Dealer): Promise<void> {
    try {
      for await (const frames of socket) {
        const msg = decode(frames, this.signer);
        this.replies.set(String((msg.parentHeader as Header).msg_id), msg);
        this.notify();
      }
    } catch {
      // closed
    }
  }

  private async readIopub(): Promise<void> {
    try {
      for await (const frames of this.iopub) {
        this.iopubLog.push(decode(frames, this.signer));
        this.notify();
      }
    } catch {
      // closed
    }
  }

  /** Waits until `done()` is true, re-checking whenever a message arrives or the kernel exits. */
  async waitFor(done: () => boolean, timeoutMs = 20000, what = 'condition'): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!done()) {
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, Math.min(left, 200));
        this.waiters.push(() => {
          clearTimeout(t);
          resolve();
        });
      });
    }
  }

  header(msgType: string): Header {
    return { msg_id: randomUUID(), msg_type: msgType, session: this.session, username: 'test', date: new Date().toISOString(), version: PROTOCOL_VERSION };
  }

  /** Sends a request; returns its msg_id. */
  send(channel: 'shell' | 'control', msgType: string, content: JsonObject, metadata: JsonObject = {}): string {
    const header = this.header(msgType);
    const frames = encode({ identities: [], header, parentHeader: {}, metadata, content, buffers: [] }, this.signer);
    void (channel === 'shell' ? this.shell : this.control).send(frames);
    return header.msg_id;
  }

  /** Sends raw frames on shell (for malformed-message tests). */
  async sendRaw(frames: Buffer[]): Promise<void> {
    await this.shell.send(frames);
  }

  async reply(msgId: string, timeoutMs = 20000): Promise<Message> {
    await this.waitFor(() => this.replies.has(msgId), timeoutMs, `the reply to ${msgId}`);
    return this.replies.get(msgId)!;
  }

  hasReply(msgId: string): boolean {
    return this.replies.has(msgId);
  }

  /** IOPub messages whose parent is `msgId`, in arrival order. */
  messagesOf(msgId: string): Message[] {
    return this.iopubLog.filter((m) => (m.parentHeader as Header).msg_id === msgId);
  }

  isIdle(msgId: string): boolean {
    return this.messagesOf(msgId).some((m) => m.header.msg_type === 'status' && m.content.execution_state === 'idle');
  }

  /** Waits for the reply and the final idle of a request. */
  async finished(msgId: string, timeoutMs = 20000): Promise<ExecuteResult> {
    const reply = await this.reply(msgId, timeoutMs);
    await this.waitFor(() => this.isIdle(msgId), timeoutMs, `idle after ${msgId}`);
    const iopub = this.messagesOf(msgId);
    return { reply, iopub, outputs: iopub.filter((m) => m.header.msg_type !== 'status' && m.header.msg_type !== 'execute_input') };
  }

  async execute(code: string, content: JsonObject = {}, timeoutMs = 20000): Promise<ExecuteResult> {
    const id = this.send('shell', 'execute_request', { code, silent: false, store_history: true, user_expressions: {}, allow_stdin: false, stop_on_error: true, ...content });
    return this.finished(id, timeoutMs);
  }

  async request(msgType: string, content: JsonObject, channel: 'shell' | 'control' = 'shell'): Promise<Message> {
    return this.reply(this.send(channel, msgType, content));
  }

  /** Pings the heartbeat channel; resolves with the round-trip time in ms. */
  async heartbeat(timeoutMs = 2000): Promise<number> {
    const req = new zmq.Request({ linger: 0, receiveTimeout: timeoutMs });
    req.connect(this.url(this.connection.hb_port));
    const t0 = Date.now();
    try {
      await req.send('ping');
      const [echo] = await req.receive();
      if (echo.toString() !== 'ping') throw new Error(`heartbeat echoed ${JSON.stringify(echo.toString())}`);
      return Date.now() - t0;
    } finally {
      req.close();
    }
  }

  signal(sig: NodeJS.Signals): void {
    this.proc.kill(sig);
  }

  async waitExit(timeoutMs = 10000): Promise<number | null> {
    await this.waitFor(() => this.exitCode !== undefined, timeoutMs, 'the kernel process to exit');
    return this.exited;
  }

  /** Closes the client sockets; kills the kernel if it is still running. */
  async close(): Promise<void> {
    for (const s of [this.shell, this.control, this.iopub]) s.close();
    if (this.exitCode === undefined) {
      this.proc.kill('SIGKILL');
      await this.exited;
    }
    fs.rmSync(path.dirname(this.connectionFile), { recursive: true, force: true });
    if (this.ownsCwd) fs.rmSync(this.cwd, { recursive: true, force: true });
  }
}

/** Concatenated text of the stream outputs named `name`. */
export function streamText(messages: Message[], name: 'stdout' | 'stderr' = 'stdout'): string {
  return messages.filter((m) => m.header.msg_type === 'stream' && m.content.name === name).map((m) => String(m.content.text)).join('');
}

export function ofType(messages: Message[], type: string): Message[] {
  return messages.filter((m) => m.header.msg_type === type);
}

/** The content of an execute_request. */
export function executeRequest(code: string, stopOnError = true) {
  return { code, silent: false, store_history: true, user_expressions: {}, allow_stdin: false, stop_on_error: stopOnError };
}

