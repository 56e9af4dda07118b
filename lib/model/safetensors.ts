// safetensors: read single files and sharded checkpoints, validate headers strictly, read only the
// tensors asked for, write files for tests and synthetic checkpoints. See docs/DOMAIN.md §2.
//
//   const f = SafetensorsFile.open('model.safetensors');        // header only
//   f.read('model.embed_tokens.weight')                          // a Tensor (F32/BF16/F16/I32/I8)
//   f.readRaw('scales')                                          // raw bytes + dtype (F8, U16, I64, …)
//   const ckpt = SafetensorsCheckpoint.open(dir, { io })         // index + shards
//   writeSafetensors(path, { w: tensor }, { note: 'synthetic' })

export {
  SAFETENSORS_DTYPES,
  SAFETENSORS_DTYPE_BITS,
  SAFETENSORS_DTYPE_OF,
  TENSOR_DTYPE_OF,
  MAX_HEADER_BYTES,
  SafetensorsError,
  isSafetensorsDType,
} from './safetensors-format';
export type { SafetensorsDType, SafetensorsFault, SafetensorsHeader, TensorEntry } from './safetensors-format';
export { IoCounter, SafetensorsFile } from './safetensors-file';
export type { RawTensor, ReadOptions } from './safetensors-file';
export { SafetensorsCheckpoint, INDEX_FILE, SINGLE_FILE } from './safetensors-checkpoint';
export { encodeSafetensors, writeSafetensors, writeShardedSafetensors } from './safetensors-writer';
export type { LazyTensor, ShardOptions, TensorMap, WritableTensor, WriteOptions, WrittenFile } from './safetensors-writer';
