// `gdnlab profile conv|postconv|fused --arms A,B`: each arm launched once under Nsight Compute in a child
// process (lib/profile, docs/SPEC.md §14) at Qwen3.5-4B's shapes, the table printed as text or JSON.

import { Command, Flag, UsageError } from './args';
import { BACKEND_FLAG, DEFINE_FLAG, JSON_FLAG, defineArms, pickBackend } from './common';

const ARMS_FLAG: Flag = { name: 'arms', value: 'A,B', help: "the arms to profile, in order ('vec' or, for conv, 'vec/exact')" };
const TOKENS_FLAG: Flag = { name: 'tokens', value: 'N', help: 'tokens of the one sequence (default 8192; Qwen3.5-4B layer: C = 8192, Hk = 16, Hv = 32, head size 128)' };
const NCU_FLAG: Flag = { name: 'ncu', value: 'PATH', help: "Nsight Compute's ncu (default: GDNLAB_NCU, PATH, /usr/local/cuda/bin)" };

function profileCommand(op: 'conv' | 'postconv' | 'fused'): Command {
  return {
    words: ['profile', op],
    summary: `why is this ${op} arm slow: each arm once under Nsight Compute (ncu), DRAM traffic, occupancy, stalls`,
    flags: [ARMS_FLAG, TOKENS_FLAG, BACKEND_FLAG, NCU_FLAG, DEFINE_FLAG, JSON_FLAG],
    details: ['Needs the CUDA backend on an NVIDIA GPU and ncu; elsewhere it says what is missing and shows each arm\'s launch and the op\'s minimal traffic (exit 3).'],
    async run(args) {
      const arms = args.flags.get('arms');
      if (typeof arms !== 'string' || arms.trim() === '') throw new UsageError('--arms: expected the arms to profile, e.g. --arms scalar,vec,stream-mufu');
      const tokensText = args.flags.get('tokens') ?? '8192';
      const T = Number(tokensText);
      if (!Number.isInteger(T) || T < 1 || T > 1 << 20) throw new UsageError(`--tokens: expected an integer in 1..${1 << 20}, got ${String(tokensText)}`);
      const backend = pickBackend(args);
      await defineArms(args, backend);
      const { profile } = await import('../profile/profile');
      const { syntheticInputs } = await import('../profile/shapes');
      const { inputs, forward } = syntheticInputs(op, T);
      const ncu = args.flags.get('ncu');
      const r = await profile(op, inputs, { ...forward, arms: arms.split(',').map((a) => a.trim()).filter(Boolean), backend, ncu: typeof ncu === 'string' ? ncu : undefined, show: false });
      if (args.flags.has('json')) console.log(JSON.stringify({ op, tokens: T, profiled: r.profiled, unavailable: r.unavailable, minimalBytes: r.minimalBytes, copyGBs: r.copyGBs, device: r.device, rows: r.analysis?.rows ?? null, missing: r.analysis?.missing ?? null, plan: r.plan, csv: r.csvFile, report: r.reportFile }, null, 2));
      else console.log(r.text);
      return r.profiled ? 0 : 3;
    },
  };
}

export const profileConvCommand = profileCommand('conv');
export const profilePostconvCommand = profileCommand('postconv');
export const profileFusedCommand = profileCommand('fused');
