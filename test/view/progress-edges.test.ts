// Live progress at its edges, with a stand-in clock: the exact line and HTML (bar, count, percentage,
// seconds, note), the throttle boundaries (exactly minIntervalMs in a kernel; max(minIntervalMs,
// 250 ms) on a terminal), a total of 0, counts past the total or below 0, and the argument checks.

import { strict as assert } from 'assert';
import { progress } from '../../lib/view/progress';
import { withKernel } from './fake-kernel';

const bar = (filled: number) => '█'.repeat(filled) + '░'.repeat(24 - filled);
const meter = (v: string) => `<progress value="${v}" max="1" style="width:16em;vertical-align:middle"></progress> `;
const div = (inner: string) => `<div class="gdnlab-progress" style="font-family:monospace">${inner}</div>`;

describe('progress: edges', () => {
  it('in a kernel: the exact first line, updates at exactly minIntervalMs, the summary without a meter', async () => {
    let now = 1000;
    const { value: p, outputs } = await withKernel(() => {
      const p = progress(8, { label: 'L<', clock: () => now, minIntervalMs: 100 });
      now = 1099;
      p.tick(2, 'first');
      now = 1100;
      p.tick(1);
      now = 1199;
      p.tick();
      now = 1200;
      p.tick(1, '');
      now = 11000;
      p.done();
      return p;
    });
    assert.deepEqual(
      outputs.map((o) => o.data['text/plain']),
      [`L< ${bar(0)} 0/8 (0%) 0.0 s`, `L< ${bar(9)} 3/8 (37.5%) 0.1 s  first`, `L< ${bar(15)} 5/8 (62.5%) 0.2 s`, 'L<: 5 of 8 done (10 s)'],
    );
    assert.equal(outputs[0].data['text/html'], div(`${meter('0.0000')}L&lt; ${bar(0)} 0/8 (0%) 0.0 s`));
    assert.equal(outputs[1].data['text/html'], div(`${meter('0.3750')}L&lt; ${bar(9)} 3/8 (37.5%) 0.1 s  first`));
    assert.equal(outputs[3].data['text/html'], div('L&lt;: 5 of 8 done (10 s)'));
    assert.deepEqual(outputs.map((o) => o.options?.update), [false, true, true, true]);
    assert.deepEqual(outputs.map((o) => o.metadata), [{}, {}, {}, {}]);
    assert.equal(p.count, 5);
    assert.equal(p.updates, 4);
  });

  it('in a kernel: a total of 0 shows a full bar; counts past the total cap the bar, the meter and the percentage', async () => {
    let now = 0;
    const { outputs } = await withKernel(() => {
      const zero = progress(0, { clock: () => now, minIntervalMs: 0 });
      zero.tick(0);
      zero.done('nothing to do');
      const over = progress(4, { clock: () => now, minIntervalMs: 0 });
      over.tick(6);
      over.tick(-16);
      now = 9999;
      over.done();
    });
    assert.equal(outputs[0].data['text/plain'], `progress ${bar(24)} 0/0 (100%) 0.0 s`);
    assert.equal(outputs[0].data['text/html'], div(`${meter('1.0000')}progress ${bar(24)} 0/0 (100%) 0.0 s`));
    assert.equal(outputs[1].data['text/html'], div(`${meter('1.0000')}progress ${bar(24)} 0/0 (100%) 0.0 s`));
    assert.equal(outputs[2].data['text/plain'], 'progress: nothing to do (0.0 s)');
    assert.equal(outputs[4].data['text/plain'], `progress ${bar(24)} 6/4 (100%) 0.0 s`);
    assert.equal(outputs[4].data['text/html'], div(`${meter('1.0000')}progress ${bar(24)} 6/4 (100%) 0.0 s`));
    assert.equal(outputs[5].data['text/plain'], `progress ${bar(0)} -10/4 (-250%) 0.0 s`);
    assert.equal(outputs[6].data['text/plain'], 'progress: -10 of 4 done (10.0 s)');
  });

  it('on a terminal: the first tick writes, then at most every max(minIntervalMs, 250) ms', () => {
    const run = (minIntervalMs: number | undefined, times: number[]) => {
      let now = 0;
      const writes: string[] = [];
      const p = progress(100, { label: 't', clock: () => now, minIntervalMs, stream: { isTTY: true, write: (s: string) => writes.push(s) } });
      for (const t of times) {
        now = t;
        p.tick();
      }
      return { writes, p };
    };
    const a = run(undefined, [0, 249, 250, 499, 500]);
    assert.deepEqual(a.writes, [`\rt ${bar(0)} 1/100 (1%) 0.0 s\x1b[K`, `\rt ${bar(1)} 3/100 (3%) 0.3 s\x1b[K`, `\rt ${bar(1)} 5/100 (5%) 0.5 s\x1b[K`]);
    assert.equal(a.p.updates, 3);
    const b = run(300, [0, 299, 300]);
    assert.equal(b.writes.length, 2);
    assert.match(b.writes[1], /^\rt [█░]+ 3\/100 \(3%\) 0\.3 s\x1b\[K$/);
    const c = run(100, [0, 200, 250]);
    assert.equal(c.writes.length, 2);
    b.p.done('ok');
    assert.equal(b.writes[2], '\rt: ok (0.3 s)\x1b[K\n');
    assert.equal(b.p.updates, 3);
  });

  it('outside a kernel with the default stream (not a terminal under mocha): nothing written, no error', () => {
    const p = progress(2);
    p.tick();
    p.tick(1, 'note');
    p.done();
    assert.equal(p.count, 2);
    if (!process.stderr.isTTY) assert.equal(p.updates, 0);
  });

  it('in a kernel with the default clock (performance.now): elapsed seconds, not NaN', async () => {
    const { outputs } = await withKernel(() => progress(2, { label: 'c' }).done());
    assert.match(String(outputs[1].data['text/plain']), /^c: 0 of 2 done \(\d+\.\d s\)$/);
  });

  it('after done: ticks change nothing and a second done sends nothing', async () => {
    let now = 0;
    const { value: p, outputs } = await withKernel(() => {
      const p = progress(5, { clock: () => now, minIntervalMs: 0 });
      p.done();
      now = 500;
      p.tick(3, 'late');
      p.done('again');
      return p;
    });
    assert.equal(p.count, 0);
    assert.equal(outputs.length, 2);
    assert.equal(p.updates, 2);
  });

  it('refuses a total that is not a finite number ≥ 0, a negative or NaN minIntervalMs, a non-finite tick', () => {
    for (const t of [-1, NaN, Infinity, '3', undefined]) assert.throws(() => progress(t as number, { stream: { write: () => 0 } }), /^RangeError: total: expected a finite number ≥ 0, got /, String(t));
    assert.throws(() => progress(1, { minIntervalMs: -1 }), /^RangeError: minIntervalMs: expected a number ≥ 0, got -1/);
    assert.throws(() => progress(1, { minIntervalMs: NaN }), /^RangeError: minIntervalMs/);
    const p = progress(1, { minIntervalMs: 0, stream: { write: () => 0 } });
    assert.throws(() => p.tick(NaN), /^RangeError: n: expected a finite number, got /);
    assert.throws(() => p.tick('1' as never), /^RangeError: n: expected a finite number/);
    assert.throws(() => p.tick(-Infinity), /^RangeError: n/);
    assert.equal(p.count, 0);
  });
});
