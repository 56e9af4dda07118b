import { strict as assert } from 'assert';
import { Tensor } from '../../lib/tensor';
import { Backend } from '../../lib/backend';
import * as conv from '../../lib/ops/conv';
import { launchContract } from '../../lib/ops/conv';
import { checkConv, convMatrix, allArmMappings, makeConvInputs, ConvCase } from '../../lib/check/conv';
import { runConvMutants } from '../../lib/check/mutants';
import { countBitMismatches } from '../../lib/analysis/bits';
import { forEachBackend, noteCrossBackend, openBackend, testBackendKinds } from '../backends';
import { allocInt32, freeNative } from '../../lib/native/gdn';

describe('conv launch contracts', () => {
  it('channel tiles for C = 8192 and C = 129 (reg / reg-k4 / reg-k4x2)', () => {
    const q = [0, 5, 6, 15];
    assert.deepEqual(['reg', 'reg-k4', 'reg-k4x2'].map((a) => launchContract(a as conv.ConvArm, 'exact', 8192, 4, q).channelTiles), [64, 64, 32]);
    assert.deepEqual(['reg', 'reg-k4', 'reg-k4x2'].map((a) => launchContract(a as conv.ConvArm, 'exact', 129, 4, q).channelTiles), [2, 2, 1]);
    const c = launchContract('reg', 'exact', 8192, 4, q);
    assert.equal(c.threadsPerBlock, 128);
    assert.deepEqual(c.grid.slice(0, 2), [64, 4]);
  });

  it('lengths 5, 1, 9 give the programs (0,0), (1,0), (2,0), (2,1); empty sequences get none', () => {
    assert.deepEqual(launchContract('reg', 'exact', 64, 4, [0, 5, 6, 15]).programList, [[0, 0], [1, 0], [2, 0], [2, 1]]);
    assert.deepEqual(launchContract('reg', 'exact', 64, 4, [0, 0, 5, 5, 6, 15, 15]).programList, [[1, 0], [3, 0], [4, 0], [4, 1]]);
    assert.equal(launchContract('reg', 'sequence', 64, 4, [0, 5, 6, 15]).programs, 3);
  });

  it('stream runs 32-token programs on a batch of short sequences (exact only), its declared 64 otherwise', () => {
    // 32 sequences of 64 tokens on average (total < 2 x 64 x 32): the short-batch length.
    const short = [0];
    for (let i = 0; i < 32; i++) short.push(short[i] + 40 + ((i * 37) % 49));
    const c = launchContract('stream', 'exact', 8192, 4, short);
    assert.equal(c.tokensPerProgram, 32);
    let want = 0;
    for (let s = 0; s < 32; s++) want += Math.ceil((short[s + 1] - short[s]) / 32);
    assert.equal(c.programs, want);
    assert.equal(c.programList.length, want, 'every program listed (more than the declared length leaves room for)');
    assert.deepEqual(c.programList.slice(0, 3), [[0, 0], [0, 1], [1, 0]]);
    // At the boundary (average exactly 2 x 64) and above, and one long sequence: 64.
    assert.equal(launchContract('stream', 'exact', 8192, 4, [0, 128, 256]).tokensPerProgram, 64);
    assert.equal(launchContract('stream', 'exact', 8192, 4, [0, 127, 255]).tokensPerProgram, 32);
    assert.equal(launchContract('stream', 'exact', 8192, 4, [0, 2048]).tokensPerProgram, 64);
    // exact-racy keeps the declared length (the #305 lessons), and arms without a short length keep theirs.
    assert.equal(launchContract('stream', 'exact-racy', 8192, 4, short).tokensPerProgram, 64);
    assert.equal(launchContract('tile', 'exact', 8192, 4, short).tokensPerProgram, 32);
    assert.equal(launchContract('vec', 'exact', 8192, 4, short).tokensPerProgram, 64);
  });

  it('reg-k4 and reg-k4x2 fall back to reg when K != 4, and say so', () => {
    for (const arm of ['reg-k4', 'reg-k4x2'] as const) {
      assert.equal(launchContract(arm, 'exact', 256, 3, [0, 9]).arm, 'reg');
      assert.equal(launchContract(arm, 'exact', 256, 4, [0, 9]).arm, arm);
    }
  });
});

forEachBackend((backend, kind) => {
  describe('conv equivalence matrix: every arm and mapping == scalar, bit for bit', function () {
    this.timeout(120000);
    const cases = convMatrix();
    for (const c of cases) {
      it(c.name, () => {
        const report = checkConv({ backend: backend(), cases: [c], hostBackend: kind === 'cuda' ? openBackend('host') : undefined });
        const scalar = report.results.find((r) => r.arm === 'scalar')!;
        assert.ok(scalar.withinTolerance, `scalar vs float64 reference: max |err| ${scalar.maxAbsError} outside tolerance`);
        assert.equal(scalar.stateMismatches, 0, 'final state differs from the raw inputs');
        const bad = report.failures.map((f) => `${f.arm}/${f.mapping}: out ${f.outMismatches}, state ${f.stateMismatches}`);
        assert.deepEqual(bad, [], `mismatching elements:\n${bad.join('\n')}`);
        assert.equal(report.crossBackend.length, kind === 'cuda' ? 1 : 0, 'one cuda-vs-host comparison per case on CUDA, none on the host');
        for (const x of report.crossBackend) assert.ok(x.ok, `cuda != host: out ${x.outMismatches}, state ${x.stateMismatches}`);
        assert.equal(report.results.length, 1 + allArmMappings().length);
      });
    }
  });

  noteCrossBackend('conv equivalence matrix');

  describe('conv: the #305 race', function () {
    this.timeout(120000);
    const raceCase: ConvCase = {
      name: 'race', C: 300, K: 4, xDtype: 'bf16', outDtype: 'f32', lengths: [9, 33, 200, 8, 5],
      initialState: [true, true, true, true, false], maskDtype: 'i8', bias: true, xRowStride: 300, seed: 305,
    };
    const run = (mapping: conv.ConvMapping, schedule?: conv.Schedule, arm: conv.ConvArm = 'reg') =>
      conv.forwardSync(makeConvInputs(raceCase), { arm, mapping, schedule, backend: backend() });

    if (kind === 'host') {
      it('exact-racy under reverse corrupts rows 0..K-2 of long sequences with state, in whole channel tiles, and nothing else', () => {
        const ref = run('sequence', 'forward', 'scalar');
        const bad = run('exact-racy', 'reverse');
        const C = raceCase.C;
        const a = ref.out.toFloat32();
        const b = bad.out.toFloat32();
        const qsl = [0, 9, 42, 242, 250, 255];
        const wrongRows = new Set<string>();
        const tilesHit = new Map<string, Set<number>>();
        for (let t = 0; t < qsl[qsl.length - 1]; t++) {
          for (let c = 0; c < C; c++) {
            const i = t * C + c;
            if (Object.is(a[i], b[i])) continue;
            const s = qsl.findIndex((q, j) => t >= q && t < qsl[j + 1]);
            const row = t - qsl[s];
            wrongRows.add(`${s}:${row}`);
            const key = `${s}:${row}`;
            if (!tilesHit.has(key)) tilesHit.set(key, new Set());
            tilesHit.get(key)!.add(c);
          }
        }
        // Sequences 0 (9 tokens), 1 (33) and 2 (200) have state and more than 8 tokens: rows 0..2 wrong.
        assert.deepEqual([...wrongRows].sort(), ['0:0', '0:1', '0:2', '1:0', '1:1', '1:2', '2:0', '2:1', '2:2']);
        // Whole channel tiles: the reg arm's tile is 128 channels; every channel of a hit tile differs.
        for (const [, chans] of tilesHit) {
          for (const tile of new Set([...chans].map((c) => Math.floor(c / 128)))) {
            const width = Math.min(128, C - tile * 128);
            const inTile = [...chans].filter((c) => Math.floor(c / 128) === tile).length;
            assert.ok(inTile >= width - 2, `tile ${tile}: only ${inTile} of ${width} channels differ`);
          }
        }
        // The final state is still right.
        assert.equal(countBitMismatches(bad.convState, ref.convState), 0);
        ref.release();
        bad.release();
      });

      it('exact and sequence are bit-identical to scalar under forward, reverse and 100 seeded shuffles', () => {
        const ref = run('sequence', 'forward', 'scalar');
        const schedules: conv.Schedule[] = ['forward', 'reverse', ...Array.from({ length: 100 }, (_, i) => ({ shuffle: i + 1 }))];
        let corrupted = 0;
        for (const arm of ['reg', 'reg-k4', 'reg-k4x2', 'vec', 'tile', 'stream'] as const) {
          for (const mapping of ['exact', 'sequence'] as const) {
            for (const schedule of arm === 'reg' ? schedules : schedules.slice(0, 12)) {
              const r = run(mapping, schedule, arm);
              if (countBitMismatches(r.out, ref.out) || countBitMismatches(r.convState, ref.convState)) corrupted++;
              r.release();
            }
          }
        }
        assert.equal(corrupted, 0);
        ref.release();
      });

      it('an explicit block order is honoured: one end block moved first corrupts exactly its tile (no named schedule does that)', () => {
        // A permutation no named schedule produces: forward order, except that the block of sequence
        // 2's last chunk in channel tile 0 runs first. Under the racy mapping that block writes
        // sequence 2's final state before chunk 0 reads the initial one, so exactly rows 0..K-2 of
        // sequence 2 in tile 0's channels go wrong — if, and only if, the order is really followed.
        const qsl = [0, 9, 42, 242, 250, 255];
        const c = launchContract('reg', 'exact-racy', raceCase.C, 4, qsl);
        const [gx, gy] = c.grid;
        const last = c.programList.findIndex(([seq, chunk]) => seq === 2 && chunk === Math.ceil(200 / conv.CHUNK) - 1);
        assert.ok(last > 0 && gy === c.programList.length);
        const early = last * gx; // block (program last, tile 0): linear index y·grid_x + x
        const order = [early, ...Array.from({ length: gx * gy }, (_, i) => i).filter((i) => i !== early)];
        const ref = run('sequence', 'forward', 'scalar');
        const forward = run('exact-racy', 'forward');
        const reverse = run('exact-racy', 'reverse');
        const moved = run('exact-racy', order);
        assert.equal(countBitMismatches(forward.out, ref.out), 0, 'forward order: the race does not fire');
        const a = ref.out.toFloat32();
        const b = moved.out.toFloat32();
        const wrong: string[] = [];
        for (let i = 0; i < a.length; i++) {
          if (Object.is(a[i], b[i])) continue;
          const t = Math.floor(i / raceCase.C);
          const ch = i % raceCase.C;
          wrong.push(`${t - qsl[2]}:${Math.floor(ch / c.channelsPerBlock)}`);
        }
        assert.ok(wrong.length >= 3 * (c.channelsPerBlock - 2), `only ${wrong.length} elements differ: the explicit order was not followed`);
        assert.deepEqual([...new Set(wrong)].sort(), ['0:0', '1:0', '2:0'], 'only rows 0..2 of sequence 2, channel tile 0');
        assert.ok(countBitMismatches(moved.out, reverse.out) > 0, 'differs from reverse too');
        assert.throws(() => run('exact-racy', [0, 0, 1]), /schedule|order/);
        for (const r of [ref, forward, reverse, moved]) r.release();
      });
    }
  });

  describe('conv: planted mutants', function () {
    this.timeout(120000);
    it('every mutant is caught by the equivalence suite', () => {
      const outcomes = runConvMutants({ backend: backend() });
      const missed = outcomes.filter((o) => !o.caught).map((o) => o.mutant);
      assert.deepEqual(missed, []);
      assert.ok(outcomes.length >= conv.CONV_MUTANTS.length);
    });
  });

  describe('conv.update (decode)', () => {
    for (const stateDtype of ['f32', 'bf16'] as const) {
      it(`reference and reg arms are bit-identical, negative indices skip (${stateDtype} state)`, async () => {
        const b = backend();
        const B = 6;
        const C = 200;
        const K = 4;
        const x = Tensor.random([B, C], 'bf16', { seed: 1 });
        const weight = Tensor.random([C, K], 'bf16', { seed: 2, scale: 0.5 });
        const bias = Tensor.random([C], 'bf16', { seed: 3 });
        const state = Tensor.random([10, C, K - 1], stateDtype, { seed: 4 });
        const stateIndices = [3, -1, 0, 9, -5, 4];
        const outInit = Tensor.random([B, C], 'f32', { seed: 5 });
        const r1 = await conv.update({ x, weight, bias, state, stateIndices }, { arm: 'reference', backend: b, out: outInit });
        const r2 = await conv.update({ x, weight, bias, state, stateIndices }, { arm: 'reg', backend: b, out: outInit });
        assert.equal(countBitMismatches(r1.out, r2.out), 0);
        assert.equal(countBitMismatches(r1.state, r2.state), 0);
        // Skipped sequences: out rows untouched; untouched slots unchanged.
        const o = r1.out.toFloat32();
        const init = outInit.toFloat32();
        for (const s of [1, 4]) for (let c = 0; c < C; c++) assert.ok(Object.is(o[s * C + c], init[s * C + c]));
        const before = state.toFloat32();
        const after = r1.state.toFloat32();
        for (const slot of [1, 2, 5, 6, 7, 8]) {
          for (let i = 0; i < C * (K - 1); i++) assert.ok(Object.is(after[slot * C * (K - 1) + i], before[slot * C * (K - 1) + i]));
        }
        // A used slot shifted by one: new column 0..K-3 = old 1..K-2, column K-2 = x.
        const xs = x.toFloat32();
        for (let c = 0; c < C; c++) {
          const base = (3 * C + c) * (K - 1);
          assert.equal(after[base], before[base + 1]);
          assert.equal(after[base + K - 2], stateDtype === 'f32' ? xs[c] : xs[c]);
        }
        r1.release();
        r2.release();
      });
    }

    // On the host a K = 4 `reg` block is one pass over its channels (update_reg.h, host_block): blocks whose
    // pre-activations leave SiLU's fast range (|x| > 80, here from x up to ±400) must take gdn_silu for every
    // channel, f32 x/out as well as bf16, a partial last block (C = 300) included.
    for (const dtype of ['f32', 'bf16'] as const) {
      it(`reference and reg arms are bit-identical when pre-activations leave SiLU's fast range (${dtype} x and out)`, async () => {
        const b = backend();
        const B = 3;
        const C = 300;
        const K = 4;
        const x = Tensor.random([B, C], dtype, { seed: 11, scale: 400 });
        const weight = Tensor.random([C, K], dtype, { seed: 12, scale: 0.5 });
        const state = Tensor.random([4, C, K - 1], 'f32', { seed: 13, scale: 100 });
        const stateIndices = [2, 0, 3];
        const opts = { backend: b, outDtype: dtype };
        const r1 = await conv.update({ x, weight, state, stateIndices }, { ...opts, arm: 'reference' });
        const r2 = await conv.update({ x, weight, state, stateIndices }, { ...opts, arm: 'reg' });
        const pre = x.toFloat32();
        assert.ok(pre.some((v) => Math.abs(v) > 200), 'some inputs far outside the fast range');
        assert.equal(countBitMismatches(r1.out, r2.out), 0);
        assert.equal(countBitMismatches(r1.state, r2.state), 0);
        r1.release();
        r2.release();
      });
    }

    it('rejects duplicate and out-of-range slots', async () => {
      const x = Tensor.random([2, 8], 'f32', { seed: 1 });
      const weight = Tensor.random([8, 4], 'f32', { seed: 2 });
      const state = Tensor.random([3, 8, 3], 'f32', { seed: 3 });
      await assert.rejects(conv.update({ x, weight, state, stateIndices: [1, 1] }, { backend: backend() }), /stateIndices\[1\]: slot 1 is also used/);
      await assert.rejects(conv.update({ x, weight, state, stateIndices: [0, 3] }, { backend: backend() }), /stateIndices\[1\]: slot 3 is outside/);
    });

    // Slots given as numbers or a host tensor travel as a host copy (args.state_indices_host): no upload by
    // TypeScript, no read-back by libgdn, and up to 64 of them inside the kernel's parameters
    // (cuda/src/common/plan_lists.h); a device tensor is read back to be checked. The bits must not
    // depend on the route: B = 64 sits at the limit, 65 past it.
    for (const B of [3, 64, 65]) {
      it(`slots as host numbers, a host tensor or a device tensor: the same bits, sync, async and in place (B = ${B})`, async () => {
        const b = backend();
        const C = 40, K = 4, pool = B + 7;
        const x = Tensor.random([B, C], 'bf16', { seed: 11 }).to(b);
        const weight = Tensor.random([C, K], 'bf16', { seed: 12, scale: 0.5 }).to(b);
        const state = Tensor.random([pool, C, K - 1], 'f32', { seed: 13 }).to(b);
        const slots = Array.from({ length: B }, (_, i) => (i % 5 === 3 ? -1 : (i * 7 + 2) % pool));
        const onDevice = Tensor.from(slots, [B], 'i32').to(b);
        const before = b.stats().liveBuffers;
        const opts = { arm: 'reg', outDtype: 'bf16', backend: b } as const;
        const ref = conv.updateSync({ x, weight, state, stateIndices: onDevice }, opts);
        const sync = conv.updateSync({ x, weight, state, stateIndices: slots }, opts);
        const async_ = await conv.update({ x, weight, state, stateIndices: Tensor.from(slots, [B], 'i32') }, opts);
        for (const r of [sync, async_]) {
          assert.equal(countBitMismatches(r.out, ref.out), 0);
          assert.equal(countBitMismatches(r.state, ref.state), 0);
        }
        const pooled = Tensor.random([pool, C, K - 1], 'f32', { seed: 13 }).to(b);
        const ip = conv.updateSync({ x, weight, state: pooled, stateIndices: slots }, { ...opts, inPlace: true });
        assert.equal(countBitMismatches(ip.out, ref.out), 0);
        assert.equal(countBitMismatches(pooled, ref.state), 0);
        for (const r of [ref, sync, async_, ip]) r.release();
        pooled.release();
        assert.equal(b.stats().liveBuffers, before);
        for (const t of [x, weight, state, onDevice]) t.release();
      });
    }
  });

  describe('conv: offsets given as host numbers (no read-back) or as a device tensor', () => {
    // Host offsets travel as a host copy (args.query_start_loc_host) that libgdn plans from and puts on
    // the device itself; the bits must be those of the device-tensor path, sync and async, for whole
    // sequences and exact chunks, and for more sequences than the scratch array first holds (256).
    for (const [arm, mapping, lengths] of [
      ['scalar', 'sequence', [3, 0, 17, 9]], ['vec', 'exact', [40, 1, 0, 77]], ['stream', 'exact', [130, 5, 64]],
      ['reg', 'exact', Array.from({ length: 300 }, (_, i) => (i * 7) % 13)],
    ] as const) {
      it(`${arm}/${mapping}, ${lengths.length} sequences: same bits, no buffer left behind`, async () => {
        const b = backend();
        const inputs = makeConvInputs({ name: 'offsets', C: 64, K: 4, xDtype: 'bf16', outDtype: 'f32', lengths: [...lengths], initialState: lengths.map((_, i) => i % 2 === 0), maskDtype: 'i8', bias: true, xRowStride: 64, seed: 4 });
        const offsets = [0];
        for (const n of lengths) offsets.push(offsets[offsets.length - 1] + n);
        const onDevice = Tensor.from(offsets, [offsets.length], 'i32').to(b);
        const before = b.stats().liveBuffers;
        const opts = { arm, mapping, backend: b } as const;
        const ref = conv.forwardSync({ ...inputs, queryStartLoc: onDevice }, opts);
        const sync = conv.forwardSync({ ...inputs, queryStartLoc: offsets }, opts);
        const async_ = await conv.forward({ ...inputs, queryStartLoc: Tensor.from(offsets, [offsets.length], 'i32') }, opts);
        for (const r of [sync, async_]) {
          assert.equal(countBitMismatches(r.out, ref.out), 0);
          assert.equal(countBitMismatches(r.convState, ref.convState), 0);
          assert.deepEqual(r.contract, ref.contract);
        }
        for (const r of [ref, sync, async_]) r.release();
        assert.equal(b.stats().liveBuffers, before);
        onDevice.release();
      });
    }
  });

  describe('conv: one sequence reads no list; a batch reads its lists from memory', () => {
    // A launch over one sequence computes its programs (0, y) and offsets [0, T] in the kernel; a batch
    // reads its program list and offsets from memory (cuda/src/common/plan_lists.h). Both, on host numbers
    // and on a device tensor of offsets, against a reference that always reads them from memory:
    // scalar/sequence over the same batch behind one more, empty sequence (with its own state row).
    const single = (n: number) => Array.from({ length: n }, () => 1);
    for (const [arm, lengths, why] of [
      ['reg', [248], 'one sequence, 31 programs'],
      ['reg', [256], 'one sequence, 32 programs'],
      ['stream', [1], 'one sequence of one token'],
      ['vec', [0, 264], 'an empty sequence, then 264 tokens (two sequences: lists in memory)'],
      ['vec', single(21), '21 one-token sequences'],
      ['reg', single(33), '33 one-token sequences'],
    ] as const) {
      it(`${arm}/exact, ${why}: the bits of scalar/sequence`, async () => {
        const b = backend();
        const inputs = makeConvInputs({ name: 'lists', C: 64, K: 4, xDtype: 'bf16', outDtype: 'f32', lengths: [...lengths], initialState: lengths.map((_, i) => i % 3 !== 1), maskDtype: 'i8', bias: true, xRowStride: 64, seed: 21 });
        const offsets = inputs.queryStartLoc as readonly number[];
        const onDevice = Tensor.from(offsets, [offsets.length], 'i32').to(b);
        const N = lengths.length, row = 64 * 3;
        const padded = {
          ...inputs,
          queryStartLoc: Tensor.from([0, ...offsets], [N + 2], 'i32').to(b),
          convState: Tensor.from([...new Array(row).fill(0.5), ...inputs.convState.toFloat32()], [N + 1, 64, 3], 'f32'),
          hasInitialState: [0, ...lengths.map((_, i) => (i % 3 !== 1 ? 1 : 0))],
        };
        const ref = conv.forwardSync(padded, { arm: 'scalar', mapping: 'sequence', backend: b });
        const refState = Tensor.from(ref.convState.toFloat32().subarray(row), [N, 64, 3], 'f32');
        const byNumbers = conv.forwardSync(inputs, { arm, mapping: 'exact', backend: b });
        const byTensor = await conv.forward({ ...inputs, queryStartLoc: onDevice }, { arm, mapping: 'exact', backend: b });
        for (const r of [byNumbers, byTensor]) {
          assert.equal(r.contract.arm, arm);
          assert.equal(countBitMismatches(r.out, ref.out), 0);
          assert.equal(countBitMismatches(r.convState, refState), 0);
        }
        for (const r of [ref, byNumbers, byTensor]) r.release();
        onDevice.release();
        padded.queryStartLoc.release();
      });
    }
  });

  describe('conv: bad arguments give clear errors and nothing breaks', () => {
    const base = () => makeConvInputs({ name: 'bad', C: 16, K: 4, xDtype: 'f32', outDtype: 'f32', lengths: [3, 5], initialState: [true, false], maskDtype: 'i8', bias: true, xRowStride: 16, seed: 9 });
    const expectError = async (mutate: (i: ReturnType<typeof base>) => unknown, pattern: RegExp, opts: conv.ConvOptions = {}) => {
      const inputs = base();
      const changed = (mutate(inputs) ?? inputs) as conv.ConvInputs;
      await assert.rejects(conv.forward(changed, { backend: backend(), ...opts }), pattern);
    };
    it('wrong dtype', () => expectError((i) => ({ ...i, x: Tensor.zeros([8, 16], 'i32') }), /x: expected dtype f32 or bf16, got i32/));
    it('weight dtype differs from x', () => expectError((i) => ({ ...i, weight: i.weight.astype('bf16') }), /weight: expected dtype f32 \(the dtype of x\), got bf16/));
    it('mismatched shapes', () => expectError((i) => ({ ...i, weight: Tensor.zeros([15, 4]) }), /weight: expected shape \[C=16, K\]/));
    it('state of the wrong shape', () => expectError((i) => ({ ...i, convState: Tensor.zeros([2, 16, 2]) }), /convState: expected shape \[N=2, C=16, K-1=3\]/));
    it('query_start_loc not ending at T', () => expectError((i) => ({ ...i, queryStartLoc: [0, 3, 7] }), /queryStartLoc: must end at T = 8 \(rows of x\), got 7/));
    it('query_start_loc decreasing', () => expectError((i) => ({ ...i, queryStartLoc: [0, 5, 3, 8], convState: Tensor.zeros([3, 16, 3]), hasInitialState: null }), /queryStartLoc: must not decrease/));
    it('K above the supported maximum', () => expectError((i) => ({ ...i, weight: Tensor.zeros([16, 9]), convState: Tensor.zeros([2, 16, 8]) }), /weight: K = 9 is outside the supported range 2\.\.8/));
    it('a released tensor', () => expectError((i) => { const d = i.x.to(backend()); d.release(); return { ...i, x: d }; }, /x: tensor \[8, 16\] f32 was released/));
    it('an unknown arm', () => expectError(() => undefined, /arm: expected one of 'scalar'/, { arm: 'fast' as never }));
    it('a mask of the wrong length', () => expectError((i) => ({ ...i, hasInitialState: [1] }), /hasInitialState: expected shape \[N=2\]/));
    it('the library still works afterwards, with no leaked buffers', async () => {
      const b = backend();
      const before = b.stats().liveBuffers;
      const r = await conv.forward(base(), { backend: b, arm: 'reg' });
      assert.equal(r.contract.arm, 'reg');
      r.release();
      assert.equal(b.stats().liveBuffers, before);
    });
  });
});

describe('conv: native validation (bypassing the TypeScript checks)', () => {
  it('the library itself rejects a bad query_start_loc and a freed buffer', () => {
    const b = openBackend(testBackendKinds()[0]);
    const lib = b.lib;
    const x = Tensor.random([4, 8], 'f32', { seed: 1 }).to(b);
    const w = Tensor.random([8, 4], 'f32', { seed: 2 }).to(b);
    const q = Tensor.from([0, 3], [2], 'i32').to(b); // ends at 3, T = 4
    const st = Tensor.zeros([1, 8, 3]).to(b);
    const out = Tensor.empty([4, 8], 'f32', { backend: b });
    const args = {
      T: 4, C: 8, K: 4, num_seqs: 1, x_dtype: 0, out_dtype: 0, his_dtype: 4, x_row_stride: 8,
      x: x.addr, weight: w.addr, bias: 0, query_start_loc: q.addr, has_initial_state: 0, conv_state: st.addr, out: out.addr,
      arm: 0, mapping: 0, mutant: 0, widen_cycles: 0, schedule: { kind: 0, order_len: 0, seed: 0, order: 0 }, query_start_loc_host: 0,
    };
    const status = lib.convForward(b.native, args, [{}]) as number;
    assert.notEqual(status, 0);
    assert.match(lib.lastError() as string, /query_start_loc/);
    const freed = x.addr;
    x.release();
    const status2 = lib.convForward(b.native, { ...args, x: freed, query_start_loc: Tensor.from([0, 4], [2], 'i32').to(b).addr }, [{}]) as number;
    assert.notEqual(status2, 0);
    assert.match(lib.lastError() as string, /x/);
    for (const t of [w, q, st, out]) t.release();
  });

  it('the library refuses two sources of the offsets and checks a host copy like a device one', () => {
    const b = openBackend(testBackendKinds()[0]);
    const lib = b.lib;
    const x = Tensor.random([4, 8], 'f32', { seed: 1 }).to(b);
    const w = Tensor.random([8, 4], 'f32', { seed: 2 }).to(b);
    const q = Tensor.from([0, 4], [2], 'i32').to(b);
    const st = Tensor.zeros([1, 8, 3]).to(b);
    const out = Tensor.empty([4, 8], 'f32', { backend: b });
    const good = allocInt32([0, 4]);
    const short = allocInt32([0, 3]);
    const args = {
      T: 4, C: 8, K: 4, num_seqs: 1, x_dtype: 0, out_dtype: 0, his_dtype: 4, x_row_stride: 8,
      x: x.addr, weight: w.addr, bias: 0, query_start_loc: 0, has_initial_state: 0, conv_state: st.addr, out: out.addr,
      arm: 0, mapping: 0, mutant: 0, widen_cycles: 0, schedule: { kind: 0, order_len: 0, seed: 0, order: 0 }, query_start_loc_host: good.addr,
    };
    assert.equal(lib.convForward(b.native, args, [{}]) as number, 0, lib.lastError() as string);
    assert.notEqual(lib.convForward(b.native, { ...args, query_start_loc: q.addr }, [{}]) as number, 0);
    assert.match(lib.lastError() as string, /args\.query_start_loc: must be 0 when args\.query_start_loc_host is given/);
    assert.notEqual(lib.convForward(b.native, { ...args, query_start_loc_host: short.addr }, [{}]) as number, 0);
    assert.match(lib.lastError() as string, /args\.query_start_loc_host: must end at T = 4, got 3/);
    assert.notEqual(lib.convForward(b.native, { ...args, query_start_loc_host: 0 }, [{}]) as number, 0);
    assert.match(lib.lastError() as string, /query_start_loc/);
    freeNative(good.mem);
    freeNative(short.mem);
    for (const t of [x, w, q, st, out]) t.release();
  });

  it('conv update: the library refuses two sources of the slots and checks a host copy like a device one', () => {
    const b = openBackend(testBackendKinds()[0]);
    const lib = b.lib;
    const [B, C, K, pool] = [3, 8, 4, 4];
    const x = Tensor.random([B, C], 'f32', { seed: 1 }).to(b);
    const w = Tensor.random([C, K], 'f32', { seed: 2 }).to(b);
    const st = Tensor.zeros([pool, C, K - 1]).to(b);
    const out = Tensor.empty([B, C], 'f32', { backend: b });
    const dev = Tensor.from([0, 1, 2], [B], 'i32').to(b);
    const good = allocInt32([2, -1, 0]);
    const twice = allocInt32([1, 3, 1]);
    const outside = allocInt32([0, 4, 1]);
    const args = {
      B, C, K, x_dtype: 0, out_dtype: 0, state_dtype: 0, arm: 0, num_slots: pool,
      x: x.addr, weight: w.addr, bias: 0, state: st.addr, state_indices: 0, out: out.addr, state_indices_host: good.addr,
    };
    assert.equal(lib.convUpdate(b.native, args) as number, 0, lib.lastError() as string);
    assert.notEqual(lib.convUpdate(b.native, { ...args, state_indices: dev.addr }) as number, 0);
    assert.match(lib.lastError() as string, /args\.state_indices: must be 0 when args\.state_indices_host .* is given/);
    assert.notEqual(lib.convUpdate(b.native, { ...args, state_indices_host: twice.addr }) as number, 0);
    assert.match(lib.lastError() as string, /args\.state_indices_host: entries 0 and 2 both name slot 1/);
    assert.notEqual(lib.convUpdate(b.native, { ...args, state_indices_host: outside.addr }) as number, 0);
    assert.match(lib.lastError() as string, /args\.state_indices_host: entry 1 = 4 is not a slot of the pool \(num_slots = 4\)/);
    assert.notEqual(lib.convUpdate(b.native, { ...args, state_indices_host: 0 }) as number, 0);
    assert.match(lib.lastError() as string, /args\.state_indices: address is 0/);
    for (const m of [good, twice, outside]) freeNative(m.mem);
    for (const t of [x, w, st, out, dev]) t.release();
  });
});

void Backend;
