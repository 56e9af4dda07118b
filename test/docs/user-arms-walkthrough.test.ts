// docs/USER-ARMS.md's walkthrough is code that runs: its ```ts blocks, in order, as one notebook would, on the
// host backend. They are type-checked against the package's declarations first (a renamed or dropped export,
// or a changed option, fails here even in a step the host cannot run to the end), then run, and what each
// step promises is asserted: the arm equals scalar, the matrix passes, the planted defect is caught, the
// timed rows' bits are checked.

import { strict as assert } from 'assert';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import * as ts from 'typescript';
import { undefineArm } from '../../lib/arms/define';

const ROOT = path.resolve(__dirname, '..', '..', '..');
const DOC = path.join(ROOT, 'docs', 'USER-ARMS.md');
/** The package as a cell imports it: the compiled lib next to this compiled test. */
const LIB = path.resolve(__dirname, '..', '..', 'lib', 'index');
const IMPORT = "import * as gdn from 'gdnlab';";
/** What the walkthrough's steps leave behind, for the assertions. */
const RESULTS = ['ref', 'got', 'report', 'outcomes', 'timing'];

/** The ```ts blocks of a markdown text, in order. */
export function tsBlocks(markdown: string): string[] {
  return [...markdown.matchAll(/^```ts\n([\s\S]*?)^```$/gm)].map((m) => m[1]);
}

/** One module: the package imported once, every block in order inside one async function returning RESULTS. */
function notebookModule(blocks: string[]): string {
  const body = blocks.join('\n');
  assert.ok(body.includes(IMPORT), `the walkthrough imports the package as a cell does (${IMPORT})`);
  return `import * as gdn from ${JSON.stringify(LIB)};\nexport async function run() {\n${body.replace(IMPORT, '')}\nreturn { ${RESULTS.join(', ')} };\n}\n`;
}

function typeErrors(file: string): string[] {
  const program = ts.createProgram([file], {
    strict: true, target: ts.ScriptTarget.ES2020, module: ts.ModuleKind.CommonJS, types: ['node'], skipLibCheck: true, noEmit: true, esModuleInterop: true,
  });
  return ts.getPreEmitDiagnostics(program).map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
}

describe('docs/USER-ARMS.md: the cell walkthrough runs as written (host backend)', function () {
  this.timeout(600000);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gdnlab-walkthrough-'));
  const file = path.join(dir, 'walkthrough.ts');
  let previous: string | undefined;
  before(() => {
    previous = process.env.GDN_BACKEND;
    process.env.GDN_BACKEND = 'host';
  });
  after(() => {
    if (previous === undefined) delete process.env.GDN_BACKEND;
    else process.env.GDN_BACKEND = previous;
    for (const name of ['mine', 'mine-racy']) {
      try {
        undefineArm('conv', name);
      } catch {
        // not defined: the run stopped before that step
      }
    }
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('finds the six steps: define, check, plant, time, inspect, profile', () => {
    const blocks = tsBlocks(fs.readFileSync(DOC, 'utf8'));
    assert.equal(blocks.length, 6);
    const text = blocks.join('\n');
    for (const name of ['conv.defineArm', 'check.checkConv', 'runUserConvDefects', 'conv.prepareTimed', 'timeArms', 'inspectArm', 'profile']) {
      assert.ok(text.includes(`gdn.${name}(`), `the walkthrough calls gdn.${name}`);
    }
  });

  it('type-checks against the package: every name it uses is exported', () => {
    fs.writeFileSync(file, notebookModule(tsBlocks(fs.readFileSync(DOC, 'utf8'))));
    assert.deepEqual(typeErrors(file), []);
  });

  it('runs in order and does what each step says', async () => {
    const source = notebookModule(tsBlocks(fs.readFileSync(DOC, 'utf8')));
    const js = ts.transpileModule(source, { compilerOptions: { target: ts.ScriptTarget.ES2020, module: ts.ModuleKind.CommonJS, esModuleInterop: true } }).outputText;
    const jsFile = path.join(dir, 'walkthrough.js');
    fs.writeFileSync(jsFile, js);
    const gdn = await import(LIB);
    assert.equal(gdn.activeBackend().kind, 'host');
    const { run } = require(jsFile) as { run: () => Promise<Record<string, any>> };
    const r = await run();
    assert.ok(gdn.diff(r.got.out, r.ref.out).identical, "step 1: 'mine' equals scalar");
    assert.ok(r.report.results.length > 100 && r.report.failures.length === 0, `step 2: ${r.report.failures.length} of ${r.report.results.length} comparisons fail`);
    const racy = r.outcomes.find((o: { mutant: string }) => o.mutant === 'arm:mine-racy');
    assert.ok(racy?.caught, `step 3: the planted defect is caught (${racy?.detail})`);
    assert.deepEqual(r.timing.cases.map((c: { bits?: { mismatches: number } }) => c.bits?.mismatches), [0, 0, 0], 'step 4: every timed row checked and identical');
  });
});
