// The gdnlab command line, run as a user runs it: exit statuses and what it prints.

import { strict as assert } from 'assert';
import { spawnSync } from 'child_process';
import * as path from 'path';
import { projectRoot } from '../../lib/paths';

function gdnlab(args: string[], env: Record<string, string> = {}) {
  const r = spawnSync(process.execPath, [path.join(projectRoot(), 'bin', 'gdnlab.js'), ...args], {
    encoding: 'utf8', timeout: 170000, env: { ...process.env, GDN_BACKEND: 'host', ...env },
  });
  return { status: r.status, out: r.stdout, err: r.stderr };
}

describe('gdnlab CLI', function () {
  this.timeout(180000);

  it('info names the backend and the device; --json is machine-readable', () => {
    const text = gdnlab(['info']);
    assert.equal(text.status, 0, text.err);
    assert.match(text.out, /^backend: host \(GDN_BACKEND=host\)$/m);
    const json = JSON.parse(gdnlab(['info', '--json']).out);
    assert.equal(json.backend, 'host');
    assert.equal(json.device.backend, 'host');
    assert.ok(json.library.abi >= 1);
  });

  it('--help or -h after any command prints that command\'s usage and runs nothing', () => {
    for (const [args, usage] of [[['check', 'conv', '--help'], 'check conv'], [['bench', 'overhead', '-h'], 'bench overhead'], [['check', 'conv', '--quick', '--mutants', '-h'], 'check conv'], [['--help'], '<command>']] as const) {
      const t0 = Date.now();
      const r = gdnlab([...args]);
      assert.equal(r.status, 0, `${args.join(' ')}: ${r.err}`);
      assert.ok(r.out.startsWith(`usage: gdnlab ${usage}`), `${args.join(' ')}: ${r.out.slice(0, 80)}`);
      assert.doesNotMatch(r.out + r.err, /equivalence:|overhead: /, `${args.join(' ')} started the command`);
      assert.ok(Date.now() - t0 < 20000, `${args.join(' ')} took ${Date.now() - t0} ms`);
    }
  });

  it('a stray argument is refused before anything runs, and a file after --json is pointed to --json=FILE', () => {
    const t0 = Date.now();
    const r = gdnlab(['bench', 'host', '--quick', '--json', 'report.json']);
    assert.equal(r.status, 2, r.err);
    assert.match(r.err, /^gdnlab: bench host: unexpected argument 'report\.json' \(to write the JSON to a file: --json=report\.json\)/);
    assert.equal(r.out, '');
    assert.ok(Date.now() - t0 < 20000, `took ${Date.now() - t0} ms: the benchmark started`);
    const info = gdnlab(['info', 'extra']);
    assert.equal(info.status, 2);
    assert.match(info.err, /^gdnlab: info: unexpected argument 'extra'\n/);
  });

  it('check conv --quick --mutants passes every comparison and catches every mutant', () => {
    const r = gdnlab(['check', 'conv', '--quick', '--mutants', '--json']);
    assert.equal(r.status, 0, r.err);
    const report = JSON.parse(r.out);
    assert.equal(report.equivalence.failures.length, 0);
    assert.ok(report.equivalence.results.length >= 48 * 10);
    assert.ok(report.mutants.length >= 5 && report.mutants.every((m: { caught: boolean }) => m.caught));
  });

  it('check race on the host: exact and sequence never corrupted, exact-racy corrupted', () => {
    const r = gdnlab(['check', 'race', '--trials', '4', '--channels', '256', '--json']);
    assert.equal(r.status, 0, r.err);
    const results = JSON.parse(r.out).results as { mapping: string; corruptedRuns: number; trials: number }[];
    for (const x of results) {
      if (x.mapping === 'exact-racy') assert.ok(x.corruptedRuns >= 3, 'reverse and shuffles corrupt the racy mapping');
      else assert.equal(x.corruptedRuns, 0, `${x.mapping} corrupted`);
    }
  });

  it('usage errors exit 2 and say what was expected', () => {
    const r = gdnlab(['check', 'everything']);
    assert.equal(r.status, 2);
    assert.match(r.err, /check: expected conv, race, postconv, fused or sanitize, got everything/);
    const b = gdnlab(['info', '--backend', 'tpu']);
    assert.equal(b.status, 2);
    assert.match(b.err, /--backend: expected host or cuda, got tpu/);
  });

  it('asking for CUDA without a GPU is a clear error, not a crash', function () {
    if (gdnlab(['info', '--json']).out.includes('"cuda"')) this.skip();
    const r = gdnlab(['info', '--backend', 'cuda']);
    assert.equal(r.status, 1);
    assert.match(r.err, /opening the cuda backend: /);
  });
});
