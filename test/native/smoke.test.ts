// The native test programs (cuda/tests/*_smoke.cpp, exec_test.cpp, vec_host_test.cpp) test libgdn through its C ABI or its headers alone, without
// koffi: every arm vs scalar under several block orders, mutants, the race, error paths, post-conv
// arms with guard bytes and poison. Built by CMake next to the host library; run here so CI runs them.

import { strict as assert } from 'assert';
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import { projectRoot } from '../../lib/native/gdn';

const buildDir = path.join(projectRoot(), 'build', 'host');

describe('native smoke programs (C ABI, host backend)', function () {
  this.timeout(120000);
  for (const [name, args] of [['gdn_native_smoke', ['--no-timing']], ['gdn_postconv_smoke', []], ['gdn_exec_test', []], ['gdn_exec_test_ucontext', []], ['gdn_vec_host_test', []]] as const) {
    it(`${name} passes`, () => {
      const exe = path.join(buildDir, name);
      assert.ok(fs.existsSync(exe), `${exe} is missing: build with scripts/build.sh`);
      const r = spawnSync(exe, [...args], { encoding: 'utf8', timeout: 110000 });
      const tail = `${r.stdout}\n${r.stderr}`.trim().split('\n').slice(-15).join('\n');
      assert.equal(r.status, 0, `${name} exited ${r.status}:\n${tail}`);
      assert.match(r.stdout, name === 'gdn_postconv_smoke' ? /all checks passed/ : /\b\d+ checks, 0 failures/);
    });
  }
});
