// Which cell a piece of output belongs to.
//
// Every execution runs inside an AsyncLocalStorage context holding its Cell, so work a cell
// leaves behind (timers, promises still pending after an interrupt) keeps that cell's identity.
// Its output is sent with that cell's parent header: a frontend files it under the old cell (or
// drops it, if the cell is finished), never under the cell that happens to be running now.

import { AsyncLocalStorage } from 'async_hooks';
import { Header } from './wire';

export interface Cell {
  /** Header of the execute_request: the parent header of everything this cell outputs. */
  readonly parent: Header;
  /** The execution count shown for this cell (unchanged by silent executions). */
  readonly executionCount: number;
  /** Aborted when this cell is interrupted. */
  readonly controller: AbortController;
  /** True until the execute_reply has been sent. */
  running: boolean;
}

export const cellContext = new AsyncLocalStorage<Cell>();

/** Raised into a cell (and used as the abort reason of its signal) when it is interrupted. */
export class KeyboardInterrupt extends Error {
  constructor(message = 'Interrupted') {
    super(message);
    this.name = 'KeyboardInterrupt';
  }
}

export function newCell(parent: Header, executionCount: number): Cell {
  return { parent, executionCount, controller: new AbortController(), running: true };
}
