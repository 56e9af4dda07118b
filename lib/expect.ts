// Argument checks of plain values, whose messages name the argument and what was expected. They sit
// below lib/ops and lib/arms because both validate names and sizes with them (the tensor checks are in
// lib/ops/common.ts, beside the op wrappers that use them).

import { describe } from './dtype';

export function expectInt(value: unknown, what: string, min: number, max = Number.MAX_SAFE_INTEGER): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    const range = max === Number.MAX_SAFE_INTEGER ? `an integer >= ${min}` : `an integer in ${min}..${max}`;
    throw new RangeError(`${what}: expected ${range}, got ${describe(value)}`);
  }
  return value;
}

export function expectChoice<T extends string>(value: unknown, what: string, choices: readonly T[]): T {
  if (typeof value !== 'string' || !(choices as readonly string[]).includes(value)) {
    throw new TypeError(`${what}: expected one of ${choices.map((c) => `'${c}'`).join(', ')}, got ${describe(value)}`);
  }
  return value as T;
}
