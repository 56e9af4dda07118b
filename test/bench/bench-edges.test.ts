// lib/bench/bench.ts without a kernel, a timing loop or a Python: the tensors, the ops' forward and prepareTimed,
// fused's chain, the bit count, copyOp, the arm table, the revision, the project root, gdnlab's timeArms and
// child_process.spawnSync are replaced by recorders (restored after each test). timeArms answers with scripted
// medians, so every row, ratio and note is a known number, and spawnSync answers as bench/torch_reference.py and
// bench/vllm_reference.py do (or fail), so the PyTorch and vLLM baselines' trusted, untrusted and missing cases
// are each reached in milliseconds. Asserted exactly: the shape lists, the arm and shape selection and their
// errors, what each bench validates and times with which options, the rows, copies, stops and checkpoints, the
// releases, the baselines' rows and notes, benchMarkdown's text and writeJson's file. The real timing loop and a
// Python child are exercised by test/core/options-live-bench.test.ts.

import { strict as assert } from 'assert';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { Stubs, withEnv, throwsExactly } from '../stand-ins';
import { armInfo } from '../check/check-stubs';
import { reportingCuda } from '../core/cuda-stand-ins';
import { Tensor } from '../../lib/tensor';
import {
  BenchReport, BenchRow, benchConv, benchFused, benchMarkdown, benchPostconv, baselineTrust, convBenchShapes, convTimed,
  fusedBenchShapes, fusedChainConv, fusedChainPostconv, postconvBenchShapes, selectArms, selectShapes, varlenLengths, writeJson,
} from '../../lib/bench/bench';
import { convBytes } from '../../lib/ops/conv';
import { postconvBytes } from '../../lib/ops/postconv';
import { fusedBytes } from '../../lib/ops/fused';
import type { Backend } from '../../lib/backend';

const convM = require('../../lib/ops/conv') as Record<string, unknown>;
const postM = require('../../lib/ops/postconv') as Record<string, unknown>;
const fusedM = require('../../lib/ops/fused') as Record<string, unknown>;
const copyM = require('../../lib/ops/copy') as Record<string, unknown>;
const tableM = require('../../lib/arms/table') as Record<string, unknown>;
const registryM = require('../../lib/arms/registry') as Record<string, unknown>;
const provM = require('../../lib/provenance') as Record<string, unknown>;
const bitsM = require('../../lib/analysis/bits') as Record<string, unknown>;
const timedM = require('../../lib/check/timed') as Record<string, unknown>;
const checkFusedM = require('../../lib/check/fused') as Record<string, unknown>;
// lib/native/gdn re-exports it from lib/paths (a getter): the stand-in goes where it is defined.
const pathsM = require('../../lib/paths') as Record<string, unknown>;
const childM = require('child_process') as Record<string, unknown>;

const PC = ['q', 'k', 'v', 'g', 'beta'] as const;
const FU = [...PC, 'convState'] as const;
type Bad = Partial<Record<(typeof FU)[number] | 'out', number>>;

/** A tensor made by Tensor.random: what it was asked for, where it went, how often it was released. */
interface Made { shape: number[]; dtype: string; opts: unknown; to?: unknown; released: number }
/** An output of a replaced op: `bad` elements differ from the reference's (whose outputs all have 0). */
interface Out { bad: number }
interface Result { arm: string; released: number }
interface Prepared { kind: string; inputs: Record<string, unknown>; opts: Record<string, unknown>; label: string; released: number }
interface TimeCall { cases: { label: string; op: { kind: string }; meta: Record<string, unknown> }[]; opts: Record<string, unknown> }

const conv = (name: string, f: Parameters<typeof armInfo>[1] = {}) => ({ ...armInfo(name, f), op: 'conv' });
const post = (name: string, f: Parameters<typeof armInfo>[1] = {}) => ({ ...armInfo(name, f), op: 'postconv' });

interface World {
  arms?: Record<string, object[]>;
  /** conv: 'arm/mapping' -> [out, convState] mismatches. */
  convBad?: Record<string, [number, number]>;
  postBad?: Record<string, Bad>;
  fusedBad?: Record<string, Bad>;
  /** The arm a fused arm falls back to. */
  fusedRan?: Record<string, string>;
  fusedArms?: string[];
  /** The chain's conv step (convState) and post-conv step (q..beta) against the reference chain. */
  chainBad?: Bad;
  convRan?: { arm: string; mapping: string };
  /** The median of a case in timing run `run` (1, 2, …); the copy's by default 4·run, an arm's 10·(i + 1). */
  median?: (label: string, run: number, i: number) => number;
  timeArms?: (call: TimeCall) => Promise<never>;
  /** What each script's child answers (by script file name). */
  child?: Record<string, { status: number | null; stdout?: string; stderr?: string | null }>;
  /** conv.forward of this 'arm/mapping', or fused.chain ('chain'), throws. */
  forwardFails?: string;
}

const CONV_ARMS = [conv('scalar', { reference: true, mappings: ['exact', 'exact-racy', 'sequence'] }), conv('taps', { mutant: true, mappings: ['exact'] })];
const POST_ARMS = [post('tree', { reference: true }), post('bad', { mutant: true }), post('fast'), post('pmine', { user: true, mutant: true })];

/** Puts the stand-ins in place for one test, answering as `w` says; the log returned records every call made to them. */
function world(stubs: Stubs, w: World = {}) {
  const log = {
    made: [] as Made[],
    calls: [] as [string, Record<string, unknown>, Record<string, unknown>][],
    results: [] as Result[],
    prepared: [] as Prepared[],
    copies: [] as { bytes: number; opts: Record<string, unknown>; released: number }[],
    timed: [] as TimeCall[],
    spawned: [] as { cmd: string; args: string[]; opts: Record<string, unknown> }[],
    userArm: [] as [string, string][],
  };
  stubs.set(Tensor, 'random', (shape: number[], dtype: string, opts: unknown) => {
    const m: Made = { shape, dtype, opts, released: 0 };
    log.made.push(m);
    return { to: (b: unknown) => ((m.to = b), { m, release: () => void m.released++, sliceCols: (start: number, count: number) => ({ of: m, start, count }) }) };
  });
  const table = w.arms ?? { conv: CONV_ARMS, postconv: POST_ARMS };
  stubs.set(tableM, 'arms', (op: string) => table[op] ?? assert.fail(`arms(${op})`));
  stubs.set(tableM, 'referenceArm', (op: string) => (table[op] as { reference: boolean }[]).find((a) => a.reference));
  stubs.set(registryM, 'userArm', (op: string, name: string) => (log.userArm.push([op, name]), name === 'pmine' ? { plantedDefect: 'drops beta' } : undefined));
  stubs.set(provM, 'revision', () => 'REV');
  stubs.set(pathsM, 'projectRoot', () => '/ROOT');
  stubs.set(bitsM, 'countBitMismatches', (a: Out, b: Out) => a.bad + b.bad);
  const outs = (names: readonly string[], bad: Bad = {}) => Object.fromEntries(names.map((n) => [n, { bad: bad[n as keyof Bad] ?? 0 }]));
  const result = <T extends object>(arm: string, o: T) => {
    const r: Result = { arm, released: 0 };
    log.results.push(r);
    return { ...o, release: () => void r.released++ };
  };
  stubs.set(convM, 'forward', async (inputs: Record<string, unknown>, o: Record<string, unknown>) => {
    log.calls.push(['conv', inputs, o]);
    if (w.forwardFails === `${o.arm}/${o.mapping}`) throw new Error(`no ${o.arm}`);
    const [out, state] = w.convBad?.[`${o.arm}/${o.mapping}`] ?? [w.chainBad?.out ?? 0, w.chainBad?.convState ?? 0];
    return result(`${o.arm}/${o.mapping}`, { out: { bad: out }, convState: { bad: state }, contract: w.convRan ?? { arm: o.arm, mapping: o.mapping } });
  });
  stubs.set(postM, 'forward', async (inputs: Record<string, unknown>, o: Record<string, unknown>) => {
    log.calls.push(['postconv', inputs, o]);
    return result(String(o.arm), outs(PC, w.postBad?.[String(o.arm)] ?? w.chainBad));
  });
  stubs.set(fusedM, 'chain', async (inputs: Record<string, unknown>, o: Record<string, unknown>) => {
    log.calls.push(['chain', inputs, o]);
    if (w.forwardFails === 'chain') throw new Error('chain failed');
    return result('chain', outs(FU));
  });
  stubs.set(fusedM, 'forward', async (inputs: Record<string, unknown>, o: Record<string, unknown>) => {
    log.calls.push(['fused', inputs, o]);
    const arm = String(o.arm);
    return result(arm, { ...outs(FU, w.fusedBad?.[arm]), launch: { arm: w.fusedRan?.[arm] ?? arm } });
  });
  stubs.set(checkFusedM, 'checkedFusedArms', () => w.fusedArms ?? ['f1', 'f2']);
  const prep = (kind: string) => (inputs: Record<string, unknown>, opts: Record<string, unknown>, label: string) => {
    const p: Prepared = { kind, inputs, opts, label, released: 0 };
    log.prepared.push(p);
    return { kind, label, release: () => void p.released++ };
  };
  stubs.set(convM, 'prepareTimed', prep('conv'));
  stubs.set(postM, 'prepareTimed', prep('postconv'));
  stubs.set(fusedM, 'prepareTimed', prep('fused'));
  stubs.set(copyM, 'copyOp', (bytes: number, opts: Record<string, unknown>) => {
    const c = { bytes, opts, released: 0 };
    log.copies.push(c);
    return { kind: 'copy', label: opts.label, release: () => void c.released++ };
  });
  const median = w.median ?? ((label: string, run: number, i: number) => (label === 'copy' ? 4 * run : 10 * (i + 1)));
  stubs.set(timedM, 'timeArms', async (cases: TimeCall['cases'], opts: Record<string, unknown>) => {
    const call = { cases, opts };
    log.timed.push(call);
    if (w.timeArms) return w.timeArms(call);
    const run = log.timed.length;
    return {
      provenance: { runId: `run ${run}` },
      stop: { reason: run % 2 ? 'noise-target' : 'time-cap', detail: `stopped ${run}` },
      cases: cases.map((c, i) => {
        const m = median(c.label, run, i);
        return { label: c.label, opKind: c.op.kind, meta: c.meta, stats: { median: m, p10: m - 1, p90: m + 2, n: 20 - i } };
      }),
      toJSON: () => ({ runId: `run ${run}`, labels: cases.map((c) => c.label) }),
    };
  });
  stubs.set(childM, 'spawnSync', (cmd: string, args: string[], opts: Record<string, unknown>) => {
    log.spawned.push({ cmd, args, opts });
    const answer = w.child?.[path.basename(args[0])];
    if (!answer) assert.fail(`unexpected child ${cmd} ${args.join(' ')}`);
    return { stdout: '', stderr: '', ...answer };
  });
  return log;
}

/** The row timeShape makes of a case: stats as the scripted timeArms gives them (p10 = median − 1, p90 = median + 2). */
function row(shape: string, arm: string, mapping: string | undefined, mismatches: number, median: number, n: number, bytes: number, copyUs: number, extra: { planted?: boolean; note?: string } = {}): BenchRow {
  return {
    shape, arm, mapping, correct: mismatches === 0, mismatches, planted: extra.planted ?? false, medianUs: median, p10Us: median - 1, p90Us: median + 2, n, bytes,
    gbps: bytes / (median * 1e3), xCopy: median / copyUs, note: extra.note,
  };
}

const host = { kind: 'host' } as unknown as Backend;
const TIMING = { mode: 'cold', warmupMs: 150, minSamples: 30, minTimeMs: 20, noiseTarget: 0.01, progress: false, validate: false };
const lines = (...l: object[]) => l.map((x) => JSON.stringify(x)).join('\n');
const partials = (list: BenchReport[]) => list.map((p) => [p.incomplete, p.rows.length]);

describe('bench: shape lists, arm lists and selection', () => {
  const stubs = new Stubs();
  afterEach(() => stubs.restore());

  it('varlenLengths: seeded unequal lengths summing to the total, none below 1', () => {
    assert.deepEqual(varlenLengths(), [26, 45, 55, 80, 69, 84, 61, 53, 30, 78, 107, 104, 77, 48, 90, 85, 65, 26, 109, 60, 108, 94, 34, 75, 90, 25, 22, 70, 68, 29, 25, 56]);
    assert.deepEqual(varlenLengths(128, 8), [7, 13, 15, 22, 19, 22, 16, 14]);
    assert.deepEqual(varlenLengths(10, 3, 7), [2, 5, 3]);
    // More sequences than tokens: each keeps one token (the total is then exceeded, never a 0-length sequence).
    assert.deepEqual(varlenLengths(4, 8), [1, 1, 1, 1, 1, 1, 1, 1]);
  });

  it('convBenchShapes: quick at C/32 and T 64, 256 and a varlen of 8; full at the models\' C and T 512 to 32768', () => {
    const q = convBenchShapes(true);
    const v8 = [7, 13, 15, 22, 19, 22, 16, 14];
    const alt8 = [true, false, true, false, true, false, true, false];
    assert.deepEqual(q, [
      { id: 'Qwen3.5-4B T=64', model: 'Qwen3.5-4B', C: 256, lengths: [64], initialState: [false] },
      { id: 'Qwen3.5-4B T=256', model: 'Qwen3.5-4B', C: 256, lengths: [256], initialState: [false] },
      { id: 'Qwen3.5-4B varlen 8×, 128 tok', model: 'Qwen3.5-4B', C: 256, lengths: v8, initialState: alt8 },
      { id: 'Qwen3.5-27B T=64', model: 'Qwen3.5-27B', C: 320, lengths: [64], initialState: [false] },
      { id: 'Qwen3.5-27B T=256', model: 'Qwen3.5-27B', C: 320, lengths: [256], initialState: [false] },
      { id: 'Qwen3.5-27B varlen 8×, 128 tok', model: 'Qwen3.5-27B', C: 320, lengths: v8, initialState: alt8 },
    ]);
    const full = convBenchShapes();
    assert.deepEqual(full.map((s) => [s.id, s.C, s.lengths.length === 1 ? s.lengths[0] : s.lengths.length]), [
      ['Qwen3.5-4B T=512', 8192, 512], ['Qwen3.5-4B T=2048', 8192, 2048], ['Qwen3.5-4B T=8192', 8192, 8192], ['Qwen3.5-4B T=32768', 8192, 32768],
      ['Qwen3.5-4B varlen 32×, 2048 tok', 8192, 32],
      ['Qwen3.5-27B T=512', 10240, 512], ['Qwen3.5-27B T=2048', 10240, 2048], ['Qwen3.5-27B T=8192', 10240, 8192], ['Qwen3.5-27B T=32768', 10240, 32768],
      ['Qwen3.5-27B varlen 32×, 2048 tok', 10240, 32],
    ]);
    assert.deepEqual(full[4].lengths, varlenLengths());
    assert.deepEqual(full[4].initialState, varlenLengths().map((_, i) => i % 2 === 0));
    assert.deepEqual(full[0].initialState, [false]);
  });

  it('postconvBenchShapes: Hk 16 with Hv 32 (4B) and 48 (27B), quick T 32 and 64, full 512 to 32768', () => {
    assert.deepEqual(postconvBenchShapes(true), [
      { id: 'Qwen3.5-4B (Hk=16, Hv=32) T=32', T: 32, Hk: 16, Hv: 32 }, { id: 'Qwen3.5-4B (Hk=16, Hv=32) T=64', T: 64, Hk: 16, Hv: 32 },
      { id: 'Qwen3.5-27B (Hk=16, Hv=48) T=32', T: 32, Hk: 16, Hv: 48 }, { id: 'Qwen3.5-27B (Hk=16, Hv=48) T=64', T: 64, Hk: 16, Hv: 48 },
    ]);
    assert.deepEqual(postconvBenchShapes().map((s) => `${s.id}|${s.T}`), [512, 2048, 8192, 32768].map((T) => `Qwen3.5-4B (Hk=16, Hv=32) T=${T}|${T}`)
      .concat([512, 2048, 8192, 32768].map((T) => `Qwen3.5-27B (Hk=16, Hv=48) T=${T}|${T}`)));
  });

  it('fusedBenchShapes: quick the toy layout Hk=1, Hv=Hv/16; full Hk=16 at T 2048 to 32768 and a varlen of 32', () => {
    const v8 = [7, 13, 15, 22, 19, 22, 16, 14];
    const alt8 = [true, false, true, false, true, false, true, false];
    assert.deepEqual(fusedBenchShapes(true), [
      { id: 'Qwen3.5-4B (quick: Hk=1, Hv=2) T=64', Hk: 1, Hv: 2, lengths: [64], initialState: [false] },
      { id: 'Qwen3.5-4B (quick: Hk=1, Hv=2) T=256', Hk: 1, Hv: 2, lengths: [256], initialState: [false] },
      { id: 'Qwen3.5-4B (quick) varlen 8×, 128 tok', Hk: 1, Hv: 2, lengths: v8, initialState: alt8 },
      { id: 'Qwen3.5-27B (quick: Hk=1, Hv=3) T=64', Hk: 1, Hv: 3, lengths: [64], initialState: [false] },
      { id: 'Qwen3.5-27B (quick: Hk=1, Hv=3) T=256', Hk: 1, Hv: 3, lengths: [256], initialState: [false] },
      { id: 'Qwen3.5-27B (quick) varlen 8×, 128 tok', Hk: 1, Hv: 3, lengths: v8, initialState: alt8 },
    ]);
    const full = fusedBenchShapes();
    assert.deepEqual(full.map((s) => [s.id, s.Hk, s.Hv, s.lengths.length]), [
      ['Qwen3.5-4B T=2048', 16, 32, 1], ['Qwen3.5-4B T=8192', 16, 32, 1], ['Qwen3.5-4B T=32768', 16, 32, 1], ['Qwen3.5-4B varlen 32×, 2048 tok', 16, 32, 32],
      ['Qwen3.5-27B T=2048', 16, 48, 1], ['Qwen3.5-27B T=8192', 16, 48, 1], ['Qwen3.5-27B T=32768', 16, 48, 1], ['Qwen3.5-27B varlen 32×, 2048 tok', 16, 48, 32],
    ]);
    assert.deepEqual([full[2].lengths, full[2].initialState], [[32768], [false]]);
    assert.deepEqual(full[7].initialState, varlenLengths().map((_, i) => i % 2 === 0));
  });

  it('convTimed: every arm with each mapping it runs as asked, exact-racy once, after the exact mapping of the first arm that has both; notes of mutants and user arms', () => {
    const log = world(stubs, {
      arms: {
        conv: [
          conv('taps', { mutant: true, mappings: ['exact'] }),
          conv('vec', { mappings: ['sequence', 'exact-racy', 'exact'] }),
          conv('scalar', { reference: true, mappings: ['exact-racy', 'exact', 'sequence'] }),
          conv('mine', { user: true, mappings: ['sequence'] }),
          conv('pmine', { user: true, mutant: true, mappings: ['exact'] }),
          conv('gone', { user: true, mutant: true, mappings: ['sequence'] }),
        ],
      },
    });
    assert.deepEqual(convTimed(), [
      { arm: 'taps', mapping: 'exact', note: 'PLANTED MUTANT (wrong f32 bits)', planted: true },
      { arm: 'vec', mapping: 'sequence', note: undefined, planted: false },
      { arm: 'vec', mapping: 'exact', note: undefined, planted: false },
      { arm: 'vec', mapping: 'exact-racy', planted: false },
      { arm: 'scalar', mapping: 'exact', note: undefined, planted: false },
      { arm: 'scalar', mapping: 'sequence', note: undefined, planted: false },
      { arm: 'mine', mapping: 'sequence', note: 'user arm (defineArm)', planted: false },
      { arm: 'pmine', mapping: 'exact', note: 'PLANTED DEFECT (user arm): drops beta', planted: true },
      // A user arm defined as a planted defect that is no longer defined: the note without its description.
      { arm: 'gone', mapping: 'sequence', note: 'PLANTED DEFECT (user arm): ', planted: true },
    ]);
    assert.deepEqual(log.userArm, [['conv', 'pmine'], ['conv', 'gone']]);
  });

  it('fusedChainConv / fusedChainPostconv: stream-mufu, else stream, else vec; vec-tile, else token-tile', () => {
    const pick = (convNames: string[], postNames: string[]) => {
      stubs.set(tableM, 'arms', (op: string) => (op === 'conv' ? convNames : postNames).map((name) => ({ name })));
      return [fusedChainConv(), fusedChainPostconv()];
    };
    assert.deepEqual(pick(['scalar', 'stream', 'stream-mufu'], ['tree', 'vec-tile']), [{ arm: 'stream-mufu', mapping: 'exact' }, 'vec-tile']);
    assert.deepEqual(pick(['vec', 'stream'], ['tree', 'token-tile']), [{ arm: 'stream', mapping: 'exact' }, 'token-tile']);
    assert.deepEqual(pick(['scalar'], []), [{ arm: 'vec', mapping: 'exact' }, 'token-tile']);
  });

  it('selectShapes: all without a filter (absent or empty); else every shape whose name contains a filter, in order', () => {
    const all = [{ id: 'A T=64' }, { id: 'B T=64' }, { id: 'A T=256' }];
    assert.equal(selectShapes(all, { backend: host }), all);
    assert.equal(selectShapes(all, { backend: host, shapes: [] }), all);
    assert.deepEqual(selectShapes(all, { backend: host, shapes: ['T=256', 'B '] }), [{ id: 'B T=64' }, { id: 'A T=256' }]);
    assert.deepEqual(selectShapes(all, { backend: host, shapes: ['A'] }), [{ id: 'A T=64' }, { id: 'A T=256' }]);
    throwsExactly(() => selectShapes(all, { backend: host, shapes: ['C', 'T=32'] }), RangeError, `shapes: ["C","T=32"] match none of 'A T=64', 'B T=64', 'A T=256'`);
  });

  it('selectArms: all without a filter; an arm name selects all its mappings, arm/mapping one; an unknown name lists the choices once each', () => {
    const all = [{ arm: 'scalar', mapping: 'exact' }, { arm: 'scalar', mapping: 'sequence' }, { arm: 'vec', mapping: 'exact' }, { arm: 'tree' }];
    assert.equal(selectArms(all, { backend: host }), all);
    assert.equal(selectArms(all, { backend: host, arms: [] }), all);
    assert.deepEqual(selectArms(all, { backend: host, arms: ['scalar'] }), all.slice(0, 2));
    assert.deepEqual(selectArms(all, { backend: host, arms: ['tree', 'scalar/sequence'] }), [all[1], all[3]]);
    assert.deepEqual(selectArms(all, { backend: host, arms: ['vec/exact'] }), [all[2]]);
    throwsExactly(() => selectArms(all, { backend: host, arms: ['vec', 'vec/sequence'] }), RangeError,
      `arms: 'vec/sequence' is not a timed arm; expected one of scalar, scalar/exact, scalar/sequence, vec, vec/exact, tree`);
    // An arm without a mapping is named once, and 'arm/' names nothing.
    throwsExactly(() => selectArms(all, { backend: host, arms: ['tree/'] }), RangeError,
      `arms: 'tree/' is not a timed arm; expected one of scalar, scalar/exact, scalar/sequence, vec, vec/exact, tree`);
  });

  it('baselineTrust: trusted only when checked, passing and at least 0.95× its copy; each failure named', () => {
    const ok = { ok: true, note: 'outputs checked against a float32 formula; ' };
    assert.deepEqual(baselineTrust({ x_copy: 1.2, check: { ok: true } }), ok);
    assert.deepEqual(baselineTrust({ x_copy: 0.95, check: { ok: true } }), ok);
    assert.deepEqual(baselineTrust({ x_copy: 2 }), { ok: false, note: 'NOT COMPARABLE: outputs not checked. ' });
    assert.deepEqual(baselineTrust({ x_copy: 2, check: { ok: false, error: 'shape mismatch' } }), { ok: false, note: 'NOT COMPARABLE: output check FAILED (shape mismatch). ' });
    assert.deepEqual(baselineTrust({ x_copy: 2, check: { ok: false, max_excess_err: { q: 0.5 } } }), { ok: false, note: 'NOT COMPARABLE: output check FAILED (max excess error {"q":0.5}). ' });
    assert.deepEqual(baselineTrust({ x_copy: 0.9449, check: { ok: true } }), { ok: false, note: 'NOT COMPARABLE: 0.94× its copy is BELOW THE COPY FLOOR: it cannot have moved its bytes. ' });
    assert.deepEqual(baselineTrust({ x_copy: 0.5 }), { ok: false, note: 'NOT COMPARABLE: outputs not checked; 0.50× its copy is BELOW THE COPY FLOOR: it cannot have moved its bytes. ' });
  });
});

describe('benchConv and benchPostconv on stand-in ops and timing', () => {
  const stubs = new Stubs();
  afterEach(() => stubs.restore());

  const S1 = 'Qwen3.5-4B T=64';
  const S2 = 'Qwen3.5-4B varlen 8×, 128 tok';
  const V8 = [7, 13, 15, 22, 19, 22, 16, 14];
  const ALT8 = [true, false, true, false, true, false, true, false];
  const b1 = convBytes({ T: 64, C: 256, K: 4, N: 1, nInitial: 0, xBytes: 2, outBytes: 2 });
  const b2 = convBytes({ T: 128, C: 256, K: 4, N: 8, nInitial: 4, xBytes: 2, outBytes: 2 });
  const mb = (b: number) => (b / 1e6).toFixed(1);

  it('conv: each shape\'s arms checked against the reference, then timed with a copy of the same bytes; rows, copies, stops, samples, checkpoints', async () => {
    const log = world(stubs, { convBad: { 'scalar/exact-racy': [1, 2] } });
    const said: string[] = [];
    const progress: BenchReport[] = [];
    const r = await benchConv({ backend: host, quick: true, shapes: ['4B T=64', '4B varlen'], samples: true, log: (l) => said.push(l), onProgress: (p) => progress.push(p) });
    // Tensors: x, weight and state per shape, staged on the backend.
    assert.deepEqual(log.made.map((m) => [m.shape, m.dtype, m.opts, m.to === host]), [
      [[64, 256], 'bf16', { seed: 1 }, true], [[256, 4], 'bf16', { seed: 2, scale: 0.5 }, true], [[1, 256, 3], 'f32', { seed: 3 }, true],
      [[128, 256], 'bf16', { seed: 1 }, true], [[256, 4], 'bf16', { seed: 2, scale: 0.5 }, true], [[8, 256, 3], 'f32', { seed: 3 }, true],
    ]);
    const arm = (a: string, m: string) => ({ arm: a, mapping: m, outDtype: 'bf16', backend: host });
    const timedArms = [arm('scalar', 'exact'), arm('scalar', 'exact-racy'), arm('scalar', 'sequence'), arm('taps', 'exact')];
    assert.deepEqual(log.calls.map((c) => [c[0], c[2]]), [arm('scalar', 'sequence'), ...timedArms, arm('scalar', 'sequence'), ...timedArms].map((o) => ['conv', o]));
    const in1 = log.calls[0][1];
    const in2 = log.calls[5][1];
    assert.deepEqual(Object.keys(in1), ['x', 'weight', 'queryStartLoc', 'hasInitialState', 'convState']);
    assert.deepEqual([in1.queryStartLoc, in1.hasInitialState, in2.queryStartLoc, in2.hasInitialState], [[0, 64], [false], [0, 7, 20, 35, 57, 76, 98, 114, 128], ALT8]);
    assert.deepEqual([in1.x, in1.weight, in1.convState, in2.x, in2.weight, in2.convState].map((t) => log.made.indexOf((t as { m: Made }).m)), [0, 1, 2, 3, 4, 5]);
    assert.ok(log.calls.slice(0, 5).every((c) => c[1] === in1) && log.calls.slice(5).every((c) => c[1] === in2));
    // Prepared for timing: the same inputs and options, labelled arm/mapping.
    const labels = ['scalar/exact', 'scalar/exact-racy', 'scalar/sequence', 'taps/exact'];
    assert.deepEqual(log.prepared.map((p) => [p.kind, p.label, p.opts, p.inputs === (log.prepared.indexOf(p) < 4 ? in1 : in2)]), [...labels, ...labels].map((l, i) => ['conv', l, timedArms[i % 4], true]));
    // One timeArms run per shape: the arms and the copy, with the default cold options (quick: 1.5 s cap).
    assert.equal(log.timed.length, 2);
    for (const [k, t] of log.timed.entries()) {
      const [shape, T] = k === 0 ? [S1, 64] : [S2, 128];
      assert.deepEqual(t.opts, { backend: host, ...TIMING, maxTimeMs: 1500 });
      assert.deepEqual(t.cases.map((c) => [c.label, c.op.kind]), [...labels.map((l) => [l, 'conv']), ['copy', 'copy']]);
      assert.deepEqual(t.cases.map((c) => c.meta), [
        { arm: 'scalar', mapping: 'exact', shape, C: 256, K: 4, T, dtype: 'bf16', note: undefined, planted: false },
        { arm: 'scalar', mapping: 'exact-racy', shape, C: 256, K: 4, T, dtype: 'bf16', note: undefined, planted: false },
        { arm: 'scalar', mapping: 'sequence', shape, C: 256, K: 4, T, dtype: 'bf16', note: undefined, planted: false },
        { arm: 'taps', mapping: 'exact', shape, C: 256, K: 4, T, dtype: 'bf16', note: 'PLANTED MUTANT (wrong f32 bits)', planted: true },
        { bytes: k === 0 ? b1 : b2 },
      ]);
    }
    assert.deepEqual(log.copies, [{ bytes: b1, opts: { backend: host, label: 'copy' }, released: 1 }, { bytes: b2, opts: { backend: host, label: 'copy' }, released: 1 }]);
    assert.deepEqual(said, [`conv ${S1}: timing 4 arms + copy (${mb(b1)} MB)`, `conv ${S2}: timing 4 arms + copy (${mb(b2)} MB)`]);
    const rows = (shape: string, bytes: number, copyUs: number) => [
      row(shape, 'scalar', 'exact', 0, 10, 20, bytes, copyUs),
      row(shape, 'scalar', 'exact-racy', 3, 20, 19, bytes, copyUs),
      row(shape, 'scalar', 'sequence', 0, 30, 18, bytes, copyUs),
      row(shape, 'taps', 'exact', 0, 40, 17, bytes, copyUs, { planted: true, note: 'PLANTED MUTANT (wrong f32 bits)' }),
    ];
    assert.deepEqual(r, {
      op: 'conv', revision: 'REV', provenance: { runId: 'run 1' }, torch: null,
      rows: [...rows(S1, b1, 4), ...rows(S2, b2, 8)],
      copies: [{ shape: S1, medianUs: 4, gbps: b1 / 4e3 }, { shape: S2, medianUs: 8, gbps: b2 / 8e3 }],
      torchRows: [], baselines: [],
      stops: [{ shape: S1, reason: 'noise-target', detail: 'stopped 1' }, { shape: S2, reason: 'time-cap', detail: 'stopped 2' }],
      timings: [{ shape: S1, runId: 'run 1', labels: [...labels, 'copy'] }, { shape: S2, runId: 'run 2', labels: [...labels, 'copy'] }],
    });
    // A checkpoint after each shape: a copy of the report so far, marked with how far the run had got.
    assert.deepEqual(partials(progress), [
      [`written after shape 1 of 2 (${S1}), before the run's end`, 4],
      [`written after shape 2 of 2 (${S2}), before the run's end`, 8],
    ]);
    assert.deepEqual(progress[1].rows, r.rows);
    assert.deepEqual(progress[0].timings, r.timings!.slice(0, 1));
    // Every result, prepared op, copy and tensor released once.
    assert.deepEqual(log.results.map((x) => x.released), Array(10).fill(1));
    assert.deepEqual(log.prepared.map((x) => x.released), Array(8).fill(1));
    assert.deepEqual(log.made.map((x) => x.released), Array(6).fill(1));
  });

  it('conv: the full shapes, the caller\'s timing options over the defaults (2.5 s cap), no samples without samples', async () => {
    const log = world(stubs);
    const r = await benchConv({ backend: host, shapes: ['27B T=512'], arms: ['taps'], timing: { mode: 'hot', minSamples: 5 } });
    assert.deepEqual(log.made.map((m) => m.shape), [[512, 10240], [10240, 4], [1, 10240, 3]]);
    assert.deepEqual(log.timed[0].opts, { backend: host, ...TIMING, mode: 'hot', minSamples: 5, maxTimeMs: 2500 });
    const bytes = convBytes({ T: 512, C: 10240, K: 4, N: 1, nInitial: 0, xBytes: 2, outBytes: 2 });
    assert.deepEqual(r.rows, [row('Qwen3.5-27B T=512', 'taps', 'exact', 0, 10, 20, bytes, 4, { planted: true, note: 'PLANTED MUTANT (wrong f32 bits)' })]);
    assert.equal('timings' in r, false);
    assert.equal(log.timed[0].opts.maxTimeMs, 2500);
    const quick = await benchConv({ backend: host, quick: true, shapes: [S1], arms: ['taps'], timing: { maxTimeMs: 7 } });
    assert.equal(log.timed[1].opts.maxTimeMs, 7);
    assert.equal(quick.rows.length, 1);
  });

  it('conv: arms and shapes that select nothing are refused, naming the choices', async () => {
    world(stubs);
    await assert.rejects(benchConv({ backend: host, quick: true, arms: ['nope'] }), (e: Error) => e instanceof RangeError
      && e.message === `arms: 'nope' is not a timed arm; expected one of scalar, scalar/exact, scalar/exact-racy, scalar/sequence, taps, taps/exact`);
    await assert.rejects(benchConv({ backend: host, shapes: ['T=64'] }), (e: Error) => e instanceof RangeError
      && e.message === `shapes: ["T=64"] match none of ${convBenchShapes().map((s) => `'${s.id}'`).join(', ')}`);
  });

  it('conv: a failing check releases the reference and the tensors; a failing timing run releases the copy, the prepared arms and the tensors', async () => {
    let log = world(stubs, { forwardFails: 'taps/exact' });
    await assert.rejects(benchConv({ backend: host, quick: true, shapes: [S1] }), /^Error: no taps$/);
    assert.deepEqual(log.results.map((x) => [x.arm, x.released]), [['scalar/sequence', 1], ['scalar/exact', 1], ['scalar/exact-racy', 1], ['scalar/sequence', 1]]);
    assert.deepEqual([log.made.map((m) => m.released), log.prepared.length], [[1, 1, 1], 0]);
    stubs.restore();
    log = world(stubs, { forwardFails: 'scalar/sequence' });
    await assert.rejects(benchConv({ backend: host, quick: true, shapes: [S1] }), /^Error: no scalar$/);
    assert.deepEqual([log.made.map((m) => m.released), log.results.length], [[1, 1, 1], 0]);
    stubs.restore();
    log = world(stubs, { timeArms: async () => { throw new Error('timing failed'); } });
    await assert.rejects(benchConv({ backend: host, quick: true, shapes: [S1], arms: ['scalar/exact', 'taps'] }), /^Error: timing failed$/);
    assert.deepEqual(log.prepared.map((p) => [p.label, p.released]), [['scalar/exact', 1], ['taps/exact', 1]]);
    assert.deepEqual(log.copies.map((c) => c.released), [1]);
    assert.deepEqual(log.made.map((m) => m.released), [1, 1, 1]);
  });

  describe('the PyTorch and vLLM baselines (CUDA only; the Python child replaced)', () => {
    const cuda = reportingCuda(host);
    const CASES = JSON.stringify([
      { op: 'conv', id: S1, C: 256, K: 4, lengths: [64], initial_state: [false] },
      { op: 'conv', id: S2, C: 256, K: 4, lengths: V8, initial_state: ALT8 },
    ]);
    const SPAWN = { encoding: 'utf8', timeout: 900000, maxBuffer: 16777216 };
    const TORCH = lines(
      { torch: '2.5.1', cuda: '12.4', device: 'NVIDIA H100' },
      { id: S1, median_us: 24, p10_us: 22, p90_us: 30, n: 50, bytes: 1, x_copy: 3, copy_median_us: 8, naive: { median_us: 60 }, graph: { median_us: 20 }, hold_us: 400, retaken: 2 },
      { id: S2, median_us: 48, p10_us: 40, p90_us: 50, n: 40, bytes: 1, x_copy: 3, copy_median_us: 8, graph: { error: 'capture failed' } },
    );
    const VLLM = lines(
      { vllm: 'vllm 0.9.2', triton: '3.3.0' },
      { id: S1, median_us: 8, p10_us: 7, p90_us: 9, n: 31, bytes: 1000, x_copy: 2.5, copy_median_us: 3.2, check: { ok: true } },
      { id: S2, median_us: 20, p10_us: 18, p90_us: 25, n: 32, bytes: 3000, x_copy: 1.25, copy_median_us: 16, naive: { median_us: 30 }, graph: { median_us: 21 }, hold_us: 50, retaken: 1 },
      { id: 'elsewhere', median_us: 5, p10_us: 4, p90_us: 6, n: 33, bytes: 500, x_copy: 1, copy_median_us: 5, check: { ok: true } },
    );
    // The planted arm fastest, then the incorrect one: the fastest correct built-in arm is scalar/sequence.
    const MEDIANS: Record<string, number> = { 'taps/exact': 5, 'scalar/exact-racy': 6, 'scalar/sequence': 12, 'scalar/exact': 15 };
    const median = (label: string, run: number) => MEDIANS[label] ?? 4 * run;

    it('torch: PyTorch medians, ×torch on our rows and every method\'s figures; vLLM rows, trusted or not, beside our fastest correct arm', async () => {
      const log = world(stubs, { convBad: { 'scalar/exact-racy': [1, 0] }, median, child: { 'torch_reference.py': { status: 0, stdout: `\n${TORCH}\n` }, 'vllm_reference.py': { status: 0, stdout: VLLM + '\n' } } });
      const said: string[] = [];
      const progress: BenchReport[] = [];
      const r = await withEnv({ GDN_TORCH_PYTHON: 'envpy' }, () => benchConv({ backend: cuda, quick: true, shapes: ['4B T=64', '4B varlen'], torch: true, python: 'py', vllmPath: '/v', log: (l) => said.push(l), onProgress: (p) => progress.push(p) }));
      assert.deepEqual(log.spawned, [
        { cmd: 'py', args: ['/ROOT/bench/torch_reference.py'], opts: { input: CASES, ...SPAWN } },
        { cmd: 'py', args: ['/ROOT/bench/vllm_reference.py', '--vllm-path', '/v'], opts: { input: CASES, ...SPAWN } },
      ]);
      assert.deepEqual(said.slice(2), ['PyTorch eager baselines: py /ROOT/bench/torch_reference.py (2 shapes)', 'vLLM Triton kernels: py /ROOT/bench/vllm_reference.py --vllm-path /v (2 shapes)']);
      assert.deepEqual(r.torch, { version: '2.5.1', cuda: '12.4', device: 'NVIDIA H100' });
      assert.deepEqual(r.torchRows, [{ shape: S1, medianUs: 24, p10Us: 22, p90Us: 30, n: 50 }, { shape: S2, medianUs: 48, p10Us: 40, p90Us: 50, n: 40 }]);
      assert.deepEqual(r.rows.slice(0, 8).map((x) => [x.arm, x.mapping, x.xTorch]), [
        ['scalar', 'exact', 15 / 24], ['scalar', 'exact-racy', 6 / 24], ['scalar', 'sequence', 12 / 24], ['taps', 'exact', 5 / 24],
        ['scalar', 'exact', 15 / 48], ['scalar', 'exact-racy', 6 / 48], ['scalar', 'sequence', 12 / 48], ['taps', 'exact', 5 / 48],
      ]);
      const NaN_ = Number.NaN;
      assert.deepEqual(r.baselines, [
        { baseline: 'PyTorch eager', shape: S1, fairUs: 24, naiveUs: 60, graphUs: 20, holdUs: 400, retaken: 2 },
        { baseline: 'PyTorch eager', shape: S2, fairUs: 48, naiveUs: NaN_, graphUs: null, graphError: 'capture failed', holdUs: NaN_, retaken: 0 },
        { baseline: 'vLLM', shape: S1, fairUs: 8, naiveUs: NaN_, graphUs: null, holdUs: NaN_, retaken: 0 },
        { baseline: 'vLLM', shape: S2, fairUs: 20, naiveUs: 30, graphUs: 21, holdUs: 50, retaken: 1 },
        { baseline: 'vLLM', shape: 'elsewhere', fairUs: 5, naiveUs: NaN_, graphUs: null, holdUs: NaN_, retaken: 0 },
      ]);
      const own = (us: string) => `vllm 0.9.2, triton 3.3.0, its own process, host ahead of the GPU: ×copy against its own copy (${us} µs); not bit-exact`;
      const vllmRow = (shape: string, median: number, p10: number, p90: number, n: number, bytes: number, xCopy: number, note: string) =>
        ({ shape, arm: 'vLLM (Triton)', correct: false, mismatches: NaN_, medianUs: median, p10Us: p10, p90Us: p90, n, bytes, gbps: bytes / (median * 1e3), xCopy, note });
      assert.deepEqual(r.rows.slice(8), [
        // scalar/sequence: 12 µs, 12 / 4 = 3.00× its copy; vLLM 2.5× its copy, 8 µs.
        vllmRow(S1, 8, 7, 9, 31, 1000, 2.5, `outputs checked against a float32 formula; ${own('3.2')}; fastest correct arm scalar/sequence 3.00× copy = 1.20× vLLM's time (copy-normalised; 1.50× in µs)`),
        vllmRow(S2, 20, 18, 25, 32, 3000, 1.25, `NOT COMPARABLE: outputs not checked. ${own('16.0')}`),
        vllmRow('elsewhere', 5, 4, 6, 33, 500, 1, `outputs checked against a float32 formula; ${own('5.0')}`),
      ]);
      // The last checkpoint comes before vLLM's process: the PyTorch baselines are in it.
      assert.deepEqual(partials(progress).slice(2), [['written after every shape and the PyTorch baselines, before the run\'s end', 8]]);
      assert.equal(progress[2].torchRows.length, 2);
      assert.equal(progress[2].baselines.length, 2);
      assert.equal(r.incomplete, undefined);
    });

    it('a failing child: its last three lines of stderr; python from GDN_TORCH_PYTHON, else python3', async () => {
      let log = world(stubs, { child: { 'torch_reference.py': { status: 2, stderr: 'one\ntwo\nthree\nfour\n' }, 'vllm_reference.py': { status: null, stderr: null } } });
      let r = await withEnv({ GDN_TORCH_PYTHON: 'envpy' }, () => benchConv({ backend: cuda, quick: true, shapes: [S1], arms: ['taps'], torch: true, vllmPath: '/v' }));
      assert.deepEqual(log.spawned.map((s) => s.cmd), ['envpy', 'envpy']);
      assert.deepEqual(r.torch, { error: 'envpy exited 2: two | three | four' });
      assert.deepEqual([r.torchRows, r.baselines, r.rows.length], [[], [], 1]);
      assert.deepEqual(r.stops.slice(1), [{ shape: 'vLLM', reason: 'error', detail: 'envpy exited null: ' }]);
      stubs.restore();
      log = world(stubs, { child: { 'torch_reference.py': { status: 1, stderr: '  only line  ' }, 'vllm_reference.py': { status: 9, stderr: 'a\nb\nc\nd\n' } } });
      r = await withEnv({ GDN_TORCH_PYTHON: undefined }, () => benchConv({ backend: cuda, quick: true, shapes: [S1], arms: ['taps'], torch: true, vllmPath: '/v' }));
      assert.deepEqual(log.spawned.map((s) => s.cmd), ['python3', 'python3']);
      assert.deepEqual(r.torch, { error: 'python3 exited 1: only line' });
      assert.deepEqual(r.stops.slice(1), [{ shape: 'vLLM', reason: 'error', detail: 'python3 exited 9: b | c | d' }]);
    });

    it('no baseline on the host backend, and vLLM only beside PyTorch', async () => {
      const log = world(stubs, { child: { 'torch_reference.py': { status: 0, stdout: lines({ torch: 't', cuda: 'c', device: 'd' }) } } });
      const onHost = await benchConv({ backend: host, quick: true, shapes: [S1], arms: ['taps'], torch: true, vllmPath: '/v' });
      const noTorch = await benchConv({ backend: cuda, quick: true, shapes: [S1], arms: ['taps'], vllmPath: '/v' });
      assert.equal(log.spawned.length, 0);
      assert.deepEqual([onHost.torch, noTorch.torch, onHost.rows.length + noTorch.rows.length, onHost.stops.length + noTorch.stops.length], [null, null, 2, 2]);
      const torchOnly = await benchConv({ backend: cuda, quick: true, shapes: [S1], arms: ['taps'], torch: true, python: 'py' });
      assert.deepEqual(log.spawned.map((s) => s.args), [['/ROOT/bench/torch_reference.py']]);
      assert.deepEqual([torchOnly.torch, torchOnly.torchRows, torchOnly.rows[0].xTorch], [{ version: 't', cuda: 'c', device: 'd' }, [], undefined]);
    });
  });

  it('postconv: every arm\'s five outputs checked against the reference, timed with a copy; notes of planted arms; baselines by shape', async () => {
    const PS = 'Qwen3.5-4B (Hk=16, Hv=32) T=32';
    const PS2 = 'Qwen3.5-27B (Hk=16, Hv=48) T=64';
    const VLLM = lines(
      { vllm: 'vllm 0.9.2', triton: '3.3.0' },
      { id: PS, median_us: 8, p10_us: 7, p90_us: 9, n: 31, bytes: 1000, x_copy: 2, copy_median_us: 4, check: { ok: true } },
      { id: PS2, median_us: 8, p10_us: 7, p90_us: 9, n: 31, bytes: 1000, x_copy: 0.5, copy_median_us: 16, check: { ok: true } },
    );
    const log = world(stubs, {
      postBad: { fast: { q: 1, beta: 2 } }, median: (label, run) => ({ tree: 20, bad: 6, fast: 5, pmine: 4 } as Record<string, number>)[label] ?? 4 * run,
      child: { 'torch_reference.py': { status: 0, stdout: lines({ torch: 't', cuda: 'c', device: 'd' }, { id: PS, median_us: 10, p10_us: 9, p90_us: 11, n: 3 }) }, 'vllm_reference.py': { status: 0, stdout: VLLM } },
    });
    const said: string[] = [];
    const progress: BenchReport[] = [];
    const r = await benchPostconv({ backend: reportingCuda(host), quick: true, shapes: ['Hv=32) T=32', '27B (Hk=16, Hv=48) T=64'], torch: true, python: 'py', vllmPath: '/v', log: (l) => said.push(l), onProgress: (p) => progress.push(p) });
    const backend = log.calls[0][2].backend;
    assert.equal((backend as Backend).kind, 'cuda');
    assert.deepEqual(log.made.slice(0, 4).map((m) => [m.shape, m.dtype, m.opts, m.to === backend]), [
      [[32, 64], 'bf16', { seed: 5 }, true], [[32, 8192], 'bf16', { seed: 4 }, true], [[32], 'f32', { seed: 6 }, true], [[32], 'f32', { seed: 7 }, true],
    ]);
    assert.deepEqual(log.made.slice(4).map((m) => m.shape), [[64, 96], [64, 10240], [48], [48]]);
    const dims = { Hk: 16, Hv: 32, Dk: 128, Dv: 128 };
    const o = (arm: string) => ({ ...dims, arm, qkvDtype: 'bf16', backend });
    assert.deepEqual(log.calls.slice(0, 5).map((c) => [c[0], c[2]]), ['tree', 'tree', 'bad', 'fast', 'pmine'].map((a) => ['postconv', o(a)]));
    const inputs = log.calls[0][1] as Record<string, { m?: Made; of?: Made; start?: number; count?: number }>;
    assert.deepEqual(Object.keys(inputs), ['convOut', 'b', 'a', 'ALog', 'dtBias']);
    assert.deepEqual([inputs.convOut.m, inputs.ALog.m, inputs.dtBias.m], [log.made[1], log.made[2], log.made[3]]);
    assert.deepEqual([inputs.b, inputs.a], [{ of: log.made[0], start: 0, count: 32 }, { of: log.made[0], start: 32, count: 32 }]);
    assert.deepEqual(log.prepared.slice(0, 4).map((p) => [p.kind, p.label, p.opts, p.inputs === inputs]), ['tree', 'bad', 'fast', 'pmine'].map((a) => ['postconv', a, o(a), true]));
    const bytes = postconvBytes(32, dims, 2, 2, 2);
    const bytes2 = postconvBytes(64, { ...dims, Hv: 48 }, 2, 2, 2);
    assert.deepEqual(log.timed[0].cases.map((c) => c.meta), [
      { arm: 'tree', shape: PS, T: 32, ...dims, dtype: 'bf16', note: undefined, planted: false },
      { arm: 'bad', shape: PS, T: 32, ...dims, dtype: 'bf16', note: 'PLANTED MUTANT (wrong f32 bits)', planted: true },
      { arm: 'fast', shape: PS, T: 32, ...dims, dtype: 'bf16', note: undefined, planted: false },
      { arm: 'pmine', shape: PS, T: 32, ...dims, dtype: 'bf16', note: 'PLANTED DEFECT (user arm): drops beta', planted: true },
      { bytes },
    ]);
    assert.deepEqual(log.timed[0].opts, { backend, ...TIMING, maxTimeMs: 1500 });
    const rows = (shape: string, b: number, copyUs: number) => [
      row(shape, 'tree', undefined, 0, 20, 20, b, copyUs),
      row(shape, 'bad', undefined, 0, 6, 19, b, copyUs, { planted: true, note: 'PLANTED MUTANT (wrong f32 bits)' }),
      row(shape, 'fast', undefined, 3, 5, 18, b, copyUs),
      row(shape, 'pmine', undefined, 0, 4, 17, b, copyUs, { planted: true, note: 'PLANTED DEFECT (user arm): drops beta' }),
    ];
    const withTorch = rows(PS, bytes, 4).map((x) => ({ ...x, xTorch: x.medianUs / 10 }));
    const own = (us: string) => `vllm 0.9.2, triton 3.3.0, its own process, host ahead of the GPU: ×copy against its own copy (${us} µs); not bit-exact`;
    assert.deepEqual(r.rows, [...withTorch, ...rows(PS2, bytes2, 8),
      // tree is the only correct arm that is not planted: 20 µs, 5.00× its copy.
      { shape: PS, arm: 'vLLM (Triton)', correct: false, mismatches: NaN, medianUs: 8, p10Us: 7, p90Us: 9, n: 31, bytes: 1000, gbps: 1000 / 8e3, xCopy: 2,
        note: `outputs checked against a float32 formula; ${own('4.0')}; fastest correct arm tree 5.00× copy = 2.50× vLLM's time (copy-normalised; 2.50× in µs)` },
      { shape: PS2, arm: 'vLLM (Triton)', correct: false, mismatches: NaN, medianUs: 8, p10Us: 7, p90Us: 9, n: 31, bytes: 1000, gbps: 1000 / 8e3, xCopy: 0.5,
        note: `NOT COMPARABLE: 0.50× its copy is BELOW THE COPY FLOOR: it cannot have moved its bytes. ${own('16.0')}` },
    ]);
    assert.deepEqual(r.copies, [{ shape: PS, medianUs: 4, gbps: bytes / 4e3 }, { shape: PS2, medianUs: 8, gbps: bytes2 / 8e3 }]);
    assert.deepEqual(r.torchRows, [{ shape: PS, medianUs: 10, p10Us: 9, p90Us: 11, n: 3 }]);
    assert.deepEqual(r.baselines.map((b) => [b.baseline, b.shape, b.fairUs]), [['PyTorch eager', PS, 10], ['vLLM', PS, 8], ['vLLM', PS2, 8]]);
    assert.deepEqual(r.stops, [{ shape: PS, reason: 'noise-target', detail: 'stopped 1' }, { shape: PS2, reason: 'time-cap', detail: 'stopped 2' }]);
    assert.deepEqual(JSON.parse(log.spawned[0].opts.input as string), [
      { op: 'postconv', id: PS, T: 32, Hk: 16, Hv: 32, Dk: 128, Dv: 128 }, { op: 'postconv', id: PS2, T: 64, Hk: 16, Hv: 48, Dk: 128, Dv: 128 },
    ]);
    assert.deepEqual(log.spawned.map((s) => [s.cmd, s.args.length, s.opts.input]), [['py', 1, log.spawned[0].opts.input], ['py', 3, log.spawned[0].opts.input]]);
    assert.deepEqual([r.op, r.revision, r.provenance, r.torch, 'timings' in r], ['postconv', 'REV', { runId: 'run 1' }, { version: 't', cuda: 'c', device: 'd' }, false]);
    assert.deepEqual(said[0], `postconv ${PS}: timing 4 arms + copy (${(bytes / 1e6).toFixed(1)} MB)`);
    assert.deepEqual(partials(progress), [
      [`written after shape 1 of 2 (${PS}), before the run's end`, 4], [`written after shape 2 of 2 (${PS2}), before the run's end`, 8],
      ['written after every shape and the PyTorch baselines, before the run\'s end', 8],
    ]);
    assert.deepEqual(log.userArm, [['postconv', 'pmine'], ['postconv', 'pmine']], 'once per shape');
    assert.deepEqual(log.made.map((m) => m.released), [1, 1, 1, 1, 1, 1, 1, 1]);
    assert.deepEqual(log.results.map((x) => x.released), Array(10).fill(1));
    assert.deepEqual(log.prepared.map((x) => x.released), Array(8).fill(1));
    assert.deepEqual(log.copies.map((x) => x.released), [1, 1]);
  });

  it('postconv: arms select by name; the reference still validates; an unknown arm is refused; no baseline without torch', async () => {
    const log = world(stubs);
    const r = await benchPostconv({ backend: reportingCuda(host), quick: true, shapes: ['Hv=32) T=64'], arms: ['fast'], vllmPath: '/v', timing: { maxTimeMs: 9 } });
    assert.deepEqual(log.calls.map((c) => c[2].arm), ['tree', 'fast']);
    assert.deepEqual(r.rows.map((x) => [x.shape, x.arm]), [['Qwen3.5-4B (Hk=16, Hv=32) T=64', 'fast']]);
    assert.deepEqual([log.timed[0].opts.maxTimeMs, r.torch, log.spawned.length], [9, null, 0]);
    await assert.rejects(benchPostconv({ backend: host, quick: true, arms: ['scalar'] }), (e: Error) => e instanceof RangeError
      && e.message === `arms: 'scalar' is not a timed arm; expected one of tree, bad, fast, pmine`);
    const full = await benchPostconv({ backend: host, shapes: ['Hv=48) T=512'], arms: ['tree'], samples: true, torch: true, vllmPath: '/v' });
    assert.deepEqual([log.made.slice(-4).map((m) => m.shape), log.timed[1].opts.maxTimeMs, full.timings!.length, full.torch, log.spawned.length], [[[512, 96], [512, 10240], [48], [48]], 2500, 1, null, 0]);
  });

  it('postconv: a failing check releases the reference and the tensors', async () => {
    const log = world(stubs);
    stubs.set(postM, 'forward', async (_inputs: unknown, o: { arm: string }) => {
      if (o.arm === 'fast') throw new Error('no fast');
      const r = { arm: o.arm, released: 0 };
      log.results.push(r);
      return { q: { bad: 0 }, k: { bad: 0 }, v: { bad: 0 }, g: { bad: 0 }, beta: { bad: 0 }, release: () => void r.released++ };
    });
    await assert.rejects(benchPostconv({ backend: host, quick: true, shapes: ['Hv=32) T=32'] }), /^Error: no fast$/);
    assert.deepEqual(log.results.map((x) => [x.arm, x.released]), [['tree', 1], ['tree', 1], ['bad', 1]]);
    assert.deepEqual([log.made.map((m) => m.released), log.prepared.length], [[1, 1, 1, 1], 0]);
  });

  it('postconv: torch without vllmPath runs PyTorch only', async () => {
    const log = world(stubs, { child: { 'torch_reference.py': { status: 0, stdout: lines({ torch: 't', cuda: 'c', device: 'd' }) } } });
    const r = await benchPostconv({ backend: reportingCuda(host), quick: true, shapes: ['Hv=32) T=64'], arms: ['fast'], torch: true, python: 'py' });
    assert.deepEqual(log.spawned.map((x) => [x.cmd, x.args]), [['py', ['/ROOT/bench/torch_reference.py']]]);
    assert.deepEqual([r.torch, r.stops.length], [{ version: 't', cuda: 'c', device: 'd' }, 1]);
  });
});

describe('benchFused on stand-in ops and timing', () => {
  const stubs = new Stubs();
  afterEach(() => stubs.restore());

  const F1 = 'Qwen3.5-4B (quick: Hk=1, Hv=2) T=64';
  const F2 = 'Qwen3.5-4B (quick) varlen 8×, 128 tok';
  const F3 = 'Qwen3.5-4B (quick: Hk=1, Hv=2) T=256';
  const V8 = [7, 13, 15, 22, 19, 22, 16, 14];
  const ALT8 = [true, false, true, false, true, false, true, false];
  const ARMS = { conv: [conv('scalar', { reference: true }), conv('stream')], postconv: [post('tree', { reference: true }), post('vec-tile')] };
  const dims = { Hk: 1, Hv: 2, Dk: 128, Dv: 128 };
  const fb = (T: number, N: number, nInitial: number) => fusedBytes(T, dims, { xBytes: 2, qkvBytes: 2, gateBytes: 2, N, nInitial, K: 4 });
  const STEP1 = 'step 1 of the stream → vec-tile chain; ×copy vs the fused traffic';
  const STEP2 = 'step 2 of the stream → vec-tile chain; ×copy vs the fused traffic';
  const SAME = 'bits == conv(scalar)→post-conv(tree)';

  it('every fused arm and the chain checked against the reference chain, then timed beside the chain\'s two steps; the chain row sums them', async () => {
    // The second shape's arms twice as slow as the first's.
    const log = world(stubs, { arms: ARMS, fusedBad: { f2: { k: 1, convState: 2 } }, fusedRan: { f2: 'f1' }, median: (label, run, i) => (label === 'copy' ? 4 * run : 10 * (i + 1) * run) });
    const said: string[] = [];
    const progress: BenchReport[] = [];
    const r = await benchFused({ backend: host, quick: true, shapes: ['4B (quick: Hk=1, Hv=2) T=64', '4B (quick) varlen'], arms: [], samples: true, log: (l) => said.push(l), onProgress: (p) => progress.push(p) });
    assert.deepEqual(log.made.map((m) => [m.shape, m.dtype, m.opts, m.to === host]), [
      [[64, 4], 'bf16', { seed: 5, scale: 2 }, true], [[64, 512], 'bf16', { seed: 1 }, true], [[512, 4], 'bf16', { seed: 2, scale: 0.5 }, true],
      [[1, 512, 3], 'f32', { seed: 3 }, true], [[2], 'f32', { seed: 6, scale: 0.5 }, true], [[2], 'f32', { seed: 7 }, true],
      [[128, 4], 'bf16', { seed: 5, scale: 2 }, true], [[128, 512], 'bf16', { seed: 1 }, true], [[512, 4], 'bf16', { seed: 2, scale: 0.5 }, true],
      [[8, 512, 3], 'f32', { seed: 3 }, true], [[2], 'f32', { seed: 6, scale: 0.5 }, true], [[2], 'f32', { seed: 7 }, true],
    ]);
    const fopts = { ...dims, convDtype: 'bf16', qkvDtype: 'bf16', backend: host };
    const convOpts = { arm: 'stream', mapping: 'exact', outDtype: 'bf16', backend: host };
    const postOpts = { ...dims, arm: 'vec-tile', qkvDtype: 'bf16', backend: host };
    const calls = [['chain', fopts], ['fused', { ...fopts, arm: 'f1' }], ['fused', { ...fopts, arm: 'f2' }], ['conv', convOpts], ['postconv', postOpts]];
    assert.deepEqual(log.calls.map((c) => [c[0], c[2]]), [...calls, ...calls]);
    const inputs = log.calls[0][1] as Record<string, unknown>;
    const t = (k: string) => (inputs[k] as { m: Made }).m;
    assert.deepEqual(Object.keys(inputs), ['x', 'weight', 'queryStartLoc', 'hasInitialState', 'convState', 'b', 'a', 'ALog', 'dtBias']);
    assert.deepEqual([t('x'), t('weight'), t('convState'), t('ALog'), t('dtBias')], [1, 2, 3, 4, 5].map((i) => log.made[i]));
    assert.deepEqual([inputs.queryStartLoc, inputs.hasInitialState, inputs.b, inputs.a], [[0, 64], [false], { of: log.made[0], start: 0, count: 2 }, { of: log.made[0], start: 2, count: 2 }]);
    assert.deepEqual([log.calls[5][1].queryStartLoc, log.calls[5][1].hasInitialState], [[0, 7, 20, 35, 57, 76, 98, 114, 128], ALT8]);
    assert.ok(log.calls[1][1] === inputs && log.calls[2][1] === inputs);
    const convInputs = log.calls[3][1];
    assert.deepEqual(convInputs, { x: inputs.x, weight: inputs.weight, queryStartLoc: [0, 64], hasInitialState: [false], convState: inputs.convState });
    const postInputs = log.calls[4][1];
    assert.deepEqual(Object.keys(postInputs), ['convOut', 'a', 'b', 'ALog', 'dtBias']);
    assert.deepEqual([postInputs.convOut, postInputs.a, postInputs.b, postInputs.ALog, postInputs.dtBias], [{ bad: 0 }, inputs.a, inputs.b, inputs.ALog, inputs.dtBias]);
    // Timed: both fused arms, the conv step, the post-conv step (on the conv step's output) and the copy.
    const labels = ['fused f1', 'fused f2', 'conv stream/exact', 'postconv vec-tile'];
    assert.deepEqual(log.prepared.slice(0, 4).map((p) => [p.kind, p.label, p.opts]), [
      ['fused', 'fused f1', { ...fopts, arm: 'f1' }], ['fused', 'fused f2', { ...fopts, arm: 'f2' }], ['conv', 'conv stream/exact', convOpts], ['postconv', 'postconv vec-tile', postOpts],
    ]);
    assert.deepEqual(log.prepared.slice(0, 4).map((p) => p.inputs), [inputs, inputs, convInputs, postInputs]);
    assert.deepEqual(log.prepared.slice(0, 4).map((p) => p.inputs.convOut === postInputs.convOut), [false, false, false, true]);
    const DIFF = 'q 0, k 1, v 0, g 0, beta 0, convState 2';
    const meta = (shape: string, T: number) => ({ shape, T, ...dims, K: 4, dtype: 'bf16' });
    assert.deepEqual(log.timed[0].cases.map((c) => [c.label, c.op.kind, c.meta]), [
      ['fused f1', 'fused', { arm: 'fused f1', note: SAME, ...meta(F1, 64) }],
      ['fused f2', 'fused', { arm: 'fused f2', note: `MISMATCH: ${DIFF}; fell back to f1`, ...meta(F1, 64) }],
      ['conv stream/exact', 'conv', { arm: 'conv stream', mapping: 'exact', note: STEP1, ...meta(F1, 64) }],
      ['postconv vec-tile', 'postconv', { arm: 'postconv vec-tile', note: STEP2, ...meta(F1, 64) }],
      ['copy', 'copy', { bytes: fb(64, 1, 0) }],
    ]);
    assert.deepEqual(log.timed.map((x) => x.opts), [1, 2].map(() => ({ backend: host, ...TIMING, maxTimeMs: 1500 })));
    const b1 = fb(64, 1, 0);
    const b2 = fb(128, 8, 4);
    assert.deepEqual(said, [
      `fused ${F1}: fused f2 MISMATCH vs conv(scalar)→post-conv(tree): ${DIFF}`, `fused ${F1}: timing 4 arms + copy (${(b1 / 1e6).toFixed(1)} MB)`,
      `fused ${F2}: fused f2 MISMATCH vs conv(scalar)→post-conv(tree): ${DIFF}`, `fused ${F2}: timing 4 arms + copy (${(b2 / 1e6).toFixed(1)} MB)`,
    ]);
    const rows = (shape: string, bytes: number, copyUs: number, k: number) => [
      row(shape, 'fused f1', undefined, 0, 10 * k, 20, bytes, copyUs, { note: SAME }),
      row(shape, 'fused f2', undefined, 3, 20 * k, 19, bytes, copyUs, { note: `MISMATCH: ${DIFF}; fell back to f1` }),
      row(shape, 'conv stream', 'exact', 0, 30 * k, 18, bytes, copyUs, { note: STEP1 }),
      row(shape, 'postconv vec-tile', undefined, 0, 40 * k, 17, bytes, copyUs, { note: STEP2 }),
      {
        shape, arm: 'chain stream → vec-tile', correct: true, mismatches: 0, medianUs: 70 * k, p10Us: NaN, p90Us: NaN, n: 17, bytes, gbps: bytes / (70 * k * 1e3), xCopy: 70 * k / copyUs,
        note: 'sum of the two medians (conv stream/exact + postconv vec-tile); fused f1 / chain = 0.143; fused f2 / chain = 0.286',
      },
    ];
    assert.deepEqual(r, {
      op: 'fused', revision: 'REV', provenance: { runId: 'run 1' },
      torch: { error: 'bench/torch_reference.py has no fused case; bench conv and bench postconv time each step against PyTorch' },
      rows: [...rows(F1, b1, 4, 1), ...rows(F2, b2, 8, 2)],
      copies: [{ shape: F1, medianUs: 4, gbps: b1 / 4e3 }, { shape: F2, medianUs: 8, gbps: b2 / 8e3 }],
      torchRows: [], baselines: [],
      stops: [{ shape: F1, reason: 'noise-target', detail: 'stopped 1' }, { shape: F2, reason: 'time-cap', detail: 'stopped 2' }],
    });
    assert.deepEqual(partials(progress), [[`written after shape 1 of 2 (${F1}), before the run's end`, 5], [`written after shape 2 of 2 (${F2}), before the run's end`, 10]]);
    assert.deepEqual(log.results.map((x) => [x.arm, x.released]), [...['chain', 'f1', 'f2', 'stream/exact', 'vec-tile'], ...['chain', 'f1', 'f2', 'stream/exact', 'vec-tile']].map((a) => [a, 1]));
    assert.deepEqual(log.prepared.map((p) => p.released), Array(8).fill(1));
    assert.deepEqual(log.made.map((m) => m.released), Array(12).fill(1));
    assert.deepEqual(log.copies.map((c) => [c.bytes, c.released]), [[b1, 1], [b2, 1]]);
  });

  it('a chain that differs from the reference: logged, its rows and the chain row marked; a conv step that ran another arm is named', async () => {
    const log = world(stubs, {
      arms: ARMS, chainBad: { q: 1, convState: 3 }, convRan: { arm: 'vec', mapping: 'sequence' },
      median: (label, run) => ({ 'fused f1': 9, 'fused f2': 7, 'conv stream/exact': 5, 'postconv vec-tile': 6 } as Record<string, number>)[label] ?? 2 * run,
    });
    const said: string[] = [];
    const r = await benchFused({ backend: host, shapes: ['27B T=2048'], log: (l) => said.push(l) });
    const S = 'Qwen3.5-27B T=2048';
    const d = { Hk: 16, Hv: 48, Dk: 128, Dv: 128 };
    const bytes = fusedBytes(2048, d, { xBytes: 2, qkvBytes: 2, gateBytes: 2, N: 1, nInitial: 0, K: 4 });
    assert.deepEqual(log.made.map((m) => m.shape), [[2048, 96], [2048, 10240], [10240, 4], [1, 10240, 3], [48], [48]]);
    assert.deepEqual(said, [`fused ${S}: stream → vec-tile chain MISMATCH vs the reference chain: q 1, k 0, v 0, g 0, beta 0, convState 3`, `fused ${S}: timing 4 arms + copy (${(bytes / 1e6).toFixed(1)} MB)`]);
    assert.equal(log.timed[0].opts.maxTimeMs, 2500);
    const note1 = 'step 1 of the stream → vec-tile chain (ran vec/sequence); ×copy vs the fused traffic';
    assert.deepEqual(r.rows, [
      row(S, 'fused f1', undefined, 0, 9, 20, bytes, 2, { note: SAME }),
      row(S, 'fused f2', undefined, 0, 7, 19, bytes, 2, { note: SAME }),
      row(S, 'conv stream', 'exact', 4, 5, 18, bytes, 2, { note: note1 }),
      row(S, 'postconv vec-tile', undefined, 4, 6, 17, bytes, 2, { note: STEP2 }),
      {
        shape: S, arm: 'chain stream → vec-tile', correct: false, mismatches: 4, medianUs: 11, p10Us: NaN, p90Us: NaN, n: 17, bytes, gbps: bytes / 11e3, xCopy: 11 / 2,
        note: 'sum of the two medians (conv stream/exact + postconv vec-tile); fused f1 / chain = 0.818; fused f2 / chain = 0.636',
      },
    ]);
  });

  it('arms is refused before anything runs (the set is fixed); a failing reference chain releases every tensor', async () => {
    let log = world(stubs, { arms: ARMS });
    await assert.rejects(benchFused({ backend: host, quick: true, arms: ['f1'] }), (e: Error) => e instanceof RangeError
      && e.message === 'arms: bench fused times its fixed set (fused f1, f2; the stream → vec-tile chain); use --shapes to pick shapes');
    assert.deepEqual([log.made.length, log.calls.length], [0, 0]);
    await assert.rejects(benchFused({ backend: host, shapes: ['(quick'] }), (e: Error) => e instanceof RangeError
      && e.message === `shapes: ["(quick"] match none of ${fusedBenchShapes().map((s) => `'${s.id}'`).join(', ')}`);
    stubs.restore();
    log = world(stubs, { arms: ARMS, forwardFails: 'chain' });
    await assert.rejects(benchFused({ backend: host, quick: true, shapes: [F1] }), /^Error: chain failed$/);
    assert.deepEqual([log.made.map((m) => m.released), log.prepared.length, log.results.length], [[1, 1, 1, 1, 1, 1], 0, 0]);
  });

  describe('vLLM\'s conv + post-conv (CUDA only; the Python child replaced)', () => {
    const cuda = reportingCuda(host);
    const res = (id: string, median: number, xCopy: number, n: number, check?: object) => ({ id, median_us: median, p10_us: median - 1, p90_us: median + 1, n, bytes: 1, x_copy: xCopy, copy_median_us: 1, ...(check ? { check } : {}) });
    const OK = { ok: true };

    it('one row per shape with both results: the sum, fused / vLLM when both are trusted; shapes missing a result are skipped', async () => {
      const stdout = lines(
        { vllm: '0.9.2', triton: '3.3.0' },
        res(`${F1} conv`, 12.34, 1.5, 9, OK), res(`${F1} postconv`, 45.67, 2, 8, OK),
        res(`${F3} conv`, 10, 1, 7), res(`${F3} postconv`, 20, 3, 6, OK),
        res(`${F2} conv`, 10, 1, 5, OK),
      );
      const log = world(stubs, { arms: ARMS, child: { 'vllm_reference.py': { status: 0, stdout } } });
      const said: string[] = [];
      const progress: BenchReport[] = [];
      const r = await withEnv({ GDN_TORCH_PYTHON: 'envpy' }, () => benchFused({ backend: cuda, quick: true, shapes: ['4B'], python: 'py', vllmPath: '/v', log: (l) => said.push(l), onProgress: (p) => progress.push(p) }));
      const shapes = fusedBenchShapes(true).slice(0, 3);
      assert.deepEqual(shapes.map((s) => s.id), [F1, F3, F2]);
      assert.deepEqual(log.spawned, [{
        cmd: 'py', args: ['/ROOT/bench/vllm_reference.py', '--vllm-path', '/v'],
        opts: {
          input: JSON.stringify(shapes.flatMap((s) => [
            { op: 'conv', id: `${s.id} conv`, C: 512, K: 4, lengths: s.lengths, initial_state: s.initialState },
            { op: 'postconv', id: `${s.id} postconv`, T: s.lengths.reduce((a, b) => a + b, 0), Hk: 1, Hv: 2, Dk: 128, Dv: 128 },
          ])),
          encoding: 'utf8', timeout: 900000, maxBuffer: 16777216,
        },
      }]);
      assert.deepEqual(JSON.parse(log.spawned[0].opts.input as string).map((c: { id: string; T?: number; lengths?: number[] }) => c.T ?? c.lengths!.length), [1, 64, 1, 256, 8, 128]);
      assert.equal(said[said.length - 1], 'vLLM conv + post-conv: py /ROOT/bench/vllm_reference.py --vllm-path /v (6 cases)');
      assert.deepEqual(r.baselines.map((b) => [b.baseline, b.shape, b.fairUs]), [
        ['vLLM', `${F1} conv`, 12.34], ['vLLM', `${F1} postconv`, 45.67], ['vLLM', `${F3} conv`, 10], ['vLLM', `${F3} postconv`, 20], ['vLLM', `${F2} conv`, 10],
      ]);
      const ours = r.rows.filter((x) => x.arm !== 'vLLM conv + post-conv');
      assert.equal(ours.length, 15);
      const vllm = r.rows.slice(15);
      const tail = 'not bit-exact (bf16-rounded products, approximate softplus)';
      const us1 = 12.34 + 45.67;
      const bytes1 = fb(64, 1, 0);
      const bytes3 = fb(256, 1, 0);
      assert.deepEqual(vllm, [
        {
          shape: F1, arm: 'vLLM conv + post-conv', correct: false, mismatches: NaN, medianUs: us1, p10Us: NaN, p90Us: NaN, n: 8, bytes: bytes1, gbps: bytes1 / (us1 * 1e3), xCopy: us1 / 4,
          note: `vLLM 0.9.2 (its own process, host ahead of the GPU): conv 12.3 µs (1.50x its copy) + post-conv 45.7 µs (2.00x); fused f1 / vLLM = ${(10 / us1).toFixed(3)}; fused f2 / vLLM = ${(20 / us1).toFixed(3)}; ${tail}`,
        },
        {
          shape: F3, arm: 'vLLM conv + post-conv', correct: false, mismatches: NaN, medianUs: 30, p10Us: NaN, p90Us: NaN, n: 6, bytes: bytes3, gbps: bytes3 / 30e3, xCopy: 30 / 8,
          note: `NOT COMPARABLE: conv: outputs not checked; post-conv: outputs checked against a float32 formula. vLLM 0.9.2 (its own process, host ahead of the GPU): conv 10.0 µs (1.00x its copy) + post-conv 20.0 µs (3.00x); ${tail}`,
        },
      ]);
      assert.equal(progress.length, 3, 'no checkpoint of its own before vLLM');
    });

    it('python from GDN_TORCH_PYTHON; a failing child is a stop; no fused arm timed, no row; host or no vllmPath: no child', async () => {
      // The full layout (Hk = 16), differing bits and no log; the child's output ends with a newline.
      const S = 'Qwen3.5-4B T=2048';
      const stdout = lines({ vllm: 'x' }, res(`${S} conv`, 1, 1, 1, OK), res(`${S} postconv`, 1, 1, 1, OK)) + '\n';
      let log = world(stubs, { arms: ARMS, fusedArms: [], chainBad: { q: 1 }, child: { 'vllm_reference.py': { status: 0, stdout } } });
      let r = await withEnv({ GDN_TORCH_PYTHON: 'envpy' }, () => benchFused({ backend: cuda, shapes: ['4B T=2048'], vllmPath: '/v' }));
      assert.deepEqual(log.spawned.map((s) => s.cmd), ['envpy']);
      assert.deepEqual(JSON.parse(log.spawned[0].opts.input as string), [
        { op: 'conv', id: `${S} conv`, C: 8192, K: 4, lengths: [2048], initial_state: [false] },
        { op: 'postconv', id: `${S} postconv`, T: 2048, Hk: 16, Hv: 32, Dk: 128, Dv: 128 },
      ]);
      assert.deepEqual(r.rows.map((x) => [x.arm, x.mismatches]), [['conv stream', 1], ['postconv vec-tile', 1], ['chain stream → vec-tile', 1]]);
      assert.equal(r.rows[2].note, 'sum of the two medians (conv stream/exact + postconv vec-tile); ');
      assert.equal(r.baselines.length, 2);
      stubs.restore();
      world(stubs, { arms: ARMS, fusedBad: { f1: { v: 2 } } });
      r = await benchFused({ backend: host, quick: true, shapes: [F1] });
      assert.deepEqual(r.rows.map((x) => x.mismatches), [2, 0, 0, 0, 0]);
      stubs.restore();
      log = world(stubs, { arms: ARMS, child: { 'vllm_reference.py': { status: 3, stderr: 'import vllm\nfailed\nTraceback\nboom\n' } } });
      r = await withEnv({ GDN_TORCH_PYTHON: undefined }, () => benchFused({ backend: cuda, quick: true, shapes: [F1], vllmPath: '/v' }));
      assert.deepEqual(r.stops.slice(1), [{ shape: 'vLLM', reason: 'error', detail: 'python3 exited 3: failed | Traceback | boom' }]);
      assert.deepEqual([r.rows.length, r.baselines], [5, []]);
      await benchFused({ backend: host, quick: true, shapes: [F1], vllmPath: '/v' });
      await benchFused({ backend: cuda, quick: true, shapes: [F1] });
      assert.equal(log.spawned.length, 1);
    });
  });
});

describe('benchMarkdown and writeJson', () => {
  const prov = {
    device: 'NVIDIA H200', sm: '9.0', smCount: 132, l2Bytes: 60 * 2 ** 20, driver: '570.1', runtime: '', smClockMhz: 1980, maxSmClockMhz: 1980, memClockMhz: 3201,
    maxMemClockMhz: 3201, clocksSource: 'nvml', clocksAfter: { smClockMhz: 1755, memClockMhz: 3200 }, arithmetic: 3, runId: 'r1', time: '2025-01-01T00:00:00Z', mode: 'cold',
  };
  const base = (o: Partial<BenchRow>): BenchRow => ({ shape: 'S', arm: 'a', correct: true, mismatches: 0, medianUs: 10, p10Us: 9, p90Us: 12, n: 30, bytes: 1e6, gbps: 100, xCopy: 1.25, ...o });
  const report = (o: Partial<BenchReport> = {}): BenchReport => ({
    op: 'conv', revision: 'abc1234', provenance: null, torch: null, rows: [], copies: [], torchRows: [], baselines: [], stops: [], ...o,
  });
  const LEGEND = '- µs per launch: median [p10, p90]; GB/s = minimal bytes moved / median; ×copy = median / median of a device copy of the same bytes in the same run; ×torch = median / PyTorch eager median';
  const HEAD = ['| arm | mapping | median µs | p10 | p90 | n | GB/s | ×copy | ×torch | note |', '|---|---|---:|---:|---:|---:|---:|---:|---:|---|'];

  it('a title per op, the provenance block, the PyTorch line, one table per shape with the notes of incorrect rows', () => {
    const r = report({
      provenance: prov as never, torch: { version: '2.5.1', cuda: '12.4', device: 'NVIDIA H200' },
      rows: [
        base({ arm: 'scalar', mapping: 'exact', note: 'reference', xTorch: 0.5 }),
        base({ shape: 'T', arm: 'scalar', mapping: 'exact-racy', correct: false, mismatches: 7, medianUs: NaN, p10Us: Infinity, xCopy: -Infinity }),
        base({ arm: 'taps', mapping: 'sequence', correct: false, mismatches: 3, note: 'PLANTED', gbps: 1234.5 }),
        base({ arm: 'vLLM (Triton)', correct: false, mismatches: NaN, note: 'theirs' }),
        base({ shape: 'T', arm: 'tree', xTorch: 2 / 3 }),
      ],
      copies: [{ shape: 'T', medianUs: 2.25, gbps: 444.4 }, { shape: 'S', medianUs: 8, gbps: 125 }],
      torchRows: [{ shape: 'S', medianUs: 20, p10Us: 19.96, p90Us: NaN, n: 5 }],
    });
    assert.equal(benchMarkdown(r, 'gdnlab bench conv'), [
      '### Causal conv — `gdnlab bench conv`', '',
      '- device: NVIDIA H200 (sm_90, 132 SMs, L2 60 MiB); driver 570.1, runtime ?',
      '- clocks at start: SM 1980 MHz (max 1980), memory 3201 MHz (max 3201) [nvml]; at end of the first shape: SM 1755, memory 3200 MHz',
      '- revision abc1234, arithmetic v3; run r1 at 2025-01-01T00:00:00Z; cold L2 (flushed outside every timed launch), arms interleaved with rotated order',
      '- PyTorch 2.5.1 (CUDA 12.4) on NVIDIA H200, same invocation, CUDA events, L2 flushed before each call, host ahead of the GPU (bench/fair_timing.py)',
      LEGEND, '',
      '**S** — copy 8.0 µs (125 GB/s); PyTorch eager 20.0 µs [20.0, –]', '', ...HEAD,
      '| scalar | exact | 10.0 | 9.0 | 12.0 | 30 | 100 | 1.25 | 0.50 | reference |',
      '| taps | sequence | 10.0 | 9.0 | 12.0 | 30 | 1235 | 1.25 | – | 3 elements differ from the reference arm; PLANTED |',
      '| vLLM (Triton) |  | 10.0 | 9.0 | 12.0 | 30 | 100 | 1.25 | – | bits not checked; theirs |',
      '',
      '**T** — copy 2.3 µs (444 GB/s)', '', ...HEAD,
      '| scalar | exact-racy | – | – | 12.0 | 30 | 100 | – | – | 7 elements differ from the reference arm (the #305 race) |',
      '| tree |  | 10.0 | 9.0 | 12.0 | 30 | 100 | 1.25 | 0.67 |  |',
      '',
    ].join('\n'));
    assert.equal(benchMarkdown(report({ op: 'postconv', provenance: { ...prov, sm: '10.0', driver: '', runtime: '12.8', l2Bytes: 126 * 2 ** 20 } as never }), 'c').split('\n').slice(0, 3).join('\n'),
      '### Post-conv — `c`\n\n- device: NVIDIA H200 (sm_100, 132 SMs, L2 126 MiB); driver ?, runtime 12.8');
  });

  it('fused title, the incomplete line, PyTorch not measured, no provenance; the external baselines by method', () => {
    const r = report({
      op: 'fused', incomplete: 'written after shape 1 of 2 (S), before the run\'s end', torch: { error: 'no torch' },
      baselines: [
        { baseline: 'PyTorch eager', shape: 'S', fairUs: 20, naiveUs: 50, graphUs: 18, holdUs: 400.4, retaken: 3 },
        { baseline: 'vLLM', shape: 'S conv', fairUs: 8, naiveUs: NaN, graphUs: null, graphError: 'capture failed', holdUs: NaN, retaken: 1 },
        { baseline: 'vLLM', shape: 'S postconv', fairUs: 4, naiveUs: 6, graphUs: null, holdUs: 900, retaken: 0 },
      ],
    });
    assert.equal(benchMarkdown(r, 'gdnlab bench fused --quick'), [
      '### Fused conv → post-conv — `gdnlab bench fused --quick`', '',
      '**Incomplete**: written after shape 1 of 2 (S), before the run\'s end (the run was stopped or is still going; the rows below are what it had measured).', '',
      '- PyTorch: not measured (no torch)',
      LEGEND, '',
      '**External baselines by timing method** — fair: a GPU-side hold keeps the host ahead, so the call\'s host time is not counted (every ratio above uses it); naive: the host synchronised after every sample, no hold; graph: a CUDA-graph replay of the call, host ahead', '',
      '| baseline | shape | fair µs | naive µs | naive / fair | graph µs | graph / fair |', '|---|---|---:|---:|---:|---:|---:|',
      '| PyTorch eager | S | 20.0 | 50.0 | 2.50 | 18.0 | 0.90 |',
      '| vLLM | S conv | 8.0 | – | – | – (capture failed) | – |',
      '| vLLM | S postconv | 4.0 | 6.0 | 1.50 | – (not captured) | – |',
      '', 'Final GPU-side hold 900 µs; samples retaken because the host was behind: 3 (cumulative per process).', '',
    ].join('\n'));
    const noHold = benchMarkdown(report({ baselines: [{ baseline: 'vLLM', shape: 'S', fairUs: 1, naiveUs: 1, graphUs: 1, holdUs: NaN, retaken: 0 }] }), 'c');
    assert.ok(noHold.endsWith('\nFinal GPU-side hold – µs; samples retaken because the host was behind: 0 (cumulative per process).\n'), noHold);
    assert.equal(benchMarkdown(report(), 'c'), ['### Causal conv — `c`', '', LEGEND, ''].join('\n'));
  });

  it('writeJson: the folders made, two-space JSON and a final newline', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gdnlab-bench-json-'));
    try {
      const file = path.join(dir, 'a', 'b', 'report.json');
      writeJson(file, { op: 'conv', rows: [1] });
      assert.equal(fs.readFileSync(file, 'utf8'), '{\n  "op": "conv",\n  "rows": [\n    1\n  ]\n}\n');
      writeJson(file, 'again');
      assert.equal(fs.readFileSync(file, 'utf8'), '"again"\n');
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
