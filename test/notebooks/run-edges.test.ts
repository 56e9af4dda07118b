// lib/notebooks/run.ts in this process: the Python driver (spawn) is a script of the test that writes the
// executed notebook and the report where the command line says, and the kill timer is recorded instead of
// armed. Checked exactly: the driver's command line (every option to its argument), its environment, what
// is read back from the report and the notebook (errors, executed cells, size limit, provenance), the
// messages of a driver that fails to start or stops without a report, and the argument checks.

import { strict as assert } from 'assert';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { DEFAULT_MAX_NOTEBOOK_BYTES, RUN_INFO_MIME, recordProvenance, runNotebook, runNotebooks } from '../../lib/notebooks/run';
import { Notebook, readNotebook, writeNotebook } from '../../lib/notebooks/ipynb';
import { nbtoolPath } from '../../lib/notebooks/paths';
import { makeNotebook, tempDir } from './helpers';
import { FakeChild, SpawnCall, withSpawn, withTimers } from './fake-spawn';
import { withEnv } from '../stand-ins';

const arg = (call: SpawnCall, flag: string) => call.args[call.args.indexOf(flag) + 1];

/** The driver's answer: the executed notebook `nb` (or raw text) written to --output, and `report` to --report. */
function driver(nb: Notebook | string | null, report: Record<string, unknown> | null, status = 0, say: (c: FakeChild) => void = () => undefined) {
  return (child: FakeChild, call: SpawnCall) => {
    if (nb !== null) {
      const out = arg(call, '--output');
      if (typeof nb === 'string') fs.writeFileSync(out, nb);
      else writeNotebook(out, nb);
    }
    if (report !== null) fs.writeFileSync(arg(call, '--report'), JSON.stringify(report));
    say(child);
    child.emit('close', status);
  };
}

/** An executed notebook: `ran` code cells with an execution count, the rest without. */
function executed(cells: number, ran: number): Notebook {
  const nb = makeNotebook(Array.from({ length: cells }, (_, i) => `cell${i}`));
  nb.cells.forEach((c, i) => (c.execution_count = i < ran ? i + 1 : null));
  return nb;
}

describe('notebooks run: edges (driver replaced)', () => {
  let dir: string;
  let nbFile: string;
  beforeEach(() => {
    dir = tempDir('run-edges');
    nbFile = path.join(dir, 'a b.ipynb');
    writeNotebook(nbFile, makeNotebook(['md:# title', 'x = 1', 'y = 2', 'md:end']));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('the command line: python, nbtool.py execute, every option to its argument, the environment and stdio', async () => {
    const outDir = path.join(dir, 'out', 'deeper');
    await withEnv({ GDN_BACKEND: 'host', GDNLAB_RUN_EDGES_PARENT: 'from-parent' }, () =>
      withSpawn([driver(executed(2, 2), { completed: true, failure: null, durationS: 1 })], async (calls) => {
        const r = await runNotebook(nbFile, { python: '/opt/py/bin/python', kernelName: 'kern-x', timeoutS: 7, outDir, backend: 'cuda', env: { EXTRA_VAR: 'e', GDN_BACKEND: 'ignored', PYTHONUNBUFFERED: '0' } });
        assert.equal(calls.length, 1);
        const c = calls[0];
        assert.equal(c.cmd, '/opt/py/bin/python');
        const report = c.args[c.args.length - 1];
        assert.deepEqual(c.args, [nbtoolPath(), 'execute', '--input', nbFile, '--output', path.join(outDir, 'a b.ipynb'), '--cwd', dir, '--kernel', 'kern-x', '--timeout', '7', '--report', report]);
        assert.equal(path.basename(report), 'report.json');
        assert.ok(path.basename(path.dirname(report)).startsWith('gdnlab-nbrun-'));
        assert.equal(path.dirname(path.dirname(report)), os.tmpdir());
        assert.ok(!fs.existsSync(path.dirname(report)), 'the scratch folder is removed');
        assert.deepEqual(c.opts.stdio, ['ignore', 'pipe', 'pipe']);
        const env = c.opts.env!;
        assert.equal(env.GDN_BACKEND, 'cuda');
        assert.equal(env.PYTHONUNBUFFERED, '1');
        assert.equal(env.EXTRA_VAR, 'e');
        assert.equal(env.GDNLAB_RUN_EDGES_PARENT, 'from-parent');
        assert.equal(r.output, path.join(outDir, 'a b.ipynb'));
        assert.equal(r.notebook, nbFile);
        assert.equal(r.kernelName, 'kern-x');
        assert.equal(r.backend, 'cuda');
      }),
    );
  });

  it('defaults: in place, kernel gdnlab, 600 s per cell, python from GDNLAB_NOTEBOOK_PYTHON, GDN_BACKEND of this process', async () => {
    await withEnv({ GDN_BACKEND: ' HOST ', GDNLAB_NOTEBOOK_PYTHON: '/from/env/python' }, () =>
      withSpawn([driver(executed(2, 2), { completed: true, failure: null, durationS: 1 })], async (calls) => {
        const r = await runNotebook(path.relative(process.cwd(), nbFile));
        const c = calls[0];
        assert.equal(c.cmd, '/from/env/python');
        assert.equal(arg(c, '--input'), nbFile);
        assert.equal(arg(c, '--output'), nbFile);
        assert.equal(arg(c, '--kernel'), 'gdnlab');
        assert.equal(arg(c, '--timeout'), '600');
        assert.equal(c.opts.env!.GDN_BACKEND, 'host');
        assert.equal(r.output, nbFile);
        assert.equal(r.backend, 'host');
        assert.equal(r.kernelName, 'gdnlab');
      }),
    );
    // inplace: false with outDir, and inplace: true alone, are the explicit forms of the two defaults.
    await withSpawn([driver(executed(2, 2), { completed: true, failure: null, durationS: 1 })], async (calls) => {
      await runNotebook(nbFile, { inplace: false, outDir: path.join(dir, 'o') });
      await runNotebook(nbFile, { inplace: true });
      assert.equal(arg(calls[0], '--output'), path.join(dir, 'o', 'a b.ipynb'));
      assert.equal(arg(calls[1], '--output'), nbFile);
    });
  });

  it('GDN_BACKEND: empty and auto give auto, cuda passes, anything else is refused naming it', async () => {
    const backendFor = (v: string | undefined) =>
      withEnv({ GDN_BACKEND: v }, () => withSpawn([driver(executed(2, 2), { completed: true, failure: null, durationS: 1 })], async () => (await runNotebook(nbFile)).backend));
    assert.equal(await backendFor(undefined), 'auto');
    assert.equal(await backendFor('  '), 'auto');
    assert.equal(await backendFor('Auto'), 'auto');
    assert.equal(await backendFor('cuda'), 'cuda');
    await assert.rejects(backendFor('gpu '), (e: Error) => e instanceof TypeError && e.message === "GDN_BACKEND: expected auto, cuda or host, got 'gpu '");
    // backend given: GDN_BACKEND is not read (a bad one does not matter).
    await withEnv({ GDN_BACKEND: 'gpu' }, () => withSpawn([driver(executed(2, 2), { completed: true, failure: null, durationS: 1 })], async () => {
      assert.equal((await runNotebook(nbFile, { backend: 'auto' })).backend, 'auto');
    }));
  });

  it('a clean run: executed cells, size, duration and the stderr tail read back; log lines say so', async () => {
    const lines: string[] = [];
    const say = (c: FakeChild) => {
      c.say('stdout', 'out-1\n');
      c.say('stderr', Array.from({ length: 44 }, (_, i) => `err-${i}`).join('\n') + '\n\n');
    };
    await withSpawn([driver(executed(3, 1), { completed: true, failure: null, durationS: 2.25 }, 0, say)], async () => {
      const r = await runNotebook(nbFile, { log: (l) => lines.push(l), backend: 'host' });
      assert.equal(r.ok, true);
      assert.deepEqual(r.problems, []);
      assert.deepEqual(r.errors, []);
      assert.equal(r.codeCells, 2);
      assert.equal(r.executedCells, 1);
      assert.equal(r.sizeBytes, fs.statSync(nbFile).size);
      assert.ok(r.sizeBytes > 0);
      assert.equal(r.durationS, 2.25);
      assert.equal(r.provenance, undefined);
      // The last 40 lines of everything the driver wrote, trailing blank lines dropped.
      assert.equal(r.stderrTail, Array.from({ length: 40 }, (_, i) => `err-${i + 4}`).join('\n'));
      assert.deepEqual(lines, ['running a b.ipynb (kernel gdnlab, GDN_BACKEND=host)', `ok a b.ipynb in 2.3 s, ${r.sizeBytes} bytes`]);
    });
  });

  it('keeps the last 64 KiB of the driver\'s output', async () => {
    const say = (c: FakeChild) => {
      c.say('stderr', 'a'.repeat(10));
      c.say('stdout', 'b'.repeat(64 * 1024));
      c.say('stderr', 'cd');
    };
    await withSpawn([driver(null, null, 9, say)], async () => {
      const r = await runNotebook(nbFile);
      assert.equal(r.stderrTail, 'a'.repeat(0) + 'b'.repeat(64 * 1024 - 2) + 'cd');
    });
  });

  it('errors in cells, the driver\'s failure and the size limit are problems; the log says FAILED with them', async () => {
    const nb = executed(2, 2);
    nb.cells[1].outputs = [
      { output_type: 'stream', name: 'stdout', text: 'fine' },
      { output_type: 'error', ename: 'RangeError', evalue: 'bad T', traceback: ['\u001b[31mtrace\u001b[0m', 'line'] },
    ];
    const lines: string[] = [];
    await withSpawn([driver(nb, { completed: false, failure: 'cell 2 failed: RangeError: bad T', durationS: 0.5 }, 1)], async () => {
      const r = await runNotebook(nbFile, { maxBytes: 100, log: (l) => lines.push(l) });
      assert.equal(r.ok, false);
      const size = fs.statSync(nbFile).size;
      assert.deepEqual(r.problems, ['cell 2 failed: RangeError: bad T', 'cell 1: RangeError: bad T', `the saved notebook is ${size} bytes; it must stay under 100`]);
      assert.deepEqual(r.errors, [{ cell: 1, ename: 'RangeError', evalue: 'bad T', traceback: 'trace\nline' }]);
      assert.equal(lines[1], `FAILED a b.ipynb in 0.5 s, ${size} bytes: ${r.problems.join('; ')}`);
    });
  });

  it('the size limit: a notebook of exactly maxBytes fails, one byte less passes (default 1,000,000)', async () => {
    assert.equal(DEFAULT_MAX_NOTEBOOK_BYTES, 1_000_000);
    const text = JSON.stringify(executed(2, 2));
    const sized = (n: number) => text.padEnd(n, ' ');
    const problemsAt = (n: number, maxBytes?: number) =>
      withSpawn([driver(sized(n), { completed: true, failure: null, durationS: 1 })], async () => (await runNotebook(nbFile, { maxBytes })).problems);
    assert.deepEqual(await problemsAt(1_000_000), ['the saved notebook is 1000000 bytes; it must stay under 1000000']);
    assert.deepEqual(await problemsAt(999_999), []);
    assert.deepEqual(await problemsAt(5000, 5000), ['the saved notebook is 5000 bytes; it must stay under 5000']);
    assert.deepEqual(await problemsAt(4999, 5000), []);
  });

  it('a driver that stops without a report: exit status and its last 5 lines; the notebook is not read', async () => {
    const say = (c: FakeChild) => c.say('stderr', 'l1\nl2\nl3\nl4\nl5\nl6\n');
    const t0 = Date.now();
    // The driver takes 30 ms before it stops.
    const slow = (child: FakeChild, call: SpawnCall) => void setTimeout(() => driver(null, null, 3, say)(child, call), 30);
    await withSpawn([slow], async () => {
      const r = await runNotebook(nbFile);
      assert.ok(r.durationS >= 0.025, String(r.durationS));
      assert.deepEqual(r.problems, ['the notebook driver stopped (exit status 3) without a report: l2\nl3\nl4\nl5\nl6']);
      assert.equal(r.ok, false);
      assert.equal(r.executedCells, 0);
      assert.equal(r.sizeBytes, 0);
      assert.deepEqual(r.errors, []);
      // No report, no duration from it: the wall time here, in seconds.
      assert.ok(r.durationS >= 0 && r.durationS <= (Date.now() - t0) / 1000 + 0.001, String(r.durationS));
    });
    await withSpawn([driver(null, null, null as unknown as number)], async () => {
      assert.match((await runNotebook(nbFile)).problems[0], /^the notebook driver stopped \(exit status null\) without a report: $/);
    });
  });

  it('the kill timer: (timeoutS × (code cells + 1) + 180) s, SIGKILL when it fires, cleared when the driver closes', async () => {
    await withTimers(async (timers) => {
      await withSpawn([(child, call) => {
        assert.equal(timers.length, 1);
        assert.equal(timers[0].ms, (7 * (2 + 1) + 180) * 1000);
        assert.equal(timers[0].cleared, false);
        timers[0].fn();
        assert.deepEqual(child.kills, ['SIGKILL']);
        driver(null, { completed: false, failure: 'the kernel died: killed', durationS: 3 }, 1)(child, call);
      }], async () => {
        const r = await runNotebook(nbFile, { timeoutS: 7 });
        assert.deepEqual(r.problems.slice(0, 1), ['the kernel died: killed']);
      });
      assert.equal(timers[0].cleared, true);
    });
    await withTimers(async (timers) => {
      await withSpawn([driver(executed(2, 2), { completed: true, failure: null, durationS: 1 })], () => runNotebook(nbFile));
      assert.equal(timers[0].ms, (600 * 3 + 180) * 1000);
    });
  });

  it('a driver that cannot start: the message names the python and the setup script; the timer is cleared, the scratch folder removed', async () => {
    let report = '';
    await withTimers(async (timers) => {
      await withSpawn([(child, call) => {
        report = arg(call, '--report');
        const e = Object.assign(new Error('spawn /no/python ENOENT'), { code: 'ENOENT' });
        child.emit('error', e);
      }], async () => {
        await assert.rejects(runNotebook(nbFile, { python: '/no/python' }), (e: Error) => e.message === 'starting /no/python: spawn /no/python ENOENT (run bash scripts/setup.sh to create .venv)');
      });
      assert.equal(timers[0].cleared, true);
    });
    assert.ok(report && !fs.existsSync(path.dirname(report)));
  });

  it('provenance: the first run-info output\'s facts with the wall time, written into metadata.gdnlab (other keys kept)', async () => {
    const nb = executed(3, 3);
    nb.metadata.gdnlab = { keep: 'me', provenance: { old: true } };
    delete nb.cells[1].outputs;
    nb.cells[2].outputs = [
      { output_type: 'display_data', data: { 'text/plain': 'x' } },
      { output_type: 'display_data', data: { [RUN_INFO_MIME]: 'not an object' } },
      { output_type: 'display_data', data: { [RUN_INFO_MIME]: { backend: 'host', revision: 'r1' } } },
      { output_type: 'display_data', data: { [RUN_INFO_MIME]: { backend: 'cuda', revision: 'r2' } } },
    ];
    await withSpawn([driver(nb, { completed: true, failure: null, durationS: 12.36 })], async () => {
      const r = await runNotebook(nbFile);
      const want = { backend: 'host', revision: 'r1', wallS: 12.4, runner: 'gdnlab notebooks run' };
      assert.deepEqual(r.provenance, want);
      const saved = readNotebook(nbFile);
      assert.deepEqual(saved.metadata.gdnlab, { keep: 'me', provenance: want });
      assert.equal(r.sizeBytes, fs.statSync(nbFile).size, 'the size is the file with its provenance');
      assert.equal(r.ok, true);
    });
  });

  it('recordProvenance: none without a run-info object; metadata untouched; rounding to 0.1 s', () => {
    const nb = makeNotebook(['a']);
    nb.cells[0].outputs = [{ output_type: 'display_data', data: { [RUN_INFO_MIME]: null } }];
    assert.equal(recordProvenance(nb, 1), undefined);
    assert.equal(nb.metadata.gdnlab, undefined);
    const md = makeNotebook(['md:x', 'b']);
    md.cells[0].outputs = [{ output_type: 'display_data', data: { [RUN_INFO_MIME]: { from: 'markdown' } } }];
    md.cells[1].outputs = [{ output_type: 'display_data', data: { [RUN_INFO_MIME]: { from: 'code' } } }];
    assert.deepEqual(recordProvenance(md, 0.04), { from: 'code', wallS: 0, runner: 'gdnlab notebooks run' });
    assert.deepEqual(md.metadata.gdnlab, { provenance: { from: 'code', wallS: 0, runner: 'gdnlab notebooks run' } });
    assert.equal(recordProvenance(md, 0.05)!.wallS, 0.1);
    assert.equal(recordProvenance(md, 123.449)!.wallS, 123.4);
  });

  it('refuses bad options and a missing notebook, naming the argument; nothing is started', async () => {
    await withSpawn([() => assert.fail('started')], async (calls) => {
      const bad = async (opts: Record<string, unknown>, msg: string) => {
        await assert.rejects(runNotebook(nbFile, opts as never), (e: Error) => e instanceof TypeError && e.message === msg);
        await assert.rejects(runNotebooks([nbFile], opts as never), (e: Error) => e instanceof TypeError && e.message === msg);
      };
      for (const t of [0, -1, 1.5, Number.NaN, '3']) await bad({ timeoutS: t }, `timeoutS: expected a positive whole number of seconds, got ${String(t)}`);
      await bad({ backend: 'gpu' }, "backend: expected 'auto', 'host' or 'cuda', got gpu");
      await bad({ inplace: false }, 'outDir: required when inplace is false (where should the executed notebooks go?)');
      await bad({ inplace: false, outDir: '' }, 'outDir: required when inplace is false (where should the executed notebooks go?)');
      await bad({ inplace: true, outDir: dir }, 'outDir: not allowed with inplace: true (outputs are saved into the notebook itself)');
      await assert.rejects(runNotebook(path.join(dir, 'none.ipynb')), (e: Error) => e.message === `notebook: ${path.join(dir, 'none.ipynb')} does not exist`);
      await assert.rejects(runNotebooks([]), (e: Error) => e instanceof TypeError && e.message === 'paths: expected at least one notebook path');
      await assert.rejects(runNotebooks('a.ipynb' as never), (e: Error) => e instanceof TypeError && e.message === 'paths: expected at least one notebook path');
      assert.equal(calls.length, 0);
    });
  });

  it('runNotebooks: one report per notebook, in order, each run after the one before', async () => {
    const second = path.join(dir, 'second.ipynb');
    writeNotebook(second, makeNotebook(['z']));
    let running = 0;
    await withSpawn([(child, call) => {
      running++;
      assert.equal(running, 1);
      setImmediate(() => {
        running--;
        driver(executed(1, 1), { completed: true, failure: null, durationS: 1 })(child, call);
      });
    }], async (calls) => {
      const reports = await runNotebooks([nbFile, second], { timeoutS: 5 });
      assert.deepEqual(reports.map((r) => r.notebook), [nbFile, second]);
      assert.deepEqual(calls.map((c) => arg(c, '--input')), [nbFile, second]);
      assert.deepEqual(reports.map((r) => r.codeCells), [2, 1]);
    });
  });
});
