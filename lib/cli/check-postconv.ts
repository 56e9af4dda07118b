// `gdnlab check postconv`: every post-conv arm against tree, bit for bit, and tree against float64 (lib/check/postconv.ts).

import { checkPostconv, postconvErrorBound, postconvMatrix, runPostconvDefects, runSeq4Mutant, OUTPUTS, PostconvOutput } from '../check/postconv';
import { Command } from './args';
import { BACKEND_FLAG, DEFINE_FLAG, JSON_FLAG, MUTANTS_FLAG, QUICK_FLAG, progressLine, withHostTwin } from './common';

export const checkPostconvCommand: Command = {
  words: ['check', 'postconv'],
  summary: 'every post-conv arm vs tree, bit for bit; tree vs the float64 reference',
  flags: [BACKEND_FLAG, QUICK_FLAG, MUTANTS_FLAG, JSON_FLAG, DEFINE_FLAG],
  run: (args) => withHostTwin(args, async (backend, hostBackend) => {
    const json = args.flags.has('json');
    const cases = postconvMatrix({ quick: args.flags.has('quick') });
    const report = await checkPostconv({ backend, hostBackend, cases, onCase: json ? undefined : progressLine(90) });
    let failed = report.failures.length + report.crossBackend.filter((x) => !x.ok).length;
    const out: Record<string, unknown> = { backend: backend.kind, device: backend.info().name, equivalence: report };
    if (!json) {
      for (const r of report.results.filter((x) => x.arm === 'tree' && !x.ok)) {
        const bad = OUTPUTS.filter((o) => r.referenceViolations![o] > 0).map((o) => `${o} ${r.referenceViolations![o]} elements (max |error| ${r.maxAbsError![o].toExponential(2)} > ${postconvErrorBound(o, cases.find((c) => c.name === r.case)!).toExponential(1)})`);
        console.log(`FAIL ${r.case}: tree vs float64 reference — ${bad.join(', ')}`);
      }
      for (const r of report.results.filter((x) => x.arm !== 'tree')) {
        const mm = OUTPUTS.map((o) => `${o} ${r.mismatches[o]}`).join(', ');
        console.log(`${r.ok ? 'ok  ' : 'FAIL'} ${r.case}: ${r.arm}${r.armRan !== r.arm ? ` (ran ${r.armRan})` : ''} vs tree — ${mm}`);
      }
      for (const x of report.crossBackend) if (!x.ok) console.log(`FAIL cuda vs host (tree) ${x.case}: ${OUTPUTS.map((o) => `${o} ${x.mismatches[o]}`).join(', ')}`);
      const worst = { q: 0, k: 0, v: 0, g: 0, beta: 0 } as Record<PostconvOutput, number>;
      for (const r of report.results) if (r.maxAbsError) for (const o of OUTPUTS) worst[o] = Math.max(worst[o], r.maxAbsError[o]);
      console.log(`tree vs float64 reference, worst max |error|: ${OUTPUTS.map((o) => `${o} ${worst[o].toExponential(2)}`).join(', ')}`);
      console.log(`equivalence: ${report.results.length} results, ${report.failures.length} failing${report.crossBackend.length ? `; cuda==host on ${report.crossBackend.filter((x) => x.ok).length}/${report.crossBackend.length}` : ''}`);
    }
    if (args.flags.has('mutants')) {
      const m = await runSeq4Mutant(backend);
      out.seq4 = m;
      if (!m.caught) failed++;
      if (!json) console.log(`${m.caught ? 'caught' : 'MISSED'} mutant seq4: differs in ${m.caughtInF32}/${m.f32Cases} f32-output cases, ${m.caughtInBf16}/${m.bf16Cases} bf16-output cases`);
      const defects = await runPostconvDefects(backend);
      out.userDefects = defects;
      for (const d of defects) {
        if (!d.caught) failed++;
        if (!json) console.log(`${d.caught ? 'caught' : 'MISSED'} planted defect arm ${d.arm} (${d.plantedDefect}): differs in ${d.caughtInF32}/${d.f32Cases} f32-output cases, ${d.caughtInBf16}/${d.bf16Cases} bf16-output cases`);
      }
    }
    if (json) console.log(JSON.stringify(out, null, 2));
    return failed ? 1 : 0;
  }),
};
