// kernel/cell-rewrite.ts and kernel/cell-scopes.ts at their edges, without a kernel: which `{ x = d }` are
// assignment targets, which declarations the cell makes (anonymous ones, holes, type-only imports, namespaces
// with and without a value, `var` in a namespace), which export specifiers are blanked (type-only, `a as a`,
// blanks before the comma, line breaks kept), and the position map through several insertions, CRLF and lone
// CR. Written against the survivors of a StrykerJS run (docs/TESTING.md, "Mutation testing").

import assert from 'assert';
import { asTyped, rewriteCell } from '../../kernel/cell-rewrite';

const rewritten = (code: string) => rewriteCell(code).code;

describe('cell rewrite: edges', () => {
  it('`{ x = d }` is rewritten only as an assignment target: not on the right of =, not beside +, not inside a for-of\'s list', () => {
    for (const code of ['y = { x = 3 };', '({ x = 3 } + o);', 'for (y of [{ x = 3 }]);']) assert.strictEqual(rewritten(code), code, code);
    assert.strictEqual(rewritten('[...{ x = 3 }] = a;'), '[...{ x: x = 3 }] = a;');
  });

  it('declarations the cell makes: a name declared in two scopes keeps both; holes and anonymous declarations declare nothing', () => {
    for (const code of ['const x = 2; function f() { const x = 1; } ({ x });', 'const [, x] = [1, 2]; ({ x });']) assert.strictEqual(rewritten(code), code, code);
    assert.strictEqual(rewritten('export default function () {} ({ x });'), 'export default function () {} ({ x: x });');
    assert.strictEqual(rewritten('export default class {} ({ x });'), 'export default class {} ({ x: x });');
    assert.strictEqual(rewritten('(function () { return { x }; });'), '(function () { return { x: x }; });');
  });

  it('type-only imports, ambient modules and `declare global` declare no value', () => {
    assert.strictEqual(rewritten("import type * as x from 'm'; ({ x });"), "import type * as x from 'm'; ({ x: x });");
    assert.strictEqual(rewritten("import type x = require('m'); ({ x });"), "import type x = require('m'); ({ x: x });");
    assert.strictEqual(rewritten("declare module 'x' { const a: number; } ({ x });"), "declare module 'x' { const a: number; } ({ x: x });");
    assert.strictEqual(rewritten('declare global { const g: number; } ({ global });'), 'declare global { const g: number; } ({ global: global });');
  });

  it('namespaces: dotted names, a value beside a type, nested type-only ones; a `var` inside stays inside', () => {
    assert.strictEqual(rewritten('namespace a.b { export const c = 1; } ({ a });'), 'namespace a.b { export const c = 1; } ({ a });');
    assert.strictEqual(rewritten('namespace x { type T = 1; export const a = 1; } ({ x });'), 'namespace x { type T = 1; export const a = 1; } ({ x });');
    assert.strictEqual(rewritten('namespace x { namespace y { type T = 1; } } ({ x });'), 'namespace x { namespace y { type T = 1; } } ({ x: x });');
    assert.strictEqual(rewritten('namespace N { var x = 1; } ({ x });'), 'namespace N { var x = 1; } ({ x: x });');
    assert.strictEqual(rewritten('namespace N { var x = 1; ({ x }); }'), 'namespace N { var x = 1; ({ x }); }');
  });

  it('only the export modifier is blanked, not async or declare', () => {
    for (const code of ['async function f() {}\n({ x });', 'declare const q: number; ({ x });']) {
      assert.strictEqual(rewritten(code), code.replace('({ x })', '({ x: x })'), code);
    }
  });

  it('export specifiers: the comma after blanks, `a as a` is no rename, type-only ones stay, the brace and line breaks stay', () => {
    assert.strictEqual(rewritten('export { x , y }'), 'export {       }');
    assert.strictEqual(rewritten('export { type T, x }'), 'export { type T,   }');
    assert.strictEqual(rewritten('let a = 1; export { a as a }'), 'let a = 1; export {        }');
    assert.strictEqual(rewritten('export {x}'), 'export { }');
    assert.strictEqual(rewritten('export { x\n, y }'), 'export {  \n    }');
  });

  it('a cell with nothing to rewrite maps every position to itself, even past a line\'s end', () => {
    for (const code of ['a;\nb;', "export { x } from './m';\nf();", 'let a = 1; export { a as b };\nf();']) {
      const r = rewriteCell(code);
      assert.strictEqual(r.code, code);
      assert.deepStrictEqual(r.originalLineColumn(1, 40), { line: 1, column: 40 }, code);
      assert.deepStrictEqual(r.originalLineColumn(2, 2), { line: 2, column: 2 }, code);
    }
    assert.deepStrictEqual(asTyped('x').originalLineColumn(3, 4), { line: 3, column: 4 });
  });

  it('maps every column through two insertions on one line (the first inserted character maps to the name)', () => {
    const r = rewriteCell('f({ a, b });');
    assert.strictEqual(r.code, 'f({ a: a, b: b });');
    const expected = [1, 2, 3, 4, 5, 5, 5, 5, 6, 7, 8, 8, 8, 8, 9, 10, 11, 12, 13];
    assert.deepStrictEqual(expected.map((_, i) => r.originalLineColumn(1, i + 1).column), expected);
    assert.ok(expected.every((_, i) => r.originalLineColumn(1, i + 1).line === 1));
    assert.deepStrictEqual(r.originalLineColumn(0, 5), { line: 0, column: 5 });
    assert.deepStrictEqual(r.originalLineColumn(2, 5), { line: 2, column: 5 });
  });

  it('CRLF counts as one line end, a lone CR as one too, an empty line as a line', () => {
    const crlf = rewriteCell('const y = { x };\r\nnope; ({ x });');
    assert.strictEqual(crlf.code, 'const y = { x: x };\r\nnope; ({ x: x });');
    assert.deepStrictEqual([1, 10, 11, 14, 15].map((c) => crlf.originalLineColumn(2, c)), [1, 10, 10, 11, 12].map((column) => ({ line: 2, column })));
    const blank = rewriteCell('const y = { x };\n\nnope;');
    assert.deepStrictEqual([blank.originalLineColumn(2, 1), blank.originalLineColumn(3, 2)], [{ line: 2, column: 1 }, { line: 3, column: 2 }]);
    const cr = rewriteCell('const y = { x };\rnope;');
    assert.deepStrictEqual(cr.originalLineColumn(2, 3), { line: 2, column: 3 });
  });
});
