// The one place that talks to the gdnlab kernel's display channel.
//
// Inside the gdnlab kernel, globalThis[Symbol.for('gdnlab.kernel')] is the channel (display,
// clearOutput, signal, executionCount); outside it is undefined and every function here is a
// quiet no-op, so library code can call them from scripts and tests.

/** The symbol of the method that gives a value's rich representation (the cell's last value). */
export const MIME_BUNDLE: unique symbol = Symbol.for('gdnlab.mimeBundle') as never;

export interface MimeBundle {
  data: Record<string, unknown>;
  metadata?: Record<string, unknown>;
}

export interface DisplayOptions {
  /** Identifies an output so that it can be replaced later (update_display_data). */
  displayId?: string;
  /** true: replace the output with this displayId instead of adding a new one. */
  update?: boolean;
}

export interface KernelChannel {
  display(data: Record<string, unknown>, metadata?: Record<string, unknown>, options?: DisplayOptions): void;
  clearOutput(wait?: boolean): void;
  /** Aborted when the cell that calls it (or that started the calling work) is interrupted. */
  signal(): AbortSignal;
  executionCount(): number;
}

const KERNEL = Symbol.for('gdnlab.kernel');

/** The kernel channel, or undefined outside the gdnlab kernel. */
export function kernelChannel(): KernelChannel | undefined {
  const k = (globalThis as Record<symbol, unknown>)[KERNEL];
  if (k && typeof (k as KernelChannel).display === 'function') return k as KernelChannel;
  return undefined;
}

export function inKernel(): boolean {
  return kernelChannel() !== undefined;
}

/** Sends a display_data (or update_display_data) output; returns false outside a kernel. */
export function display(bundle: MimeBundle, options?: DisplayOptions): boolean {
  const k = kernelChannel();
  if (!k) return false;
  k.display(bundle.data, bundle.metadata ?? {}, options);
  return true;
}

/** True when the kernel asks the running cell to stop (an interrupt). */
export function interrupted(): boolean {
  const k = kernelChannel();
  if (!k || typeof k.signal !== 'function') return false;
  try {
    return k.signal().aborted;
  } catch {
    return false;
  }
}

let displayCounter = 0;

/** A display id unique within this process. */
export function newDisplayId(prefix = 'gdnlab'): string {
  displayCounter += 1;
  return `${prefix}-${process.pid}-${Date.now().toString(36)}-${displayCounter}`;
}

/** True when value has a [MIME_BUNDLE]() method. */
export function hasMimeBundle(value: unknown): value is { [MIME_BUNDLE](): MimeBundle } {
  return !!value && typeof (value as Record<symbol, unknown>)[MIME_BUNDLE] === 'function';
}
