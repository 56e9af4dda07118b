// A checkpoint's tensors across files: `model.safetensors`, or shards listed by
// `model.safetensors.index.json` (`weight_map`: tensor name → shard file).
//
// Opening reads and validates every shard's header and checks the index against them: each mapped
// tensor is in its shard, no shard holds a tensor the index does not map to it, and shard names are
// plain file names inside the directory (an index cannot point outside it).

import * as fs from 'fs';
import * as path from 'path';
import { Tensor } from '../tensor';
import { SafetensorsError, TensorEntry } from './safetensors-format';
import { IoCounter, RawTensor, ReadOptions, SafetensorsFile } from './safetensors-file';
import { JsonDuplicateKeyError, JsonObject, JsonSyntaxError, JsonValue, jsonTypeName, parseStrictJson } from './strict-json';

export const INDEX_FILE = 'model.safetensors.index.json';
export const SINGLE_FILE = 'model.safetensors';

/** Largest index file accepted (a 400B-parameter model's index is well under 1 MB). */
const MAX_INDEX_BYTES = 64 * 1024 * 1024;

export class SafetensorsCheckpoint {
  private constructor(
    readonly dir: string,
    /** The index file, or undefined for a single-file checkpoint. */
    readonly indexPath: string | undefined,
    readonly files: ReadonlyMap<string, SafetensorsFile>,
    private readonly fileOfName: ReadonlyMap<string, SafetensorsFile>,
  ) {}

  /**
   * Opens the safetensors weights in `dir`: the index and its shards when an index exists, else
   * model.safetensors, else the directory's only *.safetensors file.
   */
  static open(dir: string, opts: { io?: IoCounter } = {}): SafetensorsCheckpoint {
    const indexPath = path.join(dir, INDEX_FILE);
    if (fs.existsSync(indexPath)) return SafetensorsCheckpoint.openIndex(dir, indexPath, opts);
    let single = path.join(dir, SINGLE_FILE);
    if (!fs.existsSync(single)) {
      let found: string[];
      try {
        // Sorted, so that the message below names the same files on every file system.
        found = fs.readdirSync(dir).filter((f) => f.endsWith('.safetensors')).sort();
      } catch (e) {
        throw new SafetensorsError(dir, 'io', `cannot list the checkpoint directory: ${(e as Error).message}`);
      }
      if (found.length !== 1) {
        throw new SafetensorsError(dir, 'not-found', `no ${INDEX_FILE} or ${SINGLE_FILE}, and ${found.length ? `${found.length} other .safetensors files (${found.slice(0, 4).join(', ')}${found.length > 4 ? ', …' : ''}): ambiguous` : 'no .safetensors file'}`);
      }
      single = path.join(dir, found[0]);
    }
    const file = SafetensorsFile.open(single, opts);
    return new SafetensorsCheckpoint(dir, undefined, new Map([[path.basename(single), file]]), new Map(file.names().map((n) => [n, file])));
  }

  private static openIndex(dir: string, indexPath: string, opts: { io?: IoCounter }): SafetensorsCheckpoint {
    const weightMap = readWeightMap(indexPath);
    const files = new Map<string, SafetensorsFile>();
    const fileOfName = new Map<string, SafetensorsFile>();
    for (const [name, shard] of weightMap) {
      let file = files.get(shard);
      if (!file) {
        const shardPath = path.join(dir, shard);
        if (!fs.existsSync(shardPath)) throw new SafetensorsError(indexPath, 'index', `weight_map sends ${JSON.stringify(name)} to ${JSON.stringify(shard)}, which does not exist`);
        file = SafetensorsFile.open(shardPath, opts);
        files.set(shard, file);
      }
      if (!file.has(name)) throw new SafetensorsError(indexPath, 'index', `weight_map sends ${JSON.stringify(name)} to ${JSON.stringify(shard)}, which does not hold it`);
      fileOfName.set(name, file);
    }
    for (const [shard, file] of files) {
      for (const name of file.names()) {
        const mapped = weightMap.get(name);
        if (mapped !== shard) {
          throw new SafetensorsError(indexPath, 'index', `shard ${JSON.stringify(shard)} holds ${JSON.stringify(name)}, which weight_map ${mapped ? `sends to ${JSON.stringify(mapped)}` : 'does not list'}`);
        }
      }
    }
    return new SafetensorsCheckpoint(dir, indexPath, files, fileOfName);
  }

  /** Every tensor name, in weight-map (or file) order. */
  names(): string[] {
    return [...this.fileOfName.keys()];
  }
  has(name: string): boolean {
    return this.fileOfName.has(name);
  }
  /** The file holding a tensor. */
  fileOf(name: string): SafetensorsFile {
    const f = this.fileOfName.get(name);
    if (!f) throw new SafetensorsError(this.indexPath ?? this.dir, 'not-found', `no tensor named ${JSON.stringify(name)} in the checkpoint (${this.fileOfName.size} tensors)`);
    return f;
  }
  entry(name: string): TensorEntry {
    return this.fileOf(name).entry(name);
  }
  read(name: string, opts?: ReadOptions): Tensor {
    return this.fileOf(name).read(name, opts);
  }
  readRaw(name: string): RawTensor {
    return this.fileOf(name).readRaw(name);
  }
  readBytes(name: string): Uint8Array {
    return this.fileOf(name).readBytes(name);
  }
  readRows(name: string, rows: ArrayLike<number>, opts?: ReadOptions): Tensor {
    return this.fileOf(name).readRows(name, rows, opts);
  }
  /** Sum of the header bytes (8-byte prefix + JSON) of every file opened. */
  headerBytes(): number {
    let n = 0;
    for (const f of this.files.values()) n += 8 + f.header.headerLength;
    return n;
  }
}

/** Reads and validates an index file's weight_map. */
function readWeightMap(indexPath: string): Map<string, string> {
  let size: number;
  try {
    size = fs.statSync(indexPath).size;
  } catch (e) {
    throw new SafetensorsError(indexPath, 'io', `cannot read: ${(e as Error).message}`);
  }
  if (size > MAX_INDEX_BYTES) throw new SafetensorsError(indexPath, 'index', `index is ${size} bytes, more than the ${MAX_INDEX_BYTES}-byte limit`);
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(fs.readFileSync(indexPath));
  } catch (e) {
    throw new SafetensorsError(indexPath, 'index', `index is not readable UTF-8 text: ${(e as Error).message}`);
  }
  let json: JsonValue;
  try {
    json = parseStrictJson(text, { maxDepth: 16 });
  } catch (e) {
    if (e instanceof JsonDuplicateKeyError) throw new SafetensorsError(indexPath, 'index', `index repeats key ${JSON.stringify(e.key)} (at character ${e.position})`);
    if (e instanceof JsonSyntaxError) throw new SafetensorsError(indexPath, 'index', `index is not valid JSON: ${e.message}`);
    throw e;
  }
  const wm = json instanceof JsonObject ? json.get('weight_map') : undefined;
  if (!(wm instanceof JsonObject)) throw new SafetensorsError(indexPath, 'index', `weight_map is ${jsonTypeName(wm)}, expected an object of tensor name → shard file`);
  const out = new Map<string, string>();
  for (const [name, shard] of wm.members) {
    if (typeof shard !== 'string') throw new SafetensorsError(indexPath, 'index', `weight_map[${JSON.stringify(name)}] is ${jsonTypeName(shard)}, expected a file name`);
    if (shard === '' || shard === '.' || shard === '..' || /[/\\\0]/.test(shard)) {
      throw new SafetensorsError(indexPath, 'index', `weight_map[${JSON.stringify(name)}] = ${JSON.stringify(shard)} is not a plain file name in the checkpoint directory`);
    }
    out.set(name, shard);
  }
  return out;
}
