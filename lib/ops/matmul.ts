// A small dense product for making real layer-0 activations (in_proj_qkv, in_proj_a, in_proj_b):
// out[M, N] = a[M, K] · b[N, K]ᵀ with f32 accumulation, k ascending, one fma per step — the same
// bits on the host and CUDA backends.

import { Tensor } from '../tensor';
import { Backend } from '../backend';
import { MatmulArgs, matmulArgsCodec } from '../native/gdn';
import { describe } from '../dtype';
import { DTYPE_CODE, Staging, backendOf, expectChoice, expectContiguous, expectDType, expectOut, expectTensor, namedRanges } from './common';

export interface MatmulOptions {
  outDtype?: 'f32' | 'bf16';
  backend?: Backend;
  /** An output buffer to write into: { out: [M, N] of outDtype on this backend }; returned as the result (not poisoned). */
  out?: { out?: Tensor };
}

export function matmulNT(a: Tensor, b: Tensor, opts: MatmulOptions = {}): Tensor {
  const outDtype = expectChoice(opts.outDtype ?? 'f32', 'outDtype', ['f32', 'bf16'] as const);
  expectTensor(a, 'a');
  expectTensor(b, 'b');
  expectDType(a, 'a', ['f32', 'bf16']);
  if (b.dtype !== a.dtype) throw new TypeError(`b: expected dtype ${a.dtype} (the dtype of a), got ${b.dtype}`);
  if (a.rank !== 2) throw new RangeError(`a: expected shape [M, K], got [${a.shape.join(', ')}]`);
  if (b.rank !== 2 || b.shape[1] !== a.shape[1]) throw new RangeError(`b: expected shape [N, K=${a.shape[1]}], got [${b.shape.join(', ')}]`);
  expectContiguous(a, 'a');
  expectContiguous(b, 'b');
  const [M, Kd] = a.shape;
  const N = b.shape[0];
  const backend = backendOf(opts);
  const given = opts.out ?? {};
  if (typeof given !== 'object') throw new TypeError(`out: expected { out } (an output buffer), got ${describe(given)}`);
  for (const k of Object.keys(given)) if (k !== 'out') throw new TypeError(`out.${k}: not an output of matmulNT (expected out)`);
  const givenOut = given.out === undefined ? null : expectOut(given.out, 'out.out', backend, [M, N], outDtype, namedRanges([['a', a], ['b', b]], backend));
  const staging = new Staging(backend);
  const out = givenOut ?? staging.output([M, N], outDtype);
  try {
    const args: MatmulArgs = {
      M, N, Kd,
      in_dtype: DTYPE_CODE[a.dtype],
      out_dtype: DTYPE_CODE[outDtype],
      a: staging.input(a).addr,
      b: staging.input(b).addr,
      out: out.addr,
    };
    backend.check(backend.lib.matmulNTRaw(backend.native, matmulArgsCodec.encodeScratch(args)) as number, 'matmulNT');
    return out;
  } catch (e) {
    if (!givenOut) out.release();
    throw e;
  } finally {
    staging.release();
  }
}
