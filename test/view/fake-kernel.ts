// A stand-in for the gdnlab kernel's display channel: records every display call.

const KERNEL = Symbol.for('gdnlab.kernel');

export interface Shown {
  data: Record<string, unknown>;
  metadata: Record<string, unknown> | undefined;
  options: { displayId?: string; update?: boolean } | undefined;
}

export class FakeKernel {
  readonly outputs: Shown[] = [];
  readonly controller = new AbortController();

  install(): this {
    (globalThis as Record<symbol, unknown>)[KERNEL] = {
      display: (data: Record<string, unknown>, metadata?: Record<string, unknown>, options?: Shown['options']) => this.outputs.push({ data, metadata, options }),
      clearOutput: () => undefined,
      signal: () => this.controller.signal,
      executionCount: () => 1,
    };
    return this;
  }

  uninstall(): void {
    delete (globalThis as Record<symbol, unknown>)[KERNEL];
  }
}

/** Runs fn with a fake kernel installed; returns what it displayed. */
export async function withKernel<T>(fn: (k: FakeKernel) => T | Promise<T>): Promise<{ value: T; outputs: Shown[] }> {
  const k = new FakeKernel().install();
  try {
    const value = await fn(k);
    return { value, outputs: k.outputs };
  } finally {
    k.uninstall();
  }
}
