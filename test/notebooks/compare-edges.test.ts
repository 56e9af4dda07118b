// lib/notebooks/compare.ts at its edges, without Jupyter: which outputs are tables or figures and under
// which heading, how the two runs' outputs are paired and ordered, what is left out of a table's markup,
// how a run's facts are shortened, and the page's pieces exactly (labels, numbering, provenance cells,
// images, the missing side).

import { strict as assert } from 'assert';
import * as fs from 'fs';
import * as path from 'path';
import { compareNotebooks, comparisonHtml, Comparison, CompareItem, CROSS_RUN_LABEL, notebookItems, shortProvenance } from '../../lib/notebooks/compare';
import { Cell, Notebook, Output, PLOTLY_MIME, PNG_MIME, RUN_INFO_MIME, SVG_MIME, writeNotebook } from '../../lib/notebooks/ipynb';
import { tempDir } from './helpers';

const code = (outputs: Output[]): Cell => ({ cell_type: 'code', source: 'x', metadata: {}, outputs });
const md = (source: string | string[]): Cell => ({ cell_type: 'markdown', source, metadata: {} });
const nbOf = (cells: Cell[], metadata: Record<string, unknown> = {}): Notebook => ({ cells, metadata, nbformat: 4, nbformat_minor: 5 });
const shown = (data: Record<string, unknown>, type: Output['output_type'] = 'display_data'): Output => ({ output_type: type, data });

describe('notebook comparison: edges', () => {
  const dir = tempDir('compare-edges');
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('notebookItems: tables and figures in order, each under the last heading of level 1 to 3', () => {
    const nb = nbOf([
      code([shown({ 'text/html': '<table>t0</table>' })]),
      md('intro\n##   Timings  \nmore'),
      code([
        { output_type: 'stream', text: '<table>' },
        shown({ 'text/html': ['<div>', '<table class="x">', '</table></div>'], 'text/plain': ['tab', 'le'] }, 'execute_result'),
        shown({ 'text/html': '<tables>' }),
        shown({ 'text/html': '<TABLE>' }),
        shown({ 'text/html': 5 }),
        shown({ 'text/html': '<table>', [RUN_INFO_MIME]: { backend: 'host' } }),
        { output_type: 'update_display_data', data: { 'text/html': '<table>' } },
        { output_type: 'error', ename: 'E' },
      ]),
      md('#### Not a section'),
      md(['### ', 'Plots']),
      code([
        shown({ [PNG_MIME]: 'iVBO Rw0\nKGgo', 'text/plain': 'fig' }),
        shown({ [SVG_MIME]: ['<svg>', '</svg>'] }),
        shown({ [PLOTLY_MIME]: { data: [] }, 'text/html': '<table>' }),
        { output_type: 'display_data' },
      ]),
      md('#No space'),
      { cell_type: 'code', source: 'no outputs', metadata: {} },
    ]);
    assert.deepEqual(notebookItems(nb), [
      { kind: 'table', section: '(top)', cell: 0, html: '<table>t0</table>', text: '' },
      { kind: 'table', section: 'Timings', cell: 2, html: '<div><table class="x"></table></div>', text: 'table' },
      { kind: 'figure', section: 'Plots', cell: 5, png: 'iVBORw0KGgo', svg: undefined, plotly: undefined, text: 'fig' },
      { kind: 'figure', section: 'Plots', cell: 5, png: undefined, svg: '<svg></svg>', plotly: undefined, text: '' },
      { kind: 'figure', section: 'Plots', cell: 5, png: undefined, svg: undefined, plotly: { data: [] }, text: '' },
    ]);
  });

  it('compareNotebooks: k-th with k-th of each kind, back in notebook order; a missing side stays empty', () => {
    const a = path.join(dir, 'a.ipynb');
    const b = path.join(dir, 'b.ipynb');
    writeNotebook(a, nbOf([md('# S1'), code([shown({ [PNG_MIME]: 'A1' })]), code([shown({ 'text/html': '<table>A</table>' })]), md('# S2'), code([shown({ [PNG_MIME]: 'A2' })])], { gdnlab: { provenance: { revision: 'ra' } } }));
    writeNotebook(b, nbOf([md('# T1'), code([shown({ [PNG_MIME]: 'B1' })]), md('# T2'), code([shown({ 'text/html': '<table>B1</table>' }), shown({ 'text/html': '<table>B2</table>' })])]));
    const c = compareNotebooks(a, b);
    assert.equal(c.label, CROSS_RUN_LABEL);
    assert.deepEqual(c.a.provenance, { revision: 'ra' });
    assert.deepEqual(c.b.provenance, { note: 'no provenance recorded in this notebook (not run by `gdnlab notebooks run` or `export`)' });
    assert.deepEqual(c.a.file, a);
    assert.deepEqual(c.pairs.map((p) => [p.kind, p.section, p.a?.cell, p.b?.cell, p.a?.png ?? p.a?.html, p.b?.png ?? p.b?.html]), [
      ['figure', 'S1', 1, 1, 'A1', 'B1'],
      ['table', 'S1', 2, 3, '<table>A</table>', '<table>B1</table>'],
      ['table', 'T2', undefined, 3, undefined, '<table>B2</table>'], // placed by B's cell
      ['figure', 'S2', 4, undefined, 'A2', undefined],
    ]);
    assert.throws(() => compareNotebooks(a, path.join(dir, 'none.ipynb')), { name: 'Error', message: `notebook: ${path.join(dir, 'none.ipynb')} does not exist` });
    assert.deepEqual(compareNotebooks(b, b).pairs.map((p) => [p.kind, p.a?.cell, p.b?.cell]), [['figure', 1, 1], ['table', 3, 3], ['table', 3, 3]]);
  });

  it('shortProvenance: four facts with "?" for absent ones, else the note, else "unknown run"', () => {
    assert.equal(shortProvenance({ backend: 'cuda', device: 'H200', revision: 'abc', date: 'd' }), 'cuda · H200 · revision abc · d');
    assert.equal(shortProvenance({ revision: 'abc', device: null, backend: '' }), '? · ? · revision abc · ?');
    assert.equal(shortProvenance({ date: 0 }), '? · ? · revision ? · 0');
    assert.equal(shortProvenance({ backend: 'host' }), 'host · ? · revision ? · ?');
    assert.equal(shortProvenance({ device: 'x' }), '? · x · revision ? · ?');
    assert.equal(shortProvenance({ revision: 'r' }), '? · ? · revision r · ?');
    assert.equal(shortProvenance({ note: 'no facts' }), 'no facts');
    assert.equal(shortProvenance({}), 'unknown run');
  });

  it('comparisonHtml: labels carry each run\'s facts; sections numbered; tables inert; images inline; the missing side said', () => {
    const item = (x: Partial<CompareItem>): CompareItem => ({ kind: 'figure', section: 'S', cell: 0, text: '', ...x });
    const c: Comparison = {
      label: CROSS_RUN_LABEL,
      a: { file: '/r/a<1>.ipynb', provenance: { backend: 'cuda', nested: { k: 1 }, n: 2 }, items: [] },
      b: { file: 'b.ipynb', provenance: { note: 'none' }, items: [] },
      pairs: [
        {
          kind: 'table', section: 'T&S',
          a: item({ kind: 'table', html: '<table onclick="x()" onload=\'y z\' onerror=zz data-a="1" onmouseover = "a b"><script>evil()</script><tr><td>1</td></tr><SCRIPT src=q></SCRIPT></table>' }),
          b: item({ kind: 'table' }),
        },
        { kind: 'figure', section: 'F', a: item({ png: 'QUJD', text: 'a "fig"' }), b: item({ svg: '<svg/>', text: 's' }) },
        { kind: 'figure', section: 'F', a: item({ text: 'only <text>' }), b: undefined },
      ],
    };
    const html = comparisonHtml(c);
    const lines = html.split('\n');
    assert.equal(lines[0], '<!DOCTYPE html>');
    assert.equal(lines[2], `<title>${CROSS_RUN_LABEL}: a&lt;1&gt;.ipynb (A) vs b.ipynb (B)</title>`);
    const runA = '<span class="run">(A: cuda · ? · revision ? · ?)</span>';
    const runB = '<span class="run">(B: none)</span>';
    assert.ok(html.includes(`<h1>${CROSS_RUN_LABEL}: <span data-run-label="A">a&lt;1&gt;.ipynb ${runA}</span> vs <span data-run-label="B">b.ipynb ${runB}</span></h1>`));
    assert.ok(html.includes(`<th data-run-label="A">A: /r/a&lt;1&gt;.ipynb ${runA}</th><th data-run-label="B">B: b.ipynb ${runB}</th></tr></thead><tbody>`));
    assert.ok(html.includes('<tr><td data-run-label="A"><table class="prov"><tr><th>backend</th><td>cuda</td></tr><tr><th>nested</th><td>{&quot;k&quot;:1}</td></tr><tr><th>n</th><td>2</td></tr></table></td><td data-run-label="B"><table class="prov"><tr><th>note</th><td>none</td></tr></table></td></tr>'));
    assert.ok(html.includes(`<tr class="sec"><td data-run-label="A">T&amp;S — table 1 ${runA}</td><td data-run-label="B">T&amp;S — table 1 ${runB}</td></tr>`));
    assert.ok(html.includes('<tr><td><div class="tbl"><table data-a="1"><tr><td>1</td></tr></table></div></td><td><div class="tbl"></div></td></tr>'));
    assert.ok(html.includes(`<td data-run-label="A">F — figure 2 ${runA}</td>`));
    assert.ok(html.includes(`<td data-run-label="B">F — figure 3 ${runB}</td>`));
    assert.ok(html.includes(`<tr><td><img alt="a &quot;fig&quot;" src="data:image/png;base64,QUJD"></td><td><img alt="s" src="data:image/svg+xml;base64,${Buffer.from('<svg/>').toString('base64')}"></td></tr>`));
    assert.ok(html.includes('<tr><td><pre>only &lt;text&gt;</pre></td><td><p class="missing">— no matching output in this run —</p></td></tr>'));
    assert.equal(lines[lines.length - 1], '</body></html>');
    assert.equal(lines[lines.length - 2], '</tbody></table>');
    assert.ok(!/<script/i.test(html) && !/\son\w+=/.test(html));
    assert.ok(html.includes(`<div class="banner"><b>${CROSS_RUN_LABEL}</b> — the two columns are <b>different runs</b>: <span data-run-label="A">run A ${runA}</span>; <span data-run-label="B">run B ${runB}</span>. Clocks`));
  });

  it('esc covers all five characters; an empty comparison still makes a page', () => {
    const c: Comparison = { label: 'L', a: { file: 'a', provenance: {}, items: [] }, b: { file: 'b', provenance: { x: `&<>"'` }, items: [] }, pairs: [] };
    const html = comparisonHtml(c);
    assert.ok(html.includes('<td>&amp;&lt;&gt;&quot;&#39;</td>'));
    assert.ok(html.includes('<span class="run">(A: unknown run)</span>'));
    assert.ok(html.includes('</tr>\n\n</tbody></table>'));
  });
});
