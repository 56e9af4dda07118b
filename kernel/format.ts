// How values and errors look in a notebook: execute_result bundles and error contents.

import util from 'util';
import { normalizeMimeBundle } from './display';
import { JsonObject } from './wire';

/** The method a value implements to give a rich representation as a cell's last value. */
export const MIME_BUNDLE = Symbol.for('gdnlab.mimeBundle');

const INSPECT_OPTIONS: util.InspectOptions = { depth: 4, maxArrayLength: 100, maxStringLength: 10000, breakLength: 100, colors: false };

/** util.inspect that never throws (a Proxy or a throwing getter still gets a description). */
export function inspectValue(value: unknown): string {
  try {
    return util.inspect(value, INSPECT_OPTIONS);
  } catch (e) {
    try {
      return `[value that cannot be inspected: ${String((e as Error).message)}]`;
    } catch {
      return '[value that cannot be inspected]';
    }
  }
}

export interface FormattedValue {
  data: JsonObject;
  metadata: JsonObject;
  /** Set when the value's mime bundle method failed and text/plain was used instead. */
  warning?: string;
}

/**
 * The execute_result of a cell's last value: its [Symbol.for('gdnlab.mimeBundle')]() bundle when it
 * has one, always with text/plain (util.inspect of the value when the bundle has none). A bundle
 * method that returns null says "already displayed": then there is no execute_result (null), so a
 * figure or table shown by the call that made it appears once, not twice.
 */
export function formatValue(value: unknown): FormattedValue | null {
  const text = () => inspectValue(value);
  const method = value !== null && (typeof value === 'object' || typeof value === 'function') ? (value as Record<symbol, unknown>)[MIME_BUNDLE] : undefined;
  if (typeof method !== 'function') return { data: { 'text/plain': text() }, metadata: {} };
  try {
    const bundle = method.call(value) as unknown;
    if (bundle === null) return null;
    if (typeof bundle !== 'object') throw new TypeError(`expected {data, metadata}, got ${inspectValue(bundle)}`);
    const { data, metadata } = bundle as { data?: unknown; metadata?: unknown };
    const normalized = normalizeMimeBundle(data, 'mime bundle data');
    if (metadata !== undefined && (metadata === null || typeof metadata !== 'object' || Array.isArray(metadata))) throw new TypeError('mime bundle metadata: expected an object');
    if (typeof normalized['text/plain'] !== 'string') normalized['text/plain'] = text();
    return { data: normalized, metadata: (metadata as JsonObject | undefined) ?? {} };
  } catch (e) {
    return { data: { 'text/plain': text() }, metadata: {}, warning: `[Symbol.for('gdnlab.mimeBundle')]() failed, showing text/plain instead: ${e instanceof Error ? e.message : inspectValue(e)}` };
  }
}

export interface ErrorContent extends JsonObject {
  ename: string;
  evalue: string;
  traceback: string[];
}

const RED = '\u001b[0;31m';
const BOLD_RED = '\u001b[1;31m';
const RESET = '\u001b[0m';

/** Stack frames of the kernel's own machinery, hidden from tracebacks. */
const INTERNAL_FRAME = /(node_modules[\\/]tslab[\\/]|[\\/]dist[\\/]kernel[\\/]|\(node:|at node:|node:internal|runInThisContext)/;

function stackFrames(error: Error): string[] {
  const stack = typeof error.stack === 'string' ? error.stack : '';
  return stack
    .split('\n')
    .filter((line) => /^\s+at /.test(line))
    .filter((line) => !INTERNAL_FRAME.test(line));
}

/** ename/evalue/traceback for a value thrown by a cell. */
export function runtimeError(thrown: unknown): ErrorContent {
  if (thrown instanceof Error || (thrown !== null && typeof thrown === 'object' && typeof (thrown as Error).message === 'string' && typeof (thrown as Error).stack === 'string')) {
    const error = thrown as Error;
    const ename = typeof error.name === 'string' && error.name !== '' ? error.name : (error.constructor?.name ?? 'Error');
    const evalue = String(error.message);
    const traceback = [`${BOLD_RED}${ename}${RESET}: ${evalue}`, ...stackFrames(error).map((l) => `${RED}${l}${RESET}`)];
    return { ename, evalue, traceback };
  }
  const evalue = inspectValue(thrown);
  return { ename: 'Uncaught', evalue, traceback: [`${BOLD_RED}Uncaught${RESET} ${evalue}`] };
}

export function interruptError(message: string): ErrorContent {
  return { ename: 'KeyboardInterrupt', evalue: message, traceback: [`${BOLD_RED}KeyboardInterrupt${RESET}: ${message}`] };
}

/** A cell that did not compile: one traceback line per TypeScript diagnostic ("line:col - message"). */
export function compileError(diagnostics: string[]): ErrorContent {
  const first = diagnostics[0] ?? 'the cell did not compile';
  const evalue = diagnostics.length > 1 ? `${first} (and ${diagnostics.length - 1} more)` : first;
  return { ename: 'CompileError', evalue, traceback: [`${BOLD_RED}CompileError${RESET}: the cell did not compile`, ...diagnostics.map((d) => `${RED}${d}${RESET}`)] };
}
