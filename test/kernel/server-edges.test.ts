// kernel/server.ts in process: a KernelServer built on stand-in sockets (test/kernel/fake-sockets.ts),
// a recording IOPub channel and a scripted engine. Each test sends signed requests into the shell or
// control socket and checks, in order, everything that came out: replies (type, content, metadata,
// parent header, identities), IOPub status busy/idle around each request, execute_input, results,
// errors, aborted requests after a failure, interrupts, shutdown and closing. Written against the
// survivors of a StrykerJS run (docs/TESTING.md, "Mutation testing"); no child process, no real socket.

import assert from 'assert';
import { cellContext, KeyboardInterrupt } from '../../kernel/cell';
import { Engine, RunOutcome } from '../../kernel/engine';
import { IoThread } from '../../kernel/io-thread';
import { IOPubChannel } from '../../kernel/iopub';
import { KernelServer, KernelServerOptions } from '../../kernel/server';
import { decode, encode, Header, JsonObject, newHeader, PROTOCOL_VERSION, Signer } from '../../kernel/wire';
import { FakeSocket, settle, withFakeZmq } from './fake-sockets';

const signer = new Signer('hmac-sha256', 'secret');
const connection = { transport: 'tcp' as const, ip: '127.0.0.1', shell_port: 5001, iopub_port: 5002, stdin_port: 5003, control_port: 5004, hb_port: 5005, key: 'secret', signature_scheme: 'hmac-sha256' };

interface Event {
  ch: 'iopub' | 'shell' | 'control';
  type: string;
  content: JsonObject;
  parent: JsonObject;
  metadata?: JsonObject;
  identities?: string[];
  header?: Header;
  buffers?: number;
}

type FakeEngine = {
  run: (code: string) => Promise<RunOutcome>;
  interrupt: () => void;
  complete: (code: string, cursor: number) => { candidates: string[]; start: number; end: number };
  inspect: (code: string, cursor: number) => string | null;
  close: () => void;
};

function harness(engine: Partial<FakeEngine> = {}, ioClose: () => Promise<void> = async () => undefined) {
  const events: Event[] = [];
  const logs: string[] = [];
  let drainGate: () => Promise<void> = async () => undefined;
  const shutdowns: boolean[] = [];
  const calls: string[] = [];
  const iopub: IOPubChannel = {
    publish: (type, content, parent, metadata = {}) => void events.push({ ch: 'iopub', type, content, parent: parent as JsonObject, metadata }),
    status: (state, parent) => void events.push({ ch: 'iopub', type: 'status', content: { execution_state: state }, parent: parent as JsonObject }),
    stream: (parent, name, text) => void events.push({ ch: 'iopub', type: 'stream', content: { name, text }, parent }),
    flushStreams: () => void calls.push('flush'),
    drained: async () => {
      calls.push('drained');
      await drainGate();
    },
  };
  const io: IoThread = {
    iopub,
    where: 'main',
    close: async () => {
      calls.push('io.close');
      await ioClose();
    },
    closeNow: (ms) => void calls.push(`io.closeNow ${ms}`),
  };
  const fullEngine: FakeEngine = {
    run: async () => ({ status: 'ok', hasValue: false, value: undefined, warnings: [] }),
    interrupt: () => void calls.push('engine.interrupt'),
    complete: () => ({ candidates: [], start: 0, end: 0 }),
    inspect: () => null,
    close: () => void calls.push('engine.close'),
    ...engine,
  };
  FakeSocket.made = [];
  const server = withFakeZmq(
    () =>
      new KernelServer({
        connection,
        session: 'kern',
        io,
        engine: fullEngine as unknown as Engine,
        info: { implementationVersion: '1.2.3', languageVersion: '5.0.4', banner: 'the banner' },
        log: (t: string) => void logs.push(t),
        onShutdown: (restart: boolean) => void shutdowns.push(restart),
      } as unknown as KernelServerOptions),
  );
  const [shell, control, stdin] = FakeSocket.made;
  for (const [socket, ch] of [[shell, 'shell'], [control, 'control']] as const) {
    socket.onSend = (frames) => {
      const m = decode(frames, signer);
      events.push({ ch, type: m.header.msg_type, content: m.content, parent: m.parentHeader as JsonObject, metadata: m.metadata, identities: m.identities.map(String), header: m.header, buffers: m.buffers.length });
    };
  }
  let n = 0;
  /** Sends a request; returns its header. */
  const send = (socket: FakeSocket, msgType: string, content: JsonObject = {}): Header => {
    const header = { ...newHeader(msgType, 'client'), msg_id: `${msgType}#${++n}` };
    socket.push(encode({ identities: [Buffer.from(`peer${n}`)], header, parentHeader: {}, metadata: {}, content, buffers: [] }, signer));
    return header;
  };
  /** Waits until `pred` holds (at most a few hundred event-loop turns). */
  const until = async (pred: () => boolean, what = 'the expected events', rounds = 500) => {
    for (let i = 0; i < rounds && !pred(); i++) await new Promise<void>((resolve) => setImmediate(resolve));
    assert.ok(pred(), `timed out waiting for ${what}: ${JSON.stringify(events.map((e) => [e.ch, e.type]))}`);
  };
  const replies = () => events.filter((e) => e.ch !== 'iopub');
  const gateDrains = (g: () => Promise<void>) => (drainGate = g);
  return { server, events, logs, shutdowns, calls, shell, control, stdin, send, until, replies, engine: fullEngine, gateDrains };
}

/** [channel, type, parent msg_id, state or content] of each event, for compact ordering checks. */
const trace = (events: Event[]) => events.map((e) => [e.ch, e.type, e.parent.msg_id ?? null, e.type === 'status' ? e.content.execution_state : undefined]);

function deferred<T>() {
  let resolve!: (v: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

describe('kernel server edges (in process)', function () {
  // A change that leaves a request unanswered fails here quickly instead of hanging.
  this.timeout(2000);
  it('start(): binds shell, control and stdin where the connection file says, with ordered, never-dropping sends, then publishes starting', async () => {
    const h = harness();
    assert.deepStrictEqual(FakeSocket.made.map((s) => s.options), [0, 1, 2].map(() => ({ linger: 1000, sendTimeout: 0, sendHighWaterMark: 0 })));
    await h.server.start();
    assert.deepStrictEqual([h.shell.bound, h.control.bound, h.stdin.bound], [['tcp://127.0.0.1:5001'], ['tcp://127.0.0.1:5004'], ['tcp://127.0.0.1:5003']]);
    assert.deepStrictEqual(h.events, [{ ch: 'iopub', type: 'status', content: { execution_state: 'starting' }, parent: {} }]);
    assert.strictEqual((h.server as unknown as Record<string, unknown>).session, 'kern');
    assert.strictEqual(h.server.currentCell(), null);
    assert.strictEqual(h.server.fallbackCell(), null);
    assert.strictEqual(h.server.currentExecutionCount(), 0);
    await h.server.close();
  });

  it('kernel_info on shell and on control: busy, the reply to the sender with the request as parent, idle', async () => {
    const h = harness();
    await h.server.start();
    h.events.length = 0;
    const a = h.send(h.shell, 'kernel_info_request');
    await h.until(() => h.events.length === 3);
    const b = h.send(h.control, 'kernel_info_request');
    await h.until(() => h.events.length === 6);
    assert.deepStrictEqual(trace(h.events), [
      ['iopub', 'status', a.msg_id, 'busy'],
      ['shell', 'kernel_info_reply', a.msg_id, undefined],
      ['iopub', 'status', a.msg_id, 'idle'],
      ['iopub', 'status', b.msg_id, 'busy'],
      ['control', 'kernel_info_reply', b.msg_id, undefined],
      ['iopub', 'status', b.msg_id, 'idle'],
    ]);
    const expected = {
      status: 'ok',
      protocol_version: PROTOCOL_VERSION,
      implementation: 'gdnlab',
      implementation_version: '1.2.3',
      language_info: { name: 'typescript', version: '5.0.4', mimetype: 'text/typescript', file_extension: '.ts', codemirror_mode: 'typescript', pygments_lexer: 'typescript' },
      banner: 'the banner',
      help_links: [],
      debugger: false,
    };
    for (const r of h.replies()) {
      assert.deepStrictEqual(r.content, expected);
      assert.strictEqual(r.buffers, 0);
      assert.deepStrictEqual(r.metadata, {});
      assert.strictEqual(r.header!.session, 'kern');
    }
    assert.deepStrictEqual(h.replies().map((r) => r.identities), [['peer1'], ['peer2']]);
    assert.deepStrictEqual(h.replies()[0].parent, a);
    await h.server.close();
  });

  it('execute: execute_input, warnings on stderr, execute_result, then drained, then the reply; history keeps code and result', async () => {
    let seen: unknown[] = [];
    const h = harness({
      run: async (code) => {
        seen = [code, h.server.currentCell()?.executionCount, cellContext.getStore()?.parent.msg_id, h.server.fallbackCell() === h.server.currentCell()];
        return { status: 'ok', hasValue: true, value: 42, warnings: ['careful', 'twice'] };
      },
    });
    await h.server.start();
    h.events.length = 0;
    const req = h.send(h.shell, 'execute_request', { code: '6 * 7' });
    await h.until(() => h.events.length === 7);
    assert.deepStrictEqual(seen, ['6 * 7', 1, req.msg_id, true]);
    assert.deepStrictEqual(trace(h.events), [
      ['iopub', 'status', req.msg_id, 'busy'],
      ['iopub', 'execute_input', req.msg_id, undefined],
      ['iopub', 'stream', req.msg_id, undefined],
      ['iopub', 'stream', req.msg_id, undefined],
      ['iopub', 'execute_result', req.msg_id, undefined],
      ['shell', 'execute_reply', req.msg_id, undefined],
      ['iopub', 'status', req.msg_id, 'idle'],
    ]);
    assert.deepStrictEqual(h.events[1].content, { code: '6 * 7', execution_count: 1 });
    assert.deepStrictEqual([h.events[2].content, h.events[3].content], [{ name: 'stderr', text: 'careful\n' }, { name: 'stderr', text: 'twice\n' }]);
    assert.deepStrictEqual(h.events[4].content, { execution_count: 1, data: { 'text/plain': '42' }, metadata: {} });
    const reply = h.events[5];
    assert.deepStrictEqual(reply.content, { status: 'ok', execution_count: 1, payload: [], user_expressions: {} });
    assert.deepStrictEqual(Object.keys(reply.metadata!), ['started', 'status', 'dependencies_met', 'engine']);
    assert.deepStrictEqual({ ...reply.metadata, started: null }, { started: null, status: 'ok', dependencies_met: true, engine: 'kern' });
    assert.ok(!isNaN(Date.parse(String(reply.metadata!.started))));
    assert.deepStrictEqual(h.calls, ['drained']);
    assert.strictEqual(h.server.currentCell(), null, 'no cell runs after the reply');
    assert.strictEqual(h.server.fallbackCell()?.executionCount, 1);
    assert.strictEqual(h.server.fallbackCell()?.running, false);
    assert.strictEqual(h.server.currentExecutionCount(), 1);

    h.events.length = 0;
    const hist = h.send(h.shell, 'history_request', { hist_access_type: 'tail', n: 10, output: true });
    await h.until(() => h.events.length === 3);
    assert.deepStrictEqual(h.replies()[0].content, { status: 'ok', history: [[1, 1, ['6 * 7', '42']]] });
    assert.strictEqual(h.replies()[0].type, 'history_reply');
    assert.strictEqual(h.replies()[0].parent.msg_id, hist.msg_id);
    await h.server.close();
  });

  it('silent and store_history: false: silent shows nothing, counts nothing, stores nothing; store_history: false only stores nothing', async () => {
    const cells: unknown[] = [];
    const h = harness({
      run: async (code) => {
        cells.push([code, h.server.currentCell()?.executionCount]);
        return code === 'bad' ? { status: 'runtime-error', thrown: new Error('x') } : { status: 'ok', hasValue: true, value: code, warnings: [] };
      },
    });
    await h.server.start();
    h.send(h.shell, 'execute_request', { code: 'first' });
    await h.until(() => h.replies().length === 1);
    const first = h.server.fallbackCell();
    h.events.length = 0;
    const s = h.send(h.shell, 'execute_request', { code: 'quiet', silent: true, store_history: true });
    await h.until(() => h.replies().length === 1);
    assert.deepStrictEqual(trace(h.events), [['iopub', 'status', s.msg_id, 'busy'], ['shell', 'execute_reply', s.msg_id, undefined], ['iopub', 'status', s.msg_id, 'idle']]);
    assert.deepStrictEqual(h.replies()[0].content, { status: 'ok', execution_count: 1, payload: [], user_expressions: {} });
    assert.strictEqual(h.server.fallbackCell(), first, 'a silent cell does not become the fallback');
    // A silent failure publishes no error and aborts nothing queued behind it.
    h.events.length = 0;
    const bad = h.send(h.shell, 'execute_request', { code: 'bad', silent: true });
    const next = h.send(h.shell, 'execute_request', { code: 'next', store_history: false });
    await h.until(() => h.replies().length === 2);
    assert.deepStrictEqual(h.events.filter((e) => e.type === 'error'), []);
    assert.strictEqual(h.replies()[0].content.status, 'error');
    assert.strictEqual(h.replies()[0].content.execution_count, 1);
    assert.strictEqual(h.replies()[0].parent.msg_id, bad.msg_id);
    assert.deepStrictEqual(h.replies()[1].content, { status: 'ok', execution_count: 2, payload: [], user_expressions: {} });
    assert.strictEqual(h.replies()[1].parent.msg_id, next.msg_id);
    assert.deepStrictEqual(cells, [['first', 1], ['quiet', 1], ['bad', 1], ['next', 2]]);
    h.events.length = 0;
    h.send(h.shell, 'history_request', { hist_access_type: 'tail', n: 10 });
    await h.until(() => h.replies().length === 1);
    assert.deepStrictEqual(h.replies()[0].content.history, [[1, 1, 'first']]);
    await h.server.close();
  });

  it('a failing cell: error on IOPub and in the reply (traceback kept), and execute_requests already queued are aborted', async () => {
    const gate = deferred<RunOutcome>();
    const ran: string[] = [];
    const h = harness({
      run: (code) => {
        ran.push(code);
        return code === 'fails' ? gate.promise : Promise.resolve({ status: 'ok', hasValue: false, value: undefined, warnings: [] });
      },
    });
    await h.server.start();
    h.events.length = 0;
    const f = h.send(h.shell, 'execute_request', { code: 'fails' });
    await h.until(() => ran.length === 1);
    const q1 = h.send(h.shell, 'execute_request', { code: 'queued' });
    const info = h.send(h.shell, 'kernel_info_request');
    const q2 = h.send(h.shell, 'execute_request', { code: 'queued too' });
    await settle(5);
    gate.resolve({ status: 'compile-error', diagnostics: ['1:1 - nope', '2:2 - again'] });
    await h.until(() => h.replies().length === 4);
    // Arrives after the abort: runs normally.
    const later = h.send(h.shell, 'execute_request', { code: 'later' });
    await h.until(() => h.replies().length === 5);
    assert.deepStrictEqual(ran, ['fails', 'later']);
    const err = h.events.find((e) => e.type === 'error')!;
    const traceback = ['\u001b[1;31mCompileError\u001b[0m: the cell did not compile', '\u001b[0;31m1:1 - nope\u001b[0m', '\u001b[0;31m2:2 - again\u001b[0m'];
    assert.deepStrictEqual(err.content, { ename: 'CompileError', evalue: '1:1 - nope (and 1 more)', traceback });
    assert.strictEqual(err.parent.msg_id, f.msg_id);
    const [r, a1, k, a2, l] = h.replies();
    assert.deepStrictEqual(r.content, { status: 'error', execution_count: 1, ename: 'CompileError', evalue: '1:1 - nope (and 1 more)', traceback });
    assert.strictEqual(r.metadata!.status, 'error');
    for (const [a, q] of [[a1, q1], [a2, q2]] as const) {
      assert.deepStrictEqual([a.type, a.content, a.metadata, a.parent.msg_id], ['execute_reply', { status: 'aborted' }, { status: 'aborted' }, q.msg_id]);
    }
    assert.deepStrictEqual([k.type, k.parent.msg_id], ['kernel_info_reply', info.msg_id]);
    assert.deepStrictEqual([l.content.status, l.content.execution_count, l.parent.msg_id], ['ok', 2, later.msg_id]);
    // Every request, aborted or not, is wrapped in busy ... idle.
    const statuses = h.events.filter((e) => e.type === 'status').map((e) => [e.parent.msg_id, e.content.execution_state]);
    assert.deepStrictEqual(statuses, [f, q1, info, q2, later].flatMap((m) => [[m.msg_id, 'busy'], [m.msg_id, 'idle']]));
    await h.server.close();
  });

  it('stop_on_error: false aborts nothing; an abort waits for the socket to be read empty', async () => {
    const gate = deferred<RunOutcome>();
    const ran: string[] = [];
    const h = harness({
      run: (code) => {
        ran.push(code);
        return code.startsWith('fails') ? gate.promise : Promise.resolve({ status: 'ok', hasValue: false, value: undefined, warnings: [] });
      },
    });
    await h.server.start();
    h.send(h.shell, 'execute_request', { code: 'fails', stop_on_error: false });
    await h.until(() => ran.length === 1);
    h.send(h.shell, 'execute_request', { code: 'runs' });
    gate.resolve({ status: 'runtime-error', thrown: new RangeError('out') });
    await h.until(() => h.replies().length === 2);
    assert.deepStrictEqual(ran, ['fails', 'runs']);
    assert.deepStrictEqual(h.replies().map((r) => r.content.status), ['error', 'ok']);
    const e = h.replies()[0].content;
    assert.deepStrictEqual([e.ename, e.evalue, (e.traceback as string[])[0]], ['RangeError', 'out', '\u001b[1;31mRangeError\u001b[0m: out']);

    // The socket still holds a message when the cell fails: it is read and aborted too.
    let pending: (() => void) | null = null;
    h.shell.readableAnswer = (n) => {
      if (n === 1) return true;
      if (n === 2) {
        pending = () => h.send(h.shell, 'execute_request', { code: 'arrived while failing' });
        return true;
      }
      pending?.();
      pending = null;
      return false;
    };
    h.events.length = 0;
    h.send(h.shell, 'execute_request', { code: 'fails again' });
    await h.until(() => h.replies().length === 2);
    assert.strictEqual(h.shell.readableReads, 3);
    assert.deepStrictEqual(h.replies().map((r) => r.content.status), ['error', 'aborted']);
    assert.ok(!ran.includes('arrived while failing'));
    await h.server.close();
  });

  it('runtime errors, interrupts and a bad request each give their reply', async () => {
    const outcomes: RunOutcome[] = [
      { status: 'runtime-error', thrown: 'a string' },
      { status: 'interrupted', message: 'stopped here' },
    ];
    let cellSignal: AbortSignal | undefined;
    const h = harness({
      run: async () => {
        cellSignal = h.server.currentCell()!.controller.signal;
        return outcomes.shift()!;
      },
    });
    await h.server.start();
    h.send(h.shell, 'execute_request', { code: 'throw "a string"', stop_on_error: false });
    h.send(h.shell, 'execute_request', { code: 'while(1);', stop_on_error: false });
    const bad = h.send(h.shell, 'execute_request', { code: 7 });
    await h.until(() => h.replies().length === 3);
    const [u, i, b] = h.replies();
    assert.deepStrictEqual(u.content, { status: 'error', execution_count: 1, ename: 'Uncaught', evalue: "'a string'", traceback: ["\u001b[1;31mUncaught\u001b[0m 'a string'"] });
    assert.deepStrictEqual(i.content, { status: 'error', execution_count: 2, ename: 'KeyboardInterrupt', evalue: 'stopped here', traceback: ['\u001b[1;31mKeyboardInterrupt\u001b[0m: stopped here'] });
    assert.ok(cellSignal!.aborted, 'an interrupted cell has its signal aborted');
    assert.ok(cellSignal!.reason instanceof KeyboardInterrupt);
    assert.strictEqual((cellSignal!.reason as Error).message, 'stopped here');
    assert.deepStrictEqual(b.content, { status: 'error', execution_count: 2, ename: 'BadRequest', evalue: 'execute_request content.code: expected a string', traceback: [] });
    assert.deepStrictEqual(Object.keys(b.metadata!), ['started', 'status']);
    assert.strictEqual(b.metadata!.status, 'error');
    assert.strictEqual(b.parent.msg_id, bad.msg_id);
    assert.deepStrictEqual(h.events.filter((e) => e.type === 'execute_input').map((e) => e.content.execution_count), [1, 2]);
    assert.strictEqual(h.events.filter((e) => e.type === 'error').length, 2);
    await h.server.close();
  });

  it('an interrupted cell whose signal was already aborted keeps the first reason; a value shown already gives no result', async () => {
    const h = harness({
      run: async (code) => {
        if (code === 'shown') return { status: 'ok', hasValue: true, value: { [Symbol.for('gdnlab.mimeBundle')]: () => null }, warnings: [] };
        if (code === 'broken bundle') return { status: 'ok', hasValue: true, value: { [Symbol.for('gdnlab.mimeBundle')]: () => { throw new Error('no bundle'); } }, warnings: [] };
        h.server.currentCell()!.controller.abort('first reason');
        return { status: 'interrupted', message: 'later' };
      },
    });
    await h.server.start();
    h.send(h.shell, 'execute_request', { code: 'x', stop_on_error: false });
    await h.until(() => h.replies().length === 1);
    assert.strictEqual(h.server.fallbackCell()!.controller.signal.reason, 'first reason');
    h.events.length = 0;
    h.send(h.shell, 'execute_request', { code: 'shown', store_history: true });
    await h.until(() => h.replies().length === 1);
    assert.deepStrictEqual(h.events.map((e) => e.type), ['status', 'execute_input', 'execute_reply', 'status']);
    h.events.length = 0;
    h.send(h.shell, 'execute_request', { code: 'broken bundle' });
    await h.until(() => h.replies().length === 1);
    assert.deepStrictEqual(h.events.map((e) => e.type), ['status', 'execute_input', 'stream', 'execute_result', 'execute_reply', 'status']);
    assert.deepStrictEqual(h.events[2].content, { name: 'stderr', text: "[Symbol.for('gdnlab.mimeBundle')]() failed, showing text/plain instead: no bundle\n" });
    h.send(h.shell, 'history_request', { hist_access_type: 'tail', n: 5, output: true });
    await h.until(() => h.replies().length === 2);
    const hist = h.replies()[1].content.history as unknown[];
    assert.deepStrictEqual(hist.slice(1).map((e) => (e as unknown[])[2]), [['shown', null], ['broken bundle', h.events[3].content.data && (h.events[3].content.data as JsonObject)['text/plain']]]);
    await h.server.close();
  });

  it('interrupt_request on control while a cell runs: aborts the cell once, interrupts the engine, answers at once', async () => {
    const gate = deferred<RunOutcome>();
    const h = harness({ run: () => gate.promise });
    await h.server.start();
    assert.strictEqual(h.server.interrupt(), false, 'nothing to interrupt');
    assert.deepStrictEqual(h.calls, []);
    const x = h.send(h.shell, 'execute_request', { code: 'await forever' });
    await h.until(() => h.server.currentCell() !== null);
    const cell = h.server.currentCell()!;
    h.events.length = 0;
    const i1 = h.send(h.control, 'interrupt_request');
    await h.until(() => h.replies().length === 1);
    assert.deepStrictEqual(trace(h.events), [['iopub', 'status', i1.msg_id, 'busy'], ['control', 'interrupt_reply', i1.msg_id, undefined], ['iopub', 'status', i1.msg_id, 'idle']]);
    assert.deepStrictEqual(h.replies()[0].content, { status: 'ok' });
    assert.ok(cell.controller.signal.reason instanceof KeyboardInterrupt);
    const reason = cell.controller.signal.reason;
    assert.strictEqual(h.server.interrupt(), true);
    assert.strictEqual(cell.controller.signal.reason, reason, 'a second interrupt keeps the first reason');
    assert.deepStrictEqual(h.calls, ['engine.interrupt', 'engine.interrupt']);
    gate.resolve({ status: 'interrupted', message: 'Interrupted while the cell was waiting (top-level await)' });
    await h.until(() => h.replies().length === 2);
    assert.strictEqual(h.replies()[1].parent.msg_id, x.msg_id);
    assert.strictEqual(h.replies()[1].content.ename, 'KeyboardInterrupt');
    // interrupt_request on shell, with nothing running.
    h.events.length = 0;
    const i2 = h.send(h.shell, 'interrupt_request');
    await h.until(() => h.replies().length === 1);
    assert.deepStrictEqual([h.replies()[0].type, h.replies()[0].content, h.replies()[0].parent.msg_id], ['interrupt_reply', { status: 'ok' }, i2.msg_id]);
    await h.server.close();
  });

  it('comm messages: comm_open is closed at once, comm_msg and comm_close are ignored; comm_info lists none', async () => {
    const h = harness();
    await h.server.start();
    h.events.length = 0;
    const o = h.send(h.shell, 'comm_open', { comm_id: 'c1', target_name: 't' });
    const o2 = h.send(h.shell, 'comm_open', {});
    const m = h.send(h.shell, 'comm_msg', { comm_id: 'c1' });
    const c = h.send(h.shell, 'comm_close', { comm_id: 'c1' });
    const ci = h.send(h.shell, 'comm_info_request');
    await h.until(() => h.replies().length === 1 && h.events.length === 13);
    assert.deepStrictEqual(trace(h.events), [
      ['iopub', 'status', o.msg_id, 'busy'],
      ['iopub', 'comm_close', o.msg_id, undefined],
      ['iopub', 'status', o.msg_id, 'idle'],
      ['iopub', 'status', o2.msg_id, 'busy'],
      ['iopub', 'comm_close', o2.msg_id, undefined],
      ['iopub', 'status', o2.msg_id, 'idle'],
      ['iopub', 'status', m.msg_id, 'busy'],
      ['iopub', 'status', m.msg_id, 'idle'],
      ['iopub', 'status', c.msg_id, 'busy'],
      ['iopub', 'status', c.msg_id, 'idle'],
      ['iopub', 'status', ci.msg_id, 'busy'],
      ['shell', 'comm_info_reply', ci.msg_id, undefined],
      ['iopub', 'status', ci.msg_id, 'idle'],
    ]);
    assert.deepStrictEqual([h.events[1].content, h.events[4].content], [{ comm_id: 'c1', data: {} }, { comm_id: '', data: {} }]);
    assert.deepStrictEqual(h.replies()[0].content, { status: 'ok', comms: {} });
    assert.deepStrictEqual(h.logs, []);
    await h.server.close();
  });

  it('is_complete, connect, and unknown requests; a handler that throws answers status error', async () => {
    const h = harness();
    await h.server.start();
    h.send(h.shell, 'is_complete_request', { code: 'let x = {' });
    h.send(h.shell, 'is_complete_request', { code: null });
    h.send(h.shell, 'connect_request');
    const u = h.send(h.shell, 'frobnicate_request');
    h.send(h.shell, 'is_complete_request', {});
    await h.until(() => h.replies().length === 4);
    const [ic, bad, conn, missing] = h.replies();
    assert.deepStrictEqual([ic.type, ic.content.status], ['is_complete_reply', 'incomplete']);
    assert.deepStrictEqual([bad.type, bad.content.status, bad.content.ename, bad.content.evalue], ['is_complete_reply', 'error', 'TypeError', 'content.code: expected a string, got null']);
    assert.ok(Array.isArray(bad.content.traceback));
    assert.deepStrictEqual(missing.content.evalue, 'content.code: expected a string, got undefined');
    assert.deepStrictEqual(conn.content, { status: 'ok', shell_port: 5001, iopub_port: 5002, stdin_port: 5003, control_port: 5004, hb_port: 5005 });
    assert.deepStrictEqual(h.logs, ['shell: no handler for frobnicate_request']);
    const st = h.events.filter((e) => e.parent.msg_id === u.msg_id).map((e) => e.content.execution_state);
    assert.deepStrictEqual(st, ['busy', 'idle']);
    await h.server.close();
  });

  it('complete and inspect: cursor positions in code points both ways, the cursor defaults to the end, bad cursors are errors', async () => {
    const asked: unknown[] = [];
    const h = harness({
      complete: (code, cursor) => (asked.push(['complete', code, cursor]), { candidates: ['abc', 'abd'], start: 3, end: cursor }),
      inspect: (code, cursor) => (asked.push(['inspect', code, cursor]), cursor > 3 ? 'type info' : null),
    });
    await h.server.start();
    // '😀' is two UTF-16 units but one code point.
    h.send(h.shell, 'complete_request', { code: '😀.ab', cursor_pos: 4 });
    h.send(h.shell, 'complete_request', { code: '😀.ab' });
    h.send(h.shell, 'complete_request', { code: '😀.ab', cursor_pos: null });
    h.send(h.shell, 'inspect_request', { code: '😀.ab', cursor_pos: 3 });
    h.send(h.shell, 'inspect_request', { code: '😀.ab', cursor_pos: 1 });
    for (const bad of [-1, 1.5, '3', true]) h.send(h.shell, 'inspect_request', { code: 'x', cursor_pos: bad });
    h.send(h.shell, 'inspect_request', { code: 'abc', cursor_pos: 0 });
    await h.until(() => h.replies().length === 10);
    const r = h.replies();
    assert.deepStrictEqual(r[0].content, { status: 'ok', matches: ['abc', 'abd'], cursor_start: 2, cursor_end: 4, metadata: {} });
    assert.strictEqual(r[0].type, 'complete_reply');
    assert.deepStrictEqual(r[1].content, r[0].content);
    assert.deepStrictEqual(r[2].content, r[0].content);
    assert.deepStrictEqual(r[3].content, { status: 'ok', found: true, data: { 'text/plain': 'type info' }, metadata: {} });
    assert.strictEqual(r[3].type, 'inspect_reply');
    assert.deepStrictEqual(r[4].content, { status: 'ok', found: false, data: {}, metadata: {} });
    assert.deepStrictEqual(
      r.slice(5, 9).map((x) => [x.content.status, x.content.evalue]),
      ['-1', '1.5', '"3"', 'true'].map((v) => ['error', `content.cursor_pos: expected an integer ≥ 0, got ${v}`]),
    );
    assert.deepStrictEqual(r[9].content.found, false);
    assert.deepStrictEqual(asked, [['complete', '😀.ab', 5], ['complete', '😀.ab', 5], ['complete', '😀.ab', 5], ['inspect', '😀.ab', 4], ['inspect', '😀.ab', 2], ['inspect', 'abc', 0]]);
    await h.server.close();
  });

  it('shutdown on control: interrupts, answers, idles, closes engine, IO and sockets, then calls onShutdown(restart)', async () => {
    const gate = deferred<RunOutcome>();
    const h = harness({ run: () => gate.promise });
    await h.server.start();
    h.send(h.shell, 'execute_request', { code: 'long' });
    await h.until(() => h.server.currentCell() !== null);
    const cell = h.server.currentCell()!;
    h.events.length = 0;
    const s = h.send(h.control, 'shutdown_request', { restart: true });
    await h.until(() => h.shutdowns.length === 1);
    assert.deepStrictEqual(h.shutdowns, [true]);
    assert.ok(cell.controller.signal.aborted);
    assert.deepStrictEqual(trace(h.events), [['iopub', 'status', s.msg_id, 'busy'], ['control', 'shutdown_reply', s.msg_id, undefined], ['iopub', 'status', s.msg_id, 'idle']]);
    assert.deepStrictEqual(h.replies()[0].content, { status: 'ok', restart: true });
    assert.deepStrictEqual(h.calls, ['engine.interrupt', 'drained', 'engine.close', 'io.close']);
    assert.deepStrictEqual([h.shell.closed, h.control.closed, h.stdin.closed], [true, true, true]);
    // The cell finishing after shutdown sends its reply but no idle (the kernel is closing).
    h.events.length = 0;
    gate.resolve({ status: 'ok', hasValue: false, value: undefined, warnings: [] });
    await settle();
    assert.deepStrictEqual(h.events.map((e) => e.type), ['execute_reply']);
    assert.deepStrictEqual(h.logs, []);
  });

  it('shutdown on shell: restart is true only when content.restart === true; requests queued behind it are not run', async () => {
    const ran: string[] = [];
    const h = harness({ run: async (c) => (ran.push(c), { status: 'ok', hasValue: false, value: undefined, warnings: [] }) });
    await h.server.start();
    h.events.length = 0;
    const s = h.send(h.shell, 'shutdown_request', { restart: 'yes' });
    h.send(h.shell, 'execute_request', { code: 'after' });
    await h.until(() => h.shutdowns.length === 1);
    await settle();
    assert.deepStrictEqual(h.shutdowns, [false]);
    assert.deepStrictEqual(trace(h.events), [['iopub', 'status', s.msg_id, 'busy'], ['shell', 'shutdown_reply', s.msg_id, undefined], ['iopub', 'status', s.msg_id, 'idle']]);
    assert.deepStrictEqual(h.replies()[0].content, { status: 'ok', restart: false });
    assert.deepStrictEqual(ran, []);
    assert.deepStrictEqual(h.calls, ['drained', 'engine.close', 'io.close']);
  });

  it('close(): an engine that fails to close is logged and closing goes on; closeNow() closes everything at once', async () => {
    const h = harness({ close: () => { throw new Error('stuck'); } });
    await h.server.start();
    await h.server.close();
    assert.deepStrictEqual(h.logs, ['closing the engine failed: stuck']);
    assert.deepStrictEqual(h.calls, ['io.close']);
    assert.deepStrictEqual([h.shell.closed, h.control.closed, h.stdin.closed], [true, true, true]);

    const n = harness();
    n.server.closeNow();
    assert.deepStrictEqual(n.calls, ['io.closeNow 2000']);
    assert.deepStrictEqual([n.shell.closed, n.control.closed, n.stdin.closed], [true, true, true]);
  });

  it('bad frames are dropped and reading goes on; a reader that fails is logged unless the kernel is closing', async () => {
    const h = harness();
    await h.server.start();
    h.shell.push([Buffer.from('no delimiter')]);
    h.control.push([Buffer.from('<IDS|MSG>'), Buffer.from('bad'), ...['{}', '{}', '{}', '{}'].map((s) => Buffer.from(s))]);
    h.send(h.shell, 'kernel_info_request');
    await h.until(() => h.replies().length === 1);
    assert.deepStrictEqual(h.logs, ['shell: dropped a message: message has no <IDS|MSG> delimiter', 'control: dropped a message: message signature does not match (wrong key?)']);
    h.logs.length = 0;
    h.control.fail(new Error('EFSM'));
    await settle(3);
    assert.deepStrictEqual(h.logs, ['control: stopped reading: EFSM']);
    h.logs.length = 0;
    h.shell.fail(new Error('closed under it'));
    await h.server.close();
    assert.deepStrictEqual(h.logs, []);
  });

  it('send failures are logged per channel; a failing handler is logged and still ends in idle', async () => {
    const h = harness({ run: async () => { throw new Error('engine broke'); }, interrupt: () => { throw new Error('no interrupt'); } });
    await h.server.start();
    h.shell.sendRejects = { error: new Error('EAGAIN') };
    h.control.sendRejects = { error: 'plain' };
    h.send(h.shell, 'kernel_info_request');
    h.send(h.control, 'kernel_info_request');
    await h.until(() => h.logs.length === 2);
    assert.deepStrictEqual(h.logs.sort(), ['control: send failed: plain', 'shell: send failed: EAGAIN']);
    h.logs.length = 0;
    h.events.length = 0;
    const x = h.send(h.shell, 'execute_request', { code: 'x' });
    await h.until(() => h.events.some((e) => e.content.execution_state === 'idle'));
    assert.strictEqual(h.logs.length, 1);
    assert.match(h.logs[0], /^shell: execute_request failed: Error: engine broke\n\s+at /);
    assert.deepStrictEqual(h.events.map((e) => [e.type, e.parent.msg_id]), [['status', x.msg_id], ['execute_input', x.msg_id], ['status', x.msg_id]]);
    // A running cell makes interrupt() reach the engine, which throws here.
    h.logs.length = 0;
    h.events.length = 0;
    const gate = deferred<RunOutcome>();
    h.engine.run = () => gate.promise;
    h.send(h.shell, 'execute_request', { code: 'y' });
    await h.until(() => h.server.currentCell() !== null);
    const i = h.send(h.control, 'interrupt_request');
    await h.until(() => h.logs.length === 1);
    assert.match(h.logs[0], /^control: interrupt_request failed: Error: no interrupt\n\s+at /);
    await h.until(() => h.events.filter((e) => e.parent.msg_id === i.msg_id).length === 2);
    assert.deepStrictEqual(h.events.filter((e) => e.parent.msg_id === i.msg_id).map((e) => e.content.execution_state), ['busy', 'idle']);
    h.send(h.control, 'what_request');
    await h.until(() => h.logs.length === 2);
    assert.strictEqual(h.logs[1], 'control: no handler for what_request');
    gate.resolve({ status: 'ok', hasValue: false, value: undefined, warnings: [] });
    await h.server.close();
  });
  it('requests other than a failing execute abort nothing: what is queued behind each still runs', async () => {
    const gate = deferred<RunOutcome>();
    const ran: string[] = [];
    const h = harness({
      run: (code) => {
        ran.push(code);
        return code === 'first' ? gate.promise : Promise.resolve({ status: 'ok', hasValue: false, value: undefined, warnings: [] });
      },
    });
    await h.server.start();
    h.send(h.shell, 'execute_request', { code: 'first' });
    await h.until(() => ran.length === 1);
    const kinds: [string, JsonObject][] = [
      ['kernel_info_request', {}],
      ['interrupt_request', {}],
      ['comm_open', { comm_id: 'c' }],
      ['comm_msg', {}],
      ['comm_close', {}],
      ['no_such_request', {}],
      ['is_complete_request', { code: '1' }],
      ['execute_request', { code: 5 }],
    ];
    for (const [type, content] of kinds) {
      h.send(h.shell, type, content);
      h.send(h.shell, 'execute_request', { code: `after ${type}` });
    }
    gate.resolve({ status: 'ok', hasValue: false, value: undefined, warnings: [] });
    await h.until(() => ran.length === 1 + kinds.length);
    assert.deepStrictEqual(ran, ['first', ...kinds.map(([t]) => `after ${t}`)]);
    assert.ok(!h.replies().some((r) => r.content.status === 'aborted'));
    await h.server.close();
  });

  it('an abort reads the socket at most 10000 times while it stays readable', async function () {
    this.timeout(5000);
    const h = harness({ run: async () => ({ status: 'runtime-error', thrown: new Error('x') }) });
    await h.server.start();
    h.shell.readableAnswer = true;
    h.send(h.shell, 'execute_request', { code: 'fails' });
    await h.until(() => h.events.some((e) => e.content.execution_state === 'idle'), 'idle', 20000);
    assert.strictEqual(h.shell.readableReads, 10000);
    await h.server.close();
  });

  it('a request that arrives while a shutdown is under way is not answered', async () => {
    const drain = deferred<void>();
    const h = harness();
    await h.server.start();
    h.gateDrains(() => drain.promise);
    h.events.length = 0;
    const s = h.send(h.control, 'shutdown_request', {});
    await h.until(() => h.replies().length === 1);
    h.send(h.shell, 'kernel_info_request');
    await settle();
    drain.resolve();
    await h.until(() => h.shutdowns.length === 1);
    await settle();
    assert.deepStrictEqual(trace(h.events), [['iopub', 'status', s.msg_id, 'busy'], ['control', 'shutdown_reply', s.msg_id, undefined], ['iopub', 'status', s.msg_id, 'idle']]);
  });

  it('a request read while close() waits for the IO thread is not answered', async () => {
    const ioClosed = deferred<void>();
    const h = harness({}, () => ioClosed.promise);
    await h.server.start();
    h.events.length = 0;
    const closing = h.server.close();
    await settle(2);
    h.send(h.shell, 'kernel_info_request');
    await settle();
    ioClosed.resolve();
    await closing;
    assert.deepStrictEqual(h.events, []);
  });

  it('readers whose sockets fail as they are closed log nothing, for close() and for closeNow()', async () => {
    for (const how of ['close', 'closeNow'] as const) {
      const h = harness();
      for (const s of [h.shell, h.control]) s.closeError = { error: new Error('Socket is closed') };
      await h.server.start();
      if (how === 'close') await h.server.close();
      else {
        h.server.closeNow();
        await settle(3);
      }
      assert.deepStrictEqual(h.logs, [], how);
    }
  });

  it('failures that are null are logged as null', async () => {
    const gate = deferred<RunOutcome>();
    let runs = 0;
    const h = harness({
      run: () => (++runs === 1 ? Promise.reject(null) : gate.promise),
      interrupt: () => {
        throw null;
      },
    });
    await h.server.start();
    h.shell.sendRejects = { error: null };
    h.send(h.shell, 'kernel_info_request');
    await h.until(() => h.logs.length === 1);
    h.shell.sendRejects = null;
    h.send(h.shell, 'execute_request', { code: 'x' });
    await h.until(() => h.logs.length === 2);
    h.send(h.shell, 'execute_request', { code: 'y' });
    await h.until(() => h.server.currentCell() !== null);
    h.send(h.control, 'interrupt_request');
    await h.until(() => h.logs.length === 3);
    assert.deepStrictEqual(h.logs, ['shell: send failed: null', 'shell: execute_request failed: null', 'control: interrupt_request failed: null']);
    gate.resolve({ status: 'ok', hasValue: false, value: undefined, warnings: [] });
    await h.server.close();
  });
});
