// `gdnlab check fused` and `gdnlab bench fused`, run as a user runs them (host backend).

import { strict as assert } from 'assert';
import { spawnSync } from 'child_process';
import * as path from 'path';
import { projectRoot } from '../../lib/paths';

function gdnlab(args: string[]) {
  const r = spawnSync(process.execPath, [path.join(projectRoot(), 'bin', 'gdnlab.js'), ...args], {
    encoding: 'utf8', timeout: 170000, env: { ...process.env, GDN_BACKEND: 'host' },
  });
  return { status: r.status, out: r.stdout, err: r.stderr };
}

describe('gdnlab check fused / bench fused', function () {
  this.timeout(180000);

  it('check fused --quick --mutants: every case bit-identical to the chain, both mutants caught', () => {
    const r = gdnlab(['check', 'fused', '--quick', '--mutants', '--json']);
    assert.equal(r.status, 0, r.err);
    const report = JSON.parse(r.out);
    assert.equal(report.equivalence.failures.length, 0);
    assert.ok(report.equivalence.results.length >= 20);
    assert.deepEqual(report.mutants.map((m: { mutant: string }) => m.mutant), ['seq-fold', 'no-round']);
    assert.ok(report.mutants.every((m: { caught: boolean }) => m.caught));
  });

  it('bench fused --quick validates the bits before it times, and reports fused beside the chain and the copy', () => {
    const r = gdnlab(['bench', 'fused', '--backend', 'host', '--quick', '--json']);
    assert.equal(r.status, 0, r.err);
    const report = JSON.parse(r.out);
    assert.equal(report.op, 'fused');
    const shapes = [...new Set(report.rows.map((x: { shape: string }) => x.shape))];
    assert.equal(shapes.length, 6);
    for (const shape of shapes) {
      const rows = report.rows.filter((x: { shape: string }) => x.shape === shape);
      assert.deepEqual(rows.map((x: { arm: string }) => x.arm), ['fused head-tile', 'conv vec', 'postconv token-tile', 'chain vec → token-tile']);
      assert.ok(rows.every((x: { correct: boolean }) => x.correct), `${shape}: a timed arm differs from the reference chain`);
      assert.ok(rows.every((x: { xCopy: number }) => x.xCopy > 0));
      assert.match(rows[3].note, /fused \/ chain = \d+\.\d{3}/);
    }
    assert.equal(report.copies.length, 6);
  });
});
