// Real layer-0 activations from token ids: the exact inputs a GDN layer's conv and post-conv see.
//
//   ids ─ embed_tokens rows ─ decoder RMSNorm ─► h [T, hidden]
//   h ─ in_proj_qkv ─► mixed_qkv [T, C]              (the conv's x)
//   h ─ [in_proj_b; in_proj_a] ─► ba [T, 2·Hv]      (b = ba[:, :Hv], a = ba[:, Hv:], the post-conv's gates)
//
// Layer 0's input is exactly RMSNorm(embed_tokens[ids]) (docs/DOMAIN.md §2). The RMSNorm follows Hugging
// Face's Qwen3_5RMSNorm step by step in f32: x.float(); var = mean(x²); x · rsqrt(var + eps);
// times (1 + w.float()); one rounding back to the input dtype at the end (bf16 for Qwen3.5). The
// projections run on the active backend through matmulNT (f32 accumulation, k ascending, fma),
// stored in the weights' dtype as HF's nn.Linear stores them. b and a come from one GEMM over the
// stacked weights, as production kernels read them from one packed buffer; each output element is
// the same dot product either way.

import { Backend } from '../backend';
import { f32ToBf16Bits, f32ToF16Bits } from '../dtype';
import { matmulNT } from '../ops/matmul';
import { HostStorage, Tensor } from '../tensor';
import { GdnShapes } from './qwen35-config';
import { Qwen35Checkpoint } from './qwen35';

export interface Layer0Activations {
  ids: Int32Array;
  T: number;
  shapes: GdnShapes;
  /** Which backend ran the projections. */
  backend: 'host' | 'cuda';
  /** Embedding rows [T, hidden], as stored (host). */
  embeddings: Tensor;
  /** input_layernorm output [T, hidden] (host), in the embeddings' dtype: the GDN layer's input. */
  hidden: Tensor;
  /** in_proj_qkv output [T, C]: the conv's x (on the backend). */
  mixedQkv: Tensor;
  /** [T, 2·Hv]: b (columns 0..Hv-1) then a (Hv..2Hv-1), on the backend. */
  ba: Tensor;
  /** Views of ba: [T, Hv] with row stride 2·Hv. */
  b: Tensor;
  a: Tensor;
  /** The conv's weight [C, K], as stored (host). */
  convWeight: Tensor;
  /** [Hv] f32 (exact from F32 or BF16). */
  ALog: Tensor;
  /** [Hv] f32 (exact from the stored bf16). */
  dtBias: Tensor;
  /** Frees the backend tensors (mixedQkv, ba and its views). */
  release(): void;
}

/**
 * Hugging Face's Qwen3_5RMSNorm on the host: f32 arithmetic, one rounding to x's dtype at the end.
 * x [T, hidden] (bf16, f16 or f32), weight [hidden] (any float dtype).
 * Each step is rounded to f32 as torch does; the sum of squares is accumulated in f64 and rounded
 * once (torch's CPU reduction order is vectorised and differs by CPU; a correctly rounded sum is
 * the order-free choice — the fixture test measures how often this lands on HF's bits).
 */
export function decoderRmsNorm(x: Tensor, weight: Tensor, eps: number): Tensor {
  if (x.rank !== 2) throw new RangeError(`x: expected shape [T, hidden], got [${x.shape}]`);
  const [T, H] = x.shape;
  if (weight.rank !== 1 || weight.shape[0] !== H) throw new RangeError(`weight: expected shape [${H}], got [${weight.shape}]`);
  if (!(eps > 0)) throw new RangeError(`eps: expected a positive number, got ${eps}`);
  if (x.dtype !== 'bf16' && x.dtype !== 'f16' && x.dtype !== 'f32') throw new TypeError(`x: expected a float dtype, got ${x.dtype}`);
  const xs = x.toFloat32();
  const scale = Float32Array.from(weight.toFloat32(), (w) => Math.fround(1 + w));
  const eps32 = Math.fround(eps);
  const out = new Float32Array(T * H);
  const f = Math.fround;
  for (let t = 0; t < T; t++) {
    const row = t * H;
    let sum = 0;
    for (let i = 0; i < H; i++) {
      const v = xs[row + i];
      sum += f(v * v);
    }
    const variance = f(f(sum) / H);
    const inv = f(1 / f(Math.sqrt(f(variance + eps32))));
    for (let i = 0; i < H; i++) out[row + i] = f(f(xs[row + i] * inv) * scale[i]);
  }
  if (x.dtype === 'f32') return new Tensor([T, H], 'f32', new HostStorage(new Uint8Array(out.buffer)));
  const encode = x.dtype === 'bf16' ? f32ToBf16Bits : f32ToF16Bits;
  const bits = Uint16Array.from(out, (v) => encode(v));
  return new Tensor([T, H], x.dtype, new HostStorage(new Uint8Array(bits.buffer)));
}

/** Rows stacked: [top; bottom] (same dtype, same row length), host, contiguous. */
function stackRows(top: Tensor, bottom: Tensor): Tensor {
  if (top.dtype !== bottom.dtype || top.cols !== bottom.cols) throw new Error(`stackRows: [${top.shape}] ${top.dtype} and [${bottom.shape}] ${bottom.dtype} do not stack`);
  const a = top.bits();
  const b = bottom.bits();
  const bytes = new Uint8Array(a.byteLength + b.byteLength);
  bytes.set(new Uint8Array(a.buffer, a.byteOffset, a.byteLength), 0);
  bytes.set(new Uint8Array(b.buffer, b.byteOffset, b.byteLength), a.byteLength);
  return new Tensor([top.rows + bottom.rows, top.cols], top.dtype, new HostStorage(bytes));
}

export interface Layer0Options {
  backend?: Backend;
}

/** Layer-0 activations of a checkpoint for these token ids (see the file comment). */
export function layer0Activations(ckpt: Qwen35Checkpoint, ids: ArrayLike<number>, opts: Layer0Options = {}): Layer0Activations {
  const T = ids.length;
  if (T < 1) throw new RangeError('ids: expected at least one token id');
  const layer = 0;
  if (ckpt.config.layerTypes[layer] !== 'linear_attention') throw new RangeError(`layer 0 of ${ckpt.dir} is ${ckpt.config.layerTypes[layer]}, not a GDN layer`);
  const idArray = Int32Array.from(ids as ArrayLike<number>);
  const embeddings = ckpt.embedTokens(ids);
  const norm = ckpt.inputLayernormWeight(layer);
  const hidden = decoderRmsNorm(embeddings, norm, ckpt.config.eps);
  const w = ckpt.loadGdnLayer(layer, { only: ['inProjQkv', 'inProjB', 'inProjA', 'conv1d', 'dtBias', 'ALog'] });
  const qkvW = w.inProjQkv!;
  if (qkvW.dtype !== 'bf16' && qkvW.dtype !== 'f32') throw new TypeError(`in_proj_qkv: dtype ${qkvW.dtype} cannot run through matmulNT`);
  if (hidden.dtype !== qkvW.dtype) throw new TypeError(`embed_tokens is ${hidden.dtype} but in_proj_qkv is ${qkvW.dtype}; gdnlab expects one dtype like the published checkpoints`);
  const outDtype = qkvW.dtype;
  const mixedQkv = matmulNT(hidden, qkvW, { outDtype, backend: opts.backend });
  let ba: Tensor;
  try {
    ba = matmulNT(hidden, stackRows(w.inProjB!, w.inProjA!), { outDtype, backend: opts.backend });
  } catch (e) {
    mixedQkv.release();
    throw e;
  }
  const Hv = ckpt.config.Hv;
  return {
    ids: idArray,
    T,
    shapes: ckpt.shapes,
    backend: mixedQkv.backend?.kind ?? 'host',
    embeddings,
    hidden,
    mixedQkv,
    ba,
    b: ba.sliceCols(0, Hv),
    a: ba.sliceCols(Hv, Hv),
    convWeight: w.conv1d!,
    ALog: w.ALog!,
    dtBias: w.dtBias!.dtype === 'f32' ? w.dtBias! : w.dtBias!.astype('f32'),
    release() {
      mixedQkv.release();
      ba.release();
    },
  };
}
