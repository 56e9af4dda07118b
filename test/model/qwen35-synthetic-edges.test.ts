// Synthetic Qwen3.5 layers and checkpoints at their edges, on a made-up preset of hidden size 8 (every
// tensor a few dozen elements): every tensor's bits against a plain re-implementation of the recipe
// (FNV-1a of the official name mixed with both 32-bit words of the seed, xoshiro128** words cut into
// two bf16 values each, A_log = log(1 + 15u), norm = 1 + (u − 0.5)/5), the shapes and dtypes, the option
// defaults and checks, the bf16 range guard on the scale, and the checkpoint's names, config.json,
// layout, shards and metadata.

import { strict as assert } from 'assert';
import * as fs from 'fs';
import * as path from 'path';
import { f32ToBf16Bits } from '../../lib/dtype';
import { GDN_TENSOR_KEYS, GDN_TENSOR_SUFFIX, GdnTensorKey, Qwen35Preset } from '../../lib/model/qwen35-config';
import { syntheticGdnLayer, writeSyntheticCheckpoint } from '../../lib/model/qwen35-synthetic';
import { SafetensorsCheckpoint } from '../../lib/model/safetensors';
import { Rng } from '../../lib/random';
import { Tensor } from '../../lib/tensor';
import { tempDir } from './helpers';

// C = 2·Hk·Dk + Hv·Dv = 4 + 6; Hv odd, so that some tensors hold an odd number of bf16 values.
const tiny = { name: 'tiny', hidden: 8, numLayers: 5, Hk: 1, Hv: 3, Dk: 2, Dv: 2, K: 3, C: 10, eps: 1e-6, vocab: 6 } as unknown as Qwen35Preset;

/** FNV-1a over the name, started from the seed's low word, finished with its high word. */
function fnvSeed(seed: number, name: string): number {
  let h = (0x811c9dc5 ^ (seed >>> 0)) >>> 0;
  for (let i = 0; i < name.length; i++) h = Math.imul(h ^ name.charCodeAt(i), 0x01000193) >>> 0;
  return (h ^ Math.floor(seed / 2 ** 32)) >>> 0;
}

/** bf16 words of the recipe: per random word, the low half then the high half. */
function bf16Words(n: number, scale: number, rng: Rng): number[] {
  const lowest = Math.floor(Math.log2(scale)) + 127 - 2;
  const half = (h: number) => (h & 0x8000) | ((lowest + ((h >> 7) & 3)) << 7) | (h & 0x7f);
  const out: number[] = [];
  while (out.length < n) {
    const u = rng.nextU32();
    out.push(half(u & 0xffff));
    if (out.length < n) out.push(half(u >>> 16));
  }
  return out;
}

type Recipe = { dtype: 'BF16' | 'F32'; shape: number[]; scale?: number; kind?: 'A_log' | 'norm' };
/** The stored bytes of a tensor made to this recipe under the official name. */
function expectedBytes(r: Recipe, seed: number, official: string): number[] {
  const rng = new Rng(fnvSeed(seed, official));
  const n = r.shape.reduce((a, b) => a * b, 1);
  if (r.kind) {
    const values = Float32Array.from({ length: n }, () => {
      const u = rng.uniform();
      return r.kind === 'A_log' ? Math.log(1 + 15 * u) : 1 + (u - 0.5) / 5;
    });
    if (r.dtype === 'F32') return [...new Uint8Array(values.buffer)];
    return [...new Uint8Array(Uint16Array.from(values, (v) => f32ToBf16Bits(v)).buffer)];
  }
  return [...new Uint8Array(new Uint16Array(bf16Words(n, r.scale!, rng)).buffer)];
}

const proj = Math.sqrt(3 / 8);
function recipes(aLog: 'F32' | 'BF16'): Record<GdnTensorKey, Recipe> {
  return {
    inProjQkv: { dtype: 'BF16', shape: [10, 8], scale: proj },
    inProjZ: { dtype: 'BF16', shape: [6, 8], scale: proj },
    inProjB: { dtype: 'BF16', shape: [3, 8], scale: proj },
    inProjA: { dtype: 'BF16', shape: [3, 8], scale: proj },
    conv1d: { dtype: 'BF16', shape: [10, 1, 3], scale: 0.5 },
    dtBias: { dtype: 'BF16', shape: [3], scale: 1 },
    ALog: { dtype: aLog, shape: [3], kind: 'A_log' },
    normWeight: { dtype: aLog, shape: [2], kind: 'norm' },
    outProj: { dtype: 'BF16', shape: [8, 6], scale: Math.sqrt(3 / 6) },
  };
}
const bytesOf = (t: Tensor) => {
  const b = t.bits();
  return [...new Uint8Array(b.buffer, b.byteOffset, b.byteLength)];
};
const f32Values = (bytes: number[], dtype: 'BF16' | 'F32') =>
  dtype === 'F32' ? [...new Float32Array(new Uint8Array(bytes).buffer)] : [...new Uint16Array(new Uint8Array(bytes).buffer)].map((b) => new Float32Array(new Uint32Array([b << 16]).buffer)[0]);

describe('synthetic Qwen3.5 layers and checkpoints: edges', () => {
  it('the re-implementation\'s hash is FNV-1a 32 (published vectors)', () => {
    assert.equal(fnvSeed(0, ''), 0x811c9dc5);
    assert.equal(fnvSeed(0, 'a'), 0xe40c292c);
    assert.equal(fnvSeed(0, 'foobar'), 0xbf9cf968);
  });

  it('syntheticGdnLayer: every tensor\'s bits, shape, dtype and name; conv1d [C, K]; A_log and norm.weight f32', () => {
    for (const seed of [7, 2 ** 32 + 7, 2 ** 40, -3]) {
      const w = syntheticGdnLayer(tiny, { seed, layer: 2 });
      assert.equal(w.layer, 2);
      for (const key of GDN_TENSOR_KEYS) {
        const r = recipes('F32')[key];
        const name = `model.language_model.layers.2.linear_attn.${GDN_TENSOR_SUFFIX[key]}`;
        assert.equal(w.names[key], name);
        assert.equal(w.storedDTypes[key], r.dtype);
        const t = w[key]!;
        assert.deepEqual(t.shape, key === 'conv1d' ? [10, 3] : r.shape, key);
        assert.equal(t.dtype, r.dtype === 'F32' ? 'f32' : 'bf16', key);
        assert.deepEqual(bytesOf(t), expectedBytes(r, seed, name), `${key}, seed ${seed}`);
      }
    }
  });

  it('seeds differ in either 32-bit word, and the layer index is part of each name', () => {
    const dt = (o: { seed?: number; layer?: number }) => bytesOf(syntheticGdnLayer(tiny, { ...o, only: ['inProjQkv'] }).inProjQkv!);
    const all = [dt({}), dt({ seed: 1 }), dt({ seed: 2 ** 32 }), dt({ seed: 2 ** 33 }), dt({ layer: 1 })];
    assert.equal(new Set(all.map((b) => b.join())).size, 5);
    assert.deepEqual(dt({}), dt({ seed: 0, layer: 0 }));
  });

  it('defaults: seed 0, layer 0, A_log and norm.weight stored F32, every tensor', () => {
    const w = syntheticGdnLayer(tiny);
    assert.deepEqual(Object.keys(w).sort(), ['layer', 'names', 'storedDTypes', ...GDN_TENSOR_KEYS].sort());
    assert.equal(w.layer, 0);
    assert.deepEqual(w.storedDTypes, Object.fromEntries(GDN_TENSOR_KEYS.map((k) => [k, recipes('F32')[k].dtype])));
    assert.deepEqual(bytesOf(w.ALog!), expectedBytes(recipes('F32').ALog, 0, 'model.language_model.layers.0.linear_attn.A_log'));
  });

  it('aLogDType BF16: A_log and norm.weight stored bf16 (rounded from f32), loaded as f32; the rest unchanged', () => {
    const bf = syntheticGdnLayer(tiny, { seed: 5, aLogDType: 'BF16' });
    const f32 = syntheticGdnLayer(tiny, { seed: 5 });
    for (const key of ['ALog', 'normWeight'] as const) {
      const r = recipes('BF16')[key];
      assert.equal(bf.storedDTypes[key], 'BF16');
      assert.equal(bf[key]!.dtype, 'f32');
      assert.deepEqual([...bf[key]!.toFloat32()], f32Values(expectedBytes(r, 5, bf.names[key]!), 'BF16'));
      assert.deepEqual([...bf[key]!.toFloat32()], [...f32[key]!.toFloat32()].map((v) => new Float32Array(new Uint32Array([f32ToBf16Bits(v) << 16]).buffer)[0]));
    }
    // A_log = log(U(1, 16)) and norm.weight = 1 ± 0.1.
    assert.ok([...f32.ALog!.toFloat32()].every((v) => v >= 0 && v < Math.log(16)));
    assert.ok([...f32.normWeight!.toFloat32()].every((v) => v >= 0.9 && v < 1.1));
    for (const key of ['inProjQkv', 'conv1d', 'dtBias'] as const) assert.deepEqual(bytesOf(bf[key]!), bytesOf(f32[key]!));
  });

  it('only: those tensors alone; unknown keys refused before any is made', () => {
    const w = syntheticGdnLayer(tiny, { only: ['dtBias', 'conv1d'] });
    assert.deepEqual(Object.keys(w), ['layer', 'names', 'storedDTypes', 'dtBias', 'conv1d']);
    assert.deepEqual(Object.keys(w.names), ['dtBias', 'conv1d']);
    for (const bad of ['toString', 'nope']) {
      assert.throws(() => syntheticGdnLayer(tiny, { only: ['dtBias', bad as GdnTensorKey] }), {
        name: 'RangeError',
        message: `only: unknown GDN tensor "${bad}" (known: inProjQkv, inProjZ, inProjB, inProjA, conv1d, dtBias, ALog, normWeight, outProj)`,
      });
    }
  });

  it('seed: a safe integer (a fraction or NaN would give another seed\'s bits)', () => {
    for (const [seed, said] of [[0.5, '0.5'], [NaN, 'NaN'], [2 ** 53, '9007199254740992'], [Infinity, 'Infinity'], ['1', "'1'"]] as const) {
      const message = `seed: expected a safe integer, got ${said}`;
      assert.throws(() => syntheticGdnLayer(tiny, { seed: seed as number }), { name: 'RangeError', message });
      assert.throws(() => writeSyntheticCheckpoint('/nonexistent/never-made', tiny, { seed: seed as number }), { name: 'RangeError', message });
    }
    assert.deepEqual(bytesOf(syntheticGdnLayer(tiny, { seed: 2 ** 53 - 1, only: ['dtBias'] }).dtBias!), expectedBytes(recipes('F32').dtBias, 2 ** 53 - 1, 'model.language_model.layers.0.linear_attn.dt_bias'));
  });

  it('a preset by name: the published shapes', () => {
    const w = syntheticGdnLayer('Qwen3.5-0.8B', { only: ['dtBias', 'ALog'] });
    assert.deepEqual([w.dtBias!.shape, w.ALog!.shape], [[16], [16]]);
    assert.deepEqual(bytesOf(w.dtBias!), expectedBytes({ dtype: 'BF16', shape: [16], scale: 1 }, 0, 'model.language_model.layers.0.linear_attn.dt_bias'));
  });

  it('the bf16 scale guard: biased exponents 1..254 for the four binades, refused outside', () => {
    // Hv = 0 makes in_proj_b [0, hidden]: no values, only the scale sqrt(3 / hidden) is checked.
    const b = (hidden: number) => () => syntheticGdnLayer({ ...tiny, Hv: 0, hidden }, { only: ['inProjB'] });
    // sqrt(3 / (3·2^248)) = 2^-124: the lowest binade has biased exponent 1, accepted.
    assert.deepEqual(b(3 * 2 ** 248)().inProjB!.shape, [0, 3 * 2 ** 248]);
    assert.throws(b(3 * 2 ** 250), { name: 'RangeError', message: `scale: ${2 ** -125} is outside the bf16 normal range` });
    // 2^126: binades 251..254, accepted by the guard (the fractional hidden size is refused by the tensor after).
    assert.throws(b(3 * 2 ** -252), { name: 'TypeError', message: /^shape: expected an array of non-negative integers/ });
    assert.throws(b(3 * 2 ** -254), { name: 'RangeError', message: `scale: ${2 ** 127} is outside the bf16 normal range` });
    assert.throws(b(0), { name: 'RangeError', message: 'scale: Infinity is outside the bf16 normal range' });
  });

  describe('writeSyntheticCheckpoint', () => {
    let tmp: ReturnType<typeof tempDir>;
    before(() => (tmp = tempDir('synthetic-edges')));
    after(() => tmp.cleanup());

    const official = (suffix: string) => `model.language_model.${suffix}`;
    const norm: Recipe = { dtype: 'BF16', shape: [8], scale: 0.125 };
    /** Every tensor a checkpoint of these layer types holds, in writing order, with its recipe. */
    function expectedTensors(types: string[], vocab: number, aLog: 'F32' | 'BF16'): [string, Recipe][] {
      const out: [string, Recipe][] = [['embed_tokens.weight', { dtype: 'BF16', shape: [vocab, 8], scale: 1 }]];
      types.forEach((type, i) => {
        out.push([`layers.${i}.input_layernorm.weight`, norm], [`layers.${i}.post_attention_layernorm.weight`, norm]);
        if (type === 'linear_attention') for (const key of GDN_TENSOR_KEYS) out.push([`layers.${i}.linear_attn.${GDN_TENSOR_SUFFIX[key]}`, recipes(aLog)[key]]);
      });
      out.push(['norm.weight', norm]);
      return out;
    }

    it('nested (default layout): names, bits, config.json, shards, index and metadata', () => {
      const dir = path.join(tmp.dir, 'deep', 'nested');
      const r = writeSyntheticCheckpoint(dir, tiny, { layers: 5, vocab: 6, seed: 9, shards: 2 });
      const types = ['linear_attention', 'linear_attention', 'linear_attention', 'full_attention', 'linear_attention'];
      assert.equal(r.dir, dir);
      assert.deepEqual(r.layerTypes, types);
      assert.deepEqual(r.files, ['model-00001-of-00002.safetensors', 'model-00002-of-00002.safetensors']);
      const want = expectedTensors(types, 6, 'F32').map(([s, rec]) => [official(s), rec, official(s)] as [string, Recipe, string]);
      want.push(['mtp.norm.weight', norm, 'mtp.norm.weight'], ['model.visual.merger.norm.bias', { dtype: 'BF16', shape: [64], scale: 0.125 }, 'model.visual.merger.norm.bias']);
      assert.deepEqual(Object.keys(r.weightMap), want.map(([n]) => n));
      const c = SafetensorsCheckpoint.open(dir);
      let total = 0;
      for (const [name, rec, from] of want) {
        const e = c.entry(name);
        assert.deepEqual([e.dtype, e.shape], [rec.dtype, rec.shape], name);
        assert.deepEqual([...c.readBytes(name)], expectedBytes(rec, 9, from), name);
        total += e.byteLength;
      }
      assert.equal(r.totalSize, total);
      assert.deepEqual({ ...c.fileOf('mtp.norm.weight').metadata }, { format: 'pt', gdnlab: 'synthetic Qwen3.5-tiny' });
      // The GDN tensors are syntheticGdnLayer's, bit for bit.
      const w = syntheticGdnLayer(tiny, { seed: 9, layer: 4 });
      for (const key of GDN_TENSOR_KEYS) assert.deepEqual([...c.readBytes(w.names[key]!)], bytesOf(w[key]!), key);
      assert.deepEqual(JSON.parse(fs.readFileSync(path.join(dir, 'config.json'), 'utf8')), {
        architectures: ['Qwen3_5ForConditionalGeneration'],
        model_type: 'qwen3_5',
        text_config: {
          model_type: 'qwen3_5_text', hidden_size: 8, num_hidden_layers: 5, layer_types: types, linear_conv_kernel_dim: 3, linear_num_key_heads: 1,
          linear_num_value_heads: 3, linear_key_head_dim: 2, linear_value_head_dim: 2, rms_norm_eps: 1e-6, vocab_size: 6, torch_dtype: 'bfloat16',
        },
        gdnlab_synthetic: { preset: 'tiny', seed: 9 },
      });
      assert.ok(fs.readFileSync(path.join(dir, 'config.json'), 'utf8').endsWith('}\n'));
    });

    it('flat: model.* names holding the nested checkpoint\'s bits, no mtp or vision tensors, a flat config', () => {
      const nested = path.join(tmp.dir, 'n2');
      const flat = path.join(tmp.dir, 'f2');
      writeSyntheticCheckpoint(nested, tiny, { layers: 1, vocab: 2, seed: 4, aLogDType: 'BF16' });
      const r = writeSyntheticCheckpoint(flat, tiny, { layers: 1, vocab: 2, seed: 4, aLogDType: 'BF16', layout: 'flat' });
      const names = expectedTensors(['linear_attention'], 2, 'BF16').map(([s]) => s);
      assert.deepEqual(Object.keys(r.weightMap), names.map((s) => `model.${s}`));
      const a = SafetensorsCheckpoint.open(nested);
      const b = SafetensorsCheckpoint.open(flat);
      for (const s of names) assert.deepEqual([...b.readBytes(`model.${s}`)], [...a.readBytes(official(s))], s);
      assert.equal(b.entry('model.layers.0.linear_attn.A_log').dtype, 'BF16');
      const config = JSON.parse(fs.readFileSync(path.join(flat, 'config.json'), 'utf8'));
      assert.deepEqual(Object.keys(config), ['architectures', 'model_type', 'hidden_size', 'num_hidden_layers', 'layer_types', 'linear_conv_kernel_dim', 'linear_num_key_heads',
        'linear_num_value_heads', 'linear_key_head_dim', 'linear_value_head_dim', 'rms_norm_eps', 'vocab_size', 'torch_dtype', 'gdnlab_synthetic']);
      assert.deepEqual([config.architectures, config.model_type, config.num_hidden_layers, config.gdnlab_synthetic], [['Qwen3_5ForCausalLM'], 'qwen3_5_text', 1, { preset: 'tiny', seed: 4 }]);
    });

    it('defaults: 2 layers, 1024 rows of embedding, seed 0, one shard, A_log F32', () => {
      const dir = path.join(tmp.dir, 'defaults');
      const r = writeSyntheticCheckpoint(dir, tiny);
      assert.deepEqual(r.layerTypes, ['linear_attention', 'linear_attention']);
      assert.deepEqual(r.files, ['model-00001-of-00001.safetensors']);
      const c = SafetensorsCheckpoint.open(dir);
      assert.deepEqual(c.entry('model.language_model.embed_tokens.weight').shape, [1024, 8]);
      assert.equal(c.entry('model.language_model.layers.1.linear_attn.A_log').dtype, 'F32');
      assert.deepEqual([...c.readBytes('model.language_model.layers.1.linear_attn.A_log')], expectedBytes(recipes('F32').ALog, 0, 'model.language_model.layers.1.linear_attn.A_log'));
      assert.deepEqual(JSON.parse(fs.readFileSync(path.join(dir, 'config.json'), 'utf8')).gdnlab_synthetic, { preset: 'tiny', seed: 0 });
    });

    it('refuses layers outside 1..numLayers and a vocabulary that is not a positive integer, before writing', () => {
      const dir = path.join(tmp.dir, 'never');
      for (const [layers, said] of [[0, '0'], [6, '6'], [1.5, '1.5'], [NaN, 'NaN'], ['2', "'2'"]] as const) {
        assert.throws(() => writeSyntheticCheckpoint(dir, tiny, { layers: layers as number }), { name: 'RangeError', message: `layers: expected an integer in 1..5, got ${said}` });
      }
      for (const [vocab, said] of [[0, '0'], [-1, '-1'], [1.5, '1.5'], ['3', "'3'"]] as const) {
        assert.throws(() => writeSyntheticCheckpoint(dir, tiny, { vocab: vocab as number }), { name: 'RangeError', message: `vocab: expected a positive integer, got ${said}` });
      }
      assert.equal(fs.existsSync(dir), false);
      const one = writeSyntheticCheckpoint(path.join(tmp.dir, 'one'), tiny, { layers: 1, vocab: 1 });
      assert.deepEqual(one.layerTypes, ['linear_attention']);
      assert.equal(writeSyntheticCheckpoint(path.join(tmp.dir, 'five'), tiny, { layers: 5, vocab: 1 }).layerTypes.length, 5);
    });
  });
});
