// Stand-ins for the in-process edge tests (docs/TESTING.md, "Mutation testing"): a fresh copy of a module (its
// module-level caches empty), environment variables set for one call, replacements of module exports or
// variables undone after each test, and an exact check of a thrown error. The modules under test call what they
// import through the module object (CommonJS), so assigning to an export replaces it for them.

import { strict as assert } from 'assert';

/** A fresh copy of the compiled module at `resolved` (require.resolve's path); the cached copy is left as it was. */
export function freshRequire<T>(resolved: string): T {
  const saved = require.cache[resolved];
  delete require.cache[resolved];
  try {
    // eslint-disable-next-line @typescript-eslint/no-var-requires
    return require(resolved) as T;
  } finally {
    if (saved) require.cache[resolved] = saved;
    else delete require.cache[resolved];
  }
}

function putEnv(vars: Record<string, string | undefined>): void {
  for (const [k, v] of Object.entries(vars)) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
}

/** Runs fn with `vars` set (undefined: unset), then puts them back, also after a throw or a rejected promise. */
export function withEnv<T>(vars: Record<string, string | undefined>, fn: () => T): T {
  const saved = Object.fromEntries(Object.keys(vars).map((k) => [k, process.env[k]]));
  putEnv(vars);
  let result: T;
  try {
    result = fn();
  } catch (e) {
    putEnv(saved);
    throw e;
  }
  if (result instanceof Promise) return result.finally(() => putEnv(saved)) as T;
  putEnv(saved);
  return result;
}

/** Replacements made for one test, undone in reverse order by restore() (call it in afterEach). */
export class Undo {
  private steps: (() => void)[] = [];

  /** obj[key] = value; restore() puts the old value back, or removes the key if obj had none of its own. */
  stub(obj: object, key: string, value: unknown): void {
    const o = obj as Record<string, unknown>;
    const had = Object.prototype.hasOwnProperty.call(o, key);
    const old = o[key];
    o[key] = value;
    this.steps.push(() => {
      if (had) o[key] = old;
      else delete o[key];
    });
  }

  /** process.env[name] = value (undefined: unset) until restore(). */
  setEnv(name: string, value: string | undefined): void {
    const old = process.env[name];
    putEnv({ [name]: value });
    this.steps.push(() => putEnv({ [name]: old }));
  }

  restore(): void {
    while (this.steps.length) this.steps.pop()!();
  }
}

/** Replacements of module exports (or any property), undone in reverse order by restore(). */
export class Stubs {
  private saved: [Record<string, unknown>, string, unknown][] = [];

  set(target: object, key: string, value: unknown): void {
    const t = target as Record<string, unknown>;
    this.saved.push([t, key, t[key]]);
    t[key] = value;
    // A getter-only export would ignore the assignment: the test would then run the real function.
    if (t[key] !== value) throw new Error(`could not replace ${key}`);
  }

  restore(): void {
    for (const [t, k, v] of this.saved.reverse()) t[k] = v;
    this.saved = [];
  }
}

/** f throws an instance of `type` whose message is exactly `message` (or matches it, given a RegExp). */
export const throwsExactly = (f: () => unknown, type: Function, message: string | RegExp): void =>
  assert.throws(f, (e: Error) => {
    assert.ok(e instanceof type, `${e.constructor.name}: ${e.message}`);
    if (typeof message === 'string') assert.equal(e.message, message);
    else assert.match(e.message, message);
    return true;
  });
