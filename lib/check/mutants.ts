// Planted mutations of the conv kernels, run through the equivalence suite: a check that cannot
// catch every one of them proves nothing. Each mutant is run on the register arm with the exact
// mapping over cases made to expose it (partial channel tiles, long sequences with state).

import { Backend } from '../backend';
import { CONV_MUTANTS, ConvMutant } from '../ops/conv';
import { checkConv, ConvCase } from './conv';
import { userArm } from '../arms/registry';
import { arms, referenceArm } from '../arms/table';

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

/** What a mutant's failing comparisons add up to (every outcome's counts, built-in or user-defined). */
function tally(failures: { outMismatches: number; stateMismatches: number }[]): Pick<MutantOutcome, 'caught' | 'failedComparisons' | 'outMismatches' | 'stateMismatches'> {
  return {
    caught: failures.length > 0,
    failedComparisons: failures.length,
    outMismatches: failures.reduce((n, r) => n + r.outMismatches, 0),
    stateMismatches: failures.reduce((n, r) => n + r.stateMismatches, 0),
  };
}

export function runConvMutants(opts: { backend: Backend }): MutantOutcome[] {
  const cases = mutantCases();
  const reference = referenceArm('conv').name;
  const outcomes: MutantOutcome[] = [];
  const summarise = (mutant: MutantOutcome['mutant'], report: ReturnType<typeof checkConv>): MutantOutcome => {
    const f = report.failures.filter((r) => r.arm !== reference);
    const t = tally(f);
    return {
      mutant,
      ...t,
      detail: f.length ? `${f.length} comparisons differ (${t.outMismatches} out, ${t.stateMismatches} state elements), first: ${f[0].case}` : 'no comparison differs',
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
 * equivalence check as the built-in mutants: every mapping the arm runs, over the mutant cases, on the
 * backend asked for in forward block order, and on the host replay also in reverse block order — where
 * a #305-style state write shows, as it does not in forward launches on a GPU (docs/SPEC.md, the race:
 * 0 of 1,000 unprovoked H200 runs corrupted). Caught when any comparison differs from the reference arm;
 * the detail says where.
 */
export function runUserConvDefects(backend: Backend): MutantOutcome[] {
  const cases = mutantCases();
  const reference = referenceArm('conv').name;
  const outcomes: MutantOutcome[] = [];
  const planted = arms('conv').filter((x) => x.user && x.mutant);
  if (planted.length === 0) return outcomes;
  const host = backend.kind === 'host' ? backend : Backend.open('host');
  try {
    for (const a of planted) {
      const armMappings = a.mappings.map((mapping) => ({ arm: a.name, mapping }));
      const runs = [
        { where: `${backend.kind}, forward order`, backend, schedule: undefined },
        { where: 'host, reverse order', backend: host, schedule: 'reverse' as const },
      ];
      const found = runs.map((r) => ({ where: r.where, failures: checkConv({ backend: r.backend, cases, armMappings, schedule: r.schedule }).failures.filter((x) => x.arm !== reference) }));
      const failures = found.flatMap((f) => f.failures);
      const t = tally(failures);
      outcomes.push({
        mutant: `arm:${a.name}`,
        plantedDefect: userArm('conv', a.name)?.plantedDefect,
        ...t,
        detail: failures.length
          ? `${failures.length} comparisons differ (${t.outMismatches} out, ${t.stateMismatches} state elements): ${found.map((f) => `${f.where} ${f.failures.length}`).join(', ')}; first: ${failures[0].case} ${failures[0].mapping}`
          : `no comparison differs over ${cases.length} cases × ${armMappings.length} mappings (${found.map((f) => f.where).join('; ')})`,
      });
    }
  } finally {
    if (host !== backend) host.close();
  }
  return outcomes;
}
