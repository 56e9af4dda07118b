// Planted mutations of the conv kernels, run through the equivalence suite: a check that cannot
// catch every one of them proves nothing. Each mutant is run on the register arm with the exact
// mapping over cases made to expose it (partial channel tiles, long sequences with state).

import { Backend } from '../backend';
import { CONV_MUTANTS, ConvMutant } from '../ops/conv';
import { checkConv, ConvCase } from './conv';
import { userArm } from '../arms/registry';
import { arms, referenceArm } from '../ops/arms';

export interface MutantOutcome {
  /** A planted conv mutant, the racy mapping, or `arm:<name>` for a user arm defined as a planted defect. */
  mutant: ConvMutant | 'exact-racy' | `arm:${string}`;
  /** For a user arm: its plantedDefect sentence. */
  plantedDefect?: string;
  caught: boolean;
  /** Mismatching comparisons and elements, for the report. */
  failedComparisons: number;
  outMismatches: number;
  stateMismatches: number;
  detail: string;
}

/** Small cases that every mutant must trip on at least one of. */
export function mutantCases(): ConvCase[] {
  const base = { K: 4, maskDtype: 'i32' as const, bias: true, seed: 77 };
  return [
    { ...base, name: 'C=129 K=4 bf16->f32 state', C: 129, xDtype: 'bf16', outDtype: 'f32', lengths: [9, 33, 5, 0, 20], initialState: [true, true, false, true, true], xRowStride: 129 },
    { ...base, name: 'C=256 K=4 f32->f32 state', C: 256, xDtype: 'f32', outDtype: 'f32', lengths: [17, 8, 40], initialState: [true, false, true], xRowStride: 256 },
    { ...base, name: 'C=385(pad) K=3 bf16->bf16 state', C: 385, K: 3, xDtype: 'bf16', outDtype: 'bf16', lengths: [12, 2, 25], initialState: [true, true, true], xRowStride: 392 },
  ];
}

export function runConvMutants(opts: { backend: Backend; quick?: boolean }): MutantOutcome[] {
  const cases = mutantCases();
  const reference = referenceArm('conv').name;
  const outcomes: MutantOutcome[] = [];
  const summarise = (mutant: MutantOutcome['mutant'], report: ReturnType<typeof checkConv>): MutantOutcome => {
    const f = report.failures.filter((r) => r.arm !== reference);
    const out = f.reduce((a, r) => a + r.outMismatches, 0);
    const state = f.reduce((a, r) => a + r.stateMismatches, 0);
    return {
      mutant,
      caught: f.length > 0,
      failedComparisons: f.length,
      outMismatches: out,
      stateMismatches: state,
      detail: f.length ? `${f.length} comparisons differ (${out} out, ${state} state elements), first: ${f[0].case}` : 'no comparison differs',
    };
  };
  for (const mutant of CONV_MUTANTS) {
    const report = checkConv({ backend: opts.backend, cases, armMappings: [{ arm: 'reg', mapping: 'exact' }], mutant });
    outcomes.push(summarise(mutant, report));
  }
  // The #305 shape: on the host the reverse block order makes the end program write first.
  if (opts.backend.kind === 'host') {
    const report = checkConv({ backend: opts.backend, cases, armMappings: [{ arm: 'reg', mapping: 'exact-racy' }], schedule: 'reverse' });
    outcomes.push(summarise('exact-racy', report));
  }
  outcomes.push(...runUserConvDefects(opts.backend));
  return outcomes;
}

/**
 * The user conv arms defined as planted defects (defineArm({ plantedDefect })), through the same
 * equivalence check as the built-in mutants: every mapping the arm runs, over the mutant cases; on
 * the host also under the reverse block order, where a #305-style race shows. Caught when any
 * comparison differs from the reference arm.
 */
export function runUserConvDefects(backend: Backend): MutantOutcome[] {
  const cases = mutantCases();
  const reference = referenceArm('conv').name;
  const outcomes: MutantOutcome[] = [];
  for (const a of arms('conv').filter((x) => x.user && x.mutant)) {
    const armMappings = a.mappings.map((mapping) => ({ arm: a.name, mapping }));
    const schedules = backend.kind === 'host' ? ([undefined, 'reverse'] as const) : ([undefined] as const);
    const failures = schedules.flatMap((schedule) => checkConv({ backend, cases, armMappings, schedule }).failures.filter((r) => r.arm !== reference));
    const out = failures.reduce((n, r) => n + r.outMismatches, 0);
    const state = failures.reduce((n, r) => n + r.stateMismatches, 0);
    outcomes.push({
      mutant: `arm:${a.name}`,
      plantedDefect: userArm('conv', a.name)?.plantedDefect,
      caught: failures.length > 0,
      failedComparisons: failures.length,
      outMismatches: out,
      stateMismatches: state,
      detail: failures.length
        ? `${failures.length} comparisons differ (${out} out, ${state} state elements), first: ${failures[0].case} ${failures[0].mapping}`
        : `no comparison differs over ${cases.length} cases × ${armMappings.length} mappings${schedules.length > 1 ? ' × forward and reverse block order' : ''}`,
    });
  }
  return outcomes;
}
