// The kernel's pure parts at their edges: the wire format and its signatures (kernel/wire.ts), how values and
// errors are shown (kernel/format.ts), history_request (kernel/history.ts) and the connection file
// (kernel/connection.ts). No sockets, no child. Written against the survivors of a StrykerJS run
// (docs/TESTING.md, "Mutation testing").

import assert from 'assert';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import util from 'util';
import { createHmac } from 'crypto';
import { decode, encode, Message, newHeader, PROTOCOL_VERSION, Signer, WireError } from '../../kernel/wire';
import { compileError, formatValue, inspectValue, interruptError, MIME_BUNDLE, runtimeError } from '../../kernel/format';
import { globToRegExp, History } from '../../kernel/history';
import { endpoint, parseConnectionInfo, readConnectionFile } from '../../kernel/connection';

const wireError = (re: RegExp) => (e: unknown) => e instanceof WireError && re.test(e.message);
const json = (v: unknown) => Buffer.from(JSON.stringify(v));
const DELIM = Buffer.from('<IDS|MSG>');
const HEADER = { msg_id: 'm', msg_type: 't', session: 's', username: 'u', date: 'd', version: '5.3' };

/** Unsigned frames (signature ''), the four JSON parts given as text. */
const frames = (parts: string[], before: Buffer[] = [], after: Buffer[] = []) => [...before, DELIM, Buffer.from(''), ...parts.map((p) => Buffer.from(p)), ...after];
const UNSIGNED = new Signer('hmac-sha256', '');

describe('kernel units: wire, format, history and connection edges', () => {
  describe('wire', () => {
    it('accepts hmac-<digest> only, in lower case, the whole scheme', () => {
      assert.ok(new Signer('hmac-sha512', 'k'));
      for (const s of ['hmac-SHA256', 'xhmac-sha256', 'hmac-sha256 ', 'hmac-', 'hmac_sha256']) {
        assert.throws(() => new Signer(s, 'k'), wireError(/^signature_scheme: expected "hmac-<digest>"/), s);
      }
      // An empty key signs nothing, whatever the scheme says.
      assert.strictEqual(new Signer('nonsense', '').sign([Buffer.from('x')]), '');
    });

    it('signs every part in order with the key (HMAC of the concatenation)', () => {
      const s = new Signer('hmac-sha256', 'key');
      const sig = s.sign(['ab', Buffer.from('cd')]);
      assert.strictEqual(sig, createHmac('sha256', 'key').update('abcd').digest('hex'));
      assert.notStrictEqual(s.sign(['cd', 'ab']), sig);
      assert.strictEqual(s.verify(sig, [Buffer.from('ab'), Buffer.from('cd')]), true);
      // A wrong signature of the right length, a short one and an empty one are refused, none throws.
      const wrong = (sig[0] === '0' ? '1' : '0') + sig.slice(1);
      assert.strictEqual(s.verify(wrong, [Buffer.from('abcd')]), false);
      assert.strictEqual(s.verify(sig.slice(2), [Buffer.from('abcd')]), false);
      assert.strictEqual(s.verify('', [Buffer.from('abcd')]), false);
      assert.strictEqual(UNSIGNED.verify('anything', []), true);
    });

    it('decodes exactly five frames after the delimiter (no buffers), with identities before it', () => {
      const ids = [Buffer.from('a'), Buffer.from('b')];
      const m = decode(frames([JSON.stringify(HEADER), '{}', '{"x":1}', '{"y":2}'], ids), UNSIGNED);
      assert.deepStrictEqual(m.identities, ids);
      assert.deepStrictEqual(m.header, HEADER);
      assert.deepStrictEqual([m.parentHeader, m.metadata, m.content, m.buffers], [{}, { x: 1 }, { y: 2 }, []]);
      const withBuffers = decode(frames([JSON.stringify(HEADER), '{}', '{}', '{}'], [], [Buffer.from('b1'), Buffer.from('b2')]), UNSIGNED);
      assert.deepStrictEqual(withBuffers.buffers.map(String), ['b1', 'b2']);
      assert.deepStrictEqual(withBuffers.identities, []);
    });

    it('refuses too few frames, counting those after the delimiter', () => {
      assert.throws(() => decode(frames([JSON.stringify(HEADER), '{}', '{}']), UNSIGNED), wireError(/^message has 4 frames after the delimiter; expected at least 5$/));
      assert.throws(() => decode([Buffer.from('id'), DELIM], UNSIGNED), wireError(/has 0 frames after/));
    });

    it('refuses frames that are not JSON objects, naming the part', () => {
      assert.throws(() => decode(frames(['{', '{}', '{}', '{}']), UNSIGNED), wireError(/^header: not valid JSON \(/));
      for (const bad of ['null', '[]', '5', '"s"']) {
        assert.throws(() => decode(frames([JSON.stringify(HEADER), '{}', '{}', bad]), UNSIGNED), wireError(/^content: expected a JSON object$/), bad);
      }
      assert.throws(() => decode(frames([JSON.stringify(HEADER), 'null', '{}', '{}']), UNSIGNED), wireError(/^parent_header:/));
      assert.throws(() => decode(frames([JSON.stringify(HEADER), '{}', '[1]', '{}']), UNSIGNED), wireError(/^metadata:/));
    });

    it('needs msg_id and msg_type as strings', () => {
      assert.throws(() => decode(frames([JSON.stringify({ ...HEADER, msg_id: 1 }), '{}', '{}', '{}']), UNSIGNED), wireError(/^header\.msg_id: expected a string$/));
      assert.throws(() => decode(frames([JSON.stringify({ msg_id: 'm' }), '{}', '{}', '{}']), UNSIGNED), wireError(/^header\.msg_type: expected a string$/));
    });

    it('encodes identities, delimiter, signature, the four parts and the buffers, in that order', () => {
      const s = new Signer('hmac-sha256', 'k');
      const m: Message = { identities: [Buffer.from('i')], header: HEADER, parentHeader: {}, metadata: { a: 1 }, content: { b: 2 }, buffers: [Buffer.from('z')] };
      const f = encode(m, s);
      assert.deepStrictEqual(f.map(String), ['i', '<IDS|MSG>', s.sign([json(HEADER), json({}), json({ a: 1 }), json({ b: 2 })]), JSON.stringify(HEADER), '{}', '{"a":1}', '{"b":2}', 'z']);
    });

    it('a new header carries its type, session, a fresh id, the time and the protocol version', () => {
      const before = Date.now();
      const h = newHeader('status', 'sess');
      assert.deepStrictEqual([h.msg_type, h.session, h.username, h.version], ['status', 'sess', 'gdnlab', PROTOCOL_VERSION]);
      assert.strictEqual(PROTOCOL_VERSION, '5.3');
      assert.match(h.msg_id, /^[0-9a-f-]{36}$/);
      assert.notStrictEqual(newHeader('status', 'sess').msg_id, h.msg_id);
      assert.ok(Date.parse(h.date) >= before - 1 && Date.parse(h.date) <= Date.now(), h.date);
      assert.match(h.date, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    });
  });

  describe('format', () => {
    it('a value whose inspection throws still gets a description', () => {
      const throwing = { [util.inspect.custom]: () => { throw new Error('no look'); } };
      assert.strictEqual(inspectValue(throwing), '[value that cannot be inspected: no look]');
      const worse = { [util.inspect.custom]: () => { throw { get message(): string { throw new Error('again'); } }; } };
      assert.strictEqual(inspectValue(worse), '[value that cannot be inspected]');
      assert.deepStrictEqual(formatValue(throwing), { data: { 'text/plain': '[value that cannot be inspected: no look]' }, metadata: {} });
    });

    it('primitives, null and functions without a bundle are inspected', () => {
      assert.deepStrictEqual(formatValue(5), { data: { 'text/plain': '5' }, metadata: {} });
      assert.deepStrictEqual(formatValue(null), { data: { 'text/plain': 'null' }, metadata: {} });
      assert.deepStrictEqual(formatValue(undefined), { data: { 'text/plain': 'undefined' }, metadata: {} });
      assert.deepStrictEqual(formatValue('s'), { data: { 'text/plain': "'s'" }, metadata: {} });
      assert.deepStrictEqual(formatValue({ [MIME_BUNDLE]: 'not a method' })!.data, { 'text/plain': "{ [Symbol(gdnlab.mimeBundle)]: 'not a method' }" });
    });

    it('a function can carry a bundle; the bundle\'s own text/plain and metadata are kept', () => {
      const f = Object.assign(() => 1, { [MIME_BUNDLE]: () => ({ data: { 'text/html': '<b>', 'text/plain': 'mine' }, metadata: { 'text/html': { isolated: true } } }) });
      assert.deepStrictEqual(formatValue(f), { data: { 'text/html': '<b>', 'text/plain': 'mine' }, metadata: { 'text/html': { isolated: true } } });
      const self = { n: 3, [MIME_BUNDLE](this: { n: number }) { return { data: { 'text/markdown': `n = ${this.n}` } }; } };
      assert.deepStrictEqual(formatValue(self)!.data['text/markdown'], 'n = 3');
    });

    it('a bad bundle falls back to text/plain with a warning naming the fault', () => {
      const warn = (bundle: unknown) => formatValue({ [MIME_BUNDLE]: () => bundle })!;
      for (const [bundle, why] of [[5, /expected \{data, metadata\}, got 5/], [undefined, /got undefined/], ['s', /got 's'/]] as const) {
        const f = warn(bundle);
        assert.deepStrictEqual(Object.keys(f.data), ['text/plain']);
        assert.deepStrictEqual(f.metadata, {});
        assert.match(f.warning!, /^\[Symbol\.for\('gdnlab\.mimeBundle'\)\]\(\) failed, showing text\/plain instead: /);
        assert.match(f.warning!, why);
      }
      for (const metadata of [null, [], 'm', 3]) {
        assert.match(warn({ data: { 'text/html': 'x' }, metadata }).warning!, /mime bundle metadata: expected an object$/, String(metadata));
      }
      assert.strictEqual(warn({ data: { 'text/html': 'x' }, metadata: {} }).warning, undefined);
      const thrown = formatValue({ [MIME_BUNDLE]: () => { throw 'a string'; } })!;
      assert.match(thrown.warning!, /instead: 'a string'$/);
      const nonStringPlain = warn({ data: { 'text/plain': 7 } });
      assert.strictEqual(typeof nonStringPlain.data['text/plain'], 'string');
      assert.strictEqual(nonStringPlain.warning, undefined);
    });

    it('errors: the name (or the class), the message, the user\'s stack frames in red; error-like objects too', () => {
      const e = new RangeError('out');
      e.stack = ['RangeError: out', '    at user (/home/u/cell.ts:1:1)', '    at x (node:internal/modules:1:1)', '    at y (/p/dist/kernel/engine.js:3:3)', '    at z (/p/node_modules/tslab/dist/a.js:1:1)', '    at runInThisContext (vm.js:1:1)', 'not a frame'].join('\n');
      assert.deepStrictEqual(runtimeError(e), { ename: 'RangeError', evalue: 'out', traceback: ['\u001b[1;31mRangeError\u001b[0m: out', '\u001b[0;31m    at user (/home/u/cell.ts:1:1)\u001b[0m'] });
      class Custom extends Error {}
      const c = new Custom('c');
      c.name = '';
      assert.strictEqual(runtimeError(c).ename, 'Custom');
      const like = { message: 'm', stack: 'E: m\n    at f (/a.ts:1:1)', name: 'Like' };
      assert.deepStrictEqual(runtimeError(like).ename, 'Like');
      assert.strictEqual(runtimeError(like).traceback.length, 2);
      const nameless = Object.assign(Object.create(null), { message: 'm', stack: 's', name: 5 });
      assert.strictEqual(runtimeError(nameless).ename, 'Error');
      const noStack = new Error('ns');
      (noStack as { stack?: unknown }).stack = undefined;
      assert.deepStrictEqual(runtimeError(noStack).traceback, ['\u001b[1;31mError\u001b[0m: ns']);
      assert.strictEqual(runtimeError({ message: 'only a message' }).ename, 'Uncaught');
      // A function carrying message and stack is no error object: it is shown as a value.
      assert.strictEqual(runtimeError(Object.assign(function f() {}, { message: 'm', stack: 's' })).ename, 'Uncaught');
      // Only lines that start with blanks and "at " are frames; a message line saying "at" is not one.
      const at = new Error('stuck at home');
      at.stack = 'Error: stuck at home\nstill at it\n    at user (/u/cell.ts:2:3)';
      assert.deepStrictEqual(runtimeError(at).traceback.slice(1), ['\u001b[0;31m    at user (/u/cell.ts:2:3)\u001b[0m']);
      assert.strictEqual(runtimeError({ stack: 'only a stack' }).ename, 'Uncaught');
      assert.deepStrictEqual(runtimeError(42), { ename: 'Uncaught', evalue: '42', traceback: ['\u001b[1;31mUncaught\u001b[0m 42'] });
    });

    it('interrupts and compile errors: one diagnostic, several, none', () => {
      assert.deepStrictEqual(interruptError('stopped'), { ename: 'KeyboardInterrupt', evalue: 'stopped', traceback: ['\u001b[1;31mKeyboardInterrupt\u001b[0m: stopped'] });
      assert.deepStrictEqual(compileError(['1:1 - a']), { ename: 'CompileError', evalue: '1:1 - a', traceback: ['\u001b[1;31mCompileError\u001b[0m: the cell did not compile', '\u001b[0;31m1:1 - a\u001b[0m'] });
      assert.strictEqual(compileError([]).evalue, 'the cell did not compile');
      assert.strictEqual(compileError([]).traceback.length, 1);
      assert.strictEqual(compileError(['a', 'b', 'c']).evalue, 'a (and 2 more)');
    });
  });

  describe('history', () => {
    const history = () => {
      const h = new History();
      for (const [i, s] of ['x = 1', 'y = 2', 'x = 1', 'z(1)'].entries()) h.add(i + 1, s);
      h.setOutput(4, 'out');
      h.setOutput(9, 'nowhere');
      return h;
    };

    it('globs: *, ?, sets, negated sets, an unclosed [, special characters literal', () => {
      const cases: [string, string[], string[]][] = [
        ['a*', ['a', 'abc', 'a\nb'], ['ba']],
        ['a?c', ['abc', 'a\nc'], ['ac', 'abbc']],
        ['[ab]x', ['ax', 'bx'], ['cx', 'abx']],
        ['[!ab]x', ['cx', '!x'], ['ax', 'bx']],
        [']x[ab]', [']xa', ']xb'], [']x[ab]', 'xa']],
        ['[a', ['[a'], ['a']],
        ['a.b+c(d)|e^$', ['a.b+c(d)|e^$'], ['aXb+c(d)|e^$', 'a.bbc(d)|e^$']],
        ['{1}', ['{1}'], ['']],
        ['[\\]', ['\\'], ['a']],
        ['a\\b', ['a\\b'], ['ab']],
      ];
      for (const [glob, yes, no] of cases) {
        const re = globToRegExp(glob);
        for (const s of yes) assert.ok(re.test(s), `${glob} matches ${JSON.stringify(s)}`);
        for (const s of no) assert.ok(!re.test(s), `${glob} does not match ${JSON.stringify(s)}`);
      }
    });

    it('tail: all without n, the last n, n floored, a negative or non-number n as none, more than there is', () => {
      const h = history();
      assert.strictEqual(h.query({ hist_access_type: 'tail' }).length, 4);
      assert.deepStrictEqual(h.query({ hist_access_type: 'tail', n: 1.9 }), [[1, 4, 'z(1)']]);
      assert.deepStrictEqual(h.query({ hist_access_type: 'tail', n: 0 }), []);
      assert.strictEqual(h.query({ hist_access_type: 'tail', n: -1 }).length, 4);
      assert.strictEqual(h.query({ hist_access_type: 'tail', n: '2' }).length, 4);
      assert.strictEqual(h.query({ hist_access_type: 'tail', n: 10 }).length, 4);
      assert.deepStrictEqual(h.query({ hist_access_type: 'tail', n: 1, output: true }), [[1, 4, ['z(1)', 'out']]]);
      assert.deepStrictEqual(h.query({ hist_access_type: 'tail', n: 1, output: 'yes' }), [[1, 4, 'z(1)']]);
      assert.deepStrictEqual(h.query({}), []);
    });

    it('range: this session or 0, start inclusive, stop exclusive, stop 0 or absent meaning the end', () => {
      const h = history();
      const lines = (r: Record<string, unknown>) => h.query({ hist_access_type: 'range', ...r }).map((x) => x[1]);
      assert.deepStrictEqual(lines({}), [1, 2, 3, 4]);
      assert.deepStrictEqual(lines({ session: 1, start: 2, stop: 4 }), [2, 3]);
      assert.deepStrictEqual(lines({ start: 4 }), [4]);
      assert.deepStrictEqual(lines({ start: 2, stop: 0 }), [2, 3, 4]);
      assert.deepStrictEqual(lines({ start: 1, stop: 1 }), []);
      assert.deepStrictEqual(lines({ session: 2 }), []);
      assert.deepStrictEqual(lines({ session: '1', start: '3', stop: '4' }), [1, 2, 3, 4]);
    });

    it('search: the pattern (any when absent), unique keeping the latest, the last n', () => {
      const h = history();
      const lines = (r: Record<string, unknown>) => h.query({ hist_access_type: 'search', ...r }).map((x) => x[1]);
      assert.deepStrictEqual(lines({}), [1, 2, 3, 4]);
      assert.deepStrictEqual(lines({ pattern: 7 }), [1, 2, 3, 4]);
      assert.deepStrictEqual(lines({ pattern: 'x*' }), [1, 3]);
      assert.deepStrictEqual(lines({ pattern: '*', unique: true }), [2, 3, 4]);
      assert.deepStrictEqual(lines({ pattern: '*', unique: 'yes' }), [1, 2, 3, 4]);
      assert.deepStrictEqual(lines({ pattern: '*', n: 2 }), [3, 4]);
      assert.deepStrictEqual(lines({ pattern: '*', unique: true, n: 2 }), [3, 4]);
      assert.deepStrictEqual(lines({ pattern: 'x*', n: 5 }), [1, 3]);
    });
  });

  describe('connection', () => {
    const good = { ip: '127.0.0.1', shell_port: 1, iopub_port: 2, stdin_port: 3, control_port: 4, hb_port: 65535 };

    it('defaults: tcp, no key, hmac-sha256; ports 1 and 65535 are ports', () => {
      const c = parseConnectionInfo(good);
      assert.deepStrictEqual(c, { transport: 'tcp', ip: '127.0.0.1', key: '', signature_scheme: 'hmac-sha256', shell_port: 1, iopub_port: 2, stdin_port: 3, control_port: 4, hb_port: 65535 });
      assert.strictEqual(endpoint(c, 'iopub'), 'tcp://127.0.0.1:2');
      assert.strictEqual(endpoint({ ...c, transport: 'ipc', ip: 'k' }, 'hb'), 'ipc://k-65535');
      assert.strictEqual(parseConnectionInfo({ ...good, transport: 'ipc', key: 'abc', signature_scheme: 'hmac-sha512' }).signature_scheme, 'hmac-sha512');
    });

    it('names each bad field, and the source', () => {
      const bad = (raw: unknown, re: RegExp) => assert.throws(() => parseConnectionInfo(raw, 'f.json'), (e: Error) => re.test(e.message));
      bad(null, /^f\.json: expected a JSON object$/);
      bad('x', /expected a JSON object/);
      bad({ ...good, ip: '' }, /^f\.json: ip: expected a non-empty string$/);
      bad({ ...good, ip: 5 }, /ip: expected/);
      bad({ ...good, key: 5 }, /^f\.json: key: expected a string$/);
      bad({ ...good, signature_scheme: 5 }, /^f\.json: signature_scheme: expected a string$/);
      bad({ ...good, transport: 'udp' }, /^f\.json: transport: expected "tcp" or "ipc", got "udp"$/);
      for (const port of [0, 65536, 1.5, '5', undefined, -1]) bad({ ...good, control_port: port }, new RegExp(`^f\\.json: control_port: expected an integer port in \\[1, 65535\\], got ${port === undefined ? 'undefined' : JSON.stringify(port).replace('.', '\\.')}$`));
    });

    it('reads the file, naming it when it is not JSON', () => {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gdnlab-conn-'));
      try {
        const file = path.join(dir, 'c.json');
        fs.writeFileSync(file, JSON.stringify(good));
        assert.strictEqual(readConnectionFile(file).hb_port, 65535);
        fs.writeFileSync(file, '{');
        assert.throws(() => readConnectionFile(file), (e: Error) => e.message.startsWith(`connection file ${file}: cannot read it as JSON (`));
        fs.writeFileSync(file, '[]');
        assert.throws(() => readConnectionFile(file), (e: Error) => e.message === `${file}: expected a JSON object`);
      } finally {
        fs.rmSync(dir, { recursive: true, force: true });
      }
    });
  });
});
