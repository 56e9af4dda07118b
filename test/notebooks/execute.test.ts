// Notebooks executed headless through the gdnlab kernel: the runner and exporter on small notebooks
// made here, then every shipped notebooks/*.ipynb (run into a temporary folder, so the committed
// files are never rewritten by a test).

import { strict as assert } from 'assert';
import * as fs from 'fs';
import * as path from 'path';
import { runNotebooks, Report } from '../../lib/notebooks/run';
import { exportNotebook } from '../../lib/notebooks/export';
import { Notebook, PLOTLY_MIME, SVG_MIME, nonEmptyCodeCells, plotChecks, readNotebook, textOf } from '../../lib/notebooks/ipynb';
import { shippedNotebooks } from '../../lib/notebooks/paths';
import { PLOT_CELL, TABLE_CELL, svgImagesInHtml, tempDir, writeTempNotebook } from './helpers';

const MB = 1_000_000;

function explain(r: Report): string {
  return `${path.basename(r.notebook)}: ${r.problems.join('; ')}\n${r.errors.map((e) => e.traceback).join('\n')}\n${r.stderrTail}`;
}

function assertOutputsEverywhere(nb: Notebook, name: string): void {
  for (const { index, cell } of nonEmptyCodeCells(nb)) {
    assert.ok((cell.outputs ?? []).length > 0, `${name}: code cell ${index} has no outputs saved`);
    assert.equal(typeof cell.execution_count, 'number', `${name}: code cell ${index} was not executed`);
  }
}

/** Every figure is one output (plotly + PNG + SVG), with no second image output and no "shown above" line; returns the figure count. */
function assertPlotsHaveStaticTwins(nb: Notebook, name: string): number {
  const checks = plotChecks(nb);
  for (const c of checks) {
    assert.equal(c.withStaticImages, c.plotlyOutputs, `${name}: cell ${c.cell}: ${c.plotlyOutputs} plotly output(s), only ${c.withStaticImages} carry their PNG and SVG`);
    assert.equal(c.separateImageOutputs, 0, `${name}: cell ${c.cell} shows a figure twice (a separate image output)`);
  }
  for (const [i, cell] of nb.cells.entries()) {
    for (const o of cell.outputs ?? []) {
      assert.doesNotMatch(textOf(o.data?.['text/plain'] ?? ''), /shown above|in the next output/, `${name}: cell ${i} has a placeholder output`);
    }
  }
  return checks.reduce((n, c) => n + c.plotlyOutputs, 0);
}

/** The first output names backend, device and revision, and the metadata carries them (notebooks run). */
function assertProvenance(nb: Notebook, name: string): void {
  const first = nb.cells.flatMap((c) => c.outputs ?? [])[0];
  assert.ok(first?.data?.['application/vnd.gdnlab.run-info+json'], `${name}: the first output is not gdn.showRunInfo()'s`);
  const p = (nb.metadata.gdnlab as { provenance?: Record<string, unknown> } | undefined)?.provenance;
  assert.ok(p && p.backend && p.device && p.revision && typeof p.wallS === 'number', `${name}: metadata.gdnlab.provenance is missing or incomplete: ${JSON.stringify(p)}`);
}

describe('notebooks: headless runner (lib/notebooks/run.ts)', function () {
  this.timeout(180_000);
  let dir: string;
  before(() => {
    dir = tempDir('nbrun');
  });
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('runs a clean notebook in its own folder, saves every output, and leaves the source untouched', async () => {
    const src = writeTempNotebook(dir, 'clean.ipynb', ['md:# clean', 'const answer = 6 * 7;\nconsole.log(answer);', 'console.log(process.cwd());', 'answer + 1']);
    const before = fs.readFileSync(src, 'utf8');
    const [r] = await runNotebooks([src], { outDir: path.join(dir, 'out'), timeoutS: 120 });
    assert.ok(r.ok, explain(r));
    assert.equal(fs.readFileSync(src, 'utf8'), before, 'the source notebook was rewritten');
    assert.equal(r.output, path.join(dir, 'out', 'clean.ipynb'));
    const nb = readNotebook(r.output);
    assertOutputsEverywhere(nb, 'clean.ipynb');
    const text = (i: number) => (nb.cells[i].outputs ?? []).map((o) => textOf(o.text ?? o.data?.['text/plain'] ?? '')).join('');
    assert.match(text(1), /42/);
    assert.equal(text(2).trim(), fs.realpathSync(dir), 'the kernel did not run in the notebook’s own folder');
    assert.match(text(3), /43/);
    assert.equal(r.executedCells, 3);
    assert.ok(r.sizeBytes > 0 && r.sizeBytes < MB);
  });

  it('fails on an error cell, names it, keeps its error output, and runs nothing after it', async () => {
    const src = writeTempNotebook(dir, 'broken.ipynb', ['console.log("before");', 'throw new RangeError("deliberate failure 7731");', 'console.log("after");']);
    const [r] = await runNotebooks([src], { outDir: path.join(dir, 'out'), timeoutS: 120 });
    assert.equal(r.ok, false);
    assert.ok(r.problems.some((p) => p.startsWith('cell 1')), `problems do not name cell 1: ${r.problems.join('; ')}`);
    assert.equal(r.errors.length, 1, `expected one error output, got ${JSON.stringify(r.errors)}`);
    assert.equal(r.errors[0].cell, 1);
    assert.match(`${r.errors[0].ename}: ${r.errors[0].evalue}`, /RangeError: deliberate failure 7731/);
    const nb = readNotebook(r.output);
    assert.deepEqual(nb.cells[2].outputs, [], 'a cell after the failure has outputs');
    assert.equal(nb.cells[2].execution_count, null);
  });

  it('fails a notebook whose saved file would be 1 MB or more', async () => {
    const src = writeTempNotebook(dir, 'huge.ipynb', ['console.log("x".repeat(1_100_000));']);
    const [r] = await runNotebooks([src], { outDir: path.join(dir, 'out'), timeoutS: 120 });
    assert.equal(r.ok, false);
    assert.equal(r.errors.length, 0);
    assert.ok(r.sizeBytes >= MB, `size ${r.sizeBytes}`);
    assert.ok(r.problems.some((p) => /under 1000000/.test(p)), r.problems.join('; '));
  });

  it('refuses bad options with errors naming the option', async () => {
    await assert.rejects(runNotebooks([], {}), /paths: expected at least one notebook/);
    await assert.rejects(runNotebooks(['x.ipynb'], { inplace: false }), /outDir: required when inplace is false/);
    await assert.rejects(runNotebooks(['x.ipynb'], { timeoutS: 0 }), /timeoutS: expected a positive whole number/);
    await assert.rejects(runNotebooks(['x.ipynb'], { backend: 'gpu' as never }), /backend: expected 'auto', 'host' or 'cuda'/);
    await assert.rejects(runNotebooks([path.join(dir, 'missing.ipynb')], { outDir: dir }), /missing\.ipynb does not exist/);
  });

  it('exports a plot notebook: static SVG in the HTML page, live plotly in the interactive page, provenance on both', async () => {
    const src = writeTempNotebook(dir, 'plot.ipynb', ['md:# plot', PLOT_CELL, TABLE_CELL]);
    const res = await exportNotebook(src, { outDir: path.join(dir, 'export'), timeoutS: 120 });
    assert.ok(res.report?.ok, res.report && explain(res.report));
    const nb = readNotebook(res.notebook);
    assert.equal(assertPlotsHaveStaticTwins(nb, 'plot.ipynb'), 1);
    assert.ok(nb.cells[1].outputs?.some((o) => o.data?.[PLOTLY_MIME] !== undefined));
    assert.ok(nb.cells[1].outputs?.some((o) => textOf(o.data?.[SVG_MIME] ?? '').startsWith('<svg')));
    const prov = (nb.metadata.gdnlab as { provenance: { revision: string; backend: string; device: string; date: string } }).provenance;
    assert.ok(prov.revision && prov.backend && prov.device && prov.date, JSON.stringify(prov));

    const html = fs.readFileSync(res.html, 'utf8');
    const svgs = svgImagesInHtml(html);
    assert.equal(svgs.length, 1, 'the static page should show the plot as one SVG image');
    assert.match(svgs[0], /^<svg[^>]*>.*<rect/s);
    assert.match(html, /class="gdnlab-provenance"/);
    assert.ok(html.includes(prov.revision) && html.includes(prov.device));
    assert.match(html, /class="gdnlab-test-table"/);
    assert.doesNotMatch(html, /require(\.min)?\.js"/, 'the page still loads require.js');

    const live = fs.readFileSync(res.interactiveHtml, 'utf8');
    assert.equal(live.split('class="gdnlab-plotly"').length - 1, 1, 'one live plot expected');
    assert.equal(svgImagesInHtml(live).length, 0, 'the static twin should be dropped from the live page');
    const plotlyCopies = (live.match(/\* plotly\.js v\d+\.\d+\.\d+/g) ?? []).length;
    assert.equal(plotlyCopies, 1, `plotly.js should be embedded exactly once (banners found: ${plotlyCopies})`);
    assert.match(live, /class="gdnlab-provenance"/);
  });
});

describe('notebooks: shipped notebooks execute headless with outputs saved', function () {
  this.timeout(900_000);
  const notebooks = shippedNotebooks();
  let dir: string;
  // The notebooks run two at a time (each kernel is one busy process; CI has two cores), started when the
  // suite starts; each test awaits its own notebook's run (docs/MAINTAINING.md, "CI time").
  const runs = new Map<string, Promise<Report>>();
  before(() => {
    dir = tempDir('nbshipped');
    const queue = [...notebooks];
    const lane = async (): Promise<void> => {
      for (let f = queue.shift(); f !== undefined; f = queue.shift()) {
        const file = f;
        const run = runNotebooks([file], { outDir: path.join(dir, 'run'), backend: 'host' }).then(([r]) => r);
        runs.set(file, run);
        await run.catch(() => undefined);
      }
    };
    void lane();
    void lane();
  });
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  /** The run of `file` started by the lanes above (waits until a lane has picked it up). */
  async function runOf(file: string): Promise<Report> {
    while (!runs.has(file)) await new Promise((res) => setTimeout(res, 200));
    return runs.get(file)!;
  }

  for (const file of notebooks) {
    const name = path.basename(file);

    it(`${name}: the committed copy has its outputs saved, static plot images, and is under 1 MB`, () => {
      assert.ok(fs.statSync(file).size < MB, `${name} is ${fs.statSync(file).size} bytes`);
      const nb = readNotebook(file);
      assertOutputsEverywhere(nb, name);
      assertPlotsHaveStaticTwins(nb, name);
      assertProvenance(nb, name);
      assert.deepEqual(nb.cells.flatMap((c) => (c.outputs ?? []).filter((o) => o.output_type === 'error')), [], `${name} was committed with error outputs`);
    });

    it(`${name}: executes through the gdnlab kernel without errors; the export shows its plots as SVG`, async () => {
      const r = await runOf(file);
      assert.ok(r.ok, explain(r));
      const nb = readNotebook(r.output);
      assertOutputsEverywhere(nb, name);
      assert.ok(r.sizeBytes < MB, `${name} executed is ${r.sizeBytes} bytes`);
      const plots = assertPlotsHaveStaticTwins(nb, name);
      assertProvenance(nb, name);
      assert.equal(r.provenance?.backend, 'host', 'CI executes copies of the notebooks on the host backend');

      const res = await exportNotebook(r.output, { outDir: path.join(dir, 'export'), execute: false });
      const html = fs.readFileSync(res.html, 'utf8');
      assert.ok(svgImagesInHtml(html).length >= plots, `${name}: ${plots} plots but ${svgImagesInHtml(html).length} SVG images in the HTML export`);
      for (const svg of svgImagesInHtml(html)) assert.match(svg, /^(<\?xml[^>]*>\s*)?<svg/);
      assert.match(html, /class="gdnlab-provenance"/);

      if (name.startsWith('01-')) {
        // Two runs of notebook 01: the committed one (A) and the copy this test just ran (B).
        const out = path.join(dir, 'compare-01.html');
        const { main } = await import('../../lib/cli');
        const status = await main(['notebooks', 'compare', file, res.notebook, '-o', out]);
        assert.equal(status, 0, 'gdnlab notebooks compare: see its message on stderr');
        const page = fs.readFileSync(out, 'utf8');
        assert.match(page, /<b>Cross-run comparison<\/b> — the two columns are <b>different runs<\/b>/);
        const provA = (readNotebook(file).metadata.gdnlab as { provenance: Record<string, string> }).provenance;
        const provB = (readNotebook(res.notebook).metadata.gdnlab as { provenance: Record<string, string> }).provenance;
        for (const p of [provA, provB]) {
          assert.ok(page.includes(`<th>date</th><td>${p.date}</td>`), `provenance ${p.date} missing`);
          assert.ok(page.includes(`<th>revision</th><td>${p.revision}</td>`), `revision ${p.revision} missing`);
        }
        assert.notEqual(provA.date, provB.date, 'two different runs');
        const figures = (page.match(/<img alt="Figure /g) ?? []).length;
        assert.ok(figures >= 2 * plots, `${figures} figure images for ${plots} plots per run`);
        assert.ok((page.match(/<table class="gdnlab-table">/g) ?? []).length >= 4, 'tables of both runs side by side');
      }
    });
  }
});
