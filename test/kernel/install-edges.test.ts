// kernel/install.ts with no Python or Jupyter run: spawnSync answers as a scripted Python (its calls and
// the kernel.json it was handed recorded), os.tmpdir is a temporary folder, the package root a stand-in
// package there. Checked exactly: the arguments and their errors, the jupyter command line per scope, the
// kernel.json written, where the kernel is said to be, uninstalling, and the command's own output.

import { strict as assert } from 'assert';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { install, InstallArgs, kernelDir, main, parseInstallArgs, uninstall } from '../../kernel/install';
import { Undo } from '../stand-ins';

// eslint-disable-next-line @typescript-eslint/no-var-requires
const childProcess = require('child_process') as Record<string, unknown>;
// eslint-disable-next-line @typescript-eslint/no-var-requires
const fsModule = require('fs') as Record<string, unknown>;
// eslint-disable-next-line @typescript-eslint/no-var-requires
const osModule = require('os') as Record<string, unknown>;

const MAIN_JS = path.join(path.dirname(require.resolve('../../kernel/install')), 'main.js');
const PROBE = 'import json, sys\nfrom jupyter_core.paths import jupyter_data_dir\nprint(json.dumps({"user": jupyter_data_dir(), "sys_prefix": sys.prefix}))';
const USAGE = `usage: node dist/kernel/install.js --python <python-with-jupyter> [--user | --sys-prefix | --prefix DIR]
                                  [--name NAME] [--display-name TEXT] [--env NAME=VALUE]... [--uninstall]
  --user        the per-user kernels folder (default)
  --sys-prefix  <sys.prefix of that python>/share/jupyter/kernels
  --prefix DIR  DIR/share/jupyter/kernels
  --uninstall   remove the kernelspec from the chosen place instead`;

describe('kernel installer: edges', () => {
  const undo = new Undo();
  const stub = (obj: object, key: string, value: unknown): void => undo.stub(obj, key, value);
  let tmp = '';
  let root = '';
  beforeEach(() => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'gdnlab-install-edges-'));
    const t = tmp;
    stub(osModule, 'tmpdir', () => t);
    root = path.join(tmp, 'pkg');
    fs.mkdirSync(root);
    fs.writeFileSync(path.join(root, 'package.json'), '{"name":"gdnlab"}');
    undo.setEnv('GDNLAB_PACKAGE_ROOT', root);
  });
  afterEach(() => {
    undo.restore();
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  type Run = { cmd: string; args: string[]; opts: unknown; spec?: unknown; specDir?: string };
  /** A Python: the probe answers the folders; jupyter answers `jupyter` (or fails as told). */
  function python(o: { removeStaging?: boolean; user?: string; sysPrefix?: string; jupyter?: { status?: number; stdout?: string; stderr?: string }; error?: Error; probeStatus?: number } = {}): Run[] {
    const runs: Run[] = [];
    stub(childProcess, 'spawnSync', (cmd: string, args: string[], opts: unknown) => {
      const run: Run = { cmd, args: [...args], opts };
      runs.push(run);
      if (o.error) return { error: o.error, status: null, stdout: '', stderr: '' };
      if (args[0] === '-c') {
        return { status: o.probeStatus ?? 0, stdout: JSON.stringify({ user: o.user ?? '/home/u/.local/share/jupyter', sys_prefix: o.sysPrefix ?? '/venv' }), stderr: 'probe failed' };
      }
      run.specDir = args.at(-1);
      run.spec = JSON.parse(fs.readFileSync(path.join(args.at(-1)!, 'kernel.json'), 'utf8'));
      assert.ok(fs.readFileSync(path.join(args.at(-1)!, 'kernel.json'), 'utf8').endsWith('}\n'));
      if (o.removeStaging) fs.rmSync(path.dirname(args.at(-1)!), { recursive: true });
      return { status: 0, stdout: '', stderr: '', ...o.jupyter };
    });
    return runs;
  }
  const args = (over: Partial<InstallArgs> = {}): InstallArgs => ({ python: 'py', scope: { kind: 'user' }, name: 'gdnlab', env: {}, uninstall: false, ...over });

  describe('parseInstallArgs', () => {
    it('every option, in any order; --prefix resolved; --env split at its first "="', () => {
      assert.deepEqual(parseInstallArgs(['--name', 'k.1', '--python', '/py', '--prefix', 'rel', '--display-name', 'D N', '--env', 'A=b=c', '--env', 'B=', '--uninstall']), {
        python: '/py', scope: { kind: 'prefix', dir: path.resolve('rel') }, name: 'k.1', displayName: 'D N', env: { A: 'b=c', B: '' }, uninstall: true,
      });
      assert.deepEqual(parseInstallArgs(['--python', 'p', '--sys-prefix']).scope, { kind: 'sys-prefix' });
      assert.deepEqual(parseInstallArgs(['--python', 'p', '--user']).scope, { kind: 'user' });
      assert.deepEqual(parseInstallArgs(['--python', 'p']), { python: 'p', scope: { kind: 'user' }, name: 'gdnlab', displayName: undefined, env: {}, uninstall: false });
      assert.equal(parseInstallArgs(['--python', '-p']).python, '-p', 'a value may start with one dash');
    });

    it('errors: a missing value (at the end, or another option), a second scope, a bad --env, an unknown argument, no --python', () => {
      const err = (argv: string[], message: string) => assert.throws(() => parseInstallArgs(argv), (e: Error) => e.message === message, argv.join(' '));
      for (const flag of ['--python', '--prefix', '--name', '--display-name', '--env']) {
        err(['--python', 'p', flag], `${flag}: missing value\n${USAGE}`);
        err(['--python', 'p', flag, '--user'], `${flag}: missing value\n${USAGE}`);
      }
      err(['--python', 'p', '--user', '--prefix', '/x'], `--prefix: choose one of --user, --sys-prefix, --prefix\n${USAGE}`);
      err(['--python', 'p', '--sys-prefix', '--user'], `--user: choose one of --user, --sys-prefix, --prefix\n${USAGE}`);
      err(['--python', 'p', '--user', '--sys-prefix'], `--sys-prefix: choose one of --user, --sys-prefix, --prefix\n${USAGE}`);
      err(['--python', 'p', '--env', 'NOVALUE'], '--env: expected NAME=VALUE, got "NOVALUE"');
      err(['--python', 'p', '--env', '=v'], '--env: expected NAME=VALUE, got "=v"');
      err(['--python', 'p', '--name', 'a b'], `--name: expected letters, digits, '.', '_' or '-', got "a b"`);
      err(['--python', 'p', 'extra'], `unknown argument "extra"\n${USAGE}`);
      err(['--user'], `--python: missing (the Python whose Jupyter gets the kernel)\n${USAGE}`);
      err([], `--python: missing (the Python whose Jupyter gets the kernel)\n${USAGE}`);
    });

    it('--help and -h print the usage and exit 0', () => {
      for (const flag of ['--help', '-h']) {
        const out: string[] = [];
        const exits: number[] = [];
        const write = process.stdout.write;
        const exit = process.exit;
        process.stdout.write = ((s: string) => out.push(s)) as never;
        process.exit = ((c: number) => {
          exits.push(c);
          throw new Error('exited');
        }) as never;
        try {
          assert.throws(() => parseInstallArgs([flag, '--python', 'p']), /exited/);
        } finally {
          process.stdout.write = write;
          process.exit = exit;
        }
        assert.deepEqual(out, [`${USAGE}\n`]);
        assert.deepEqual(exits, [0]);
      }
    });
  });

  describe('kernelDir', () => {
    it('--prefix: DIR/share/jupyter/kernels/<name>, no Python asked', () => {
      const runs = python();
      assert.equal(kernelDir('py', { kind: 'prefix', dir: '/pre' }, 'k'), '/pre/share/jupyter/kernels/k');
      assert.deepEqual(runs, []);
    });

    it('--user and --sys-prefix: the folders the Python\'s jupyter_core reports', () => {
      const runs = python({ user: '/data', sysPrefix: '/sp' });
      assert.equal(kernelDir('/bin/py', { kind: 'user' }, 'k'), '/data/kernels/k');
      assert.equal(kernelDir('/bin/py', { kind: 'sys-prefix' }, 'k'), '/sp/share/jupyter/kernels/k');
      assert.deepEqual(runs[0], { cmd: '/bin/py', args: ['-c', PROBE], opts: { encoding: 'utf8' } });
    });

    it('a Python that cannot run, or fails: errors naming it, with its stderr (else its stdout)', () => {
      python({ error: new Error('spawnSync nope ENOENT') });
      assert.throws(() => kernelDir('nope', { kind: 'user' }, 'k'), (e: Error) => e.message === '--python nope: cannot run it (spawnSync nope ENOENT)');
      python({ probeStatus: 3 });
      assert.throws(() => kernelDir('py', { kind: 'user' }, 'k'), (e: Error) => e.message === `py -c ${PROBE} failed with exit code 3:\nprobe failed`);
      stub(childProcess, 'spawnSync', () => ({ status: 1, stdout: 'only stdout', stderr: '' }));
      assert.throws(() => kernelDir('py', { kind: 'user' }, 'k'), (e: Error) => e.message.endsWith('failed with exit code 1:\nonly stdout'));
    });
  });

  describe('install', () => {
    it('writes kernel.json into a staging folder named after the kernel, runs jupyter kernelspec install for the scope, removes the staging folder', () => {
      const where = path.join(tmp, 'jup', 'kernels', 'k1');
      const runs = python({ jupyter: { stderr: `[InstallKernelSpec] Installed kernelspec k1 in ${where}  \n` } });
      const got = install(args({ name: 'k1', scope: { kind: 'prefix', dir: '/pre' }, displayName: 'Disp', env: { A: '1' } }));
      assert.equal(got, where);
      assert.equal(runs.length, 1);
      const r = runs[0];
      assert.equal(r.cmd, 'py');
      assert.deepEqual(r.opts, { encoding: 'utf8' });
      assert.equal(path.basename(r.specDir!), 'k1');
      const staging = path.dirname(r.specDir!);
      assert.equal(path.dirname(staging), tmp);
      assert.match(path.basename(staging), /^gdnlab-kernelspec-/);
      assert.deepEqual(r.args, ['-m', 'jupyter', 'kernelspec', 'install', '--replace', '--name', 'k1', '--prefix', '/pre', r.specDir]);
      const linkDir = fs.readdirSync(tmp).find((f) => f.startsWith('gdnlab-node-path-'))!;
      assert.deepEqual(r.spec, {
        argv: [process.execPath, MAIN_JS, '--connection-file', '{connection_file}'],
        display_name: 'Disp',
        language: 'typescript',
        interrupt_mode: 'signal',
        env: { NODE_PATH: path.join(tmp, linkDir), A: '1' },
        metadata: { debugger: false },
      });
      assert.equal(fs.readlinkSync(path.join(tmp, linkDir, 'gdnlab')), root);
      assert.equal(fs.existsSync(staging), false);
    });

    it('the place comes from jupyter\'s stdout too, else from kernelDir; the scope flags of --user and --sys-prefix', () => {
      let runs = python({ jupyter: { stdout: 'Installed kernelspec gdnlab in /x/y\n' } });
      assert.equal(install(args({ scope: { kind: 'sys-prefix' } })), '/x/y');
      assert.deepEqual(runs[0].args.slice(5), ['--name', 'gdnlab', '--sys-prefix', runs[0].specDir]);
      runs = python({ user: '/data', jupyter: { stdout: 'done', stderr: 'Installed kernelspec in /nowhere' } });
      assert.equal(install(args()), '/data/kernels/gdnlab');
      assert.deepEqual(runs[0].args.slice(5), ['--name', 'gdnlab', '--user', runs[0].specDir]);
      assert.deepEqual(runs[1].args, ['-c', PROBE]);
    });

    it('a failing jupyter is an error with its output; the staging folder is removed anyway', () => {
      const runs = python({ jupyter: { status: 1, stderr: 'No module named jupyter' } });
      assert.throws(() => install(args()), (e: Error) => e.message.startsWith('py -m jupyter kernelspec install --replace --name gdnlab --user ') && e.message.endsWith('failed with exit code 1:\nNo module named jupyter'));
      assert.equal(fs.existsSync(path.dirname(runs[0].specDir!)), false);
    });

    it('a staging folder already gone (removed by the jupyter it was handed to) is no error', () => {
      python({ removeStaging: true, jupyter: { stdout: 'Installed kernelspec gdnlab in /x\n' } });
      assert.equal(install(args()), '/x');
    });

    it('without a built main.js: an error saying to build, nothing run', () => {
      const runs = python();
      const real = fs.existsSync;
      stub(fsModule, 'existsSync', (f: string) => f !== MAIN_JS && real(f));
      assert.throws(() => install(args()), (e: Error) => e.message === `${MAIN_JS} is missing: build the kernel first (npx tsc -p tsconfig.json)`);
      assert.deepEqual(runs, []);
    });
  });

  describe('uninstall and the command', () => {
    /** Loads a fresh copy of install.js as the program Node was started with (require.main is it), with argv. */
    const runAsProgram = (argv: string[], asProgram = true) => {
      // eslint-disable-next-line @typescript-eslint/no-var-requires
      const Module = require('module') as { prototype: { _compile: (...a: unknown[]) => unknown } };
      const file = require.resolve('../../kernel/install');
      const cached = require.cache[file];
      const compile = Module.prototype._compile;
      const proc = process as unknown as { mainModule: unknown; argv: string[] };
      const savedMain = proc.mainModule;
      const savedArgv = proc.argv;
      delete require.cache[file];
      Module.prototype._compile = function (this: { filename: string }, ...a: unknown[]) {
        if (this.filename === file && asProgram) proc.mainModule = this;
        return compile.apply(this, a);
      };
      proc.argv = [savedArgv[0], file, ...argv];
      try {
        require(file);
      } finally {
        Module.prototype._compile = compile;
        proc.mainModule = savedMain;
        proc.argv = savedArgv;
        if (cached) require.cache[file] = cached;
        else delete require.cache[file];
      }
    };

    const capture = (fn: () => void): string => {
      const out: string[] = [];
      const write = process.stdout.write;
      process.stdout.write = ((s: string) => out.push(s)) as never;
      try {
        fn();
      } finally {
        process.stdout.write = write;
      }
      return out.join('');
    };

    it('uninstall removes a folder holding kernel.json and returns it; null (nothing removed) otherwise', () => {
      python();
      const dir = path.join(tmp, 'share', 'jupyter', 'kernels', 'k');
      fs.mkdirSync(dir, { recursive: true });
      const a = args({ name: 'k', scope: { kind: 'prefix', dir: tmp } });
      assert.equal(uninstall(a), null);
      assert.ok(fs.existsSync(dir));
      fs.writeFileSync(path.join(dir, 'kernel.json'), '{}');
      fs.mkdirSync(path.join(dir, 'sub'));
      assert.equal(uninstall(a), dir);
      assert.equal(fs.existsSync(dir), false);
    });

    it('main: installs and says where; --uninstall says what it removed or that there was nothing', () => {
      python({ jupyter: { stderr: 'Installed kernelspec kk in /k/place\n' } });
      assert.equal(capture(() => main(['--python', 'py', '--name', 'kk'])), 'Installed kernelspec kk in /k/place\n');
      const dir = path.join(tmp, 'share', 'jupyter', 'kernels', 'kk');
      assert.equal(capture(() => main(['--python', 'py', '--name', 'kk', '--prefix', tmp, '--uninstall'])), `No kernelspec kk in ${dir}: nothing to remove\n`);
      fs.mkdirSync(dir, { recursive: true });
      fs.writeFileSync(path.join(dir, 'kernel.json'), '{}');
      assert.equal(capture(() => main(['--python', 'py', '--name', 'kk', '--prefix', tmp, '--uninstall'])), `Removed kernelspec kk from ${dir}\n`);
      assert.equal(fs.existsSync(dir), false);
    });

    it('main reads process.argv after node and the script by default', () => {
      python();
      const dir = path.join(tmp, 'share', 'jupyter', 'kernels', 'a1');
      const saved = process.argv;
      process.argv = ['node', 'install.js', '--python', 'py', '--name', 'a1', '--prefix', tmp, '--uninstall'];
      try {
        assert.equal(capture(() => main()), `No kernelspec a1 in ${dir}: nothing to remove\n`);
      } finally {
        process.argv = saved;
      }
    });

    it('run as a program: main with its arguments; an error is one line on stderr and exit status 1', () => {
      python();
      const dir = path.join(tmp, 'share', 'jupyter', 'kernels', 'a2');
      assert.equal(capture(() => runAsProgram(['--python', 'py', '--name', 'a2', '--prefix', tmp, '--uninstall'])), `No kernelspec a2 in ${dir}: nothing to remove\n`);
      const err: string[] = [];
      const exits: number[] = [];
      const write = process.stderr.write;
      const exit = process.exit;
      process.stderr.write = ((s: string) => err.push(s)) as never;
      process.exit = ((c: number) => exits.push(c)) as never;
      try {
        runAsProgram(['--bogus']);
      } finally {
        process.stderr.write = write;
        process.exit = exit;
      }
      assert.deepEqual(err, [`unknown argument "--bogus"\n${USAGE}\n`]);
      assert.deepEqual(exits, [1]);
    });

    it('imported as a module it runs nothing, whatever process.argv holds', () => {
      const runs = python({ jupyter: { stdout: 'Installed kernelspec gdnlab in /x\n' } });
      assert.equal(capture(() => runAsProgram(['--python', 'py'], false)), '');
      assert.deepEqual(runs, []);
    });
  });
});
