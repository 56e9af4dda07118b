// The gdnlab kernel over its real ZMQ protocol: replies, IOPub sequences, results, errors,
// completion, inspection, history, and the display channel.

import assert from 'assert';
import { Header } from '../../kernel/wire';
import { KernelClient, ofType, streamText } from './kernel-client';

describe('kernel protocol', function () {
  this.timeout(30000);
  let k: KernelClient;

  before(async () => {
    k = await KernelClient.start();
  });
  after(async () => {
    await k?.close();
  });

  it('answers kernel_info with language_info for TypeScript and implementation gdnlab', async () => {
    const reply = await k.request('kernel_info_request', {});
    const c = reply.content as Record<string, any>;
    assert.strictEqual(reply.header.msg_type, 'kernel_info_reply');
    assert.strictEqual(c.status, 'ok');
    assert.strictEqual(c.implementation, 'gdnlab');
    assert.strictEqual(c.protocol_version, '5.3');
    assert.deepStrictEqual(
      { name: c.language_info.name, file_extension: c.language_info.file_extension, mimetype: c.language_info.mimetype, codemirror_mode: c.language_info.codemirror_mode },
      { name: 'typescript', file_extension: '.ts', mimetype: 'text/typescript', codemirror_mode: 'typescript' },
    );
    assert.match(c.language_info.version, /^5\.0\./);
    assert.match(c.banner, /gdnlab .*TypeScript 5\.0/);
  });

  it('publishes busy, execute_input, outputs, idle in order, with the request as parent', async () => {
    const r = await k.execute('console.log("hello, world")');
    const types = r.iopub.map((m) => (m.header.msg_type === 'status' ? `status:${m.content.execution_state}` : m.header.msg_type));
    assert.deepStrictEqual(types, ['status:busy', 'execute_input', 'stream', 'status:idle']);
    const input = r.iopub[1];
    assert.strictEqual(input.content.code, 'console.log("hello, world")');
    assert.strictEqual(input.content.execution_count, r.reply.content.execution_count);
    assert.strictEqual(streamText(r.outputs), 'hello, world\n');
    assert.strictEqual(r.reply.content.status, 'ok');
    assert.strictEqual((r.reply.parentHeader as Header).msg_type, 'execute_request');
  });

  it('sends the last value as execute_result with util.inspect text, not as stdout', async () => {
    const r = await k.execute('const o = { a: 1, b: [1, 2, 3] }; o');
    assert.deepStrictEqual(r.outputs.map((m) => m.header.msg_type), ['execute_result']);
    const res = r.outputs[0].content as Record<string, any>;
    assert.strictEqual(res.data['text/plain'], '{ a: 1, b: [ 1, 2, 3 ] }');
    assert.strictEqual(res.execution_count, r.reply.content.execution_count);
    const s = await k.execute('"text"');
    assert.strictEqual((ofType(s.outputs, 'execute_result')[0].content as any).data['text/plain'], "'text'");
    const none = await k.execute('let nothing = undefined; nothing');
    assert.strictEqual(ofType(none.outputs, 'execute_result').length, 0);
  });

  it('counts executions: each non-silent execute increments execution_count', async () => {
    const a = await k.execute('1');
    const b = await k.execute('2');
    assert.strictEqual(Number(b.reply.content.execution_count), Number(a.reply.content.execution_count) + 1);
  });

  it('sends a value\'s [Symbol.for("gdnlab.mimeBundle")]() bundle as execute_result, text/plain included', async () => {
    const r = await k.execute(`
const rich = { [Symbol.for('gdnlab.mimeBundle')]() { return { data: { 'text/html': '<b>rich</b>', 'image/svg+xml': '<svg/>' }, metadata: { 'text/html': { isolated: false } } }; } };
rich`);
    const res = ofType(r.outputs, 'execute_result')[0].content as Record<string, any>;
    assert.deepStrictEqual(Object.keys(res.data).sort(), ['image/svg+xml', 'text/html', 'text/plain']);
    assert.strictEqual(res.data['text/html'], '<b>rich</b>');
    assert.match(res.data['text/plain'], /gdnlab\.mimeBundle/);
    assert.deepStrictEqual(res.metadata, { 'text/html': { isolated: false } });
  });

  it('falls back to text/plain with a stderr note when the bundle method throws', async () => {
    const r = await k.execute(`({ [Symbol.for('gdnlab.mimeBundle')]() { throw new Error('no bundle today'); } })`);
    const res = ofType(r.outputs, 'execute_result')[0].content as Record<string, any>;
    assert.deepStrictEqual(Object.keys(res.data), ['text/plain']);
    assert.match(streamText(r.outputs, 'stderr'), /gdnlab\.mimeBundle'\)\]\(\) failed, showing text\/plain instead: no bundle today/);
    assert.strictEqual(r.reply.content.status, 'ok');
  });

  it('reports a thrown Error as an iopub error and an execute_reply with status error', async () => {
    const r = await k.execute('function inner() { throw new RangeError("too far"); }\ninner()');
    assert.deepStrictEqual(r.outputs.map((m) => m.header.msg_type), ['error']);
    const e = r.outputs[0].content as Record<string, any>;
    assert.strictEqual(e.ename, 'RangeError');
    assert.strictEqual(e.evalue, 'too far');
    assert.ok(Array.isArray(e.traceback) && e.traceback.length >= 2, 'traceback has the header and frames');
    assert.match(e.traceback.join('\n'), /inner/);
    assert.doesNotMatch(e.traceback.join('\n'), /tslab[\\/]dist|dist[\\/]kernel|node:internal/, 'kernel frames are hidden');
    const c = r.reply.content as Record<string, any>;
    assert.deepStrictEqual([c.status, c.ename, c.evalue], ['error', 'RangeError', 'too far']);
    assert.deepStrictEqual(c.traceback, e.traceback);
    assert.strictEqual(typeof c.execution_count, 'number');
  });

  it('reports compile errors as CompileError with line:col diagnostics, and nothing on stdout/stderr', async () => {
    const r = await k.execute('let n: number = 1;\nn = "one";');
    assert.deepStrictEqual(r.outputs.map((m) => m.header.msg_type), ['error']);
    const e = r.outputs[0].content as Record<string, any>;
    assert.strictEqual(e.ename, 'CompileError');
    assert.match(e.evalue, /^2:1 - Type 'string' is not assignable to type 'number'\./);
    assert.strictEqual(r.reply.content.status, 'error');
  });

  it('reports a thrown non-Error value', async () => {
    const r = await k.execute('throw { code: 42 }');
    const e = ofType(r.outputs, 'error')[0].content as Record<string, any>;
    assert.deepStrictEqual([e.ename, e.evalue], ['Uncaught', '{ code: 42 }']);
  });

  it('keeps working after errors: declarations from earlier cells stay', async () => {
    await k.execute('const kept = 41;');
    await k.execute('throw new Error("x")');
    const r = await k.execute('kept + 1');
    assert.strictEqual((ofType(r.outputs, 'execute_result')[0].content as any).data['text/plain'], '42');
  });

  it('runs silent requests without execute_input, execute_result or a new execution_count', async () => {
    const before = await k.execute('1');
    const s = await k.execute('console.log("quiet"); 5', { silent: true });
    assert.strictEqual(ofType(s.iopub, 'execute_input').length, 0);
    assert.strictEqual(ofType(s.outputs, 'execute_result').length, 0);
    assert.strictEqual(streamText(s.outputs), 'quiet\n');
    assert.strictEqual(s.reply.content.execution_count, before.reply.content.execution_count);
  });

  it('answers is_complete with complete / incomplete (+indent) / invalid', async () => {
    const ask = async (code: string) => (await k.request('is_complete_request', { code })).content as Record<string, any>;
    assert.deepStrictEqual(await ask('let x = 1;'), { status: 'complete' });
    assert.deepStrictEqual(await ask('if (x) {\n  f();\n}'), { status: 'complete' });
    assert.deepStrictEqual(await ask('function f() {'), { status: 'incomplete', indent: '  ' });
    assert.deepStrictEqual(await ask('const a = [1,\n    2,'), { status: 'incomplete', indent: '    ' });
    assert.deepStrictEqual(await ask('x = 1 +'), { status: 'incomplete', indent: '' });
    assert.deepStrictEqual(await ask('`template'), { status: 'incomplete', indent: '' });
    assert.deepStrictEqual(await ask('}'), { status: 'invalid' });
    assert.deepStrictEqual(await ask('let x = 1;\n}'), { status: 'invalid' });
    assert.deepStrictEqual(await ask('f())'), { status: 'invalid' });
    assert.deepStrictEqual(await ask("'broken\nstring'"), { status: 'invalid' });
  });

  it('completes members with tslab\'s converter, cursor positions in code points', async () => {
    const c = (await k.request('complete_request', { code: 'Math.ma', cursor_pos: 7 })).content as Record<string, any>;
    assert.strictEqual(c.status, 'ok');
    assert.ok(c.matches.includes('max'), `matches: ${c.matches}`);
    assert.deepStrictEqual([c.cursor_start, c.cursor_end], [5, 7]);
    // An astral character before the cursor: 1 code point, 2 UTF-16 units.
    const code = 'const s = "😀"; Math.ma';
    const cp = [...code].length;
    const e = (await k.request('complete_request', { code, cursor_pos: cp })).content as Record<string, any>;
    assert.ok(e.matches.includes('max'));
    assert.deepStrictEqual([e.cursor_start, e.cursor_end], [cp - 2, cp]);
  });

  it('completes names declared in earlier cells', async () => {
    await k.execute('const earlierCellValue = { alpha: 1, beta: 2 };');
    const c = (await k.request('complete_request', { code: 'earlierCellValue.', cursor_pos: 17 })).content as Record<string, any>;
    assert.deepStrictEqual(c.matches.slice().sort(), ['alpha', 'beta']);
  });

  it('inspects with type and documentation', async () => {
    const r = (await k.request('inspect_request', { code: 'Math.max(1, 2)', cursor_pos: 6, detail_level: 0 })).content as Record<string, any>;
    assert.strictEqual(r.status, 'ok');
    assert.strictEqual(r.found, true);
    assert.match(r.data['text/plain'], /Math\.max\(\.\.\.values: number\[\]\): number/);
    const none = (await k.request('inspect_request', { code: '   ', cursor_pos: 1, detail_level: 0 })).content as Record<string, any>;
    assert.deepStrictEqual([none.status, none.found], ['ok', false]);
  });

  it('answers a malformed complete_request with an error reply naming the field', async () => {
    const r = (await k.request('complete_request', { code: 42, cursor_pos: 0 })).content as Record<string, any>;
    assert.strictEqual(r.status, 'error');
    assert.match(r.evalue, /content\.code: expected a string/);
  });

  it('answers history_request (tail, search) from this session', async () => {
    await k.execute('const historyMarker = 7; historyMarker');
    const tail = (await k.request('history_request', { output: true, raw: true, hist_access_type: 'tail', n: 1 })).content as Record<string, any>;
    assert.strictEqual(tail.status, 'ok');
    assert.strictEqual(tail.history.length, 1);
    const [session, line, [input, output]] = tail.history[0];
    assert.strictEqual(session, 1);
    assert.strictEqual(typeof line, 'number');
    assert.deepStrictEqual([input, output], ['const historyMarker = 7; historyMarker', '7']);
    const search = (await k.request('history_request', { output: false, raw: true, hist_access_type: 'search', pattern: '*historyMarker*' })).content as Record<string, any>;
    assert.strictEqual(search.history.length, 1);
  });

  it('answers comm_info and connect requests', async () => {
    assert.deepStrictEqual((await k.request('comm_info_request', {})).content, { status: 'ok', comms: {} });
    const conn = (await k.request('connect_request', {})).content as Record<string, any>;
    assert.strictEqual(conn.shell_port, k.connection.shell_port);
    assert.strictEqual(conn.hb_port, k.connection.hb_port);
  });

  it('drops messages with a bad signature and keeps serving', async () => {
    const frames = [Buffer.from('<IDS|MSG>'), Buffer.from('0'.repeat(64)), Buffer.from(JSON.stringify(k.header('kernel_info_request'))), Buffer.from('{}'), Buffer.from('{}'), Buffer.from('{}')];
    await k.sendRaw(frames);
    await k.waitFor(() => /signature does not match/.test(k.stderr), 5000, 'the kernel to log the bad signature');
    const r = await k.execute('"still here"');
    assert.strictEqual(r.reply.content.status, 'ok');
  });

  it('answers kernel_info on the control channel too', async () => {
    const r = await k.request('kernel_info_request', {}, 'control');
    assert.strictEqual((r.content as any).implementation, 'gdnlab');
  });

  describe('display channel', () => {
    it('is globalThis[Symbol.for("gdnlab.kernel")]: display, update in place, clearOutput', async () => {
      const r = await k.execute(`
const kc = (globalThis as any)[Symbol.for('gdnlab.kernel')];
kc.display({ 'text/plain': 'p0', 'text/html': '<i>p0</i>' }, { 'text/html': { a: 1 } }, { displayId: 'prog' });
kc.display({ 'text/plain': 'p1' }, {}, { displayId: 'prog', update: true });
kc.display({ 'image/png': new Uint8Array([137, 80, 78, 71]) });
kc.clearOutput(true);
kc.executionCount()`);
      const types = r.outputs.map((m) => m.header.msg_type);
      assert.deepStrictEqual(types, ['display_data', 'update_display_data', 'display_data', 'clear_output', 'execute_result']);
      const [d0, d1, png, clear, result] = r.outputs.map((m) => m.content as Record<string, any>);
      assert.deepStrictEqual(d0, { data: { 'text/plain': 'p0', 'text/html': '<i>p0</i>' }, metadata: { 'text/html': { a: 1 } }, transient: { display_id: 'prog' } });
      assert.deepStrictEqual(d1, { data: { 'text/plain': 'p1' }, metadata: {}, transient: { display_id: 'prog' } });
      assert.strictEqual(png.data['image/png'], Buffer.from([137, 80, 78, 71]).toString('base64'));
      assert.deepStrictEqual(clear, { wait: true });
      assert.strictEqual(result.data['text/plain'], String(r.reply.content.execution_count));
    });

    it('rejects bad arguments with errors naming them', async () => {
      const bad = async (call: string) => {
        const r = await k.execute(`(globalThis as any)[Symbol.for('gdnlab.kernel')].${call}`);
        return (ofType(r.outputs, 'error')[0]?.content as Record<string, any>)?.evalue;
      };
      assert.match(await bad('display("text")'), /^data: expected an object mapping mime types/);
      assert.match(await bad('display({ html: "x" })'), /key "html" is not a mime type/);
      assert.match(await bad('display({ "text/plain": "x" }, {}, { update: true })'), /options\.update: an update needs options\.displayId/);
    });

    it('routes tslab.display through the same channel', async () => {
      const r = await k.execute(`import * as tslab from 'tslab';
tslab.display.html('<b>tslab</b>');
const d = tslab.newDisplay(); d.text('one'); d.text('two');`);
      const out = r.outputs.map((m) => [m.header.msg_type, (m.content as any).data]);
      assert.deepStrictEqual(out.map((o) => o[0]), ['display_data', 'display_data', 'update_display_data']);
      assert.deepStrictEqual(out[0][1], { 'text/html': '<b>tslab</b>' });
      const id1 = (r.outputs[1].content as any).transient.display_id;
      assert.ok(id1, 'newDisplay() outputs carry a display id');
      assert.strictEqual((r.outputs[2].content as any).transient.display_id, id1);
    });

    it('gives each cell its own AbortSignal, not aborted after a normal run', async () => {
      const r = await k.execute(`(globalThis as any)[Symbol.for('gdnlab.kernel')].signal().aborted`);
      assert.strictEqual((ofType(r.outputs, 'execute_result')[0].content as any).data['text/plain'], 'false');
    });
  });

  it('turns an exception thrown by leftover async work into stderr of its cell, and survives', async () => {
    const first = await k.execute('setTimeout(() => { throw new Error("late failure"); }, 50); "scheduled"');
    const firstId = (first.reply.parentHeader as Header).msg_id;
    await k.waitFor(() => /late failure/.test(streamText(k.messagesOf(firstId), 'stderr')), 5000, 'the late failure on stderr');
    const r = await k.execute('"alive"');
    assert.strictEqual(r.reply.content.status, 'ok');
  });
});
