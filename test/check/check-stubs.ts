// Shared by the lib/check edge tests (test/check/*-edges.test.ts): replacing a module's exports for one test,
// and small host tensors and op results that stand in for a kernel's answer. lib/check calls the ops, the
// references and the arm table through the imported module objects (CommonJS), so assigning to an export
// replaces it for the check; restore() undoes every replacement, in reverse order, after each test.

import { Tensor } from '../../lib/tensor';
import { DType } from '../../lib/dtype';

import { Stubs } from '../stand-ins';

export { Stubs };

/** A host tensor of the given values (rounded to dtype). */
export function tensor(values: number[], shape: number[], dtype: DType = 'f32'): Tensor {
  return Tensor.from(values, shape, dtype);
}

/** Counts release() calls on the objects it makes, by name. */
export class Releases {
  readonly counts: Record<string, number> = {};
  track<T extends object>(name: string, obj: T): T & { release(): void } {
    this.counts[name] ??= 0;
    return Object.assign(obj, { release: () => void this.counts[name]++ });
  }
}

/** An arm table entry as lib/arms/table's arms() gives it (only the fields the checks read). */
export function armInfo(name: string, flags: { reference?: boolean; mutant?: boolean; user?: boolean; mappings?: string[]; requires?: string[] } = {}) {
  return { name, reference: !!flags.reference, mutant: !!flags.mutant, user: !!flags.user, mappings: flags.mappings ?? [], requires: flags.requires ?? [] };
}
