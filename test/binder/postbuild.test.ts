// mybinder.org set-up, proven in CI: binder/postBuild runs, unchanged, in a copy of the repository
// (so the development build is never touched) with a Python environment of its own standing in for
// Binder's conda environment; then a notebook runs on the kernel it installed, on the host backend.

import { strict as assert } from 'assert';
import { execFileSync, spawn } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { projectRoot } from '../../lib/notebooks/paths';
import { runNotebooks } from '../../lib/notebooks/run';
import { readNotebook, textOf } from '../../lib/notebooks/ipynb';
import { writeTempNotebook } from '../notebooks/helpers';

/** Copies the files git would commit (tracked, or untracked and not ignored) into `dest`. */
function copyWorkingTree(root: string, dest: string): number {
  const listed = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], { cwd: root, encoding: 'utf8', maxBuffer: 64 << 20 });
  let copied = 0;
  for (const rel of new Set(listed.split('\0').filter(Boolean))) {
    const src = path.join(root, rel);
    const st = fs.lstatSync(src, { throwIfNoEntry: false });
    if (!st || !(st.isFile() || st.isSymbolicLink())) continue; // deleted in the working tree
    fs.mkdirSync(path.dirname(path.join(dest, rel)), { recursive: true });
    fs.cpSync(src, path.join(dest, rel), { preserveTimestamps: true, verbatimSymlinks: true });
    copied++;
  }
  return copied;
}

/** A Python environment with its own sys.prefix that sees the project venv's Jupyter packages. */
function makeBinderLikeEnv(dir: string): string {
  const venvPython = path.join(projectRoot(), '.venv', 'bin', 'python');
  execFileSync(venvPython, ['-m', 'venv', '--without-pip', dir]);
  const python = path.join(dir, 'bin', 'python');
  const sitePackages = (py: string) => execFileSync(py, ['-c', 'import sysconfig; print(sysconfig.get_paths()["purelib"])'], { encoding: 'utf8' }).trim();
  fs.writeFileSync(path.join(sitePackages(python), 'project-venv.pth'), `${sitePackages(venvPython)}\n`);
  // The console commands pip would have installed, bound to this environment's python.
  const command = (name: string, code: string) => {
    const file = path.join(dir, 'bin', name);
    fs.writeFileSync(file, `#!${python}\nimport sys\n${code}\nsys.exit(main())\n`);
    fs.chmodSync(file, 0o755);
  };
  command('jupyter', 'from jupyter_core.command import main');
  command('jupyter-kernelspec', 'from jupyter_client.kernelspecapp import KernelSpecApp\nmain = KernelSpecApp.launch_instance');
  return python;
}

let running: ReturnType<typeof spawn> | null = null;

function runPostBuild(copy: string, envBin: string, timeoutMs: number): Promise<{ status: number | null; log: string }> {
  return new Promise((resolve) => {
    // nice: postBuild may run beside the other suites (see `started` below); they keep the CPU first.
    const child = spawn('nice', ['-n', '10', 'bash', path.join(copy, 'binder', 'postBuild')], {
      cwd: copy,
      env: { ...process.env, PATH: `${envBin}${path.delimiter}${process.env.PATH ?? ''}`, VIRTUAL_ENV: path.dirname(envBin) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let log = '';
    const keep = (c: Buffer) => (log = (log + c.toString('utf8')).slice(-32 * 1024));
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    running = child;
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('close', (status) => {
      running = null;
      clearTimeout(timer);
      resolve({ status, log });
    });
  });
}

/** `name==version` pins of a requirements file or an environment.yml pip section. */
function pins(text: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const m of text.matchAll(/^[\s-]*([A-Za-z0-9_.-]+)==([^\s#]+)/gm)) out.set(m[1].toLowerCase().replace(/[-_.]+/g, '-'), m[2]);
  return out;
}

interface PostBuildRun {
  work: string;
  copy: string;
  copied: number;
  /** Generated folders found in the copy before postBuild ran (must be none). */
  leaked: string[];
  envPython: string;
  result: Promise<{ status: number | null; log: string }>;
}
let started: PostBuildRun | null = null;

/** Copies the tree, makes the Binder-like environment and starts postBuild (once). */
function startPostBuild(): PostBuildRun {
  if (started) return started;
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'gdnlab-binder-'));
  const copy = path.join(work, 'repo');
  const copied = copyWorkingTree(projectRoot(), copy);
  const leaked = ['node_modules', 'build', 'dist', '.venv'].filter((g) => fs.existsSync(path.join(copy, g)));
  const envPython = makeBinderLikeEnv(path.join(work, 'env'));
  started = { work, copy, copied, leaked, envPython, result: runPostBuild(copy, path.dirname(envPython), 840_000) };
  return started;
}

// postBuild compiles the host library and the TypeScript in a fresh copy: minutes of a 2-core machine, mostly
// one process waiting on another. In a whole-suite run (no --grep) it starts with the run, niced, and
// scripts/test.sh runs this file last, so the suites before it use the time (docs/MAINTAINING.md, "CI time").
// A filtered run starts it only when its test runs.
const filtered = process.argv.some((a) => /^(-g|-f|--grep|--fgrep)(=|$)/.test(a));
before(function () {
  if (!filtered) startPostBuild();
});
after(() => {
  running?.kill('SIGKILL');
  if (started) fs.rmSync(started.work, { recursive: true, force: true });
});

describe('binder: mybinder.org set-up (binder/)', function () {
  this.timeout(900_000);
  const root = projectRoot();
  let work: string;
  let copy: string;
  let envPython: string;

  it('pins the same Python package versions as requirements.txt', () => {
    const env = pins(fs.readFileSync(path.join(root, 'binder', 'environment.yml'), 'utf8'));
    const req = pins(fs.readFileSync(path.join(root, 'requirements.txt'), 'utf8'));
    assert.ok(env.size > 0, 'binder/environment.yml pins no pip packages');
    for (const [name, version] of env) {
      assert.equal(version, req.get(name), `${name}: binder/environment.yml pins ${version}, requirements.txt ${req.get(name) ?? 'nothing'}`);
    }
    for (const needed of ['jupyterlab', 'plotly', 'nbclient', 'nbconvert']) assert.ok(env.has(needed), `binder/environment.yml lacks ${needed}`);
  });

  it('binder/postBuild installs, builds the host library and the kernel, and installs the kernelspec, in a fresh copy', async () => {
    const run = startPostBuild();
    ({ work, copy } = run);
    assert.ok(run.copied > 0, 'nothing copied');
    assert.deepEqual(run.leaked, [], 'generated folders were copied');
    const { status, log } = await run.result;
    envPython = run.envPython;
    assert.equal(status, 0, `binder/postBuild failed (exit status ${status}):\n${log}`);
    assert.ok(fs.existsSync(path.join(copy, 'build', 'host', 'libgdn.so')), 'no build/host/libgdn.so');
    assert.ok(!fs.existsSync(path.join(copy, 'build', 'cuda')), 'postBuild built the CUDA backend; Binder has no GPU');
    const spec = JSON.parse(fs.readFileSync(path.join(work, 'env', 'share', 'jupyter', 'kernels', 'gdnlab', 'kernel.json'), 'utf8')) as { argv: string[] };
    assert.ok(spec.argv.some((a) => a.startsWith(path.join(copy, 'dist'))), `the kernelspec does not start the copy's kernel: ${spec.argv.join(' ')}`);
  });

  it("runs a notebook on the installed kernel, with the copy's gdnlab, on the host backend", async () => {
    assert.ok(envPython, 'postBuild did not run');
    const nbDir = path.join(copy, 'notebooks');
    fs.mkdirSync(nbDir, { recursive: true });
    const src = writeTempNotebook(nbDir, 'binder-check.ipynb', [
      "import * as gdn from 'gdnlab';\nconsole.log(gdn.buildInfo().path);\nconsole.log(gdn.activeBackend().kind);",
    ]);
    const [r] = await runNotebooks([src], {
      python: envPython,
      backend: 'host',
      timeoutS: 120,
      env: { JUPYTER_DATA_DIR: path.join(work, 'jupyter-data'), JUPYTER_PATH: '' },
    });
    assert.ok(r.ok, `${r.problems.join('; ')}\n${r.stderrTail}`);
    const lines = textOf(readNotebook(r.output).cells[0].outputs?.map((o) => textOf(o.text ?? '')) ?? []).trim().split('\n');
    assert.equal(lines[0], path.join(copy, 'build', 'host', 'libgdn.so'));
    assert.equal(lines[1], 'host');
  });
});
