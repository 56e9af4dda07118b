// `gdnlab check fused`: the fused conv → post-conv op against conv(scalar) → post-conv(tree), bit for bit (lib/check/fused.ts).

import { checkFused, fusedMatrix, runFusedMutants, FUSED_OUTPUTS, FusedCaseResult, Mismatches } from '../check/fused';
import { Command } from './args';
import { BACKEND_FLAG, DEFINE_FLAG, JSON_FLAG, MUTANTS_FLAG, QUICK_FLAG, progressLine, withHostTwin } from './common';

export const checkFusedCommand: Command = {
  words: ['check', 'fused'],
  summary: 'fused conv→post-conv vs conv(scalar)→post-conv(tree), bit for bit',
  flags: [BACKEND_FLAG, QUICK_FLAG, MUTANTS_FLAG, JSON_FLAG, DEFINE_FLAG],
  run: (args) => withHostTwin(args, async (backend, hostBackend) => {
    const json = args.flags.has('json');
    const report = await checkFused({ backend, hostBackend, cases: fusedMatrix({ quick: args.flags.has('quick') }), onCase: json ? undefined : progressLine(100) });
    let failed = report.failures.length + report.crossBackend.filter((x) => !x.ok).length;
    const out: Record<string, unknown> = { backend: backend.kind, device: backend.info().name, equivalence: report };
    const fmt = (m: Mismatches) => FUSED_OUTPUTS.map((o) => `${o} ${m[o]}`).join(', ');
    // Arm names padded to one width keep the case names in one column.
    const width = Math.max(...report.arms.map((a) => a.length));
    const ran = (r: FusedCaseResult) => (r.armRan === r.arm ? '' : ` (ran ${r.armRan})`);
    if (!json) {
      for (const r of report.results) console.log(`${r.ok ? 'ok  ' : 'FAIL'} ${r.arm.padEnd(width)} ${r.case}${ran(r)}: fused vs conv(scalar)→post-conv(tree) — ${fmt(r.mismatches)}`);
      for (const x of report.crossBackend) if (!x.ok) console.log(`FAIL cuda vs host (fused ${x.arm}) ${x.case}: ${fmt(x.mismatches)}`);
      const perArm = report.arms.map((a) => `${a} ${report.failures.filter((r) => r.arm === a).length}`).join(', ');
      const cases = new Set(report.results.map((r) => r.case)).size;
      console.log(`equivalence: ${cases} cases × ${report.arms.length} arm${report.arms.length === 1 ? '' : 's'} = ${report.results.length} comparisons, ${report.failures.length} mismatching (${perArm})`
        + (report.crossBackend.length ? `; cuda==host on ${report.crossBackend.filter((x) => x.ok).length}/${report.crossBackend.length}` : ''));
    }
    if (args.flags.has('mutants')) {
      const mutants = await runFusedMutants(backend, undefined, report.arms);
      out.mutants = mutants;
      for (const m of mutants) {
        if (!m.caught) failed++;
        if (!json) console.log(`${m.caught ? 'caught' : 'MISSED'} ${m.arm.padEnd(width)} mutant ${m.mutant}: ${m.detail}`);
      }
    }
    if (json) console.log(JSON.stringify(out, null, 2));
    return failed ? 1 : 0;
  }),
};
