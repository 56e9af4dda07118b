// The arms defined in this process (docs/USER-ARMS.md): name → native id, per op family. The op
// wrappers (lib/ops/conv.ts, lib/ops/postconv.ts) resolve an arm name here when it is not built in,
// and the checks (lib/check) list these arms beside the built-in ones. No other module is imported
// here, so the op wrappers can import it without a cycle.

export type ArmOp = 'conv' | 'postconv';

/** What the registry keeps of a defined arm (lib/arms/define.ts makes them). */
export interface RegisteredArm {
  op: ArmOp;
  name: string;
  /** The native id (>= GDN_USER_ARM_FIRST_ID) used in gdn_conv_args.arm / gdn_postconv_args.arm. */
  id: number;
  /** conv: the mappings the arm supports. */
  mappings: readonly string[];
  description: string;
  /** Called before the arm is timed (compiles and registers the unchecked host module once). */
  prepareTiming(): void;
}

/** First id of a user arm (gdn_user.h GDN_USER_ARM_FIRST_ID). */
export const USER_ARM_FIRST_ID = 64;

const arms: Record<ArmOp, Map<string, RegisteredArm>> = { conv: new Map(), postconv: new Map() };

export function registerArm(a: RegisteredArm): void {
  arms[a.op].set(a.name, a);
}

export function forgetArm(op: ArmOp, name: string): void {
  arms[op].delete(name);
}

export function userArm(op: ArmOp, name: string): RegisteredArm | undefined {
  return arms[op].get(name);
}

export function userArmById(op: ArmOp, id: number): RegisteredArm | undefined {
  for (const a of arms[op].values()) if (a.id === id) return a;
  return undefined;
}

/** The defined arms of an op family, in definition order. */
export function userArms(op: ArmOp): RegisteredArm[] {
  return [...arms[op].values()];
}

/**
 * The native code of an arm name: its index among the built-in names, else a defined arm's id.
 * Throws a TypeError naming `what` and listing every arm otherwise.
 */
export function armCode(op: ArmOp, name: unknown, builtIn: readonly string[], what = 'arm'): number {
  if (typeof name === 'string') {
    const i = builtIn.indexOf(name);
    if (i >= 0) return i;
    const u = arms[op].get(name);
    if (u) return u.id;
  }
  const all = [...builtIn, ...arms[op].keys()].map((n) => `'${n}'`).join(', ');
  throw new TypeError(`${what}: expected one of ${all}, got ${typeof name === 'string' ? `'${name}'` : String(name)}`);
}

/** The name of a native arm code (built-in index or defined arm id). */
export function armName(op: ArmOp, code: number, builtIn: readonly string[]): string {
  if (code >= 0 && code < builtIn.length) return builtIn[code];
  return userArmById(op, code)?.name ?? `arm#${code}`;
}
