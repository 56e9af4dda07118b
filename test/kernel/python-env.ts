// The Python with Jupyter that the kernel tests install the kernelspec into and drive the kernel
// from: $GDNLAB_PYTHON, else the project's .venv. Every test gets a private Jupyter environment
// (data, config and runtime folders and JUPYTER_PATH in a temp folder), never the user's.

import { spawnSync, SpawnSyncReturns } from 'child_process';
import fs from 'fs';
import os from 'os';
import path from 'path';
import { PROJECT_ROOT } from './kernel-client';

export function jupyterPython(): string {
  const python = process.env.GDNLAB_PYTHON || path.join(PROJECT_ROOT, '.venv', 'bin', 'python');
  if (!fs.existsSync(python)) {
    throw new Error(`${python} is missing: create the project venv (python -m venv .venv && .venv/bin/pip install -r requirements) or set GDNLAB_PYTHON to a Python with jupyter_client, jupyter_server and jupyter_kernel_test`);
  }
  return python;
}

export interface JupyterSandbox {
  root: string;
  /** Where `install.js --prefix` puts the kernelspec (prefix/share/jupyter/kernels/<name>). */
  prefix: string;
  env: NodeJS.ProcessEnv;
  cleanup(): void;
}

/** A temp Jupyter environment whose kernelspec search path starts at prefix/share/jupyter. */
export function jupyterSandbox(): JupyterSandbox {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'gdnlab-jupyter-'));
  const prefix = path.join(root, 'prefix');
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    JUPYTER_PATH: path.join(prefix, 'share', 'jupyter'),
    JUPYTER_DATA_DIR: path.join(root, 'data'),
    JUPYTER_CONFIG_DIR: path.join(root, 'config'),
    JUPYTER_RUNTIME_DIR: path.join(root, 'runtime'),
    JUPYTER_PLATFORM_DIRS: '1',
    IPYTHONDIR: path.join(root, 'ipython'),
    PYTHONDONTWRITEBYTECODE: '1',
  };
  return { root, prefix, env, cleanup: () => fs.rmSync(root, { recursive: true, force: true }) };
}

export const INSTALL_JS = path.join(PROJECT_ROOT, 'dist', 'kernel', 'install.js');

/** Runs dist/kernel/install.js with the sandbox's environment. */
export function runInstaller(args: string[], env: NodeJS.ProcessEnv): SpawnSyncReturns<string> {
  return spawnSync(process.execPath, [INSTALL_JS, ...args], { env, encoding: 'utf8' });
}

/** Installs the gdnlab kernelspec into the sandbox (kernel gdnlab uses the fixture package unless overridden). */
export function installKernel(sandbox: JupyterSandbox, extra: string[] = []): string {
  const r = runInstaller(['--python', jupyterPython(), '--prefix', sandbox.prefix, ...extra], sandbox.env);
  if (r.status !== 0) throw new Error(`install.js failed (${r.status}):\n${r.stderr}${r.stdout}`);
  return r.stdout;
}
