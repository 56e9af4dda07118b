// Headless notebook execution (how CI runs notebooks): nbclient, through `jupyter nbconvert
// --execute`, runs a notebook on the gdnlab kernel and saves rich outputs, in-place display
// updates and expected errors.

import assert from 'assert';
import { spawnSync } from 'child_process';
import fs from 'fs';
import path from 'path';
import { FIXTURE_PACKAGE } from './kernel-client';
import { installKernel, jupyterPython, jupyterSandbox, JupyterSandbox } from './python-env';

/** nbformat may store a text value as a list of lines. */
const joined = (v: string | string[]) => (Array.isArray(v) ? v.join('') : v);

function codeCell(source: string, tags: string[] = []) {
  return { cell_type: 'code', execution_count: null, metadata: tags.length ? { tags } : {}, outputs: [], source };
}

describe('kernel under nbclient (jupyter nbconvert --execute)', function () {
  this.timeout(90000);
  let sandbox: JupyterSandbox;
  before(() => {
    sandbox = jupyterSandbox();
    installKernel(sandbox, ['--env', `GDNLAB_PACKAGE_ROOT=${FIXTURE_PACKAGE}`]);
  });
  after(() => sandbox?.cleanup());

  it('executes a notebook and saves its outputs', () => {
    const dir = path.join(sandbox.root, 'nb');
    fs.mkdirSync(dir);
    const notebook = {
      nbformat: 4,
      nbformat_minor: 5,
      metadata: { kernelspec: { name: 'gdnlab', display_name: 'gdnlab (TypeScript)', language: 'typescript' } },
      cells: [
        codeCell("import * as gdn from 'gdnlab';\ngdn.richValue('nb')"),
        codeCell("console.log('progress:');\ngdn.showProgress(2)"),
        codeCell("throw new Error('expected failure')", ['raises-exception']),
        codeCell('40 + 2'),
      ].map((c, i) => ({ ...c, id: `cell-${i}` })),
    };
    fs.writeFileSync(path.join(dir, 'in.ipynb'), JSON.stringify(notebook));
    const r = spawnSync(jupyterPython(), ['-m', 'jupyter', 'nbconvert', '--to', 'notebook', '--execute', 'in.ipynb', '--output', 'out.ipynb'], { cwd: dir, env: sandbox.env, encoding: 'utf8', timeout: 80000 });
    assert.strictEqual(r.status, 0, `${r.stderr}${r.stdout}`);
    const out = JSON.parse(fs.readFileSync(path.join(dir, 'out.ipynb'), 'utf8'));
    const cells = out.cells as { execution_count: number; outputs: Record<string, any>[] }[];
    assert.deepStrictEqual(cells.map((c) => c.execution_count), [1, 2, 3, 4]);
    const [rich, progress, failure, last] = cells.map((c) => c.outputs);
    assert.deepStrictEqual(Object.keys(rich[0].data).sort(), ['application/vnd.plotly.v1+json', 'image/svg+xml', 'text/plain']);
    assert.deepStrictEqual(progress.map((o) => o.output_type), ['stream', 'display_data', 'execute_result']);
    assert.strictEqual(joined(progress[1].data['text/plain']), 'step 2', 'the display was updated in place');
    assert.deepStrictEqual([failure[0].output_type, failure[0].ename, failure[0].evalue], ['error', 'Error', 'expected failure']);
    assert.strictEqual(joined(last[0].data['text/plain']), '42');
  });
});
