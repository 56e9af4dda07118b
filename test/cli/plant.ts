// Planted defects for the CLI tests (test/cli/planted.test.ts), loaded into a `gdnlab` process with
// NODE_OPTIONS=--require. GDNLAB_PLANT names one:
//   postconv-beta       every post-conv arm returns beta = 1 − sigmoid(b): arms agree with each
//                       other, only the comparison with the float64 reference can see it;
//   conv-truncate       every conv arm stores bf16 outputs by truncation: arms agree, errors stay
//                       inside the bf16 tolerance, only the rounding check can see it.
// A check that declares its reference row ok instead of computing it exits 0 under these.

import { Tensor } from '../../lib/tensor';
import * as convOps from '../../lib/ops/conv';
import * as postconvOps from '../../lib/ops/postconv';

type Mutable<T> = { -readonly [K in keyof T]: T[K] };
const plant = process.env.GDNLAB_PLANT;

function replaceBeta(r: postconvOps.PostconvResult): postconvOps.PostconvResult {
  const beta = r.beta.toFloat32().map((v) => 1 - v);
  const wrong = Tensor.from(beta, r.beta.shape, 'f32');
  const release = r.release.bind(r);
  return { ...r, beta: wrong, release: () => { release(); wrong.release(); } };
}

/** A bf16 tensor holding the f32 values truncated (the low 16 bits dropped). */
function truncatedBf16(f32: Tensor): Tensor {
  const u32 = new Uint32Array(f32.toFloat32().buffer);
  const u16 = new Uint16Array(u32.length);
  for (let i = 0; i < u32.length; i++) u16[i] = u32[i] >>> 16;
  return Tensor.fromBytes(new Uint8Array(u16.buffer), f32.shape, 'bf16');
}

switch (plant) {
  case 'postconv-beta': {
    const forward = postconvOps.forward;
    (postconvOps as Mutable<typeof postconvOps>).forward = async (inputs, opts) => replaceBeta(await forward(inputs, opts));
    break;
  }
  case 'conv-truncate': {
    const forwardSync = convOps.forwardSync;
    (convOps as Mutable<typeof convOps>).forwardSync = (inputs, opts = {}) => {
      if (opts.outDtype !== 'bf16') return forwardSync(inputs, opts);
      const r = forwardSync(inputs, { ...opts, outDtype: 'f32' });
      const out = truncatedBf16(r.out);
      const release = r.release.bind(r);
      return { ...r, out, release: () => { release(); out.release(); } };
    };
    break;
  }
  case undefined:
  case '':
    break;
  default:
    throw new Error(`GDNLAB_PLANT: unknown planted defect '${plant}'`);
}
