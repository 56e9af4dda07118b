// kernel/iopub.ts at its edges: the defaults (64 Ki characters, 50 ms), the size check, one flush timer per
// batch (global timers replaced by a recording stand-in, so nothing here waits), a batch exactly at the limit,
// status messages, each message's topic and buffers, and splitText at its boundaries and surrogates. Written
// against the survivors of a StrykerJS run (docs/TESTING.md, "Mutation testing").

import assert from 'assert';
import { IOPub, IOPubOptions, splitText } from '../../kernel/iopub';
import { decode, Header, Message, newHeader, Signer } from '../../kernel/wire';

const signer = new Signer('hmac-sha256', 'k');
const cell = (id: string): Header => ({ ...newHeader('execute_request', 'client'), msg_id: id });

/** An IOPub whose frames are decoded into `sent`, and the raw frames into `frames`. */
function recorder(options?: IOPubOptions) {
  const sent: Message[] = [];
  const frames: Buffer[][] = [];
  const iopub = new IOPub({ enqueue: (f) => (frames.push(f), sent.push(decode(f, signer))), drained: async () => undefined }, signer, 'sess', options);
  return { sent, frames, iopub };
}

/** Runs `body` with setTimeout / clearTimeout replaced by stand-ins that record and never fire on their own. */
function withFakeTimers(body: (timers: { set: { fn: () => void; ms: number | undefined }[]; cleared: unknown[] }) => void): void {
  const set: { fn: () => void; ms: number | undefined; handle?: unknown }[] = [];
  const cleared: unknown[] = [];
  const g = globalThis as unknown as { setTimeout: unknown; clearTimeout: unknown };
  const real = { setTimeout: g.setTimeout, clearTimeout: g.clearTimeout };
  g.setTimeout = (fn: () => void, ms?: number) => {
    const handle = { unref: () => handle, id: set.length };
    set.push({ fn, ms, handle });
    return handle;
  };
  g.clearTimeout = (h: unknown) => void cleared.push(h);
  try {
    body({ set, cleared });
  } finally {
    g.setTimeout = real.setTimeout;
    g.clearTimeout = real.clearTimeout;
  }
}

describe('kernel units: IOPub edges', () => {
  it('the size limit must be at least 16 characters (16 is fine, 15 and NaN are not)', () => {
    assert.ok(recorder({ maxStreamChars: 16 }));
    for (const bad of [15, NaN, -1]) assert.throws(() => recorder({ maxStreamChars: bad }), /^RangeError: maxStreamChars: expected a number ≥ 16, got /, String(bad));
  });

  it('by default a batch is sent at 64 Ki characters, and waits 50 ms otherwise', () => {
    withFakeTimers(({ set }) => {
      const { sent, iopub } = recorder();
      iopub.stream(cell('a'), 'stdout', 'x'.repeat(64 * 1024 - 1));
      assert.strictEqual(sent.length, 0);
      assert.deepStrictEqual(set.map((t) => t.ms), [50]);
      iopub.stream(cell('a'), 'stdout', 'y');
      assert.deepStrictEqual(sent.map((m) => String(m.content.text).length), [64 * 1024]);
    });
  });

  it('one timer per batch: started by the first write, cleared by a flush, started again by the next batch', () => {
    withFakeTimers(({ set, cleared }) => {
      const { sent, iopub } = recorder({ maxStreamChars: 32, flushDelayMs: 7 });
      iopub.stream(cell('a'), 'stdout', 'a');
      iopub.stream(cell('a'), 'stdout', 'b');
      iopub.stream(cell('a'), 'stdout', 'c');
      assert.deepStrictEqual(set.map((t) => t.ms), [7]);
      iopub.flushStreams();
      assert.strictEqual(cleared.length, 1);
      assert.deepStrictEqual(sent.map((m) => m.content.text), ['abc']);
      iopub.stream(cell('a'), 'stdout', 'd');
      assert.strictEqual(set.length, 2, 'the next batch has its own timer');
      set[1].fn();
      assert.deepStrictEqual(sent.map((m) => m.content.text), ['abc', 'd']);
      // The timer that fired is gone: a new batch starts another.
      iopub.stream(cell('a'), 'stdout', 'e');
      assert.strictEqual(set.length, 3);
    });
  });

  it('a batch that reaches the limit exactly goes at once and leaves no timer running', () => {
    withFakeTimers(({ set }) => {
      const { sent, iopub } = recorder({ maxStreamChars: 16, flushDelayMs: 5 });
      iopub.stream(cell('a'), 'stdout', 'z'.repeat(16));
      assert.deepStrictEqual(sent.map((m) => m.content.text), ['z'.repeat(16)]);
      assert.strictEqual(set.length, 0);
    });
  });

  it('empty text sends nothing; a flush or a message with nothing batched sends only that message', () => {
    const { sent, iopub } = recorder({ maxStreamChars: 16, flushDelayMs: 5 });
    iopub.stream(cell('a'), 'stdout', '');
    iopub.flushStreams();
    assert.strictEqual(sent.length, 0);
    iopub.status('busy', cell('a'));
    iopub.status('idle', cell('a'));
    assert.deepStrictEqual(sent.map((m) => [m.header.msg_type, m.content, (m.parentHeader as Header).msg_id, m.header.session]), [['status', { execution_state: 'busy' }, 'a', 'sess'], ['status', { execution_state: 'idle' }, 'a', 'sess']]);
  });

  it('drained() sends the batch at once and hands back the queue\'s own promise', () => {
    const sent: Message[] = [];
    const queued = Promise.resolve();
    const iopub = new IOPub({ enqueue: (f) => sent.push(decode(f, signer)), drained: () => queued }, signer, 'sess');
    iopub.stream(cell('a'), 'stdout', 'o');
    assert.strictEqual(iopub.drained(), queued);
    assert.deepStrictEqual(sent.map((m) => m.content.text), ['o']);
  });

  it('each message goes out under its topic, with no buffers', async () => {
    const { sent, frames, iopub } = recorder();
    iopub.stream(cell('a'), 'stderr', 'e');
    await iopub.drained();
    iopub.publish('display_data', { data: { 'text/plain': 'x' } }, cell('a'), { m: 1 });
    assert.deepStrictEqual(sent.map((m) => m.identities.map(String)), [['kernel.sess.stream'], ['kernel.sess.display_data']]);
    assert.deepStrictEqual(sent.map((m) => m.buffers.length), [0, 0]);
    assert.deepStrictEqual(frames.map((f) => f.length), [7, 7]);
    assert.deepStrictEqual(sent[1].metadata, { m: 1 });
  });

  it('splitText: exactly the limit is one piece, twice the limit two, and a cut moves only before a high surrogate', () => {
    assert.deepStrictEqual(splitText('a'.repeat(16), 16), ['a'.repeat(16)]);
    assert.deepStrictEqual(splitText('a'.repeat(32), 16), ['a'.repeat(16), 'a'.repeat(16)]);
    for (const high of ['\ud800', '\udbff']) {
      const text = 'a'.repeat(15) + high + '\udc00' + 'b';
      assert.deepStrictEqual(splitText(text, 16), ['a'.repeat(15), `${high}\udc00b`], high.charCodeAt(0).toString(16));
    }
    for (const other of ['\udc00', '\ue000', '\ud7ff']) {
      const text = 'a'.repeat(15) + other + 'bb';
      assert.deepStrictEqual(splitText(text, 16), ['a'.repeat(15) + other, 'bb'], other.charCodeAt(0).toString(16));
    }
  });
});
