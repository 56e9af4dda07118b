// Qwen3.5 checkpoints: open a directory, list the layers, load a GDN layer's tensors (docs/DOMAIN.md §2).
//
//   const ckpt = Qwen35Checkpoint.open('/models/Qwen3.5-27B');   // or a models--Qwen--… cache entry
//   ckpt.layers()                  // [{ index: 0, type: 'linear_attention' }, …]
//   const w = ckpt.loadGdnLayer(0) // in_proj_qkv, conv1d [C, K], A_log (f32), …
//
// Tensor names: `model.language_model.layers.N.linear_attn.*` (official, text model nested) or
// `model.layers.N.linear_attn.*` (flat). `mtp.*` and `model.visual.*` are ignored.

import { Tensor } from '../tensor';
import { IoCounter, SafetensorsCheckpoint, TensorEntry } from './safetensors';
import {
  GDN_TENSOR_KEYS, GDN_TENSOR_SUFFIX, GdnLayerWeights, GdnShapes, GdnTensorKey, LayerType, Qwen35Config,
  checkGdnKeys, gdnTensorSpec, readQwen35Config, resolveCheckpointDir,
} from './qwen35-config';

export * from './qwen35-config';
export { syntheticGdnLayer, writeSyntheticCheckpoint } from './qwen35-synthetic';
export type { SyntheticCheckpointOptions, SyntheticLayerOptions } from './qwen35-synthetic';

const LANGUAGE_MODEL = 'model.language_model.';
const FLAT_MODEL = 'model.';

export class Qwen35Checkpoint {
  private constructor(
    /** The directory with config.json and the weights (after resolving a cache entry). */
    readonly dir: string,
    readonly config: Qwen35Config,
    readonly tensors: SafetensorsCheckpoint,
    /** 'model.language_model.' (official) or 'model.' (flat). */
    readonly prefix: string,
  ) {}

  /** Opens a checkpoint directory, a models--Qwen--<name> cache entry, or a hub cache root with { name }. */
  static open(dir: string, opts: { io?: IoCounter; name?: string; revision?: string } = {}): Qwen35Checkpoint {
    const root = resolveCheckpointDir(dir, opts);
    const config = readQwen35Config(root);
    const tensors = SafetensorsCheckpoint.open(root, { io: opts.io });
    const names = tensors.names();
    const nestedNames = names.some((n) => n.startsWith(LANGUAGE_MODEL + 'layers.') || n.startsWith(LANGUAGE_MODEL + 'embed_tokens.'));
    const flatNames = names.some((n) => n.startsWith(FLAT_MODEL + 'layers.') || n.startsWith(FLAT_MODEL + 'embed_tokens.'));
    if (nestedNames && flatNames) throw new Error(`${root}: holds both ${LANGUAGE_MODEL}layers.* and ${FLAT_MODEL}layers.* tensors; cannot tell which is the text model`);
    if (!nestedNames && !flatNames) throw new Error(`${root}: no ${LANGUAGE_MODEL}layers.* or ${FLAT_MODEL}layers.* tensors: not a Qwen3.5 text checkpoint`);
    return new Qwen35Checkpoint(root, config, tensors, nestedNames ? LANGUAGE_MODEL : FLAT_MODEL);
  }

  get shapes(): GdnShapes {
    const { hidden, Hk, Hv, Dk, Dv, K, C, eps } = this.config;
    return { hidden, Hk, Hv, Dk, Dv, K, C, eps };
  }

  /** Every layer with its type (from layer_types, full_attention_interval, or the default interval 4). */
  layers(): { index: number; type: LayerType }[] {
    return this.config.layerTypes.map((type, index) => ({ index, type }));
  }

  /** Indices of the GDN (linear_attention) layers. */
  gdnLayers(): number[] {
    return this.layers().filter((l) => l.type === 'linear_attention').map((l) => l.index);
  }

  /** The text model's tensor names (mtp.* and model.visual.* left out). */
  textTensorNames(): string[] {
    return this.tensors.names().filter((n) => n.startsWith(this.prefix) && !n.startsWith('model.visual.'));
  }

  layerPrefix(layer: number): string {
    this.checkLayer(layer);
    return `${this.prefix}layers.${layer}.`;
  }

  /** Full name of a GDN tensor of a layer. */
  gdnTensorName(layer: number, key: GdnTensorKey): string {
    checkGdnKeys([key], 'key');
    return `${this.layerPrefix(layer)}linear_attn.${GDN_TENSOR_SUFFIX[key]}`;
  }

  /** Header entries (name, dtype, shape, bytes, file offset) of a GDN layer's tensors. */
  gdnEntries(layer: number, keys: readonly GdnTensorKey[] = GDN_TENSOR_KEYS): Record<string, TensorEntry> {
    this.checkGdnLayer(layer);
    checkGdnKeys(keys, 'keys');
    const out: Record<string, TensorEntry> = {};
    for (const key of keys) out[key] = this.tensors.entry(this.gdnTensorName(layer, key));
    return out;
  }

  /**
   * Loads a GDN layer's tensors (all, or `only` those keys), checking shapes and dtypes against the
   * config before reading any data. conv1d comes back [C, K]; A_log and norm.weight as f32 (exact
   * from F32 or BF16); the rest as stored.
   */
  loadGdnLayer(layer: number, opts: { only?: readonly GdnTensorKey[] } = {}): GdnLayerWeights {
    this.checkGdnLayer(layer);
    const keys = opts.only ?? GDN_TENSOR_KEYS;
    checkGdnKeys(keys, 'only');
    const spec = gdnTensorSpec(this.shapes);
    const out: GdnLayerWeights = { layer, names: {}, storedDTypes: {} };
    const entries = keys.map((key) => {
      const name = this.gdnTensorName(layer, key);
      const e = this.tensors.entry(name);
      const { shapes, dtypes } = spec[key];
      if (!shapes.some((s) => s.length === e.shape.length && s.every((d, i) => d === e.shape[i]))) {
        throw new Error(`${this.tensors.fileOf(name).path}: ${name} has shape [${e.shape}], config.json implies [${shapes[0]}]`);
      }
      if (!dtypes.includes(e.dtype)) throw new Error(`${this.tensors.fileOf(name).path}: ${name} has dtype ${e.dtype}, expected ${dtypes.join(' or ')}`);
      return [key, name, e] as const;
    });
    for (const [key, name, e] of entries) {
      let t = this.tensors.read(name);
      if (key === 'conv1d') t = t.reshape([this.config.C, this.config.K]);
      if ((key === 'ALog' || key === 'normWeight') && t.dtype !== 'f32') t = t.astype('f32');
      out[key] = t;
      out.names[key] = name;
      out.storedDTypes[key] = e.dtype;
    }
    return out;
  }

  /** Name of the token embedding table. */
  get embedName(): string {
    return `${this.prefix}embed_tokens.weight`;
  }

  /** Rows of the embedding table for these token ids, reading only those rows. */
  embedTokens(ids: ArrayLike<number>): Tensor {
    const e = this.tensors.entry(this.embedName);
    if (e.shape.length !== 2 || e.shape[1] !== this.config.hidden) throw new Error(`${this.embedName}: shape [${e.shape}], expected [vocab, ${this.config.hidden}]`);
    for (let i = 0; i < ids.length; i++) {
      const id = ids[i];
      if (!Number.isInteger(id) || id < 0 || id >= e.shape[0]) throw new RangeError(`ids[${i}]: expected a token id in 0..${e.shape[0] - 1}, got ${id}`);
    }
    return this.tensors.readRows(this.embedName, ids);
  }

  /** A decoder layer's input RMSNorm weight [hidden] (as stored). */
  inputLayernormWeight(layer: number): Tensor {
    const name = `${this.layerPrefix(layer)}input_layernorm.weight`;
    const t = this.tensors.read(name);
    if (t.rank !== 1 || t.shape[0] !== this.config.hidden) throw new Error(`${name}: shape [${t.shape}], expected [${this.config.hidden}]`);
    return t;
  }

  private checkLayer(layer: number): void {
    if (!Number.isInteger(layer) || layer < 0 || layer >= this.config.numLayers) {
      throw new RangeError(`layer: expected an integer in 0..${this.config.numLayers - 1}, got ${layer}`);
    }
  }

  private checkGdnLayer(layer: number): void {
    this.checkLayer(layer);
    if (this.config.layerTypes[layer] !== 'linear_attention') {
      throw new RangeError(`layer ${layer} is a ${this.config.layerTypes[layer]} layer, not GDN (GDN layers: ${this.gdnLayers().slice(0, 8).join(', ')}${this.gdnLayers().length > 8 ? ', …' : ''})`);
    }
  }
}
