// The display channel the gdnlab library talks to:
//
//   globalThis[Symbol.for('gdnlab.kernel')] = { display, clearOutput, signal, executionCount }
//
// and the hook behind tslab's own `display` API (tslab.display.html(...), newDisplay()).

import { Cell, cellContext } from './cell';
import { IOPubChannel } from './iopub';
import { JsonObject } from './wire';

export const KERNEL_CHANNEL = Symbol.for('gdnlab.kernel');

// The channel's shape is the library's (lib/view/display.ts is its consumer): one definition of the contract.
export type { DisplayOptions, KernelChannel } from '../lib/view/display';
import type { DisplayOptions, KernelChannel } from '../lib/view/display';

const MIME_TYPE = /^[\w.+-]+\/[\w.+-]+$/;

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/** Checks a mime bundle and makes it JSON-ready (binary values become base64 strings). */
export function normalizeMimeBundle(data: unknown, argName = 'data'): JsonObject {
  if (!isPlainObject(data)) throw new TypeError(`${argName}: expected an object mapping mime types to values, got ${data === null ? 'null' : Array.isArray(data) ? 'an array' : typeof data}`);
  const out: JsonObject = {};
  const keys = Object.keys(data);
  if (keys.length === 0) throw new TypeError(`${argName}: expected at least one mime type, got an empty object`);
  for (const key of keys) {
    if (!MIME_TYPE.test(key)) throw new TypeError(`${argName}: key ${JSON.stringify(key)} is not a mime type (expected "type/subtype")`);
    const value = data[key];
    if (value === undefined) throw new TypeError(`${argName}[${JSON.stringify(key)}]: expected a value, got undefined`);
    out[key] = value instanceof Uint8Array ? Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString('base64') : value;
  }
  return out;
}

export interface DisplayChannelOptions {
  iopub: IOPubChannel;
  /** The running cell, used when the caller has no cell context. */
  currentCell: () => Cell | null;
  /** The kernel's execution count (for callers outside any cell). */
  executionCount: () => number;
}

const NEVER_ABORTED = new AbortController().signal;

export function createKernelChannel(options: DisplayChannelOptions): KernelChannel {
  const cellOf = (what: string): Cell => {
    const cell = cellContext.getStore() ?? options.currentCell();
    if (!cell) throw new Error(`${what}: no cell is running, so there is no output to attach to`);
    return cell;
  };
  return {
    display(data, metadata = {}, opts = {}) {
      const bundle = normalizeMimeBundle(data);
      if (!isPlainObject(metadata)) throw new TypeError('metadata: expected an object');
      if (!isPlainObject(opts)) throw new TypeError('options: expected an object');
      const { displayId, update = false } = opts;
      if (displayId !== undefined && (typeof displayId !== 'string' || displayId === '')) throw new TypeError(`options.displayId: expected a non-empty string, got ${JSON.stringify(displayId)}`);
      if (typeof update !== 'boolean') throw new TypeError('options.update: expected a boolean');
      if (update && displayId === undefined) throw new TypeError('options.update: an update needs options.displayId (the output to replace)');
      const cell = cellOf('display');
      options.iopub.publish(update ? 'update_display_data' : 'display_data', { data: bundle, metadata, transient: displayId ? { display_id: displayId } : {} }, cell.parent);
    },
    clearOutput(wait = false) {
      if (typeof wait !== 'boolean') throw new TypeError('wait: expected a boolean');
      options.iopub.publish('clear_output', { wait }, cellOf('clearOutput').parent);
    },
    signal() {
      const cell = cellContext.getStore() ?? options.currentCell();
      return cell ? cell.controller.signal : NEVER_ABORTED;
    },
    executionCount() {
      const cell = cellContext.getStore() ?? options.currentCell();
      return cell ? cell.executionCount : options.executionCount();
    },
  };
}

interface TslabDisplayData {
  data: Record<string, unknown>;
  metadata?: Record<string, unknown>;
  transient?: { display_id?: string };
}

/**
 * Routes tslab's display API (`import * as tslab from 'tslab'; tslab.display.html(...)`) through
 * our IOPub: tslab calls `lastWriteDisplayData` of its jupyter module for every display.
 */
export function hookTslabDisplay(channel: KernelChannel): void {
  // eslint-disable-next-line @typescript-eslint/no-var-requires
  const tslabJupyter = require('tslab/dist/jupyter') as { lastWriteDisplayData: ((d: TslabDisplayData, update: boolean) => void) | null };
  tslabJupyter.lastWriteDisplayData = (d, update) => {
    const displayId = d.transient?.display_id;
    channel.display(d.data, d.metadata ?? {}, { displayId: displayId || undefined, update: update && !!displayId });
  };
}

export function installKernelChannel(channel: KernelChannel): void {
  (globalThis as unknown as Record<symbol, unknown>)[KERNEL_CHANNEL] = channel;
}
