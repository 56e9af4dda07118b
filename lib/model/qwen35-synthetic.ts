// Synthetic Qwen3.5 GDN layers and checkpoints at the published models' real sizes.
//
// Values are seeded and cheap to make (each tensor has its own stream, derived from the seed and
// the tensor's name, so a tensor's bits do not depend on which others are made): bf16 weights are
// built directly from random bits (sign, one of four binades around the tensor's scale, 7 random
// mantissa bits); A_log = log(uniform(1, 16)) like Hugging Face's initialiser; norm.weight near 1.
// A synthetic checkpoint holds what the GDN path reads: the embedding (with a small vocabulary),
// each layer's norms, and the GDN tensors of GDN layers. Full-attention and MLP weights are left
// out (the layer list still says which layers are full attention), as are tied heads.

import * as fs from 'fs';
import * as path from 'path';
import { describe, f32ToBf16Bits } from '../dtype';
import { Rng } from '../random';
import { HostStorage, Tensor } from '../tensor';
import { LazyTensor, SafetensorsDType, writeShardedSafetensors } from './safetensors';
import {
  GDN_TENSOR_KEYS, GDN_TENSOR_SUFFIX, GdnLayerWeights, GdnTensorKey, LayerType, Qwen35Preset, Qwen35PresetName, checkGdnKeys, defaultLayerTypes, qwen35Preset,
} from './qwen35-config';

interface SyntheticSpec {
  dtype: 'BF16' | 'F32';
  shape: number[];
  /** bf16 tensors: random bits at this scale; f32 tensors: a named generator. */
  scale?: number;
  kind?: 'A_log' | 'norm' | 'ones-ish';
}

function gdnSpecs(p: Qwen35Preset, aLogDType: 'F32' | 'BF16'): Record<GdnTensorKey, SyntheticSpec> {
  const proj = Math.sqrt(3 / p.hidden);
  return {
    inProjQkv: { dtype: 'BF16', shape: [p.C, p.hidden], scale: proj },
    inProjZ: { dtype: 'BF16', shape: [p.Hv * p.Dv, p.hidden], scale: proj },
    inProjB: { dtype: 'BF16', shape: [p.Hv, p.hidden], scale: proj },
    inProjA: { dtype: 'BF16', shape: [p.Hv, p.hidden], scale: proj },
    conv1d: { dtype: 'BF16', shape: [p.C, 1, p.K], scale: 0.5 },
    dtBias: { dtype: 'BF16', shape: [p.Hv], scale: 1 },
    ALog: { dtype: aLogDType, shape: [p.Hv], kind: 'A_log' },
    normWeight: { dtype: aLogDType, shape: [p.Dv], kind: 'norm' },
    outProj: { dtype: 'BF16', shape: [p.hidden, p.Hv * p.Dv], scale: Math.sqrt(3 / (p.Hv * p.Dv)) },
  };
}

/** A 32-bit seed for one tensor: FNV-1a of its name mixed with the user's seed. */
function tensorSeed(seed: number, name: string): number {
  let h = 0x811c9dc5 ^ (seed >>> 0);
  for (let i = 0; i < name.length; i++) h = Math.imul(h ^ name.charCodeAt(i), 0x01000193);
  return (h ^ Math.floor(seed / 2 ** 32)) >>> 0;
}

/**
 * The seed option, checked: tensorSeed reads the low and high 32-bit words of an integer, so a fraction or NaN
 * would silently give the bits of another seed (0.5 and NaN those of 0).
 */
function seedOption(seed: number | undefined): number {
  if (seed === undefined) return 0;
  if (!Number.isSafeInteger(seed)) throw new RangeError(`seed: expected a safe integer, got ${describe(seed)}`);
  return seed;
}

/** Element count of a shape. */
function count(shape: readonly number[]): number {
  return shape.reduce((a, b) => a * b, 1);
}

/** bf16 bits from random words, two elements per word: magnitudes in [scale/4, 4·scale), random sign. */
function randomBf16(n: number, scale: number, rng: Rng): Uint16Array {
  const out = new Uint16Array(n);
  const base = Math.floor(Math.log2(scale)) + 127 - 2; // biased exponent of the lowest binade
  if (base < 1 || base + 3 > 254) throw new RangeError(`scale: ${scale} is outside the bf16 normal range`);
  for (let i = 0; i < n; i += 2) {
    const u = rng.nextU32();
    const lo = u & 0xffff;
    const hi = u >>> 16;
    out[i] = (lo & 0x8000) | ((base + ((lo >>> 7) & 3)) << 7) | (lo & 0x7f);
    if (i + 1 < n) out[i + 1] = (hi & 0x8000) | ((base + ((hi >>> 7) & 3)) << 7) | (hi & 0x7f);
  }
  return out;
}

function makeBytes(spec: SyntheticSpec, seed: number, name: string): Uint8Array {
  const rng = new Rng(tensorSeed(seed, name));
  const n = count(spec.shape);
  if (spec.kind) {
    const values = new Float32Array(n);
    for (let i = 0; i < n; i++) {
      const u = rng.uniform();
      values[i] = spec.kind === 'A_log' ? Math.log(1 + 15 * u) : 1 + (u - 0.5) * 0.2;
    }
    if (spec.dtype === 'F32') return new Uint8Array(values.buffer);
    const bits = Uint16Array.from(values, (v) => f32ToBf16Bits(v));
    return new Uint8Array(bits.buffer);
  }
  const bits = randomBf16(n, spec.scale ?? 1, rng);
  return new Uint8Array(bits.buffer);
}

export interface SyntheticLayerOptions {
  seed?: number;
  /** The layer index (part of each tensor's name, hence of its values). Default 0. */
  layer?: number;
  /** Stored dtype of A_log and norm.weight: 'F32' (Qwen3.5 files, default) or 'BF16' (Qwen3.6 files). */
  aLogDType?: 'F32' | 'BF16';
  /** Only these tensors (default all). */
  only?: readonly GdnTensorKey[];
}

/**
 * A GDN layer of a published model's real size, in memory, as Qwen35Checkpoint.loadGdnLayer returns
 * it (conv1d [C, K], ALog and normWeight f32). The same seed and layer give the same bits as the
 * layer written by writeSyntheticCheckpoint.
 */
export function syntheticGdnLayer(preset: Qwen35PresetName | string | Qwen35Preset, opts: SyntheticLayerOptions = {}): GdnLayerWeights {
  const p = qwen35Preset(preset);
  const layer = opts.layer ?? 0;
  const seed = seedOption(opts.seed);
  const specs = gdnSpecs(p, opts.aLogDType ?? 'F32');
  const keys = opts.only ?? GDN_TENSOR_KEYS;
  checkGdnKeys(keys, 'only');  // before any tensor is made: an unknown key has no spec
  const out: GdnLayerWeights = { layer, names: {}, storedDTypes: {} };
  for (const key of keys) {
    const name = `model.language_model.layers.${layer}.linear_attn.${GDN_TENSOR_SUFFIX[key]}`;
    const spec = specs[key];
    const bytes = makeBytes(spec, seed, name);
    let t = new Tensor(spec.shape, spec.dtype === 'F32' ? 'f32' : 'bf16', new HostStorage(bytes));
    if (key === 'conv1d') t = t.reshape([p.C, p.K]);
    if ((key === 'ALog' || key === 'normWeight') && t.dtype !== 'f32') t = t.astype('f32');
    out[key] = t;
    out.names[key] = name;
    out.storedDTypes[key] = spec.dtype;
  }
  return out;
}

export interface SyntheticCheckpointOptions {
  /** Decoder layers written (config num_hidden_layers); their types follow the published pattern. Default 2. */
  layers?: number;
  /** Shard files (with model.safetensors.index.json). Default 1. */
  shards?: number;
  seed?: number;
  /** Rows of the embedding table (the real 248320 × hidden table is GBs). Default 1024. */
  vocab?: number;
  /** 'nested' (official: text_config, model.language_model.*) or 'flat' (model.layers.*). */
  layout?: 'nested' | 'flat';
  aLogDType?: 'F32' | 'BF16';
}

/**
 * Writes a synthetic checkpoint of a published model's shapes into `dir` (created if needed):
 * config.json, shards, index. Tensors are made one at a time while writing (memory stays about
 * one tensor). Returns the tensor names per layer and the total bytes.
 */
export function writeSyntheticCheckpoint(
  dir: string,
  preset: Qwen35PresetName | string | Qwen35Preset,
  opts: SyntheticCheckpointOptions = {},
): { dir: string; layerTypes: LayerType[]; files: string[]; totalSize: number; weightMap: Record<string, string> } {
  const p = qwen35Preset(preset);
  const layers = opts.layers ?? 2;
  if (!Number.isInteger(layers) || layers < 1 || layers > p.numLayers) throw new RangeError(`layers: expected an integer in 1..${p.numLayers}, got ${describe(opts.layers)}`);
  const vocab = opts.vocab ?? 1024;
  if (!Number.isInteger(vocab) || vocab < 1) throw new RangeError(`vocab: expected a positive integer, got ${describe(opts.vocab)}`);
  const seed = seedOption(opts.seed);
  const layout = opts.layout ?? 'nested';
  const prefix = layout === 'nested' ? 'model.language_model.' : 'model.';
  const layerTypes = defaultLayerTypes(layers);
  const specs = gdnSpecs(p, opts.aLogDType ?? 'F32');

  // Values come from the official name, so nested and flat checkpoints hold the same bits.
  const lazy = (official: string, spec: SyntheticSpec): LazyTensor => ({
    dtype: spec.dtype as SafetensorsDType,
    shape: spec.shape,
    produce: () => makeBytes(spec, seed, official),
  });
  const tensors: [string, LazyTensor][] = [];
  const add = (suffix: string, spec: SyntheticSpec) => tensors.push([prefix + suffix, lazy('model.language_model.' + suffix, spec)]);
  add('embed_tokens.weight', { dtype: 'BF16', shape: [vocab, p.hidden], scale: 1 });
  for (let i = 0; i < layers; i++) {
    add(`layers.${i}.input_layernorm.weight`, { dtype: 'BF16', shape: [p.hidden], scale: 0.125 });
    add(`layers.${i}.post_attention_layernorm.weight`, { dtype: 'BF16', shape: [p.hidden], scale: 0.125 });
    if (layerTypes[i] !== 'linear_attention') continue;
    for (const key of GDN_TENSOR_KEYS) add(`layers.${i}.linear_attn.${GDN_TENSOR_SUFFIX[key]}`, specs[key]);
  }
  add('norm.weight', { dtype: 'BF16', shape: [p.hidden], scale: 0.125 });
  if (layout === 'nested') {
    // Tensors a Qwen3.5 file also holds that the GDN path must ignore.
    tensors.push(['mtp.norm.weight', lazy('mtp.norm.weight', { dtype: 'BF16', shape: [p.hidden], scale: 0.125 })]);
    tensors.push(['model.visual.merger.norm.bias', lazy('model.visual.merger.norm.bias', { dtype: 'BF16', shape: [64], scale: 0.125 })]);
  }

  fs.mkdirSync(dir, { recursive: true });
  const text = {
    model_type: 'qwen3_5_text',
    hidden_size: p.hidden,
    num_hidden_layers: layers,
    layer_types: layerTypes,
    linear_conv_kernel_dim: p.K,
    linear_num_key_heads: p.Hk,
    linear_num_value_heads: p.Hv,
    linear_key_head_dim: p.Dk,
    linear_value_head_dim: p.Dv,
    rms_norm_eps: p.eps,
    vocab_size: vocab,
    torch_dtype: 'bfloat16',
  };
  const config = layout === 'nested'
    ? { architectures: ['Qwen3_5ForConditionalGeneration'], model_type: 'qwen3_5', text_config: text, gdnlab_synthetic: { preset: p.name, seed } }
    : { architectures: ['Qwen3_5ForCausalLM'], ...text, gdnlab_synthetic: { preset: p.name, seed } };
  fs.writeFileSync(path.join(dir, 'config.json'), JSON.stringify(config, null, 2) + '\n');
  const written = writeShardedSafetensors(dir, tensors, { shards: opts.shards ?? 1, metadata: { format: 'pt', gdnlab: `synthetic Qwen3.5-${p.name}` } });
  return { dir, layerTypes, ...written };
}
