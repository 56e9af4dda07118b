// Every option proven live (docs/TESTING.md, "Every option proven live"), for exportNotebook: each option, set,
// gives a result or a message that differs from the default's. The executions run Python cells in the python3
// kernel (ipykernel, a pinned requirement) rather than the gdnlab kernel: a kernel start is the cost here, and
// python3 starts in a second where gdnlab takes about five. One export executes a two-cell notebook (a cell that
// prints the kernel's environment, then a 1.3 s cell) with the other options at their defaults; another sets
// them all and is compared with it.

import { strict as assert } from 'assert';
import * as fs from 'fs';
import * as path from 'path';
import { ExportResult, exportNotebook } from '../../lib/notebooks/export';
import { readNotebook, textOf } from '../../lib/notebooks/ipynb';
import { tempDir, writeTempNotebook } from './helpers';

const PROBE = 'GDNLAB_EXPORT_OPTION_PROBE';

/** What the probe cell printed in an executed notebook: the probe variable and GDN_BACKEND as the kernel saw them. */
function probed(file: string): string {
  const out = readNotebook(file).cells[0].outputs ?? [];
  const text = out.map((o) => textOf(o.text ?? o.data?.['text/plain'] ?? '')).join('');
  const m = /probe=(\S+) backend=(\S+)/.exec(text);
  assert.ok(m, `no probe line in ${JSON.stringify(text)}`);
  return m[0];
}

describe('exportNotebook: every option changes the export', function () {
  this.timeout(180_000);
  let dir: string;
  let src: string;
  let dflt: ExportResult;
  // The backend the default resolves to (this process's GDN_BACKEND, else auto), and another one to ask for.
  const envBackend = (process.env.GDN_BACKEND ?? '').trim().toLowerCase() || 'auto';
  const other = envBackend === 'host' ? 'auto' : 'host';

  before(async () => {
    dir = tempDir('export-options');
    src = writeTempNotebook(dir, 'probe.ipynb', [
      `import os, time\nprint('probe=' + str(os.environ.get('${PROBE}')) + ' backend=' + str(os.environ.get('GDN_BACKEND')))`,
      'time.sleep(1.3)',
    ]);
    dflt = await exportNotebook(src, { outDir: path.join(dir, 'default'), kernelName: 'python3' });
  });
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('the default runs with this process\'s environment and its GDN_BACKEND, no time limit a 1.3 s cell meets, and writes into outDir', () => {
    assert.ok(dflt.report?.ok, dflt.report?.problems.join('; '));
    assert.equal(probed(dflt.notebook), `probe=None backend=${envBackend}`);
    assert.equal(dflt.exportedBy.executed, true);
    for (const f of [dflt.notebook, dflt.html, dflt.interactiveHtml]) assert.equal(path.dirname(f), path.join(dir, 'default'));
  });

  it('env, backend, log, timeoutS and maxBytes: the kernel sees them, the lines come, the cell times out and the size fails', async () => {
    const lines: string[] = [];
    const out = path.join(dir, 'set');
    const err = await exportNotebook(src, { outDir: out, kernelName: 'python3', env: { [PROBE]: 'seen' }, backend: other as 'auto' | 'host', log: (l) => lines.push(l), timeoutS: 1, maxBytes: 200 })
      .then(() => null, (e: Error) => e.message);
    assert.ok(err, 'the export went through');
    assert.match(err, /did not run cleanly, so it was not exported:/);
    assert.match(err, /timed out|Timeout|timeout/, err);
    assert.match(err, /the saved notebook is \d+ bytes; it must stay under 200/, err);
    // The run's copy is kept where the export would have put it.
    assert.equal(probed(path.join(out, 'probe.ipynb')), `probe=seen backend=${other}`);
    assert.match(lines[0], new RegExp(`^running probe\\.ipynb \\(kernel python3, GDN_BACKEND=${other}\\)$`));
    assert.match(lines[lines.length - 1], /^FAILED probe\.ipynb in /);
    assert.ok(!fs.existsSync(path.join(out, 'probe.html')), 'nothing exported');
  });

  it('kernelName: the Python cells ran in python3 (the default gdnlab kernel reads TypeScript, where they are errors)', () => {
    assert.equal(dflt.report!.kernelName, 'python3');
    assert.equal(dflt.report!.executedCells, 2);
  });

  it('execute: false exports the saved notebook without running it; python is the one that runs (nbconvert, and the driver when executing)', async () => {
    const python = path.join(dir, 'no-such-python');
    // Executing, the driver is started first; not executing, the notebook is copied as it is and nbconvert is started.
    await assert.rejects(exportNotebook(src, { outDir: path.join(dir, 'run'), python }), /starting .*no-such-python: .*\(run bash scripts\/setup\.sh/);
    const out = path.join(dir, 'saved');
    await assert.rejects(exportNotebook(src, { outDir: out, execute: false, python }), (e: Error) => /starting .*no-such-python: .*ENOENT/.test(e.message) && !/setup\.sh/.test(e.message));
    assert.deepEqual(readNotebook(path.join(out, 'probe.ipynb')).cells[0].outputs, [], 'not executed: no outputs');
    assert.ok(readNotebook(dflt.notebook).cells[0].outputs!.length > 0, 'the default executed');
    await assert.rejects(exportNotebook(src, {} as never), /outDir: expected the folder to write the export into/);
  });
});
