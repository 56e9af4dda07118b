// Shorthand properties and exports naming earlier cells' declarations (kernel/cell-rewrite.ts):
// the rewrite on its own, then through the real kernel, cell after cell, asserting the values.

import assert from 'assert';
import { rewriteCell } from '../../kernel/cell-rewrite';
import { KernelClient, ofType } from './kernel-client';

describe('cell rewrite', () => {
  const rewritten = (code: string) => rewriteCell(code).code;

  describe('shorthand properties', () => {
    it('spells out shorthands the cell does not declare, wherever the object literal is', () => {
      assert.strictEqual(rewritten('const y = { x };\ny;'), 'const y = { x: x };\ny;');
      assert.strictEqual(rewritten('f({ a: { x } }, [{ x }])'), 'f({ a: { x: x } }, [{ x: x }])');
      assert.strictEqual(rewritten('const g = () => ({ x, y: 1, ...rest });'), 'const g = () => ({ x: x, y: 1, ...rest });');
      assert.strictEqual(rewritten('`${JSON.stringify({ x })}`'), '`${JSON.stringify({ x: x })}`');
      assert.strictEqual(rewritten('class C { m() { return { x }; } }'), 'class C { m() { return { x: x }; } }');
    });

    it('leaves shorthands naming the cell\'s own declarations, parameters and locals', () => {
      const untouched = [
        'const x = 1; const y = { x };',
        'const y = { x }; let x = 1;', // the cell's x, even before its declaration
        'function f(x: number) { return { x }; }',
        'const f = ({ x }: { x: number }) => ({ x });',
        'const f = (...[x]: number[]) => ({ x });',
        'function f(x = 1, y = { x }) { return y; }',
        'function f() { if (true) { var x = 1; } return { x }; }',
        'try { } catch (x) { ({ x }); }',
        'for (const x of [1]) ({ x });',
        'for (let x = 0; x < 1; x++) ({ x });',
        'const f = function x() { return { x }; };',
        'const C = class x { m() { return { x }; } };',
        'function x() {} ({ x });',
        'class x {} ({ x });',
        'enum x { A } ({ x });',
        'namespace x { export const a = 1; } ({ x });',
        "import { x } from 'm'; ({ x });",
        "import x from 'm'; ({ x });",
        "import * as x from 'm'; ({ x });",
        "import x = require('m'); ({ x });",
        'switch (1) { case 1: let x = 1; ({ x }); }',
      ];
      for (const code of untouched) assert.strictEqual(rewritten(code), code, code);
    });

    it('rewrites shorthands where the cell\'s declaration of the name is not in scope', () => {
      assert.strictEqual(rewritten('{ const x = 1; } const y = { x };'), '{ const x = 1; } const y = { x: x };');
      assert.strictEqual(rewritten('function f() { const x = 1; } ({ x });'), 'function f() { const x = 1; } ({ x: x });');
      assert.strictEqual(rewritten('function f(a = { x }) { var x; }'), 'function f(a = { x: x }) { var x; }', 'defaults do not see the body');
      assert.strictEqual(rewritten('class C { x = 1; m() { return { x }; } }'), 'class C { x = 1; m() { return { x: x }; } }', 'a property is no variable');
      assert.strictEqual(rewritten('interface x {} ({ x });'), 'interface x {} ({ x: x });', 'a type is no value');
      assert.strictEqual(rewritten("import type { x } from 'm'; ({ x });"), "import type { x } from 'm'; ({ x: x });");
      assert.strictEqual(rewritten('namespace x { type T = 1; } ({ x });'), 'namespace x { type T = 1; } ({ x: x });');
    });

    it('rewrites `{ x = d }` only as a destructuring assignment target, where it is valid', () => {
      assert.strictEqual(rewritten('({ x } = o);'), '({ x: x } = o);');
      assert.strictEqual(rewritten('({ x = 3 } = o);'), '({ x: x = 3 } = o);');
      assert.strictEqual(rewritten('[{ x = 3 }] = a;'), '[{ x: x = 3 }] = a;');
      assert.strictEqual(rewritten('({ a: { x = 3 } } = o);'), '({ a: { x: x = 3 } } = o);');
      assert.strictEqual(rewritten('for ({ x = 3 } of list);'), 'for ({ x: x = 3 } of list);');
      const invalid = 'const o = { x = 3 };'; // an error TypeScript must still report
      assert.strictEqual(rewritten(invalid), invalid);
    });

    it('leaves a cell with parse errors to TypeScript', () => {
      assert.strictEqual(rewritten('const y = { x ;'), 'const y = { x ;');
    });

    it('maps positions in the rewritten text back to the cell as typed', () => {
      const code = 'let a = 1;\nconst y = { x, z: nope, w };\nnope;';
      const r = rewriteCell(code);
      assert.strictEqual(r.code, 'let a = 1;\nconst y = { x: x, z: nope, w: w };\nnope;');
      const colIn = (text: string, line: number, needle: string) => text.split('\n')[line - 1].indexOf(needle) + 1;
      assert.deepStrictEqual(r.originalLineColumn(2, colIn(r.code, 2, 'nope')), { line: 2, column: colIn(code, 2, 'nope') });
      assert.deepStrictEqual(r.originalLineColumn(2, colIn(r.code, 2, ': x') + 2), { line: 2, column: colIn(code, 2, 'x') }, 'the inserted value maps to the name');
      assert.deepStrictEqual(r.originalLineColumn(2, colIn(r.code, 2, '}')), { line: 2, column: colIn(code, 2, '}') });
      assert.deepStrictEqual(r.originalLineColumn(3, 1), { line: 3, column: 1 });
      assert.deepStrictEqual(r.originalLineColumn(1, 5), { line: 1, column: 5 });
      assert.deepStrictEqual(r.originalLineColumn(9, 9), { line: 9, column: 9 }, "tslab's own appended lines stay as they are");
    });
  });

  describe('exports', () => {
    it('blanks export specifiers naming earlier cells\' values or repeating the cell\'s own names', () => {
      const blank = (text: string) => text.replace(/[^\n]/g, ' ');
      assert.strictEqual(rewritten('export { x }'), `export { ${blank('x')} }`);
      assert.strictEqual(rewritten('export { x, y }'), `export { ${blank('x, y')} }`);
      assert.strictEqual(rewritten('let a = 1; export { x, a as b }'), `let a = 1; export { ${blank('x,')} a as b }`);
      assert.strictEqual(rewritten('let a = 1; export { a as b, x as y, a }'), `let a = 1; export { a as b, ${blank('x as y, a')} }`);
      assert.strictEqual(rewritten('export {\n  x,\n}'), `export {\n  ${blank('x,')}\n}`);
    });

    it('blanks the export modifier of top-level declarations, not export default or re-exports', () => {
      assert.strictEqual(rewritten('export const z = 1;'), '       const z = 1;');
      assert.strictEqual(rewritten('export function f() {}\nexport interface I {}'), '       function f() {}\n       interface I {}');
      assert.strictEqual(rewritten('namespace N { export const a = 1; }'), 'namespace N { export const a = 1; }');
      for (const code of ['export default x;', 'export default function f() {}', "export { x } from './m';", 'export type { T };']) {
        assert.strictEqual(rewritten(code), code);
      }
    });
  });
});

describe('kernel: shorthands and exports naming earlier cells', function () {
  this.timeout(60000);
  let k: KernelClient;

  before(async () => {
    k = await KernelClient.start();
    for (const cell of [
      'const x = 5;',
      'let counter = 1, other = 2;',
      'const rest = { r: 1 };',
      'function twice(n: number) { return 2 * n; }',
      'class Box { v = 7 }',
      'enum Color { Red, Green }',
      "import * as gdn from 'gdnlab';",
    ]) {
      await run(cell);
    }
  });
  after(async () => {
    await k?.close();
  });

  /** Runs a cell, fails with its error if it has one, and returns its result's text/plain ('' for none). */
  async function run(code: string): Promise<string> {
    const r = await k.execute(code);
    const error = ofType(r.outputs, 'error')[0]?.content as Record<string, any> | undefined;
    assert.strictEqual(error, undefined, `${code}\n→ ${error?.ename}: ${error?.evalue}`);
    const result = ofType(r.outputs, 'execute_result')[0]?.content as Record<string, any> | undefined;
    return result ? String(result.data['text/plain']) : '';
  }

  async function compileError(code: string): Promise<string> {
    const r = await k.execute(code);
    const error = ofType(r.outputs, 'error')[0]?.content as Record<string, any> | undefined;
    assert.strictEqual(error?.ename, 'CompileError', `${code}: expected a compile error`);
    return String(error.evalue);
  }

  it('runs the repro: a shorthand naming an earlier cell\'s const', async () => {
    assert.strictEqual(await run('const y = { x };\ny;'), '{ x: 5 }');
    assert.strictEqual(await run('// a comment first\nconst w = { x };\nw;'), '{ x: 5 }');
  });

  it('runs shorthands in nested objects, arrays, call arguments, arrow bodies, templates and spreads', async () => {
    assert.strictEqual(await run('({ outer: { inner: { x } } })'), '{ outer: { inner: { x: 5 } } }');
    assert.strictEqual(await run('[{ x }, [{ counter }]]'), '[ { x: 5 }, [ { counter: 1 } ] ]');
    assert.strictEqual(await run('JSON.stringify({ x, other })'), "'{\"x\":5,\"other\":2}'");
    assert.strictEqual(await run('const make = () => ({ x, counter });\nmake()'), '{ x: 5, counter: 1 }');
    assert.strictEqual(await run('`${JSON.stringify({ x })}!`'), '\'{"x":5}!\'');
    assert.strictEqual(await run('({ x, y: 1, ...rest })'), '{ x: 5, y: 1, r: 1 }');
    assert.strictEqual(await run('[{ ...{ x } }].map(({ x }) => ({ x: x + 1 }))'), '[ { x: 6 } ]');
  });

  it('runs shorthands naming earlier functions, classes, enums and imports', async () => {
    assert.strictEqual(await run('const fns = { twice };\nfns.twice(x)'), '10');
    assert.strictEqual(await run('new ({ Box }).Box().v'), '7');
    assert.strictEqual(await run('({ Color }).Color.Green'), '1');
    assert.strictEqual(await run('const lib = { gdn };\nlib.gdn.add(x, 1)'), '6');
  });

  it('assigns earlier cells\' variables through shorthand destructuring targets', async () => {
    assert.strictEqual(await run('({ counter } = { counter: 10 });\ncounter'), '10');
    assert.strictEqual(await run('({ counter, other = 4 } = { counter: 11 });\n[counter, other]'), '[ 11, 4 ]');
    assert.strictEqual(await run('[{ counter }] = [{ counter: 12 }];\ncounter'), '12');
    assert.strictEqual(await run('counter'), '12', 'the notebook variable changed, not a global');
    assert.strictEqual(await run('typeof (globalThis as any).counter'), "'undefined'");
  });

  it('leaves shorthands naming the cell\'s own declarations and parameters alone', async () => {
    assert.strictEqual(await run('const s = 1;\n({ s })'), '{ s: 1 }');
    assert.strictEqual(await run('const x2 = (x: number) => ({ x });\nx2(9)'), '{ x: 9 }');
    assert.strictEqual(await run('function shadow() { const x = "inner"; return { x }; }\nshadow()'), "{ x: 'inner' }");
  });

  it('handles the other identifier positions: typeof, !, as, satisfies', async () => {
    assert.strictEqual(await run('[typeof x, x!, x as number, x satisfies number, <number>x]'), "[ 'number', 5, 5, 5, 5 ]");
  });

  it('keeps an earlier value through `export { x }`, and runs `export const`', async () => {
    assert.strictEqual(await run('export { x, counter };'), '');
    assert.strictEqual(await run('[x, counter]'), '[ 5, 12 ]');
    assert.strictEqual(await run('export const exported = 3;\nexport function exportedFn() { return 4; }'), '');
    assert.strictEqual(await run('exported + exportedFn()'), '7');
    assert.strictEqual(await run('const own = 8;\nexport { own };'), '');
    assert.strictEqual(await run('own'), '8');
  });

  it('reports compile errors at the user\'s line and column on rewritten lines', async () => {
    assert.match(await compileError('const bad = { x, y: nope };'), /^1:21 - Cannot find name 'nope'\./);
    assert.match(await compileError('let ok1 = 1;\nconst bad2 = { x, counter, missing };'), /^2:28 - Cannot find name 'missing'\./);
    assert.match(await compileError('const bad3 = { x, n: 1 as string };'), /^1:22 - Conversion of type 'number' to type 'string'/);
  });

  it('completes, inspects and answers is_complete on the cell as typed', async () => {
    const code = 'const q = { x, counter };\nq.';
    const c = (await k.request('complete_request', { code, cursor_pos: code.length })).content as Record<string, any>;
    assert.deepStrictEqual(c.matches.slice().sort(), ['counter', 'x']);
    assert.deepStrictEqual([c.cursor_start, c.cursor_end], [code.length, code.length]);
    const i = (await k.request('inspect_request', { code: 'const q2 = { x };', cursor_pos: 13, detail_level: 0 })).content as Record<string, any>;
    assert.strictEqual(i.found, true);
    assert.match(i.data['text/plain'], /x: number/);
    const done = (await k.request('is_complete_request', { code: 'const q3 = { x };' })).content as Record<string, any>;
    assert.deepStrictEqual(done, { status: 'complete' });
    const more = (await k.request('is_complete_request', { code: 'const q4 = { x,' })).content as Record<string, any>;
    assert.deepStrictEqual(more, { status: 'incomplete', indent: '' });
  });
});
