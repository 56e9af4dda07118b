// lib/bench/host.ts without a kernel: the tensors, the ops' forward/chain/prepareTimed, copyOp, the arm table and
// the revision replaced by recorders (restored after each test), and a stand-in host backend whose timeOps returns
// scripted samples. Asserted exactly: which arms are checked and timed, the options of every timeOps call (warm-up,
// rounds, rotated order, no flush), the rows and copies built from the samples, the log lines, the releases, and
// hostMarkdown's text.

import { strict as assert } from 'assert';
import * as os from 'os';
import { Stubs } from '../cli/edges-helpers';
import { Tensor } from '../../lib/tensor';
import { benchHost, hostMarkdown, HostReport, HOST_TARGET_X_MEMCPY } from '../../lib/bench/host';
import { convBytes } from '../../lib/ops/conv';
import { postconvBytes } from '../../lib/ops/postconv';
import { fusedBytes } from '../../lib/ops/fused';
import type { Backend } from '../../lib/backend';

const convM = require('../../lib/ops/conv') as Record<string, unknown>;
const postM = require('../../lib/ops/postconv') as Record<string, unknown>;
const fusedM = require('../../lib/ops/fused') as Record<string, unknown>;
const copyM = require('../../lib/ops/copy') as Record<string, unknown>;
const tableM = require('../../lib/arms/table') as Record<string, unknown>;
const provM = require('../../lib/provenance') as Record<string, unknown>;

interface Rel { released: number }
const outs = (names: string[], diff: Record<string, number> = {}) => {
  const r: Record<string, unknown> & Rel = { released: 0 };
  names.forEach((n, i) => {
    const len = 4 + i;
    const bits = Array.from({ length: len }, (_, k) => (k < (diff[n] ?? 0) ? -1 : k + 10 * i));
    r[n] = { bits: () => bits };
  });
  r.release = () => void r.released++;
  return r;
};
const PC = ['q', 'k', 'v', 'g', 'beta'];
const FU = [...PC, 'convState'];

function setup(stubs: Stubs) {
  const log = {
    tensors: [] as { shape: number[]; dtype: string; opts: unknown; released: number; to: unknown }[],
    calls: [] as unknown[][],
    prepared: [] as ({ kind: string; label: string; released: number; opts: Record<string, unknown> })[],
    results: [] as Rel[],
    copies: [] as { bytes: number; opts: Record<string, unknown>; released: number }[],
  };
  stubs.set(Tensor, 'random', (shape: number[], dtype: string, opts: unknown) => {
    const t = { shape, dtype, opts, released: 0, to: undefined as unknown };
    log.tensors.push(t);
    return {
      to: (b: unknown) => {
        t.to = b;
        return { t, release: () => void t.released++, sliceCols: (s: number, c: number) => ({ of: t, s, c }) };
      },
    };
  });
  stubs.set(tableM, 'arms', (op: string) => ({
    conv: [
      { name: 'scalar', mutant: false, mappings: ['exact', 'exact-racy', 'sequence'] },
      { name: 'taps', mutant: true, mappings: ['exact'] },
      { name: 'vec', mutant: false, mappings: ['exact-racy', 'sequence'] },
    ],
    postconv: [{ name: 'tree', mutant: false }, { name: 'bad', mutant: true }, { name: 'fast', mutant: false }],
    fused: [{ name: 'fbad', mutant: true }, { name: 'f1', mutant: false }],
  } as Record<string, unknown>)[op]);
  stubs.set(provM, 'revision', () => 'REV');
  const prep = (kind: string) => (_inputs: unknown, opts: Record<string, unknown>, label: string) => {
    const p = { kind, label, released: 0, opts, release: () => void p.released++ };
    log.prepared.push(p);
    return p;
  };
  const track = <T extends Rel>(r: T) => (log.results.push(r), r);
  stubs.set(convM, 'forwardSync', (inputs: unknown, o: Record<string, unknown>) => {
    log.calls.push(['conv.forwardSync', inputs, o]);
    return track(outs(['out', 'convState'], o.arm === 'vec' ? { out: 1, convState: 2 } : o.mapping === 'exact' ? { out: 3 } : {}));
  });
  stubs.set(convM, 'prepareTimed', prep('conv'));
  stubs.set(postM, 'forward', async (inputs: unknown, o: Record<string, unknown>) => {
    log.calls.push(['postconv.forward', inputs, o]);
    return track(outs(PC, o.arm === 'fast' ? { q: 1, beta: 2 } : {}));
  });
  stubs.set(postM, 'prepareTimed', prep('postconv'));
  stubs.set(fusedM, 'chain', async (inputs: unknown, o: Record<string, unknown>) => {
    log.calls.push(['fused.chain', inputs, o]);
    return track(outs(FU));
  });
  stubs.set(fusedM, 'forwardSync', (inputs: unknown, o: Record<string, unknown>) => {
    log.calls.push(['fused.forwardSync', inputs, o]);
    return track(outs(FU, { k: 1, convState: 4 }));
  });
  stubs.set(fusedM, 'prepareTimed', prep('fused'));
  stubs.set(copyM, 'copyOp', (bytes: number, opts: Record<string, unknown>) => {
    const c = { kind: 'copy', bytes, opts, released: 0, label: opts.label, release: () => void c.released++ };
    log.copies.push(c);
    return c;
  });
  return log;
}

/** Samples (µs) of op i in round r: (i + 1)·1000 + 100·r (+ 7 in the warm-up call, which is discarded). */
function fakeBackend(kind: 'host' | 'cuda' = 'host') {
  const calls: { labels: string[]; cfg: Record<string, unknown> }[] = [];
  const backend = {
    kind,
    info: () => ({ name: 'Fake CPU' }),
    hostThreads: () => 3,
    timeOps: async (ops: { label: string }[], cfg: { rounds: number }) => {
      calls.push({ labels: ops.map((o) => o.label), cfg });
      const warm = calls.length % 2 === 1 ? 7 : 0;
      const s = new Float32Array(cfg.rounds * ops.length);
      for (let r = 0; r < cfg.rounds; r++) for (let i = 0; i < ops.length; i++) s[r * ops.length + i] = (i + 1) * 1000 + 100 * r + warm;
      return s;
    },
  };
  return { backend: backend as unknown as Backend, calls };
}

describe('bench host at its edges', () => {
  const stubs = new Stubs();
  afterEach(() => stubs.restore());

  it('refuses a backend other than host before touching anything', async () => {
    const log = setup(stubs);
    const { backend, calls } = fakeBackend('cuda');
    await assert.rejects(benchHost({ backend }), (e: unknown) => e instanceof Error && e.message === 'bench host: measures the host backend; got the cuda backend (use --backend host)');
    assert.equal(log.tensors.length + calls.length, 0);
  });

  it('quick: checks, times and reports every correct arm of conv, post-conv and fused', async () => {
    const log = setup(stubs);
    const { backend, calls } = fakeBackend();
    const lines: string[] = [];
    const before = Date.now();
    const r = await benchHost({ backend, quick: true, log: (l) => lines.push(l) });
    const T = 256;
    const dims = { Hk: 16, Hv: 32, Dk: 128, Dv: 128 };
    const bConv = convBytes({ T, C: 8192, K: 4, N: 1, nInitial: 1, xBytes: 2, outBytes: 2 });
    const bPost = postconvBytes(T, dims, 2, 2, 2);
    const bFused = fusedBytes(T, dims, { xBytes: 2, qkvBytes: 2, gateBytes: 2, N: 1, nInitial: 1, K: 4 });
    const mib = (b: number) => (b / 2 ** 20).toFixed(0);
    const convShape = `Qwen3.5-4B T=${T} (C=8192, bf16)`;
    const headShape = `Qwen3.5-4B (Hk=16, Hv=32) T=${T}`;
    assert.deepEqual(lines, [
      `bench host: conv ${convShape}: validating 3 arms against scalar`,
      `bench host: conv ${convShape}: timing 3 arms + memcpy of ${mib(bConv)} MiB, 3 rounds`,
      `bench host: post-conv ${headShape}: validating 2 arms against tree`,
      `bench host: post-conv ${headShape}: timing 2 arms + memcpy of ${mib(bPost)} MiB, 3 rounds`,
      `bench host: fused ${headShape}: validating 1 arms against the chain conv scalar -> post-conv tree`,
      `bench host: fused ${headShape}: timing 1 arms + memcpy of ${mib(bFused)} MiB, 3 rounds`,
    ]);
    const { time, rows, copies, ...head } = r;
    assert.deepEqual(head, { bench: 'host', cpu: 'Fake CPU', logicalCpus: os.cpus().length, threads: 3, revision: 'REV', rounds: 3, targetXMemcpy: HOST_TARGET_X_MEMCPY });
    assert.equal(HOST_TARGET_X_MEMCPY, 4);
    assert.ok(Date.parse(time) >= before - 1 && Date.parse(time) <= Date.now() + 1 && new Date(Date.parse(time)).toISOString() === time, time);

    // timeOps: a warm-up round then the timed rounds, rotated, never flushed; the memcpy last
    const convLabels = ['scalar/exact', 'scalar/sequence', 'vec/sequence', 'memcpy'];
    assert.deepEqual(calls, [
      { labels: convLabels, cfg: { rounds: 1, flushL2: false } },
      { labels: convLabels, cfg: { rounds: 3, flushL2: false, rotateOrder: true } },
      { labels: ['tree', 'fast', 'memcpy'], cfg: { rounds: 1, flushL2: false } },
      { labels: ['tree', 'fast', 'memcpy'], cfg: { rounds: 3, flushL2: false, rotateOrder: true } },
      { labels: ['f1', 'memcpy'], cfg: { rounds: 1, flushL2: false } },
      { labels: ['f1', 'memcpy'], cfg: { rounds: 3, flushL2: false, rotateOrder: true } },
    ]);
    assert.deepEqual(log.copies.map((c) => [c.bytes, c.opts.label, c.opts.backend === backend, c.released]), [
      [bConv, 'memcpy', true, 1], [bPost, 'memcpy', true, 1], [bFused, 'memcpy', true, 1],
    ]);
    // op i of n arms: samples (i+1)·1000 + {0, 100, 200} µs: median (i+1) + 0.1 ms; memcpy is op n
    const med = (i: number) => i + 1 + 0.1;
    const row = (op: string, shape: string, i: number, n: number, a: Record<string, unknown>) => {
      const s = [i + 1, i + 1.1, i + 1.2];
      return { op, shape, ...a, medianMs: med(i), p10Ms: s[0] + 0.02, p90Ms: s[2] - 0.02, n: 3, memcpyMs: med(n), xMemcpy: med(i) / med(n) };
    };
    const near = (got: HostReport['rows'], want: ReturnType<typeof row>[]) => {
      assert.equal(got.length, want.length);
      got.forEach((g, k) => {
        const w = want[k] as Record<string, unknown>;
        assert.deepEqual(Object.keys(g), Object.keys(w));
        for (const key of Object.keys(w)) {
          if (typeof w[key] === 'number' && !Number.isInteger(w[key])) assert.ok(Math.abs((g as unknown as Record<string, number>)[key] - (w[key] as number)) < 1e-5, `${k}.${key}: ${(g as unknown as Record<string, number>)[key]} vs ${w[key]}`);
          else assert.deepEqual((g as unknown as Record<string, unknown>)[key], w[key], `${k}.${key}`);
        }
      });
    };
    near(rows, [
      row('conv', convShape, 0, 3, { arm: 'scalar', mapping: 'exact', mismatches: 3, elements: 9 }),
      row('conv', convShape, 1, 3, { arm: 'scalar', mapping: 'sequence', mismatches: 0, elements: 9 }),
      row('conv', convShape, 2, 3, { arm: 'vec', mapping: 'sequence', mismatches: 3, elements: 9 }),
      row('postconv', headShape, 0, 2, { arm: 'tree', mismatches: 0, elements: 4 + 5 + 6 + 7 + 8 }),
      row('postconv', headShape, 1, 2, { arm: 'fast', mismatches: 3, elements: 30 }),
      row('fused', headShape, 0, 1, { arm: 'f1', mismatches: 5, elements: 30 + 9 }),
    ]);
    assert.equal(copies.length, 3);
    const copy = (op: string, shape: string, bytes: number, n: number) => ({ op, shape, bytes, medianMs: med(n), gbps: bytes / (med(n) * 1e6) });
    [copy('conv', convShape, bConv, 3), copy('postconv', headShape, bPost, 2), copy('fused', headShape, bFused, 1)].forEach((w, k) => {
      assert.deepEqual({ ...copies[k], medianMs: 0, gbps: 0 }, { ...w, medianMs: 0, gbps: 0 });
      assert.ok(Math.abs(copies[k].medianMs - w.medianMs) < 1e-5 && Math.abs(copies[k].gbps / w.gbps - 1) < 1e-6, JSON.stringify(copies[k]));
    });

    // the tensors: shapes, dtypes, seeds, staged on the backend, every one released once (slices are not)
    const C = 2 * 16 * 128 + 32 * 128;
    assert.deepEqual(log.tensors.map((t) => [t.shape, t.dtype, t.opts, t.to === backend, t.released]), [
      [[T, 8192], 'bf16', { seed: 1 }, true, 1],
      [[8192, 4], 'bf16', { seed: 2, scale: 0.5 }, true, 1],
      [[1, 8192, 3], 'f32', { seed: 3 }, true, 1],
      [[T, 64], 'bf16', { seed: 5 }, true, 1],
      [[T, C], 'bf16', { seed: 4 }, true, 1],
      [[32], 'f32', { seed: 6 }, true, 1],
      [[32], 'f32', { seed: 7 }, true, 1],
      [[T, 64], 'bf16', { seed: 9 }, true, 1],
      [[T, C], 'bf16', { seed: 8 }, true, 1],
      [[C, 4], 'bf16', { seed: 2, scale: 0.5 }, true, 1],
      [[1, C, 3], 'f32', { seed: 3 }, true, 1],
      [[32], 'f32', { seed: 6 }, true, 1],
      [[32], 'f32', { seed: 7 }, true, 1],
    ]);
    assert.ok(log.results.every((x) => x.released === 1), 'every forward result released');
    assert.ok(log.prepared.every((p) => p.released === 1), 'every prepared op released');
    // the calls: the reference first, each arm with the op's options
    const opts = log.calls.map((c) => {
      const { backend: b, ...o } = c[2] as Record<string, unknown>;
      assert.equal(b, backend);
      return [c[0], o];
    });
    const fo = { Hk: 16, Hv: 32, Dk: 128, Dv: 128, convDtype: 'bf16', qkvDtype: 'bf16' };
    assert.deepEqual(opts, [
      ['conv.forwardSync', { arm: 'scalar', mapping: 'sequence', outDtype: 'bf16' }],
      ['conv.forwardSync', { arm: 'scalar', mapping: 'exact', outDtype: 'bf16' }],
      ['conv.forwardSync', { arm: 'scalar', mapping: 'sequence', outDtype: 'bf16' }],
      ['conv.forwardSync', { arm: 'vec', mapping: 'sequence', outDtype: 'bf16' }],
      ['postconv.forward', { ...dims, arm: 'tree', qkvDtype: 'bf16' }],
      ['postconv.forward', { ...dims, arm: 'tree', qkvDtype: 'bf16' }],
      ['postconv.forward', { ...dims, arm: 'fast', qkvDtype: 'bf16' }],
      ['fused.chain', fo],
      ['fused.forwardSync', { ...fo, arm: 'f1' }],
    ]);
    const conv = log.calls[0][1] as Record<string, unknown>;
    assert.deepEqual(Object.keys(conv), ['x', 'weight', 'queryStartLoc', 'hasInitialState', 'convState']);
    assert.deepEqual([conv.queryStartLoc, conv.hasInitialState], [[0, T], [1]]);
    const post = log.calls[4][1] as Record<string, { of: unknown; s: number; c: number }>;
    assert.deepEqual(Object.keys(post), ['convOut', 'b', 'a', 'ALog', 'dtBias']);
    assert.deepEqual([post.b.s, post.b.c, post.a.s, post.a.c, post.b.of === log.tensors[3], post.a.of === log.tensors[3]], [0, 32, 32, 32, true, true]);
    const fin = log.calls[7][1] as Record<string, { of: unknown; s: number; c: number }>;
    assert.deepEqual(Object.keys(fin), ['x', 'weight', 'queryStartLoc', 'hasInitialState', 'convState', 'b', 'a', 'ALog', 'dtBias']);
    assert.deepEqual([fin.queryStartLoc, fin.hasInitialState, fin.b.s, fin.b.c, fin.a.s, fin.a.c, fin.b.of === log.tensors[7]], [[0, T], [1], 0, 32, 32, 32, true]);
    assert.deepEqual(log.prepared.map((p) => [p.kind, p.label, p.opts.arm, p.opts.backend === backend]), [
      ['conv', 'scalar/exact', 'scalar', true], ['conv', 'scalar/sequence', 'scalar', true], ['conv', 'vec/sequence', 'vec', true],
      ['postconv', 'tree', 'tree', true], ['postconv', 'fast', 'fast', true], ['fused', 'f1', 'f1', true],
    ]);
  });

  it('defaults: 7 rounds at T = 2048, no log; rounds as given; a failure releases what was made', async () => {
    setup(stubs);
    const { backend, calls } = fakeBackend();
    const r = await benchHost({ backend });
    assert.equal(r.rounds, 7);
    assert.equal(calls[1].cfg.rounds, 7);
    assert.equal(r.rows[0].shape, 'Qwen3.5-4B T=2048 (C=8192, bf16)');
    assert.equal(r.rows[0].n, 7);
    stubs.restore();

    setup(stubs);
    const b2 = fakeBackend();
    assert.equal((await benchHost({ backend: b2.backend, quick: true, rounds: 5 })).rounds, 5);
    assert.equal(b2.calls[1].cfg.rounds, 5);
    stubs.restore();

    for (const where of ['conv', 'postconv', 'fused'] as const) {
      const log = setup(stubs);
      const b3 = fakeBackend();
      const inner = (b3.backend as unknown as { timeOps: (...a: unknown[]) => Promise<unknown> }).timeOps;
      let n = 0;
      (b3.backend as unknown as { timeOps: unknown }).timeOps = async (ops: { label: string }[], cfg: unknown) => {
        if (ops.at(-2)!.label === { conv: 'vec/sequence', postconv: 'fast', fused: 'f1' }[where] && n++ === 1) throw new Error('timing failed');
        return inner(ops, cfg);
      };
      await assert.rejects(benchHost({ backend: b3.backend, quick: true }), /^Error: timing failed$/);
      assert.ok(log.tensors.length > 0 && log.tensors.every((t) => t.released === 1), where);
      assert.ok(log.prepared.length > 0 && log.prepared.every((p) => p.released === 1), where);
      assert.ok(log.copies.at(-1)!.released === 1, where);
      stubs.restore();
    }
  });

  it('hostMarkdown: header, one table per op, the fastest correct arm, dashes for non-finite figures', () => {
    const base = { shape: 'S', elements: 10, p10Ms: 1, p90Ms: 3, n: 7, memcpyMs: 1 };
    const r: HostReport = {
      bench: 'host', cpu: 'CPU X', logicalCpus: 2, threads: 1, revision: 'abc', time: 'T', rounds: 7, targetXMemcpy: 4,
      rows: [
        { ...base, op: 'conv', arm: 'slow', mapping: 'exact', mismatches: 0, medianMs: 3, xMemcpy: 3 },
        { ...base, op: 'conv', arm: 'wrongfast', mapping: 'exact', mismatches: 2, medianMs: 1, xMemcpy: 1 },
        { ...base, op: 'conv', arm: 'best', mapping: 'sequence', mismatches: 0, medianMs: 2, xMemcpy: 2.345 },
        { ...base, op: 'postconv', arm: 'tree', mismatches: 0, medianMs: 2, xMemcpy: NaN },
        { ...base, op: 'postconv', shape: 'other', arm: 'elsewhere', mismatches: 0, medianMs: 0.5, xMemcpy: 0.5 },
        { ...base, op: 'fused', arm: 'f', mismatches: 1, medianMs: Infinity, xMemcpy: 1 },
      ],
      copies: [
        { op: 'conv', shape: 'S', bytes: 3 * 2 ** 20, medianMs: 1, gbps: 3.14159 },
        { op: 'postconv', shape: 'S', bytes: 2 ** 21, medianMs: 1.005, gbps: 2 },
        { op: 'fused', shape: 'S', bytes: 2 ** 20, medianMs: NaN, gbps: Infinity },
      ],
    };
    const md = hostMarkdown(r, 'gdnlab bench host').split('\n');
    assert.deepEqual(md, [
      '### Host backend — `gdnlab bench host`',
      '',
      '- CPU: CPU X; 2 logical CPUs; blocks replayed on 1 thread (forward schedule)',
      '- revision abc; T; 7 rounds, arms and the memcpy interleaved in one gdn_time_ops run (rotated order, no cache flush)',
      '- ms per run: median [p10, p90]; ×memcpy = median / median of a memcpy of the same bytes in the same run; target: the fastest conv arm ≤ 4× memcpy',
      md[5],
      '',
      '**Causal conv, S** — memcpy of 3 MiB: 1.00 ms (3.1 GB/s); fastest correct arm best/sequence at 2.35× memcpy',
      '',
      '| arm | mapping | median ms | p10 | p90 | n | ×memcpy | mismatching |',
      '|---|---|---:|---:|---:|---:|---:|---:|',
      '| slow | exact | 3.00 | 1.00 | 3.00 | 7 | 3.00 | 0 / 10 |',
      '| wrongfast | exact | 1.00 | 1.00 | 3.00 | 7 | 1.00 | 2 / 10 |',
      '| best | sequence | 2.00 | 1.00 | 3.00 | 7 | 2.35 | 0 / 10 |',
      '',
      '**Post-conv, S** — memcpy of 2 MiB: 1.00 ms (2.0 GB/s); fastest correct arm tree at –× memcpy',
      '',
      '| arm | mapping | median ms | p10 | p90 | n | ×memcpy | mismatching |',
      '|---|---|---:|---:|---:|---:|---:|---:|',
      '| tree |  | 2.00 | 1.00 | 3.00 | 7 | – | 0 / 10 |',
      '',
      '**Fused conv → post-conv, S** — memcpy of 1 MiB: – ms (– GB/s)',
      '',
      '| arm | mapping | median ms | p10 | p90 | n | ×memcpy | mismatching |',
      '|---|---|---:|---:|---:|---:|---:|---:|',
      '| f |  | – | 1.00 | 3.00 | 7 | 1.00 | 1 / 10 |',
      '',
    ]);
    assert.ok(md[5].startsWith('- mismatching = elements whose bits differ from the reference'), md[5]);
    assert.ok(hostMarkdown({ ...r, threads: 2, copies: [] }, 'c').includes('blocks replayed on 2 threads (forward schedule)'));
    assert.equal(hostMarkdown({ ...r, copies: [] }, 'c').split('\n').length, 7);
  });
});
