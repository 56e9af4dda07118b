// The command line's grammar: each command declares its flags and operands once (a Command), and one strict
// parser reads every command's arguments from that declaration. An unknown flag, a flag without its value or a
// stray word is a usage error (exit 2) naming it, followed by that command's own usage; nothing runs.

/** One flag of a command. */
export interface Flag {
  /** Without the dashes: 'backend'. */
  name: string;
  /**
   * What its value is, as the usage shows it ('FILE', 'N', 'host|cuda'); absent for a switch. With
   * `optional`, the value is only taken as `--name=VALUE` and `--name` alone is a switch (--json[=FILE]).
   */
  value?: string;
  optional?: boolean;
  /** Accepted values (checked here, so each command need not): the message names the flag and lists them. */
  choices?: readonly string[];
  /** Other spellings ('o' for -o, 'out-dir' for --out-dir). */
  aliases?: readonly string[];
  /** May be given more than once; its values are joined with ',' (and `all` keeps each). */
  repeatable?: boolean;
  help: string;
}

/** A command: its words, its grammar and its handler. */
export interface Command {
  /** The words that name it: ['check', 'conv']. */
  words: readonly string[];
  /** One line for `gdnlab --help`. */
  summary: string;
  /** Words after the command's name ('NOTEBOOK.ipynb ...'); none when absent. */
  operands?: { usage: string; min: number; max: number };
  flags: readonly Flag[];
  /** Lines shown by `gdnlab <command> --help` below the flag table. */
  details?: readonly string[];
  run(args: Parsed): Promise<number>;
}

/** What the parser read: flags under their canonical names, the operands in order. */
export interface Parsed {
  flags: Map<string, string | true>;
  /** Every value of a repeatable flag, in order. */
  all: Map<string, string[]>;
  operands: string[];
}

/** A mistake in the command line: printed with the usage of `command` (or the global usage) and exit 2. */
export class UsageError extends Error {
  constructor(message: string, readonly command?: Command) {
    super(message);
  }
}

export const HELP_FLAG: Flag = { name: 'help', aliases: ['h'], help: 'this usage; runs nothing' };

function spelled(f: Flag, name = f.name): string {
  return name.length === 1 ? `-${name}` : `--${name}`;
}

/** How a flag is written in a synopsis: --backend host|cuda, --json[=FILE], --quick. */
export function flagSynopsis(f: Flag): string {
  if (f.value === undefined) return spelled(f);
  return f.optional ? `${spelled(f)}[=${f.value}]` : `${spelled(f)} ${f.value}`;
}

/** 'a', 'a or b', 'a, b or c'. */
export function orList(names: readonly string[]): string {
  return names.length < 2 ? names.join('') : `${names.slice(0, -1).join(', ')} or ${names[names.length - 1]}`;
}

export function commandName(c: Command): string {
  return c.words.join(' ');
}

/** `check conv [--backend host|cuda] [--quick] ...`: the command in one line. */
export function synopsis(c: Command): string {
  return [commandName(c), ...(c.operands ? [c.operands.usage] : []), ...c.flags.map((f) => `[${flagSynopsis(f)}${f.repeatable ? ']...' : ']'}`)].join(' ');
}

/** `gdnlab <command> --help`: the command's synopsis, summary and flag table. */
export function commandUsage(c: Command): string {
  const flags = [...c.flags, HELP_FLAG];
  const left = flags.map((f) => [flagSynopsis(f), ...(f.aliases ?? []).map((a) => spelled(f, a))].join(', '));
  const width = Math.max(...left.map((l) => l.length)) + 2;
  const lines = [`usage: gdnlab ${synopsis(c)}`, `  ${c.summary}`, '', 'flags:'];
  flags.forEach((f, i) => lines.push(`  ${left[i].padEnd(width)}${f.help}${f.choices && f.value !== f.choices.join('|') ? ` (${f.choices.join(', ')})` : ''}`));
  if (c.details?.length) lines.push('', ...c.details);
  return lines.join('\n');
}

/** True when the arguments ask for help (-h or --help anywhere): the command then prints its usage and runs nothing. */
export function wantsHelp(argv: readonly string[]): boolean {
  return argv.some((a) => a === '--help' || a === '-h');
}

/** Reads `argv` (the words after the command's name) by `c`'s grammar; throws UsageError on any mistake. */
export function parseCommandLine(c: Command, argv: readonly string[]): Parsed {
  const byName = new Map<string, Flag>();
  for (const f of c.flags) for (const n of [f.name, ...(f.aliases ?? [])]) byName.set(n, f);
  const flags = new Map<string, string | true>();
  const all = new Map<string, string[]>();
  const operands: string[] = [];
  const name = commandName(c);
  const list = () => c.flags.map(flagSynopsis).join(', ');
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (!a.startsWith('-') || a === '-') {
      operands.push(a);
      continue;
    }
    const long = a.startsWith('--');
    const eq = long ? a.indexOf('=') : -1;
    const key = long ? a.slice(2, eq > 0 ? eq : undefined) : a.slice(1);
    const f = byName.get(key);
    if (!f) throw new UsageError(`${name}: unknown flag ${long ? `--${key}` : a}; its flags are ${list() || 'none'}`, c);
    let value: string | true = true;
    if (eq > 0) {
      if (f.value === undefined) throw new UsageError(`${name}: ${spelled(f)} takes no value (got '${a}')`, c);
      value = a.slice(eq + 1);
      if (value === '') throw new UsageError(`${name}: ${spelled(f)} needs a value (${f.value}), got an empty one`, c);
    } else if (f.value !== undefined && !f.optional) {
      const next = argv[i + 1];
      if (next === undefined || (next.startsWith('-') && next !== '-')) {
        throw new UsageError(`${name}: ${spelled(f, key)} needs a value (${f.value})${next === undefined ? '' : `, got the flag ${next}`}`, c);
      }
      value = next;
      i++;
    }
    if (f.choices && typeof value === 'string' && !f.choices.includes(value)) {
      throw new UsageError(`${spelled(f)}: expected ${orList(f.choices)}, got ${value}`, c);
    }
    if (flags.has(f.name) && !f.repeatable) throw new UsageError(`${name}: ${spelled(f)} given twice`, c);
    if (typeof value === 'string') all.set(f.name, [...(all.get(f.name) ?? []), value]);
    flags.set(f.name, f.repeatable && typeof value === 'string' ? all.get(f.name)!.join(',') : value);
  }
  const min = c.operands?.min ?? 0;
  const max = c.operands?.max ?? 0;
  if (operands.length > max) {
    const extra = operands[max];
    // `--json out.json`: the flag takes its file only as --json=FILE, so the file is a stray word.
    const before = argv[argv.indexOf(extra) - 1];
    const f = before?.startsWith('--') ? byName.get(before.slice(2)) : undefined;
    const hint = f?.optional ? ` (to write the ${f.name === 'json' ? 'JSON' : 'output'} to a file: ${spelled(f)}=${extra})` : '';
    throw new UsageError(`${name}: unexpected argument '${extra}'${hint}`, c);
  }
  if (operands.length < min) throw new UsageError(`${name}: expected ${c.operands!.usage}, got ${operands.length ? operands.join(' ') : 'nothing'}`, c);
  return { flags, all, operands };
}
