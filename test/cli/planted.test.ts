// No result is declared (docs/TESTING.md): `gdnlab check conv` and `check postconv` must exit
// non-zero, naming the output, when a defect every arm shares is planted (test/cli/plant.ts); and exit
// 0 with nothing planted (test/cli/cli.test.ts). A wrong float64 reference is planted in-process
// (test/check/checks.test.ts): through the CLI it would run the same verdict and exit code again.

import { strict as assert } from 'assert';
import { spawnSync } from 'child_process';
import * as path from 'path';
import { projectRoot } from '../../lib/paths';

function plantedCheck(op: 'conv' | 'postconv', plant: string) {
  const preload = path.join(projectRoot(), 'dist', 'test', 'cli', 'plant.js');
  const r = spawnSync(process.execPath, [path.join(projectRoot(), 'bin', 'gdnlab.js'), 'check', op, '--quick'], {
    encoding: 'utf8', timeout: 170000,
    env: { ...process.env, GDN_BACKEND: 'host', GDNLAB_PLANT: plant, NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --require ${preload}`.trim() },
  });
  return { status: r.status, out: r.stdout, err: r.stderr };
}

describe('gdnlab check with a planted shared defect exits non-zero', function () {
  this.timeout(180000);

  it('check postconv: every arm returns a broken beta (arms agree; only the float64 comparison sees it)', () => {
    const r = plantedCheck('postconv', 'postconv-beta');
    assert.equal(r.status, 1, `exit ${r.status}\n${r.out.slice(-2000)}\n${r.err.slice(-2000)}`);
    assert.match(r.out, /^FAIL .*tree vs float64 reference — beta \d+ elements \(max \|error\| 9\.\d+e-1/m);
    assert.doesNotMatch(r.out, /tree vs float64 reference — [qkvg] /, 'only beta was planted');
  });

  it('check conv: every arm truncates its bf16 store (inside the bf16 tolerance; the rounding check sees it)', () => {
    const r = plantedCheck('conv', 'conv-truncate');
    assert.equal(r.status, 1, r.out.slice(-2000));
    assert.match(r.out, /^FAIL .*->bf16 .*ROUNDING: \d+ bf16 elements not rounded to nearest even/m);
    assert.doesNotMatch(r.out, /^FAIL .*->f32 /m, 'f32 outputs are not affected');
    assert.doesNotMatch(r.out, /OUT OF TOLERANCE/, 'truncation stays inside the bf16 tolerance: the tolerance alone would pass it');
  });

  it('an unknown planted defect is refused (the preload is really loaded)', () => {
    const r = plantedCheck('conv', 'no-such-plant');
    assert.notEqual(r.status, 0);
    assert.match(r.err, /GDNLAB_PLANT: unknown planted defect 'no-such-plant'/);
  });
});
