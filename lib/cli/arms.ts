// `gdnlab arms`: libgdn's arm registry, every op family, with each arm's launch contract.

import { buildInfo } from '../backend';
import { arms as armTable, ARM_OPS, ArmInfo } from '../arms/table';
import { Command } from './args';
import { BACKEND_FLAG, DEFINE_FLAG, JSON_FLAG, defineArms, pickBackend, writeOut } from './common';

function armFlags(a: ArmInfo): string {
  const f = [a.reference && 'reference', a.mutant && 'PLANTED MUTANT', a.barrier && 'barriers', a.shuffle && 'shuffles', a.user && 'user', a.fallbackTarget && 'fallback target'];
  return f.filter(Boolean).join(', ');
}

export const armsCommand: Command = {
  words: ['arms'],
  summary: 'every arm of every op with its launch contract (from libgdn)',
  flags: [JSON_FLAG, DEFINE_FLAG, { ...BACKEND_FLAG, help: 'the backend --define compiles the user arms for' }],
  async run(args) {
    if (args.flags.has('define')) await defineArms(args, pickBackend(args));
    const table = Object.fromEntries(ARM_OPS.map((op) => [op, armTable(op)]));
    if (args.flags.has('json')) {
      await writeOut(JSON.stringify({ library: buildInfo(), arms: table }, null, 2) + '\n');
      return 0;
    }
    const lines: string[] = [];
    for (const op of ARM_OPS) {
      lines.push(`${op}:`);
      for (const a of table[op]) {
        const shared = a.sharedBytes.perK ? `${a.sharedBytes.base} + ${a.sharedBytes.perK}·K B shared` : a.sharedBytes.base ? `${a.sharedBytes.base} B shared` : 'no shared memory';
        const per = op === 'postconv' ? `${a.perBlock} head slot(s) x ${a.tokensPerProgram} token(s) per block, layout ${a.layout}`
          : op === 'fused' ? `${a.perBlock} head slot(s) x a ${a.tokensPerProgram}-token program per block` : `${a.perBlock} channels per block`;
        const tokens = op === 'conv' ? (a.tokensPerProgram ? `, ${a.tokensPerProgram}-token programs` : ', whole sequences') : '';
        const threads = a.threadsFromD ? `max(32, pow2 >= Dk) threads (<= ${a.threadsPerBlock})` : `${a.threadsPerBlock} threads`;
        lines.push(`  ${String(a.id).padStart(2)} ${a.name.padEnd(12)} ${a.description}`);
        lines.push(`     ${threads}, ${per}${tokens}; ${shared}` +
          (op === 'conv' ? `; mappings ${a.mappings.join('/')}` : '') +
          (a.minBlocksPerSm > 1 ? `; >= ${a.minBlocksPerSm} blocks/SM` : '') +
          (a.fallbackRule ? `; ${a.fallbackRule}` : '') +
          (armFlags(a) ? ` [${armFlags(a)}]` : ''));
      }
    }
    await writeOut(lines.join('\n') + '\n');
    return 0;
  },
};
