// lib/notebooks/export.ts in this process: the notebook runner (runNotebook), nbconvert (spawn), the backend
// the exporter describes, the revision and the project root are answered by the test, so every export here
// is milliseconds. Checked exactly: what the runner is asked, nbconvert's command line and its failures, the
// provenance kept or added (an export without re-running keeps metadata.gdnlab.provenance and adds
// exportedBy; an executing one records its own run as both), the header, the interactive notebook and the
// finished pages.

import { strict as assert } from 'assert';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { Provenance, exportNotebook, finishPage, interactiveNotebook, plotlyBundlePath, provenanceHeader } from '../../lib/notebooks/export';
import { Notebook, PLOTLY_MIME, PNG_MIME, RUN_INFO_MIME, SVG_MIME, readNotebook, writeNotebook } from '../../lib/notebooks/ipynb';
import { Report } from '../../lib/notebooks/run';
import { Stubs, fakeBackend } from '../cli/edges-helpers';
import { makeNotebook, tempDir } from './helpers';
import { FakeChild, SpawnCall, withSpawn } from './fake-spawn';

const runModule = require('../../lib/notebooks/run') as Record<string, unknown>;
const pathsModule = require('../../lib/paths') as Record<string, unknown>;
const provenanceModule = require('../../lib/provenance') as Record<string, unknown>;
const backendModule = require('../../lib/backend') as Record<string, unknown> & { Backend: object };

const EXPORTER: Provenance = { notebook: 'nb/x & y.ipynb', revision: 'rev<1>', backend: 'cuda', backendChoice: 'auto → cuda (1 CUDA device)', device: 'GPU "A"', date: '2026-01-01T00:00:00.000Z', gdnlabVersion: '1.2.3', executed: false };

/** nbconvert's stand-in: each (notebook, page) pair gets a page naming the notebook's first cell source. */
function nbconvert(status = 0, stderr = '') {
  return (child: FakeChild, call: SpawnCall) => {
    const pairs = call.args.slice(2);
    for (let i = 0; i < pairs.length; i += 2) {
      const nb = readNotebook(pairs[i]);
      fs.writeFileSync(pairs[i + 1], `<html><head><meta charset="utf-8">\n<script src="https://cdn/require.min.js"></script>\n</head><body class="jp">\n<p>${path.basename(pairs[i])} cells=${nb.cells.length}</p>\n</body></html>`);
    }
    if (stderr) child.say('stderr', stderr);
    child.emit('close', status);
  };
}

function report(over: Partial<Report> = {}): Report {
  return { notebook: '', output: '', ok: true, problems: [], errors: [], kernelName: 'gdnlab', backend: 'host', codeCells: 1, executedCells: 1, sizeBytes: 10, durationS: 1, stderrTail: '', ...over };
}

describe('notebooks export: edges (runner, nbconvert and backend replaced)', () => {
  const stubs = new Stubs();
  let dir: string;
  let root: string;
  let src: string;
  let runs: { notebook: string; opts: Record<string, unknown> }[];
  let runAnswer: (notebook: string, opts: Record<string, unknown>) => Report;
  let opened: ReturnType<typeof fakeBackend>[];
  let deviceCount: number;
  let countCalls: number;
  const savedBackend = process.env.GDN_BACKEND;

  beforeEach(() => {
    dir = tempDir('export-edges');
    root = path.join(dir, 'root');
    fs.mkdirSync(path.join(root, 'node_modules', 'plotly.js-dist-min'), { recursive: true });
    fs.writeFileSync(path.join(root, 'package.json'), JSON.stringify({ name: 'gdnlab', version: '9.8.7' }));
    fs.writeFileSync(path.join(root, 'node_modules', 'plotly.js-dist-min', 'plotly.min.js'), 'var Plotly="</SCRIPT>";');
    src = path.join(root, 'notebooks', 'demo.ipynb');
    fs.mkdirSync(path.dirname(src), { recursive: true });
    const nb = makeNotebook(['x']);
    nb.metadata.gdnlab = { provenance: { revision: 'gpu-rev', backend: 'cuda', device: 'H200' }, other: 'kept' };
    writeNotebook(src, nb);
    runs = [];
    runAnswer = (notebook, opts) => {
      const executed = readNotebook(notebook);
      executed.cells[0].execution_count = 1;
      const out = path.join(opts.outDir as string, path.basename(notebook));
      writeNotebook(out, executed);
      return report({ notebook, output: out, backend: 'cuda' });
    };
    stubs.set(runModule, 'runNotebook', async (notebook: string, opts: Record<string, unknown>) => {
      runs.push({ notebook, opts });
      return runAnswer(notebook, opts);
    });
    stubs.set(pathsModule, 'projectRoot', () => root);
    stubs.set(provenanceModule, 'revision', () => 'exp-rev');
    opened = [];
    deviceCount = 0;
    countCalls = 0;
    stubs.set(backendModule, 'cudaDeviceCount', () => {
      countCalls++;
      return deviceCount;
    });
    stubs.set(backendModule.Backend, 'open', (kind: 'host' | 'cuda') => {
      const b = fakeBackend(kind, { name: `${kind}-dev` });
      opened.push(b);
      return b;
    });
  });
  afterEach(() => {
    stubs.restore();
    if (savedBackend === undefined) delete process.env.GDN_BACKEND;
    else process.env.GDN_BACKEND = savedBackend;
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('execute: false keeps metadata.gdnlab.provenance, adds exportedBy, and heads both pages with the run\'s facts', async () => {
    process.env.GDN_BACKEND = 'host';
    const out = path.join(dir, 'out', 'nested');
    const t0 = Date.now();
    const r = await withSpawn([nbconvert()], async (calls) => {
      const res = await exportNotebook(src, { outDir: out, execute: false, python: '/py/x' });
      assert.equal(calls.length, 1);
      const c = calls[0];
      assert.equal(c.cmd, '/py/x');
      const [work] = [path.dirname(c.args[3])];
      assert.deepEqual(c.args, [path.join(root, 'lib', 'notebooks', 'nbtool.py'), 'html', path.join(out, 'demo.ipynb'), path.join(work, 'static.html'), path.join(work, 'demo.ipynb'), path.join(work, 'interactive.html')]);
      assert.ok(path.basename(work).startsWith('gdnlab-export-') && path.dirname(work) === os.tmpdir());
      assert.ok(!fs.existsSync(work), 'the scratch folder is removed');
      assert.deepEqual(c.opts, { stdio: ['ignore', 'ignore', 'pipe'] });
      return res;
    });
    assert.equal(runs.length, 0, 'not executed');
    assert.equal(r.report, undefined);
    assert.equal(r.notebook, path.join(out, 'demo.ipynb'));
    assert.equal(r.html, path.join(out, 'demo.html'));
    assert.equal(r.interactiveHtml, path.join(out, 'demo.interactive.html'));
    const by = r.exportedBy;
    assert.ok(Date.parse(by.date) >= t0 - 1 && Date.parse(by.date) <= Date.now());
    assert.deepEqual(by, { notebook: path.join('notebooks', 'demo.ipynb'), revision: 'exp-rev', backend: 'host', backendChoice: 'GDN_BACKEND=host', device: 'host-dev', date: by.date, gdnlabVersion: '9.8.7', executed: false });
    assert.deepEqual(r.provenance, { revision: 'gpu-rev', backend: 'cuda', device: 'H200' });
    const saved = readNotebook(r.notebook);
    assert.deepEqual(saved.metadata.gdnlab, { provenance: { revision: 'gpu-rev', backend: 'cuda', device: 'H200' }, other: 'kept', exportedBy: by });
    assert.deepEqual(opened.map((b) => [b.kind, b.closes]), [['host', 1]]);
    assert.equal(countCalls, 0);
    assert.deepEqual(readNotebook(src).metadata.gdnlab, { provenance: { revision: 'gpu-rev', backend: 'cuda', device: 'H200' }, other: 'kept' }, 'the source is untouched');
    const header = provenanceHeader(r.provenance, by);
    assert.equal(fs.readFileSync(r.html, 'utf8'), `<html><head><meta charset="utf-8">\n</head><body class="jp">\n${header}\n\n<p>demo.ipynb cells=1</p>\n</body></html>`);
    const interactive = fs.readFileSync(r.interactiveHtml, 'utf8');
    assert.ok(interactive.startsWith(`<html><head>\n<script>var Plotly="<\\/script>";</script>\n<meta charset="utf-8">\n</head><body class="jp">\n${header}\n\n<p>demo.ipynb cells=1</p>\n<script>`), interactive);
    assert.ok(interactive.endsWith('</script>\n</body></html>'));
    assert.match(header, /run: the outputs as saved in the notebook \(not re-executed\)/);
  });

  it('execute (the default): the runner is asked with the options, inplace false and the resolved outDir; its run is the provenance', async () => {
    const log = () => undefined;
    const out = path.relative(process.cwd(), path.join(dir, 'ex'));
    const r = await withSpawn([nbconvert()], () => exportNotebook(src, { outDir: out, execute: true, backend: 'auto', kernelName: 'k', timeoutS: 9, maxBytes: 77, env: { A: '1' }, log, python: '/py/y' }));
    assert.equal(runs.length, 1);
    assert.equal(runs[0].notebook, src);
    assert.deepEqual(runs[0].opts, { backend: 'auto', kernelName: 'k', timeoutS: 9, maxBytes: 77, env: { A: '1' }, log, python: '/py/y', inplace: false, outDir: path.resolve(out) });
    // The report's backend (cuda) is described, not the option's (auto).
    assert.deepEqual(opened.map((b) => b.kind), ['cuda']);
    assert.equal(r.exportedBy.backendChoice, 'GDN_BACKEND=cuda');
    assert.equal(r.exportedBy.executed, true);
    assert.equal(r.report!.backend, 'cuda');
    assert.deepEqual(r.provenance, r.exportedBy);
    assert.notEqual(r.provenance, r.exportedBy, 'a copy');
    const gdnlab = readNotebook(r.notebook).metadata.gdnlab as Record<string, unknown>;
    assert.deepEqual(gdnlab, { provenance: r.exportedBy, other: 'kept', exportedBy: r.exportedBy });
    assert.equal(readNotebook(r.notebook).cells[0].execution_count, 1, 'the executed copy is exported');
    assert.match(fs.readFileSync(r.html, 'utf8'), /run: executed by this export/);
  });

  it('a run that is not clean is not exported, and the message lists its problems', async () => {
    runAnswer = (notebook) => report({ notebook, ok: false, problems: ['cell 0: E: one', 'too big'] });
    await withSpawn([() => assert.fail('nbconvert started')], async () => {
      await assert.rejects(exportNotebook(src, { outDir: path.join(dir, 'bad') }), (e: Error) => e.message === 'demo.ipynb did not run cleanly, so it was not exported:\n  cell 0: E: one\n  too big');
    });
    assert.equal(opened.length, 0);
  });

  it('the backend described: the option, else GDN_BACKEND, else auto; auto counts the CUDA devices', async () => {
    const choiceFor = async (opts: Record<string, unknown>, env: string | undefined, n: number) => {
      if (env === undefined) delete process.env.GDN_BACKEND;
      else process.env.GDN_BACKEND = env;
      deviceCount = n;
      countCalls = 0;
      opened = [];
      const r = await withSpawn([nbconvert()], () => exportNotebook(src, { outDir: path.join(dir, 'o'), execute: false, ...opts }));
      return [r.exportedBy.backend, r.exportedBy.backendChoice, r.exportedBy.device, countCalls, opened.map((b) => `${b.kind}:${b.closes}`).join()];
    };
    assert.deepEqual(await choiceFor({ backend: 'cuda' }, 'host', 0), ['cuda', 'GDN_BACKEND=cuda', 'cuda-dev', 0, 'cuda:1']);
    assert.deepEqual(await choiceFor({}, 'cuda', 0), ['cuda', 'GDN_BACKEND=cuda', 'cuda-dev', 0, 'cuda:1']);
    assert.deepEqual(await choiceFor({}, undefined, 0), ['host', 'auto → host (no usable CUDA device)', 'host-dev', 1, 'host:1']);
    assert.deepEqual(await choiceFor({}, '', 1), ['cuda', 'auto → cuda (1 CUDA device)', 'cuda-dev', 1, 'cuda:1']);
    assert.deepEqual(await choiceFor({ backend: 'auto' }, 'host', 2), ['cuda', 'auto → cuda (2 CUDA devices)', 'cuda-dev', 1, 'cuda:1']);
  });

  it('the backend is closed even when its facts cannot be read', async () => {
    const b = fakeBackend('host');
    b.info = () => {
      throw new Error('no info');
    };
    stubs.set(backendModule.Backend, 'open', () => b);
    await withSpawn([nbconvert()], async () => {
      await assert.rejects(exportNotebook(src, { outDir: path.join(dir, 'o'), execute: false, backend: 'host' }), /no info/);
    });
    assert.equal(b.closes, 1);
  });

  it('exporting into the notebook\'s own folder does not copy it onto itself; a notebook outside the project is named by its full path', async () => {
    const r = await withSpawn([nbconvert()], () => exportNotebook(src, { outDir: path.dirname(src), execute: false, backend: 'host' }));
    assert.equal(r.notebook, src);
    assert.equal(readNotebook(src).cells.length, 1, 'the notebook is whole');
    const outside = path.join(dir, 'elsewhere', 'ext.ipynb');
    fs.mkdirSync(path.dirname(outside));
    writeNotebook(outside, makeNotebook(['y']));
    const o = await withSpawn([nbconvert()], () => exportNotebook(outside, { outDir: path.join(dir, 'o2'), execute: false, backend: 'host' }));
    assert.equal(o.exportedBy.notebook, outside);
    assert.equal(o.provenance, null);
    assert.deepEqual(readNotebook(o.notebook).metadata.gdnlab, { exportedBy: o.exportedBy });
    // A name that starts with two dots lies inside the project all the same: relative (it once read as outside).
    const dots = path.join(root, '..dots.ipynb');
    writeNotebook(dots, makeNotebook(['z']));
    const d = await withSpawn([nbconvert()], () => exportNotebook(dots, { outDir: path.join(dir, 'o3'), execute: false, backend: 'host' }));
    assert.equal(d.exportedBy.notebook, '..dots.ipynb');
    // The folder above the project's root, and a sibling of it, are outside.
    const sibling = path.join(dir, 'root-sibling.ipynb');
    writeNotebook(sibling, makeNotebook(['z']));
    const s = await withSpawn([nbconvert()], () => exportNotebook(sibling, { outDir: path.join(dir, 'o4'), execute: false, backend: 'host' }));
    assert.equal(s.exportedBy.notebook, sibling);
  });

  it('the version is package.json\'s, else "unknown"; python defaults to jupyterPython()', async () => {
    fs.writeFileSync(path.join(root, 'package.json'), '{"name":"gdnlab"}');
    const saved = process.env.GDNLAB_NOTEBOOK_PYTHON;
    process.env.GDNLAB_NOTEBOOK_PYTHON = '/env/python';
    try {
      await withSpawn([nbconvert()], async (calls) => {
        const r = await exportNotebook(src, { outDir: path.join(dir, 'o'), execute: false, backend: 'host' });
        assert.equal(r.exportedBy.gdnlabVersion, 'unknown');
        assert.equal(calls[0].cmd, '/env/python');
      });
    } finally {
      if (saved === undefined) delete process.env.GDNLAB_NOTEBOOK_PYTHON;
      else process.env.GDNLAB_NOTEBOOK_PYTHON = saved;
    }
  });

  it('nbconvert failing: its exit status and stderr (last 8 KiB, trimmed); failing to start: the python named; scratch removed', async () => {
    const work: string[] = [];
    const failing = (child: FakeChild, call: SpawnCall) => {
      work.push(path.dirname(call.args[3]));
      child.say('stderr', 'x'.repeat(9000));
      child.say('stderr', '  tail of it  \n');
      child.emit('close', 2);
    };
    await withSpawn([failing], async () => {
      await assert.rejects(exportNotebook(src, { outDir: path.join(dir, 'o'), execute: false, backend: 'host' }), (e: Error) => e.message === `nbconvert failed (exit status 2): ${'x'.repeat(8192 - 15)}  tail of it`);
    });
    await withSpawn([(child) => void child.emit('error', new Error('spawn /nope ENOENT'))], async () => {
      await assert.rejects(exportNotebook(src, { outDir: path.join(dir, 'o'), execute: false, backend: 'host', python: '/nope' }), (e: Error) => e.message === 'starting /nope: spawn /nope ENOENT');
    });
    await withSpawn([(child) => void child.emit('close', null)], async () => {
      await assert.rejects(exportNotebook(src, { outDir: path.join(dir, 'o'), execute: false, backend: 'host' }), (e: Error) => e.message === 'nbconvert failed (exit status null): ');
    });
    assert.ok(work.length === 1 && !fs.existsSync(work[0]));
    assert.ok(!fs.existsSync(path.join(dir, 'o', 'demo.html')));
  });

  it('the interactive notebook handed to nbconvert has the plotly divs', async () => {
    const nb = readNotebook(src);
    nb.cells[0].outputs = [{ output_type: 'display_data', data: { [PLOTLY_MIME]: { data: [] }, 'text/plain': 'fig' } }, { output_type: 'display_data', data: { [PNG_MIME]: 'AAA' } }];
    writeNotebook(src, nb);
    let seen: Notebook | undefined;
    await withSpawn([(child, call) => {
      seen = readNotebook(call.args[4]);
      nbconvert()(child, call);
    }], () => exportNotebook(src, { outDir: path.join(dir, 'o'), execute: false, backend: 'host' }));
    assert.deepEqual(seen!.cells[0].outputs!.map((o) => Object.keys(o.data ?? {})), [['text/html', 'text/plain']]);
  });

  it('refuses a missing outDir and a missing notebook, naming them', async () => {
    for (const opts of [undefined, {}, { outDir: 3 }, { outDir: '' }]) {
      await assert.rejects(exportNotebook(src, opts as never), (e: Error) => e instanceof TypeError && e.message === 'outDir: expected the folder to write the export into');
    }
    await assert.rejects(exportNotebook('no/such.ipynb', { outDir: dir }), (e: Error) => e.message === 'notebook: no/such.ipynb does not exist');
  });

  it('plotlyBundlePath: the minified bundle first, then plotly.js-dist\'s two; none: the three places named', () => {
    const nm = path.join(root, 'node_modules');
    const min = path.join(nm, 'plotly.js-dist-min', 'plotly.min.js');
    const distMin = path.join(nm, 'plotly.js-dist', 'plotly.min.js');
    const dist = path.join(nm, 'plotly.js-dist', 'plotly.js');
    fs.mkdirSync(path.dirname(dist));
    fs.writeFileSync(dist, '');
    fs.writeFileSync(distMin, '');
    assert.equal(plotlyBundlePath(), min);
    fs.rmSync(min);
    assert.equal(plotlyBundlePath(), distMin);
    fs.rmSync(distMin);
    assert.equal(plotlyBundlePath(), dist);
    fs.rmSync(dist);
    assert.throws(() => plotlyBundlePath(), (e: Error) => e.message === `plotly.js not found (looked for ${min}, ${distMin}, ${dist}): run npm ci`);
  });
});

describe('notebooks export: the pages\' pieces', () => {
  it('provenanceHeader: the run part and the exporter part, each fact escaped, unknowns as ?', () => {
    const run = { revision: 'r&1', backend: 'host', backendChoice: '', device: null, date: { y: 1 } };
    assert.ok(provenanceHeader({ ...run, revision: '' }, EXPORTER).includes('<th style="text-align:left;padding:0 1em 0 0">revision</th><td><code>?</code>'));
    const h = provenanceHeader(run, EXPORTER);
    const row = (k: string, v: string) => `<tr><th style="text-align:left;padding:0 1em 0 0">${k}</th><td><code>${v}</code></td></tr>`;
    const heading = (t: string) => `<tr><th colspan="2" style="text-align:left;padding-top:4px">${t}</th></tr>`;
    assert.equal(h, [
      '<header class="gdnlab-provenance" style="font:14px/1.4 system-ui,sans-serif;border:1px solid #c8c8c8;border-radius:4px;padding:8px 12px;margin:12px auto;max-width:1100px;background:#f7f7f7">',
      '<div style="font-weight:600;margin-bottom:4px">gdnlab notebook export: nb/x &amp; y.ipynb</div>',
      `<table class="gdnlab-run" style="border-collapse:collapse">${heading('run: the outputs as saved in the notebook (not re-executed)')}${row('revision', 'r&amp;1')}${row('backend', 'host')}${row('device', '?')}${row('date', '{&quot;y&quot;:1}')}</table>`,
      `<table class="gdnlab-exported-by" style="border-collapse:collapse">${heading('exported by')}${row('revision', 'rev&lt;1&gt;')}${row('backend', 'cuda (auto → cuda (1 CUDA device))')}${row('device', 'GPU &quot;A&quot;')}${row('date', '2026-01-01T00:00:00.000Z')}${row('gdnlab', '1.2.3')}</table>`,
      '</header>',
    ].join('\n'));
    const none = provenanceHeader(null, { ...EXPORTER, executed: true });
    assert.ok(none.includes(`<table class="gdnlab-run" style="border-collapse:collapse">${heading('run: not recorded in the notebook (no metadata.gdnlab.provenance, no gdn.showRunInfo() output); the outputs are as saved')}</table>`), none);
    const own = provenanceHeader({ backend: 'cuda', backendChoice: 'x' }, { ...EXPORTER, executed: true });
    assert.ok(own.includes(`${heading('run: executed by this export')}${row('revision', '?')}${row('backend', 'cuda (x)')}`), own);
    const unset = provenanceHeader({ backendChoice: 'y' }, EXPORTER);
    assert.ok(unset.includes(row('backend', '? (y)')), unset);
  });

  it('interactiveNotebook: each plotly output becomes a div with its figure; the static twin right after it is dropped', () => {
    const fig = (n: number) => ({ data: [{ y: [n] }], layout: { title: '</script>' } });
    const nb = makeNotebook(['a', 'md:b', 'c']);
    nb.cells[0].outputs = [
      { output_type: 'stream', name: 'stdout', text: 't' },
      { output_type: 'display_data', data: { [PLOTLY_MIME]: fig(1), 'text/plain': 'Figure 1' }, metadata: { m: 1 } },
      { output_type: 'display_data', data: { [SVG_MIME]: '<svg/>' } },
      { output_type: 'display_data', data: { [PLOTLY_MIME]: fig(2) } },
      { output_type: 'display_data', data: { [PLOTLY_MIME]: fig(3), [PNG_MIME]: 'P' } },
      { output_type: 'display_data', data: { [PNG_MIME]: 'Q' } },
      { output_type: 'display_data', data: { [PNG_MIME]: 'R' } },
    ];
    nb.cells[2].outputs = [{ output_type: 'display_data', data: { [PLOTLY_MIME]: fig(4) } }, { output_type: 'display_data', data: { 'text/html': '<b/>' } }];
    const before = JSON.stringify(nb);
    const out = interactiveNotebook(nb);
    assert.equal(JSON.stringify(nb), before, 'the notebook itself is unchanged');
    const div = (i: number, n: number) => `<div class="gdnlab-plotly" data-spec="gdnlab-plot-${i}-spec" style="width:100%;min-height:420px"></div>\n<script type="application/json" id="gdnlab-plot-${i}-spec">${JSON.stringify(fig(n)).replace(/</g, '\\u003c')}</script>`;
    assert.deepEqual(out.cells[0].outputs, [
      { output_type: 'stream', name: 'stdout', text: 't' },
      { output_type: 'display_data', data: { 'text/html': div(0, 1), 'text/plain': 'Figure 1' }, metadata: { m: 1 } },
      { output_type: 'display_data', data: { 'text/html': div(1, 2), 'text/plain': '' } },
      { output_type: 'display_data', data: { 'text/html': div(2, 3), 'text/plain': '' } },
      { output_type: 'display_data', data: { [PNG_MIME]: 'R' } },
    ]);
    assert.equal(out.cells[1].outputs, undefined);
    assert.deepEqual(out.cells[2].outputs, [{ output_type: 'display_data', data: { 'text/html': div(3, 4), 'text/plain': '' } }, { output_type: 'display_data', data: { 'text/html': '<b/>' } }]);
    assert.ok(!out.cells[0].outputs![1].data!['text/html']!.toString().includes('</script>"'));
  });

  it('interactiveNotebook: an image after a plotly output only when it directly follows, a plot at the end of a cell', () => {
    const nb = makeNotebook(['a']);
    nb.cells[0].outputs = [
      { output_type: 'display_data', data: { [PLOTLY_MIME]: {} } },
      { output_type: 'display_data', data: { 'text/plain': 'between' } },
      { output_type: 'display_data', data: { [SVG_MIME]: 's' } },
      { output_type: 'display_data', data: { [PLOTLY_MIME]: {} } },
    ];
    const outs = interactiveNotebook(nb).cells[0].outputs!;
    assert.equal(outs.length, 4);
    assert.deepEqual(outs[2], { output_type: 'display_data', data: { [SVG_MIME]: 's' } });
    const noData = makeNotebook(['a']);
    noData.cells[0].outputs = [{ output_type: 'display_data', data: { [PLOTLY_MIME]: { a: 1 } } }, { output_type: 'stream', name: 'stdout', text: 'x' }];
    assert.equal(interactiveNotebook(noData).cells[0].outputs!.length, 2);
  });

  it('finishPage: require.js removed, the header after <body>, plotly.js once in <head> with the renderer before </body>', () => {
    const page = '<html><head x="1"><script src="a/require.js"></script>  \n<link/></head><body a="b"><p>hi</p></body></html>';
    assert.equal(finishPage(page, 'HDR'), '<html><head x="1"><link/></head><body a="b">\nHDR\n<p>hi</p></body></html>');
    const withJs = finishPage(page, 'HDR', 'js</script><\/SCRIPT>');
    assert.ok(withJs.startsWith('<html><head x="1">\n<script>js<\\/script><\\/script></script>\n<link/></head><body a="b">\nHDR\n<p>hi</p><script>\ndocument.querySelectorAll(\'div.gdnlab-plotly\')'), withJs);
    assert.ok(withJs.endsWith("Plotly.newPlot(div, spec.data || [], spec.layout || {}, Object.assign({ responsive: true }, spec.config || {}));\n});\n</script>\n</body></html>"), withJs);
    // Other scripts stay; an empty plotly.js is still put in.
    const other = '<html><head><script src="x.js"></script></head><body></body></html>';
    assert.equal(finishPage(other, 'H'), '<html><head><script src="x.js"></script></head><body>\nH\n</body></html>');
    assert.ok(finishPage(other, 'H', '').includes('<head>\n<script></script>\n'));
    assert.throws(() => finishPage('<html><head></head></html>', 'H'), (e: Error) => e.message === 'nbconvert output has no <body>: cannot add the provenance header');
  });
});
