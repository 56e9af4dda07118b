// `gdnlab check conv`: every conv arm and mapping against scalar, bit for bit (lib/check/conv.ts).

import { ARITHMETIC_VERSION, revision } from '../provenance';
import { checkConv, convMatrix, ConvCheckReport } from '../check/conv';
import { CONV_MUTANTS } from '../ops/conv';
import { Command } from './args';
import { BACKEND_FLAG, DEFINE_FLAG, JSON_FLAG, MUTANTS_FLAG, QUICK_FLAG, progressLine, withHostTwin } from './common';

function printConvReport(report: ConvCheckReport, label: string): void {
  const byCase = new Map<string, string[]>();
  for (const r of report.results) {
    const cell = r.maxAbsError !== undefined  // the reference arm's row: its error against float64
      ? `f64 max|err| ${r.maxAbsError.toExponential(2)}${r.withinTolerance ? '' : ' OUT OF TOLERANCE'}${r.roundingViolations ? ` ROUNDING: ${r.roundingViolations} bf16 elements not rounded to nearest even` : ''}${r.stateMismatches ? ` STATE: ${r.stateMismatches} elements differ from the raw inputs` : ''}`
      : `${r.arm}/${r.mapping}${r.armRan !== r.arm ? `(ran ${r.armRan})` : ''} ${r.ok ? 'ok' : `MISMATCH out ${r.outMismatches} state ${r.stateMismatches}`}`;
    byCase.set(r.case, [...(byCase.get(r.case) ?? []), cell]);
  }
  for (const [name, cells] of byCase) {
    const bad = cells.filter((c) => /MISMATCH|OUT OF|ROUNDING:|STATE:/.test(c));
    console.log(`${bad.length ? 'FAIL' : 'ok  '} ${name}: ${bad.length ? bad.join('; ') : cells[0]}`);
  }
  for (const x of report.crossBackend) {
    if (!x.ok) console.log(`FAIL cuda vs host (scalar) ${x.case}: out ${x.outMismatches}, state ${x.stateMismatches} mismatching elements`);
  }
  const crossBad = report.crossBackend.filter((x) => !x.ok).length;
  console.log(`${label}: ${report.results.length} comparisons, ${report.failures.length} mismatching${report.crossBackend.length ? `; cuda==host on ${report.crossBackend.length - crossBad}/${report.crossBackend.length} cases` : ''}`);
}

export const checkConvCommand: Command = {
  words: ['check', 'conv'],
  summary: 'every conv arm and mapping vs scalar, bit for bit (on CUDA also cuda vs host)',
  flags: [BACKEND_FLAG, QUICK_FLAG, MUTANTS_FLAG, JSON_FLAG, DEFINE_FLAG],
  run: (args) => withHostTwin(args, async (backend, hostBackend) => {
    const json = args.flags.has('json');
    const cases = convMatrix({ quick: args.flags.has('quick') });
    const report = checkConv({ backend, hostBackend, cases, onCase: json ? undefined : progressLine(70) });
    let failed = report.failures.length + report.crossBackend.filter((x) => !x.ok).length;
    const out: Record<string, unknown> = { backend: backend.kind, revision: revision(), arithmetic: ARITHMETIC_VERSION, device: backend.info().name, equivalence: report };
    if (!json) printConvReport(report, 'equivalence');
    if (args.flags.has('mutants')) {
      const { runConvMutants } = await import('../check/mutants');
      const mutants = runConvMutants({ backend });
      out.mutants = mutants;
      for (const m of mutants) {
        if (!json) console.log(`${m.caught ? 'caught' : 'MISSED'} ${m.plantedDefect !== undefined ? `planted defect ${m.mutant} (${m.plantedDefect})` : `mutant ${m.mutant}`}: ${m.detail}`);
        if (!m.caught) failed++;
      }
      if (!json) console.log(`mutants: ${mutants.filter((m) => m.caught).length}/${mutants.length} caught (${CONV_MUTANTS.length} planted mutants${backend.kind === 'host' ? ' + the racy mapping under reverse order' : ''}${mutants.some((m) => m.plantedDefect !== undefined) ? ` + ${mutants.filter((m) => m.plantedDefect !== undefined).length} user arms defined as planted defects` : ''})`);
    }
    if (json) console.log(JSON.stringify(out, null, 2));
    return failed ? 1 : 0;
  }),
};
