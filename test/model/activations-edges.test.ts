// Layer-0 activations at their edges: the decoder RMSNorm step by step in f32 on inputs whose every
// intermediate is known (two rows, a non-trivial weight, an eps that matters), its dtype handling and
// argument checks; and layer0Activations on a tiny synthetic checkpoint (hidden 8, two value heads): each
// output wired to the right weight, b before a in the stacked projection, dt_bias as f32, release().

import { strict as assert } from 'assert';
import * as fs from 'fs';
import * as path from 'path';
import { f32ToBf16Bits, f32ToF16Bits } from '../../lib/dtype';
import { decoderRmsNorm, layer0Activations } from '../../lib/model/activations';
import { Qwen35Checkpoint, writeSyntheticCheckpoint } from '../../lib/model/qwen35';
import { IoCounter, SafetensorsFile, writeSafetensors } from '../../lib/model/safetensors';
import { matmulNT } from '../../lib/ops/matmul';
import { Tensor } from '../../lib/tensor';
import { tempDir } from './helpers';

const f = Math.fround;
/** A tensor from nested rows (2-D) or a flat list (1-D). */
const T = (values: number[][] | number[], dtype: 'f32' | 'bf16' | 'f16' | 'i32'): Tensor =>
  Array.isArray(values[0]) ? Tensor.from((values as number[][]).flat(), [values.length, (values[0] as number[]).length], dtype) : Tensor.from(values as number[], [values.length], dtype);

describe('layer-0 activations: edges', () => {
  it('decoderRmsNorm (f32): x · 1/sqrt(mean(x²) + eps) · (1 + w), per row, rounded to f32 at each step', () => {
    // Row 0: mean(x²) = (9 + 16 + 0 + 0) / 4 = 6.25, + eps 2.75 = 9, so the scale is 1/3.
    // Row 1: mean(x²) = 4 · 4 / 4 = 4, + 2.75 = 6.75.
    const x = T([[3, 4, 0, 0], [2, -2, 2, -2]], 'f32');
    const w = T([0, 1, -0.5, 2], 'f32');
    const scale = [1, 2, 0.5, 3];
    const inv0 = f(1 / 3);
    const inv1 = f(1 / f(Math.sqrt(6.75)));
    const want = [[3, 4, 0, 0].map((v, i) => f(f(v * inv0) * scale[i])), [2, -2, 2, -2].map((v, i) => f(f(v * inv1) * scale[i]))];
    const out = decoderRmsNorm(x, w, 2.75);
    assert.equal(out.dtype, 'f32');
    assert.deepEqual(out.shape, [2, 4]);
    assert.deepEqual(out.toArray(), want);
    // eps is rounded to f32 before it is added: 0.1 and f32(0.1) give the same result.
    const x1 = T([[1, 1, 1, 1]], 'f32');
    const ones = T([0, 0, 0, 0], 'f32');
    assert.deepEqual(decoderRmsNorm(x1, ones, 0.1).toArray(), [[1, 1, 1, 1].map(() => f(1 / f(Math.sqrt(f(1 + f(0.1))))))]);
  });

  it('decoderRmsNorm: the sum of squares in f32 terms, divided (not multiplied) by hidden', () => {
    const x = T([[1, 2, 3, 4, 5, 6, 7, 8]], 'f32');
    const w = T(new Array<number>(8).fill(0), 'f32');
    const inv = f(1 / f(Math.sqrt(f(f(204 / 8) + f(1e-6)))));
    assert.deepEqual(decoderRmsNorm(x, w, 1e-6).toArray(), [[1, 2, 3, 4, 5, 6, 7, 8].map((v) => f(v * inv))]);
  });

  it('decoderRmsNorm: bf16 and f16 in, the same dtype out, one rounding at the end', () => {
    const rows = [[3, 4, 0, 0]];
    const w = T([0, 1, -0.5, 2], 'bf16');
    const ref = decoderRmsNorm(T(rows, 'f32'), T([0, 1, -0.5, 2], 'f32'), 2.75).toFloat32();
    for (const [dtype, encode] of [['bf16', f32ToBf16Bits], ['f16', f32ToF16Bits]] as const) {
      const out = decoderRmsNorm(T(rows, dtype), w, 2.75);
      assert.equal(out.dtype, dtype);
      assert.deepEqual(out.shape, [1, 4]);
      assert.deepEqual(Array.from(out.bits()), Array.from(ref, (v) => encode(v)));
    }
  });

  it('decoderRmsNorm refuses a wrong rank, a weight of the wrong length, eps ≤ 0 and integer x', () => {
    const x = T([[1, 2]], 'f32');
    const w = T([0, 0], 'f32');
    assert.throws(() => decoderRmsNorm(T([1, 2], 'f32'), w, 1e-6), { name: 'RangeError', message: 'x: expected shape [T, hidden], got [2]' });
    assert.throws(() => decoderRmsNorm(x, T([0, 0, 0], 'f32'), 1e-6), { name: 'RangeError', message: 'weight: expected shape [2], got [3]' });
    assert.throws(() => decoderRmsNorm(x, T([[0, 0]], 'f32'), 1e-6), { name: 'RangeError', message: 'weight: expected shape [2], got [1,2]' });
    assert.throws(() => decoderRmsNorm(x, T([[0], [0]], 'f32'), 1e-6), { name: 'RangeError', message: 'weight: expected shape [2], got [2,1]' });
    for (const eps of [0, -1, NaN]) assert.throws(() => decoderRmsNorm(x, w, eps), { name: 'RangeError', message: `eps: expected a positive number, got ${eps}` });
    assert.throws(() => decoderRmsNorm(T([[1, 2]], 'i32'), w, 1e-6), { name: 'TypeError', message: 'x: expected a float dtype, got i32' });
  });

  describe('layer0Activations (tiny synthetic checkpoint)', function () {
    this.timeout(20_000);
    let tmp: ReturnType<typeof tempDir>;
    let dir = '';
    let files: string[] = [];
    /** A copy of the checkpoint with one BF16 tensor (by name suffix) stored as F32, the same values. */
    const withF32 = (tag: string, suffix: string): string => {
      const out = path.join(tmp.dir, tag);
      fs.mkdirSync(out);
      for (const f of fs.readdirSync(dir)) if (!f.endsWith('.safetensors')) fs.copyFileSync(path.join(dir, f), path.join(out, f));
      for (const file of files) {
        const src = SafetensorsFile.open(file);
        const tensors = src.names().map((name) => {
          const raw = src.readRaw(name);
          if (!name.endsWith(suffix)) return [name, raw] as const;
          assert.equal(raw.dtype, 'BF16');
          const bf = new Uint16Array(raw.bytes.slice().buffer);
          const f32 = Uint32Array.from(bf, (b) => b << 16);
          return [name, { dtype: 'F32' as const, shape: raw.shape, bytes: new Uint8Array(f32.buffer) }] as const;
        });
        writeSafetensors(path.join(out, path.basename(file)), tensors, { ...src.metadata });
      }
      return out;
    };
    const tiny = { name: '0.8B' as const, hidden: 8, numLayers: 1, Hk: 1, Hv: 2, Dk: 4, Dv: 4, K: 4, C: 2 * 4 + 2 * 4, eps: 1e-6, vocab: 6 };
    before(() => {
      tmp = tempDir('layer0-edges');
      dir = path.join(tmp.dir, 'ckpt');
      files = writeSyntheticCheckpoint(dir, tiny, { layers: 1, vocab: 6 }).files.map((f) => path.join(dir, f));
    });
    after(() => tmp.cleanup());

    it('each output from the right weight: mixed_qkv, then b and a (b first) from one stacked GEMM', () => {
      const ckpt = Qwen35Checkpoint.open(dir);
      const act = layer0Activations(ckpt, [5, 0, 5]);
      assert.equal(act.T, 3);
      assert.deepEqual(Array.from(act.ids), [5, 0, 5]);
      assert.ok(act.ids instanceof Int32Array);
      assert.deepEqual(act.shapes, ckpt.shapes);
      const emb = ckpt.embedTokens([5, 0, 5]);
      assert.deepEqual(Array.from(act.embeddings.bits()), Array.from(emb.bits()));
      const hidden = decoderRmsNorm(emb, ckpt.inputLayernormWeight(0), ckpt.config.eps);
      assert.deepEqual(Array.from(act.hidden.bits()), Array.from(hidden.bits()));
      const w = ckpt.loadGdnLayer(0);
      const mm = (weight: Tensor) => Array.from(matmulNT(hidden, weight, { outDtype: weight.dtype as 'f32' | 'bf16' }).toFloat32());
      assert.deepEqual(Array.from(act.mixedQkv.toFloat32()), mm(w.inProjQkv!));
      assert.deepEqual(act.mixedQkv.shape, [3, tiny.C]);
      assert.deepEqual(act.ba.shape, [3, 4]);
      assert.deepEqual([act.b.shape, act.a.shape], [[3, 2], [3, 2]]);
      assert.deepEqual(Array.from(act.b.toFloat32()), mm(w.inProjB!));
      assert.deepEqual(Array.from(act.a.toFloat32()), mm(w.inProjA!));
      assert.equal(act.mixedQkv.dtype, w.inProjQkv!.dtype);
      assert.deepEqual(Array.from(act.convWeight.bits()), Array.from(w.conv1d!.bits()));
      assert.deepEqual(Array.from(act.ALog.toFloat32()), Array.from(w.ALog!.toFloat32()));
      assert.equal(act.dtBias.dtype, 'f32');
      assert.deepEqual(Array.from(act.dtBias.toFloat32()), Array.from(w.dtBias!.toFloat32()));
      assert.equal(act.backend, act.mixedQkv.backend?.kind ?? 'host');
      assert.equal(act.mixedQkv.storage.released, false);
      act.release();
      assert.equal(act.mixedQkv.storage.released, true);
      assert.equal(act.ba.storage.released, true);
    });

    it('reads only the tensors it uses: three embedding rows, the norm weight and six of the nine GDN tensors', () => {
      const io = new IoCounter();
      const ckpt = Qwen35Checkpoint.open(dir, { io });
      io.reset();
      layer0Activations(ckpt, [1, 2, 1]).release();
      const entry = (suffix: string) => {
        for (const file of files) {
          const f = SafetensorsFile.open(file);
          const name = f.names().find((n) => n.endsWith(suffix));
          if (name) return f.entry(name).byteLength;
        }
        throw new Error(suffix);
      };
      const gdn = ['in_proj_qkv.weight', 'in_proj_b.weight', 'in_proj_a.weight', 'conv1d.weight', 'dt_bias', 'A_log'].map((s) => entry(`linear_attn.${s}`));
      assert.equal(io.total('data'), 3 * tiny.hidden * 2 + entry('layers.0.input_layernorm.weight') + gdn.reduce((a, b) => a + b, 0));
    });

    it('b and a stored in different dtypes do not stack; the error comes through', () => {
      const mixed = withF32('mixed-ba', 'linear_attn.in_proj_a.weight');
      assert.throws(() => layer0Activations(Qwen35Checkpoint.open(mixed), [0]), { message: 'stackRows: [2,8] bf16 and [2,8] f32 do not stack' });
    });

    it('embeddings and in_proj_qkv in different dtypes are refused, naming both', () => {
      const mixed = withF32('mixed-qkv', 'linear_attn.in_proj_qkv.weight');
      assert.throws(() => layer0Activations(Qwen35Checkpoint.open(mixed), [0]), { name: 'TypeError', message: 'embed_tokens is bf16 but in_proj_qkv is f32; gdnlab expects one dtype like the published checkpoints' });
    });

    it('refuses no token ids, and a checkpoint whose layer 0 is not a GDN layer', () => {
      const ckpt = Qwen35Checkpoint.open(dir);
      assert.throws(() => layer0Activations(ckpt, []), { name: 'RangeError', message: 'ids: expected at least one token id' });
      const full = path.join(tmp.dir, 'full');
      fs.mkdirSync(full);
      const cfg = JSON.parse(fs.readFileSync(path.join(dir, 'config.json'), 'utf8'));
      (cfg.text_config ?? cfg).layer_types = ['full_attention'];
      fs.writeFileSync(path.join(full, 'config.json'), JSON.stringify(cfg));
      for (const f of fs.readdirSync(dir)) if (f !== 'config.json') fs.copyFileSync(path.join(dir, f), path.join(full, f));
      assert.throws(() => layer0Activations(Qwen35Checkpoint.open(full), [0]), { name: 'RangeError', message: `layer 0 of ${full} is full_attention, not a GDN layer` });
    });
  });
});
