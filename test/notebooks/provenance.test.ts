// What the reader is told about where outputs come from, checked for content (not presence): on a
// cross-run comparison page every run-specific piece names its own run's revision, backend, device and
// date and none of the other run's; an export that does not re-run keeps the run's provenance and adds
// the exporter's facts apart from it, and its page heads the outputs with the run's facts.

import { strict as assert } from 'assert';
import * as fs from 'fs';
import * as path from 'path';
import { compareNotebooks, comparisonHtml } from '../../lib/notebooks/compare';
import { exportNotebook } from '../../lib/notebooks/export';
import { Notebook, PNG_MIME, readNotebook, writeNotebook } from '../../lib/notebooks/ipynb';
import { revision } from '../../lib/provenance';
import { makeNotebook, tempDir } from './helpers';

/**
 * The elements of `html` carrying `attr` (with the value `only`, when given), each with its whole content
 * (nested tags of its kind balanced).
 */
function elementsWith(html: string, attr: string, only?: string): { value: string; html: string }[] {
  const out: { value: string; html: string }[] = [];
  const open = new RegExp(`<([a-z0-9]+)[^>]*\\s${attr}="([^"]*)"[^>]*>`, 'gi');
  for (let m = open.exec(html); m !== null; m = open.exec(html)) {
    if (only !== undefined && m[2] !== only) continue;
    const tag = m[1].toLowerCase();
    const tags = new RegExp(`<(/?)${tag}\\b[^>]*>`, 'gi');
    tags.lastIndex = m.index + m[0].length;
    let depth = 1;
    let end = -1;
    for (let t = tags.exec(html); t !== null; t = tags.exec(html)) {
      depth += t[1] ? -1 : 1;
      if (depth === 0) {
        end = t.index;
        break;
      }
    }
    assert.ok(end > 0, `<${tag} ${attr}="${m[2]}"> is closed`);
    out.push({ value: m[2], html: html.slice(m.index + m[0].length, end) });
  }
  return out;
}
const textOfHtml = (h: string) => h.replace(/<[^>]*>/g, ' ').replace(/&amp;/g, '&').replace(/\s+/g, ' ');

/** The facts a run's labels must show; no value is a substring of the other run's. */
const RUN_A = { revision: 'a1a1a1a', backend: 'cuda', backendChoice: 'GDN_BACKEND=cuda', device: 'NVIDIA H200', date: '2026-01-02T03:04:05.000Z' };
const RUN_B = { revision: 'b2b2b2b', backend: 'host', backendChoice: 'GDN_BACKEND=host', device: 'AMD EPYC 9654', date: '2026-02-03T04:05:06.000Z' };
const FACTS = ['revision', 'backend', 'device', 'date'] as const;

function assertOwnRun(text: string, own: Record<string, string>, other: Record<string, string>, what: string): void {
  for (const k of FACTS) {
    assert.ok(text.includes(own[k]), `${what}: its own run's ${k} ${own[k]} is missing: ${text}`);
    assert.ok(!text.includes(other[k]), `${what}: the other run's ${k} ${other[k]} is shown: ${text}`);
  }
}

const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';

/** A notebook that ran somewhere: two sections, a table and a figure, and the run's provenance in its metadata. */
function ranNotebook(provenance: Record<string, unknown> | null, tag: string): Notebook {
  const nb = makeNotebook(['md:# Timings', 'table()', 'md:# Plots', 'figure()']);
  nb.cells[1].outputs = [{ output_type: 'display_data', data: { 'text/html': `<table class="gdnlab-table"><tr><th>arm</th><th>µs</th></tr><tr><td>${tag}</td><td>1.0</td></tr></table>`, 'text/plain': 'table' }, metadata: {} }];
  nb.cells[1].execution_count = 1;
  nb.cells[3].outputs = [{ output_type: 'display_data', data: { [PNG_MIME]: PNG, 'text/plain': `Figure "${tag}"` }, metadata: {} }];
  nb.cells[3].execution_count = 2;
  if (provenance) nb.metadata.gdnlab = { provenance };
  return nb;
}

describe('notebooks: provenance, checked for content', function () {
  this.timeout(180_000);
  let dir: string;
  before(() => {
    dir = tempDir('provenance');
  });
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('a comparison page labels every banner, heading and provenance column with its own run\'s revision, backend, device and date', () => {
    const a = path.join(dir, 'run-a.ipynb');
    const b = path.join(dir, 'run-b.ipynb');
    writeNotebook(a, ranNotebook(RUN_A, 'arm-a'));
    writeNotebook(b, ranNotebook(RUN_B, 'arm-b'));
    const c = compareNotebooks(a, b);
    assert.equal(c.pairs.length, 2, 'a table pair and a figure pair');
    const page = comparisonHtml(c);
    const labels = elementsWith(page, 'data-run-label');
    const of = (run: string) => labels.filter((l) => l.value === run);
    // The title's and the banner's halves, the column heading, the provenance column, and each section heading.
    const expected = 4 + c.pairs.length;
    assert.equal(of('A').length, expected, `run A's labelled pieces: ${of('A').map((l) => textOfHtml(l.html)).join(' | ')}`);
    assert.equal(of('B').length, expected, `run B's labelled pieces: ${of('B').map((l) => textOfHtml(l.html)).join(' | ')}`);
    assert.equal(labels.length, 2 * expected, 'every labelled piece is A or B');
    of('A').forEach((l, i) => assertOwnRun(textOfHtml(l.html), RUN_A, RUN_B, `run A's piece ${i}`));
    of('B').forEach((l, i) => assertOwnRun(textOfHtml(l.html), RUN_B, RUN_A, `run B's piece ${i}`));
    // Side by side: in each row that has both, A's piece comes first.
    assert.ok(page.indexOf(of('A')[2].html) < page.indexOf(of('B')[2].html), 'A\'s column heading is the left one');
    // The provenance column of each run is its whole recorded provenance, key by key.
    const provA = textOfHtml(of('A')[3].html);
    const provB = textOfHtml(of('B')[3].html);
    for (const [k, v] of Object.entries(RUN_A)) assert.ok(provA.includes(`${k} ${v}`), `A's provenance column: ${k} ${v}: ${provA}`);
    for (const [k, v] of Object.entries(RUN_B)) assert.ok(provB.includes(`${k} ${v}`), `B's provenance column: ${k} ${v}: ${provB}`);
    // And the outputs sit in their run's column.
    assert.ok(page.indexOf('<td>arm-a</td>') < page.indexOf('<td>arm-b</td>'));
  });

  it('a notebook without provenance says so in its column, never borrowing the other run\'s', () => {
    const a = path.join(dir, 'bare.ipynb');
    const b = path.join(dir, 'run-b2.ipynb');
    writeNotebook(a, ranNotebook(null, 'bare'));
    writeNotebook(b, ranNotebook(RUN_B, 'arm-b'));
    const c = compareNotebooks(a, b);
    const labels = elementsWith(comparisonHtml(c), 'data-run-label');
    assert.equal(labels.filter((x) => x.value === 'A').length, 4 + c.pairs.length, 'every piece of run A is labelled');
    for (const l of labels.filter((x) => x.value === 'A')) {
      const t = textOfHtml(l.html);
      assert.match(t, /no provenance recorded/);
      for (const k of FACTS) assert.ok(!t.includes(RUN_B[k]), `A's piece shows B's ${k}: ${t}`);
    }
  });

  it('export without re-running keeps the run\'s provenance, records the exporter apart (metadata.gdnlab.exportedBy), and heads the page with the run\'s facts', async () => {
    const src = path.join(dir, 'gpu-run.ipynb');
    writeNotebook(src, ranNotebook(RUN_A, 'gpu'));
    const res = await exportNotebook(src, { outDir: path.join(dir, 'export'), execute: false });
    const nb = readNotebook(res.notebook);
    const gdnlab = nb.metadata.gdnlab as { provenance: Record<string, unknown>; exportedBy: Record<string, unknown> };
    assert.deepEqual(gdnlab.provenance, RUN_A, 'the run\'s provenance is kept as recorded');
    assert.deepEqual(res.provenance, RUN_A);
    assert.equal(gdnlab.exportedBy.revision, revision(), 'the exporter\'s revision');
    assert.equal(gdnlab.exportedBy.backend, res.exportedBy.backend);
    assert.equal(gdnlab.exportedBy.executed, false);
    assert.notEqual(gdnlab.exportedBy.date, RUN_A.date);
    assert.deepEqual(res.exportedBy, gdnlab.exportedBy);

    for (const page of [res.html, res.interactiveHtml]) {
      const html = fs.readFileSync(page, 'utf8');
      const [run] = elementsWith(html, 'class', 'gdnlab-run');
      const [by] = elementsWith(html, 'class', 'gdnlab-exported-by');
      assert.ok(run && by, `${path.basename(page)}: the run's and the exporter's parts of the header`);
      const runText = textOfHtml(run.html);
      const byText = textOfHtml(by.html);
      for (const k of FACTS) assert.ok(runText.includes(RUN_A[k]), `${path.basename(page)}: the run part shows the run's ${k}: ${runText}`);
      assert.match(runText, /not re-executed/);
      assert.ok(!runText.includes(String(gdnlab.exportedBy.date)) && !runText.includes(String(gdnlab.exportedBy.device)), `the run part shows none of the exporter's facts: ${runText}`);
      for (const k of FACTS) assert.ok(byText.includes(String(gdnlab.exportedBy[k])), `${path.basename(page)}: the export part shows the exporter's ${k}: ${byText}`);
      assert.ok(!byText.includes(RUN_A.device) && !byText.includes(RUN_A.date), `the export part shows none of the run's facts: ${byText}`);
    }
  });

  it('export without re-running of a notebook that records no run says so, and invents none', async () => {
    const src = path.join(dir, 'unrecorded.ipynb');
    writeNotebook(src, ranNotebook(null, 'unrecorded'));
    const res = await exportNotebook(src, { outDir: path.join(dir, 'export'), execute: false });
    const nb = readNotebook(res.notebook);
    const gdnlab = nb.metadata.gdnlab as Record<string, unknown>;
    assert.equal(gdnlab.provenance, undefined, 'no run provenance is made up');
    assert.equal(res.provenance, null);
    assert.equal((gdnlab.exportedBy as Record<string, unknown>).revision, revision());
    const html = fs.readFileSync(res.html, 'utf8');
    const [run] = elementsWith(html, 'class', 'gdnlab-run');
    assert.match(textOfHtml(run.html), /run: not recorded in the notebook/);
  });
});
