// Qwen3.5 config.json and checkpoint directories at their edges: every field's check and default (in
// the order they are listed as defaulted), nested and flat configs and their model_type, layer types
// from the list, from full_attention_interval and by default, the tensor spec, every way a directory
// is resolved or refused (cache entries, refs, snapshots, names), and the presets by each spelling.

import { strict as assert } from 'assert';
import * as fs from 'fs';
import * as path from 'path';
import { QWEN35_PRESETS, defaultLayerTypes, gdnTensorSpec, parseQwen35Config, qwen35Preset, readQwen35Config, resolveCheckpointDir } from '../../lib/model/qwen35-config';
import { tempDir } from './helpers';

const base = { hidden_size: 8, num_hidden_layers: 4, linear_conv_kernel_dim: 3, linear_num_key_heads: 2, linear_num_value_heads: 4, linear_key_head_dim: 5, linear_value_head_dim: 6, rms_norm_eps: 1e-5 };
const refused = (json: unknown, message: string) => assert.throws(() => parseQwen35Config(json, 'cfg'), { message });

describe('Qwen3.5 config: edges', () => {
  it('a flat config: every field read, C = 2·Hk·Dk + Hv·Dv, nothing defaulted', () => {
    const c = parseQwen35Config({ ...base, vocab_size: 100, model_type: 'qwen3_5_text' }, 'cfg');
    assert.deepEqual(
      [c.file, c.modelType, c.nested, c.hidden, c.numLayers, c.K, c.Hk, c.Hv, c.Dk, c.Dv, c.C, c.eps, c.vocab, c.defaulted, c.layerTypesFrom],
      ['cfg', 'qwen3_5_text', false, 8, 4, 3, 2, 4, 5, 6, 2 * 2 * 5 + 4 * 6, 1e-5, 100, [], 'default interval 4'],
    );
    assert.deepEqual(c.layerTypes, ['linear_attention', 'linear_attention', 'linear_attention', 'full_attention']);
    assert.equal(c.raw.hidden_size, 8);
  });

  it('defaults: Hugging Face\'s values, each absent (or null) field listed in order', () => {
    const c = parseQwen35Config({ hidden_size: 8, num_hidden_layers: 1, linear_num_key_heads: null }, 'cfg');
    assert.deepEqual([c.K, c.Hk, c.Hv, c.Dk, c.Dv, c.eps, c.vocab], [4, 16, 32, 128, 128, 1e-6, undefined]);
    assert.deepEqual(c.defaulted, ['linear_conv_kernel_dim', 'linear_num_key_heads', 'linear_num_value_heads', 'linear_key_head_dim', 'linear_value_head_dim', 'rms_norm_eps']);
    assert.equal(c.modelType, 'unknown');
    assert.equal(parseQwen35Config({ ...base, model_type: 5 }, 'cfg').modelType, '5');
  });

  it('nested in text_config: fields read there, named text_config.* in messages; model_type inside or the default', () => {
    const c = parseQwen35Config({ model_type: 'qwen3_5', text_config: base }, 'cfg');
    assert.deepEqual([c.nested, c.modelType, c.hidden, c.raw], [true, 'qwen3_5_text', 8, base]);
    assert.equal(parseQwen35Config({ model_type: 'x', text_config: { ...base, model_type: 'qwen3_5_moe_text' } }, 'cfg').modelType, 'qwen3_5_moe_text');
    refused({ text_config: { ...base, hidden_size: 0 } }, 'cfg: text_config.hidden_size must be an integer >= 1, got 0');
    refused({ text_config: [], ...base, hidden_size: undefined }, 'cfg: hidden_size is missing');
  });

  it('refuses what is not an object, missing sizes, sizes that are not integers ≥ 1', () => {
    refused(null, 'cfg: expected a JSON object, got null');
    refused([1], 'cfg: expected a JSON object, got [1]');
    refused('x', "cfg: expected a JSON object, got 'x'");
    refused({ ...base, hidden_size: undefined }, 'cfg: hidden_size is missing');
    refused({ ...base, num_hidden_layers: null }, 'cfg: num_hidden_layers is missing');
    for (const [v, said] of [[0, '0'], [-1, '-1'], [2.5, '2.5'], ['8', "'8'"], [2 ** 53, String(2 ** 53)], [true, 'true']] as const) {
      refused({ ...base, linear_key_head_dim: v }, `cfg: linear_key_head_dim must be an integer >= 1, got ${said}`);
    }
    assert.equal(parseQwen35Config({ ...base, linear_key_head_dim: 1 }, 'cfg').Dk, 1);
    refused({ ...base, linear_num_value_heads: 3 }, 'cfg: linear_num_value_heads (3) must be a multiple of linear_num_key_heads (2) for grouped heads');
    refused({ ...base, vocab_size: 0 }, 'cfg: vocab_size must be an integer >= 1, got 0');
  });

  it('rms_norm_eps: a positive finite number', () => {
    for (const [v, said] of [[0, '0'], [-1e-6, '-0.000001'], [Infinity, 'Infinity'], [NaN, 'NaN'], ['1e-6', "'1e-6'"], [null, 'null']] as const) {
      refused({ ...base, rms_norm_eps: v }, `cfg: rms_norm_eps must be a positive number, got ${said}`);
    }
    assert.equal(parseQwen35Config({ ...base, rms_norm_eps: 1e-300 }, 'cfg').eps, 1e-300);
  });

  it('layer types: the list as given, checked; else every interval-th layer full attention', () => {
    const lt = ['full_attention', 'linear_attention', 'linear_attention', 'full_attention'];
    const c = parseQwen35Config({ ...base, layer_types: lt, full_attention_interval: 2 }, 'cfg');
    assert.deepEqual([c.layerTypes, c.layerTypesFrom], [lt, 'layer_types']);
    refused({ ...base, layer_types: lt.slice(1) }, "cfg: layer_types must be an array of 4 layer types (num_hidden_layers), got ['linear_attention', 'linear_attention', 'full_attention'] of length 3");
    refused({ ...base, layer_types: 'full' }, "cfg: layer_types must be an array of 4 layer types (num_hidden_layers), got 'full'");
    refused({ ...base, layer_types: [...lt.slice(0, 3), 'attention'] }, "cfg: layer_types[3] must be 'linear_attention' or 'full_attention', got 'attention'");
    const i2 = parseQwen35Config({ ...base, layer_types: null, full_attention_interval: 2 }, 'cfg');
    assert.deepEqual([i2.layerTypes, i2.layerTypesFrom], [['linear_attention', 'full_attention', 'linear_attention', 'full_attention'], 'full_attention_interval']);
    const i1 = parseQwen35Config({ ...base, full_attention_interval: 1 }, 'cfg');
    assert.deepEqual(i1.layerTypes, ['full_attention', 'full_attention', 'full_attention', 'full_attention']);
    refused({ ...base, full_attention_interval: 0 }, 'cfg: full_attention_interval must be an integer >= 1, got 0');
    const d = parseQwen35Config({ ...base, num_hidden_layers: 8 }, 'cfg');
    assert.deepEqual(d.layerTypes.map((t, i) => (t === 'full_attention' ? i : -1)).filter((i) => i >= 0), [3, 7]);
    assert.deepEqual(defaultLayerTypes(8), d.layerTypes);
    assert.deepEqual(defaultLayerTypes(0), []);
  });

  it('gdnTensorSpec: each tensor\'s shapes and accepted dtypes', () => {
    const s = { hidden: 8, Hk: 2, Hv: 4, Dk: 5, Dv: 6, K: 3, C: 44, eps: 1e-6 };
    assert.deepEqual(gdnTensorSpec(s), {
      inProjQkv: { shapes: [[44, 8]], dtypes: ['BF16', 'F32'] },
      inProjZ: { shapes: [[24, 8]], dtypes: ['BF16', 'F32'] },
      inProjB: { shapes: [[4, 8]], dtypes: ['BF16', 'F32'] },
      inProjA: { shapes: [[4, 8]], dtypes: ['BF16', 'F32'] },
      conv1d: { shapes: [[44, 1, 3], [44, 3]], dtypes: ['BF16', 'F32'] },
      dtBias: { shapes: [[4]], dtypes: ['BF16', 'F32'] },
      ALog: { shapes: [[4]], dtypes: ['F32', 'BF16'] },
      normWeight: { shapes: [[6]], dtypes: ['F32', 'BF16'] },
      outProj: { shapes: [[8, 24]], dtypes: ['BF16', 'F32'] },
    });
  });

  it('presets by name, by the model name with or without Qwen/, or as objects; others refused', () => {
    const p = QWEN35_PRESETS['27B'];
    for (const name of ['27B', 'Qwen3.5-27B', 'Qwen/Qwen3.5-27B']) assert.equal(qwen35Preset(name), p);
    assert.equal(qwen35Preset(p), p);
    assert.deepEqual([p.C, p.Hv, p.hidden, p.numLayers], [2 * 16 * 128 + 48 * 128, 48, 5120, 64]);
    for (const bad of ['Qwen/27B', 'xQwen3.5-27B', '2Qwen3.5-7B', '27b', 'Qwen3.5-27B ']) {
      assert.throws(() => qwen35Preset(bad), { name: 'RangeError', message: `preset: expected one of 0.8B, 4B, 27B, 35B-A3B, 397B-A17B, got '${bad}'` });
    }
    assert.throws(() => qwen35Preset(null as never), { name: 'RangeError', message: /got null$/ });
  });

  describe('files and directories', () => {
    // eslint-disable-next-line @typescript-eslint/no-var-requires
    const realFs = require('fs') as { readdirSync: typeof fs.readdirSync };
    const { readdirSync } = realFs;
    afterEach(() => {
      realFs.readdirSync = readdirSync;
    });
    let tmp: ReturnType<typeof tempDir>;
    beforeEach(() => (tmp = tempDir('qwen35-dirs')));
    afterEach(() => tmp.cleanup());
    const mk = (...parts: string[]) => {
      const d = path.join(tmp.dir, ...parts);
      fs.mkdirSync(d, { recursive: true });
      return d;
    };
    const put = (file: string, text: string) => {
      fs.mkdirSync(path.dirname(file), { recursive: true });
      fs.writeFileSync(file, text);
    };
    const config = (dir: string) => put(path.join(dir, 'config.json'), JSON.stringify(base));

    it('readQwen35Config: the file read and parsed; a missing file and bad JSON named', () => {
      const d = mk('m');
      assert.throws(() => readQwen35Config(d), { message: new RegExp(`^${path.join(d, 'config.json')}: cannot read: ENOENT`) });
      put(path.join(d, 'config.json'), '{"hidden_size":');
      assert.throws(() => readQwen35Config(d), { message: new RegExp(`^${path.join(d, 'config.json')}: not valid JSON: `) });
      config(d);
      assert.deepEqual([readQwen35Config(d).file, readQwen35Config(d).hidden], [path.join(d, 'config.json'), 8]);
    });

    it('a directory with config.json is itself; a missing one and one that is none of the known layouts are refused', () => {
      const d = mk('plain');
      config(d);
      assert.equal(resolveCheckpointDir(d), d);
      const none = path.join(tmp.dir, 'none');
      assert.throws(() => resolveCheckpointDir(none), { message: `${none}: no such directory` });
      const empty = mk('empty');
      assert.throws(() => resolveCheckpointDir(empty), { message: `${empty}: no config.json, snapshots/ or models--Qwen--* entries: not a checkpoint directory` });
      const file = path.join(tmp.dir, 'a-file');
      put(file, 'x');
      assert.throws(() => resolveCheckpointDir(file), { message: `${file}: no config.json, snapshots/ or models--Qwen--* entries: not a checkpoint directory` });
    });

    it('a hub cache: the entry a name picks (with or without its organisation), else a list of what is there', () => {
      const hub = mk('hub');
      const snap = mk('hub', 'models--Qwen--Qwen3.5-4B', 'snapshots', 'abc');
      config(snap);
      mk('hub', 'models--Qwen--Qwen3.5-27B', 'snapshots');
      mk('hub', 'models--Other--M', 'snapshots', 'r1');
      mk('hub', 'bak-models--Qwen--Old');
      put(path.join(hub, 'version.txt'), '1');
      config(path.join(hub, 'models--Other--M', 'snapshots', 'r1'));
      assert.equal(resolveCheckpointDir(hub, { name: 'Qwen3.5-4B' }), snap);
      assert.equal(resolveCheckpointDir(hub, { name: 'Qwen/Qwen3.5-4B' }), snap);
      assert.equal(resolveCheckpointDir(hub, { name: 'Other/M' }), path.join(hub, 'models--Other--M', 'snapshots', 'r1'));
      assert.throws(() => resolveCheckpointDir(hub), { message: `${hub}: a hub cache; pass { name } to pick one of Qwen3.5-27B, Qwen3.5-4B` });
      // The revision asked for is passed on to the entry.
      config(mk('hub', 'models--Qwen--Qwen3.5-4B', 'snapshots', 'def'));
      assert.equal(resolveCheckpointDir(hub, { name: 'Qwen3.5-4B', revision: 'def' }), path.join(hub, 'models--Qwen--Qwen3.5-4B', 'snapshots', 'def'));
      fs.rmSync(path.join(hub, 'models--Qwen--Qwen3.5-4B', 'snapshots', 'def'), { recursive: true });
      assert.throws(() => resolveCheckpointDir(hub, { name: 'Qwen3.5-9B' }), { message: `${hub}: no cache entry models--Qwen--Qwen3.5-9B (found models--Other--M, models--Qwen--Qwen3.5-27B, models--Qwen--Qwen3.5-4B)` });
      const bare = mk('bare');
      assert.throws(() => resolveCheckpointDir(bare, { name: 'Qwen3.5-9B' }), { message: `${bare}: no cache entry models--Qwen--Qwen3.5-9B` });
      for (let k = 0; k < 7; k++) mk('many', `models--Qwen--m${k}`);
      assert.throws(() => resolveCheckpointDir(path.join(tmp.dir, 'many'), { name: 'x' }), { message: /\(found models--Qwen--m0, models--Qwen--m1, models--Qwen--m2, models--Qwen--m3, models--Qwen--m4, models--Qwen--m5\)$/ });
      // With a name, even a directory holding config.json is searched as a cache.
      config(hub);
      assert.equal(resolveCheckpointDir(hub, { name: 'Qwen3.5-4B' }), snap);
    });

    it('names that could leave the cache are refused', () => {
      const hub = mk('hub');
      // Dots inside or at either end of a name are fine; only '.' and '..' themselves are refused.
      for (const name of ['Qwen3.5-4B.', '.hidden', 'Qwen/a..', 'a./b', '.a/b', 'Qwen/...']) {
        const slash = name.indexOf('/');
        const entry = slash >= 0 ? `models--${name.slice(0, slash)}--${name.slice(slash + 1)}` : `models--Qwen--${name}`;
        assert.throws(() => resolveCheckpointDir(hub, { name }), { message: `${hub}: no cache entry ${entry}` }, name);
      }
      for (const name of ['/x', 'a/', './x', 'Qwen/..', 'Qwen/.', '../Qwen3.5-4B', 'a\\b', '..', '.', 'Qwen/a\\b', 'x/y/z', 'Qwen/Qwen3.5-4B/x']) {
        assert.throws(() => resolveCheckpointDir(hub, { name }), { message: `name: expected 'Qwen3.5-27B' or 'Qwen/Qwen3.5-27B', got '${name}'` }, name);
      }
    });

    it('snapshots: the revision asked for (a snapshot or a ref), else refs/main, else the only one', () => {
      const entry = mk('e');
      for (const s of ['s1', 's2', 'main']) config(mk('e', 'snapshots', s));
      put(path.join(entry, 'refs', 'main'), 's1\n');
      put(path.join(entry, 'refs', 'pr'), 's2\n');
      assert.equal(resolveCheckpointDir(entry), path.join(entry, 'snapshots', 's1'));
      assert.equal(resolveCheckpointDir(entry, { revision: 's2' }), path.join(entry, 'snapshots', 's2'));
      assert.equal(resolveCheckpointDir(entry, { revision: 'pr' }), path.join(entry, 'snapshots', 's2'));
      // A revision that is both a ref and a snapshot is the snapshot.
      assert.equal(resolveCheckpointDir(entry, { revision: 'main' }), path.join(entry, 'snapshots', 'main'));
      assert.throws(() => resolveCheckpointDir(entry, { revision: 's9' }), { message: `${entry}: snapshot s9 (from the revision asked for) is not in snapshots/` });
      put(path.join(entry, 'refs', 'main'), 'gone');
      assert.throws(() => resolveCheckpointDir(entry), { message: `${entry}: snapshot gone (from refs/main) is not in snapshots/` });
      for (const bad of ['', '..', '.', 'a/b']) {
        put(path.join(entry, 'refs', 'main'), bad);
        assert.throws(() => resolveCheckpointDir(entry), { message: `${entry}: revision '${bad}' is not a snapshot name` }, bad);
      }
      assert.throws(() => resolveCheckpointDir(entry, { revision: 'x\\y' }), { message: `${entry}: revision 'x\\y' is not a snapshot name` });
      for (const ok of ['v1.', '.v1', '...']) {
        config(mk('e', 'snapshots', ok));
        put(path.join(entry, 'refs', 'main'), ok);
        assert.equal(resolveCheckpointDir(entry), path.join(entry, 'snapshots', ok), ok);
      }
    });

    it('directory listings are sorted, whatever order the file system gives', () => {
      const hub = mk('hub');
      for (const n of ['models--Qwen--b', 'models--Qwen--a', 'models--Qwen--c']) mk('hub', n);
      const many = mk('many');
      for (const n of ['r2', 'r0', 'r1']) mk('many', 'snapshots', n);
      realFs.readdirSync = ((p: fs.PathLike) => (readdirSync(p) as string[]).slice().sort().reverse()) as typeof fs.readdirSync;
      assert.throws(() => resolveCheckpointDir(hub), { message: `${hub}: a hub cache; pass { name } to pick one of a, b, c` });
      assert.throws(() => resolveCheckpointDir(hub, { name: 'x' }), { message: `${hub}: no cache entry models--Qwen--x (found models--Qwen--a, models--Qwen--b, models--Qwen--c)` });
      assert.throws(() => resolveCheckpointDir(many), { message: `${path.join(many, 'snapshots')}: 3 snapshots (r0, r1, r2) and no refs/main; pass { revision }` });
    });

    it('snapshots without refs/main: exactly one is taken, none or several are refused; a snapshot needs config.json', () => {
      const one = mk('one');
      config(mk('one', 'snapshots', 'only'));
      assert.equal(resolveCheckpointDir(one), path.join(one, 'snapshots', 'only'));
      const zero = mk('zero', 'snapshots');
      assert.throws(() => resolveCheckpointDir(path.join(tmp.dir, 'zero')), { message: `${zero}: 0 snapshots () and no refs/main; pass { revision }` });
      const many = mk('many');
      for (let k = 7; k >= 0; k--) mk('many', 'snapshots', `r${k}`);
      assert.throws(() => resolveCheckpointDir(many), { message: `${path.join(many, 'snapshots')}: 8 snapshots (r0, r1, r2, r3, r4, r5) and no refs/main; pass { revision }` });
      // snapshots/ that cannot be listed (a file) holds no snapshot.
      put(path.join(tmp.dir, 'filesnap', 'snapshots'), 'x');
      assert.throws(() => resolveCheckpointDir(path.join(tmp.dir, 'filesnap')), { message: `${path.join(tmp.dir, 'filesnap', 'snapshots')}: 0 snapshots () and no refs/main; pass { revision }` });
      mk('noconf', 'snapshots', 'r');
      assert.throws(() => resolveCheckpointDir(path.join(tmp.dir, 'noconf')), { message: `${path.join(tmp.dir, 'noconf', 'snapshots', 'r')}: snapshot has no config.json` });
      assert.throws(() => resolveCheckpointDir(path.join(tmp.dir, 'noconf'), { revision: 'r' }), { message: /snapshot has no config\.json$/ });
    });
  });
});
