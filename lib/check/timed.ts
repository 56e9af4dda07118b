// Bits before time: an arm prepared for timing (conv/postconv/fused.prepareTimed, conv.prepareTimedUpdate)
// is run once at the very inputs and options it will be timed with, beside the op's reference arm, and its
// outputs compared bit for bit — what `gdnlab bench` does at each shape before it times, for timeArms
// from a cell. Fresh outputs are used (an `out` buffer the caller gave, or `inPlace`, is left alone).

import * as conv from '../ops/conv';
import * as postconv from '../ops/postconv';
import * as fused from '../ops/fused';
import { BitsCheck, BitsChecker, TimedSource, TimingCase, TimingOptions, TimingResult, timeArms as timeArmsWith } from '../analysis/timing';
import { armByName, referenceArm } from '../arms/table';
import { Tensor } from '../tensor';
import { countBitMismatches } from '../analysis/bits';
import { firstMismatch } from '../analysis/located';

export type { BitsCheck } from '../analysis/timing';

type Outputs = readonly (readonly [string, Tensor, Tensor])[];

function result(arm: string, reference: string, pairs: Outputs, planted: boolean): BitsCheck {
  const mismatches = pairs.reduce((n, [, a, b]) => n + countBitMismatches(a, b), 0);
  return { arm, reference, mismatches, planted, ...(mismatches ? { firstMismatch: firstMismatch(pairs) } : {}) };
}

/** The options of a check run: the timed ones without caller buffers, so the check writes only its own outputs. */
function fresh<O extends { out?: unknown; inPlace?: boolean }>(opts: O): O {
  const o = { ...opts };
  delete o.inPlace;
  delete o.out;
  return o;
}

/**
 * Runs the reference, then the arm, and compares them with `compare`; both results are released whatever
 * happens (a failing arm must not leak the reference's buffers).
 */
async function againstReference<R extends { release(): void }, G extends { release(): void }>(
  runReference: () => Promise<R>,
  runArm: () => Promise<G>,
  compare: (got: G, ref: R) => BitsCheck,
): Promise<BitsCheck> {
  const ref = await runReference();
  try {
    const got = await runArm();
    try {
      return compare(got, ref);
    } finally {
      got.release();
    }
  } finally {
    ref.release();
  }
}

/** Runs the arm of a timed op and its reference at the op's inputs and compares them bit for bit. */
export async function checkTimedBits(source: TimedSource): Promise<BitsCheck> {
  switch (source.op) {
    case 'conv': {
      const inputs = source.inputs as conv.ConvInputs;
      const opts = fresh(source.opts as conv.ConvOptions);
      const reference = referenceArm('conv').name;
      return againstReference(
        () => conv.forward(inputs, { outDtype: opts.outDtype, backend: opts.backend, arm: reference }),
        () => conv.forward(inputs, opts),
        (got, ref) => {
          const planted = armByName('conv', got.requested.arm).mutant || !!opts.mutant;
          return result(`${got.requested.arm}/${got.requested.mapping}`, reference, [['out', got.out, ref.out], ['convState', got.convState, ref.convState]], planted);
        },
      );
    }
    case 'conv-update': {
      const inputs = source.inputs as conv.ConvUpdateInputs;
      const given = source.opts as conv.ConvUpdateOptions;
      // A Tensor `out` is the initial contents of out (an input); buffers to write into are left out.
      const opts = { ...fresh(given), ...(given.out instanceof Tensor ? { out: given.out } : {}) };
      const reference = referenceArm('conv-update').name;
      return againstReference(
        () => conv.update(inputs, { ...opts, arm: reference }),
        () => conv.update(inputs, opts),
        (got, ref) => result(got.arm, reference, [['out', got.out, ref.out], ['state', got.state, ref.state]], armByName('conv-update', got.arm).mutant),
      );
    }
    case 'postconv': {
      const inputs = source.inputs as postconv.PostconvInputs;
      const opts = fresh(source.opts as postconv.PostconvOptions);
      const reference = referenceArm('postconv').name;
      const outs = ['q', 'k', 'v', 'g', 'beta'] as const;
      return againstReference(
        () => postconv.forward(inputs, { ...opts, arm: reference }),
        () => postconv.forward(inputs, opts),
        (got, ref) => result(got.requested, reference, outs.map((o) => [o, got[o], ref[o]] as const), armByName('postconv', got.requested).mutant),
      );
    }
    case 'fused': {
      const inputs = source.inputs as fused.FusedInputs;
      const opts = fresh(source.opts as fused.FusedOptions);
      const outs = ['q', 'k', 'v', 'g', 'beta', 'convState'] as const;
      return againstReference(
        () => fused.chain(inputs, { ...opts, mutant: null }),
        () => fused.forward(inputs, opts),
        (got, ref) => {
          const planted = armByName('fused', got.requested).mutant || !!opts.mutant;
          return result(got.requested, 'conv(scalar) → post-conv(tree)', outs.map((o) => [o, got[o], ref[o]] as const), planted);
        },
      );
    }
    default:
      throw new TypeError(`source.op: expected 'conv', 'conv-update', 'postconv' or 'fused', got ${String((source as TimedSource).op)}`);
  }
}

/**
 * Runs a timed op's arm once (no comparison) when it is an arm defined in a cell: a forward call waits at most
 * the arm's own time limit (docs/USER-ARMS.md, isolation), so an arm that never ends stops there rather than
 * inside a timing run, whose wait covers every launch of the run. Built-in arms are not run.
 */
export async function probeTimedArm(source: TimedSource): Promise<void> {
  if (source.op === 'conv') {
    const opts = fresh(source.opts as conv.ConvOptions);
    if (opts.arm !== undefined && armByName('conv', opts.arm).user) (await conv.forward(source.inputs as conv.ConvInputs, opts)).release();
  } else if (source.op === 'postconv') {
    const opts = fresh(source.opts as postconv.PostconvOptions);
    if (opts.arm !== undefined && armByName('postconv', opts.arm).user) (await postconv.forward(source.inputs as postconv.PostconvInputs, opts)).release();
  }
}

const OP_BITS: BitsChecker = { check: checkTimedBits, probe: probeTimedArm };

/**
 * gdnlab's timeArms: lib/analysis/timing.ts's, with every case prepared by an op checked bit for bit against
 * the op's reference before it is timed (or, with validate: false, a cell-defined arm run once first).
 */
export function timeArms(cases: TimingCase[], opts: TimingOptions = {}): Promise<TimingResult> {
  return timeArmsWith(cases, { ...opts, bitsChecker: opts.bitsChecker ?? OP_BITS });
}
