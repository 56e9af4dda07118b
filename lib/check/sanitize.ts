// One small launch of every arm, mapping and op: the workload to run under compute-sanitizer
// (memcheck, racecheck, synccheck), where each launch is slow and coverage matters more than size.

import { Backend } from '../backend';
import { Tensor } from '../tensor';
import * as conv from '../ops/conv';
import * as postconv from '../ops/postconv';
import { matmulNT } from '../ops/matmul';
import { makeConvInputs } from './conv';
import { makePostconvInputs } from './postconv';
import { arms } from '../arms/table';
import * as fused from '../ops/fused';
import { makeFusedInputs, fusedOptions, checkedFusedArms, FusedCase } from './fused';

export async function sanitizeWorkload(backend: Backend, log: (line: string) => void): Promise<number> {
  let launches = 0;
  // C = 385 leaves partial tiles for every arm; a padded x row stride; lengths cover empty, short, and multi-chunk.
  const convCase = { name: 'sanitize', C: 385, K: 4, xDtype: 'bf16' as const, outDtype: 'bf16' as const, lengths: [0, 2, 9, 70, 5],
    initialState: [true, true, true, false, true], maskDtype: 'i8' as const, bias: true, xRowStride: 392, seed: 9 };
  // C = 385 makes vec fall back to reg (it needs rows of whole 16-byte vectors); C = 392 runs vec itself.
  for (const [C, stride] of [[385, 392], [392, 400]]) {
    const inputs = makeConvInputs({ ...convCase, C, xRowStride: stride });
    // C = 385: every registered arm; C = 392: the arms that need whole 16-byte vectors, running themselves.
    for (const a of arms('conv').filter((x) => C === 385 || x.requires.includes('vec8'))) {
      const arm = a.name;
      for (const mapping of a.mappings) {
        const r = await conv.forward(inputs, { arm, mapping, outDtype: 'bf16', backend });
        log(`conv C=${C} ${arm}/${mapping} (ran ${r.contract.arm}/${r.contract.mapping})`);
        r.release();
        launches++;
      }
    }
  }
  for (const arm of conv.updateArms()) {
    for (const stateDtype of ['f32', 'bf16'] as const) {
      const r = await conv.update({
        x: Tensor.random([4, 385], 'bf16', { seed: 1 }), weight: Tensor.random([385, 4], 'bf16', { seed: 2 }),
        state: Tensor.random([6, 385, 3], stateDtype, { seed: 3 }), stateIndices: [5, -1, 0, 2],
      }, { arm, backend });
      log(`conv.update ${arm} (${stateDtype} state)`);
      r.release();
      launches++;
    }
  }
  // bf16 and f32 rows at Dk = 128 (the token-tile arms load them differently: vec-tile moves a bf16 row
  // in one 16-byte load per lane, an f32 row in two), and Dk = 64 (every arm falls back to tree).
  for (const [Dk, T, dt] of [[128, 37, 'bf16'], [128, 37, 'f32'], [64, 5, 'bf16']] as const) {
    const c = { name: 'sanitize', T, Hk: 2, Hv: 4, Dk, Dv: Dk, convDtype: dt, gateDtype: 'bf16' as const, qkvDtype: dt,
      packedWidth: 11, bOffset: 3, aOffset: 7, seed: 5 };
    const pin = makePostconvInputs(c);
    // arms(), not the name list: it leaves out user arms undefined since (their ids stay, their modules go).
    for (const arm of arms('postconv').map((x) => x.name)) {
      const r = await postconv.forward(pin, { ...c, arm, backend });
      log(`postconv ${arm} Dk=${Dk} ${dt} (ran ${r.arm})`);
      r.release();
      launches++;
    }
  }
  // The fused op: a varlen batch with an empty sequence, one shorter than K-1 and one crossing a 64-token
  // chunk, with state; bf16 and f32 paths, K = 4 and K = 6 (the two window widths), and both planted mutants,
  // in every correct fused arm the registry lists (each has its own kernels and its own planted builds).
  const fusedCase: FusedCase = { name: 'sanitize', Hk: 1, Hv: 2, K: 4, lengths: [0, 2, 70, 9], initialState: [true, true, true, false],
    maskDtype: 'i8', bias: true, xDtype: 'bf16', convDtype: 'bf16', qkvDtype: 'bf16', gateDtype: 'bf16', xRowStride: 520, packedWidth: 7, bOffset: 1, aOffset: 4, seed: 11 };
  for (const arm of checkedFusedArms()) {
    for (const [K, dt, mutant] of [[4, 'bf16', null], [6, 'f32', null], [4, 'f32', 'seq-fold'], [4, 'bf16', 'no-round']] as const) {
      const c = { ...fusedCase, K, xDtype: dt, convDtype: dt, qkvDtype: dt, gateDtype: dt };
      const r = await fused.forward(makeFusedInputs(c), fusedOptions(c, backend, mutant, arm));
      log(`fused ${arm} K=${K} ${dt}${mutant ? ` (mutant ${mutant})` : ''}${r.launch.arm === arm ? '' : ` (ran ${r.launch.arm})`}`);
      r.release();
      launches++;
    }
  }
  const out = matmulNT(Tensor.random([7, 33], 'bf16', { seed: 1 }), Tensor.random([19, 33], 'bf16', { seed: 2 }), { backend });
  out.release();
  log('matmulNT');
  launches++;
  return launches;
}
