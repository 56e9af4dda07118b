// `bench overhead` says where a call's time beyond its kernel goes (docs/BENCHMARKS.md, "Per-op overhead"): the
// parts of OverheadBreakdown must all be there, none negative, and add up to the marked calls' own total, so that
// a part dropped from the report (or a phase left out of the sum) shows up as a gap here. Extra work placed
// before the op's entry or after it returns must land in the part that names that place, not elsewhere.

import { strict as assert } from 'assert';
import { performance } from 'perf_hooks';
import { Backend } from '../../lib/backend';
import { Tensor } from '../../lib/tensor';
import * as conv from '../../lib/ops/conv';
import { BREAKDOWN_PARTS, OverheadRow, overheadMarkdown, reportHeader, timeOverheadCases } from '../../lib/bench/overhead';

describe('bench overhead: where the time beyond the kernel goes', function () {
  this.timeout(30000);
  let backend: Backend;
  let inputs: conv.ConvInputs;
  let rows: OverheadRow[];
  const busy = (us: number) => {
    const end = performance.now() + us / 1000;
    while (performance.now() < end) { /* work of the case itself, outside the op */ }
  };

  before(async () => {
    backend = Backend.open('host');
    const C = 256, K = 4, T = 8;
    inputs = {
      x: Tensor.random([T, C], 'bf16', { seed: 1 }).to(backend),
      weight: Tensor.random([C, K], 'bf16', { seed: 2, scale: 0.5 }).to(backend),
      queryStartLoc: [0, T],
      convState: Tensor.random([1, C, K - 1], 'f32', { seed: 3 }).to(backend),
    };
    const opts = { arm: 'vec', mapping: 'exact' as const, backend };
    const kernel = conv.prepareTimed(inputs, opts);
    try {
      rows = await timeOverheadCases([
        { op: 'conv', variant: 'plain', kernel, call: () => conv.forwardSync(inputs, opts).release() },
        { op: 'conv', variant: 'busy before', kernel, call: () => { busy(200); conv.forwardSync(inputs, opts).release(); } },
        { op: 'conv', variant: 'busy after', kernel, call: () => { conv.forwardSync(inputs, opts).release(); busy(200); } },
        { op: 'conv', variant: 'async', kernel, call: async () => (await conv.forward(inputs, opts)).release() },
        { op: 'conv', variant: 'two ops', kernel, call: () => { conv.forwardSync(inputs, opts).release(); conv.forwardSync(inputs, opts).release(); } },
        { op: 'alloc', variant: 'no kernel', kernel: null, call: () => backend.free(backend.alloc(1 << 16)) },
      ], { backend, calls: 100 });
    } finally {
      kernel.release();
    }
  });
  after(() => {
    for (const t of [inputs.x, inputs.weight, inputs.convState]) t.release();
    backend.close();
  });

  it('every part is present once, in call order, non-negative, labelled, and the parts add up to the total', () => {
    const plain = rows[0];
    const b = plain.breakdown;
    assert.ok(b, 'a synchronous op call with a kernel has a breakdown');
    assert.deepEqual(b.parts.map((p) => p.part), [...BREAKDOWN_PARTS]);
    assert.deepEqual(BREAKDOWN_PARTS, ['callSite', 'prepare', 'encode', 'koffiFixed', 'nativeRest', 'finish', 'release']);
    for (const p of b.parts) {
      assert.ok(Number.isFinite(p.us) && p.us >= 0, `${p.part}: ${p.us} µs`);
      assert.equal(p.how, p.part === 'nativeRest' ? 'by subtraction' : 'measured', p.part);
    }
    const sum = b.parts.reduce((a, p) => a + p.us, 0);
    assert.ok(sum <= b.totalUs + 1e-9, `parts ${sum} µs ≤ total ${b.totalUs} µs`);
    // Not only ≤: equal, so that any part left out (the smallest is koffiFixed, ~0.02 µs) opens a gap.
    assert.ok(Math.abs(sum - b.totalUs) < 1e-6, `parts ${sum} µs = total ${b.totalUs} µs`);
    const smallest = Math.min(...b.parts.map((p) => p.us));
    assert.ok(smallest > 1e-6, `every part is a time the call spends (smallest ${smallest} µs)`);
    assert.ok(b.calls === 100 && b.kept >= 70 && b.kept <= b.calls, `kept ${b.kept} of ${b.calls}`);
    assert.ok(b.totalUs > 0 && b.totalUs < 1000, `total ${b.totalUs} µs`);
  });

  it('work before the op lands in callSite, work after it in release, and nowhere else', () => {
    const part = (r: OverheadRow, name: string) => r.breakdown!.parts.find((p) => p.part === name)!.us;
    const [plain, before, after] = rows;
    assert.ok(part(before, 'callSite') - part(plain, 'callSite') > 150, `callSite ${part(before, 'callSite')} µs with 200 µs of work before the op`);
    assert.ok(part(after, 'release') - part(plain, 'release') > 150, `release ${part(after, 'release')} µs with 200 µs of work after it`);
    for (const name of ['prepare', 'encode', 'nativeRest', 'finish']) {
      for (const r of [before, after]) assert.ok(part(r, name) < part(plain, name) + 100, `${r.variant}: ${name} ${part(r, name)} µs, plain ${part(plain, name)} µs`);
    }
  });

  it('no breakdown where the marks cannot tell one synchronous op call: async, two ops, no kernel', () => {
    const by = (v: string) => rows.find((r) => r.variant === v)!;
    assert.equal(by('async').breakdown, undefined);
    assert.equal(by('two ops').breakdown, undefined);
    assert.equal(by('no kernel').breakdown, undefined);
    assert.ok(by('async').overheadUs !== null, 'the overhead column stays for every case with a kernel');
  });

  it('the markdown report keeps the overhead column and adds the breakdown beside it', () => {
    const md = overheadMarkdown({ bench: 'overhead', ...reportHeader(backend), validated: [], rows, cache: backend.cacheStats() }, 'test');
    assert.match(md, /\| op \| variant \| kernel µs \| wall µs \| p10 \| p90 \| n \| over µs \| ≤ target \| note \|/);
    const head = md.split('\n').find((l) => l.startsWith('| op | variant | over µs | marked µs |'));
    assert.ok(head, 'the breakdown table');
    for (const p of BREAKDOWN_PARTS) assert.ok(head.includes(`| ${p}`), `column ${p}`);
    assert.ok(head.includes('nativeRest (by subtraction)'), 'the subtracted part says so');
    assert.equal(md.split('\n').filter((l) => l.startsWith('| conv | plain |')).length, 2, 'the plain case in both tables');
  });
});
