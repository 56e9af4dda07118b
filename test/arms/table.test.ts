// The arm registry as the TypeScript layer sees it (lib/arms/table.ts over gdn_arm_count /
// gdn_arm_info_get): the built-in ids keep their names, each family has one reference, every contract
// is what a launch reports, the lists the package exports are the library's, and `gdnlab arms`
// prints the whole table (its JSON parses whole: stdout is drained before the process exits).

import { strict as assert } from 'assert';
import { spawnSync } from 'child_process';
import * as path from 'path';
import * as gdn from '../../lib/index';
import { arms, armNames, armByName, armId, referenceArm, convMutantNames, ARM_OPS } from '../../lib/arms/table';
import { CONV_MUTANTS, convArms, launchContract, updateArms } from '../../lib/ops/conv';
import { postconvArms } from '../../lib/ops/postconv';
import { allArmMappings } from '../../lib/check/conv';
import { projectRoot } from '../../lib/paths';

describe('arm registry (lib/arms/table.ts)', function () {
  this.timeout(60000);

  it('the built-in ids name the arms they always named', () => {
    assert.deepEqual(armNames('conv').slice(0, 6), ['scalar', 'tiled', 'reg', 'reg-k4', 'reg-k4x2', 'vec']);
    assert.deepEqual(armNames('conv-update').slice(0, 2), ['reference', 'reg']);
    assert.deepEqual(armNames('postconv').slice(0, 3), ['tree', 'token-tile', 'seq4']);
    assert.equal(armId('conv', 'vec'), 5);
  });

  it('one reference per family; seq4 is flagged as the planted mutant; fallback targets are flagged', () => {
    assert.equal(referenceArm('conv').name, 'scalar');
    assert.equal(referenceArm('conv-update').name, 'reference');
    assert.equal(referenceArm('postconv').name, 'tree');
    // The fused op's reference is not one of its arms but the conv reference followed by the post-conv
    // reference (docs/SPEC.md §7), so its family flags none; every other family has exactly one.
    for (const op of ARM_OPS) assert.equal(arms(op).filter((a) => a.reference).length, op === 'fused' ? 0 : 1, op);
    assert.deepEqual(arms('postconv').filter((a) => a.mutant).map((a) => a.name), ['seq4']);
    for (const op of ARM_OPS) {
      for (const a of arms(op)) {
        assert.ok(a.description.length > 10, `${a.name}: a description`);
        if (a.fallback) {
          assert.ok(armByName(op, a.fallback).fallbackTarget, `${a.name} falls back to a flagged ${a.fallback}`);
          assert.ok(a.fallbackRule.includes(a.fallback), `${a.name}: the rule names ${a.fallback}: ${a.fallbackRule}`);
        }
      }
    }
    assert.ok(armByName('conv', 'tiled').barrier && armByName('postconv', 'token-tile').shuffle);
  });

  it('every conv arm\'s declared contract is the launch contract (C = 8192, K = 4)', () => {
    for (const a of arms('conv').filter((x) => !x.user)) {  // built-in: a test file's defined arms may linger
      const c = launchContract(a.name, a.mappings.includes('exact') ? 'exact' : 'sequence', 8192, 4, [0, 4096]);
      assert.equal(c.arm, a.name, `${a.name} runs itself at C = 8192, K = 4`);
      assert.equal(c.threadsPerBlock, a.threadsPerBlock);
      assert.equal(c.channelsPerBlock, a.perBlock);
      assert.equal(c.sharedBytes, a.sharedBytes.base + 4 * a.sharedBytes.perK);
      assert.equal(c.mapping, a.mappings.includes('exact') ? 'exact' : 'sequence');
      assert.equal(c.tokensPerProgram, a.mappings.includes('exact') ? a.tokensPerProgram : 0);
      if (c.mapping === 'exact') assert.equal(c.programList.length, Math.ceil(4096 / a.tokensPerProgram), `${a.name}: every program listed`);
    }
  });

  it('the exported lists are the library\'s, and the equivalence matrix covers every candidate arm', () => {
    assert.deepEqual(convArms(), armNames('conv'));
    assert.deepEqual(updateArms(), armNames('conv-update'));
    assert.deepEqual(postconvArms(), armNames('postconv'));
    assert.deepEqual([...gdn.CONV_ARMS], armNames('conv'));
    assert.deepEqual([...gdn.POSTCONV_ARMS], armNames('postconv'));
    assert.deepEqual([...CONV_MUTANTS], convMutantNames(), 'CONV_MUTANTS mirrors gdn_conv_mutant');
    const covered = new Set(allArmMappings().map((m) => m.arm));
    // Built-in arms; an arm another test file defined and then undefined leaves the check lists but keeps its id.
    for (const a of arms('conv').filter((x) => !x.reference && !x.user)) assert.ok(covered.has(a.name), `${a.name} is in the equivalence matrix`);
  });

  it('an unknown arm is refused with every arm named', () => {
    assert.throws(() => armId('conv', 'fast'), /arm: expected one of 'scalar', 'tiled', 'reg'/);
    assert.throws(() => arms('matmul' as never), /op: expected one of 'conv', 'conv-update', 'postconv'/);
  });

  it('gdnlab arms lists every arm with its contract; --json parses whole', () => {
    const run = (args: string[]) => spawnSync(process.execPath, [path.join(projectRoot(), 'bin', 'gdnlab.js'), 'arms', ...args], {
      encoding: 'utf8', timeout: 50000, env: { ...process.env, GDN_BACKEND: 'host' },
    });
    const text = run([]);
    assert.equal(text.status, 0, text.stderr);
    // The CLI is a fresh process: it lists the built-in arms (arms defined in this process are not its).
    const builtIn = (op: (typeof ARM_OPS)[number]) => arms(op).filter((a) => !a.user);
    for (const op of ARM_OPS) for (const a of builtIn(op)) assert.match(text.stdout, new RegExp(`\\b${a.id} ${a.name.replace(/[.-]/g, '\\$&')}\\s`));
    assert.match(text.stdout, /K != 4: runs reg/);
    const json = run(['--json']);
    assert.equal(json.status, 0, json.stderr);
    const parsed = JSON.parse(json.stdout) as { arms: Record<string, { name: string }[]> };
    for (const op of ARM_OPS) assert.deepEqual(parsed.arms[op].map((a) => a.name), builtIn(op).map((a) => a.name));
  });
});
