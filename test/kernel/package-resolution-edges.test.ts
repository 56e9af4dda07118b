// kernel/package-resolution.ts: how a notebook's `import 'gdnlab'` finds the package. The file system is a
// temporary folder (os.tmpdir answers it), Module._initPaths is a recorder, TypeScript's file system host
// is a stand-in that records the paths it is asked for.

import { strict as assert } from 'assert';
import * as crypto from 'crypto';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import {
  ensureNodePathLink, installedPackageAbove, nodePathDirFor, packageRoot, prependNodePath, redirectTypeScriptResolution,
} from '../../kernel/package-resolution';
import { Undo } from '../stand-ins';

// eslint-disable-next-line @typescript-eslint/no-var-requires
const fsModule = require('fs') as Record<string, unknown>;
// eslint-disable-next-line @typescript-eslint/no-var-requires
const osModule = require('os') as Record<string, unknown>;
// eslint-disable-next-line @typescript-eslint/no-var-requires
const moduleModule = require('module') as Record<string, unknown>;

/** This project's root as the module computes it (two folders above dist/kernel/). */
const OWN = path.resolve(path.dirname(require.resolve('../../kernel/package-resolution')), '..', '..');
const tag = (root: string) => crypto.createHash('sha1').update(path.resolve(root)).digest('hex').slice(0, 12);

describe('package resolution: edges', () => {
  const undo = new Undo();
  const stub = (obj: object, key: string, value: unknown): void => undo.stub(obj, key, value);
  let tmp = '';
  beforeEach(() => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'gdnlab-pkgres-edges-'));
    const t = tmp;
    stub(osModule, 'tmpdir', () => t);
  });
  afterEach(() => {
    undo.restore();
    fs.rmSync(tmp, { recursive: true, force: true });
  });
  const pkg = (dir: string, json: unknown) => {
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, 'package.json'), typeof json === 'string' ? json : JSON.stringify(json));
    return dir;
  };

  describe('packageRoot', () => {
    it('this project by default; $GDNLAB_PACKAGE_ROOT (resolved) when set and non-empty', () => {
      assert.equal(packageRoot({}), OWN);
      assert.equal(packageRoot({ GDNLAB_PACKAGE_ROOT: '' }), OWN);
      const other = pkg(path.join(tmp, 'other'), { name: 'gdnlab' });
      assert.equal(packageRoot({ GDNLAB_PACKAGE_ROOT: path.relative(process.cwd(), other) }), other);
      const saved = process.env.GDNLAB_PACKAGE_ROOT;
      process.env.GDNLAB_PACKAGE_ROOT = other;
      try {
        assert.equal(packageRoot(), other);
      } finally {
        if (saved === undefined) delete process.env.GDNLAB_PACKAGE_ROOT;
        else process.env.GDNLAB_PACKAGE_ROOT = saved;
      }
    });

    it('a package.json that cannot be read, or names another package: errors naming the file and the setting', () => {
      const none = path.join(tmp, 'none');
      assert.throws(() => packageRoot({ GDNLAB_PACKAGE_ROOT: none }),
        (e: Error) => e.message.startsWith(`GDNLAB_PACKAGE_ROOT: cannot read ${path.join(none, 'package.json')} (ENOENT`) && e.message.endsWith(')'));
      const bad = pkg(path.join(tmp, 'bad'), '{ not json');
      assert.throws(() => packageRoot({ GDNLAB_PACKAGE_ROOT: bad }), (e: Error) => e.message.startsWith(`GDNLAB_PACKAGE_ROOT: cannot read ${path.join(bad, 'package.json')} (`));
      const other = pkg(path.join(tmp, 'o'), { name: 'other' });
      assert.throws(() => packageRoot({ GDNLAB_PACKAGE_ROOT: other }), (e: Error) => e.message === `${path.join(other, 'package.json')}: expected "name": "gdnlab", got "other"`);
      const nameless = pkg(path.join(tmp, 'n'), {});
      assert.throws(() => packageRoot({ GDNLAB_PACKAGE_ROOT: nameless }), (e: Error) => e.message === `${path.join(nameless, 'package.json')}: expected "name": "gdnlab", got undefined`);
      const own = path.join(OWN, 'package.json');
      const real = fs.readFileSync;
      stub(fsModule, 'readFileSync', (f: string, ...rest: unknown[]) => {
        if (f === own) throw new Error('unreadable');
        return (real as (...a: unknown[]) => unknown)(f, ...rest);
      });
      assert.throws(() => packageRoot({}), (e: Error) => e.message === `kernel install: cannot read ${own} (unreadable)`);
    });
  });

  it('installedPackageAbove: node_modules/gdnlab with a package.json, at the folder or any above it; else null', () => {
    const top = path.join(tmp, 'a');
    const found = pkg(path.join(top, 'node_modules', 'gdnlab'), { name: 'gdnlab' });
    fs.mkdirSync(path.join(top, 'b', 'node_modules', 'gdnlab'), { recursive: true }); // no package.json: not a package
    fs.mkdirSync(path.join(top, 'b', 'c'), { recursive: true });
    assert.equal(installedPackageAbove(path.join(top, 'b', 'c')), found);
    assert.equal(installedPackageAbove(top), found);
    assert.equal(installedPackageAbove(path.relative(process.cwd(), path.join(top, 'b'))), found);
    const asked: string[] = [];
    const real = fs.existsSync;
    stub(fsModule, 'existsSync', (f: string) => {
      asked.push(f);
      return real(f) && !f.startsWith(path.parse(tmp).root + 'node_modules');
    });
    assert.equal(installedPackageAbove(path.join(tmp, 'x', 'y')), null);
    assert.deepEqual(asked.slice(0, 2), [path.join(tmp, 'x', 'y', 'node_modules', 'gdnlab', 'package.json'), path.join(tmp, 'x', 'node_modules', 'gdnlab', 'package.json')]);
    assert.equal(asked.at(-1), path.join(path.parse(tmp).root, 'node_modules', 'gdnlab', 'package.json'));
  });

  it('nodePathDirFor: inside dist/ for this project (however its path is written); a temp folder per other root', () => {
    assert.equal(nodePathDirFor(OWN), path.join(OWN, 'dist', 'kernel', 'node_path'));
    assert.equal(nodePathDirFor(path.relative(process.cwd(), OWN) || '.'), path.join(OWN, 'dist', 'kernel', 'node_path'));
    const other = path.join(tmp, 'p');
    assert.equal(nodePathDirFor(other), path.join(tmp, `gdnlab-node-path-${tag(other)}`));
    assert.equal(nodePathDirFor(path.relative(process.cwd(), other)), path.join(tmp, `gdnlab-node-path-${tag(other)}`));
    assert.notEqual(nodePathDirFor(path.join(tmp, 'q')), nodePathDirFor(other));
  });

  describe('ensureNodePathLink', () => {
    it('makes <dir>/gdnlab a link to the root, atomically (no other entry left); keeps a right one; replaces a wrong one', () => {
      const root = pkg(path.join(tmp, 'root'), { name: 'gdnlab' });
      const dir = path.join(tmp, `gdnlab-node-path-${tag(root)}`);
      assert.equal(ensureNodePathLink(root), dir);
      assert.deepEqual(fs.readdirSync(dir), ['gdnlab']);
      assert.equal(fs.readlinkSync(path.join(dir, 'gdnlab')), root);
      const made: string[] = [];
      const realSymlink = fs.symlinkSync;
      stub(fsModule, 'symlinkSync', (target: string, p: string, type: string) => {
        made.push(`${target} ${path.basename(p)} ${type}`);
        return realSymlink(target, p, type as fs.symlink.Type);
      });
      assert.equal(ensureNodePathLink(root), dir);
      assert.deepEqual(made, []);
      fs.rmSync(path.join(dir, 'gdnlab'));
      realSymlink(tmp, path.join(dir, 'gdnlab'));
      assert.equal(ensureNodePathLink(path.relative(process.cwd(), root)), dir);
      assert.equal(made.length, 1);
      assert.match(made[0], new RegExp(`^${root.replace(/[.]/g, '\\.')} \\.gdnlab-${process.pid}-\\d+ dir$`));
      assert.equal(fs.readlinkSync(path.join(dir, 'gdnlab')), root);
      assert.deepEqual(fs.readdirSync(dir), ['gdnlab']);
    });

    it('this project: dist/kernel/node_path, else (not writable) the temp folder; another root\'s failure is an error', () => {
      const preferred = path.join(OWN, 'dist', 'kernel', 'node_path');
      const realMkdir = fs.mkdirSync;
      stub(fsModule, 'mkdirSync', (d: string, o: unknown) => {
        if (d === preferred) throw new Error('read-only');
        return (realMkdir as (...a: unknown[]) => unknown)(d, o);
      });
      const fallback = path.join(tmp, `gdnlab-node-path-${tag(OWN)}`);
      assert.equal(ensureNodePathLink(OWN), fallback);
      assert.equal(fs.realpathSync(path.join(fallback, 'gdnlab')), fs.realpathSync(OWN));
      const root = path.join(tmp, 'r');
      const dir = path.join(tmp, `gdnlab-node-path-${tag(root)}`);
      stub(fsModule, 'mkdirSync', () => {
        throw new Error('no room');
      });
      assert.throws(() => ensureNodePathLink(root), (e: Error) => e.message === `cannot create the gdnlab link in ${dir}: no room`);
    });
  });

  it('prependNodePath: the folder first, once, empty parts dropped; Node re-reads NODE_PATH only when it changed', () => {
    const saved = process.env.NODE_PATH;
    const inits: number[] = [];
    stub(moduleModule, '_initPaths', () => inits.push(1));
    const d = path.delimiter;
    try {
      for (const [before, after, reread] of [
        [undefined, '/x', 1],
        ['', '/x', 1],
        [`/a${d}/b`, `/x${d}/a${d}/b`, 1],
        [`/a${d}/x${d}/b`, `/x${d}/a${d}/b`, 1],
        [`${d}${d}/a${d}`, `/x${d}/a`, 1],
        [`/x${d}/a`, `/x${d}/a`, 0],
        [`${d}/x${d}/a`, `${d}/x${d}/a`, 0],
      ] as const) {
        if (before === undefined) delete process.env.NODE_PATH;
        else process.env.NODE_PATH = before;
        inits.length = 0;
        prependNodePath('/x');
        assert.equal(process.env.NODE_PATH, after, String(before));
        assert.equal(inits.length, reread, String(before));
      }
    } finally {
      if (saved === undefined) delete process.env.NODE_PATH;
      else process.env.NODE_PATH = saved;
    }
  });

  it('redirectTypeScriptResolution: <cwd>/node_modules/gdnlab and below read as the root; everything else as it was; extra arguments and this kept', () => {
    const asked: [string, unknown, unknown[]][] = [];
    const rec = (name: string) => function (this: unknown, p: string, ...rest: unknown[]) {
      asked.push([name, this, [p, ...rest]]);
      return name;
    };
    const sys: Record<string, unknown> = {
      fileExists: rec('fileExists'), directoryExists: rec('directoryExists'), readFile: rec('readFile'), realpath: rec('realpath'),
      getDirectories: rec('getDirectories'), readDirectory: rec('readDirectory'), other: rec('other'),
    };
    const sysNoRealpath: Record<string, unknown> = { fileExists: rec('f2'), directoryExists: 'not a function', readFile: rec('r2'), getDirectories: rec('g2'), readDirectory: rec('d2') };
    redirectTypeScriptResolution(sys as never, '/nb', '/pkg/root/');
    redirectTypeScriptResolution(sysNoRealpath as never, '/nb', '/pkg');
    assert.equal(Object.prototype.hasOwnProperty.call(sysNoRealpath, 'realpath'), false);
    assert.equal(sysNoRealpath.directoryExists, 'not a function');
    const call = (name: string, ...args: unknown[]) => (sys[name] as (...a: unknown[]) => unknown)(...args);
    assert.equal(call('fileExists', '/nb/node_modules/gdnlab/package.json'), 'fileExists');
    call('directoryExists', '/nb/node_modules/gdnlab');
    call('readFile', '/nb\\node_modules\\gdnlab\\lib\\index.d.ts', 'utf8');
    call('realpath', '/nb/node_modules/gdnlabx/a');
    call('getDirectories', '/other/node_modules/gdnlab/x');
    call('readDirectory', 'C:\\nb\\x', ['.ts'], undefined, ['*'], 3);
    call('other', '/nb/node_modules/gdnlab/a');
    (sysNoRealpath.fileExists as (p: string) => unknown)('/nb/node_modules/gdnlab/z');
    assert.deepEqual(asked, [
      ['fileExists', sys, ['/pkg/root/package.json']],
      ['directoryExists', sys, ['/pkg/root']],
      ['readFile', sys, ['/pkg/root/lib/index.d.ts', 'utf8']],
      ['realpath', sys, ['/nb/node_modules/gdnlabx/a']],
      ['getDirectories', sys, ['/other/node_modules/gdnlab/x']],
      ['readDirectory', sys, ['C:\\nb\\x', ['.ts'], undefined, ['*'], 3]],
      ['other', sys, ['/nb/node_modules/gdnlab/a']],
      ['f2', sysNoRealpath, ['/pkg/z']],
    ]);
  });
});
