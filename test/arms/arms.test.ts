// Arms defined at run time (docs/USER-ARMS.md): a conv and a post-conv arm compiled from source, proved
// identical to their references over the full equivalence matrices, timed beside the built-ins in
// one run, replayed under host block orders, inspected; the cache; and planted faults that must each
// give an error naming the arm while the next call still works.

import { strict as assert } from 'assert';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { Backend, GdnError } from '../../lib/backend';
import { STATUS } from '../../lib/native/gdn';
import * as conv from '../../lib/ops/conv';
import * as postconv from '../../lib/ops/postconv';
import { checkConv, convMatrix, makeConvInputs, allArmMappings } from '../../lib/check/conv';
import { checkPostconv, postconvMatrix, runPostconvDefects, OUTPUTS } from '../../lib/check/postconv';
import { runUserConvDefects } from '../../lib/check/mutants';
import { countBitMismatches } from '../../lib/analysis/bits';
import { timeArms } from '../../lib/check/timed';
import { buildRecipe, compileModule } from '../../lib/arms/compile';
import { inspectArm, occupancy, SM_LIMITS, parsePtxasVerbose } from '../../lib/arms/inspect';
import { MIME_BUNDLE, hasMimeBundle } from '../../lib/view/display';
import * as util from 'util';
import { undefineArm } from '../../lib/arms/define';
import { arms as gdnArms } from '../../lib/arms/table';
import { forEachBackend } from '../backends';
import { FAULTS, REG16_RACY_SOURCE, REG16_SOURCE, TILE_PAIRS_SOURCE, TILE_SEQ_SOURCE, TILE_TREE_SOURCE } from './sources';

const cacheRoot = fs.mkdtempSync(path.join(os.tmpdir(), 'gdnlab-arm-cache-'));
process.env.GDNLAB_ARM_CACHE = cacheRoot;
after(() => fs.rmSync(cacheRoot, { recursive: true, force: true }));

forEachBackend((backend, kind) => {
  describe('user arms: defined, compiled, equal to their references', function () {
    this.timeout(900_000);
    const defined: { op: 'conv' | 'postconv'; name: string }[] = [];
    after(() => {
      for (const d of defined) undefineArm(d.op, d.name);
    });

    it('a conv arm compiles once; defining the unchanged source again is a cache hit with the same id', () => {
      const first = conv.defineArm({ name: 'reg16', source: REG16_SOURCE, tokensPerProgram: 16, description: 'reg with 16-token programs' }, { backend: backend() });
      defined.push({ op: 'conv', name: 'reg16' });
      assert.equal(first.cached, false, first.summary);
      assert.ok(first.compileMs > 0);
      const again = conv.defineArm({ name: 'reg16', source: REG16_SOURCE, tokensPerProgram: 16, description: 'reg with 16-token programs' }, { backend: backend() });
      assert.equal(again.cached, true, again.summary);
      assert.equal(again.compileMs, 0);
      assert.equal(again.id, first.id);
      assert.match(again.summary, /replaced/);
      assert.ok(allArmMappings().some((m) => m.arm === 'reg16' && m.mapping === 'exact'), 'the equivalence matrix lists the defined arm');
      const ct = conv.launchContract('reg16', 'exact', 8192, 4, [0, 40, 41]);
      assert.equal(ct.arm, 'reg16');
      assert.equal(ct.tokensPerProgram, 16);
      assert.deepEqual(ct.programList, [[0, 0], [0, 1], [0, 2], [1, 0]]);
      assert.equal(ct.channelTiles, 64);
    });

    it('the conv arm equals scalar on the full equivalence matrix (out and conv_state, f32 and bf16 outputs, both mappings)', () => {
      const cases = convMatrix();
      assert.ok(cases.some((c) => c.outDtype === 'f32') && cases.some((c) => c.outDtype === 'bf16'));
      const report = checkConv({ backend: backend(), cases, armMappings: [{ arm: 'reg16', mapping: 'exact' }, { arm: 'reg16', mapping: 'sequence' }] });
      const mine = report.results.filter((r) => r.arm === 'reg16');
      assert.equal(mine.length, cases.length * 2);
      assert.ok(mine.every((r) => r.armRan === 'reg16'));
      const bad = mine.filter((r) => r.outMismatches + r.stateMismatches > 0);
      assert.deepEqual(bad.map((r) => `${r.case} ${r.mapping}: out ${r.outMismatches}, state ${r.stateMismatches}`), []);
    });

    if (kind === 'cuda') {
      it('the conv arm on CUDA gives the bits of the same arm on the host', () => {
        const host = Backend.open('host');
        try {
          for (const c of convMatrix({ quick: true }).filter((_, i) => i % 4 === 0)) {
            const inputs = makeConvInputs(c);
            const a = conv.forwardSync(inputs, { arm: 'reg16', mapping: 'exact', outDtype: c.outDtype, backend: backend() });
            const b = conv.forwardSync(inputs, { arm: 'reg16', mapping: 'exact', outDtype: c.outDtype, backend: host });
            assert.equal(countBitMismatches(a.out, b.out) + countBitMismatches(a.convState, b.convState), 0, c.name);
            a.release();
            b.release();
          }
        } finally {
          host.close();
        }
      });
    }

    if (kind === 'host') {
      it('host block orders: the #305 state write corrupts outputs under the reverse order, the chunk-0 write never does; as a planted defect the mutant runner catches it', () => {
        conv.defineArm({ name: 'reg16-racy', source: REG16_RACY_SOURCE, tokensPerProgram: 16, mappings: ['exact'], plantedDefect: 'the #305 state write' }, { backend: backend() });
        defined.push({ op: 'conv', name: 'reg16-racy' });
        const c = { name: 'race', C: 256, K: 4, xDtype: 'bf16' as const, outDtype: 'f32' as const, lengths: [40, 3, 70], initialState: [true, true, true], maskDtype: 'i32' as const, bias: true, xRowStride: 256, seed: 305 };
        const inputs = makeConvInputs(c);
        const ref = conv.forwardSync(inputs, { arm: 'scalar', backend: backend() });
        const run = (arm: string, schedule: conv.Schedule) => {
          const r = conv.forwardSync(inputs, { arm, mapping: 'exact', schedule, backend: backend() });
          const n = countBitMismatches(r.out, ref.out) + countBitMismatches(r.convState, ref.convState);
          r.release();
          return n;
        };
        assert.equal(run('reg16-racy', 'forward'), 0);
        assert.ok(run('reg16-racy', 'reverse') > 0, 'the reverse order must expose the race');
        assert.equal(run('reg16', 'reverse'), 0);
        assert.equal(run('reg16', { shuffle: 7 }), 0);
        ref.release();
        // A planted defect is left out of what must equal scalar, and the mutant runner requires it caught.
        assert.ok(!allArmMappings().some((a) => a.arm === 'reg16-racy'), 'the default equivalence list leaves a planted defect out');
        assert.ok(gdnArms('conv').find((a) => a.name === 'reg16-racy')?.mutant, 'listed as a mutant');
        const outcome = runUserConvDefects(backend()).find((o) => o.mutant === 'arm:reg16-racy');
        assert.ok(outcome?.caught, `the mutant runner catches it: ${outcome?.detail}`);
        assert.equal(outcome?.plantedDefect, 'the #305 state write');
      });
    }

    // On the host the matrix's T = 2048 cases are left out: the host replays the tree reference with
    // fibers (seconds per case), and test/ops/postconv.test.ts already runs them for the built-in arms.
    it(`a post-conv arm with the tree fold equals tree on the ${kind === 'cuda' ? 'full matrix' : 'matrix without its T = 2048 cases'} (q, k, v, g, beta; f32 and bf16 outputs)`, async () => {
      const d = postconv.defineArm({ name: 'tile16', source: TILE_TREE_SOURCE, barriers: true }, { backend: backend() });
      defined.push({ op: 'postconv', name: 'tile16' });
      assert.ok(gdnArms('postconv').find((a) => a.name === 'tile16')?.user, 'libgdn lists the defined arm, flagged user');
      const cases = postconvMatrix().filter((c) => kind === 'cuda' || c.T < 2048);
      const report = await checkPostconv({ backend: backend(), cases, arms: ['tile16'], reference: false });
      const mine = report.results.filter((r) => r.arm === 'tile16');
      assert.equal(mine.length, cases.length);
      assert.ok(mine.some((r) => r.armRan === 'tile16') && mine.some((r) => r.armRan === 'tree'), 'runs for Dk = Dv = 128, falls back otherwise');
      const bad = mine.filter((r) => OUTPUTS.some((o) => r.mismatches[o] > 0));
      assert.deepEqual(bad.map((r) => `${r.case}: ${JSON.stringify(r.mismatches)}`), []);
    });

    it('a post-conv arm that exchanges two tokens\' sums per step (shfl_xor_each) equals tree (q, k, v, g, beta; f32 and bf16 outputs)', async () => {
      postconv.defineArm({ name: 'tile16-pairs', source: TILE_PAIRS_SOURCE, barriers: true }, { backend: backend() });
      defined.push({ op: 'postconv', name: 'tile16-pairs' });
      const cases = postconvMatrix({ quick: true }).filter((c) => c.Dk === 128 && c.Dv === 128);
      assert.ok(cases.length >= 4, `${cases.length} cases`);
      const report = await checkPostconv({ backend: backend(), cases, arms: ['tile16-pairs'], reference: false });
      const mine = report.results.filter((r) => r.arm === 'tile16-pairs');
      assert.equal(mine.length, cases.length);
      assert.ok(mine.every((r) => r.armRan === 'tile16-pairs'), 'runs as defined for Dk = Dv = 128');
      const bad = mine.filter((r) => OUTPUTS.some((o) => r.mismatches[o] > 0));
      assert.deepEqual(bad.map((r) => `${r.case}: ${JSON.stringify(r.mismatches)}`), []);
    });

    it('a post-conv arm with a changed fold, defined as a planted defect: the mutant runner catches it in f32 outputs, bf16 hides most', async () => {
      postconv.defineArm({ name: 'tile16-seq', source: TILE_SEQ_SOURCE, barriers: true, plantedDefect: 'a sequential fold' }, { backend: backend() });
      defined.push({ op: 'postconv', name: 'tile16-seq' });
      const report = await checkPostconv({ backend: backend(), cases: postconvMatrix({ quick: true }).filter((c) => c.T === 16), reference: false });
      assert.ok(!report.results.some((r) => r.arm === 'tile16-seq'), 'the default equivalence list leaves a planted defect out');
      const cases = postconvMatrix({ quick: true }).filter((c) => c.Dk === 128 && c.T >= 16);
      const outcome = (await runPostconvDefects(backend(), cases)).find((o) => o.arm === 'tile16-seq')!;
      assert.ok(outcome.caught);
      assert.ok(outcome.caughtInF32 > outcome.f32Cases / 4, `caught in ${outcome.caughtInF32} of ${outcome.f32Cases} f32 cases`);
      assert.ok(outcome.caughtInBf16 < outcome.caughtInF32, `bf16 hides most: ${outcome.caughtInBf16} vs ${outcome.caughtInF32}`);
    });

    it('is timed in one run with the built-in arms', async () => {
      const c = convMatrix({ quick: true }).find((x) => x.C === 1024 && x.K === 4)!;
      const inputs = makeConvInputs(c);
      const arms: [string, conv.ConvMapping][] = [['scalar', 'sequence'], ['reg', 'exact'], ['reg16', 'exact']];
      const ops = arms.map(([arm, mapping]) => conv.prepareTimed(inputs, { arm, mapping, backend: backend() }, `${arm}/${mapping}`));
      try {
        const r = await timeArms(ops.map((op, i) => ({ label: op.label!, op, meta: { arm: arms[i][0] } })), { backend: backend(), warmupMs: 20, minSamples: 5, minTimeMs: 1, noiseTarget: 1, maxSamples: 40, maxTimeMs: 60000, progress: false });
        assert.deepEqual(r.cases.map((x) => x.label), ['scalar/sequence', 'reg/exact', 'reg16/exact']);
        for (const x of r.cases) assert.ok(x.stats.n >= 5 && x.stats.median > 0, `${x.label}: n ${x.stats.n}, median ${x.stats.median}`);
        // One line for the logs (docs/gpu-test-log.md): the medians of this one run (C = 1024, K = 4, 257 tokens).
        console.log(`      timed in one run on ${backend().info().name}: ${r.cases.map((x) => `${x.label} ${x.stats.median.toFixed(1)} µs (n ${x.stats.n})`).join(', ')}`);
      } finally {
        for (const op of ops) op.release();
      }
    });

    it('planted faults give an error naming the arm and the fault; the next call works', async () => {
      const c = convMatrix({ quick: true })[0];
      const inputs = makeConvInputs(c);
      const ref = await conv.forward(inputs, { arm: 'scalar', backend: backend() });
      const runFaults: string[] = [];
      for (const f of FAULTS) {
        let message = '';
        try {
          conv.defineArm({ name: f.name, source: f.source, timeLimitMs: 1500 }, { backend: backend() });
          defined.push({ op: 'conv', name: f.name });
          await conv.forward(inputs, { arm: f.name, backend: backend() });
        } catch (e) {
          message = (e as Error).message;
          // A fault, even the worker's death by a signal, is not an interrupt: the kernel must show it as an
          // error, never as KeyboardInterrupt (GdnError.interrupted; test/arms/worker-interrupt.test.ts).
          if (e instanceof GdnError) {
            runFaults.push(f.name);
            assert.equal(e.status, STATUS.GDN_ERR_ARM_FAULT, `${f.name}: ${e.statusName}: ${message}`);
            assert.equal(e.interrupted, false, `${f.name}: ${message}`);
          }
        }
        assert.match(message, kind === 'cuda' && f.cuda ? f.cuda : f.expect, `${f.name}: ${message || 'no error'}`);
        const after = await conv.forward(inputs, { arm: 'reg16', backend: backend() });
        assert.equal(countBitMismatches(after.out, ref.out), 0, `after ${f.name}`);
        assert.equal(countBitMismatches(after.convState, ref.convState), 0, `after ${f.name}`);
        after.release();
      }
      for (const name of ['fault-wild-write', 'fault-spin']) assert.ok(runFaults.includes(name), `${name} failed in the library (a GdnError), got ${runFaults.join(', ')}`);
      ref.release();
    });
  });
});

describe('user arms: compiling for CUDA and what it becomes', function () {
  this.timeout(600_000);

  it('compiles a user arm into a cubin with nvcc for sm_90 (compile only) and reads its resource usage', function () {
    if (!buildRecipe().nvcc) this.skip();
    const m = compileModule({ op: 'conv', name: 'reg16-cuda', source: REG16_SOURCE, defines: { GDN_ARM_THREADS: 128 }, target: 'cuda', sm: '90' });
    assert.ok(fs.statSync(m.file).size > 0);
    const usage = parsePtxasVerbose(m.log);
    assert.deepEqual(usage.map((u) => u.entry).sort(), ['gdn_arm_conv_bf16_bf16', 'gdn_arm_conv_bf16_f32', 'gdn_arm_conv_f32_bf16', 'gdn_arm_conv_f32_f32']);
    for (const u of usage) assert.ok(u.registers > 0 && u.registers <= 255, `${u.entry}: ${u.registers} registers`);
    const again = compileModule({ op: 'conv', name: 'reg16-cuda', source: REG16_SOURCE, defines: { GDN_ARM_THREADS: 128 }, target: 'cuda', sm: '90' });
    assert.equal(again.cached, true);
  });

  it('inspects a built-in arm through the same path: registers, occupancy, PTX, and says when SASS tools are missing', function () {
    if (!buildRecipe().nvcc) this.skip();
    const r = inspectArm('conv', 'reg-k4', { sm: '90' });
    assert.equal(r.builtIn, true);
    assert.equal(r.resources.length, 4);
    assert.ok(r.ptx && r.ptx.includes('.entry gdn_arm_conv_bf16_bf16'));
    assert.ok(r.sass !== null || /SASS not available: neither cuobjdump nor nvdisasm/.test(r.sassTool), r.sassTool);
    assert.match(r.text, /blocks\/SM/);
    assert.equal(r.rows.length, 4);
    // A compact rich display: the resource table and the account, the listings folded in details elements.
    assert.ok(hasMimeBundle(r), 'the report displays itself in a notebook');
    const html = String(r[MIME_BUNDLE]().data['text/html']);
    for (const col of ['registers', 'spill st/ld B', 'static smem B', 'occupancy', 'limited by']) assert.ok(html.includes(`<th>${col}</th>`), col);
    assert.match(html, /<details><summary>PTX \(\d+ lines\)<\/summary>/);
    assert.ok(html.length < 60_000, `the display stays compact (${html.length} characters)`);
    assert.ok(!Object.keys(r).includes('toString'), 'the plain data is unchanged');
    assert.match(String(r), /^entry +registers/);
    assert.match(util.inspect(r), /PTX \d+ lines \(\.ptx\)/);
  });

  it('occupancy follows the SM limits: registers, shared memory, threads and block slots', () => {
    const sm90 = SM_LIMITS['90'];
    // 128 threads, 128 registers: 4 warps x 4096 registers per block -> 4 blocks (16 of 64 warps)
    assert.deepEqual([occupancy(sm90, 'a', 128, 128, 0).blocksPerSm, occupancy(sm90, 'a', 128, 128, 0).limitedBy], [4, ['registers']]);
    // 32 registers: 16 blocks by threads (2048 / 128), registers would allow 16 as well
    assert.equal(occupancy(sm90, 'b', 128, 32, 0).blocksPerSm, 16);
    // 100 KB of shared memory per block: 2 blocks
    const s = occupancy(sm90, 'c', 128, 32, 100 * 1024);
    assert.deepEqual([s.blocksPerSm, s.limitedBy], [2, ['shared memory']]);
    // 32 threads, 16 registers: the 32 block slots limit
    assert.deepEqual(occupancy(sm90, 'd', 32, 16, 0).limitedBy, ['blocks per SM']);
    // 40 registers round up to 1280 per warp: 65536 / 1280 = 51 warps -> 12 blocks of 4 warps
    assert.equal(occupancy(sm90, 'e', 128, 40, 0).byResource.registers, 12);
  });

  it('refuses bad definitions with errors naming the argument', () => {
    assert.throws(() => conv.defineArm({ name: 'scalar', source: REG16_SOURCE }), /name: 'scalar' is a built-in conv arm/);
    assert.throws(() => conv.defineArm({ name: '9x', source: REG16_SOURCE }), /name: expected 1\.\.31 of a-z/);
    assert.throws(() => conv.defineArm({ name: 'x', source: '' }), /arm 'x': source: expected the per-thread body/);
    assert.throws(() => conv.defineArm({ name: 'x', source: REG16_SOURCE, mappings: ['diagonal' as never] }), /arm 'x': mappings: expected a non-empty list/);
    assert.throws(() => conv.defineArm({ name: 'x', source: REG16_SOURCE, threadsPerBlock: 2048 }), /arm 'x': threadsPerBlock: expected an integer in 1\.\.1024/);
    assert.throws(() => conv.defineArm({ name: 'x', source: REG16_SOURCE, threadsPerBlock: 100 }),
      (e: unknown) => e instanceof RangeError && e.message === "arm 'x': threadsPerBlock: expected a multiple of 32 (whole warps of 32 threads), got 100; the nearest are 96 and 128");
    assert.throws(() => conv.defineArm({ name: 'x', source: REG16_SOURCE, description: 'é'.repeat(112) }), /arm 'x': description: expected a string of at most 223 bytes in UTF-8, got 224 bytes/);
    assert.throws(() => conv.defineArm({ name: 'x', source: REG16_SOURCE, description: 7 as never }), /arm 'x': description: expected a string of at most 223 bytes in UTF-8, got 7/);
    assert.throws(() => conv.forwardSync(makeConvInputs(convMatrix({ quick: true })[0]), { arm: 'nope' }), /arm: expected one of 'scalar'.*nope/);
  });
});
