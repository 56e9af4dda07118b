// The safetensors reader's lengths and offsets and the Qwen3.5 loader's shapes and indices at their edges
// (docs/TESTING.md, "Every bound at its edge"): each at exactly its last valid value, which is accepted,
// and one past, which is refused with the documented fault naming what is wrong. The malformed corpus
// (safetensors-malformed.test.ts) reaches these bounds from far away (a header length 1000 bytes past
// the end); a bound that forgets the 8-byte length prefix, or is off by one byte, passes it.

import { strict as assert } from 'assert';
import * as fs from 'fs';
import * as path from 'path';
import { MAX_HEADER_BYTES, SafetensorsError, SafetensorsFault, SafetensorsFile, writeSafetensors } from '../../lib/model/safetensors';
import { checkHeaderLength } from '../../lib/model/safetensors-format';
import { Qwen35Checkpoint, Qwen35Preset, parseQwen35Config, writeSyntheticCheckpoint } from '../../lib/model/qwen35';
import { concat, rawFile, tempDir, u64le } from './helpers';

const entry = (name: string, dtype: string, shape: number[], begin: number, end: number) =>
  `${JSON.stringify(name)}:{"dtype":"${dtype}","shape":[${shape}],"data_offsets":[${begin},${end}]}`;

/** Opens from memory and from a file on disk: both sources must agree. */
function openBoth(bytes: Uint8Array, dir: string, tag: string): SafetensorsFile[] {
  const file = path.join(dir, `${tag}.safetensors`);
  fs.writeFileSync(file, bytes);
  return [SafetensorsFile.fromBytes(bytes, 'mem'), SafetensorsFile.open(file)];
}

function refusedBoth(bytes: Uint8Array, dir: string, tag: string, fault: SafetensorsFault, says: RegExp): void {
  const file = path.join(dir, `${tag}.safetensors`);
  fs.writeFileSync(file, bytes);
  for (const [label, open] of [['mem', () => SafetensorsFile.fromBytes(bytes, 'mem')], [file, () => SafetensorsFile.open(file)]] as const) {
    assert.throws(open, (e: unknown) => {
      assert.ok(e instanceof SafetensorsError, `${tag}: ${String(e)}`);
      assert.equal(e.fault, fault, `${tag} (${label}): ${e.message}`);
      assert.ok(e.message.startsWith(`${label}: `), e.message);
      assert.match(e.message, says);
      return true;
    }, `${tag} (${label}) was accepted`);
  }
}

describe('safetensors: every length and offset at its last valid value and one past', () => {
  let tmp: ReturnType<typeof tempDir>;
  before(() => (tmp = tempDir('st-edges')));
  after(() => tmp.cleanup());

  it('file size: 8 bytes hold the length prefix (then the empty header is refused for itself), 7 do not', () => {
    refusedBoth(u64le(0), tmp.dir, 'eight', 'header-start', /header is empty/);
    refusedBoth(new Uint8Array(7), tmp.dir, 'seven', 'too-small', /file is 7 bytes, too small for the 8-byte header length/);
  });

  it('header length: 100,000,000 is within the limit, 100,000,001 is not (checked before anything is read)', () => {
    assert.equal(checkHeaderLength('f', u64le(MAX_HEADER_BYTES), 8 + MAX_HEADER_BYTES), MAX_HEADER_BYTES);
    assert.throws(() => checkHeaderLength('f', u64le(MAX_HEADER_BYTES + 1), 8 + MAX_HEADER_BYTES + 1),
      (e: unknown) => e instanceof SafetensorsError && e.fault === 'header-too-large' && /header length 100000001 exceeds the 100000000-byte limit/.test(e.message));
  });

  it('header length: the whole rest of the file after the 8-byte prefix fits, one byte more runs past the end', () => {
    // A header that is the whole file after its prefix: no tensors, no data.
    const header = '{}      ';
    const [mem, disk] = openBoth(rawFile(header), tmp.dir, 'whole');
    for (const f of [mem, disk]) {
      assert.equal(f.header.headerLength, 8);
      assert.equal(f.header.dataLength, 0);
    }
    assert.equal(checkHeaderLength('f', u64le(8), 16), 8);
    refusedBoth(rawFile(header, 0, 9n), tmp.dir, 'one-more', 'header-past-end', /header length 9 runs past the end of the file \(16 bytes, so at most 8\)/);
    // With data after it: the header may end exactly where the file ends only if it takes the data too.
    const withData = rawFile(`{${entry('w', 'U8', [4], 0, 4)}}`, 4);
    const n = withData.byteLength - 8 - 4;
    assert.equal(checkHeaderLength('f', u64le(withData.byteLength - 8), withData.byteLength), withData.byteLength - 8);
    assert.throws(() => checkHeaderLength('f', u64le(withData.byteLength - 7), withData.byteLength), (e: unknown) => e instanceof SafetensorsError && e.fault === 'header-past-end');
    assert.equal(SafetensorsFile.fromBytes(withData).header.headerLength, n);
  });

  it('data extent: a tensor ending at the last data byte loads; a file one byte short is truncated, one byte long has trailing data', () => {
    const header = `{${entry('a', 'F32', [2], 0, 8)},${entry('b', 'U8', [3], 8, 11)}}`;
    const data = new Uint8Array(11).map((_, i) => i + 1);
    for (const f of openBoth(rawFile(header, data), tmp.dir, 'exact')) {
      assert.deepEqual(Array.from(f.readBytes('b')), [9, 10, 11]);
      assert.equal(f.header.dataLength, 11);
    }
    refusedBoth(rawFile(header, data.subarray(0, 10)), tmp.dir, 'short', 'truncated', /tensor "b" ends at data byte 11 but the data section has 10 bytes/);
    refusedBoth(rawFile(header, concat(data, new Uint8Array(1))), tmp.dir, 'long', 'trailing-data', /data bytes \[11, 12\) after the last tensor/);
  });

  it('tensor offsets: a tensor starting where the previous ends loads; one byte earlier overlaps, one byte later leaves a hole', () => {
    openBoth(rawFile(`{${entry('a', 'U8', [4], 0, 4)},${entry('b', 'U8', [4], 4, 8)}}`, 8), tmp.dir, 'tiled');
    refusedBoth(rawFile(`{${entry('a', 'U8', [4], 0, 4)},${entry('b', 'U8', [4], 3, 7)}}`, 7), tmp.dir, 'overlap', 'overlap', /tensor "b" \[3, 7\) overlaps tensor "a" \[0, 4\)/);
    refusedBoth(rawFile(`{${entry('a', 'U8', [4], 0, 4)},${entry('b', 'U8', [4], 5, 9)}}`, 9), tmp.dir, 'hole', 'hole', /data bytes \[4, 5\) belong to no tensor \(hole before tensor "b"\)/);
    refusedBoth(rawFile(`{${entry('a', 'U8', [4], 1, 5)}}`, 5), tmp.dir, 'first-late', 'hole', /data bytes \[0, 1\) belong to no tensor/);
  });

  it('tensor size: offsets spanning exactly the shape\'s bytes load; one byte more or fewer is a size mismatch', () => {
    openBoth(rawFile(`{${entry('w', 'BF16', [3, 2], 0, 12)}}`, 12), tmp.dir, 'size');
    refusedBoth(rawFile(`{${entry('w', 'BF16', [3, 2], 0, 13)}}`, 13), tmp.dir, 'size-plus', 'size-mismatch', /tensor "w": shape \[3,2\] BF16 needs 12 bytes but data_offsets \[0, 13\] span 13/);
    refusedBoth(rawFile(`{${entry('w', 'BF16', [3, 2], 0, 11)}}`, 11), tmp.dir, 'size-minus', 'size-mismatch', /needs 12 bytes but data_offsets \[0, 11\] span 11/);
  });

  it('readRows: the last row is read, the row count is refused naming rows[i]', () => {
    const data = new Uint8Array(12).map((_, i) => i);
    for (const f of openBoth(rawFile(`{${entry('e', 'I8', [4, 3], 0, 12)}}`, data), tmp.dir, 'rows')) {
      assert.deepEqual(Array.from(f.readRows('e', [3, 0]).bits()), [9, 10, 11, 0, 1, 2]);
      assert.throws(() => f.readRows('e', [0, 4]), /rows\[1\]: expected an integer in 0\.\.3 for tensor "e", got 4/);
      assert.throws(() => f.readRows('e', [-1]), /rows\[0\]: expected an integer in 0\.\.3/);
    }
  });
});

// A made-up preset of hidden size 8 (C = 2·Hk·Dk + Hv·Dv = 4 + 6): the claims below hold at any size, and a
// checkpoint of the 0.8B preset's real sizes (tens of MB of random bf16) is slow under mutation testing.
const tiny = { name: 'tiny', hidden: 8, numLayers: 4, Hk: 1, Hv: 3, Dk: 2, Dv: 2, K: 3, C: 10, eps: 1e-6, vocab: 8 } as unknown as Qwen35Preset;

describe('Qwen3.5 loader: indices and shapes at their edges', function () {
  this.timeout(60_000);
  let tmp: ReturnType<typeof tempDir>;
  before(() => (tmp = tempDir('qwen-edges')));
  after(() => tmp.cleanup());

  it('layer: the last layer index passes the index check, numLayers does not; token ids: vocab − 1 and vocab', () => {
    const dir = path.join(tmp.dir, 'layers');
    writeSyntheticCheckpoint(dir, tiny, { layers: 4, vocab: 8 });
    const ckpt = Qwen35Checkpoint.open(dir);
    assert.equal(ckpt.config.numLayers, 4);
    // Layer 3 is a full-attention layer: refused for its type, which comes after the index check.
    assert.throws(() => ckpt.loadGdnLayer(3), /layer 3 is a full_attention layer, not GDN/);
    assert.throws(() => ckpt.loadGdnLayer(4), /layer: expected an integer in 0\.\.3, got 4/);
    assert.throws(() => ckpt.loadGdnLayer(-1), /layer: expected an integer in 0\.\.3, got -1/);
    assert.equal(ckpt.loadGdnLayer(2, { only: ['dtBias'] }).dtBias!.shape[0], ckpt.config.Hv);
    assert.equal(ckpt.embedTokens([7, 0]).shape[0], 2);
    assert.throws(() => ckpt.embedTokens([0, 8]), /ids\[1\]: expected a token id in 0\.\.7, got 8/);
    assert.throws(() => ckpt.embedTokens([-1]), /ids\[0\]: expected a token id in 0\.\.7, got -1/);
  });

  it('shapes: a GDN tensor of exactly the shape config.json implies loads; one row or one column more is refused naming it', () => {
    const dir = path.join(tmp.dir, 'shapes');
    writeSyntheticCheckpoint(dir, tiny, { layers: 1, vocab: 8 });
    const cfg = JSON.parse(fs.readFileSync(path.join(dir, 'config.json'), 'utf8'));
    const { Hv, hidden } = Qwen35Checkpoint.open(dir).config;
    const name = 'model.language_model.layers.0.linear_attn.in_proj_a.weight';
    for (const [rows, cols, ok] of [[Hv, hidden, true], [Hv + 1, hidden, false], [Hv, hidden + 1, false], [Hv - 1, hidden, false]] as const) {
      const d = path.join(tmp.dir, `a-${rows}-${cols}`);
      fs.mkdirSync(d);
      fs.writeFileSync(path.join(d, 'config.json'), JSON.stringify(cfg));
      writeSafetensors(path.join(d, 'model.safetensors'), [[name, { dtype: 'F32', shape: [rows, cols], bytes: new Uint8Array(rows * cols * 4) }]]);
      const load = () => Qwen35Checkpoint.open(d).loadGdnLayer(0, { only: ['inProjA'] });
      if (ok) assert.deepEqual(load().inProjA!.shape, [Hv, hidden]);
      else assert.throws(load, new RegExp(`in_proj_a\\.weight has shape \\[${rows},${cols}\\], config\\.json implies \\[${Hv},${hidden}\\]`));
    }
  });

  it('config.json: each size field at its minimum (1) is read, 0 is refused naming the field', () => {
    const base = { hidden_size: 8, num_hidden_layers: 1, linear_conv_kernel_dim: 4, linear_num_key_heads: 1, linear_num_value_heads: 1, linear_key_head_dim: 4, linear_value_head_dim: 4, rms_norm_eps: 1e-6, layer_types: ['linear_attention'] };
    for (const key of ['hidden_size', 'num_hidden_layers', 'linear_conv_kernel_dim', 'linear_num_key_heads', 'linear_num_value_heads', 'linear_key_head_dim', 'linear_value_head_dim']) {
      const at = { ...base, [key]: 1 };
      parseQwen35Config(at, 'config.json');
      assert.throws(() => parseQwen35Config({ ...base, [key]: 0 }, 'config.json'), new RegExp(`config\\.json: ${key} must be an integer >= 1, got 0`));
    }
  });
});
