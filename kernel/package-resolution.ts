// Makes `import * as gdn from 'gdnlab'` work in a notebook in any folder, with types.
//
// Two resolvers must find the package:
// - Node's require (tslab turns imports into require from the notebook's folder): NODE_PATH gets
//   a folder holding one entry, a `gdnlab` symlink to the package root.
// - tslab's TypeScript (node10 resolution from the notebook's folder, looking only in
//   node_modules folders; it ignores NODE_PATH): tslab's compiler reads the file system through
//   the `ts.sys` object of its TypeScript; we redirect `<notebook folder>/node_modules/gdnlab/**`
//   to the package root there (and realpath maps it back, so the package's own imports resolve
//   from the package's node_modules). Nothing on disk is changed.
// A gdnlab installed in a node_modules folder above the notebook wins over both.

import crypto from 'crypto';
import fs from 'fs';
import Module from 'module';
import os from 'os';
import path from 'path';

export const PACKAGE_NAME = 'gdnlab';

/** The package a notebook's `import 'gdnlab'` loads: $GDNLAB_PACKAGE_ROOT, else the project this kernel was built in. */
export function packageRoot(env: NodeJS.ProcessEnv = process.env): string {
  const override = env.GDNLAB_PACKAGE_ROOT;
  const root = override ? path.resolve(override) : path.resolve(__dirname, '..', '..');
  const pkgFile = path.join(root, 'package.json');
  let name: unknown;
  try {
    name = (JSON.parse(fs.readFileSync(pkgFile, 'utf8')) as { name?: unknown }).name;
  } catch (e) {
    throw new Error(`${override ? 'GDNLAB_PACKAGE_ROOT' : 'kernel install'}: cannot read ${pkgFile} (${(e as Error).message})`);
  }
  if (name !== PACKAGE_NAME) throw new Error(`${pkgFile}: expected "name": "${PACKAGE_NAME}", got ${JSON.stringify(name)}`);
  return root;
}

/** The package.json folder of a gdnlab installed in node_modules at or above `dir`, if any. */
export function installedPackageAbove(dir: string): string | null {
  for (let d = path.resolve(dir); ; d = path.dirname(d)) {
    const candidate = path.join(d, 'node_modules', PACKAGE_NAME);
    if (fs.existsSync(path.join(candidate, 'package.json'))) return candidate;
    if (path.dirname(d) === d) return null;
  }
}

/** The folder put on NODE_PATH for `root`: inside the build output for this project, else a temp folder per root. */
export function nodePathDirFor(root: string): string {
  const own = path.resolve(__dirname, '..', '..');
  if (path.resolve(root) === own) return path.join(own, 'dist', 'kernel', 'node_path');
  const tag = crypto.createHash('sha1').update(path.resolve(root)).digest('hex').slice(0, 12);
  return path.join(os.tmpdir(), `gdnlab-node-path-${tag}`);
}

function linkPointsTo(link: string, target: string): boolean {
  try {
    return fs.realpathSync(link) === fs.realpathSync(target);
  } catch {
    return false;
  }
}

function makeLink(dir: string, root: string): string {
  fs.mkdirSync(dir, { recursive: true });
  const link = path.join(dir, PACKAGE_NAME);
  if (linkPointsTo(link, root)) return dir;
  // Create under a unique name, then rename over the old entry: atomic for concurrent kernels.
  const tmp = path.join(dir, `.${PACKAGE_NAME}-${process.pid}-${Date.now()}`);
  fs.symlinkSync(path.resolve(root), tmp, 'dir');
  fs.renameSync(tmp, link);
  return dir;
}

/** Ensures `<dir>/gdnlab` is a symlink to `root`; returns the folder to put on NODE_PATH. */
export function ensureNodePathLink(root: string): string {
  const preferred = nodePathDirFor(root);
  try {
    return makeLink(preferred, root);
  } catch (e) {
    const fallback = path.join(os.tmpdir(), `gdnlab-node-path-${crypto.createHash('sha1').update(path.resolve(root)).digest('hex').slice(0, 12)}`);
    if (fallback === preferred) throw new Error(`cannot create the ${PACKAGE_NAME} link in ${preferred}: ${(e as Error).message}`);
    return makeLink(fallback, root);
  }
}

/** Puts `dir` first on NODE_PATH for this process (and the processes it starts). */
export function prependNodePath(dir: string): void {
  const parts = (process.env.NODE_PATH ?? '').split(path.delimiter).filter((p) => p !== '');
  if (parts[0] === dir) return;
  process.env.NODE_PATH = [dir, ...parts.filter((p) => p !== dir)].join(path.delimiter);
  // Node reads NODE_PATH once at start-up; this re-reads it for require() from now on.
  (Module as unknown as { _initPaths(): void })._initPaths();
}

/** The part of TypeScript's `System` that module resolution reads the file system through. */
export interface FileSystemHost {
  fileExists(path: string): boolean;
  directoryExists(path: string): boolean;
  readFile(path: string, encoding?: string): string | undefined;
  realpath?(path: string): string;
  getDirectories(path: string): string[];
  readDirectory(path: string, ...rest: never[]): string[];
}

const toSlashes = (p: string) => p.replace(/\\/g, '/');

/**
 * Makes `<cwd>/node_modules/gdnlab/...` read as `<root>/...` through `sys` (tslab's TypeScript
 * ts.sys, patched in memory). Must run before tslab creates its converter.
 */
export function redirectTypeScriptResolution(sys: FileSystemHost, cwd: string, root: string): void {
  const virtual = toSlashes(path.join(cwd, 'node_modules', PACKAGE_NAME));
  const real = toSlashes(path.resolve(root));
  const map = (p: string): string => {
    const s = toSlashes(p);
    if (s === virtual) return real;
    if (s.startsWith(`${virtual}/`)) return real + s.slice(virtual.length);
    return p;
  };
  const wrap = <K extends keyof FileSystemHost>(name: K) => {
    const original = sys[name] as unknown as ((p: string, ...rest: unknown[]) => unknown) | undefined;
    if (typeof original !== 'function') return;
    (sys as unknown as Record<string, unknown>)[name] = (p: string, ...rest: unknown[]) => original.call(sys, map(p), ...rest);
  };
  wrap('fileExists');
  wrap('directoryExists');
  wrap('readFile');
  wrap('realpath');
  wrap('getDirectories');
  wrap('readDirectory');
}
