// kernel/cell.ts: a cell's record, its interrupt error, and the context that carries it. Pure.

import { strict as assert } from 'assert';
import { cellContext, KeyboardInterrupt, newCell } from '../../kernel/cell';
import type { Header } from '../../kernel/wire';

// Only the fields these tests read; the cast stands in for the rest of a header.
const header = { msg_id: 'm', msg_type: 'execute_request', username: 'u', date: 'd', version: '5.3' } as unknown as Header;

describe('cell: edges', () => {
  it('newCell: the parent header and count, a fresh controller not aborted, running', () => {
    const c = newCell(header, 7);
    assert.equal(c.parent, header);
    assert.equal(c.executionCount, 7);
    assert.ok(c.controller instanceof AbortController);
    assert.equal(c.controller.signal.aborted, false);
    assert.equal(c.running, true);
    assert.notEqual(newCell(header, 7).controller, c.controller);
  });

  it('KeyboardInterrupt: an Error named so, "Interrupted" unless told otherwise', () => {
    const e = new KeyboardInterrupt();
    assert.ok(e instanceof Error);
    assert.equal(e.name, 'KeyboardInterrupt');
    assert.equal(e.message, 'Interrupted');
    assert.equal(new KeyboardInterrupt('stop').message, 'stop');
  });

  it('cellContext carries the cell into callbacks started inside it', async () => {
    const c = newCell(header, 1);
    assert.equal(cellContext.getStore(), undefined);
    const seen = await cellContext.run(c, () => new Promise((resolve) => setImmediate(() => resolve(cellContext.getStore()))));
    assert.equal(seen, c);
  });
});
