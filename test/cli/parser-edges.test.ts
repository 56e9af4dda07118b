// The command-line grammar's edges, in process (no child, no library): lib/cli/args.ts's parser, synopsis and
// usage, lib/cli/index.ts's dispatch and lib/cli/common.ts's shared helpers, on commands made up for the test so
// every branch is reached whatever flags the real commands have. Written against the survivors of a StrykerJS run
// (docs/TESTING.md, "Mutation testing").

import { strict as assert } from 'assert';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { Command, Parsed, UsageError, commandUsage, flagSynopsis, orList, parseCommandLine, synopsis, wantsHelp } from '../../lib/cli/args';
import { exitAfterDrain, globalUsage } from '../../lib/cli';
import { COMMANDS } from '../../lib/cli/registry';
import { inProcess } from './in-process';
import { activeBackend } from '../../lib/backend';
import { defineArms, pickBackend, progressLine, writeOut } from '../../lib/cli/common';

const noop = async () => 0;

/** A command exercising every kind of flag: a switch, a valued flag with choices, an optional value, a repeatable one, one-letter aliases. */
const TOY: Command = {
  words: ['toy', 'run'],
  summary: 'a command made up for the test',
  operands: { usage: 'FILE', min: 1, max: 2 },
  flags: [
    { name: 'quick', help: 'a switch' },
    { name: 'backend', value: 'host|cuda', choices: ['host', 'cuda'], help: 'choices shown as the value' },
    { name: 'mode', value: 'M', choices: ['a', 'b'], aliases: ['m'], help: 'choices not shown as the value' },
    { name: 'out', value: 'FILE', optional: true, aliases: ['o', 'output-file'], help: 'an optional value' },
    { name: 'arms', value: 'LIST', repeatable: true, help: 'repeatable' },
    { name: 'json', value: 'FILE', optional: true, help: 'json' },
  ],
  details: ['a detail line', 'another'],
  run: noop,
};
const BARE: Command = { words: ['bare'], summary: 'no flags, no operands', flags: [], run: noop };

const usageError = (re: RegExp) => (e: unknown) => e instanceof UsageError && re.test(e.message);
const parse = (argv: string[], c: Command = TOY) => parseCommandLine(c, argv);


/** Runs `body` with extra commands in the registry (the array is a plain one at run time). */
async function withCommands<T>(extra: Command[], body: () => Promise<T>): Promise<T> {
  const list = COMMANDS as Command[];
  list.push(...extra);
  try {
    return await body();
  } finally {
    list.splice(list.length - extra.length, extra.length);
  }
}

describe('gdnlab: the command-line grammar, edge by edge', () => {
  describe('how flags and commands are written', () => {
    it('flagSynopsis: a switch, a valued flag, an optional value; one-letter names with one dash', () => {
      assert.equal(flagSynopsis({ name: 'quick', help: '' }), '--quick');
      assert.equal(flagSynopsis({ name: 'backend', value: 'host|cuda', help: '' }), '--backend host|cuda');
      assert.equal(flagSynopsis({ name: 'json', value: 'FILE', optional: true, help: '' }), '--json[=FILE]');
      assert.equal(flagSynopsis({ name: 'n', value: 'N', help: '' }), '-n N');
      assert.equal(flagSynopsis({ name: 'v', help: '' }), '-v');
    });

    it('orList: none, one, two, three', () => {
      assert.equal(orList([]), '');
      assert.equal(orList(['a']), 'a');
      assert.equal(orList(['a', 'b']), 'a or b');
      assert.equal(orList(['a', 'b', 'c']), 'a, b or c');
    });

    it('synopsis: words, operands, each flag bracketed, a repeatable one with ...', () => {
      assert.equal(synopsis(TOY), 'toy run FILE [--quick] [--backend host|cuda] [--mode M] [--out[=FILE]] [--arms LIST]... [--json[=FILE]]');
      assert.equal(synopsis(BARE), 'bare');
    });

    it('commandUsage: the aligned flag table, aliases, choices unless the value shows them, --help, the details', () => {
      assert.equal(commandUsage(TOY), [
        'usage: gdnlab toy run FILE [--quick] [--backend host|cuda] [--mode M] [--out[=FILE]] [--arms LIST]... [--json[=FILE]]',
        '  a command made up for the test',
        '',
        'flags:',
        '  --quick                          a switch',
        '  --backend host|cuda              choices shown as the value',
        '  --mode M, -m                     choices not shown as the value (a, b)',
        '  --out[=FILE], -o, --output-file  an optional value',
        '  --arms LIST                      repeatable',
        '  --json[=FILE]                    json',
        '  --help, -h                       this usage; runs nothing',
        '',
        'a detail line',
        'another',
      ].join('\n'));
      assert.equal(commandUsage(BARE), ['usage: gdnlab bare', '  no flags, no operands', '', 'flags:', '  --help, -h  this usage; runs nothing'].join('\n'));
      assert.ok(!commandUsage({ ...BARE, details: [] }).endsWith('\n'));
    });

    it('wantsHelp: --help or -h anywhere, nothing else', () => {
      assert.equal(wantsHelp([]), false);
      assert.equal(wantsHelp(['--quick']), false);
      assert.equal(wantsHelp(['--quick', '-h']), true);
      assert.equal(wantsHelp(['--help', '--quick']), true);
      assert.equal(wantsHelp(['--helps', '-hh', 'help']), false);
    });
  });

  describe('parseCommandLine', () => {
    it('reads switches, values, aliases and operands; "-" is an operand and a value', () => {
      const p = parse(['a.ipynb', '--quick', '--backend', 'cuda', '-m', 'b', '-', '--arms', '-']);
      assert.deepEqual([...p.flags], [['quick', true], ['backend', 'cuda'], ['mode', 'b'], ['arms', '-']]);
      assert.deepEqual(p.operands, ['a.ipynb', '-']);
      assert.deepEqual([...p.all], [['backend', ['cuda']], ['mode', ['b']], ['arms', ['-']]]);
      assert.deepEqual(parse(['x', '--mode=a']).flags.get('mode'), 'a');
      assert.deepEqual(parse(['x', '--output-file=o.json']).flags.get('out'), 'o.json');
      assert.deepEqual(parse(['x', '--out']).flags.get('out'), true);
      assert.deepEqual(parse(['x', '--out']).all.has('out'), false);
      // An optional value is only taken with '=': the next word stays an operand.
      assert.deepEqual(parse(['x', '--out', 'y']).operands, ['x', 'y']);
      // A value with '=' inside it.
      assert.equal(parse(['x', '--arms=a=b']).flags.get('arms'), 'a=b');
    });

    it('a repeatable switch is just set; a repeatable optional value keeps the values given', () => {
      const c: Command = { ...BARE, flags: [{ name: 'verbose', repeatable: true, help: '' }, { name: 'log', value: 'F', optional: true, repeatable: true, help: '' }] };
      const p = parseCommandLine(c, ['--verbose', '--verbose', '--log', '--log=a']);
      assert.equal(p.flags.get('verbose'), true);
      assert.equal(p.all.has('verbose'), false);
      assert.equal(p.flags.get('log'), 'a');
      assert.equal(parseCommandLine(c, ['--log=a', '--log']).flags.get('log'), true);
    });

    it('a repeatable flag joins its values with "," and keeps each; a switch given with = is refused', () => {
      const p = parse(['x', '--arms', 'a', '--arms=b,c', '--arms', 'd']);
      assert.equal(p.flags.get('arms'), 'a,b,c,d');
      assert.deepEqual(p.all.get('arms'), ['a', 'b,c', 'd']);
      assert.throws(() => parse(['x', '--quick=1']), usageError(/^toy run: --quick takes no value \(got '--quick=1'\)$/));
    });

    it('a flag given twice is refused, also through an alias', () => {
      assert.throws(() => parse(['x', '--quick', '--quick']), usageError(/^toy run: --quick given twice$/));
      assert.throws(() => parse(['x', '--mode', 'a', '-m', 'a']), usageError(/^toy run: --mode given twice$/));
      assert.throws(() => parse(['x', '--out', '--output-file=f']), usageError(/^toy run: --out given twice$/));
    });

    it('an unknown flag is named as written (long without its value, short as typed), with the flags listed', () => {
      const list = '--quick, --backend host|cuda, --mode M, --out[=FILE], --arms LIST, --json[=FILE]';
      assert.throws(() => parse(['x', '--nosuch=3']), usageError(new RegExp(`^toy run: unknown flag --nosuch; its flags are ${list.replace(/[[\]|]/g, '\\$&')}$`)));
      assert.throws(() => parse(['x', '-z']), usageError(/^toy run: unknown flag -z;/));
      assert.throws(() => parse(['x', '-m=a']), usageError(/^toy run: unknown flag -m=a;/));
      assert.throws(() => parse(['--x'], BARE), usageError(/^bare: unknown flag --x; its flags are none$/));
      assert.throws(() => parse(['x', '--nosuch']), (e: unknown) => e instanceof UsageError && e.command === TOY);
    });

    it('a missing or empty value is refused, naming the flag as typed', () => {
      assert.throws(() => parse(['x', '--mode']), usageError(/^toy run: --mode needs a value \(M\)$/));
      assert.throws(() => parse(['x', '-m']), usageError(/^toy run: -m needs a value \(M\)$/));
      assert.throws(() => parse(['x', '-m', '--quick']), usageError(/^toy run: -m needs a value \(M\), got the flag --quick$/));
      assert.throws(() => parse(['x', '--mode=']), usageError(/^toy run: --mode needs a value \(M\), got an empty one$/));
      assert.throws(() => parse(['x', '--out=']), usageError(/needs a value \(FILE\), got an empty one/));
    });

    it('a value outside the choices is refused, whichever way it is given; an optional flag without a value skips the check', () => {
      assert.throws(() => parse(['x', '--mode', 'c']), usageError(/^--mode: expected a or b, got c$/));
      assert.throws(() => parse(['x', '-m=c']), UsageError);
      assert.throws(() => parse(['x', '--mode=c']), usageError(/^--mode: expected a or b, got c$/));
      const withChoice: Command = { ...BARE, flags: [{ name: 'fmt', value: 'F', optional: true, choices: ['md'], help: '' }] };
      assert.equal(parseCommandLine(withChoice, ['--fmt']).flags.get('fmt'), true);
      assert.equal(parseCommandLine(withChoice, ['--fmt=md']).flags.get('fmt'), 'md');
      assert.throws(() => parseCommandLine(withChoice, ['--fmt=x']), usageError(/^--fmt: expected md, got x$/));
    });

    it('operands: too few names what was expected and what came; too many names the first extra', () => {
      assert.throws(() => parse([]), usageError(/^toy run: expected FILE, got nothing$/));
      assert.throws(() => parse(['a', 'b', 'c', 'd']), usageError(/^toy run: unexpected argument 'c'$/));
      const two: Command = { ...BARE, operands: { usage: 'A B', min: 2, max: 2 } };
      assert.throws(() => parseCommandLine(two, ['a']), usageError(/^bare: expected A B, got a$/));
      assert.deepEqual(parseCommandLine(two, ['a', 'b']).operands, ['a', 'b']);
      assert.throws(() => parseCommandLine(BARE, ['word']), usageError(/^bare: unexpected argument 'word'$/));
      assert.deepEqual(parseCommandLine(BARE, []).operands, []);
    });

    it('a file after an optional-value flag is pointed to --flag=FILE (JSON for --json, output for others), only when the flag is just before it', () => {
      assert.throws(() => parse(['a', 'b', '--json', 'r.json']), usageError(/^toy run: unexpected argument 'r\.json' \(to write the JSON to a file: --json=r\.json\)$/));
      assert.throws(() => parse(['a', 'b', '--out', 'r.txt']), usageError(/^toy run: unexpected argument 'r\.txt' \(to write the output to a file: --out=r\.txt\)$/));
      // The word before the extra one is a valued flag, a switch, or an operand: no hint.
      assert.throws(() => parse(['a', '--mode', 'a', 'b', 'c']), usageError(/^toy run: unexpected argument 'c'$/));
      assert.throws(() => parse(['a', 'b', '--quick', 'c']), usageError(/^toy run: unexpected argument 'c'$/));
      // The extra word is the first argument: nothing before it.
      assert.throws(() => parseCommandLine(BARE, ['first']), usageError(/^bare: unexpected argument 'first'$/));
      // The hint looks at the word just before the extra one, not after it.
      assert.throws(() => parse(['a', 'b', 'c', '--json']), usageError(/^toy run: unexpected argument 'c'$/));
    });
  });

  describe('main: finding the command', () => {
    const group: Command[] = [
      { ...BARE, words: ['zz', 'one'], summary: 'first of the group' },
      { ...BARE, words: ['zz', 'two'], summary: 'second of the group' },
    ];

    it('no arguments: the global usage, exit 2; help / --help / -h alone: exit 0', async () => {
      const none = await inProcess([]);
      assert.equal(none.status, 2);
      assert.equal(none.out, globalUsage());
      for (const h of ['help', '--help', '-h']) {
        const r = await inProcess([h]);
        assert.equal(r.status, 0, h);
        assert.equal(r.out, globalUsage());
      }
    });

    it('the global usage lists every command aligned, and the environment', () => {
      const lines = globalUsage().split('\n');
      assert.match(lines[0], /^usage: gdnlab <command> \[flags\]/);
      assert.equal(lines.length, COMMANDS.length + 2);
      const width = Math.max(...COMMANDS.map((c) => c.words.join(' ').length)) + 2;
      COMMANDS.forEach((c, i) => assert.equal(lines[i + 1], `  ${c.words.join(' ').padEnd(width)}${c.summary}`));
      assert.match(lines[lines.length - 1], /^Environment: GDN_BACKEND/);
    });

    it('help <command...> is <command...> --help', async () => {
      await withCommands([...group, TOY], async () => {
        const r = await inProcess(['help', 'toy', 'run']);
        assert.equal(r.status, 0);
        assert.equal(r.out, commandUsage(TOY));
        const g = await inProcess(['help', 'zz']);
        assert.equal(g.status, 0);
        assert.equal(g.out, ['usage: gdnlab zz one|two [flags]   (gdnlab zz <name> --help: its flags)', '  zz one', '      first of the group', '  zz two', '      second of the group'].join('\n'));
      });
    });

    it('a group: its command by the second word; help only when no command word is given; else an error with the group usage', async () => {
      await withCommands(group, async () => {
        const ran: string[] = [];
        (group[1] as { run: Command['run'] }).run = async (a: Parsed) => (ran.push(a.operands.join(' ')), 5);
        try {
          assert.equal((await inProcess(['zz', 'two'])).status, 5);
          assert.deepEqual(ran, ['']);
        } finally {
          (group[1] as { run: Command['run'] }).run = noop;
        }
        const help = await inProcess(['zz', '-h']);
        assert.equal(help.status, 0);
        assert.match(help.out, /^usage: gdnlab zz one\|two \[flags\]/);
        const helpLater = await inProcess(['zz', '--quick', '--help']);
        assert.equal(helpLater.status, 0);
        assert.match(helpLater.out, /^usage: gdnlab zz one\|two/);
        // A wrong second word is an error even with --help after it.
        const wrong = await inProcess(['zz', 'three', '--help']);
        assert.equal(wrong.status, 2);
        assert.match(wrong.err, /^gdnlab: zz: expected one or two, got three\n\nusage: gdnlab zz one\|two \[flags\]/);
        assert.doesNotMatch(wrong.err, /^Environment:/m);  // the message carries its own usage: not the global one
        assert.ok(wrong.err.endsWith('second of the group'), JSON.stringify(wrong.err.slice(-40)));  // no blank lines after it
        const nothing = await inProcess(['zz']);
        assert.equal(nothing.status, 2);
        assert.match(nothing.err, /^gdnlab: zz: expected one or two, got nothing\n/);
        const flag = await inProcess(['zz', '--quick']);
        assert.equal(flag.status, 2);
        assert.match(flag.err, /got --quick/);
      });
    });

    it('a one-word command gets every word after it; a one-word group with a two-word command is a group', async () => {
      const seen: string[][] = [];
      const one: Command = { ...BARE, words: ['yy'], operands: { usage: 'W...', min: 0, max: Infinity }, run: async (a) => (seen.push(a.operands), 0) };
      await withCommands([one], async () => {
        assert.equal((await inProcess(['yy', 'a', 'b'])).status, 0);
        assert.deepEqual(seen, [['a', 'b']]);
      });
      const lonely: Command = { ...BARE, words: ['xx', 'only'], run: async () => 4 };
      await withCommands([lonely], async () => {
        assert.equal((await inProcess(['xx', 'only'])).status, 4);
        const r = await inProcess(['xx']);
        assert.equal(r.status, 2);
        assert.match(r.err, /^gdnlab: xx: expected only, got nothing/);
      });
    });

    it('an unknown command, or a flag first: exit 2 with the global usage', async () => {
      const r = await inProcess(['nosuch']);
      assert.equal(r.status, 2);
      assert.ok(r.err.endsWith(globalUsage()), r.err);
      const f = await inProcess(['-q']);
      assert.equal(f.status, 2);
      assert.match(f.err, /^gdnlab: expected a command before the flag -q\n\nusage: gdnlab <command>/);
    });

    it('--help after a command prints its usage and does not run it; a usage error from run() prints the running command\'s usage', async () => {
      let runs = 0;
      const counted: Command = { ...TOY, words: ['ww'], run: async () => (runs++, 0) };
      const throwing: Command = { ...BARE, words: ['vv'], run: async () => { throw new UsageError('vv: a bad combination'); } };
      const elsewhere: Command = { ...BARE, words: ['uu'], run: async () => { throw new UsageError('uu: see toy', TOY); } };
      const failing: Command = { ...BARE, words: ['tt'], run: async () => { throw new Error('it broke'); } };
      await withCommands([counted, throwing, elsewhere, failing], async () => {
        const h = await inProcess(['ww', 'f', '--quick', '-h']);
        assert.equal(h.status, 0);
        assert.equal(h.out, commandUsage(counted));
        assert.equal(runs, 0);
        assert.equal((await inProcess(['ww', 'f'])).status, 0);
        assert.equal(runs, 1);
        const t = await inProcess(['vv']);
        assert.equal(t.status, 2);
        assert.equal(t.err, `gdnlab: vv: a bad combination\n\n${commandUsage(throwing)}`);
        const u = await inProcess(['uu']);
        assert.equal(u.status, 2);
        assert.equal(u.err, `gdnlab: uu: see toy\n\n${commandUsage(TOY)}`);
        const x = await inProcess(['tt']);
        assert.equal(x.status, 1);
        assert.equal(x.err, 'gdnlab: it broke');
        // A parse error names the command's own usage.
        const p = await inProcess(['ww']);
        assert.equal(p.status, 2);
        assert.equal(p.err, `gdnlab: ww: expected FILE, got nothing\n\n${commandUsage(counted)}`);
      });
    });
  });

  describe('a one-word command beside two-word ones of the same first word', () => {
    it('the second word picks the two-word command, not the one-word one with an operand', async () => {
      const ran: string[] = [];
      const one: Command = { ...BARE, words: ['ss'], operands: { usage: 'W', min: 0, max: 1 }, run: async () => (ran.push('ss'), 0) };
      const two: Command = { ...BARE, words: ['ss', 'sub'], run: async () => (ran.push('ss sub'), 0) };
      await withCommands([one, two], async () => {
        assert.equal((await inProcess(['ss', 'sub'])).status, 0);
        assert.deepEqual(ran, ['ss sub']);
      });
    });
  });

  describe('exitAfterDrain', () => {
    it('sets the exit code and exits once every stream has flushed, not before', () => {
      const exit = process.exit;
      const code = process.exitCode;
      const exits: number[] = [];
      const pending: (() => void)[] = [];
      const stream = { write: (_: string, done: () => void) => void pending.push(done) } as unknown as NodeJS.WriteStream;
      (process as { exit: unknown }).exit = (c: number) => void exits.push(c);
      try {
        exitAfterDrain(3, [stream, stream]);
        assert.equal(process.exitCode, 3);
        assert.equal(pending.length, 2);
        pending[0]();
        assert.deepEqual(exits, []);
        pending[1]();
        assert.deepEqual(exits, [3]);
      } finally {
        (process as { exit: unknown }).exit = exit;
        process.exitCode = code;
      }
    });

    it('by default waits for stdout and stderr', async () => {
      const exit = process.exit;
      const code = process.exitCode;
      const exits: number[] = [];
      (process as { exit: unknown }).exit = (c: number) => void exits.push(c);
      try {
        exitAfterDrain(0);
        for (let i = 0; i < 500 && exits.length === 0; i++) await new Promise((r) => setTimeout(r, 10));
        assert.deepEqual(exits, [0]);
      } finally {
        // Should the flush come later than the wait, its one exit call is absorbed rather than ending the run.
        (process as { exit: unknown }).exit = exits.length ? exit : () => void ((process as { exit: unknown }).exit = exit);
        process.exitCode = code;
      }
    });
  });

  describe('common flags', () => {
    const parsed = (flags: [string, string | true][]): Parsed => ({ flags: new Map(flags), all: new Map(), operands: [] });

    it('pickBackend: --backend host opens the host; a value outside host|cuda is a usage error', () => {
      assert.equal(pickBackend(parsed([['backend', 'host']])).kind, 'host');
      assert.equal(pickBackend(parsed([])), activeBackend());
      assert.throws(() => pickBackend(parsed([['backend', 'tpu']])), usageError(/^--backend: expected host or cuda, got tpu$/));
      assert.throws(() => pickBackend(parsed([['backend', true]])), usageError(/got true/));
      // --backend cuda is no usage error: it opens CUDA, or fails saying why (no GPU here), not what the flag takes.
      try {
        assert.equal(pickBackend(parsed([['backend', 'cuda']])).kind, 'cuda');
      } catch (e) {
        assert.ok(!(e instanceof UsageError), String(e));
      }
    });

    it('defineArms: nothing without --define, a usage error for --define alone, nothing for an empty list', async () => {
      const backend = pickBackend(parsed([['backend', 'host']]));
      await defineArms(parsed([]), backend);
      await assert.rejects(defineArms(parsed([['define', true]]), backend), usageError(/^--define: expected FILE\[,FILE\]/));
      await defineArms(parsed([['define', ' , ']]), backend);
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gdnlab-define-'));
      try {
        await assert.rejects(defineArms(parsed([['define', path.join(dir, 'none.json')]]), backend), /no such file/);
      } finally {
        fs.rmSync(dir, { recursive: true, force: true });
      }
    });

    it('writeOut resolves once written, and rejects on a write error', async () => {
      const write = process.stdout.write;
      const got: string[] = [];
      try {
        (process.stdout as { write: unknown }).write = (t: string, cb: (e?: Error) => void) => (got.push(t), cb(), true);
        await writeOut('hello');
        assert.deepEqual(got, ['hello']);
        (process.stdout as { write: unknown }).write = (_: string, cb: (e?: Error) => void) => (cb(new Error('EPIPE')), false);
        await assert.rejects(writeOut('x'), /EPIPE/);
      } finally {
        process.stdout.write = write;
      }
    });

    it('progressLine pads to the width, rewrites in place, and ends the line at the last step', () => {
      const write = process.stderr.write;
      const got: string[] = [];
      try {
        (process.stderr as { write: unknown }).write = (t: string) => (got.push(t), true);
        const line = progressLine(12);
        line(1, 2, 'ab');
        line(2, 2, 'abcdefghij');
      } finally {
        process.stderr.write = write;
      }
      assert.deepEqual(got, ['\r[1/2] ab   ', '\r[2/2] abcdefghij\n']);
    });
  });
});
