// lib/notebooks/ipynb.ts and lib/notebooks/paths.ts at their edges, without Jupyter: what makes a file a
// notebook, the exact text written, sources and texts given as strings or lists, ANSI codes of every
// shape, cells counted across all types, error outputs among others, where a run's provenance is read
// from (metadata first, else the first run-info output, skipping values that are not objects), own
// MIME keys only, the figure checks; and the notebook paths with fs.existsSync / readdirSync answered
// by the test.

import { strict as assert } from 'assert';
import * as path from 'path';
import {
  Cell, codeCells, errorOutputs, hasMime, Notebook, nonEmptyCodeCells, Output, plotChecks, PLOTLY_MIME, PNG_MIME, readNotebook,
  recordedProvenance, RUN_INFO_MIME, sourceText, stripAnsi, SVG_MIME, textOf, writeNotebook,
} from '../../lib/notebooks/ipynb';
import { jupyterPython, nbtoolPath, projectRoot, shippedNotebooks } from '../../lib/notebooks/paths';
import { tempDir } from './helpers';

// eslint-disable-next-line @typescript-eslint/no-var-requires
const realFs = require('fs') as typeof import('fs') & Record<string, unknown>;

const code = (source: string | string[], outputs: Output[] = []): Cell => ({ cell_type: 'code', source, metadata: {}, outputs });
const md = (source: string): Cell => ({ cell_type: 'markdown', source, metadata: {} });
const nbOf = (cells: Cell[], metadata: Record<string, unknown> = {}): Notebook => ({ cells, metadata, nbformat: 4, nbformat_minor: 5 });

describe('ipynb: edges', () => {
  const dir = tempDir('ipynb-edges');
  after(() => realFs.rmSync(dir, { recursive: true, force: true }));

  it('readNotebook: an object with a cells list and a numeric nbformat; anything else is refused by name', () => {
    const good = path.join(dir, 'good.ipynb');
    realFs.writeFileSync(good, '{"cells":[],"metadata":{},"nbformat":4,"nbformat_minor":5}');
    assert.deepEqual(readNotebook(good), nbOf([]));
    for (const [name, text] of [['null', 'null'], ['cells', '{"cells":{},"nbformat":4}'], ['nbformat', '{"cells":[],"nbformat":"4"}'], ['none', '{"nbformat":4}']]) {
      const f = path.join(dir, `${name}.ipynb`);
      realFs.writeFileSync(f, text);
      assert.throws(() => readNotebook(f), { name: 'Error', message: `${f}: not a Jupyter notebook (expected a JSON object with "cells" and "nbformat")` });
    }
  });

  it('writeNotebook: one-space indent and a trailing newline, as Jupyter writes', () => {
    const f = path.join(dir, 'w.ipynb');
    writeNotebook(f, nbOf([md('# T')]));
    assert.equal(realFs.readFileSync(f, 'utf8'), '{\n "cells": [\n  {\n   "cell_type": "markdown",\n   "source": "# T",\n   "metadata": {}\n  }\n ],\n "metadata": {},\n "nbformat": 4,\n "nbformat_minor": 5\n}\n');
  });

  it('sourceText and textOf: lists joined with nothing, strings as they are, other values as JSON', () => {
    assert.equal(sourceText(code(['a\n', 'b'])), 'a\nb');
    assert.equal(sourceText(code('x')), 'x');
    assert.equal(textOf(['p', 'q']), 'pq');
    assert.equal(textOf('s'), 's');
    assert.equal(textOf(3), '3');
    assert.equal(textOf({ a: [1] }), '{"a":[1]}');
  });

  it('stripAnsi: codes with several, one or no parameters, any final letter', () => {
    assert.equal(stripAnsi('\u001b[1;31mred\u001b[0m \u001b[mplain\u001b[2K!\u001b[38;5;208mX'), 'red plain!X');
    assert.equal(stripAnsi('[1m not a code \u001b'), '[1m not a code \u001b');
  });

  it('codeCells and nonEmptyCodeCells: indices over all cells; blank sources dropped', () => {
    const nb = nbOf([md('# a'), code(''), code([' ', '\n']), code(['x']), { cell_type: 'raw', source: 'r', metadata: {} }, code('y ')]);
    assert.deepEqual(codeCells(nb).map((c) => c.index), [1, 2, 3, 5]);
    assert.deepEqual(nonEmptyCodeCells(nb).map((c) => [c.index, sourceText(c.cell)]), [[3, 'x'], [5, 'y ']]);
    assert.equal(codeCells(nb)[2].cell, nb.cells[3]);
  });

  it('errorOutputs: every error output of every cell, after other outputs, with defaults and colours removed', () => {
    const nb = nbOf([
      code('a', [{ output_type: 'stream', name: 'stdout', text: 'hi' }, { output_type: 'error', ename: 'TypeError', evalue: 'bad', traceback: ['\u001b[31mTypeError\u001b[0m: bad', 'at x'] }]),
      md('m'),
      { cell_type: 'code', source: 'b', metadata: {} },
      code('c', [{ output_type: 'error' }, { output_type: 'error', ename: 'E' }]),
    ]);
    assert.deepEqual(errorOutputs(nb), [
      { cell: 0, ename: 'TypeError', evalue: 'bad', traceback: 'TypeError: bad\nat x' },
      { cell: 3, ename: '', evalue: '', traceback: '' },
      { cell: 3, ename: 'E', evalue: '', traceback: '' },
    ]);
    assert.deepEqual(errorOutputs(nbOf([code('ok', [{ output_type: 'stream', text: 'x' }])])), []);
  });

  it('recordedProvenance: metadata.gdnlab.provenance when an object, else the first run-info output that is one', () => {
    const info = (facts: unknown): Output => ({ output_type: 'display_data', data: { [RUN_INFO_MIME]: facts } });
    const cells = [code('a', [{ output_type: 'stream', text: 'x' }, info([1]), info('text')]), { cell_type: 'code', source: 'b', metadata: {} } as Cell, code('c', [info({ backend: 'host' }), info({ backend: 'second' })])];
    assert.deepEqual(recordedProvenance(nbOf([], { gdnlab: { provenance: { revision: 'r1' } } })), { revision: 'r1' });
    assert.deepEqual(recordedProvenance(nbOf(cells, { gdnlab: { provenance: ['r1'] } })), { backend: 'host' });
    assert.deepEqual(recordedProvenance(nbOf(cells, { gdnlab: { provenance: 'r1' } })), { backend: 'host' });
    assert.deepEqual(recordedProvenance(nbOf(cells, { gdnlab: {} })), { backend: 'host' });
    assert.deepEqual(recordedProvenance(nbOf(cells)), { backend: 'host' });
    assert.equal(recordedProvenance(nbOf(cells.slice(0, 2), { gdnlab: { provenance: null } })), null);
    assert.equal(recordedProvenance(nbOf([code('x', [info(null)])])), null);
  });

  it('hasMime: own keys of data only, present even when undefined', () => {
    assert.equal(hasMime({ output_type: 'display_data', data: { 'text/plain': undefined } }, 'text/plain'), true);
    assert.equal(hasMime({ output_type: 'display_data', data: {} }, 'toString'), false);
    assert.equal(hasMime({ output_type: 'display_data', data: { a: 1 } }, 'b'), false);
    assert.equal(hasMime({ output_type: 'stream' }, 'text/plain'), false);
  });

  it('plotChecks: per cell with plotly, the outputs carrying both images and the separate image outputs', () => {
    const plot = (mimes: string[]): Output => ({ output_type: 'display_data', data: Object.fromEntries(mimes.map((m) => [m, 'x'])) });
    const nb = nbOf([
      code('none', [plot([PNG_MIME])]),
      code('good', [plot([PLOTLY_MIME, PNG_MIME, SVG_MIME])]),
      md('m'),
      code('bad', [plot([PLOTLY_MIME, PNG_MIME]), plot([PLOTLY_MIME, SVG_MIME, PNG_MIME]), plot([SVG_MIME]), plot([PNG_MIME]), plot(['text/plain'])]),
      { cell_type: 'code', source: 'n', metadata: {} },
    ]);
    assert.deepEqual(plotChecks(nb), [
      { cell: 1, plotlyOutputs: 1, withStaticImages: 1, separateImageOutputs: 0 },
      { cell: 3, plotlyOutputs: 2, withStaticImages: 1, separateImageOutputs: 2 },
    ]);
  });
});

describe('notebook paths: edges', () => {
  const saved: [string, unknown][] = [];
  const replace = (key: string, value: unknown) => {
    saved.push([key, realFs[key]]);
    realFs[key] = value;
  };
  let env: string | undefined;
  beforeEach(() => {
    env = process.env.GDNLAB_NOTEBOOK_PYTHON;
  });
  afterEach(() => {
    while (saved.length) {
      const [k, v] = saved.pop() as [string, unknown];
      realFs[k] = v;
    }
    if (env === undefined) delete process.env.GDNLAB_NOTEBOOK_PYTHON;
    else process.env.GDNLAB_NOTEBOOK_PYTHON = env;
  });

  it('nbtoolPath: the driver beside the notebook code', () => {
    assert.equal(nbtoolPath(), path.join(projectRoot(), 'lib', 'notebooks', 'nbtool.py'));
  });

  it('jupyterPython: $GDNLAB_NOTEBOOK_PYTHON, else the venv when it exists, else python3', () => {
    const venv = path.join(projectRoot(), '.venv', 'bin', 'python');
    const asked: string[] = [];
    let exists = true;
    replace('existsSync', (p: string) => {
      asked.push(p);
      return exists;
    });
    process.env.GDNLAB_NOTEBOOK_PYTHON = '/opt/py';
    assert.equal(jupyterPython(), '/opt/py');
    assert.deepEqual(asked, []);
    process.env.GDNLAB_NOTEBOOK_PYTHON = '';
    assert.equal(jupyterPython(), venv);
    exists = false;
    delete process.env.GDNLAB_NOTEBOOK_PYTHON;
    assert.equal(jupyterPython(), 'python3');
    assert.deepEqual(asked, [venv, venv]);
  });

  it('shippedNotebooks: notebooks/*.ipynb sorted by name, none without the folder', () => {
    const dir = path.join(projectRoot(), 'notebooks');
    let exists = true;
    replace('existsSync', (p: string) => p === dir && exists);
    replace('readdirSync', (p: string) => {
      assert.equal(p, dir);
      return ['b.ipynb', 'README.md', 'a.ipynb', 'c.ipynb.bak', 'A.ipynb'];
    });
    assert.deepEqual(shippedNotebooks(), ['A.ipynb', 'a.ipynb', 'b.ipynb'].map((n) => path.join(dir, n)));
    exists = false;
    assert.deepEqual(shippedNotebooks(), []);
  });
});
