// Qwen3.5 config.json and checkpoint directories (docs/DOMAIN.md §2), and the published models' shapes.
//
// The official configs nest the text model in `text_config` (model_type `qwen3_5` outside,
// `qwen3_5_text` inside; the MoE models `qwen3_5_moe` / `qwen3_5_moe_text`); flat configs put the
// same fields at the top level. Fields a config leaves out take Hugging Face's defaults for
// Qwen3_5TextConfig, and are listed in `defaulted` so nothing is assumed silently.

import * as fs from 'fs';
import * as path from 'path';
import { describe } from '../dtype';
import type { Tensor } from '../tensor';
import type { SafetensorsDType } from './safetensors';

export type LayerType = 'linear_attention' | 'full_attention';

/** The GDN geometry of a model. C = 2·Hk·Dk + Hv·Dv (channels [q heads | k heads | v heads]). */
export interface GdnShapes {
  hidden: number;
  Hk: number;
  Hv: number;
  Dk: number;
  Dv: number;
  K: number;
  C: number;
  eps: number;
}

export interface Qwen35Config extends GdnShapes {
  /** The file it came from. */
  file: string;
  /** model_type of the text config (qwen3_5_text, qwen3_5_moe_text, …). */
  modelType: string;
  /** True when the text model was nested in text_config. */
  nested: boolean;
  numLayers: number;
  layerTypes: LayerType[];
  /** How layerTypes was decided. */
  layerTypesFrom: 'layer_types' | 'full_attention_interval' | 'default interval 4';
  vocab: number | undefined;
  /** Fields absent from the file that took Hugging Face's defaults. */
  defaulted: string[];
  /** The parsed JSON text config, for anything else a caller needs. */
  raw: Record<string, unknown>;
}

/** Hugging Face's Qwen3_5TextConfig defaults for the fields gdnlab reads. */
const HF_DEFAULTS = {
  linear_conv_kernel_dim: 4,
  linear_key_head_dim: 128,
  linear_value_head_dim: 128,
  linear_num_key_heads: 16,
  linear_num_value_heads: 32,
  rms_norm_eps: 1e-6,
} as const;

/** Parses a config.json object (nested or flat). `file` names it in errors. */
export function parseQwen35Config(json: unknown, file: string): Qwen35Config {
  if (!isObject(json)) throw new Error(`${file}: expected a JSON object, got ${describe(json)}`);
  const nested = isObject(json.text_config);
  const text = (nested ? json.text_config : json) as Record<string, unknown>;
  const where = nested ? 'text_config.' : '';
  const defaulted: string[] = [];
  const int = (key: string, min: number, fallback?: number): number => {
    const v = text[key];
    if (v === undefined || v === null) {
      if (fallback === undefined) throw new Error(`${file}: ${where}${key} is missing`);
      defaulted.push(key);
      return fallback;
    }
    if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < min) throw new Error(`${file}: ${where}${key} must be an integer >= ${min}, got ${describe(v)}`);
    return v;
  };
  const hidden = int('hidden_size', 1);
  const numLayers = int('num_hidden_layers', 1);
  const K = int('linear_conv_kernel_dim', 1, HF_DEFAULTS.linear_conv_kernel_dim);
  const Hk = int('linear_num_key_heads', 1, HF_DEFAULTS.linear_num_key_heads);
  const Hv = int('linear_num_value_heads', 1, HF_DEFAULTS.linear_num_value_heads);
  const Dk = int('linear_key_head_dim', 1, HF_DEFAULTS.linear_key_head_dim);
  const Dv = int('linear_value_head_dim', 1, HF_DEFAULTS.linear_value_head_dim);
  if (Hv % Hk !== 0) throw new Error(`${file}: ${where}linear_num_value_heads (${Hv}) must be a multiple of linear_num_key_heads (${Hk}) for grouped heads`);
  let eps: number = HF_DEFAULTS.rms_norm_eps;
  if (text.rms_norm_eps === undefined) defaulted.push('rms_norm_eps');
  else if (typeof text.rms_norm_eps !== 'number' || !(text.rms_norm_eps > 0) || !Number.isFinite(text.rms_norm_eps)) {
    throw new Error(`${file}: ${where}rms_norm_eps must be a positive number, got ${describe(text.rms_norm_eps)}`);
  } else eps = text.rms_norm_eps;
  const vocab = text.vocab_size === undefined ? undefined : int('vocab_size', 1);

  let layerTypes: LayerType[];
  let layerTypesFrom: Qwen35Config['layerTypesFrom'];
  if (text.layer_types !== undefined && text.layer_types !== null) {
    const lt = text.layer_types;
    if (!Array.isArray(lt) || lt.length !== numLayers) {
      throw new Error(`${file}: ${where}layer_types must be an array of ${numLayers} layer types (num_hidden_layers), got ${describe(lt)}${Array.isArray(lt) ? ` of length ${lt.length}` : ''}`);
    }
    layerTypes = lt.map((t, i) => {
      if (t !== 'linear_attention' && t !== 'full_attention') throw new Error(`${file}: ${where}layer_types[${i}] must be 'linear_attention' or 'full_attention', got ${describe(t)}`);
      return t;
    });
    layerTypesFrom = 'layer_types';
  } else {
    let interval = 4;
    layerTypesFrom = 'default interval 4';
    if (text.full_attention_interval !== undefined) {
      interval = int('full_attention_interval', 1);
      layerTypesFrom = 'full_attention_interval';
    }
    layerTypes = Array.from({ length: numLayers }, (_, i) => ((i + 1) % interval === 0 ? 'full_attention' : 'linear_attention'));
  }
  const modelType = typeof text.model_type === 'string' ? text.model_type : nested ? 'qwen3_5_text' : String(json.model_type ?? 'unknown');
  return {
    file, modelType, nested, hidden, numLayers, layerTypes, layerTypesFrom, K, Hk, Hv, Dk, Dv,
    C: 2 * Hk * Dk + Hv * Dv, eps, vocab, defaulted, raw: text,
  };
}

/** Reads and parses `<dir>/config.json`. */
export function readQwen35Config(dir: string): Qwen35Config {
  const file = path.join(dir, 'config.json');
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (e) {
    throw new Error(`${file}: cannot read: ${(e as Error).message}`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (e) {
    throw new Error(`${file}: not valid JSON: ${(e as Error).message}`);
  }
  return parseQwen35Config(json, file);
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

// ------------------------------------------------------------------------------ GDN tensors

/** The tensors of a GDN layer, by the key gdnlab uses → the name suffix in the checkpoint. */
export const GDN_TENSOR_SUFFIX = {
  inProjQkv: 'in_proj_qkv.weight',
  inProjZ: 'in_proj_z.weight',
  inProjB: 'in_proj_b.weight',
  inProjA: 'in_proj_a.weight',
  conv1d: 'conv1d.weight',
  dtBias: 'dt_bias',
  ALog: 'A_log',
  normWeight: 'norm.weight',
  outProj: 'out_proj.weight',
} as const;

export type GdnTensorKey = keyof typeof GDN_TENSOR_SUFFIX;
export const GDN_TENSOR_KEYS = Object.keys(GDN_TENSOR_SUFFIX) as GdnTensorKey[];

/**
 * Refuses a key that is not a GDN tensor's, naming the argument `what`: an own key of GDN_TENSOR_SUFFIX only
 * ('toString' and 'constructor' are in every object, and `in` would let them through).
 */
export function checkGdnKeys(keys: readonly string[], what: string): void {
  for (const key of keys) {
    if (!Object.prototype.hasOwnProperty.call(GDN_TENSOR_SUFFIX, key)) throw new RangeError(`${what}: unknown GDN tensor ${JSON.stringify(key)} (known: ${GDN_TENSOR_KEYS.join(', ')})`);
  }
}

/** A GDN layer's weights. conv1d is [C, K] (stored [C, 1, K]); ALog and normWeight are f32. */
export type GdnLayerWeights = {
  layer: number;
  /** Full checkpoint name of each tensor loaded. */
  names: Partial<Record<GdnTensorKey, string>>;
  /** The dtype each tensor had in the file. */
  storedDTypes: Partial<Record<GdnTensorKey, SafetensorsDType>>;
} & Partial<Record<GdnTensorKey, Tensor>>;

/** The expected shape of each GDN tensor, and the dtypes accepted for it. */
export function gdnTensorSpec(s: GdnShapes): Record<GdnTensorKey, { shapes: number[][]; dtypes: SafetensorsDType[] }> {
  const w: SafetensorsDType[] = ['BF16', 'F32'];
  return {
    inProjQkv: { shapes: [[s.C, s.hidden]], dtypes: w },
    inProjZ: { shapes: [[s.Hv * s.Dv, s.hidden]], dtypes: w },
    inProjB: { shapes: [[s.Hv, s.hidden]], dtypes: w },
    inProjA: { shapes: [[s.Hv, s.hidden]], dtypes: w },
    conv1d: { shapes: [[s.C, 1, s.K], [s.C, s.K]], dtypes: w },
    dtBias: { shapes: [[s.Hv]], dtypes: w },
    ALog: { shapes: [[s.Hv]], dtypes: ['F32', 'BF16'] },
    normWeight: { shapes: [[s.Dv]], dtypes: ['F32', 'BF16'] },
    outProj: { shapes: [[s.hidden, s.Hv * s.Dv]], dtypes: w },
  };
}

// ------------------------------------------------------------------------------ directories

/**
 * The directory holding config.json and the weights, from: such a directory itself; a Hugging Face
 * cache entry `models--Qwen--<name>` (the snapshot `refs/main` names, or its only snapshot); or a
 * hub cache root holding `models--Qwen--<name>` when `name` is given ('Qwen3.5-27B' or 'Qwen/Qwen3.5-27B').
 */
export function resolveCheckpointDir(dir: string, opts: { name?: string; revision?: string } = {}): string {
  if (!fs.existsSync(dir)) throw new Error(`${dir}: no such directory`);
  if (fs.existsSync(path.join(dir, 'config.json')) && !opts.name) return dir;
  if (opts.name) {
    // Split at the first '/' only, keeping the rest in repo: split('/', 2) dropped a third part ('Qwen/Qwen3.5-4B/x'
    // named Qwen3.5-4B), which the check below must see and refuse.
    const slash = opts.name.indexOf('/');
    const [org, repo] = slash >= 0 ? [opts.name.slice(0, slash), opts.name.slice(slash + 1)] : ['Qwen', opts.name];
    if (!org || !repo || /[\\/]|^\.\.?$/.test(repo) || /[\\/]|^\.\.?$/.test(org)) throw new Error(`name: expected 'Qwen3.5-27B' or 'Qwen/Qwen3.5-27B', got ${describe(opts.name)}`);
    const entry = path.join(dir, `models--${org}--${repo}`);
    if (!fs.existsSync(entry)) {
      const have = listDir(dir).filter((f) => f.startsWith('models--'));
      throw new Error(`${dir}: no cache entry models--${org}--${repo}${have.length ? ` (found ${have.slice(0, 6).join(', ')})` : ''}`);
    }
    return resolveCheckpointDir(entry, { revision: opts.revision });
  }
  const snapshots = path.join(dir, 'snapshots');
  if (fs.existsSync(snapshots)) {
    let revision = opts.revision;
    if (revision !== undefined && fs.existsSync(path.join(dir, 'refs', revision)) && !fs.existsSync(path.join(snapshots, revision))) {
      revision = fs.readFileSync(path.join(dir, 'refs', revision), 'utf8').trim();
    }
    if (revision === undefined && fs.existsSync(path.join(dir, 'refs', 'main'))) {
      revision = fs.readFileSync(path.join(dir, 'refs', 'main'), 'utf8').trim();
    }
    if (revision !== undefined) {
      if (revision === '' || /[\\/]|^\.\.?$/.test(revision)) throw new Error(`${dir}: revision ${describe(revision)} is not a snapshot name`);
      const snap = path.join(snapshots, revision);
      if (!fs.existsSync(snap)) throw new Error(`${dir}: snapshot ${revision} (from ${opts.revision ? 'the revision asked for' : 'refs/main'}) is not in snapshots/`);
      return requireConfig(snap);
    }
    const all = listDir(snapshots);
    if (all.length !== 1) throw new Error(`${snapshots}: ${all.length} snapshots (${all.slice(0, 6).join(', ')}) and no refs/main; pass { revision }`);
    return requireConfig(path.join(snapshots, all[0]));
  }
  const entries = listDir(dir).filter((f) => /^models--Qwen--/.test(f));
  if (entries.length) throw new Error(`${dir}: a hub cache; pass { name } to pick one of ${entries.map((e) => e.replace(/^models--Qwen--/, '')).join(', ')}`);
  throw new Error(`${dir}: no config.json, snapshots/ or models--Qwen--* entries: not a checkpoint directory`);
}

function requireConfig(dir: string): string {
  if (!fs.existsSync(path.join(dir, 'config.json'))) throw new Error(`${dir}: snapshot has no config.json`);
  return dir;
}

function listDir(dir: string): string[] {
  try {
    return fs.readdirSync(dir).sort();
  } catch {
    return [];
  }
}

// ------------------------------------------------------------------------------ presets

/** The published Qwen3.5 models' GDN shapes (docs/DOMAIN.md §1). */
export interface Qwen35Preset extends GdnShapes {
  name: Qwen35PresetName;
  numLayers: number;
  vocab: number;
}

export type Qwen35PresetName = '0.8B' | '4B' | '27B' | '35B-A3B' | '397B-A17B';

function preset(name: Qwen35PresetName, hidden: number, numLayers: number, Hk: number, Hv: number): Qwen35Preset {
  const Dk = 128;
  const Dv = 128;
  return Object.freeze({ name, hidden, numLayers, Hk, Hv, Dk, Dv, K: 4, C: 2 * Hk * Dk + Hv * Dv, eps: 1e-6, vocab: 248320 });
}

export const QWEN35_PRESETS: Readonly<Record<Qwen35PresetName, Qwen35Preset>> = Object.freeze({
  '0.8B': preset('0.8B', 1024, 24, 16, 16),
  '4B': preset('4B', 2560, 32, 16, 32),
  '27B': preset('27B', 5120, 64, 16, 48),
  '35B-A3B': preset('35B-A3B', 2048, 40, 16, 32),
  '397B-A17B': preset('397B-A17B', 4096, 60, 16, 64),
});

/** A preset by name ('27B' or 'Qwen3.5-27B'), or the preset object itself. */
export function qwen35Preset(p: Qwen35PresetName | string | Qwen35Preset): Qwen35Preset {
  if (typeof p === 'object' && p !== null) return p;
  const key = String(p).replace(/^(Qwen\/)?Qwen3\.5-/, '');
  const found = (QWEN35_PRESETS as Record<string, Qwen35Preset>)[key];
  if (!found) throw new RangeError(`preset: expected one of ${Object.keys(QWEN35_PRESETS).join(', ')}, got ${describe(p)}`);
  return found;
}

/** Layer types of the published models: full attention when (i + 1) % 4 == 0. */
export function defaultLayerTypes(numLayers: number): LayerType[] {
  return Array.from({ length: numLayers }, (_, i) => ((i + 1) % 4 === 0 ? 'full_attention' : 'linear_attention'));
}
