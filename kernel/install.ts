// Installs (or removes) the gdnlab kernelspec with the Jupyter of a given Python:
//
//   node dist/kernel/install.js --python <python> [--user | --sys-prefix | --prefix DIR]
//        [--name gdnlab] [--display-name NAME] [--env NAME=VALUE]... [--uninstall]
//
// The kernel.json names this node binary and this build's main.js by absolute path, so the
// kernel starts the same way whatever `node` is on PATH later.

import { spawnSync } from 'child_process';
import fs from 'fs';
import os from 'os';
import path from 'path';
import { checkKernelName, DEFAULT_KERNEL_NAME, kernelSpec } from './kernelspec';
import { ensureNodePathLink, packageRoot } from './package-resolution';

const USAGE = `usage: node dist/kernel/install.js --python <python-with-jupyter> [--user | --sys-prefix | --prefix DIR]
                                  [--name NAME] [--display-name TEXT] [--env NAME=VALUE]... [--uninstall]
  --user        the per-user kernels folder (default)
  --sys-prefix  <sys.prefix of that python>/share/jupyter/kernels
  --prefix DIR  DIR/share/jupyter/kernels
  --uninstall   remove the kernelspec from the chosen place instead`;

export type Scope = { kind: 'user' } | { kind: 'sys-prefix' } | { kind: 'prefix'; dir: string };

export interface InstallArgs {
  python: string;
  scope: Scope;
  name: string;
  displayName?: string;
  env: Record<string, string>;
  uninstall: boolean;
}

export function parseInstallArgs(argv: string[]): InstallArgs {
  let python: string | undefined;
  let scope: Scope | undefined;
  let name = DEFAULT_KERNEL_NAME;
  let displayName: string | undefined;
  const env: Record<string, string> = {};
  let uninstall = false;
  const value = (i: number, flag: string): string => {
    const v = argv[i + 1];
    if (v === undefined || v.startsWith('--')) throw new Error(`${flag}: missing value\n${USAGE}`);
    return v;
  };
  const setScope = (s: Scope, flag: string) => {
    if (scope) throw new Error(`${flag}: choose one of --user, --sys-prefix, --prefix\n${USAGE}`);
    scope = s;
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    switch (a) {
      case '--python':
        python = value(i++, a);
        break;
      case '--user':
        setScope({ kind: 'user' }, a);
        break;
      case '--sys-prefix':
        setScope({ kind: 'sys-prefix' }, a);
        break;
      case '--prefix':
        setScope({ kind: 'prefix', dir: path.resolve(value(i++, a)) }, a);
        break;
      case '--name':
        name = checkKernelName(value(i++, a));
        break;
      case '--display-name':
        displayName = value(i++, a);
        break;
      case '--env': {
        const kv = value(i++, a);
        const eq = kv.indexOf('=');
        if (eq <= 0) throw new Error(`--env: expected NAME=VALUE, got ${JSON.stringify(kv)}`);
        env[kv.slice(0, eq)] = kv.slice(eq + 1);
        break;
      }
      case '--uninstall':
        uninstall = true;
        break;
      case '--help':
      case '-h':
        process.stdout.write(`${USAGE}\n`);
        process.exit(0);
        break;
      default:
        throw new Error(`unknown argument ${JSON.stringify(a)}\n${USAGE}`);
    }
  }
  if (!python) throw new Error(`--python: missing (the Python whose Jupyter gets the kernel)\n${USAGE}`);
  return { python, scope: scope ?? { kind: 'user' }, name, displayName, env, uninstall };
}

function runPython(python: string, args: string[]): { stdout: string; stderr: string } {
  const r = spawnSync(python, args, { encoding: 'utf8' });
  if (r.error) throw new Error(`--python ${python}: cannot run it (${r.error.message})`);
  if (r.status !== 0) throw new Error(`${python} ${args.join(' ')} failed with exit code ${r.status}:\n${r.stderr || r.stdout}`);
  return { stdout: r.stdout, stderr: r.stderr };
}

function scopeFlags(scope: Scope): string[] {
  switch (scope.kind) {
    case 'user':
      return ['--user'];
    case 'sys-prefix':
      return ['--sys-prefix'];
    case 'prefix':
      return ['--prefix', scope.dir];
  }
}

/** The folder `jupyter kernelspec install` puts kernel `name` in for this scope. */
export function kernelDir(python: string, scope: Scope, name: string): string {
  if (scope.kind === 'prefix') return path.join(scope.dir, 'share', 'jupyter', 'kernels', name);
  const probe = 'import json, sys\nfrom jupyter_core.paths import jupyter_data_dir\nprint(json.dumps({"user": jupyter_data_dir(), "sys_prefix": sys.prefix}))';
  const dirs = JSON.parse(runPython(python, ['-c', probe]).stdout) as { user: string; sys_prefix: string };
  return scope.kind === 'user' ? path.join(dirs.user, 'kernels', name) : path.join(dirs.sys_prefix, 'share', 'jupyter', 'kernels', name);
}

export function install(args: InstallArgs): string {
  const mainJs = path.join(__dirname, 'main.js');
  if (!fs.existsSync(mainJs)) throw new Error(`${mainJs} is missing: build the kernel first (npx tsc -p tsconfig.json)`);
  const root = packageRoot();
  const spec = kernelSpec({ node: process.execPath, mainJs, nodePathDir: ensureNodePathLink(root), displayName: args.displayName, env: args.env });
  const staging = fs.mkdtempSync(path.join(os.tmpdir(), 'gdnlab-kernelspec-'));
  try {
    const specDir = path.join(staging, args.name);
    fs.mkdirSync(specDir);
    fs.writeFileSync(path.join(specDir, 'kernel.json'), `${JSON.stringify(spec, null, 2)}\n`);
    const out = runPython(args.python, ['-m', 'jupyter', 'kernelspec', 'install', '--replace', '--name', args.name, ...scopeFlags(args.scope), specDir]);
    const m = /Installed kernelspec \S+ in (.+)/.exec(`${out.stderr}\n${out.stdout}`);
    return m ? m[1].trim() : kernelDir(args.python, args.scope, args.name);
  } finally {
    fs.rmSync(staging, { recursive: true, force: true });
  }
}

/** Removes the kernelspec; returns the removed folder, or null when there was none. */
export function uninstall(args: InstallArgs): string | null {
  const dir = kernelDir(args.python, args.scope, args.name);
  if (!fs.existsSync(path.join(dir, 'kernel.json'))) return null;
  fs.rmSync(dir, { recursive: true, force: true });
  return dir;
}

/** The command: install, or with --uninstall remove; says what it did on stdout. Exported for its tests. */
export function main(argv: string[] = process.argv.slice(2)): void {
  const args = parseInstallArgs(argv);
  if (args.uninstall) {
    const removed = uninstall(args);
    process.stdout.write(removed ? `Removed kernelspec ${args.name} from ${removed}\n` : `No kernelspec ${args.name} in ${kernelDir(args.python, args.scope, args.name)}: nothing to remove\n`);
    return;
  }
  const where = install(args);
  process.stdout.write(`Installed kernelspec ${args.name} in ${where}\n`);
}

if (require.main === module) {
  try {
    main();
  } catch (e) {
    process.stderr.write(`${e instanceof Error ? e.message : String(e)}\n`);
    process.exit(1);
  }
}
