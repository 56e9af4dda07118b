// The display channel and the figure helpers at their edges: a global that is not a channel, a
// channel without signal() or whose signal() throws, the metadata default, display ids that differ
// per call, what counts as a MIME bundle method, and the palette and alpha colours.

import { strict as assert } from 'assert';
import { MIME_BUNDLE, display, hasMimeBundle, inKernel, interrupted, kernelChannel, newDisplayId } from '../../lib/view/display';
import { PALETTE, paletteColor, withAlpha } from '../../lib/view/figure';
import { withKernel } from './fake-kernel';

const KERNEL = Symbol.for('gdnlab.kernel');

function withGlobal<T>(value: unknown, fn: () => T): T {
  (globalThis as Record<symbol, unknown>)[KERNEL] = value;
  try {
    return fn();
  } finally {
    delete (globalThis as Record<symbol, unknown>)[KERNEL];
  }
}

describe('display channel: edges', () => {
  it('outside a kernel: no channel, display returns false, not interrupted', () => {
    assert.equal(kernelChannel(), undefined);
    assert.equal(inKernel(), false);
    assert.equal(display({ data: { 'text/plain': 'x' } }), false);
    assert.equal(interrupted(), false);
  });

  it('a global without a display function is no channel', () => {
    for (const v of [{}, { display: 'no' }, 0, null]) {
      withGlobal(v, () => {
        assert.equal(kernelChannel(), undefined, String(v));
        assert.equal(inKernel(), false);
        assert.equal(display({ data: {} }), false);
        assert.equal(interrupted(), false);
      });
    }
  });

  it('in a kernel: display passes data, metadata ({} when absent) and options, and returns true', async () => {
    const { value, outputs } = await withKernel(() => {
      assert.equal(inKernel(), true);
      assert.equal(typeof kernelChannel()?.display, 'function');
      return [display({ data: { a: 1 } }), display({ data: { b: 2 }, metadata: { m: 3 } }, { displayId: 'd', update: true })];
    });
    assert.deepEqual(value, [true, true]);
    assert.deepEqual(outputs, [
      { data: { a: 1 }, metadata: {}, options: undefined },
      { data: { b: 2 }, metadata: { m: 3 }, options: { displayId: 'd', update: true } },
    ]);
  });

  it('interrupted: the signal\'s aborted flag; false when signal is missing or throws', async () => {
    await withKernel((k) => {
      assert.equal(interrupted(), false);
      k.controller.abort();
      assert.equal(interrupted(), true);
    });
    const channel = { display: () => undefined, clearOutput: () => undefined, executionCount: () => 1 };
    withGlobal(channel, () => assert.equal(interrupted(), false));
    withGlobal({ ...channel, signal: 'x' }, () => assert.equal(interrupted(), false));
    withGlobal({ ...channel, signal: () => { throw new Error('gone'); } }, () => assert.equal(interrupted(), false));
    withGlobal({ ...channel, signal: () => ({ aborted: true }) }, () => assert.equal(interrupted(), true));
  });

  it('newDisplayId: prefix, pid, time and a counter that grows by one per call', () => {
    const a = newDisplayId('p');
    const b = newDisplayId('p');
    const re = new RegExp(`^p-${process.pid}-([0-9a-z]+)-(\\d+)$`);
    const ma = re.exec(a);
    const mb = re.exec(b);
    assert.ok(ma && mb, `${a} ${b}`);
    assert.equal(Number(mb[2]), Number(ma[2]) + 1);
    assert.ok(Math.abs(parseInt(ma[1], 36) - Date.now()) < 60000);
    assert.match(newDisplayId(), new RegExp(`^gdnlab-${process.pid}-`));
  });

  it('hasMimeBundle: only a value with a function under MIME_BUNDLE', () => {
    assert.equal(hasMimeBundle(null), false);
    assert.equal(hasMimeBundle(undefined), false);
    assert.equal(hasMimeBundle(0), false);
    assert.equal(hasMimeBundle({}), false);
    assert.equal(hasMimeBundle({ [MIME_BUNDLE]: { data: {} } }), false);
    assert.equal(hasMimeBundle({ [MIME_BUNDLE]: () => ({ data: {} }) }), true);
  });
});

describe('figure helpers: edges', () => {
  it('paletteColor wraps around the ten colours', () => {
    assert.equal(PALETTE.length, 10);
    assert.equal(paletteColor(0), '#1f77b4');
    assert.equal(paletteColor(9), '#17becf');
    assert.equal(paletteColor(10), '#1f77b4');
    assert.equal(paletteColor(13), '#d62728');
  });

  it('withAlpha: #rrggbb (either case) to rgba(); anything else unchanged', () => {
    assert.equal(withAlpha('#1f77b4', 0.5), 'rgba(31,119,180,0.5)');
    assert.equal(withAlpha('#FF00aA', 0.25), 'rgba(255,0,170,0.25)');
    for (const c of ['#fff', '#1f77b4ff', 'x#1f77b4', '#1f77b4 ', 'red', '#1g77b4']) assert.equal(withAlpha(c, 0.5), c);
  });
});
