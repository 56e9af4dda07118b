// The strict command line: every command refuses an unknown flag, a flag without its value, a value given to a
// switch and a value outside a flag's choices (exit 2, naming the flag and listing the command's flags, nothing
// run), and prints its own usage for --help. Every command's flag table is walked, so a flag added to a command
// is exercised here without a change.

import { strict as assert } from 'assert';
import { spawnSync } from 'child_process';
import * as path from 'path';
import { projectRoot } from '../../lib/paths';
import { COMMANDS } from '../../lib/cli/registry';
import { inProcess } from './in-process';
import { Command, Flag, commandName, flagSynopsis, parseCommandLine, UsageError } from '../../lib/cli/args';

function gdnlab(args: string[]) {
  const r = spawnSync(process.execPath, [path.join(projectRoot(), 'bin', 'gdnlab.js'), ...args], {
    encoding: 'utf8', timeout: 60000, env: { ...process.env, GDN_BACKEND: 'host' },
  });
  return { status: r.status, out: r.stdout, err: r.stderr };
}


const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** A value the flag accepts. */
const goodValue = (f: Flag) => f.choices?.[0] ?? (f.name === 'env' ? 'A=1' : '7');

describe('gdnlab: a strict command line', function () {
  this.timeout(120000);

  it('check conv --quik exits 2 naming --quik and listing check conv\'s flags, and runs nothing', () => {
    for (const args of [['check', 'conv', '--quik'], ['check', 'conv', '--backend', 'host', '--quik']]) {
      const t0 = Date.now();
      const r = gdnlab(args);
      assert.equal(r.status, 2, args.join(' '));
      assert.match(r.err, /^gdnlab: check conv: unknown flag --quik; its flags are --backend host\|cuda, --quick, --mutants, --json, --define FILE\[,FILE\]\n/);
      assert.match(r.err, /^usage: gdnlab check conv /m);
      assert.equal(r.out, '');
      assert.doesNotMatch(r.err, /\[\d+\/\d+\]/, 'the check started');
      assert.ok(Date.now() - t0 < 30000, `took ${Date.now() - t0} ms`);
    }
  });

  it('a flag without its value exits 2 naming the flag and what value it needs', () => {
    const end = gdnlab(['bench', 'conv', '--quick', '--markdown']);
    assert.equal(end.status, 2);
    assert.match(end.err, /^gdnlab: bench conv: --markdown needs a value \(FILE\)\n/);
    const before = gdnlab(['check', 'race', '--trials', '--json']);
    assert.equal(before.status, 2);
    assert.match(before.err, /^gdnlab: check race: --trials needs a value \(N\), got the flag --json\n/);
  });

  it('<command> --help prints that command\'s own usage: bench differs from check, bench conv from check conv', () => {
    const bench = gdnlab(['bench', '--help']);
    const check = gdnlab(['check', '--help']);
    assert.equal(bench.status, 0);
    assert.equal(check.status, 0);
    assert.match(bench.out, /^usage: gdnlab bench conv\|postconv\|fused\|overhead\|host\|verdict/);
    assert.match(check.out, /^usage: gdnlab check conv\|race\|postconv\|fused\|sanitize/);
    assert.notEqual(bench.out, check.out);
    const benchConv = gdnlab(['bench', 'conv', '--help']).out;
    const checkConv = gdnlab(['check', 'conv', '--help']).out;
    assert.match(benchConv, /^usage: gdnlab bench conv /);
    assert.match(benchConv, /--markdown FILE/);
    assert.match(checkConv, /^usage: gdnlab check conv /);
    assert.doesNotMatch(checkConv, /--markdown/);
  });

  for (const c of COMMANDS) {
    describe(commandName(c), () => {
      it('--help lists every flag of the command and nothing runs', async () => {
        const r = await inProcess([...c.words, '--help']);
        assert.equal(r.status, 0, r.err);
        assert.ok(r.out.startsWith(`usage: gdnlab ${commandName(c)}`), r.out.slice(0, 100));
        for (const f of c.flags) assert.match(r.out, new RegExp(`^  ${escape(flagSynopsis(f))}`, 'm'), `--${f.name} in the usage`);
      });

      it('an unknown flag exits 2, naming it and listing the command\'s flags', async () => {
        const r = await inProcess([...c.words, ...(c.operands?.min ? Array(c.operands.min).fill('x.ipynb') : []), '--no-such-flag']);
        assert.equal(r.status, 2);
        assert.match(r.err, new RegExp(`^gdnlab: ${escape(commandName(c))}: unknown flag --no-such-flag; its flags are `));
        for (const f of c.flags) assert.ok(r.err.includes(flagSynopsis(f)), `--${f.name} listed`);
      });

      for (const f of c.flags) {
        it(`${flagSynopsis(f)}: accepted in its form, refused in any other`, async () => {
          const long = `--${f.name}`;
          const operands = Array(c.operands?.min ?? 0).fill('x.ipynb');
          if (f.value === undefined || f.optional) {
            assert.equal(parseCommandLine(c, [...operands, long]).flags.get(f.name), true);
          }
          if (f.value === undefined) {
            const r = await inProcess([...c.words, ...operands, `${long}=x`]);
            assert.equal(r.status, 2);
            assert.match(r.err, new RegExp(`${escape(long)} takes no value`));
            return;
          }
          const v = goodValue(f);
          assert.equal(parseCommandLine(c, [...operands, `${long}=${v}`]).flags.get(f.name), v);
          if (!f.optional) {
            assert.equal(parseCommandLine(c, [...operands, long, v]).flags.get(f.name), v);
            const missing = await inProcess([...c.words, ...operands, long]);
            assert.equal(missing.status, 2);
            assert.match(missing.err, new RegExp(`^gdnlab: ${escape(commandName(c))}: ${escape(long)} needs a value \\(${escape(f.value)}\\)`));
          }
          if (f.choices) {
            const bad = await inProcess([...c.words, ...operands, `${long}=nowhere`]);
            assert.equal(bad.status, 2);
            assert.match(bad.err, new RegExp(`${escape(long)}: expected .* got nowhere`));
          }
          for (const alias of f.aliases ?? []) {
            const spelled = alias.length === 1 ? `-${alias}` : `--${alias}`;
            assert.equal(parseCommandLine(c, [...operands, spelled, v]).flags.get(f.name), v, spelled);
          }
          if (!f.repeatable) {
            assert.throws(() => parseCommandLine(c, [...operands, `${long}=${v}`, `${long}=${v}`]), (e: Error) => e instanceof UsageError && /given twice/.test(e.message));
          }
        });
      }

      it('a stray word is refused', async () => {
        if (c.operands?.max === Infinity) return;
        const words = Array((c.operands?.max ?? 0) + 1).fill('x.ipynb');
        const r = await inProcess([...c.words, ...words]);
        assert.equal(r.status, 2);
        assert.match(r.err, new RegExp(`^gdnlab: ${escape(commandName(c))}: unexpected argument 'x\\.ipynb'`));
      });
    });
  }

  it('a group without its command, and flags before any command, are usage errors', async () => {
    const none = await inProcess(['bench']);
    assert.equal(none.status, 2);
    assert.match(none.err, /^gdnlab: bench: expected conv, postconv, fused, overhead, host or verdict, got nothing/);
    const flagFirst = await inProcess(['--json', 'info']);
    assert.equal(flagFirst.status, 2);
    assert.match(flagFirst.err, /^gdnlab: expected a command before the flag --json/);
    const unknown = await inProcess(['frobnicate']);
    assert.equal(unknown.status, 2);
    const groups = [...new Set(COMMANDS.map((c) => c.words[0]))];
    assert.ok(groups.length >= 6 && ['info', 'arms', 'check', 'bench', 'notebooks', 'kernel'].every((g) => groups.includes(g)), groups.join(', '));
    assert.ok(unknown.err.startsWith(`gdnlab: unknown command frobnicate; the commands are ${groups.join(', ')}\n`), unknown.err);
  });

  it('every command in the registry has a unique name and each flag one spelling', () => {
    const names = COMMANDS.map(commandName);
    assert.equal(new Set(names).size, names.length);
    for (const c of COMMANDS as readonly Command[]) {
      const spellings = c.flags.flatMap((f) => [f.name, ...(f.aliases ?? [])]);
      assert.equal(new Set(spellings).size, spellings.length, `${commandName(c)}: a flag spelled twice`);
      assert.ok(!spellings.includes('help') && !spellings.includes('h'), `${commandName(c)}: --help is everyone's`);
    }
  });
});
