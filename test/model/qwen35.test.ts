// Qwen3.5 checkpoints: config parsing (nested, flat, layer types), cache layouts, presets, loading a
// GDN layer, and — on a synthetic Qwen3.5-27B-shaped checkpoint at real size — proof by I/O
// accounting that loading one GDN layer reads only that layer's bytes.

import { strict as assert } from 'assert';
import * as crypto from 'crypto';
import * as fs from 'fs';
import * as path from 'path';
import { IoCounter, writeSafetensors } from '../../lib/model/safetensors';
import {
  GDN_TENSOR_KEYS, QWEN35_PRESETS, Qwen35Checkpoint, parseQwen35Config, qwen35Preset, resolveCheckpointDir, syntheticGdnLayer, writeSyntheticCheckpoint,
} from '../../lib/model/qwen35';
import { Tensor } from '../../lib/tensor';
import { FIXTURE_DIR, tempDir } from './helpers';

const sha = (t: Tensor) => {
  const b = t.bits();
  return crypto.createHash('sha256').update(new Uint8Array(b.buffer, b.byteOffset, b.byteLength)).digest('hex');
};

describe('Qwen3.5 config.json', () => {
  const flat = { model_type: 'qwen3_5_text', hidden_size: 64, num_hidden_layers: 6, linear_conv_kernel_dim: 4, linear_num_key_heads: 2, linear_num_value_heads: 4, linear_key_head_dim: 16, linear_value_head_dim: 16, rms_norm_eps: 1e-5 };

  it('reads a nested official config (the fixture made by transformers)', () => {
    const ckpt = Qwen35Checkpoint.open(path.join(FIXTURE_DIR(), 'checkpoint'));
    const c = ckpt.config;
    assert.equal(c.nested, true);
    assert.equal(c.modelType, 'qwen3_5_text');
    assert.deepEqual([c.hidden, c.Hk, c.Hv, c.Dk, c.Dv, c.K, c.C, c.eps], [64, 2, 4, 128, 128, 4, 1024, 1e-6]);
    assert.deepEqual(c.layerTypes, ['linear_attention', 'linear_attention', 'linear_attention', 'full_attention']);
    assert.equal(c.layerTypesFrom, 'layer_types');
    assert.deepEqual(c.defaulted, []);
    assert.equal(ckpt.prefix, 'model.language_model.');
    assert.deepEqual(ckpt.gdnLayers(), [0, 1, 2]);
    assert.ok(ckpt.textTensorNames().every((n) => n.startsWith('model.language_model.')));
    assert.ok(ckpt.tensors.names().some((n) => n.startsWith('model.visual.')), 'the fixture holds vision tensors that must be ignored');
    assert.ok(!ckpt.textTensorNames().some((n) => n.startsWith('model.visual.')));
  });

  it('reads flat configs, full_attention_interval and the default interval of 4', () => {
    const c = parseQwen35Config(flat, 'flat.json');
    assert.equal(c.nested, false);
    assert.equal(c.C, 2 * 2 * 16 + 4 * 16);
    assert.equal(c.layerTypesFrom, 'default interval 4');
    assert.deepEqual(c.layerTypes.map((t) => t[0]), ['l', 'l', 'l', 'f', 'l', 'l']);
    const c3 = parseQwen35Config({ ...flat, full_attention_interval: 3 }, 'i3.json');
    assert.equal(c3.layerTypesFrom, 'full_attention_interval');
    assert.deepEqual(c3.layerTypes.map((t) => t[0]), ['l', 'l', 'f', 'l', 'l', 'f']);
    const explicit = ['full_attention', 'linear_attention', 'linear_attention', 'linear_attention', 'full_attention', 'linear_attention'];
    assert.deepEqual(parseQwen35Config({ text_config: { ...flat, layer_types: explicit }, model_type: 'qwen3_5' }, 'n.json').layerTypes, explicit);
  });

  it('lists the fields that took Hugging Face defaults', () => {
    const c = parseQwen35Config({ hidden_size: 32, num_hidden_layers: 4 }, 'min.json');
    assert.deepEqual(c.defaulted.sort(), ['linear_conv_kernel_dim', 'linear_key_head_dim', 'linear_num_key_heads', 'linear_num_value_heads', 'linear_value_head_dim', 'rms_norm_eps']);
    assert.deepEqual([c.K, c.Hk, c.Hv, c.Dk, c.Dv, c.eps], [4, 16, 32, 128, 128, 1e-6]);
  });

  it('rejects bad configs naming the file and field', () => {
    assert.throws(() => parseQwen35Config({ num_hidden_layers: 4 }, 'a.json'), /a.json: hidden_size is missing/);
    assert.throws(() => parseQwen35Config({ text_config: { ...flat, hidden_size: 0 } }, 'b.json'), /b.json: text_config.hidden_size must be an integer >= 1, got 0/);
    assert.throws(() => parseQwen35Config({ ...flat, layer_types: ['linear_attention'] }, 'c.json'), /layer_types must be an array of 6/);
    assert.throws(() => parseQwen35Config({ ...flat, layer_types: Array(6).fill('mamba') }, 'd.json'), /layer_types\[0\] must be/);
    assert.throws(() => parseQwen35Config({ ...flat, linear_num_value_heads: 3 }, 'e.json'), /multiple of linear_num_key_heads/);
    assert.throws(() => parseQwen35Config({ ...flat, rms_norm_eps: -1 }, 'f.json'), /rms_norm_eps must be a positive number/);
    assert.throws(() => parseQwen35Config([1], 'g.json'), /g.json: expected a JSON object/);
  });
});

describe('Qwen3.5 presets', function () {
  this.timeout(60_000);
  it('carry the published shapes (docs/DOMAIN.md §1)', () => {
    const table = Object.values(QWEN35_PRESETS).map((p) => [p.name, p.hidden, p.Hk, p.Hv, p.Dk, p.K, p.C]);
    assert.deepEqual(table, [
      ['0.8B', 1024, 16, 16, 128, 4, 6144],
      ['4B', 2560, 16, 32, 128, 4, 8192],
      ['27B', 5120, 16, 48, 128, 4, 10240],
      ['35B-A3B', 2048, 16, 32, 128, 4, 8192],
      ['397B-A17B', 4096, 16, 64, 128, 4, 12288],
    ]);
    const gdn = Object.values(QWEN35_PRESETS).map((p) => Array.from({ length: p.numLayers }, (_, i) => (i + 1) % 4 !== 0).filter(Boolean).length);
    assert.deepEqual(gdn, [18, 24, 48, 30, 45]);
    assert.equal(qwen35Preset('Qwen3.5-27B'), QWEN35_PRESETS['27B']);
    assert.throws(() => qwen35Preset('9B'), /preset: expected one of/);
  });

  it('synthetic layers have the real shapes and dtypes, and are reproducible', () => {
    const w = syntheticGdnLayer('0.8B', { seed: 1, only: ['inProjB', 'conv1d', 'ALog', 'normWeight', 'dtBias'] });
    assert.deepEqual(w.inProjB!.shape, [16, 1024]);
    assert.equal(w.inProjB!.dtype, 'bf16');
    assert.deepEqual(w.conv1d!.shape, [6144, 4]);
    assert.equal(w.ALog!.dtype, 'f32');
    assert.equal(w.normWeight!.dtype, 'f32');
    const a = Array.from(w.ALog!.toFloat32());
    assert.ok(a.every((v) => v >= 0 && v < Math.log(16)), 'A_log = log(U(1, 16))');
    assert.equal(sha(w.conv1d!), sha(syntheticGdnLayer('0.8B', { seed: 1, only: ['conv1d'] }).conv1d!));
    assert.notEqual(sha(w.conv1d!), sha(syntheticGdnLayer('0.8B', { seed: 2, only: ['conv1d'] }).conv1d!));
    const bf = syntheticGdnLayer('0.8B', { seed: 1, only: ['ALog'], aLogDType: 'BF16' });
    assert.equal(bf.storedDTypes.ALog, 'BF16');
    assert.equal(bf.ALog!.dtype, 'f32');
  });
});

describe('Qwen3.5 checkpoint directories', function () {
  this.timeout(60_000);
  let tmp: ReturnType<typeof tempDir>;
  before(() => (tmp = tempDir('qwen-dirs')));
  after(() => tmp.cleanup());

  /** A hub cache entry like huggingface_hub makes: blobs, snapshot files as symlinks, refs/main. */
  function makeCacheEntry(root: string, name: string, revisions: string[], main?: string): string {
    const entry = path.join(root, `models--Qwen--${name}`);
    const src = path.join(tmp.dir, `src-${name}`);
    writeSyntheticCheckpoint(src, '0.8B', { layers: 1, vocab: 8 });
    fs.mkdirSync(path.join(entry, 'blobs'), { recursive: true });
    for (const rev of revisions) {
      const snap = path.join(entry, 'snapshots', rev);
      fs.mkdirSync(snap, { recursive: true });
      for (const f of fs.readdirSync(src)) {
        const blob = path.join(entry, 'blobs', `${rev}-${f}`);
        fs.copyFileSync(path.join(src, f), blob);
        fs.symlinkSync(path.relative(snap, blob), path.join(snap, f));
      }
    }
    if (main) {
      fs.mkdirSync(path.join(entry, 'refs'), { recursive: true });
      fs.writeFileSync(path.join(entry, 'refs', 'main'), main);
    }
    return entry;
  }

  it('resolves a cache entry through refs/main, a single snapshot, or a hub root with a name', () => {
    const hub = path.join(tmp.dir, 'hub');
    const two = makeCacheEntry(hub, 'Qwen3.5-0.8B', ['aaaa', 'bbbb'], 'bbbb\n');
    assert.equal(resolveCheckpointDir(two), path.join(two, 'snapshots', 'bbbb'));
    assert.equal(resolveCheckpointDir(two, { revision: 'aaaa' }), path.join(two, 'snapshots', 'aaaa'));
    const ckpt = Qwen35Checkpoint.open(hub, { name: 'Qwen/Qwen3.5-0.8B' });
    assert.equal(ckpt.dir, path.join(two, 'snapshots', 'bbbb'));
    assert.deepEqual(ckpt.gdnLayers(), [0]);
    const one = makeCacheEntry(path.join(tmp.dir, 'hub1'), 'Solo', ['cccc']);
    assert.equal(resolveCheckpointDir(one), path.join(one, 'snapshots', 'cccc'));
  });

  it('refuses to guess: several snapshots without refs/main, a hub root without a name, a bad ref', () => {
    const many = makeCacheEntry(path.join(tmp.dir, 'hub2'), 'Many', ['r1', 'r2']);
    assert.throws(() => resolveCheckpointDir(many), /2 snapshots \(r1, r2\) and no refs\/main/);
    assert.throws(() => resolveCheckpointDir(path.join(tmp.dir, 'hub2')), /a hub cache; pass \{ name \} to pick one of Many/);
    assert.throws(() => resolveCheckpointDir(path.join(tmp.dir, 'hub2'), { name: 'Other' }), /no cache entry models--Qwen--Other/);
    fs.mkdirSync(path.join(many, 'refs'));
    fs.writeFileSync(path.join(many, 'refs', 'main'), '../../../etc');
    assert.throws(() => resolveCheckpointDir(many), /is not a snapshot name/);
    assert.throws(() => resolveCheckpointDir(path.join(tmp.dir, 'nothing-here')), /no such directory/);
  });

  it('opens flat checkpoints (model.layers.N.*) with the same tensors as nested ones', () => {
    const nested = path.join(tmp.dir, 'nested');
    const flat = path.join(tmp.dir, 'flat');
    writeSyntheticCheckpoint(nested, '0.8B', { layers: 1, vocab: 16, seed: 3 });
    writeSyntheticCheckpoint(flat, '0.8B', { layers: 1, vocab: 16, seed: 3, layout: 'flat' });
    const a = Qwen35Checkpoint.open(nested);
    const b = Qwen35Checkpoint.open(flat);
    assert.equal(b.prefix, 'model.');
    assert.equal(b.config.nested, false);
    assert.equal(b.gdnTensorName(0, 'conv1d'), 'model.layers.0.linear_attn.conv1d.weight');
    const wa = a.loadGdnLayer(0, { only: ['conv1d', 'dtBias'] });
    const wb = b.loadGdnLayer(0, { only: ['conv1d', 'dtBias'] });
    assert.equal(sha(wa.conv1d!), sha(wb.conv1d!));
    assert.equal(sha(a.embedTokens([3, 1])), sha(b.embedTokens([3, 1])));
  });

  it('checks layer indices, layer types, shapes and dtypes before reading data', () => {
    const dir = path.join(tmp.dir, 'checks');
    writeSyntheticCheckpoint(dir, '0.8B', { layers: 4, vocab: 8 });
    const ckpt = Qwen35Checkpoint.open(dir);
    assert.throws(() => ckpt.loadGdnLayer(3), /layer 3 is a full_attention layer, not GDN/);
    assert.throws(() => ckpt.loadGdnLayer(4), /layer: expected an integer in 0..3/);
    assert.throws(() => ckpt.embedTokens([8]), /ids\[0\]: expected a token id in 0..7/);
    // A config that disagrees with the weights is caught by shape.
    const cfgPath = path.join(dir, 'config.json');
    const cfg = JSON.parse(fs.readFileSync(cfgPath, 'utf8'));
    cfg.text_config.linear_num_value_heads = 32;
    fs.writeFileSync(cfgPath, JSON.stringify(cfg));
    assert.throws(() => Qwen35Checkpoint.open(dir).loadGdnLayer(0), /in_proj_qkv.weight has shape \[6144,1024\], config.json implies \[8192,1024\]/);
    // A quantised (F8) weight is refused with its dtype named.
    const q = path.join(tmp.dir, 'fp8');
    fs.mkdirSync(q);
    fs.copyFileSync(path.join(dir, 'config.json'), path.join(q, 'config.json'));
    cfg.text_config.linear_num_value_heads = 16;
    fs.writeFileSync(path.join(q, 'config.json'), JSON.stringify(cfg));
    writeSafetensors(path.join(q, 'model.safetensors'), [
      ['model.language_model.layers.0.linear_attn.in_proj_a.weight', { dtype: 'F8_E4M3', shape: [16, 1024], bytes: new Uint8Array(16 * 1024) }],
    ]);
    assert.throws(() => Qwen35Checkpoint.open(q).loadGdnLayer(0, { only: ['inProjA'] }), /in_proj_a.weight has dtype F8_E4M3, expected BF16 or F32/);
  });
});

describe('Qwen3.5-27B-shaped synthetic checkpoint (real size)', function () {
  this.timeout(300_000);
  let tmp: ReturnType<typeof tempDir>;
  before(() => (tmp = tempDir('qwen27b')));
  after(() => tmp.cleanup());

  it('opens, and loading one GDN layer reads exactly that layer\'s bytes plus the headers', () => {
    const dir = path.join(tmp.dir, 'Qwen3.5-27B-synthetic');
    const seed = 27;
    const written = writeSyntheticCheckpoint(dir, '27B', { layers: 2, shards: 3, seed });
    assert.ok(written.totalSize > 2 * 230e6, `two real-size GDN layers are > 460 MB, wrote ${written.totalSize}`);
    const io = new IoCounter();
    const ckpt = Qwen35Checkpoint.open(dir, { io });
    assert.deepEqual(ckpt.layers(), [{ index: 0, type: 'linear_attention' }, { index: 1, type: 'linear_attention' }]);
    assert.deepEqual(ckpt.shapes, { hidden: 5120, Hk: 16, Hv: 48, Dk: 128, Dv: 128, K: 4, C: 10240, eps: 1e-6 });
    assert.equal(ckpt.tensors.files.size, 3);
    const headers = ckpt.tensors.headerBytes();
    assert.equal(io.total(), headers, 'opening reads the headers and nothing else');

    const layer = 1;
    const entries = ckpt.gdnEntries(layer);
    const layerBytes = Object.values(entries).reduce((s, e) => s + e.byteLength, 0);
    assert.equal(layerBytes, (10240 * 5120 + 6144 * 5120 * 2 + 48 * 5120 * 2 + 10240 * 4 + 48) * 2 + (48 + 128) * 4);
    const w = ckpt.loadGdnLayer(layer);
    assert.equal(io.total('data'), layerBytes, 'data bytes read = the layer\'s tensor sizes');
    assert.equal(io.total(), headers + layerBytes, 'total bytes read = headers + that layer');
    // Per file: only the shards holding layer 1's tensors were read past their headers.
    const perFile = new Map<string, number>();
    for (const e of Object.values(entries)) {
      const file = [...ckpt.tensors.files.values()].find((f) => f.has(e.name))!.path;
      perFile.set(file, (perFile.get(file) ?? 0) + e.byteLength);
    }
    for (const [file, rec] of io.files) assert.equal(rec.dataBytes, perFile.get(file) ?? 0, file);

    // The bytes are the synthetic layer's, tensor by tensor.
    assert.deepEqual(w.conv1d!.shape, [10240, 4]);
    assert.equal(w.storedDTypes.ALog, 'F32');
    for (const key of GDN_TENSOR_KEYS) {
      const expected = syntheticGdnLayer('27B', { seed, layer, only: [key] })[key]!;
      assert.equal(sha(w[key]!), sha(expected), key);
    }
  });
});
