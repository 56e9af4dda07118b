// child_process.spawn and the timer functions replaced for one test, so that the notebook runner, the
// exporter and the profiler run in this process: StrykerJS's per-test coverage sees only this process,
// and a real Jupyter or ncu would take seconds. Each spawn is recorded and answered by a script of the
// test, which writes the files the real child would write, sends its output and then 'close' (or 'error').

import { EventEmitter } from 'events';

// The module itself (not an import-star wrapper): the code under test reads child_process.spawn at each call.
// eslint-disable-next-line @typescript-eslint/no-var-requires
const childProcess = require('child_process') as { spawn: unknown };

export class FakeChild extends EventEmitter {
  stdout = new EventEmitter();
  stderr = new EventEmitter();
  kills: (string | number | undefined)[] = [];
  kill(signal?: string | number): boolean {
    this.kills.push(signal);
    return true;
  }
  /** Sends text on stdout or stderr as one Buffer chunk. */
  say(stream: 'stdout' | 'stderr', text: string): void {
    this[stream].emit('data', Buffer.from(text, 'utf8'));
  }
}

export interface SpawnCall {
  cmd: string;
  args: string[];
  opts: { env?: NodeJS.ProcessEnv; stdio?: unknown };
  child: FakeChild;
}

/** What a spawned child does; it runs after spawn has returned (as a real child's events come later). */
export type Script = (child: FakeChild, call: SpawnCall) => void | Promise<void>;

/**
 * Runs fn with spawn replaced: the n-th spawn is answered by scripts[n] (the last script answers any
 * further spawn). Every call is recorded.
 */
export async function withSpawn<T>(scripts: Script[], fn: (calls: SpawnCall[]) => Promise<T>): Promise<T> {
  const original = childProcess.spawn;
  const calls: SpawnCall[] = [];
  childProcess.spawn = (cmd: string, args: string[], opts: SpawnCall['opts']) => {
    const child = new FakeChild();
    const call = { cmd, args, opts, child };
    const script = scripts[Math.min(calls.length, scripts.length - 1)];
    calls.push(call);
    setImmediate(() => {
      Promise.resolve(script(child, call)).catch((e: Error) => child.emit('error', e));
    });
    return child;
  };
  try {
    return await fn(calls);
  } finally {
    childProcess.spawn = original;
  }
}

export interface Timer {
  fn: () => void;
  ms: number;
  cleared: boolean;
}

/**
 * Runs fn with the global setTimeout/clearTimeout replaced by recorders: a timer never fires by itself
 * (the test fires it), so a kill timer of minutes is checked without waiting for it. mocha keeps its own
 * copies of the timer functions, so its test timeouts are unaffected.
 */
export async function withTimers<T>(fn: (timers: Timer[]) => Promise<T>): Promise<T> {
  const g = globalThis as unknown as { setTimeout: unknown; clearTimeout: unknown };
  const saved = { set: g.setTimeout, clear: g.clearTimeout };
  const timers: Timer[] = [];
  g.setTimeout = (f: () => void, ms: number) => {
    const t = { fn: f, ms, cleared: false };
    timers.push(t);
    return t;
  };
  g.clearTimeout = (t: Timer) => {
    if (t) t.cleared = true;
  };
  try {
    return await fn(timers);
  } finally {
    g.setTimeout = saved.set;
    g.clearTimeout = saved.clear;
  }
}
