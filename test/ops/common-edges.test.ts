// Edge tests for lib/ops/common.ts (argument checks, namedRanges / expectOut alias checks, Staging,
// opCall, markCalls) on the host backend with small tensors, and opCall over a stand-in backend (no
// kernel runs), so that Stryker can take the file in (docs/TESTING.md, "Mutation testing").

import { strict as assert } from 'assert';
import { Tensor } from '../../lib/tensor';
import { Backend } from '../../lib/backend';
import {
  DTYPE_CODE, POISON_U32, backendOf, expectTensor, expectDType, expectShape, expectContiguous, namedRanges, expectOut,
  Staging, CALL_MARK, CALL_MARK_SLOTS, markCalls, opCall, NamedRange,
} from '../../lib/ops/common';
import { openBackend } from '../backends';

describe('ops/common edges', () => {
  let backend: Backend;
  let other: Backend;
  before(() => {
    backend = openBackend('host');
    other = Backend.open('host');
  });
  after(() => other.close());

  it('dtype codes and poison patterns are those of gdn.h', () => {
    assert.deepEqual(DTYPE_CODE, { f32: 0, bf16: 1, f16: 2, i32: 3, i8: 4 });
    assert.equal(POISON_U32.f32, 0x7fc0dead);
    assert.equal(POISON_U32.bf16, 0x7fc17fc1);
    assert.equal(CALL_MARK_SLOTS, 6);
    assert.deepEqual(CALL_MARK, { entered: 0, prepared: 1, encoded: 2, returned: 3, finished: 4, entries: 5 });
  });

  it('backendOf takes the option first', () => {
    assert.equal(backendOf({ backend: other }), other);
  });

  it('expectTensor names the argument, refuses non-tensors and released ones', () => {
    const t = Tensor.zeros([2]);
    assert.equal(expectTensor(t, 'x'), t);
    assert.throws(() => expectTensor([1], 'x'), (e: Error) => e instanceof TypeError && e.message === 'x: expected a Tensor, got [1]');
    const r = Tensor.zeros([2]);
    r.release();
    assert.throws(() => expectTensor(r, 'w'), (e: Error) => e.message === 'w: tensor [2] f32 was released');
  });

  it('expectDType lists the allowed dtypes', () => {
    expectDType(Tensor.zeros([1], 'bf16'), 'x', ['f32', 'bf16']);
    assert.throws(() => expectDType(Tensor.zeros([1], 'f16'), 'x', ['f32', 'bf16']),
      (e: Error) => e instanceof TypeError && e.message === 'x: expected dtype f32 or bf16, got f16');
  });

  it('expectShape: rank, each size, null wildcards and names', () => {
    const t = Tensor.zeros([2, 3]);
    expectShape(t, 'x', [2, 3]);
    expectShape(t, 'x', [null, 3]);
    expectShape(t, 'x', [2, null]);
    const msg = (f: () => void, m: string) => assert.throws(f, (e: Error) => e instanceof RangeError && e.message === m);
    msg(() => expectShape(t, 'x', [2, 4]), 'x: expected shape [2, 4], got [2, 3]');
    msg(() => expectShape(t, 'x', [3, 3]), 'x: expected shape [3, 3], got [2, 3]');
    msg(() => expectShape(t, 'x', [2, 3, 1]), 'x: expected shape [2, 3, 1], got [2, 3]');
    msg(() => expectShape(t, 'x', [2]), 'x: expected shape [2], got [2, 3]');
    msg(() => expectShape(t, 'x', [null, 4], ['T', 'C']), 'x: expected shape [T, C=4], got [2, 3]');
    msg(() => expectShape(t, 'x', [null, 4]), 'x: expected shape [*, 4], got [2, 3]');
    msg(() => expectShape(t, 'x', [null, 4], ['T']), 'x: expected shape [T, 4], got [2, 3]');
  });

  it('expectContiguous gives the row stride', () => {
    expectContiguous(Tensor.zeros([2, 3]), 'x');
    expectContiguous(Tensor.zeros([1, 3], 'f32', { rowStride: 5 }), 'x');
    assert.throws(() => expectContiguous(Tensor.zeros([2, 3], 'f32', { rowStride: 5 }), 'x'),
      (e: Error) => e instanceof RangeError && e.message === 'x: expected a contiguous tensor, got row stride 5 for rows of 3');
  });

  it('namedRanges: device tensors of this backend only, byte extents', () => {
    const a = Tensor.empty([2, 3], 'f32', { backend, rowStride: 5 });
    const h = Tensor.zeros([2]);
    const o = Tensor.empty([2], 'f32', { backend: other });
    const z = Tensor.empty([0, 3], 'f32', { backend });
    const r = Tensor.empty([2], 'f32', { backend });
    r.release();
    const got = namedRanges([['a', a], ['h', h], ['o', o], ['z', z], ['r', r], ['n', null], ['u', undefined]], backend);
    assert.deepEqual(got, [{ name: 'a', lo: a.addr, hi: a.addr + 32 }]);
    a.release(); o.release(); z.release();
  });

  it('expectOut: each refusal with its message, and aliasing at the byte edges', () => {
    const a = Tensor.empty([4], 'f32', { backend });
    const view = (off: number, n: number) => new Tensor([n], 'f32', a.storage, { offset: off });
    const ranges = (r: NamedRange[]) => r;
    const ok = Tensor.empty([2], 'f32', { backend });
    assert.equal(expectOut(ok, 'out.y', backend, [2], 'f32', []), ok);
    const msg = (f: () => void, type: Function, m: string) => assert.throws(f, (e: Error) => e instanceof type && e.message === m);
    msg(() => expectOut(3, 'out.y', backend, [2], 'f32', []), TypeError, 'out.y: expected a Tensor (an output buffer to write into), got 3');
    const rel = Tensor.empty([2], 'f32', { backend });
    rel.release();
    msg(() => expectOut(rel, 'out.y', backend, [2], 'f32', []), Error, 'out.y: tensor [2] f32 was released');
    msg(() => expectOut(Tensor.zeros([2]), 'out.y', backend, [2], 'f32', []), TypeError,
      'out.y: expected a tensor on the host backend of this call (Tensor.empty(shape, dtype, { backend })), got a host tensor');
    const o = Tensor.empty([2], 'f32', { backend: other });
    msg(() => expectOut(o, 'out.y', backend, [2], 'f32', []), TypeError,
      'out.y: expected a tensor on the host backend of this call (Tensor.empty(shape, dtype, { backend })), got a tensor of another host backend');
    o.release();
    msg(() => expectOut(ok, 'out.y', backend, [3], 'f32', []), RangeError, 'out.y: expected shape [3], got [2]');
    msg(() => expectOut(ok, 'out.y', backend, [2, 1], 'f32', []), RangeError, 'out.y: expected shape [2, 1], got [2]');
    msg(() => expectOut(ok, 'out.y', backend, [2], 'bf16', []), TypeError, 'out.y: expected dtype bf16, got f32');
    const padded = Tensor.empty([2, 2], 'f32', { backend, rowStride: 3 });
    msg(() => expectOut(padded, 'out.y', backend, [2, 2], 'f32', []), RangeError,
      'out.y: expected a contiguous tensor, got row stride 3 for rows of 2');
    // a = bytes [lo, lo+16); out = elements 1..2 = bytes [lo+4, lo+12).
    const out = view(1, 2);
    const lo = a.addr;
    const alias = 'out.y: shares memory with x (an output must not alias an input or another output)';
    expectOut(out, 'out.y', backend, [2], 'f32', ranges([{ name: 'x', lo, hi: lo + 4 }]));        // ends where out starts
    expectOut(out, 'out.y', backend, [2], 'f32', ranges([{ name: 'x', lo: lo + 12, hi: lo + 16 }])); // starts where out ends
    msg(() => expectOut(out, 'out.y', backend, [2], 'f32', [{ name: 'x', lo, hi: lo + 5 }]), RangeError, alias);
    msg(() => expectOut(out, 'out.y', backend, [2], 'f32', [{ name: 'x', lo: lo + 11, hi: lo + 16 }]), RangeError, alias);
    expectOut(out, 'out.y', backend, [2], 'f32', [{ name: 'out.y', lo, hi: lo + 16 }]);  // itself is skipped
    // an empty output has no bytes to share
    const empty = Tensor.empty([0], 'f32', { backend });
    expectOut(empty, 'out.y', backend, [0], 'f32', [{ name: 'x', lo: 0, hi: Number.MAX_SAFE_INTEGER }]);
    for (const t of [a, ok, padded, empty]) t.release();
  });

  it('Staging: inputs copied and released, outputs poisoned, mutable copies, copyInto', () => {
    const st = new Staging(backend);
    assert.equal(st.backend, backend);
    const h = Tensor.from([1, 2, 3, 4, 5, 6], [2, 3], 'f32');
    const d = st.input(h);
    assert.equal(d.location, 'device');
    assert.deepEqual(d.toArray(), [[1, 2, 3], [4, 5, 6]]);
    assert.equal(st.input(d), d);  // already there: used as it is, not a temp
    const od = Tensor.from([7], [1]).to(other);
    const d2 = st.input(od);
    assert.equal(d2.backend, backend);
    const kept = st.output([2], 'f32');
    const temp = st.output([3], 'bf16', true);
    assert.deepEqual(Array.from(kept.bits()), [0x7fc0dead, 0x7fc0dead]);
    assert.deepEqual(Array.from(temp.bits()), [0x7fc1, 0x7fc1, 0x7fc1]);
    assert.deepEqual(st.outputs([]), []);
    const [p, q] = st.outputs([[[1], 'f32'], [[2], 'bf16']]);
    assert.deepEqual(Array.from(p.bits()), [0x7fc0dead]);
    assert.deepEqual(Array.from(q.bits()), [0x7fc1, 0x7fc1]);
    // mutableCopy of a device tensor: a new buffer with the same layout and elements
    const padded = Tensor.from([1, 2, 3, 4], [2, 2], 'f32', { rowStride: 3 }).to(backend);
    const m = st.mutableCopy(padded);
    assert.notEqual(m.addr, padded.addr);
    assert.equal(m.rowStride, 3);
    assert.deepEqual(m.toArray(), [[1, 2], [3, 4]]);
    const mz = st.mutableCopy(Tensor.empty([0], 'f32', { backend }));
    assert.equal(mz.numel, 0);
    const mh = st.mutableCopy(h);
    assert.equal(mh.backend, backend);
    assert.deepEqual(mh.toArray(), [[1, 2, 3], [4, 5, 6]]);
    // copyInto from the host (an offset view: its own elements) and from the device
    const dst = Tensor.empty([2], 'f32', { backend });
    const src = Tensor.from([9, 8, 7, 6], [4], 'f32').sliceCols(1, 2);
    assert.equal(st.copyInto(dst, src), dst);
    assert.deepEqual(dst.toArray(), [8, 7]);
    st.copyInto(dst, Tensor.from([5, 4], [2]).to(backend));
    assert.deepEqual(dst.toArray(), [5, 4]);
    st.copyInto(dst, Tensor.zeros([0]));
    assert.deepEqual(dst.toArray(), [5, 4]);
    st.release();
    assert.ok(d.released && d2.released && temp.released);
    assert.ok(!kept.released && !p.released && !m.released);
    st.release();  // empty now: nothing twice
    for (const t of [kept, p, q, padded, m, mh, dst]) t.release();
    od.release();
  });

  it('expectOut compares every size and the rank both ways', () => {
    const t = Tensor.empty([2, 3], 'f32', { backend });
    const msg = (shape: number[], m: string) =>
      assert.throws(() => expectOut(t, 'out.y', backend, shape, 'f32', []), (e: Error) => e instanceof RangeError && e.message === m);
    msg([2], 'out.y: expected shape [2], got [2, 3]');      // a prefix of the shape: the rank tells
    msg([2, 4], 'out.y: expected shape [2, 4], got [2, 3]'); // one size of two differs
    t.release();
  });

  it('Staging calls the backend as it should: copies on it, uploads from elsewhere, nothing for no bytes', () => {
    const spy = Backend.open('host');
    const calls: string[] = [];
    const copy = spy.copy.bind(spy);
    const upload = spy.upload.bind(spy);
    const allocFilled = spy.allocFilled.bind(spy);
    Object.assign(spy, {
      copy: (d: number, s: number, n: number) => { calls.push(`copy ${n}`); copy(d, s, n); },
      upload: (a: number, data: Uint8Array) => { calls.push(`upload ${Array.from(data).join(',')}`); upload(a, data); },
      allocFilled: (b: number[], p: number[]) => { calls.push(`allocFilled ${b.length}`); return allocFilled(b, p); },
    });
    try {
      const st = new Staging(spy);
      const mine = Tensor.empty([2], 'f32', { backend: spy });
      assert.equal(st.input(mine), mine);
      assert.deepEqual(st.outputs([]), []);
      assert.deepEqual(calls, []);
      // mutableCopy: a tensor of this backend is copied on it; one of another backend is uploaded; no bytes, no copy
      const src = Tensor.from([1, 2], [2], 'i8').to(spy);
      calls.length = 0;
      const m = st.mutableCopy(src);
      assert.deepEqual(calls, ['copy 2']);
      calls.length = 0;
      const fromOther = Tensor.from([3, 4], [2], 'i8').to(other);
      const m2 = st.mutableCopy(fromOther);
      assert.deepEqual(calls, ['upload 3,4']);
      assert.equal(m2.backend, spy);
      calls.length = 0;
      const z = Tensor.empty([0], 'i8', { backend: spy });
      st.mutableCopy(z).release();
      assert.deepEqual(calls, []);
      // copyInto: device of this backend by copy; another backend's and host views by upload of their own bytes
      const dst = Tensor.empty([2], 'i8', { backend: spy });
      st.copyInto(dst, src);
      st.copyInto(dst, fromOther);
      st.copyInto(dst, Tensor.from([5, 6, 7, 8, 9, 10], [6], 'i8').sliceCols(1, 2));
      st.copyInto(dst, Tensor.zeros([0], 'i8'));
      st.copyInto(dst, Tensor.empty([0], 'i8', { backend: spy }));
      assert.deepEqual(calls, ['copy 2', 'upload 3,4', 'upload 6,7']);
      assert.deepEqual(dst.toArray(), [6, 7]);
      st.release();
      assert.ok(!mine.released && !src.released);
      for (const t of [mine, src, m, m2, fromOther, z, dst]) t.release();
    } finally {
      spy.close();
    }
  });

  describe('opCall over a stand-in backend', () => {
    type P = { backend: Backend; log: string[] };
    function make(status: number, fail: 'args' | 'call' | null, log: string[]) {
      const fake = {
        lib: { tag: 'lib' },
        native: 'H',
        callAsync: async (fn: (...a: unknown[]) => unknown, args: unknown[], what: string) => {
          log.push(`async ${what} ${args.join(',')}`);
          const st = fn(...args) as number;
          if (st !== 0) throw new Error(`${what}: failed ${st}`);
        },
        check: (st: number, what: string) => {
          log.push(`check ${st} ${what}`);
          if (st !== 0) throw new Error(`${what}: failed ${st}`);
        },
      } as unknown as Backend;
      return opCall<number, string, P, string>({
        what: 'demo.forward',
        prepare: (i, o, path) => {
          log.push(`prepare ${i} ${o} ${path}`);
          return { backend: fake, log };
        },
        entry: (lib) => {
          assert.deepEqual(lib, { tag: 'lib' });
          return ((...a: unknown[]) => {
            log.push(`entry ${a.join(',')}`);
            return status;
          }) as never;
        },
        args: (_p, path) => {
          if (fail === 'args') throw new Error('bad args');
          return [`A-${path}`];
        },
        finish: (_p, args) => {
          log.push('finish');
          return `done ${args.join(',')}`;
        },
        abandon: () => log.push('abandon'),
      });
    }

    it('forward and forwardSync prepare, call, finish in order', async () => {
      const log: string[] = [];
      const op = make(0, null, log);
      assert.equal(await op.forward(1, 'o'), 'done A-fresh');
      assert.deepEqual(log, ['prepare 1 o fresh', 'async demo.forward H,A-fresh', 'entry H,A-fresh', 'finish']);
      log.length = 0;
      assert.equal(op.forwardSync(2, 'p'), 'done A-scratch');
      assert.deepEqual(log, ['prepare 2 p scratch', 'entry H,A-scratch', 'check 0 demo.forward', 'finish']);
    });

    it('a failed call or args abandons and rethrows', async () => {
      const log: string[] = [];
      await assert.rejects(make(3, null, log).forward(1, 'o'), /^Error: demo.forward: failed 3$/);
      assert.deepEqual(log.slice(-1), ['abandon']);
      assert.ok(!log.includes('finish'));
      log.length = 0;
      assert.throws(() => make(3, null, log).forwardSync(1, 'o'), /^Error: demo.forward: failed 3$/);
      assert.deepEqual(log, ['prepare 1 o scratch', 'entry H,A-scratch', 'check 3 demo.forward', 'abandon']);
      log.length = 0;
      await assert.rejects(make(0, 'args', log).forward(1, 'o'), /bad args/);
      assert.deepEqual(log, ['prepare 1 o fresh', 'abandon']);
      log.length = 0;
      assert.throws(() => make(0, 'args', log).forwardSync(1, 'o'), /bad args/);
      assert.deepEqual(log, ['prepare 1 o scratch', 'abandon']);
    });

    it('markCalls: slots checked, each phase marked in order, off again with null', () => {
      assert.throws(() => markCalls(new Float64Array(5)), (e: Error) => e instanceof RangeError && e.message === 'markCalls: expected 6 slots, got 5');
      const m = new Float64Array(6);
      markCalls(m);
      try {
        const log: string[] = [];
        const before = performance.now();
        make(0, null, log).forwardSync(1, 'o');
        assert.equal(m[CALL_MARK.entries], 1);
        for (let i = 0; i < 5; i++) assert.ok(m[i] >= before, `slot ${i}`);
        for (let i = 1; i < 5; i++) assert.ok(m[i] >= m[i - 1], `slot ${i} after ${i - 1}`);
        make(0, null, log).forwardSync(1, 'o');
        assert.equal(m[CALL_MARK.entries], 2);
        const fin = m[CALL_MARK.finished];
        assert.throws(() => make(3, null, log).forwardSync(1, 'o'));
        assert.equal(m[CALL_MARK.entries], 3);
        assert.ok(m[CALL_MARK.returned] >= m[CALL_MARK.encoded]);
        assert.equal(m[CALL_MARK.finished], fin);  // a failed call does not reach finished
      } finally {
        markCalls(null);
      }
      const m2 = new Float64Array(7);
      markCalls(m2);
      markCalls(null);
      make(0, null, []).forwardSync(1, 'o');
      assert.deepEqual(Array.from(m2), [0, 0, 0, 0, 0, 0, 0]);
    });
  });
});
