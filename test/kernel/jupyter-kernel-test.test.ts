// Runs jupyter_kernel_test (test_jupyter_kernel_test.py) against the gdnlab kernel, installed
// into a temporary JUPYTER_PATH, through jupyter_client as Jupyter itself starts kernels.

import assert from 'assert';
import { spawn } from 'child_process';
import fs from 'fs';
import path from 'path';
import { FIXTURE_PACKAGE, PROJECT_ROOT } from './kernel-client';
import { installKernel, jupyterPython, jupyterSandbox, JupyterSandbox } from './python-env';

const SUITE = path.join(PROJECT_ROOT, 'test', 'kernel', 'test_jupyter_kernel_test.py');

describe('jupyter_kernel_test conformance', function () {
  this.timeout(120000);
  let sandbox: JupyterSandbox;

  before(() => {
    sandbox = jupyterSandbox();
    installKernel(sandbox, ['--env', `GDNLAB_PACKAGE_ROOT=${FIXTURE_PACKAGE}`]);
  });
  after(() => sandbox?.cleanup());

  it('passes every KernelTests check that applies (only the pager is skipped)', async () => {
    const notebookDir = path.join(sandbox.root, 'notebooks');
    fs.mkdirSync(notebookDir);
    const { code, output } = await new Promise<{ code: number | null; output: string }>((resolve) => {
      const p = spawn(jupyterPython(), [SUITE], { cwd: notebookDir, env: { ...sandbox.env, GDNLAB_KERNEL_TEST_SANDBOX: '1' } });
      let output = '';
      p.stdout.on('data', (d) => (output += d));
      p.stderr.on('data', (d) => (output += d));
      p.on('close', (c) => resolve({ code: c, output }));
    });
    assert.strictEqual(code, 0, output);
    const ran = /Ran (\d+) tests/.exec(output);
    assert.ok(ran && Number(ran[1]) === 12, `ran ${ran?.[1]} tests:\n${output}`);
    const skipped = output.split('\n').filter((l) => / \.\.\. skipped/.test(l));
    assert.deepStrictEqual(skipped.map((l) => l.split(' ')[0]), ['test_pager'], output);
    assert.match(output, /\nOK \(skipped=1\)/);
  });
});
