// Runs the CLI's main() in the test's own process with console output captured: for what the CLI decides
// before any command runs (parsing, usage, refusals), where a spawned node would cost a second each.

import { main } from '../../lib/cli';

export async function inProcess(args: string[]): Promise<{ status: number; out: string; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const { log, error } = console;
  console.log = (...a: unknown[]) => void out.push(a.join(' '));
  console.error = (...a: unknown[]) => void err.push(a.join(' '));
  try {
    const status = await main(args);
    return { status, out: out.join('\n'), err: err.join('\n') };
  } finally {
    console.log = log;
    console.error = error;
  }
}
