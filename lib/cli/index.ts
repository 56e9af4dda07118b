// The `gdnlab` command line: finds the command its first words name (lib/cli/registry.ts), reads the rest by that
// command's grammar (lib/cli/args.ts) and runs it. The commands themselves live in lib/cli/, one file each.

import { Command, UsageError, commandName, commandUsage, orList, parseCommandLine, synopsis, wantsHelp } from './args';
import { COMMANDS } from './registry';

export { UsageError } from './args';

/** `gdnlab --help`: every command in one line, with its summary. */
export function globalUsage(): string {
  const lines = ['usage: gdnlab <command> [flags]   (gdnlab <command> --help: that command\'s flags)'];
  const width = Math.max(...COMMANDS.map((c) => commandName(c).length)) + 2;
  for (const c of COMMANDS) lines.push(`  ${commandName(c).padEnd(width)}${c.summary}`);
  lines.push('Environment: GDN_BACKEND=auto|cuda|host, GDN_LIBRARY=/path/to/libgdn.so');
  return lines.join('\n');
}

/** `gdnlab check --help`: the commands of one group, each with its synopsis and summary. */
function groupUsage(group: readonly Command[]): string {
  const lines = [`usage: gdnlab ${group[0].words[0]} ${group.map((c) => c.words[1]).join('|')} [flags]   (gdnlab ${group[0].words[0]} <name> --help: its flags)`];
  for (const c of group) lines.push(`  ${synopsis(c)}`, `      ${c.summary}`);
  return lines.join('\n');
}

/** The command `argv` names and the words after its name; a usage error when none or several could be meant. */
function findCommand(argv: readonly string[]): { command: Command; rest: string[] } | { help: string } {
  const [first, second] = argv;
  const group = COMMANDS.filter((c) => c.words[0] === first);
  if (group.length === 0) {
    if (first.startsWith('-')) throw new UsageError(`expected a command before the flag ${first}`);
    throw new UsageError(`unknown command ${first}; the commands are ${[...new Set(COMMANDS.map((c) => c.words[0]))].join(', ')}`);
  }
  if (group.length === 1 && group[0].words.length === 1) return { command: group[0], rest: argv.slice(1) };
  const command = group.find((c) => c.words[1] === second);
  if (command) return { command, rest: argv.slice(2) };
  if ((second === undefined || second.startsWith('-')) && wantsHelp(argv)) return { help: groupUsage(group) };
  throw new UsageError(`${first}: expected ${orList(group.map((c) => c.words[1]))}, got ${second ?? 'nothing'}\n\n${groupUsage(group)}`);
}

/**
 * Exits with `code` once stdout and stderr have flushed everything written so far. On pipes both
 * streams are asynchronous, so a bare process.exit() after a large write truncates the output.
 */
export function exitAfterDrain(code: number, streams: NodeJS.WriteStream[] = [process.stdout, process.stderr]): void {
  process.exitCode = code;
  let pending = streams.length;
  const done = () => {
    pending -= 1;
    if (pending === 0) process.exit(code);
  };
  // A write's callback runs after every earlier write on that stream has been handed to the OS.
  for (const s of streams) s.write('', done);
}

/** Runs `gdnlab <argv>`; resolves to the exit status (0 ok, 1 failed, 2 a usage error: nothing ran). */
export async function main(argv: string[]): Promise<number> {
  if (argv.length === 0) {
    console.log(globalUsage());
    return 2;
  }
  if (argv[0] === 'help' || argv[0] === '--help' || argv[0] === '-h') {
    if (argv.length === 1) {
      console.log(globalUsage());
      return 0;
    }
    // `gdnlab help bench conv`: the same as `gdnlab bench conv --help`.
    return main([...argv.slice(1), '--help']);
  }
  let current: Command | undefined;
  try {
    const found = findCommand(argv);
    if ('help' in found) {
      console.log(found.help);
      return 0;
    }
    const { command, rest } = found;
    current = command;
    // --help / -h anywhere prints the command's usage and runs nothing (a long check or benchmark must not start).
    if (wantsHelp(rest)) {
      console.log(commandUsage(command));
      return 0;
    }
    return await command.run(parseCommandLine(command, rest));
  } catch (e) {
    if (e instanceof UsageError) {
      const command = e.command ?? current;
      console.error(`gdnlab: ${e.message}\n\n${command ? commandUsage(command) : e.message.includes('\n') ? '' : globalUsage()}`.trimEnd());
      return 2;
    }
    console.error(`gdnlab: ${(e as Error).message}`);
    return 1;
  }
}
