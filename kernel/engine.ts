// The TypeScript engine: tslab's converter (compiles a cell with its TypeScript 5.0, imports
// become require) and executor (runs it, keeps declarations between cells), reused as they are.
//
// tslab's executor reports through a console-like object: the last expression's value via log(),
// compile diagnostics and thrown values via error(). We hand it a collector instead of the real
// console, so the kernel gets the value itself (for execute_result) and the error itself (for an
// `error` message) rather than text printed to stdout.
//
// Before execution a cell goes through rewriteCell (cell-rewrite.ts): shorthand properties and
// exports that tslab's converter gets wrong are rewritten, and diagnostics are mapped back to the
// cell as typed. Completion and inspection get the cell as typed.

import util from 'util';
import { CompletionInfo, Converter, createConverter } from 'tslab/dist/converter';
import { ConverterSet, createExecutor, Executor } from 'tslab/dist/executor';
import { printQuickInfo } from 'tslab/dist/inspect';
import { getCodeMetadata } from 'tslab/dist/metadata';
import { asTyped, rewriteCell, RewrittenCell } from './cell-rewrite';

export type RunOutcome =
  | { status: 'ok'; hasValue: boolean; value: unknown; warnings: string[] }
  | { status: 'compile-error'; diagnostics: string[] }
  | { status: 'runtime-error'; thrown: unknown }
  | { status: 'interrupted'; message: string };

/** The format string tslab's executor uses for one diagnostic ("file line:col - message"). */
const DIAGNOSTIC_FORMAT = '%s%d:%d - %s';

/** The error tslab's executor raises when interrupt() cuts a pending top-level await short. */
const ASYNC_INTERRUPT_MESSAGE = 'Interrupted asynchronously';

interface Collector {
  values: unknown[];
  diagnostics: string[];
  thrown: unknown[];
  /** The rewrite of the running cell, to map diagnostics back to the text as typed. */
  rewrite: RewrittenCell;
}

class LazyConverters implements ConverterSet {
  private nodeConverter?: Converter;
  private browserConverter?: Converter;
  get node(): Converter {
    this.nodeConverter ??= createConverter({ isJS: false, isBrowser: false });
    return this.nodeConverter;
  }
  get browser(): Converter {
    this.browserConverter ??= createConverter({ isJS: false, isBrowser: true });
    return this.browserConverter;
  }
  close(): void {
    this.nodeConverter?.close();
    this.browserConverter?.close();
  }
}

export class Engine {
  private readonly converters = new LazyConverters();
  private readonly executor: Executor;
  private collector: Collector | null = null;
  private interruptRequested = false;

  /** @param rootDir the folder relative imports and require resolve from (the notebook's folder) */
  constructor(rootDir: string, private readonly log: (text: string) => void) {
    this.executor = createExecutor(rootDir, this.converters, {
      log: (...args: unknown[]) => this.onLog(args),
      error: (...args: unknown[]) => this.onError(args),
    });
  }

  /** Builds the TypeScript program now (about a second) instead of on the first cell. */
  warmUp(): void {
    void this.converters.node;
  }

  /** Compiles and runs one cell. Never throws: every failure is an outcome. */
  async run(code: string): Promise<RunOutcome> {
    let rewrite: RewrittenCell;
    try {
      rewrite = forExecution(code);
    } catch (e) {
      return { status: 'runtime-error', thrown: e }; // a failure of the rewrite itself, not of the cell
    }
    const collector: Collector = { values: [], diagnostics: [], thrown: [], rewrite };
    this.collector = collector;
    this.interruptRequested = false;
    let ok: boolean;
    try {
      ok = await this.executor.execute(rewrite.code);
    } catch (e) {
      // tslab's executor catches user errors itself; this is a failure of the converter.
      ok = false;
      collector.thrown.push(e);
    } finally {
      this.collector = null;
    }
    if (ok) {
      return { status: 'ok', hasValue: collector.values.length > 0, value: collector.values[0], warnings: collector.diagnostics };
    }
    if (collector.thrown.length > 0) {
      const thrown = collector.thrown[0];
      if (isSigintInterrupt(thrown)) return { status: 'interrupted', message: 'Interrupted (SIGINT) while the cell was running' };
      // A library call that the same SIGINT stopped (the user-arm worker is in the kernel's process group)
      // can fail before this process's own SIGINT handler has run: it is still an interrupt.
      if (isLibraryInterrupt(thrown)) return { status: 'interrupted', message: (thrown as Error).message };
      if (this.interruptRequested && thrown instanceof Error && thrown.message === ASYNC_INTERRUPT_MESSAGE) {
        return { status: 'interrupted', message: 'Interrupted while the cell was waiting (top-level await)' };
      }
      return { status: 'runtime-error', thrown };
    }
    return { status: 'compile-error', diagnostics: collector.diagnostics.length > 0 ? collector.diagnostics : ['the cell did not compile'] };
  }

  /** Cuts a running cell's pending top-level await short (its run() resolves as interrupted). */
  interrupt(): void {
    if (!this.collector) return;
    this.interruptRequested = true;
    this.executor.interrupt();
  }

  complete(code: string, cursor: number): CompletionInfo {
    return this.executor.complete(code, cursor);
  }

  /** Quick info (type and docs) at `cursor`, or null when there is nothing there. */
  inspect(code: string, cursor: number): string | null {
    const info = this.executor.inspect(code, cursor);
    if (!info) return null;
    const text = printQuickInfo(info);
    return text === '' ? null : text;
  }

  close(): void {
    this.executor.close();
  }

  private onLog(args: unknown[]): void {
    if (this.collector) {
      this.collector.values.push(args[0]);
    } else {
      this.log(`tslab executor output outside a cell: ${util.format(...args)}`);
    }
  }

  private onError(args: unknown[]): void {
    if (!this.collector) {
      this.log(`tslab executor error outside a cell: ${util.format(...args)}`);
      return;
    }
    if (args.length === 5 && args[0] === DIAGNOSTIC_FORMAT) {
      const [format, file, line, column, message] = args;
      if (file === '' && typeof line === 'number' && typeof column === 'number') {
        // A diagnostic of the cell itself (others name their file): back to the text as typed.
        const original = this.collector.rewrite.originalLineColumn(line, column);
        this.collector.diagnostics.push(util.format(format, file, original.line, original.column, message));
      } else {
        this.collector.diagnostics.push(util.format(...args));
      }
    } else {
      this.collector.thrown.push(args[0]);
    }
  }
}

/** The cell as tslab's executor should run it. `@module` cells are files of their own: left as typed. */
function forExecution(code: string): RewrittenCell {
  if (getCodeMetadata(code).module) return asTyped(code);
  return rewriteCell(code);
}

function isLibraryInterrupt(e: unknown): boolean {
  return e instanceof Error && e.name === 'GdnError' && (e as { interrupted?: unknown }).interrupted === true;
}

function isSigintInterrupt(e: unknown): boolean {
  return e !== null && typeof e === 'object' && (e as { code?: unknown }).code === 'ERR_SCRIPT_EXECUTION_INTERRUPTED';
}
