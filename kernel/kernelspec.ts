// The kernel.json of the gdnlab kernel.

export const DEFAULT_KERNEL_NAME = 'gdnlab';
export const DISPLAY_NAME = 'gdnlab (TypeScript)';

export interface KernelSpecJson {
  argv: string[];
  display_name: string;
  language: string;
  interrupt_mode: 'signal';
  env: Record<string, string>;
  metadata: Record<string, unknown>;
}

export interface KernelSpecOptions {
  /** Absolute path of the node binary (process.execPath at install time). */
  node: string;
  /** Absolute path of dist/kernel/main.js. */
  mainJs: string;
  /** The NODE_PATH folder holding the `gdnlab` link (see package-resolution.ts). */
  nodePathDir: string;
  displayName?: string;
  /** Extra environment for the kernel process (NAME → value). */
  env?: Record<string, string>;
}

const KERNEL_NAME = /^[A-Za-z0-9._-]+$/;

export function checkKernelName(name: string): string {
  if (!KERNEL_NAME.test(name)) throw new Error(`--name: expected letters, digits, '.', '_' or '-', got ${JSON.stringify(name)}`);
  return name;
}

export function kernelSpec(o: KernelSpecOptions): KernelSpecJson {
  return {
    argv: [o.node, o.mainJs, '--connection-file', '{connection_file}'],
    display_name: o.displayName ?? DISPLAY_NAME,
    language: 'typescript',
    interrupt_mode: 'signal',
    env: { NODE_PATH: o.nodePathDir, ...(o.env ?? {}) },
    metadata: { debugger: false },
  };
}
