// `gdnlab check fused` and `gdnlab bench fused`, run as a user runs them (host backend).

import { strict as assert } from 'assert';
import { spawnSync } from 'child_process';
import * as path from 'path';
import { projectRoot } from '../../lib/paths';
import { checkedFusedArms } from '../../lib/check/fused';
import { fusedChainConv, fusedChainPostconv } from '../../lib/bench/bench';

function gdnlab(args: string[]) {
  const r = spawnSync(process.execPath, [path.join(projectRoot(), 'bin', 'gdnlab.js'), ...args], {
    encoding: 'utf8', timeout: 170000, env: { ...process.env, GDN_BACKEND: 'host' },
  });
  return { status: r.status, out: r.stdout, err: r.stderr };
}

describe('gdnlab check fused / bench fused', function () {
  this.timeout(180000);

  it('check fused --quick --mutants: every case of every arm bit-identical to the chain, both mutants caught in every arm', () => {
    const r = gdnlab(['check', 'fused', '--quick', '--mutants', '--json']);
    assert.equal(r.status, 0, r.err);
    const report = JSON.parse(r.out);
    const arms: string[] = report.equivalence.arms;
    assert.deepEqual(arms, checkedFusedArms());
    assert.equal(report.equivalence.failures.length, 0);
    const perArm = (a: string) => report.equivalence.results.filter((x: { arm: string }) => x.arm === a).length;
    for (const a of arms) assert.ok(perArm(a) >= 20, `${a}: ${perArm(a)} cases`);
    assert.equal(report.equivalence.results.length, arms.length * perArm(arms[0]));
    assert.deepEqual(report.mutants.map((m: { arm: string; mutant: string }) => `${m.arm} ${m.mutant}`), arms.flatMap((a) => [`${a} seq-fold`, `${a} no-round`]));
    assert.ok(report.mutants.every((m: { caught: boolean }) => m.caught));
  });

  it('check fused --quick names the arm on every line and counts every arm in the summary', () => {
    const r = gdnlab(['check', 'fused', '--quick']);
    assert.equal(r.status, 0, r.err);
    const arms = checkedFusedArms();
    const lines = r.out.trim().split('\n');
    const caseLines = lines.filter((l) => /^(ok  |FAIL) /.test(l));
    for (const a of arms) assert.ok(caseLines.some((l) => l.startsWith(`ok   ${a} `)), `no line for ${a}`);
    const n = caseLines.length / arms.length;
    assert.ok(Number.isInteger(n) && n >= 20, `${caseLines.length} lines for ${arms.length} arms`);
    assert.match(lines[lines.length - 1], new RegExp(`^equivalence: ${n} cases × ${arms.length} arms? = ${caseLines.length} comparisons, 0 mismatching \\(${arms.map((a) => `${a} 0`).join(', ')}\\)`));
  });

  it('bench fused --quick validates the bits before it times, and reports fused beside the chain and the copy', () => {
    const r = gdnlab(['bench', 'fused', '--backend', 'host', '--quick', '--json']);
    assert.equal(r.status, 0, r.err);
    const report = JSON.parse(r.out);
    assert.equal(report.op, 'fused');
    const fusedArms = checkedFusedArms();
    const shapes = [...new Set(report.rows.map((x: { shape: string }) => x.shape))];
    assert.equal(shapes.length, 6);
    for (const shape of shapes) {
      const rows = report.rows.filter((x: { shape: string }) => x.shape === shape);
      const conv = fusedChainConv().arm, post = fusedChainPostconv();
      assert.equal(conv, 'stream-mufu');
      assert.equal(post, 'vec-tile');
      assert.deepEqual(rows.map((x: { arm: string }) => x.arm), [...fusedArms.map((a) => `fused ${a}`), `conv ${conv}`, `postconv ${post}`, `chain ${conv} → ${post}`]);
      assert.ok(rows.every((x: { correct: boolean }) => x.correct), `${shape}: a timed arm differs from the reference chain`);
      assert.ok(rows.every((x: { xCopy: number }) => x.xCopy > 0));
      const chain = rows[rows.length - 1];
      for (const a of fusedArms) assert.match(chain.note, new RegExp(`fused ${a} / chain = \\d+\\.\\d{3}`));
    }
    assert.equal(report.copies.length, 6);
  });
});
