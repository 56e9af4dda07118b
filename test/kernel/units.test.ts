// The kernel's pure parts, without sockets: wire format, stream batching, is_complete, cursor
// conversion, history, value and error formatting, connection files.

import assert from 'assert';
import { codePointToUtf16, utf16ToCodePoint } from '../../kernel/code-points';
import { parseConnectionInfo, endpoint } from '../../kernel/connection';
import { normalizeMimeBundle } from '../../kernel/display';
import { compileError, formatValue, runtimeError } from '../../kernel/format';
import { globToRegExp, History } from '../../kernel/history';
import { IOPub, splitText } from '../../kernel/iopub';
import { isComplete, nextIndent } from '../../kernel/is-complete';
import { decode, encode, Header, Message, newHeader, Signer, WireError } from '../../kernel/wire';

function message(content: Record<string, unknown> = { code: '1' }): Message {
  return { identities: [Buffer.from('client-1')], header: newHeader('execute_request', 's'), parentHeader: {}, metadata: {}, content, buffers: [Buffer.from([1, 2, 3])] };
}

describe('kernel units', () => {
  describe('wire', () => {
    const signer = new Signer('hmac-sha256', 'secret');

    it('round-trips a message with identities and buffers', () => {
      const m = message();
      const back = decode(encode(m, signer), signer);
      assert.deepStrictEqual(back, m);
    });

    it('rejects a tampered message, a wrong key and a missing delimiter', () => {
      const frames = encode(message(), signer);
      const tampered = frames.slice();
      tampered[tampered.length - 2] = Buffer.from('{"code":"2"}');
      assert.throws(() => decode(tampered, signer), /signature does not match/);
      assert.throws(() => decode(frames, new Signer('hmac-sha256', 'other')), WireError);
      assert.throws(() => decode(frames.filter((f) => f.toString() !== '<IDS|MSG>'), signer), /no <IDS\|MSG> delimiter/);
    });

    it('signs nothing with an empty key and checks the scheme', () => {
      const unsigned = new Signer('hmac-sha256', '');
      const frames = encode(message(), unsigned);
      assert.strictEqual(frames[2].toString(), '');
      assert.ok(decode(frames, unsigned));
      assert.throws(() => new Signer('sha256', 'k'), /signature_scheme: expected "hmac-<digest>"/);
      assert.throws(() => new Signer('hmac-nosuchdigest', 'k'), /digest "nosuchdigest" is not supported/);
    });
  });

  describe('IOPub stream batching', () => {
    function recorder() {
      const sent: Message[] = [];
      const signer = new Signer('hmac-sha256', 'k');
      return { sent, iopub: new IOPub({ enqueue: (f) => sent.push(decode(f, signer)), drained: async () => undefined }, signer, 'sess', { maxStreamChars: 32, flushDelayMs: 20 }) };
    }
    const cell = (id: string): Header => ({ ...newHeader('execute_request', 'client'), msg_id: id });

    it('joins writes of one cell and stream, and flushes before any other message', () => {
      const { sent, iopub } = recorder();
      iopub.stream(cell('a'), 'stdout', 'x');
      iopub.stream(cell('a'), 'stdout', 'y');
      assert.strictEqual(sent.length, 0, 'still batched');
      iopub.publish('execute_result', { data: {} }, cell('a'));
      assert.deepStrictEqual(sent.map((m) => [m.header.msg_type, m.content.text]), [['stream', 'xy'], ['execute_result', undefined]]);
    });

    it('starts a new message when the stream or the cell changes', () => {
      const { sent, iopub } = recorder();
      iopub.stream(cell('a'), 'stdout', '1');
      iopub.stream(cell('a'), 'stderr', '2');
      iopub.stream(cell('b'), 'stderr', '3');
      iopub.flushStreams();
      assert.deepStrictEqual(sent.map((m) => [(m.parentHeader as Header).msg_id, m.content.name, m.content.text]), [['a', 'stdout', '1'], ['a', 'stderr', '2'], ['b', 'stderr', '3']]);
    });

    it('sends when the batch reaches the size limit, in pieces no larger than it', () => {
      const { sent, iopub } = recorder();
      iopub.stream(cell('a'), 'stdout', 'z'.repeat(100));
      assert.deepStrictEqual(sent.map((m) => String(m.content.text).length), [32, 32, 32], 'full pieces go at once, the rest stays batched');
      iopub.stream(cell('a'), 'stdout', 'y');
      iopub.flushStreams();
      assert.deepStrictEqual(sent.map((m) => String(m.content.text).length), [32, 32, 32, 5]);
      assert.strictEqual(sent.map((m) => m.content.text).join(''), 'z'.repeat(100) + 'y');
    });

    it('sends a quiet batch after the flush delay', async () => {
      const { sent, iopub } = recorder();
      iopub.stream(cell('a'), 'stdout', 'later');
      await new Promise((r) => setTimeout(r, 60));
      assert.deepStrictEqual(sent.map((m) => m.content.text), ['later']);
    });

    it('splits text after newlines and never inside a surrogate pair', () => {
      assert.deepStrictEqual(splitText('aaaa\nbbbb\ncc', 8), ['aaaa\n', 'bbbb\ncc']);
      const emoji = 'x'.repeat(7) + '😀' + 'y';
      const pieces = splitText(emoji, 8);
      assert.deepStrictEqual(pieces, ['x'.repeat(7), '😀y']);
    });
  });

  describe('is_complete', () => {
    it('classifies code', () => {
      assert.strictEqual(isComplete('').status, 'complete');
      assert.strictEqual(isComplete('const t = <number>x;').status, 'complete');
      assert.deepStrictEqual(isComplete('class A {\n  m() {'), { status: 'incomplete', indent: '    ' });
      assert.deepStrictEqual(isComplete('/* open comment'), { status: 'incomplete', indent: '' });
      assert.deepStrictEqual(isComplete("'continued \\"), { status: 'incomplete', indent: '' });
      assert.strictEqual(isComplete('a b').status, 'invalid');
      assert.strictEqual(isComplete(')').status, 'invalid');
    });
    it('indents one level after an opening bracket, ignoring a trailing comment', () => {
      assert.strictEqual(nextIndent('  foo({ // note'), '    ');
      assert.strictEqual(nextIndent('\tbar\n\n'), '\t');
    });
  });

  describe('cursor positions', () => {
    it('converts between code points and UTF-16 units', () => {
      const s = 'a😀b';
      assert.strictEqual(codePointToUtf16(s, 2), 3);
      assert.strictEqual(utf16ToCodePoint(s, 3), 2);
      assert.strictEqual(codePointToUtf16(s, 99), s.length);
      assert.strictEqual(utf16ToCodePoint(s, 0), 0);
    });
  });

  describe('history', () => {
    it('answers tail, range and search like IPython', () => {
      const h = new History();
      h.add(1, 'a = 1');
      h.add(2, 'b = 2');
      h.add(3, 'a = 1');
      h.setOutput(2, '2');
      assert.deepStrictEqual(h.query({ hist_access_type: 'tail', n: 2, output: false }), [[1, 2, 'b = 2'], [1, 3, 'a = 1']]);
      assert.deepStrictEqual(h.query({ hist_access_type: 'range', session: 0, start: 2, stop: 3, output: true }), [[1, 2, ['b = 2', '2']]]);
      assert.deepStrictEqual(h.query({ hist_access_type: 'range', session: 7, start: 1, stop: 3 }), []);
      assert.strictEqual(h.query({ hist_access_type: 'search', pattern: 'a*' }).length, 2);
      assert.deepStrictEqual(h.query({ hist_access_type: 'search', pattern: 'a*', unique: true }), [[1, 3, 'a = 1']]);
      assert.deepStrictEqual(h.query({ hist_access_type: 'nonsense' }), []);
    });
    it('turns globs into anchored regular expressions', () => {
      assert.ok(globToRegExp('6 * 7').test('6 * 7'));
      assert.ok(globToRegExp('f?o[!x]').test('fooy'));
      assert.ok(!globToRegExp('f?o[!x]').test('foox'));
      assert.ok(!globToRegExp('a.b').test('aXb'));
    });
  });

  describe('formatting', () => {
    it('formats plain values with util.inspect', () => {
      assert.deepStrictEqual(formatValue(new Map([[1, 'a']])), { data: { 'text/plain': "Map(1) { 1 => 'a' }" }, metadata: {} });
    });
    it('uses a mime bundle and adds text/plain when missing', () => {
      const v = { [Symbol.for('gdnlab.mimeBundle')]: () => ({ data: { 'text/markdown': '**m**' } }) };
      const f = formatValue(v)!;
      assert.deepStrictEqual(Object.keys(f.data).sort(), ['text/markdown', 'text/plain']);
      assert.strictEqual(f.warning, undefined);
    });
    it('gives no execute_result for a value whose bundle method returns null (already displayed)', () => {
      assert.strictEqual(formatValue({ [Symbol.for('gdnlab.mimeBundle')]: () => null }), null);
    });
    it('reports a bad bundle and falls back to text/plain', () => {
      const v = { [Symbol.for('gdnlab.mimeBundle')]: () => ({ data: { notamime: 1 } }) };
      const f = formatValue(v)!;
      assert.deepStrictEqual(Object.keys(f.data), ['text/plain']);
      assert.match(String(f.warning), /key "notamime" is not a mime type/);
    });
    it('builds error contents', () => {
      const e = runtimeError(new SyntaxError('nope'));
      assert.deepStrictEqual([e.ename, e.evalue], ['SyntaxError', 'nope']);
      assert.deepStrictEqual(runtimeError(null), { ename: 'Uncaught', evalue: 'null', traceback: ['\u001b[1;31mUncaught\u001b[0m null'] });
      const c = compileError(['1:1 - a', '2:2 - b']);
      assert.strictEqual(c.evalue, '1:1 - a (and 1 more)');
      assert.strictEqual(c.traceback.length, 3);
    });
    it('checks mime bundles and base64-encodes binary values', () => {
      assert.deepStrictEqual(normalizeMimeBundle({ 'image/png': new Uint8Array([255]) }), { 'image/png': '/w==' });
      assert.throws(() => normalizeMimeBundle({}), /at least one mime type/);
      assert.throws(() => normalizeMimeBundle({ 'text/plain': undefined }), /data\["text\/plain"\]: expected a value/);
    });
  });

  describe('connection file', () => {
    const good = { transport: 'tcp', ip: '127.0.0.1', key: 'k', signature_scheme: 'hmac-sha256', shell_port: 1, iopub_port: 2, stdin_port: 3, control_port: 4, hb_port: 5 };
    it('parses a connection and builds endpoints', () => {
      const c = parseConnectionInfo(good);
      assert.strictEqual(endpoint(c, 'hb'), 'tcp://127.0.0.1:5');
      assert.strictEqual(endpoint({ ...c, transport: 'ipc', ip: '/tmp/k' }, 'shell'), 'ipc:///tmp/k-1');
    });
    it('names the bad field', () => {
      assert.throws(() => parseConnectionInfo({ ...good, shell_port: 'x' }), /shell_port: expected an integer port in \[1, 65535\], got "x"/);
      assert.throws(() => parseConnectionInfo({ ...good, transport: 'udp' }), /transport: expected "tcp" or "ipc"/);
      assert.throws(() => parseConnectionInfo([]), /expected a JSON object/);
    });
  });
});
