// Qwen3.5 checkpoints at their edges, on synthetic checkpoints of a made-up preset of hidden size 8 (a few
// KB each): nested and flat names told apart by their layers or embedding (and refused when both or
// neither are there), the text model's names, layer and GDN-layer checks with their messages (the GDN
// list cut after eight), each GDN tensor loaded with its shape and dtype checked first (every way a
// shape can differ, both stored layouts of conv1d, f32 A_log and norm.weight), unknown tensor keys, the
// embedding rows and the input RMSNorm weight, and a hub cache entry opened by name and revision.

import { strict as assert } from 'assert';
import * as fs from 'fs';
import * as path from 'path';
import { GDN_TENSOR_KEYS, GdnTensorKey, Qwen35Checkpoint, Qwen35Preset, syntheticGdnLayer, writeSyntheticCheckpoint } from '../../lib/model/qwen35';
import { IoCounter, RawTensor, SafetensorsCheckpoint, writeSafetensors } from '../../lib/model/safetensors';
import { Tensor } from '../../lib/tensor';
import { tempDir } from './helpers';

// C = 2·Hk·Dk + Hv·Dv = 4 + 6 = 10.
const tiny = { name: 'tiny', hidden: 8, numLayers: 12, Hk: 1, Hv: 3, Dk: 2, Dv: 2, K: 3, C: 10, eps: 1e-6, vocab: 6 } as unknown as Qwen35Preset;
const KNOWN = 'inProjQkv, inProjZ, inProjB, inProjA, conv1d, dtBias, ALog, normWeight, outProj';
const bits = (t: Tensor) => Array.from(t.bits());
const u8 = (n: number) => new Uint8Array(n);

describe('Qwen3.5 checkpoint: edges', () => {
  let tmp: ReturnType<typeof tempDir>;
  /** 12 layers (GDN: 0, 1, 2, 4, 5, 6, 8, 9, 10), nested; 10 layers (eight GDN); one layer, flat. */
  let nested = '';
  let ten = '';
  let flat = '';
  before(() => {
    tmp = tempDir('qwen35-edges');
    nested = path.join(tmp.dir, 'nested');
    ten = path.join(tmp.dir, 'ten');
    flat = path.join(tmp.dir, 'flat');
    writeSyntheticCheckpoint(nested, tiny, { layers: 12, vocab: 6, seed: 3, shards: 2 });
    writeSyntheticCheckpoint(ten, tiny, { layers: 10, vocab: 6, seed: 3 });
    writeSyntheticCheckpoint(flat, tiny, { layers: 1, vocab: 6, seed: 3, layout: 'flat' });
  });
  after(() => tmp.cleanup());

  let seq = 0;
  /**
   * A copy of the flat checkpoint in one file, each tensor passed through `edit` (null drops it), with
   * `extra` tensors added.
   */
  function variant(edit: (name: string, t: RawTensor) => RawTensor | null, extra: [string, RawTensor][] = []): string {
    const dir = path.join(tmp.dir, `v${++seq}`);
    fs.mkdirSync(dir);
    fs.copyFileSync(path.join(flat, 'config.json'), path.join(dir, 'config.json'));
    const src = SafetensorsCheckpoint.open(flat);
    const tensors: [string, RawTensor][] = [];
    for (const name of src.names()) {
      const t = edit(name, src.readRaw(name));
      if (t) tensors.push([name, t]);
    }
    writeSafetensors(path.join(dir, 'model.safetensors'), [...tensors, ...extra]);
    return dir;
  }
  const keep = (_: string, t: RawTensor) => t;
  /** The flat checkpoint with one tensor (by name) replaced. */
  const replaced = (name: string, t: RawTensor) => variant((n, old) => (n === name ? t : old));
  /** A checkpoint holding only these tensors (and the flat config). */
  const only = (...names: string[]) => variant(() => null, names.map((n) => [n, { dtype: 'U8', shape: [1], bytes: u8(1) }]));

  it('nested: prefix, shapes, layers, GDN layers and the text model\'s names (mtp.* and model.visual.* left out)', () => {
    const io = new IoCounter();
    const c = Qwen35Checkpoint.open(nested, { io });
    assert.equal(c.dir, nested);
    assert.equal(c.prefix, 'model.language_model.');
    assert.equal(io.total('data'), 0);
    assert.equal(io.total(), c.tensors.headerBytes());
    assert.equal(c.tensors.files.size, 2);
    assert.deepEqual(c.shapes, { hidden: 8, Hk: 1, Hv: 3, Dk: 2, Dv: 2, K: 3, C: 10, eps: 1e-6 });
    assert.deepEqual(Object.keys(c.shapes), ['hidden', 'Hk', 'Hv', 'Dk', 'Dv', 'K', 'C', 'eps']);
    assert.equal(c.config.numLayers, 12);
    assert.deepEqual(c.layers().slice(2, 5), [{ index: 2, type: 'linear_attention' }, { index: 3, type: 'full_attention' }, { index: 4, type: 'linear_attention' }]);
    assert.equal(c.layers().length, 12);
    assert.deepEqual(c.gdnLayers(), [0, 1, 2, 4, 5, 6, 8, 9, 10]);
    const all = c.tensors.names();
    assert.deepEqual(c.textTensorNames(), all.filter((n) => n.startsWith('model.language_model.')));
    assert.equal(c.textTensorNames().length, all.length - 2);
    assert.ok(all.includes('mtp.norm.weight') && all.includes('model.visual.merger.norm.bias'));
    assert.equal(c.embedName, 'model.language_model.embed_tokens.weight');
    assert.equal(c.layerPrefix(11), 'model.language_model.layers.11.');
    assert.equal(c.gdnTensorName(10, 'conv1d'), 'model.language_model.layers.10.linear_attn.conv1d.weight');
  });

  it('flat: model.* names; model.visual.* and mtp.* are not the text model', () => {
    const c = Qwen35Checkpoint.open(flat);
    assert.equal(c.prefix, 'model.');
    assert.equal(c.embedName, 'model.embed_tokens.weight');
    assert.equal(c.gdnTensorName(0, 'ALog'), 'model.layers.0.linear_attn.A_log');
    const v = Qwen35Checkpoint.open(variant(keep, [['model.visual.patch.weight', { dtype: 'U8', shape: [1], bytes: u8(1) }], ['mtp.fc.weight', { dtype: 'U8', shape: [1], bytes: u8(1) }]]));
    const text = v.textTensorNames();
    assert.deepEqual(text, v.tensors.names().filter((n) => n.startsWith('model.') && !n.startsWith('model.visual.')));
    assert.equal(text.length, v.tensors.names().length - 2);
    assert.ok(text.includes('model.embed_tokens.weight') && text.includes('model.norm.weight'));
  });

  it('nested or flat from the layers or the embedding alone; both or neither refused', () => {
    assert.equal(Qwen35Checkpoint.open(only('model.language_model.embed_tokens.weight', 'mtp.x')).prefix, 'model.language_model.');
    assert.equal(Qwen35Checkpoint.open(only('mtp.x', 'model.language_model.layers.0.x')).prefix, 'model.language_model.');
    assert.equal(Qwen35Checkpoint.open(only('model.embed_tokens.weight', 'mtp.x')).prefix, 'model.');
    assert.equal(Qwen35Checkpoint.open(only('mtp.x', 'model.layers.7.x')).prefix, 'model.');
    const both = only('model.language_model.layers.0.x', 'model.layers.0.x');
    assert.throws(() => Qwen35Checkpoint.open(both), { message: `${both}: holds both model.language_model.layers.* and model.layers.* tensors; cannot tell which is the text model` });
    const both2 = only('model.language_model.embed_tokens.weight', 'model.embed_tokens.weight');
    assert.throws(() => Qwen35Checkpoint.open(both2), { message: `${both2}: holds both model.language_model.layers.* and model.layers.* tensors; cannot tell which is the text model` });
    const neither = only('model.language_model.norm.weight', 'model.norm.weight', 'x.model.layers.0.y', 'model.layers', 'model.language_model.embed_tokens');
    assert.throws(() => Qwen35Checkpoint.open(neither), { message: `${neither}: no model.language_model.layers.* or model.layers.* tensors: not a Qwen3.5 text checkpoint` });
  });

  it('layer indices: integers in 0..numLayers − 1', () => {
    const c = Qwen35Checkpoint.open(nested);
    for (const bad of [-1, 12, 1.5, NaN, Infinity]) {
      const message = `layer: expected an integer in 0..11, got ${bad}`;
      assert.throws(() => c.layerPrefix(bad), { name: 'RangeError', message });
      assert.throws(() => c.inputLayernormWeight(bad), { name: 'RangeError', message });
      assert.throws(() => c.loadGdnLayer(bad), { name: 'RangeError', message });
    }
    assert.equal(c.layerPrefix(0), 'model.language_model.layers.0.');
  });

  it('GDN layers only: the full-attention layer refused, the GDN list cut after eight', () => {
    const c = Qwen35Checkpoint.open(nested);
    const message = 'layer 3 is a full_attention layer, not GDN (GDN layers: 0, 1, 2, 4, 5, 6, 8, 9, …)';
    assert.throws(() => c.loadGdnLayer(3), { name: 'RangeError', message });
    assert.throws(() => c.gdnEntries(3), { name: 'RangeError', message });
    assert.throws(() => c.loadGdnLayer(11), { name: 'RangeError', message: message.replace('layer 3', 'layer 11') });
    const t = Qwen35Checkpoint.open(ten);
    assert.deepEqual(t.gdnLayers(), [0, 1, 2, 4, 5, 6, 8, 9]);
    assert.throws(() => t.loadGdnLayer(7), { name: 'RangeError', message: 'layer 7 is a full_attention layer, not GDN (GDN layers: 0, 1, 2, 4, 5, 6, 8, 9)' });
  });

  it('unknown tensor keys are refused, naming the argument', () => {
    const c = Qwen35Checkpoint.open(nested);
    for (const bad of ['toString', 'nope', 'constructor']) {
      assert.throws(() => c.gdnTensorName(0, bad as GdnTensorKey), { name: 'RangeError', message: `key: unknown GDN tensor "${bad}" (known: ${KNOWN})` });
      assert.throws(() => c.gdnEntries(0, ['dtBias', bad as GdnTensorKey]), { name: 'RangeError', message: `keys: unknown GDN tensor "${bad}" (known: ${KNOWN})` });
      assert.throws(() => c.loadGdnLayer(0, { only: ['dtBias', bad as GdnTensorKey] }), { name: 'RangeError', message: `only: unknown GDN tensor "${bad}" (known: ${KNOWN})` });
    }
  });

  it('gdnEntries: every GDN tensor\'s header entry by default, or those asked for', () => {
    const c = Qwen35Checkpoint.open(nested);
    const all = c.gdnEntries(9);
    assert.deepEqual(Object.keys(all), GDN_TENSOR_KEYS);
    for (const key of GDN_TENSOR_KEYS) assert.equal(all[key].name, c.gdnTensorName(9, key));
    assert.deepEqual([all.conv1d.shape, all.ALog.dtype, all.inProjZ.shape], [[10, 1, 3], 'F32', [6, 8]]);
    const some = c.gdnEntries(9, ['ALog', 'dtBias']);
    assert.deepEqual(Object.keys(some), ['ALog', 'dtBias']);
  });

  it('loadGdnLayer: the synthetic layer\'s bits; conv1d [C, K]; A_log and norm.weight f32, the rest as stored', () => {
    const io = new IoCounter();
    const c = Qwen35Checkpoint.open(nested, { io });
    const w = c.loadGdnLayer(10);
    const want = syntheticGdnLayer(tiny, { seed: 3, layer: 10 });
    assert.equal(w.layer, 10);
    assert.deepEqual(Object.keys(w), ['layer', 'names', 'storedDTypes', ...GDN_TENSOR_KEYS]);
    for (const key of GDN_TENSOR_KEYS) {
      assert.equal(w.names[key], c.gdnTensorName(10, key));
      assert.equal(w.storedDTypes[key], want.storedDTypes[key]);
      assert.deepEqual([w[key]!.dtype, w[key]!.shape], [want[key]!.dtype, want[key]!.shape], key);
      assert.deepEqual(bits(w[key]!), bits(want[key]!), key);
    }
    assert.deepEqual(w.conv1d!.shape, [10, 3]);
    assert.equal(w.dtBias!.dtype, 'bf16');
    assert.equal(io.total('data'), Object.values(c.gdnEntries(10)).reduce((s, e) => s + e.byteLength, 0));
    const two = c.loadGdnLayer(0, { only: ['normWeight', 'inProjA'] });
    assert.deepEqual(Object.keys(two), ['layer', 'names', 'storedDTypes', 'normWeight', 'inProjA']);
    assert.deepEqual(Object.keys(two.names), ['normWeight', 'inProjA']);
  });

  it('loadGdnLayer: A_log and norm.weight stored BF16 come back f32, the same values', () => {
    const dir = path.join(tmp.dir, 'bf16');
    writeSyntheticCheckpoint(dir, tiny, { layers: 1, vocab: 1, seed: 8, aLogDType: 'BF16' });
    const w = Qwen35Checkpoint.open(dir).loadGdnLayer(0, { only: ['ALog', 'normWeight', 'dtBias'] });
    const want = syntheticGdnLayer(tiny, { seed: 8, aLogDType: 'BF16' });
    for (const key of ['ALog', 'normWeight'] as const) {
      assert.equal(w.storedDTypes[key], 'BF16');
      assert.equal(w[key]!.dtype, 'f32');
      assert.deepEqual(bits(w[key]!), bits(want[key]!), key);
    }
    assert.equal(w.dtBias!.dtype, 'bf16');
  });

  it('conv1d may be stored [C, K]', () => {
    const name = 'model.layers.0.linear_attn.conv1d.weight';
    const stored = SafetensorsCheckpoint.open(flat).readRaw(name);
    const w = Qwen35Checkpoint.open(replaced(name, { ...stored, shape: [10, 3] })).loadGdnLayer(0, { only: ['conv1d'] });
    assert.deepEqual(w.conv1d!.shape, [10, 3]);
    assert.deepEqual([...new Uint8Array(w.conv1d!.bits().buffer)], [...stored.bytes]);
  });

  it('shapes and dtypes are checked against the config before any data is read', () => {
    const b = 'model.layers.0.linear_attn.in_proj_b.weight';
    const shape = (name: string, s: number[], dtype = 'BF16') => replaced(name, { dtype: dtype as 'BF16', shape: s, bytes: u8((s.reduce((x, y) => x * y, 1) * (dtype === 'F32' ? 4 : 2))) });
    const cases: [string, GdnTensorKey, string][] = [
      [shape(b, [3, 7]), 'inProjB', `${b} has shape [3,7], config.json implies [3,8]`],
      [shape(b, [8, 3]), 'inProjB', `${b} has shape [8,3], config.json implies [3,8]`],
      [shape(b, [3, 8, 1]), 'inProjB', `${b} has shape [3,8,1], config.json implies [3,8]`],
      [shape(b, [3]), 'inProjB', `${b} has shape [3], config.json implies [3,8]`],
      [shape('model.layers.0.linear_attn.conv1d.weight', [10, 3, 1]), 'conv1d', 'model.layers.0.linear_attn.conv1d.weight has shape [10,3,1], config.json implies [10,1,3]'],
      [shape('model.layers.0.linear_attn.conv1d.weight', [10, 1]), 'conv1d', 'model.layers.0.linear_attn.conv1d.weight has shape [10,1], config.json implies [10,1,3]'],
      [replaced(b, { dtype: 'F16', shape: [3, 8], bytes: u8(48) }), 'inProjB', `${b} has dtype F16, expected BF16 or F32`],
      [replaced('model.layers.0.linear_attn.A_log', { dtype: 'F16', shape: [3], bytes: u8(6) }), 'ALog', 'model.layers.0.linear_attn.A_log has dtype F16, expected F32 or BF16'],
    ];
    for (const [dir, key, message] of cases) {
      const io = new IoCounter();
      const c = Qwen35Checkpoint.open(dir, { io });
      // The faulty tensor last: nothing of the first two is read either.
      assert.throws(() => c.loadGdnLayer(0, { only: ['dtBias', 'outProj', key] }), { name: 'Error', message: `${path.join(dir, 'model.safetensors')}: ${message}` });
      assert.equal(io.total('data'), 0, message);
    }
    // F32 projections are accepted as they are.
    const f32 = Qwen35Checkpoint.open(shape(b, [3, 8], 'F32')).loadGdnLayer(0, { only: ['inProjB'] });
    assert.deepEqual([f32.inProjB!.dtype, f32.storedDTypes.inProjB], ['f32', 'F32']);
  });

  it('embedTokens: the rows asked for, only those read; ids checked first; the table\'s shape checked', () => {
    const io = new IoCounter();
    const c = Qwen35Checkpoint.open(flat, { io });
    const table = c.tensors.read('model.embed_tokens.weight');
    const rows = c.embedTokens(new Int32Array([5, 0, 5]));
    assert.deepEqual(rows.shape, [3, 8]);
    const row = (i: number) => bits(table).slice(8 * i, 8 * i + 8);
    assert.deepEqual(bits(rows), [...row(5), ...row(0), ...row(5)]);
    io.reset();
    for (const [ids, i, said] of [[[0, -1], 1, '-1'], [[6], 0, '6'], [[1, 2, 1.5], 2, '1.5'], [[NaN], 0, 'NaN']] as const) {
      assert.throws(() => c.embedTokens(ids), { name: 'RangeError', message: `ids[${i}]: expected a token id in 0..5, got ${said}` });
    }
    assert.equal(io.total('data'), 0);
    assert.deepEqual(c.embedTokens([]).shape, [0, 8]);
    const e = 'model.embed_tokens.weight';
    for (const [s, said] of [[[6, 7], '6,7'], [[48], '48'], [[6, 8, 1], '6,8,1']] as const) {
      const bad = Qwen35Checkpoint.open(replaced(e, { dtype: 'BF16', shape: [...s], bytes: u8(([...s] as number[]).reduce((x, y) => x * y, 1) * 2) }));
      assert.throws(() => bad.embedTokens([0]), { message: `${e}: shape [${said}], expected [vocab, 8]` });
    }
  });

  it('inputLayernormWeight: [hidden] as stored; another shape refused', () => {
    const c = Qwen35Checkpoint.open(nested);
    const w = c.inputLayernormWeight(3);
    assert.deepEqual([w.shape, w.dtype], [[8], 'bf16']);
    assert.deepEqual(bits(w), bits(c.tensors.read('model.language_model.layers.3.input_layernorm.weight')));
    const n = 'model.layers.0.input_layernorm.weight';
    for (const [s, said] of [[[7], '7'], [[8, 1], '8,1'], [[1, 8], '1,8']] as const) {
      const bad = Qwen35Checkpoint.open(replaced(n, { dtype: 'BF16', shape: [...s], bytes: u8(([...s] as number[]).reduce((x, y) => x * y, 1) * 2) }));
      assert.throws(() => bad.inputLayernormWeight(0), { message: `${n}: shape [${said}], expected [8]` });
    }
  });

  it('a hub cache entry opened by name and revision', () => {
    const hub = path.join(tmp.dir, 'hub');
    const entry = path.join(hub, 'models--Qwen--Tiny');
    for (const rev of ['r1', 'r2']) {
      fs.mkdirSync(path.join(entry, 'snapshots', rev), { recursive: true });
      for (const f of fs.readdirSync(ten)) fs.copyFileSync(path.join(ten, f), path.join(entry, 'snapshots', rev, f));
    }
    fs.copyFileSync(path.join(flat, 'config.json'), path.join(entry, 'snapshots', 'r2', 'config.json'));
    fs.rmSync(path.join(entry, 'snapshots', 'r2', 'model.safetensors.index.json'));
    fs.renameSync(path.join(entry, 'snapshots', 'r2', 'model-00001-of-00001.safetensors'), path.join(entry, 'snapshots', 'r2', 'model.safetensors'));
    const r1 = Qwen35Checkpoint.open(hub, { name: 'Qwen/Tiny', revision: 'r1' });
    assert.deepEqual([r1.dir, r1.config.numLayers], [path.join(entry, 'snapshots', 'r1'), 10]);
    const r2 = Qwen35Checkpoint.open(hub, { name: 'Tiny', revision: 'r2' });
    assert.deepEqual([r2.dir, r2.config.numLayers, r2.tensors.indexPath], [path.join(entry, 'snapshots', 'r2'), 1, undefined]);
  });
});
