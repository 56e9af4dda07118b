// The profiled process of gdn.profile (docs/SPEC.md §14): `node child.js JOB.json`, run under Nsight
// Compute. It defines the job's cell arms again, reads the inputs, launches each arm once on the CUDA
// backend (ncu profiles the arm kernels of these launches) and writes what it launched to the job's
// manifest. Nothing else launches an arm kernel here: no warm-up, no check, so ncu's launch order is the
// job's arm order.

import * as fs from 'fs';
import { Backend } from '../backend';
import { defineConvArm, definePostconvArm, ConvArmSpec, PostconvArmSpec } from '../arms/define';
import * as conv from '../ops/conv';
import * as postconv from '../ops/postconv';
import * as fused from '../ops/fused';
import { ProfileJob, readInputs } from './job';
import { ProfiledLaunch } from './report';
import { Tensor } from '../tensor';

/** Elements an op's launch writes (its outputs, the conv state excluded): what "per output" divides by. */
export function outputElements(op: ProfileJob['op'], inputs: Record<string, unknown>, forward: Record<string, unknown>): number {
  if (op === 'conv') {
    const [T, C] = (inputs.x as Tensor).shape;
    return T * C;
  }
  const src = (op === 'postconv' ? inputs.convOut : inputs.x) as Tensor;
  const T = src.shape[0];
  const { Hk, Hv, Dk, Dv } = forward as { Hk: number; Hv: number; Dk: number; Dv: number };
  return T * (2 * Hk * Dk + Hv * Dv + 2 * Hv);
}

export async function runJob(job: ProfileJob, backend: Backend): Promise<ProfiledLaunch[]> {
  const userNames = new Set<string>();
  for (const d of job.define) {
    if (d.op === 'conv') defineConvArm(d.spec as unknown as ConvArmSpec, { backend });
    else definePostconvArm(d.spec as unknown as PostconvArmSpec, { backend });
    userNames.add(String(d.spec.name));
  }
  const inputs = readInputs(job.inputs);
  const elements = outputElements(job.op, inputs, job.forward);
  const launches: ProfiledLaunch[] = [];
  // Every launch from this thread (forwardSync), never from koffi's worker thread (forward): Nsight Compute
  // 2025.3.1 could not profile a kernel launched from that thread ("Failed to prepare kernel for profiling",
  // "Unknown Error on device 0", H100, driver 580.159.04) and profiled the same launch made here
  // (docs/CHANGELOG.md 2026-12-06).
  for (const a of job.arms) {
    if (job.op === 'conv') {
      const r = conv.forwardSync(inputs as unknown as conv.ConvInputs, { ...job.forward, arm: a.arm, ...(a.mapping ? { mapping: a.mapping as conv.ConvMapping } : {}), backend });
      launches.push({ label: a.label, ran: `${r.contract.arm}/${r.contract.mapping}`, outputElements: elements, launch: { ...r.contract }, user: userNames.has(a.arm) });
      r.release();
    } else if (job.op === 'postconv') {
      const r = postconv.forwardSync(inputs as unknown as postconv.PostconvInputs, { ...(job.forward as unknown as postconv.PostconvOptions), arm: a.arm, backend });
      launches.push({ label: a.label, ran: r.arm, outputElements: elements, launch: { arm: r.arm }, user: userNames.has(a.arm) });
      r.release();
    } else {
      const r = fused.forwardSync(inputs as unknown as fused.FusedInputs, { ...(job.forward as unknown as fused.FusedOptions), arm: a.arm, backend });
      launches.push({ label: a.label, ran: r.launch.arm, outputElements: elements, launch: { ...r.launch }, user: false });
      r.release();
    }
  }
  return launches;
}

async function main(): Promise<void> {
  const file = process.argv[2];
  if (!file) throw new Error('usage: node child.js JOB.json');
  const job = JSON.parse(fs.readFileSync(file, 'utf8')) as ProfileJob;
  const backend = Backend.open(job.backend ?? 'cuda');
  const launches = await runJob(job, backend);
  fs.writeFileSync(job.manifest, JSON.stringify(launches, null, 1));
}

if (require.main === module) {
  main().then(
    () => process.exit(0),
    (e) => {
      console.error(`gdnlab profile child: ${(e as Error).message}`);
      process.exit(1);
    },
  );
}
