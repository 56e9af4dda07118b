// kernel/socket-sender.ts: every send is handed to the socket at once, in order; a send that throws
// or rejects goes to onError (once) and never escapes; drained() is already settled.

import assert from 'assert';
import { SocketSender } from '../../kernel/socket-sender';
import { settle } from './fake-sockets';

describe('kernel socket sender edges', function () {
  // A change that leaves a request unanswered fails here quickly instead of hanging.
  this.timeout(2000);
  it('sends synchronously and in order; errors thrown or rejected reach onError, nothing else', async () => {
    const sent: string[] = [];
    const errors: unknown[] = [];
    let mode: 'ok' | 'throw' | 'reject' = 'ok';
    const sender = new SocketSender(
      {
        send: (frames) => {
          if (mode === 'throw') throw new Error('thrown');
          sent.push(frames.map(String).join('|'));
          return mode === 'reject' ? Promise.reject(new Error('rejected')) : Promise.resolve();
        },
      },
      (e) => void errors.push((e as Error).message),
    );
    sender.enqueue([Buffer.from('a'), Buffer.from('b')]);
    sender.enqueue([Buffer.from('c')]);
    assert.deepStrictEqual(sent, ['a|b', 'c'], 'handed over before enqueue returns');
    mode = 'throw';
    assert.doesNotThrow(() => sender.enqueue([Buffer.from('d')]));
    assert.deepStrictEqual(errors, ['thrown']);
    mode = 'reject';
    sender.enqueue([Buffer.from('e')]);
    await settle(2);
    assert.deepStrictEqual(errors, ['thrown', 'rejected']);
    assert.deepStrictEqual(sent, ['a|b', 'c', 'e']);
    const drained = sender.drained();
    assert.ok(drained instanceof Promise);
    assert.strictEqual(await drained, undefined);
  });
});
