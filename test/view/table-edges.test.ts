// Tables without danfojs (which loads TensorFlow.js, about a second): the renderings of
// renderTable (columns in order of first appearance, title, per-column format, maxRows) and every
// argument check of table(), each of which throws before the DataFrame is built. Where a check must
// pass, a later check is made to fail, so that no test reaches danfo.

import { strict as assert } from 'assert';
import { renderTable, table } from '../../lib/view/table';

describe('tables: edges (no danfo)', () => {
  it('renderTable: columns in order of first appearance, each once', () => {
    const { text, html } = renderTable([{ b: 1, a: 'x' }, { c: true, a: 'y' }, { b: 2, d: null }]);
    assert.equal(text.split('\n')[0], 'b  a  c    d');
    assert.ok(html.includes('<thead><tr><th>b</th><th>a</th><th>c</th><th>d</th></tr></thead>'));
    assert.equal(text, ['b  a  c    d', '-  -  ---  -', '1  x', '   y  yes', '2'].join('\n'));
  });

  it('renderTable: the chosen columns, the title as caption, formats and maxRows', () => {
    const rows = [{ a: 3.14159, b: 'p' }, { a: 2.71828, b: 'q' }];
    const { text, html } = renderTable(rows, { columns: ['b', 'a'], title: 'T', format: { a: 2 }, maxRows: 1 });
    assert.equal(text, ['T', 'b    a', '-  ---', 'p  3.1', '… 1 more rows'].join('\n'));
    assert.ok(html.startsWith('<table class="gdnlab-table"><caption style="caption-side:top;text-align:left;font-weight:bold">T</caption><thead><tr><th>b</th><th>a</th></tr></thead>'));
    assert.ok(html.includes('<tr><td>p</td><td style="text-align:right">3.1</td></tr>'));
    assert.ok(html.includes('<td colspan="2">… 1 more rows</td>'));
    assert.equal(renderTable([]).text, '\n');
  });

  it('table: rows must be an array of plain objects, the bad one named by index', () => {
    assert.throws(() => table('x' as never), { name: 'TypeError', message: "rows: expected an array of objects, got 'x'" });
    assert.throws(() => table({} as never), { name: 'TypeError', message: 'rows: expected an array of objects, got Object' });
    assert.throws(() => table([{ a: 1 }, null] as never), { name: 'TypeError', message: 'rows[1]: expected an object (column → value), got null' });
    assert.throws(() => table([{ a: 1 }, { a: 2 }, 7] as never), { name: 'TypeError', message: 'rows[2]: expected an object (column → value), got 7' });
    assert.throws(() => table([[1, 2]] as never), { name: 'TypeError', message: 'rows[0]: expected an object (column → value), got [1, 2]' });
    assert.throws(() => table(['s'] as never), { name: 'TypeError', message: "rows[0]: expected an object (column → value), got 's'" });
  });

  it('table: columns must be an array of names, each in the rows (unless there are no rows)', () => {
    const rows = [{ a: 1, b: 2 }];
    assert.throws(() => table(rows, { columns: 'a' as never }), { name: 'TypeError', message: "columns: expected an array of column names, got 'a'" });
    assert.throws(() => table(rows, { columns: ['a', 3] as never }), { name: 'TypeError', message: "columns: expected an array of column names, got ['a', 3]" });
    assert.throws(() => table(rows, { columns: ['x', 'a', 'y'] }), { name: 'RangeError', message: "columns: 'x', 'y' not in the rows (columns: 'a', 'b')" });
    // Known columns, or any columns of no rows, pass: the format check after them is the one that fails.
    assert.throws(() => table(rows, { columns: ['b', 'a'], format: { a: 0 } }), { name: 'TypeError', message: 'format.a: expected significant digits (1..17) or a function, got 0' });
    assert.throws(() => table([], { columns: ['x'], format: { x: 0 } }), { name: 'TypeError', message: /^format\.x:/ });
    assert.throws(() => table(rows, { columns: [], format: { a: 0 } }), { name: 'TypeError', message: /^format\.a:/ });
  });

  it('table: with no format the checks pass on to the columns (read a second time there)', () => {
    // A getter that throws on its second read marks the line after the checks, before danfo loads.
    let reads = 0;
    const opts = {
      get columns(): string[] | undefined {
        if (++reads === 2) throw new Error('past the checks');
        return undefined;
      },
    };
    assert.throws(() => table([{ a: 1 }], opts), /^Error: past the checks$/);
    assert.equal(reads, 2);
  });

  it('table: a format is a function or whole significant digits from 1 to 17', () => {
    const rows = [{ a: 1 }];
    const bad = (f: unknown) => ({ p: 1, q: 17, r: (v: unknown) => String(v), s: f });
    for (const f of [0, 18, 2.5, -1, '4', null, NaN]) {
      assert.throws(() => table(rows, { format: bad(f) as never }), { name: 'TypeError', message: /^format\.s: expected significant digits \(1\.\.17\) or a function, got / }, String(f));
    }
  });
});
