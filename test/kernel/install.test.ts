// dist/kernel/install.js: argument checks, the kernel.json it writes, install and uninstall
// through `python -m jupyter kernelspec`, always into temp folders.

import assert from 'assert';
import { spawnSync } from 'child_process';
import fs from 'fs';
import path from 'path';
import { parseInstallArgs } from '../../kernel/install';
import { KERNEL_MAIN, PROJECT_ROOT } from './kernel-client';
import { jupyterPython, jupyterSandbox, JupyterSandbox, runInstaller } from './python-env';

describe('kernel installer', function () {
  this.timeout(60000);

  describe('arguments', () => {
    it('needs --python', () => {
      assert.throws(() => parseInstallArgs(['--user']), /--python: missing/);
    });
    it('accepts one scope only', () => {
      assert.throws(() => parseInstallArgs(['--python', 'py', '--user', '--prefix', '/x']), /--prefix: choose one of --user, --sys-prefix, --prefix/);
    });
    it('checks the kernel name and --env pairs', () => {
      assert.throws(() => parseInstallArgs(['--python', 'py', '--name', 'bad name']), /--name: expected letters, digits/);
      assert.throws(() => parseInstallArgs(['--python', 'py', '--env', 'NOVALUE']), /--env: expected NAME=VALUE/);
      assert.throws(() => parseInstallArgs(['--python', 'py', '--bogus']), /unknown argument "--bogus"/);
    });
    it('defaults to --user and the name gdnlab', () => {
      const a = parseInstallArgs(['--python', 'py', '--env', 'A=b=c']);
      assert.deepStrictEqual(a, { python: 'py', scope: { kind: 'user' }, name: 'gdnlab', displayName: undefined, env: { A: 'b=c' }, uninstall: false });
    });
  });

  describe('with Jupyter', () => {
    let sandbox: JupyterSandbox;
    let python: string;
    before(() => {
      python = jupyterPython();
      sandbox = jupyterSandbox();
    });
    after(() => sandbox?.cleanup());

    it('installs into --prefix a kernel.json with absolute node and main.js paths, signal interrupts and NODE_PATH', () => {
      const r = runInstaller(['--python', python, '--prefix', sandbox.prefix, '--env', 'GDN_BACKEND=host'], sandbox.env);
      assert.strictEqual(r.status, 0, r.stderr);
      const dir = path.join(sandbox.prefix, 'share', 'jupyter', 'kernels', 'gdnlab');
      assert.match(r.stdout, new RegExp(`Installed kernelspec gdnlab in ${dir.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`));
      const spec = JSON.parse(fs.readFileSync(path.join(dir, 'kernel.json'), 'utf8'));
      assert.deepStrictEqual(spec.argv, [process.execPath, KERNEL_MAIN, '--connection-file', '{connection_file}']);
      assert.ok(path.isAbsolute(spec.argv[0]) && path.isAbsolute(spec.argv[1]));
      assert.strictEqual(spec.display_name, 'gdnlab (TypeScript)');
      assert.strictEqual(spec.language, 'typescript');
      assert.strictEqual(spec.interrupt_mode, 'signal');
      assert.strictEqual(spec.env.GDN_BACKEND, 'host');
      assert.strictEqual(fs.realpathSync(path.join(spec.env.NODE_PATH, 'gdnlab')), fs.realpathSync(PROJECT_ROOT), 'NODE_PATH holds a gdnlab link to the project');
    });

    it('is found by jupyter kernelspec list through JUPYTER_PATH', () => {
      const r = spawnSync(python, ['-m', 'jupyter', 'kernelspec', 'list', '--json'], { env: sandbox.env, encoding: 'utf8' });
      assert.strictEqual(r.status, 0, r.stderr);
      const specs = JSON.parse(r.stdout).kernelspecs;
      assert.ok(specs.gdnlab, `gdnlab in ${Object.keys(specs)}`);
      assert.strictEqual(specs.gdnlab.spec.language, 'typescript');
    });

    it('installs under another name and into the user folder (JUPYTER_DATA_DIR)', () => {
      const r = runInstaller(['--python', python, '--user', '--name', 'gdnlab-dev', '--display-name', 'gdnlab dev'], sandbox.env);
      assert.strictEqual(r.status, 0, r.stderr);
      const spec = JSON.parse(fs.readFileSync(path.join(String(sandbox.env.JUPYTER_DATA_DIR), 'kernels', 'gdnlab-dev', 'kernel.json'), 'utf8'));
      assert.strictEqual(spec.display_name, 'gdnlab dev');
    });

    it('uninstalls, and says so when there is nothing to remove', () => {
      const dir = path.join(sandbox.prefix, 'share', 'jupyter', 'kernels', 'gdnlab');
      const r = runInstaller(['--python', python, '--prefix', sandbox.prefix, '--uninstall'], sandbox.env);
      assert.strictEqual(r.status, 0, r.stderr);
      assert.match(r.stdout, /Removed kernelspec gdnlab from/);
      assert.strictEqual(fs.existsSync(dir), false);
      const again = runInstaller(['--python', python, '--prefix', sandbox.prefix, '--uninstall'], sandbox.env);
      assert.strictEqual(again.status, 0);
      assert.match(again.stdout, /No kernelspec gdnlab in .*: nothing to remove/);
      const user = runInstaller(['--python', python, '--user', '--name', 'gdnlab-dev', '--uninstall'], sandbox.env);
      assert.match(user.stdout, /Removed kernelspec gdnlab-dev/);
    });

    it('fails clearly when the Python cannot run Jupyter', () => {
      const r = runInstaller(['--python', path.join(sandbox.root, 'no-such-python'), '--prefix', sandbox.prefix], sandbox.env);
      assert.strictEqual(r.status, 1);
      assert.match(r.stderr, /--python .*no-such-python: cannot run it/);
    });
  });
});
