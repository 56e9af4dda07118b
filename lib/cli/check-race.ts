// `gdnlab check race`: trials of each conv mapping (the #305 race); fails if a correct mapping is ever corrupted.

import { ARITHMETIC_VERSION, revision } from '../provenance';
import { Command, UsageError } from './args';
import { BACKEND_FLAG, JSON_FLAG, pickBackend } from './common';

export const checkRaceCommand: Command = {
  words: ['check', 'race'],
  summary: 'race trials: exact and sequence never corrupted, exact-racy caught',
  flags: [
    BACKEND_FLAG,
    { name: 'trials', value: 'N', help: 'trials per mapping (default 1000 on cuda, 102 on the host)' },
    { name: 'widen', value: 'CYCLES', help: 'on cuda: a second round with the race window widened by CYCLES (default 20000; 0: no second round)' },
    { name: 'channels', value: 'N', help: 'channels of the trial case (default 4096)' },
    JSON_FLAG,
  ],
  async run(args) {
    const { raceTrials, raceCase } = await import('../check/race');
    const backend = pickBackend(args);
    const trials = Number(args.flags.get('trials') ?? (backend.kind === 'cuda' ? 1000 : 102));
    const widen = Number(args.flags.get('widen') ?? 20000);
    const channels = Number(args.flags.get('channels') ?? 4096);
    if (!Number.isInteger(trials) || trials < 1) throw new UsageError(`--trials: expected a positive integer, got ${String(args.flags.get('trials'))}`, checkRaceCommand);
    if (!Number.isInteger(widen) || widen < 0) throw new UsageError(`--widen: expected a non-negative integer, got ${String(args.flags.get('widen'))}`, checkRaceCommand);
    if (!Number.isInteger(channels) || channels < 1) throw new UsageError(`--channels: expected a positive integer, got ${String(args.flags.get('channels'))}`, checkRaceCommand);
    // --widen 0 asks for no widening: the second round would repeat the first.
    const widths = backend.kind === 'cuda' && widen > 0 ? [0, widen] : [0];
    const results = [];
    for (const w of widths) {
      for (const mapping of ['exact', 'sequence', 'exact-racy'] as const) {
        // On the host the block order decides: trial 0 forward, trial 1 reverse, then seeded shuffles.
        const schedule = backend.kind === 'host' ? (i: number) => (i === 0 ? 'forward' as const : i === 1 ? 'reverse' as const : { shuffle: i }) : undefined;
        const r = raceTrials({ backend, mapping, trials, widenCycles: w, schedule, case: raceCase(channels) });
        results.push(r);
        if (!args.flags.has('json')) {
          console.log(`${mapping.padEnd(10)} widen ${String(w).padStart(6)}: ${r.corruptedRuns}/${r.trials} runs corrupted (${(100 * r.corruptedFraction).toFixed(1)}%), state wrong in ${r.stateCorruptedRuns}` +
            (r.corruptedRuns ? `; rows hit: ${Object.entries(r.wrongRows).slice(0, 6).map(([k, n]) => `${k}×${n}`).join(', ')}` : ''));
        }
      }
    }
    const bad = results.filter((r) => r.mapping !== 'exact-racy' && r.corruptedRuns > 0).length;
    if (args.flags.has('json')) console.log(JSON.stringify({ backend: backend.kind, device: backend.info().name, revision: revision(), arithmetic: ARITHMETIC_VERSION, results }, null, 2));
    return bad ? 1 : 0;
  },
};
