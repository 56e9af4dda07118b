// The kernel's display channel at its edges, without a kernel: mime bundles checked key by key (what a
// mime type is, values that must be there, binary values as base64 of exactly their bytes), the
// channel's display / clearOutput / signal / executionCount on a recording IOPub with the running cell
// given by the cell context or by the kernel (the context wins), every option check with its message,
// tslab's display hook (with tslab's jupyter module's hook slot put back after), and the global install.

import { strict as assert } from 'assert';
import { Cell, cellContext } from '../../kernel/cell';
import { KERNEL_CHANNEL, createKernelChannel, hookTslabDisplay, installKernelChannel, normalizeMimeBundle } from '../../kernel/display';
import type { IOPubChannel } from '../../kernel/iopub';
import type { KernelChannel } from '../../lib/view/display';

type Published = [string, unknown, unknown];

/** An IOPub that records what is published. */
function recordingIOPub(): { iopub: IOPubChannel; sent: Published[] } {
  const sent: Published[] = [];
  const iopub = {
    publish: (msgType: string, content: unknown, parent: unknown) => sent.push([msgType, content, parent]),
  } as unknown as IOPubChannel;
  return { iopub, sent };
}

const cell = (id: string, executionCount: number): Cell => ({ parent: { msg_id: id } as never, executionCount, controller: new AbortController(), running: true });

describe('kernel display channel: edges', () => {
  describe('normalizeMimeBundle', () => {
    it('refuses what is not a plain object, naming the argument', () => {
      for (const [v, said] of [[null, 'null'], [[1], 'an array'], ['x', 'string'], [5, 'number'], [undefined, 'undefined']] as const) {
        assert.throws(() => normalizeMimeBundle(v), { name: 'TypeError', message: `data: expected an object mapping mime types to values, got ${said}` });
      }
      assert.throws(() => normalizeMimeBundle(null, 'bundle'), { name: 'TypeError', message: 'bundle: expected an object mapping mime types to values, got null' });
      assert.throws(() => normalizeMimeBundle({}), { name: 'TypeError', message: 'data: expected at least one mime type, got an empty object' });
      assert.throws(() => normalizeMimeBundle({}, 'b'), { name: 'TypeError', message: 'b: expected at least one mime type, got an empty object' });
    });

    it('keys must be type/subtype of word characters, dots, pluses and dashes, nothing around', () => {
      for (const key of ['text', 'text/plain x', 'x text/plain', '/plain', 'text/', 'a/b/c', 'text plain', 'téxt/plain', ' a/b']) {
        assert.throws(() => normalizeMimeBundle({ 'text/plain': 'ok', [key]: 1 }), { name: 'TypeError', message: `data: key ${JSON.stringify(key)} is not a mime type (expected "type/subtype")` });
      }
      assert.throws(() => normalizeMimeBundle({ x: 1 }, 'm'), { name: 'TypeError', message: 'm: key "x" is not a mime type (expected "type/subtype")' });
      const ok = { 'a/b': 1, 'application/vnd.gdnlab.run-info+json': { x: 1 }, 'x_1.-+/y_2.-+': 'v', 'TEXT/HTML': '<b>' };
      assert.deepEqual(normalizeMimeBundle(ok), ok);
    });

    it('values: undefined refused, anything else kept as it is; bytes as base64 of the view only', () => {
      assert.throws(() => normalizeMimeBundle({ 'text/plain': 'x', 'image/png': undefined }), { name: 'TypeError', message: 'data["image/png"]: expected a value, got undefined' });
      assert.throws(() => normalizeMimeBundle({ 'a/b': undefined }, 'bundle'), { name: 'TypeError', message: 'bundle["a/b"]: expected a value, got undefined' });
      const obj = { deep: [1] };
      const out = normalizeMimeBundle({ 'a/b': null, 'c/d': obj, 'e/f': 0, 'g/h': '' });
      assert.deepEqual(out, { 'a/b': null, 'c/d': obj, 'e/f': 0, 'g/h': '' });
      assert.equal(out['c/d'], obj);
      const bytes = new Uint8Array([0, 1, 2, 255, 9]).subarray(1, 4);
      assert.deepEqual(normalizeMimeBundle({ 'image/png': bytes, 'x/y': Buffer.from('hi') }), { 'image/png': 'AQL/', 'x/y': 'aGk=' });
      // Other typed arrays are not bytes: kept as they are.
      const words = new Uint16Array([1]);
      assert.equal(normalizeMimeBundle({ 'x/y': words })['x/y'], words);
    });
  });

  describe('createKernelChannel', () => {
    it('display: the normalized bundle, metadata ({} by default) and no transient, under the running cell', () => {
      const { iopub, sent } = recordingIOPub();
      const c = cell('run', 4);
      const ch = createKernelChannel({ iopub, currentCell: () => c, executionCount: () => 99 });
      ch.display({ 'image/png': new Uint8Array([255]) });
      ch.display({ 'text/plain': 'x' }, { m: 1 }, {});
      ch.display({ 'text/plain': 'y' }, { m: 2 }, { displayId: 'd1' });
      ch.display({ 'text/plain': 'z' }, {}, { displayId: 'd1', update: true });
      ch.display({ 'text/plain': 'w' }, {}, { displayId: 'd2', update: false });
      assert.deepEqual(sent, [
        ['display_data', { data: { 'image/png': '/w==' }, metadata: {}, transient: {} }, c.parent],
        ['display_data', { data: { 'text/plain': 'x' }, metadata: { m: 1 }, transient: {} }, c.parent],
        ['display_data', { data: { 'text/plain': 'y' }, metadata: { m: 2 }, transient: { display_id: 'd1' } }, c.parent],
        ['update_display_data', { data: { 'text/plain': 'z' }, metadata: {}, transient: { display_id: 'd1' } }, c.parent],
        ['display_data', { data: { 'text/plain': 'w' }, metadata: {}, transient: { display_id: 'd2' } }, c.parent],
      ]);
    });

    it('the cell of the calling context wins over the kernel\'s running cell; no cell at all is refused', () => {
      const { iopub, sent } = recordingIOPub();
      const running = cell('running', 2);
      const mine = cell('mine', 1);
      let current: Cell | null = running;
      const ch = createKernelChannel({ iopub, currentCell: () => current, executionCount: () => 7 });
      cellContext.run(mine, () => {
        ch.display({ 'a/b': 1 });
        ch.clearOutput();
        assert.equal(ch.signal(), mine.controller.signal);
        assert.equal(ch.executionCount(), 1);
      });
      ch.clearOutput(true);
      assert.equal(ch.signal(), running.controller.signal);
      assert.equal(ch.executionCount(), 2);
      assert.deepEqual(sent, [
        ['display_data', { data: { 'a/b': 1 }, metadata: {}, transient: {} }, mine.parent],
        ['clear_output', { wait: false }, mine.parent],
        ['clear_output', { wait: true }, running.parent],
      ]);
      current = null;
      assert.throws(() => ch.display({ 'a/b': 1 }), { name: 'Error', message: 'display: no cell is running, so there is no output to attach to' });
      assert.throws(() => ch.clearOutput(), { name: 'Error', message: 'clearOutput: no cell is running, so there is no output to attach to' });
      assert.equal(sent.length, 3);
      // Outside any cell: a signal never aborted (the same one each time) and the kernel's count.
      const s = ch.signal();
      assert.equal(s.aborted, false);
      assert.equal(ch.signal(), s);
      assert.notEqual(s, running.controller.signal);
      assert.equal(ch.executionCount(), 7);
      running.controller.abort();
      current = running;
      assert.equal(ch.signal().aborted, true);
    });

    it('option checks, each before anything is published', () => {
      const { iopub, sent } = recordingIOPub();
      const c = cell('c', 1);
      const ch = createKernelChannel({ iopub, currentCell: () => c, executionCount: () => 1 });
      const bad = (fn: () => void, message: string) => assert.throws(fn, { name: 'TypeError', message });
      bad(() => ch.display({}), 'data: expected at least one mime type, got an empty object');
      for (const m of [null, [1], 'x', 3]) bad(() => ch.display({ 'a/b': 1 }, m as never), 'metadata: expected an object');
      for (const o of [null, [1], 'x']) bad(() => ch.display({ 'a/b': 1 }, {}, o as never), 'options: expected an object');
      for (const [id, said] of [['', '""'], [5, '5'], [null, 'null'], [false, 'false']] as const) {
        bad(() => ch.display({ 'a/b': 1 }, {}, { displayId: id as never }), `options.displayId: expected a non-empty string, got ${said}`);
      }
      for (const u of ['yes', 1, null]) bad(() => ch.display({ 'a/b': 1 }, {}, { displayId: 'd', update: u as never }), 'options.update: expected a boolean');
      bad(() => ch.display({ 'a/b': 1 }, {}, { update: true }), 'options.update: an update needs options.displayId (the output to replace)');
      for (const w of ['yes', 1, null]) bad(() => ch.clearOutput(w as never), 'wait: expected a boolean');
      assert.deepEqual(sent, []);
      // The checks come before the cell is looked for.
      const none = createKernelChannel({ iopub, currentCell: () => null, executionCount: () => 1 });
      bad(() => none.display({ 'a/b': 1 }, {}, { update: true }), 'options.update: an update needs options.displayId (the output to replace)');
      bad(() => none.clearOutput('no' as never), 'wait: expected a boolean');
    });
  });

  it('hookTslabDisplay: tslab\'s displays reach the channel, an update only with a display id', () => {
    // eslint-disable-next-line @typescript-eslint/no-var-requires
    const jupyter = require('tslab/dist/jupyter') as { lastWriteDisplayData: unknown };
    const saved = jupyter.lastWriteDisplayData;
    const calls: unknown[][] = [];
    const channel = { display: (...args: unknown[]) => calls.push(args) } as unknown as KernelChannel;
    try {
      hookTslabDisplay(channel);
      const write = jupyter.lastWriteDisplayData as (d: unknown, update: boolean) => void;
      assert.equal(typeof write, 'function');
      write({ data: { 'text/html': '<b>' }, metadata: { m: 1 }, transient: { display_id: 'id1' } }, true);
      write({ data: { 'text/html': '<i>' }, transient: { display_id: 'id2' } }, false);
      write({ data: { 'a/b': 1 }, transient: { display_id: '' } }, true);
      write({ data: { 'a/b': 2 }, transient: {} }, true);
      write({ data: { 'a/b': 3 } }, false);
      assert.deepEqual(calls, [
        [{ 'text/html': '<b>' }, { m: 1 }, { displayId: 'id1', update: true }],
        [{ 'text/html': '<i>' }, {}, { displayId: 'id2', update: false }],
        [{ 'a/b': 1 }, {}, { displayId: undefined, update: false }],
        [{ 'a/b': 2 }, {}, { displayId: undefined, update: false }],
        [{ 'a/b': 3 }, {}, { displayId: undefined, update: false }],
      ]);
    } finally {
      jupyter.lastWriteDisplayData = saved;
    }
  });

  it('installKernelChannel: the channel under Symbol.for(\'gdnlab.kernel\')', () => {
    assert.equal(KERNEL_CHANNEL, Symbol.for('gdnlab.kernel'));
    const g = globalThis as Record<symbol, unknown>;
    const before = g[KERNEL_CHANNEL];
    const channel = { display: () => undefined } as unknown as KernelChannel;
    try {
      installKernelChannel(channel);
      assert.equal(g[Symbol.for('gdnlab.kernel')], channel);
    } finally {
      if (before === undefined) delete g[KERNEL_CHANNEL];
      else g[KERNEL_CHANNEL] = before;
    }
  });
});
