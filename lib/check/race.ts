// Trials of the #305 race: run a mapping many times on a batch whose long sequences carry initial
// state, and count the runs whose results differ from the scalar reference (corrupted runs), and
// which output rows they corrupted. On the host the block order decides; on the GPU, timing does,
// and `widenCycles` makes chunk 0 read its state late so the end program can overtake it.

import { Backend } from '../backend';
import { Tensor } from '../tensor';
import { forwardSync, ConvArm, ConvMapping, Schedule } from '../ops/conv';
import { ConvCase, makeConvInputs } from './conv';
import { countBitMismatches } from '../analysis/bits';
import { interrupted } from '../view/display';

/** A batch made for the race: several sequences longer than one 8-token chunk, most with state. */
export function raceCase(C = 4096): ConvCase {
  return {
    name: `race C=${C}`, C, K: 4, xDtype: 'bf16', outDtype: 'bf16',
    lengths: [9, 64, 200, 17, 8, 33, 1000, 5],
    initialState: [true, true, true, true, true, false, true, true],
    maskDtype: 'i32', bias: false, xRowStride: C, seed: 305,
  };
}

export interface RaceTrialsOptions {
  backend: Backend;
  arm?: ConvArm;
  mapping: ConvMapping;
  trials: number;
  /** GPU: spin cycles before chunk 0 reads the state. */
  widenCycles?: number;
  /** Host: the block order of trial i (default: forward). */
  schedule?: (trial: number) => Schedule;
  case?: ConvCase;
  onTrial?: (done: number, corrupted: number) => void;
}

export interface RaceTrialsResult {
  arm: ConvArm;
  mapping: ConvMapping;
  backend: string;
  widenCycles: number;
  trials: number;
  /** Runs whose out or final state differ from the scalar reference in any element. */
  corruptedRuns: number;
  corruptedFraction: number;
  /** Runs with a wrong final state (the race corrupts outputs, not the state). */
  stateCorruptedRuns: number;
  /** Output rows (within their sequence) that were ever wrong, with how many runs. */
  wrongRows: Record<string, number>;
  /** Largest number of wrong output elements in one run. */
  maxWrongElements: number;
}

export function raceTrials(opts: RaceTrialsOptions): RaceTrialsResult {
  const c = opts.case ?? raceCase();
  const host = makeConvInputs(c);
  const backend = opts.backend;
  // Inputs live on the backend for the whole series: only the state copy and the output are per trial.
  const dev = {
    x: host.x.to(backend), weight: host.weight.to(backend), bias: host.bias?.to(backend) ?? null,
    queryStartLoc: host.queryStartLoc, hasInitialState: host.hasInitialState?.to(backend) ?? null,
    convState: host.convState.to(backend),
  };
  const ref = forwardSync(dev, { arm: 'scalar', outDtype: c.outDtype, backend });
  const refOut = ref.out.bits();
  const qsl = host.queryStartLoc;
  const wrongRows: Record<string, number> = {};
  let corrupted = 0;
  let stateBad = 0;
  let maxWrong = 0;
  let done = 0;
  try {
    for (let i = 0; i < opts.trials; i++) {
      if (interrupted()) break;
      const r = forwardSync(dev, {
        arm: opts.arm ?? 'reg', mapping: opts.mapping, outDtype: c.outDtype, backend,
        widenCycles: opts.widenCycles ?? 0, schedule: opts.schedule?.(i),
      });
      const out = r.out.bits();
      let wrong = 0;
      const rows = new Set<string>();
      for (let e = 0; e < out.length; e++) {
        if (out[e] === refOut[e]) continue;
        wrong++;
        const t = Math.floor(e / c.C);
        let s = 0;
        while (qsl[s + 1] <= t) s++;
        rows.add(`seq ${s} row ${t - qsl[s]}`);
      }
      const stateWrong = countBitMismatches(r.convState, ref.convState);
      if (wrong || stateWrong) corrupted++;
      if (stateWrong) stateBad++;
      for (const k of rows) wrongRows[k] = (wrongRows[k] ?? 0) + 1;
      maxWrong = Math.max(maxWrong, wrong);
      r.release();
      done++;
      opts.onTrial?.(done, corrupted);
    }
  } finally {
    ref.release();
    for (const t of Object.values(dev)) if (t instanceof Tensor) t.release();
  }
  return {
    arm: opts.arm ?? 'reg', mapping: opts.mapping, backend: backend.kind, widenCycles: opts.widenCycles ?? 0,
    trials: done, corruptedRuns: corrupted, corruptedFraction: done ? corrupted / done : 0,
    stateCorruptedRuns: stateBad, wrongRows, maxWrongElements: maxWrong,
  };
}
