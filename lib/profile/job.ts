// What gdn.profile hands to the profiled child process (lib/profile/child.ts): the op, its inputs as
// files (each tensor's raw little-endian bytes with its shape, dtype and layout), the forward options,
// the arms, and the specs of cell-defined arms (the child defines them again: it is another process).

import * as fs from 'fs';
import * as path from 'path';
import { DType, describe } from '../dtype';
import { HostStorage, Tensor } from '../tensor';

export type ProfileOp = 'conv' | 'postconv' | 'fused';
export const PROFILE_OPS: readonly ProfileOp[] = ['conv', 'postconv', 'fused'];

export type JobValue =
  | { kind: 'tensor'; file: string; shape: number[]; dtype: DType; rowStride: number; offset: number }
  | { kind: 'json'; value: unknown };

export interface ProfileJob {
  op: ProfileOp;
  inputs: Record<string, JobValue>;
  /** Options of the op's forward besides the arm (outDtype, Hk, …), JSON values only. */
  forward: Record<string, unknown>;
  /** Arms in launch order; a conv arm may carry its mapping. */
  arms: { label: string; arm: string; mapping?: string }[];
  /** Cell-defined arms to define again in the child, as defineArm took them. */
  define: { op: 'conv' | 'postconv'; spec: Record<string, unknown> }[];
  /** Where the child writes the launches it made (ProfiledLaunch[] as JSON). */
  manifest: string;
  /** The backend the child opens (default 'cuda'; 'host' only where tests drive the child under a stand-in ncu). */
  backend?: 'cuda' | 'host';
}

/** Writes each input to `dir`: tensors as raw bytes (downloaded when on a device), the rest as JSON. */
export function writeInputs(inputs: Record<string, unknown>, dir: string): Record<string, JobValue> {
  const out: Record<string, JobValue> = {};
  for (const [name, v] of Object.entries(inputs)) {
    if (v === undefined) continue;
    if (v instanceof Tensor) {
      v.assertLive(`inputs.${name}`);
      const host = v.host();
      const data = (host.storage as HostStorage).data;
      const file = path.join(dir, `${name}.bin`);
      fs.writeFileSync(file, data);
      out[name] = { kind: 'tensor', file, shape: [...host.shape], dtype: host.dtype, rowStride: host.rowStride, offset: host.offset };
    } else if (v === null || typeof v === 'number' || typeof v === 'boolean' || typeof v === 'string' || (Array.isArray(v) && v.every((x) => typeof x === 'number' || typeof x === 'boolean'))) {
      out[name] = { kind: 'json', value: v };
    } else {
      throw new TypeError(`inputs.${name}: expected a Tensor, a number list or a plain value, got ${describe(v)}`);
    }
  }
  return out;
}

/** The inputs again, as host tensors with the layout they were written with. */
export function readInputs(values: Record<string, JobValue>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, v] of Object.entries(values)) {
    if (v.kind === 'json') out[name] = v.value;
    else {
      const bytes = new Uint8Array(fs.readFileSync(v.file));
      out[name] = new Tensor(v.shape, v.dtype, new HostStorage(bytes), { rowStride: v.rowStride, offset: v.offset });
    }
  }
  return out;
}
