// Shared by the command edge tests (test/cli/*-edges.test.ts): each command runs in this process through main()
// with its output captured, and the heavy functions it calls (the check matrices, benchmarks, the notebook runner,
// the profiler, the kernel installer) replaced by recorders. The commands call those functions through the
// imported module object (CommonJS), so assigning to the module's export replaces them for the command; each
// replacement is undone after the test. No child process, no kernel launch: a file runs in well under a second,
// and StrykerJS's per-test coverage sees every line the command runs (docs/TESTING.md, "Mutation testing").

import { main } from '../../lib/cli';
import { Backend, DeviceInfo } from '../../lib/backend';
import { Stubs } from '../stand-ins';

// The command edge tests take Stubs from here with the other helpers.
export { Stubs };

const backendModule = require('../../lib/backend') as Record<string, unknown>;
const armFile = require('../../lib/arms/file') as Record<string, unknown>;

export interface Run {
  status: number;
  /** Everything written to stdout (console.log lines end in '\n'). */
  out: string;
  err: string;
}

/** `gdnlab <args>` in this process: console.log/error and direct stdout/stderr writes captured. */
export function cli(args: string[]): Promise<Run> {
  return captured(() => main(args));
}

/** Runs `body` (a command's run(), or main()) with its output captured; its result is the exit status. */
export async function captured(body: () => Promise<number>): Promise<Run> {
  const out: string[] = [];
  const err: string[] = [];
  const saved = { log: console.log, error: console.error, out: process.stdout.write, err: process.stderr.write };
  const writer = (into: string[]) => ((s: unknown, ...rest: unknown[]) => {
    into.push(String(s));
    (rest.find((r) => typeof r === 'function') as (() => void) | undefined)?.();
    return true;
  }) as typeof process.stdout.write;
  console.log = (...a: unknown[]) => void out.push(a.map(String).join(' ') + '\n');
  console.error = (...a: unknown[]) => void err.push(a.map(String).join(' ') + '\n');
  process.stdout.write = writer(out);
  process.stderr.write = writer(err);
  try {
    const status = await body();
    return { status, out: out.join(''), err: err.join('') };
  } finally {
    console.log = saved.log;
    console.error = saved.error;
    process.stdout.write = saved.out;
    process.stderr.write = saved.err;
  }
}

/** A backend stand-in: its kind, a device name and the number of times it was closed. */
export interface FakeBackend {
  kind: 'host' | 'cuda';
  closes: number;
  info(): DeviceInfo;
  close(): void;
}

export function fakeBackend(kind: 'host' | 'cuda', info: Partial<DeviceInfo> = {}): FakeBackend {
  const device = { backend: kind, name: `${kind} device`, ...info } as DeviceInfo;
  const b = {
    kind,
    closes: 0,
    info: () => device,
    close() {
      b.closes++;
    },
  };
  return b;
}

/**
 * Backend.open and activeBackend replaced: `active` is the backend without --backend (undefined: asking for it
 * fails the test), and every Backend.open(kind) returns a new stand-in of that kind (device facts from `infos`),
 * listed in `opened`.
 */
export function fakeBackends(
  stubs: Stubs, active?: FakeBackend, infos: { host?: Partial<DeviceInfo>; cuda?: Partial<DeviceInfo> } = {},
): { opened: (FakeBackend)[]; activeCalls: number } {
  const state = { opened: [] as (FakeBackend)[], activeCalls: 0 };
  stubs.set(Backend, 'open', (kind: 'host' | 'cuda') => {
    const b = fakeBackend(kind, infos[kind]);
    state.opened.push(b);
    return b;
  });
  stubs.set(backendModule, 'activeBackend', () => {
    state.activeCalls++;
    if (!active) throw new Error('the active backend was asked for');
    return active;
  });
  return state;
}

/** defineArmsFromFiles replaced: records (files, backend) and defines nothing. */
export function fakeDefine(stubs: Stubs): { files: string; backend: unknown }[] {
  const calls: { files: string; backend: unknown }[] = [];
  stubs.set(armFile, 'defineArmsFromFiles', (files: string, backend: unknown) => {
    calls.push({ files, backend });
    return [{ summary: `defined ${files}` }];
  });
  return calls;
}

/** The lines of a capture (without the empty string after the last '\n'). */
export function lines(text: string): string[] {
  const l = text.split('\n');
  if (l[l.length - 1] === '') l.pop();
  return l;
}

/** The first line of stderr of a usage error, and whether the command's usage follows. */
export function usageError(r: Run, command: string): string {
  if (r.status !== 2) throw new Error(`expected exit 2, got ${r.status}: ${r.err}`);
  if (!r.err.includes(`\n\nusage: gdnlab ${command} `)) throw new Error(`no usage of ${command} after the error: ${r.err}`);
  return r.err.split('\n')[0];
}
