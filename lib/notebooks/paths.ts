// Where the notebook tools find the project, its venv and the Python driver (no native code loaded).

import * as fs from 'fs';
import * as path from 'path';

import { projectRoot } from '../paths';
export { projectRoot };

/** The Python driver that runs nbclient and nbconvert. */
export function nbtoolPath(): string {
  return path.join(projectRoot(), 'lib', 'notebooks', 'nbtool.py');
}

/** The Python with Jupyter: $GDNLAB_NOTEBOOK_PYTHON, else the project venv's, else python3 on PATH. */
export function jupyterPython(): string {
  if (process.env.GDNLAB_NOTEBOOK_PYTHON) return process.env.GDNLAB_NOTEBOOK_PYTHON;
  const venv = path.join(projectRoot(), '.venv', 'bin', 'python');
  return fs.existsSync(venv) ? venv : 'python3';
}

/** The shipped notebooks, notebooks/*.ipynb, sorted by name. */
export function shippedNotebooks(): string[] {
  const dir = path.join(projectRoot(), 'notebooks');
  if (!fs.existsSync(dir)) return [];
  return fs
    .readdirSync(dir)
    .filter((name) => name.endsWith('.ipynb'))
    .sort()
    .map((name) => path.join(dir, name));
}
