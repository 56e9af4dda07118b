// `gdnlab check sanitize`: one small launch of every arm, the workload compute-sanitizer runs under.

import { Command } from './args';
import { BACKEND_FLAG, DEFINE_FLAG, defineArms, pickBackend } from './common';

export const checkSanitizeCommand: Command = {
  words: ['check', 'sanitize'],
  summary: 'one small launch of every arm (run it under compute-sanitizer)',
  flags: [BACKEND_FLAG, DEFINE_FLAG],
  async run(args) {
    const backend = pickBackend(args);
    await defineArms(args, backend);
    const n = await (await import('../check/sanitize')).sanitizeWorkload(backend, (l) => console.log(l));
    console.log(`sanitize workload: ${n} launches completed`);
    return 0;
  },
};
