// Where the notebook tools find the project, its venv and the Python driver (no native code loaded).

import * as fs from 'fs';
import * as path from 'path';

/** The gdnlab checkout: the nearest folder above this file with package.json and lib/notebooks/nbtool.py. */
export function projectRoot(): string {
  let dir = __dirname;
  for (;;) {
    if (fs.existsSync(path.join(dir, 'package.json')) && fs.existsSync(path.join(dir, 'lib', 'notebooks', 'nbtool.py'))) return dir;
    const up = path.dirname(dir);
    if (up === dir) throw new Error(`gdnlab: cannot find the project root above ${__dirname}`);
    dir = up;
  }
}

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
