// `gdnlab notebooks run|export|compare` in process (lib/cli/notebooks.ts): the runner, the exporter and the
// comparison are replaced by recorders, so each test sees the options every flag maps to, the report lines of
// passing and failing notebooks, --json, the exit status, and the messages of --timeout and of no notebooks.

import { strict as assert } from 'assert';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { projectRoot } from '../../lib/paths';
import { notebooksRunCommand } from '../../lib/cli/notebooks';
import { Stubs, captured, cli, lines, usageError } from './edges-helpers';

const runLib = require('../../lib/notebooks/run') as Record<string, unknown>;
const exportLib = require('../../lib/notebooks/export') as Record<string, unknown>;
const compareLib = require('../../lib/notebooks/compare') as Record<string, unknown>;
const pathsLib = require('../../lib/notebooks/paths') as Record<string, unknown>;

type Opts = Record<string, unknown> & { log?: (l: string) => void };

const report = (notebook: string, o: object = {}) => ({
  notebook, output: notebook, ok: true, problems: [] as string[], errors: [] as { traceback: string }[], kernelName: 'gdnlab', backend: 'host',
  codeCells: 4, executedCells: 3, sizeBytes: 1234, durationS: 1.25, stderrTail: '', ...o,
});

describe('gdnlab notebooks commands, in process', () => {
  const stubs = new Stubs();
  let scratch: string;
  before(() => {
    scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'gdnlab-notebooks-edges-'));
  });
  after(() => fs.rmSync(scratch, { recursive: true, force: true }));
  afterEach(() => stubs.restore());

  it('--help of run and export ends with what they do beyond the flags; nothing runs', async () => {
    const run = await cli(['notebooks', 'run', '--help']);
    assert.deepEqual(lines(run.out).slice(-3), [
      '', 'Without paths: every notebooks/*.ipynb. Fails on any error output, a kernel that dies or times out,', 'or a saved notebook of 1 MB or more.',
    ]);
    const exp = await cli(['notebooks', 'export', '--help']);
    assert.deepEqual(lines(exp.out).slice(-2), ['', 'Each file carries a provenance header (revision, backend, device, date); plotly.js is embedded once.']);
  });

  describe('notebooks run', () => {
    const runner = (answer: (paths: string[]) => object[] = (p) => p.map((n) => report(n))) => {
      const calls: [string[], Opts][] = [];
      stubs.set(runLib, 'runNotebooks', async (paths: string[], o: Opts) => (calls.push([paths, o]), o.log?.('running'), answer(paths)));
      return calls;
    };
    const here = (...p: string[]) => path.join(process.cwd(), ...p);

    it('the notebooks given, each flag in its option (--backend, --timeout, --out and its spellings); one line per notebook, then the count', async () => {
      const calls = runner();
      const r = await cli(['notebooks', 'run', here('nb', 'a.ipynb'), here('b.ipynb'), '--backend', 'host', '--timeout', '30', '--out', 'x']);
      assert.equal(r.status, 0);
      assert.deepEqual(calls.map(([p, o]) => [p, { ...o, log: typeof o.log }]), [[[here('nb', 'a.ipynb'), here('b.ipynb')], { backend: 'host', timeoutS: 30, outDir: 'x', log: 'function' }]]);
      assert.deepEqual(lines(r.out), [
        `ok     ${path.join('nb', 'a.ipynb')}  (3/4 code cells, 1234 bytes, 1.3 s, GDN_BACKEND=host)`,
        'ok     b.ipynb  (3/4 code cells, 1234 bytes, 1.3 s, GDN_BACKEND=host)',
        '2 notebooks ok, 0 failed',
      ]);
      assert.equal(r.err, 'running\n');
      await cli(['notebooks', 'run', 'a.ipynb', '-o', 'y', '--timeout', '1']);
      await cli(['notebooks', 'run', 'a.ipynb', '--out-dir', 'z', '--backend', 'auto']);
      await cli(['notebooks', 'run', 'a.ipynb']);
      assert.deepEqual(calls.slice(1).map(([, o]) => [o.backend, o.timeoutS, o.outDir]), [[undefined, 1, 'y'], ['auto', undefined, 'z'], [undefined, undefined, undefined]]);
    });

    it('a failed notebook: its problems, each error\'s traceback, else the stderr tail; exit 1', async () => {
      runner((paths) => [
        report(paths[0], { ok: false, problems: ['cell 2 raised', 'saved 2 MB'], errors: [{ traceback: 'Error: x\n    at cell 2' }, { traceback: 'Error: y' }], stderrTail: 'not shown', backend: 'cuda' }),
        report(paths[1], { ok: false, problems: ['the kernel died'], stderrTail: 'Segmentation fault\ncore dumped' }),
        report(paths[2], { ok: false, problems: ['timed out'] }),
        report(paths[3], { stderrTail: 'a warning of a passing run' }),
      ]);
      const r = await cli(['notebooks', 'run', 'a.ipynb', 'b.ipynb', 'c.ipynb', process.cwd()]);
      assert.equal(r.status, 1);
      assert.deepEqual(lines(r.out), [
        'FAILED a.ipynb  (3/4 code cells, 1234 bytes, 1.3 s, GDN_BACKEND=cuda)',
        '         cell 2 raised',
        '         saved 2 MB',
        '         | Error: x',
        '         |     at cell 2',
        '         | Error: y',
        'FAILED b.ipynb  (3/4 code cells, 1234 bytes, 1.3 s, GDN_BACKEND=host)',
        '         the kernel died',
        '         ! Segmentation fault',
        '         ! core dumped',
        'FAILED c.ipynb  (3/4 code cells, 1234 bytes, 1.3 s, GDN_BACKEND=host)',
        '         timed out',
        // The working directory itself is named as given (its relative path is empty).
        `ok     ${process.cwd()}  (3/4 code cells, 1234 bytes, 1.3 s, GDN_BACKEND=host)`,
        '1 notebooks ok, 3 failed',
      ]);
    });

    it('a Parsed made by hand with --out or --backend as a bare switch: no such option (only string values are paths or backends)', async () => {
      const calls = runner();
      const flags = new Map<string, string | true>([['out', true], ['backend', true]]);
      assert.equal((await captured(() => notebooksRunCommand.run({ flags, all: new Map(), operands: ['a.ipynb'] }))).status, 0);
      assert.deepEqual([calls[0][1].outDir, calls[0][1].backend], [undefined, undefined]);
    });

    it('--json: the reports as JSON and nothing else; no log', async () => {
      const calls = runner((paths) => [report(paths[0], { ok: false })]);
      const r = await cli(['notebooks', 'run', 'a.ipynb', '--json']);
      assert.equal(r.status, 1);
      assert.equal(calls[0][1].log, undefined);
      assert.equal(r.out, JSON.stringify([report('a.ipynb', { ok: false })], null, 2) + '\n');
      assert.equal(r.err, '');
    });

    it('without paths: the shipped notebooks; none shipped: an error naming the folder', async () => {
      const calls = runner();
      let shipped = ['/p/notebooks/01.ipynb'];
      stubs.set(pathsLib, 'shippedNotebooks', () => shipped);
      assert.equal((await cli(['notebooks', 'run'])).status, 0);
      assert.deepEqual(calls[0][0], shipped);
      shipped = [];
      const r = await cli(['notebooks', 'run']);
      assert.deepEqual([r.status, r.err], [1, `gdnlab: no notebooks given and none in ${path.join(projectRoot(), 'notebooks')}\n`]);
      assert.equal(calls.length, 1);
    });

    it('--timeout: a positive whole number of seconds, else a usage error naming it', async () => {
      const calls = runner();
      for (const t of ['0', '-5', '2.5', 'soon']) {
        const r = await cli(['notebooks', 'run', 'a.ipynb', `--timeout=${t}`]);
        assert.equal(usageError(r, 'notebooks run'), `gdnlab: --timeout: expected a positive whole number of seconds, got '${t}'`);
      }
      assert.equal(calls.length, 0);
    });
  });

  describe('notebooks export', () => {
    const RESULT = { notebook: 'o/n.ipynb', html: 'o/n.html', interactiveHtml: 'o/n.interactive.html', provenance: null, exportedBy: { host: 'h' }, report: { ok: true } };
    const exporter = () => {
      const calls: [string, Opts][] = [];
      stubs.set(exportLib, 'exportNotebook', async (nb: string, o: Opts) => (calls.push([nb, o]), o.log?.('exporting'), RESULT));
      return calls;
    };

    it('the defaults: out/export of the project, executed, the three files listed', async () => {
      const calls = exporter();
      const r = await cli(['notebooks', 'export', 'a.ipynb']);
      assert.equal(r.status, 0);
      assert.deepEqual(calls.map(([nb, o]) => [nb, { ...o, log: typeof o.log }]), [['a.ipynb', {
        outDir: path.join(projectRoot(), 'out', 'export'), backend: undefined, timeoutS: undefined, execute: true, log: 'function',
      }]]);
      assert.deepEqual(lines(r.out), ['notebook          o/n.ipynb', 'html              o/n.html', 'interactive html  o/n.interactive.html']);
      assert.equal(r.err, 'exporting\n');
    });

    it('--out (-o, --out-dir), --backend, --timeout and --no-execute reach exportNotebook; --json: the result without its report, no log', async () => {
      const calls = exporter();
      await cli(['notebooks', 'export', 'a.ipynb', '--out', 'd', '--backend', 'cuda', '--timeout', '9', '--no-execute']);
      await cli(['notebooks', 'export', 'a.ipynb', '-o', 'e']);
      await cli(['notebooks', 'export', 'a.ipynb', '--out-dir', 'f']);
      const j = await cli(['notebooks', 'export', 'a.ipynb', '--json']);
      assert.deepEqual(calls.map(([, o]) => [o.outDir, o.backend, o.timeoutS, o.execute, typeof o.log]).slice(0, 3), [
        ['d', 'cuda', 9, false, 'function'], ['e', undefined, undefined, true, 'function'], ['f', undefined, undefined, true, 'function'],
      ]);
      assert.equal(calls[3][1].log, undefined);
      const { report: _dropped, ...rest } = RESULT;
      assert.equal(j.out, JSON.stringify(rest, null, 2) + '\n');
      assert.equal(j.err, '');
      const bad = await cli(['notebooks', 'export', 'a.ipynb', '--timeout', '0']);
      assert.equal(usageError(bad, 'notebooks export'), "gdnlab: --timeout: expected a positive whole number of seconds, got '0'");
    });
  });

  describe('notebooks compare', () => {
    const C = { label: 'Cross-run comparison', a: { file: 'a' }, b: { file: 'b' }, pairs: [{ kind: 'table' }, { kind: 'figure' }] };
    const comparer = () => {
      const calls: unknown[][] = [];
      stubs.set(compareLib, 'compareNotebooks', (a: string, b: string) => (calls.push([a, b]), C));
      stubs.set(compareLib, 'comparisonHtml', (c: unknown) => (calls.push([c]), '<!DOCTYPE html><p>page</p>'));
      return calls;
    };

    it('the page on stdout; --json the pairs instead (no page made)', async () => {
      const calls = comparer();
      const r = await cli(['notebooks', 'compare', 'a.ipynb', 'b.ipynb']);
      assert.equal(r.status, 0);
      assert.equal(r.out, '<!DOCTYPE html><p>page</p>\n');
      assert.deepEqual(calls, [['a.ipynb', 'b.ipynb'], [C]]);
      const j = await cli(['notebooks', 'compare', 'a.ipynb', 'b.ipynb', '--json']);
      assert.equal(j.status, 0);
      assert.equal(j.out, JSON.stringify(C, null, 1) + '\n');
      assert.equal(calls.length, 3);
    });

    it('--out FILE (-o): the page written there, folders made; a line on stderr, nothing on stdout', async () => {
      comparer();
      const file = path.join(scratch, 'deep', 'er', 'page.html');
      const r = await cli(['notebooks', 'compare', 'a.ipynb', 'b.ipynb', '--out', file]);
      assert.equal(r.status, 0);
      assert.equal(r.out, '');
      assert.equal(fs.readFileSync(file, 'utf8'), '<!DOCTYPE html><p>page</p>');
      assert.equal(r.err, `Cross-run comparison: 2 pairs of outputs → ${file}\n`);
      const short = path.join(scratch, 'short.html');
      await cli(['notebooks', 'compare', 'a.ipynb', 'b.ipynb', '-o', short]);
      assert.equal(fs.readFileSync(short, 'utf8'), '<!DOCTYPE html><p>page</p>');
    });
  });
});
