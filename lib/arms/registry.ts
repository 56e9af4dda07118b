// The arms defined in this process (docs/USER-ARMS.md), per op family. libgdn's arm table
// (lib/arms/table.ts) lists them with every other arm; this is what only TypeScript knows: whether the
// definition is live (the checks' default lists take undefined arms out) and how to prepare the arm
// for timing. No other module is imported here, so the op wrappers can import it without a cycle.

export type ArmOp = 'conv' | 'postconv';

/** What the registry keeps of a defined arm (lib/arms/define.ts makes them). */
export interface RegisteredArm {
  op: ArmOp;
  name: string;
  /** The native id (libgdn's arm table position) used in gdn_conv_args.arm / gdn_postconv_args.arm. */
  id: number;
  /** conv: the mappings the arm supports. */
  mappings: readonly string[];
  description: string;
  /**
   * Set when the arm is a planted defect (docs/USER-ARMS.md, "Planted defects"): wrong on purpose, so
   * the equivalence checks leave it out of what must equal the reference and the mutant runners
   * (runConvMutants, runPostconvMutants) require that it is caught.
   */
  plantedDefect?: string;
  /** Called before the arm is timed (compiles and registers the unchecked host module once). */
  prepareTiming(): void;
}

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
