#!/usr/bin/env node
// Planted defects, one at a time, in a scratch copy (docs/TESTING.md, "Mutation testing"): each entry
// of scripts/planted-edits.json names a file, an exact search string (it must occur exactly once,
// or the script stops: the list has gone stale), its replacement, and the suites that must fail
// with it. For cuda/** the scratch copy of cuda/ is rebuilt (host libgdn and the native smoke
// programs, CMake incremental); for lib/** and kernel/** the edited file is transpiled into a
// scratch copy of dist/. Then every listed suite runs against the scratch build; the defect counts
// as caught only when every one of them fails. The tracked tree is never touched.
//
//   node scripts/planted.js [--only ID[,ID…]] [--list] [--keep]
//
// Suites: "native" (gdn_native_smoke --no-timing), "postconv-native" (gdn_postconv_smoke),
// "mocha:<file under dist/test>", "cli:<gdnlab arguments>" (must exit non-zero).
// Exit status: 0 when every defect was caught by every suite listed for it.
'use strict';
const fs = require('fs');
const os = require('os');
const path = require('path');
const { spawnSync } = require('child_process');

const root = path.resolve(__dirname, '..');
const args = process.argv.slice(2);
const flag = (name) => args.includes(name);
const value = (name) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
};

function die(msg) {
  console.error(`planted: ${msg}`);
  process.exit(2);
}

const edits = JSON.parse(fs.readFileSync(path.join(__dirname, 'planted-edits.json'), 'utf8'));
const only = value('--only') ? new Set(value('--only').split(',')) : null;
const chosen = edits.filter((e) => !only || only.has(e.id));
if (only) for (const id of only) if (!edits.some((e) => e.id === id)) die(`--only: no planted edit '${id}'`);
if (flag('--list')) {
  for (const e of chosen) console.log(`${e.id.padEnd(28)} ${e.file}  →  ${e.suites.join(', ')}`);
  process.exit(0);
}

// Every search string must be found exactly once before anything runs: a stale list fails loudly.
for (const e of edits) {
  for (const k of ['id', 'file', 'search', 'replace', 'suites', 'why']) if (!(k in e)) die(`${e.id ?? '?'}: missing "${k}"`);
  const src = fs.readFileSync(path.join(root, e.file), 'utf8');
  const n = src.split(e.search).length - 1;
  if (n !== 1) die(`${e.id}: the search string occurs ${n} times in ${e.file} (expected exactly once); update scripts/planted-edits.json:\n  ${JSON.stringify(e.search)}`);
  if (e.search === e.replace) die(`${e.id}: replace equals search`);
}

const hostLib = path.join(root, 'build', 'host', 'libgdn.so');
if (!fs.existsSync(hostLib) || !fs.existsSync(path.join(root, 'dist', 'test'))) die('build first: bash scripts/build.sh (host libgdn and dist/)');

// The scratch project: symlinks to everything, except cuda/ and dist/, which are copied, and bin/
// (node runs a main module from its real path: a symlinked bin/gdnlab.js would load the real dist/).
const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'gdnlab-planted-'));
const copied = ['cuda', 'dist', 'bin'];
for (const name of fs.readdirSync(root)) {
  if (copied.includes(name) || name === 'build' || name === '.git') continue;
  fs.symlinkSync(path.join(root, name), path.join(scratch, name));
}
for (const name of copied) fs.cpSync(path.join(root, name), path.join(scratch, name), { recursive: true });
const buildDir = path.join(scratch, 'build', 'host');
const scratchLib = path.join(buildDir, 'libgdn.so');

function run(cmd, argv, opts = {}) {
  const r = spawnSync(cmd, argv, { cwd: scratch, encoding: 'utf8', maxBuffer: 64 << 20, timeout: 900000, ...opts });
  return { status: r.status, out: `${r.stdout ?? ''}${r.stderr ?? ''}` };
}

function buildNative() {
  if (!fs.existsSync(path.join(buildDir, 'CMakeCache.txt'))) {
    const c = run('cmake', ['-S', 'cuda', '-B', buildDir, '-DGDN_CUDA=OFF']);
    if (c.status !== 0) return c;
  }
  return run('cmake', ['--build', buildDir, '--parallel', String(Math.max(1, os.cpus().length))]);
}

const ts = require(path.join(root, 'node_modules', 'typescript'));
const tsconfig = ts.parseJsonConfigFileContent(ts.readConfigFile(path.join(root, 'tsconfig.json'), ts.sys.readFile).config, ts.sys, root).options;

/** Writes the transpiled text of a TypeScript source into the scratch dist/. */
function transpileInto(file, source) {
  const js = ts.transpileModule(source, { compilerOptions: { ...tsconfig, sourceMap: false, declaration: false }, fileName: file }).outputText;
  fs.writeFileSync(path.join(scratch, 'dist', file.replace(/\.ts$/, '.js')), js);
}

const suiteEnv = () => ({ ...process.env, GDN_LIBRARY: scratchLib, GDN_BACKEND: 'host', GDN_TEST_BACKENDS: 'host' });

/** Runs one suite; true when it FAILED (caught the defect). */
function suiteFails(suite) {
  let r;
  if (suite === 'native') r = run(path.join(buildDir, 'gdn_native_smoke'), ['--no-timing'], { env: suiteEnv() });
  else if (suite === 'postconv-native') r = run(path.join(buildDir, 'gdn_postconv_smoke'), [], { env: suiteEnv() });
  else if (suite.startsWith('mocha:')) {
    r = run(process.execPath, [path.join(root, 'node_modules', 'mocha', 'bin', 'mocha.js'), '--timeout', '180000', '--reporter', 'dot',
      // Words ending in .js are test files under dist/test; the rest go to mocha as they are (--grep X).
      ...suite.slice(6).split(' ').map((f) => (f.endsWith('.js') ? path.join('dist', 'test', f) : f))], { env: suiteEnv() });
  } else if (suite.startsWith('cli:')) {
    r = run(process.execPath, [path.join(scratch, 'bin', 'gdnlab.js'), ...suite.slice(4).split(' ')], { env: suiteEnv() });
  } else die(`unknown suite '${suite}'`);
  return { failed: r.status !== 0, tail: r.out.trim().split('\n').slice(-4).join(' | ') };
}

console.log(`planted: ${chosen.length} defects in ${scratch}`);
const b0 = buildNative();
if (b0.status !== 0) die(`the unmodified scratch build failed:\n${b0.out.slice(-3000)}`);

const results = [];
for (const e of chosen) {
  const started = Date.now();
  const target = path.join(scratch, e.file);
  const original = fs.readFileSync(path.join(root, e.file), 'utf8');
  const planted = original.replace(e.search, () => e.replace);
  let row;
  try {
    if (e.file.startsWith('cuda/')) {
      fs.writeFileSync(target, planted);
      const b = buildNative();
      if (b.status !== 0) {
        row = { id: e.id, caught: true, by: ['the build'], missed: [], note: 'does not compile' };
      }
    } else {
      transpileInto(e.file, planted);
    }
    if (!row) {
      const by = [];
      const missed = [];
      for (const s of e.suites) {
        const r = suiteFails(s);
        (r.failed ? by : missed).push(s);
        if (!r.failed) console.log(`  ${e.id}: ${s} PASSED with the defect: ${r.tail}`);
      }
      row = { id: e.id, caught: missed.length === 0, by, missed };
    }
  } finally {
    // Revert: the original source (rebuilt by the next cuda edit or the final rebuild) or compiled file.
    if (e.file.startsWith('cuda/')) {
      fs.writeFileSync(target, original);
    } else {
      transpileInto(e.file, original);
    }
  }
  row.seconds = Math.round((Date.now() - started) / 1000);
  results.push(row);
  console.log(`${row.caught ? 'caught' : 'MISSED'} ${e.id} (${row.seconds}s): failed ${row.by.join(', ') || 'nothing'}${row.missed.length ? `; passed ${row.missed.join(', ')}` : ''} — ${e.why}`);
}
// Leave the scratch build as it started, then check that the unmodified suites really pass there:
// a suite that fails without any defect would 'catch' everything.
const rb = buildNative();
if (rb.status !== 0) die('the scratch build failed after reverting');
const controls = [...new Set(chosen.flatMap((e) => e.suites))];
const badControls = controls.filter((s) => suiteFails(s).failed);
for (const s of badControls) console.log(`CONTROL FAILED: ${s} fails without any planted defect — its catches mean nothing`);

const caught = results.filter((r) => r.caught).length;
console.log(`planted defects: ${caught}/${results.length} caught by every listed suite; controls: ${controls.length - badControls.length}/${controls.length} pass unmodified`);
fs.writeFileSync(path.join(scratch, 'planted-report.json'), JSON.stringify({ results, badControls }, null, 2));
if (!flag('--keep')) fs.rmSync(scratch, { recursive: true, force: true });
else console.log(`scratch kept: ${scratch}`);
process.exitCode = caught === results.length && badControls.length === 0 ? 0 : 1;
