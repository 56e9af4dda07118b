// kernel/engine.ts without TypeScript: tslab's createExecutor / createConverter / getCodeMetadata are
// replaced (CommonJS exports, restored after each test) by stand-ins, so each test scripts what the
// executor reports through the console-like collector (log: the value; error: diagnostics and thrown
// values) and checks the outcome run() makes of it, what reaches the executor, and what is logged.
// Written against the survivors of a StrykerJS run (docs/TESTING.md, "Mutation testing").

import assert from 'assert';
import util from 'util';
import { Engine } from '../../kernel/engine';

/* eslint-disable @typescript-eslint/no-var-requires */
const executorModule = require('tslab/dist/executor') as Record<string, unknown>;
const converterModule = require('tslab/dist/converter') as Record<string, unknown>;
const metadataModule = require('tslab/dist/metadata') as Record<string, unknown>;
/* eslint-enable @typescript-eslint/no-var-requires */

type Console = { log: (...a: unknown[]) => void; error: (...a: unknown[]) => void };

interface Stand {
  rootDir?: string;
  converters?: { node: unknown; browser: unknown; close(): void };
  console?: Console;
  executed: string[];
  calls: string[];
  /** What execute() does: report through the console, then resolve with the returned value (or throw). */
  execute: (c: Console, src: string) => boolean | Promise<boolean>;
  quickInfo: unknown;
}

const D = '%s%d:%d - %s';

describe('kernel engine edges (tslab replaced by stand-ins)', function () {
  // A change that leaves a request unanswered fails here quickly instead of hanging.
  this.timeout(2000);
  const real = { createExecutor: executorModule.createExecutor, createConverter: converterModule.createConverter, getCodeMetadata: metadataModule.getCodeMetadata };
  let s: Stand;
  let logs: string[];
  let made: unknown[];

  beforeEach(() => {
    s = { executed: [], calls: [], execute: () => true, quickInfo: undefined };
    logs = [];
    made = [];
    executorModule.createExecutor = (rootDir: string, converters: Stand['converters'], console: Console) => {
      Object.assign(s, { rootDir, converters, console });
      return {
        execute: async (src: string) => {
          s.executed.push(src);
          return s.execute(console, src);
        },
        interrupt: () => void s.calls.push('interrupt'),
        complete: (src: string, pos: number) => ({ candidates: [src], start: pos, end: pos + 1 }),
        inspect: (src: string, pos: number) => (s.calls.push(`inspect ${src} ${pos}`), s.quickInfo),
        close: () => void s.calls.push('close'),
      };
    };
    converterModule.createConverter = (options: unknown) => {
      const c = { options, close: () => void s.calls.push(`close converter ${made.indexOf(c)}`) };
      made.push(c);
      return c;
    };
  });
  afterEach(() => Object.assign(executorModule, { createExecutor: real.createExecutor }) && Object.assign(converterModule, { createConverter: real.createConverter }) && Object.assign(metadataModule, { getCodeMetadata: real.getCodeMetadata }));

  const engine = () => new Engine('/the/notebook', (t) => void logs.push(t));

  it('hands the executor the notebook folder and lazy converters: none is built before it is asked for, each once', () => {
    const e = engine();
    assert.strictEqual(s.rootDir, '/the/notebook');
    assert.strictEqual(made.length, 0);
    const node = s.converters!.node;
    assert.strictEqual(s.converters!.node, node);
    assert.deepStrictEqual(made.map((c) => (c as { options: unknown }).options), [{ isJS: false, isBrowser: false }]);
    const browser = s.converters!.browser;
    assert.strictEqual(s.converters!.browser, browser);
    assert.deepStrictEqual(made.map((c) => (c as { options: unknown }).options), [{ isJS: false, isBrowser: false }, { isJS: false, isBrowser: true }]);
    s.converters!.close();
    assert.deepStrictEqual(s.calls, ['close converter 0', 'close converter 1']);
    e.close();
    assert.deepStrictEqual(s.calls.slice(2), ['close']);
  });

  it('warmUp() builds the node converter only; closing converters never built closes nothing', () => {
    const e = engine();
    s.converters!.close();
    assert.deepStrictEqual(s.calls, []);
    e.warmUp();
    assert.deepStrictEqual(made.map((c) => (c as { options: unknown }).options), [{ isJS: false, isBrowser: false }]);
  });

  it('ok: the first logged value is the value; diagnostics of a successful run are warnings', async () => {
    const e = engine();
    s.execute = (c) => {
      c.log(42, 'ignored');
      c.log(43);
      c.error(D, 'other.ts', 3, 4, 'unused');
      return true;
    };
    assert.deepStrictEqual(await e.run('42'), { status: 'ok', hasValue: true, value: 42, warnings: ['other.ts3:4 - unused'] });
    s.execute = (c) => (c.log(undefined), true);
    assert.deepStrictEqual(await e.run('undefined'), { status: 'ok', hasValue: true, value: undefined, warnings: [] });
    s.execute = () => true;
    assert.deepStrictEqual(await e.run('let a = 1'), { status: 'ok', hasValue: false, value: undefined, warnings: [] });
    assert.deepStrictEqual(logs, []);
  });

  it('a cell\'s own diagnostics are mapped back to the text as typed; other files\' and odd ones are kept as they came', async () => {
    const e = engine();
    // 'f({ a }); zz' runs as 'f({ a: a }); zz': zz is at column 14 there, 11 as typed.
    s.execute = (c) => {
      c.error(D, '', 1, 14, 'Cannot find name zz');
      c.error(D, 'lib.ts', 1, 14, 'elsewhere');
      c.error(D, '', '1', 14, 'line not a number');
      c.error(D, '', 1, '14', 'column not a number');
      c.error('%s', '', 1, 14, 'other format');
      return false;
    };
    let out = await e.run('f({ a }); zz');
    assert.strictEqual(s.executed[0], 'f({ a: a }); zz');
    assert.deepStrictEqual(out, { status: 'runtime-error', thrown: '%s' });
    // The diagnostic format with other than four values after it is a thrown value, not a diagnostic.
    s.execute = (c) => (c.error(D, '', 1, 14), false);
    out = await e.run('f({ a }); zz');
    assert.deepStrictEqual(out, { status: 'runtime-error', thrown: D });
    s.execute = (c) => {
      c.error('%s', '', 1, 14, 'other format');
      return false;
    };
    out = await e.run('f({ a }); zz');
    assert.strictEqual(s.executed[0], 'f({ a: a }); zz');
    assert.deepStrictEqual(out, { status: 'runtime-error', thrown: '%s' });
    s.execute = (c) => {
      c.error(D, '', 1, 14, 'Cannot find name zz');
      c.error(D, 'lib.ts', 1, 14, 'elsewhere');
      c.error(D, '', '1', 14, 'line not a number');
      c.error(D, '', 1, '14', 'column not a number');
      return false;
    };
    assert.deepStrictEqual(await e.run('f({ a }); zz'), {
      status: 'compile-error',
      diagnostics: ['1:11 - Cannot find name zz', 'lib.ts1:14 - elsewhere', '1:14 - line not a number', '1:14 - column not a number'],
    });
  });

  it('a failure with no diagnostics and nothing thrown is still a compile error', async () => {
    const e = engine();
    s.execute = () => false;
    assert.deepStrictEqual(await e.run('x'), { status: 'compile-error', diagnostics: ['the cell did not compile'] });
  });

  it('@module cells run as typed; a cell the rewrite itself fails on is a runtime error and never runs', async () => {
    const e = engine();
    await e.run('/** @module mine */\nf({ a });');
    assert.deepStrictEqual(s.executed, ['/** @module mine */\nf({ a });']);
    const boom = new Error('metadata broke');
    metadataModule.getCodeMetadata = () => {
      throw boom;
    };
    assert.deepStrictEqual(await e.run('f({ a })'), { status: 'runtime-error', thrown: boom });
    assert.strictEqual(s.executed.length, 1);
  });

  it('thrown values: the first reported one; a converter failure (execute throws) is a runtime error too', async () => {
    const e = engine();
    const first = new TypeError('first');
    s.execute = (c) => (c.error(first), c.error(new Error('second')), false);
    assert.deepStrictEqual(await e.run('x'), { status: 'runtime-error', thrown: first });
    const broke = new Error('converter broke');
    s.execute = () => {
      throw broke;
    };
    assert.deepStrictEqual(await e.run('x'), { status: 'runtime-error', thrown: broke });
    // After the cell, reports go to the log, not into a collector.
    s.console!.log('late', 1);
    s.console!.error('late error', { a: 1 });
    assert.deepStrictEqual(logs, ['tslab executor output outside a cell: late 1', `tslab executor error outside a cell: late error ${util.inspect({ a: 1 })}`]);
  });

  it('interrupts: SIGINT, a library call stopped by it, and a top-level await cut short only when asked', async () => {
    const e = engine();
    const sigint = Object.assign(new Error('Script execution was interrupted'), { code: 'ERR_SCRIPT_EXECUTION_INTERRUPTED' });
    s.execute = (c) => (c.error(sigint), false);
    assert.deepStrictEqual(await e.run('x'), { status: 'interrupted', message: 'Interrupted (SIGINT) while the cell was running' });
    s.execute = (c) => (c.error({ code: 'ERR_SCRIPT_EXECUTION_INTERRUPTED' }), false);
    assert.strictEqual((await e.run('x')).status, 'interrupted', 'any object with that code');
    for (const notSigint of [null, 'ERR_SCRIPT_EXECUTION_INTERRUPTED', { code: 'OTHER' }, Object.assign(() => undefined, { code: 'ERR_SCRIPT_EXECUTION_INTERRUPTED' })]) {
      s.execute = (c) => (c.error(notSigint), false);
      assert.deepStrictEqual(await e.run('x'), { status: 'runtime-error', thrown: notSigint });
    }

    const lib = Object.assign(new Error('gdn: interrupted by SIGINT'), { name: 'GdnError', interrupted: true });
    s.execute = (c) => (c.error(lib), false);
    assert.deepStrictEqual(await e.run('x'), { status: 'interrupted', message: 'gdn: interrupted by SIGINT' });
    for (const notLib of [Object.assign(new Error('m'), { name: 'GdnError', interrupted: 'yes' }), Object.assign(new Error('m'), { name: 'Other', interrupted: true }), { name: 'GdnError', interrupted: true, message: 'm' }]) {
      s.execute = (c) => (c.error(notLib), false);
      assert.deepStrictEqual(await e.run('x'), { status: 'runtime-error', thrown: notLib });
    }

    const asyncInterrupt = new Error('Interrupted asynchronously');
    s.execute = (c) => (c.error(asyncInterrupt), false);
    assert.deepStrictEqual(await e.run('x'), { status: 'runtime-error', thrown: asyncInterrupt }, 'not asked: an ordinary error');
    e.interrupt();
    assert.deepStrictEqual(s.calls, [], 'no cell: interrupt() does nothing');
    s.execute = (c) => {
      e.interrupt();
      c.error(asyncInterrupt);
      return false;
    };
    assert.deepStrictEqual(await e.run('x'), { status: 'interrupted', message: 'Interrupted while the cell was waiting (top-level await)' });
    assert.deepStrictEqual(s.calls, ['interrupt']);
    // The request does not outlive its cell.
    s.execute = (c) => (c.error(asyncInterrupt), false);
    assert.deepStrictEqual(await e.run('x'), { status: 'runtime-error', thrown: asyncInterrupt });
    for (const other of [new Error('Interrupted'), { message: 'Interrupted asynchronously' }]) {
      s.execute = (c) => (e.interrupt(), c.error(other), false);
      assert.deepStrictEqual(await e.run('x'), { status: 'runtime-error', thrown: other });
    }
  });

  it('complete() and inspect() pass the cell as typed; empty quick info is null', () => {
    const e = engine();
    assert.deepStrictEqual(e.complete('f({ a })', 3), { candidates: ['f({ a })'], start: 3, end: 4 });
    s.quickInfo = undefined;
    assert.strictEqual(e.inspect('f({ a })', 2), null);
    s.quickInfo = { displayParts: [] };
    assert.strictEqual(e.inspect('abc', 1), null);
    s.quickInfo = { displayParts: [{ text: 'const ' }, { text: 'a: number' }] };
    assert.strictEqual(e.inspect('abc', 0), 'const a: number');
    assert.deepStrictEqual(s.calls, ['inspect f({ a }) 2', 'inspect abc 1', 'inspect abc 0']);
  });
});
