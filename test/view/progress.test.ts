import { strict as assert } from 'assert';
import { progress } from '../../lib/view/progress';
import { withKernel } from './fake-kernel';

describe('progress', () => {
  it('in a kernel: one display, in-place updates throttled to ≤ 10/s, a summary at the end', async () => {
    let now = 0;
    const { outputs } = await withKernel(() => {
      const p = progress(200, { label: 'equivalence matrix', clock: () => now });
      for (let i = 0; i < 200; i++) {
        now += 5; // 200 ticks over 1 s
        p.tick(1, `arm ${i % 4}`);
      }
      p.done('200 of 200 identical');
      assert.equal(p.count, 200);
    });
    const first = outputs[0];
    assert.equal(first.options?.update, false);
    const id = first.options?.displayId;
    assert.ok(id && id.startsWith('gdnlab-progress'));
    assert.ok(outputs.every((o) => o.options?.displayId === id), 'every update replaces the same output');
    const updates = outputs.slice(1);
    assert.ok(updates.every((o) => o.options?.update === true));
    // 1 s of ticks → at most 10 throttled updates, plus the summary.
    assert.ok(updates.length - 1 <= 10, `${updates.length - 1} updates`);
    assert.ok(updates.length - 1 >= 9);
    const last = outputs[outputs.length - 1].data;
    assert.match(String(last['text/plain']), /^equivalence matrix: 200 of 200 identical \(1\.0 s\)$/);
    assert.match(String(outputs[3].data['text/plain']), /equivalence matrix [█░]+ \d+\/200 \(\d+(\.\d)?%\) .* arm \d/);
    assert.match(String(outputs[3].data['text/html']), /<progress value="0\.\d+" max="1"/);
  });

  it('ticks after done are ignored and done is idempotent', async () => {
    const { outputs } = await withKernel(() => {
      const p = progress(3, { clock: () => 0 });
      p.done();
      p.tick();
      p.done('again');
    });
    assert.equal(outputs.length, 2);
    assert.match(String(outputs[1].data['text/plain']), /progress: 0 of 3 done/);
  });

  it('on a terminal: \\r lines at most 4 per second, a final newline', () => {
    let now = 0;
    const writes: string[] = [];
    const p = progress(100, { label: 'trials', clock: () => now, stream: { isTTY: true, write: (s: string) => writes.push(s) } });
    for (let i = 0; i < 100; i++) {
      now += 10;
      p.tick();
    }
    p.done();
    assert.ok(writes.length - 1 <= 4, `${writes.length - 1} progress lines in 1 s`);
    assert.ok(writes.slice(0, -1).every((w) => w.startsWith('\r') && !w.endsWith('\n')));
    assert.match(writes[writes.length - 1], /^\rtrials: 100 of 100 done \(1\.0 s\)\x1b\[K\n$/);
  });

  it('when stderr is not a terminal: nothing', () => {
    const writes: string[] = [];
    const p = progress(10, { stream: { isTTY: false, write: (s: string) => writes.push(s) } });
    for (let i = 0; i < 10; i++) p.tick();
    p.done();
    assert.deepEqual(writes, []);
    assert.equal(p.updates, 0);
  });

  it('refuses a bad total or tick', () => {
    assert.throws(() => progress(-1), /total: expected a finite number ≥ 0/);
    assert.throws(() => progress(NaN), /total/);
    const p = progress(1, { stream: { write: () => 0 } });
    assert.throws(() => p.tick(Infinity), /n: expected a finite number/);
  });
});
