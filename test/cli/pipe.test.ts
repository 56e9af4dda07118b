// CLI output through a real OS pipe: `gdnlab … --json | python3 (slow reader)` must deliver every
// byte and parse. Before bin/gdnlab.js waited for stdout to drain, a pipe got 131,072 bytes of
// `check conv --json` (process.exit() cut what the pipe had not taken yet). The reader sleeps
// first, so the pipe is full when the command finishes: exactly the case that truncated.
// Every command leaves through the same drain (lib/cli/index.ts, exitAfterDrain), so one real check
// (more than two pipe buffers) and one page of more than 1 MB stand for all of them.

import { strict as assert } from 'assert';
import { spawn } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { projectRoot } from '../../lib/paths';
import { plotTiming } from '../../lib/analysis/plot';
import { renderTable } from '../../lib/view/table';
import { PLOTLY_MIME } from '../../lib/notebooks/ipynb';

const READER = [
  'import json, sys, time',
  'time.sleep(1.5)',
  'data = sys.stdin.buffer.read()',
  'doc = json.loads(data)',
  'print(json.dumps({"bytes": len(data), "keys": sorted(doc) if isinstance(doc, dict) else len(doc)}))',
].join('\n');

/** Runs gdnlab with stdout piped straight into a python reader; returns what the reader saw. */
function pipeThroughPython(args: string[]): Promise<{ bytes: number; keys: unknown; status: number | null; stderr: string }> {
  return new Promise((resolve, reject) => {
    const cli = spawn(process.execPath, [path.join(projectRoot(), 'bin', 'gdnlab.js'), ...args], {
      env: { ...process.env, GDN_BACKEND: 'host' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    // The reader's stdin IS the CLI's stdout pipe (no buffering in this process between them).
    const reader = spawn('python3', ['-c', READER], { stdio: [cli.stdout, 'pipe', 'pipe'] });
    let err = '';
    let out = '';
    let rerr = '';
    cli.stderr.on('data', (c: Buffer) => (err = (err + c.toString()).slice(-4000)));
    reader.stdout!.on('data', (c: Buffer) => (out += c.toString()));
    reader.stderr!.on('data', (c: Buffer) => (rerr += c.toString()));
    let cliStatus: number | null = null;
    cli.on('close', (s) => (cliStatus = s));
    reader.on('error', reject);
    reader.on('close', (status) => {
      const wait = (): void => {
        if (cliStatus === null && cli.exitCode === null) {
          setTimeout(wait, 50);
          return;
        }
        if (status !== 0) return reject(new Error(`the reader failed to parse the output (exit ${status}): ${rerr.slice(-2000)}\ngdnlab stderr: ${err}`));
        const r = JSON.parse(out) as { bytes: number; keys: unknown };
        resolve({ ...r, status: cliStatus ?? cli.exitCode, stderr: err });
      };
      wait();
    });
  });
}

/** A notebook with `n` figure outputs and `n` tables (made by our own plot and table code). */
function bigNotebook(file: string, n: number, seed: number): void {
  const cells = [];
  for (let i = 0; i < n; i++) {
    const samples = Array.from({ length: 2000 }, (_, k) => 10 + seed + Math.sin(k * (i + 1)) + (k % 7) / 3);
    const fig = plotTiming([{ label: `arm ${i}`, samples } as never], { show: false, title: `figure ${i}` });
    const t = renderTable([{ arm: `arm ${i}`, 'median µs': 10 + i + seed }]);
    cells.push({ cell_type: 'markdown', metadata: {}, source: [`## section ${i}`] });
    cells.push({
      cell_type: 'code', metadata: {}, execution_count: i + 1, source: ['x'],
      outputs: [
        { output_type: 'display_data', metadata: {}, data: { 'text/html': t.html, 'text/plain': t.text } },
        { output_type: 'display_data', ...fig.bundle() },
      ],
    });
  }
  const nb = { nbformat: 4, nbformat_minor: 5, metadata: { gdnlab: { provenance: { backend: 'host', device: 'test', revision: `r${seed}` } } }, cells };
  fs.writeFileSync(file, JSON.stringify(nb));
}

describe('gdnlab CLI output through a pipe', function () {
  this.timeout(240_000);

  it('check conv --quick --json: all of it (> 131,072 bytes) reaches a slow reader and parses', async () => {
    const r = await pipeThroughPython(['check', 'conv', '--quick', '--json']);
    assert.equal(r.status, 0, r.stderr);
    assert.ok(r.bytes > 131_072, `${r.bytes} bytes`);
    for (const k of ['backend', 'device', 'equivalence', 'revision']) assert.ok((r.keys as string[]).includes(k), `no '${k}' in ${String(r.keys)}`);
  });

  it('notebooks compare --json of two notebooks: more than 1 MB through a pipe, parsed whole', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gdnlab-pipe-'));
    try {
      const a = path.join(dir, 'a.ipynb');
      const b = path.join(dir, 'b.ipynb');
      bigNotebook(a, 12, 1);
      bigNotebook(b, 12, 2);
      const r = await pipeThroughPython(['notebooks', 'compare', a, b, '--json']);
      assert.equal(r.status, 0, r.stderr);
      assert.ok(r.bytes > 1_000_000, `${r.bytes} bytes: the test needs more than 1 MB`);
      assert.deepEqual(r.keys, ['a', 'b', 'label', 'pairs']);
      assert.ok(fs.readFileSync(a, 'utf8').includes(PLOTLY_MIME));
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
