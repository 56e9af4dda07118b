// A benchmark stopped part-way keeps what it measured: bench conv/postconv/fused hand the report so far to
// onProgress after every shape (and before each external baseline), marked incomplete, and the CLI writes it to
// the --json / --markdown files; the finished report carries no mark (docs/TESTING.md, "Planted defects").

import { strict as assert } from 'assert';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { Backend } from '../../lib/backend';
import { BenchReport, benchConv, benchFused, benchMarkdown } from '../../lib/bench/bench';
import { parseCommandLine } from '../../lib/cli/args';
import { benchConvCommand, progressWriter } from '../../lib/cli/bench';

describe('bench: partial reports while the run goes on', function () {
  this.timeout(120000);
  let backend: Backend;
  before(() => {
    backend = Backend.open('host');
  });
  after(() => backend.close());
  const timing = { warmupMs: 20, minSamples: 3, minTimeMs: 1, maxTimeMs: 150 };

  it('bench conv: one partial report per shape, each with every row measured so far, and a finished report without the mark', async () => {
    const partials: BenchReport[] = [];
    const report = await benchConv({ backend, quick: true, torch: false, arms: ['vec/exact'], shapes: ['4B'], timing, onProgress: (p) => partials.push(p) });
    const shapes = [...new Set(report.rows.map((r) => r.shape))];
    assert.equal(shapes.length, 3, `shapes: ${shapes.join(', ')}`);
    assert.equal(partials.length, shapes.length);
    partials.forEach((p, i) => {
      assert.match(p.incomplete ?? '', new RegExp(`shape ${i + 1} of 3 \\(${shapes[i].replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\)`));
      assert.deepEqual([...new Set(p.rows.map((r) => r.shape))], shapes.slice(0, i + 1), `partial ${i + 1} holds the shapes done so far`);
      assert.equal(p.copies.length, i + 1);
      for (const r of p.rows) assert.equal(r.mismatches, 0, `${r.shape} ${r.arm}: bits checked before timing`);
    });
    assert.equal(report.incomplete, undefined, 'the finished report is not marked');
    assert.match(benchMarkdown(partials[0], 'gdnlab bench conv'), /^\*\*Incomplete\*\*: written after shape 1 of 3/m);
    assert.doesNotMatch(benchMarkdown(report, 'gdnlab bench conv'), /Incomplete/);
  });

  it('bench fused: the partial report of a shape includes its chain row', async () => {
    const partials: BenchReport[] = [];
    await benchFused({ backend, quick: true, torch: false, shapes: ['4B (quick: Hk=1, Hv=2) T=64'], timing, onProgress: (p) => partials.push(p) });
    assert.ok(partials.length >= 1);
    const first = partials[0];
    const shape = first.rows[0].shape;
    assert.ok(first.rows.some((r) => r.shape === shape && r.arm.startsWith('chain ')), `rows: ${first.rows.map((r) => r.arm).join(', ')}`);
  });

  it('the CLI writes each partial report to --json=FILE and --markdown FILE, and nothing without them', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gdnlab-progress-'));
    try {
      const json = path.join(dir, 'out', 'bench.json');
      const md = path.join(dir, 'bench.md');
      const write = progressWriter(parseCommandLine(benchConvCommand, [`--json=${json}`, '--markdown', md]), 'gdnlab bench conv');
      assert.ok(write);
      const partial: BenchReport = { op: 'conv', revision: 'r', provenance: null, torch: null, rows: [], copies: [], torchRows: [], baselines: [], stops: [], incomplete: 'written after shape 1 of 2 (x), before the run\'s end' };
      write!(partial);
      assert.equal(JSON.parse(fs.readFileSync(json, 'utf8')).incomplete, partial.incomplete);
      assert.match(fs.readFileSync(md, 'utf8'), /\*\*Incomplete\*\*: written after shape 1 of 2/);
      assert.equal(progressWriter(parseCommandLine(benchConvCommand, []), 'gdnlab bench conv'), undefined, 'stdout only: no partial writes');
      assert.equal(progressWriter(parseCommandLine(benchConvCommand, ['--json']), 'gdnlab bench conv'), undefined, '--json to stdout: no partial writes');
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
