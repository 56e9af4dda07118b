// `gdnlab bench host --quick`, run as a user runs it: every correct arm of conv, post-conv and the fused op
// is checked against its reference before it is timed, and timed beside a memcpy of the same bytes.

import { strict as assert } from 'assert';
import { spawnSync } from 'child_process';
import * as path from 'path';
import { projectRoot } from '../../lib/paths';
import { arms } from '../../lib/arms/table';

describe('gdnlab bench host', function () {
  this.timeout(240000);

  it('--quick --json: conv, post-conv and fused rows for every correct arm, each bit-identical to its reference, with a memcpy per op', () => {
    const r = spawnSync(process.execPath, [path.join(projectRoot(), 'bin', 'gdnlab.js'), 'bench', 'host', '--quick', '--json'], {
      encoding: 'utf8', timeout: 230000, env: { ...process.env, GDN_BACKEND: 'host' },
    });
    assert.equal(r.status, 0, r.stderr);
    const report = JSON.parse(r.stdout);
    assert.equal(report.bench, 'host');
    assert.deepEqual(report.copies.map((c: { op: string }) => c.op), ['conv', 'postconv', 'fused']);
    const rowsOf = (op: string) => report.rows.filter((x: { op: string }) => x.op === op);
    const correct = (op: 'conv' | 'postconv' | 'fused') => arms(op).filter((a) => !a.mutant);
    assert.deepEqual(rowsOf('conv').map((x: { arm: string; mapping: string }) => `${x.arm}/${x.mapping}`),
      correct('conv').flatMap((a) => a.mappings.filter((m) => m !== 'exact-racy').map((m) => `${a.name}/${m}`)));
    assert.deepEqual(rowsOf('postconv').map((x: { arm: string }) => x.arm), correct('postconv').map((a) => a.name));
    assert.deepEqual(rowsOf('fused').map((x: { arm: string }) => x.arm), correct('fused').map((a) => a.name));
    for (const x of report.rows) {
      assert.equal(x.mismatches, 0, `${x.op} ${x.arm}: ${x.mismatches} of ${x.elements} elements differ from the reference`);
      assert.ok(x.elements > 0 && x.medianMs > 0 && x.memcpyMs > 0 && x.xMemcpy > 0, `${x.op} ${x.arm}: ${JSON.stringify(x)}`);
    }
  });
});
