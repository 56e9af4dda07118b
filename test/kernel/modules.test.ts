// `import * as gdn from 'gdnlab'` from a notebook in any folder: runtime, types, completion,
// inspection, and the package's own dependencies' types.

import assert from 'assert';
import fs from 'fs';
import os from 'os';
import path from 'path';
import { redirectTypeScriptResolution } from '../../kernel/package-resolution';
import { KernelClient, ofType, PROJECT_ROOT } from './kernel-client';

const resultText = (r: { outputs: { header: { msg_type: string }; content: Record<string, unknown> }[] }) => {
  const res = ofType(r.outputs as never, 'execute_result')[0];
  assert.ok(res, `an execute_result, got ${r.outputs.map((m) => `${m.header.msg_type} ${JSON.stringify(m.content)}`).join('; ')}`);
  return (res.content as any).data['text/plain'] as string;
};
const errorValue = (r: { outputs: { header: { msg_type: string }; content: Record<string, unknown> }[] }) => {
  const e = ofType(r.outputs as never, 'error')[0];
  assert.ok(e, 'an error output');
  return e.content as Record<string, any>;
};

describe('kernel module resolution', function () {
  this.timeout(60000);

  describe('a notebook folder outside the project (gdnlab = the fixture package)', () => {
    let k: KernelClient;
    let dir: string;
    before(async () => {
      dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gdnlab-notebook-'));
      fs.writeFileSync(path.join(dir, 'helper.ts'), 'export function twice(x: number): number { return 2 * x; }\n');
      k = await KernelClient.start({ cwd: dir });
    });
    after(async () => {
      await k?.close();
      fs.rmSync(dir, { recursive: true, force: true });
    });

    it('imports gdnlab at run time', async () => {
      const r = await k.execute("import * as gdn from 'gdnlab';\ngdn.add(2, 3)");
      assert.strictEqual(resultText(r), '5');
      assert.strictEqual(resultText(await k.execute('gdn.version')), "'0.0.0-fixture'");
    });

    it('type-checks calls against the package\'s declarations', async () => {
      const e = errorValue(await k.execute("gdn.add('two', 3)"));
      assert.strictEqual(e.ename, 'CompileError');
      assert.match(e.evalue, /Argument of type 'string' is not assignable to parameter of type 'number'/);
    });

    it('resolves types the package imports from its own dependencies (koffi)', async () => {
      const e = errorValue(await k.execute('const wrong: number = gdn.nativeHandle();'));
      assert.match(e.evalue, /Type 'LibraryHandle' is not assignable to type 'number'/);
    });

    it('completes gdn. members', async () => {
      const code = 'gdn.';
      const c = (await k.request('complete_request', { code, cursor_pos: code.length })).content as Record<string, any>;
      for (const name of ['abortReason', 'add', 'nativeHandle', 'richValue', 'showProgress', 'version']) assert.ok(c.matches.includes(name), `${name} in ${c.matches}`);
      assert.deepStrictEqual([c.cursor_start, c.cursor_end], [4, 4]);
    });

    it('inspects gdn members with their documentation', async () => {
      const code = 'gdn.add(1, 2)';
      const r = (await k.request('inspect_request', { code, cursor_pos: 5, detail_level: 0 })).content as Record<string, any>;
      assert.strictEqual(r.found, true);
      assert.match(r.data['text/plain'], /function add\(a: number, b: number\): number/);
      assert.match(r.data['text/plain'], /Adds two numbers \(fixture\)/);
    });

    it('sends a library value\'s rich bundle (plotly + svg + text) as execute_result', async () => {
      const r = await k.execute("gdn.richValue('sweep')");
      const res = ofType(r.outputs, 'execute_result')[0].content as Record<string, any>;
      assert.deepStrictEqual(Object.keys(res.data).sort(), ['application/vnd.plotly.v1+json', 'image/svg+xml', 'text/plain']);
      assert.strictEqual(res.data['text/plain'], 'RichValue(sweep)');
      assert.strictEqual(res.data['application/vnd.plotly.v1+json'].layout.title.text, 'sweep');
      assert.deepStrictEqual(res.metadata, { 'application/vnd.plotly.v1+json': { label: 'sweep' } });
    });

    it('lets the library display and update a progress output in place', async () => {
      const r = await k.execute('gdn.showProgress(3)');
      const shown = r.outputs.filter((m) => m.header.msg_type.endsWith('display_data'));
      assert.deepStrictEqual(shown.map((m) => [m.header.msg_type, (m.content as any).data['text/plain']]), [
        ['display_data', 'step 0'],
        ['update_display_data', 'step 1'],
        ['update_display_data', 'step 2'],
        ['update_display_data', 'step 3'],
      ]);
      const ids = new Set(shown.map((m) => (m.content as any).transient.display_id));
      assert.strictEqual(ids.size, 1);
    });

    it('imports a .ts file next to the notebook', async () => {
      const r = await k.execute("import { twice } from './helper';\ntwice(21)");
      assert.strictEqual(resultText(r), '42');
    });
  });

  describe('a notebook folder below an installed gdnlab', () => {
    let k: KernelClient;
    let dir: string;
    before(async () => {
      dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gdnlab-installed-'));
      const pkg = path.join(dir, 'node_modules', 'gdnlab');
      fs.mkdirSync(pkg, { recursive: true });
      fs.writeFileSync(path.join(pkg, 'package.json'), JSON.stringify({ name: 'gdnlab', version: '9.9.9', main: 'index.js', types: 'index.d.ts' }));
      fs.writeFileSync(path.join(pkg, 'index.js'), "exports.which = 'installed';\n");
      fs.writeFileSync(path.join(pkg, 'index.d.ts'), 'export declare const which: "installed";\n');
      const notebookDir = path.join(dir, 'analysis');
      fs.mkdirSync(notebookDir);
      k = await KernelClient.start({ cwd: notebookDir });
    });
    after(async () => {
      await k?.close();
      fs.rmSync(dir, { recursive: true, force: true });
    });

    it('uses the installed package for both types and run time', async () => {
      const r = await k.execute("import * as gdn from 'gdnlab';\nconst w: 'installed' = gdn.which;\nw");
      assert.strictEqual(resultText(r), "'installed'");
      assert.match(k.stderr, /gdnlab resolves to the installed .*node_modules[\\/]gdnlab/);
    });
  });

  describe('the real gdnlab package of this project', () => {
    const built = fs.existsSync(path.join(PROJECT_ROOT, 'dist', 'lib', 'index.d.ts')) && fs.existsSync(path.join(PROJECT_ROOT, 'dist', 'lib', 'index.js'));
    let k: KernelClient;
    before(async function () {
      if (!built) {
        // Written by the lead; until lib/ is built the fixture tests above cover the mechanism.
        this.skip();
      }
      k = await KernelClient.start({ cwd: path.join(PROJECT_ROOT, 'notebooks'), env: { GDNLAB_PACKAGE_ROOT: '' } });
    });
    after(async () => {
      await k?.close();
    });

    it('imports dist/lib from notebooks/ with types and completion', async () => {
      const r = await k.execute("import * as gdn from 'gdnlab';\nObject.keys(gdn).length > 0");
      assert.strictEqual(resultText(r), 'true');
      const c = (await k.request('complete_request', { code: 'gdn.', cursor_pos: 4 })).content as Record<string, any>;
      assert.ok(c.matches.length > 0, 'gdn. has completions');
      assert.match(k.stderr, new RegExp(`gdnlab resolves to ${PROJECT_ROOT.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`));
    });
  });

  it('redirects <cwd>/node_modules/gdnlab/** to the package root in TypeScript\'s file system view', () => {
    const seen: string[] = [];
    const sys = {
      fileExists: (p: string) => (seen.push(p), p === '/pkg/dist/lib/index.d.ts'),
      directoryExists: (p: string) => (seen.push(p), true),
      readFile: (p: string) => (seen.push(p), `content of ${p}`),
      realpath: (p: string) => p,
      getDirectories: (p: string) => (seen.push(p), []),
      readDirectory: (p: string) => (seen.push(p), []),
    };
    redirectTypeScriptResolution(sys, '/notebooks/a', '/pkg');
    assert.strictEqual(sys.fileExists('/notebooks/a/node_modules/gdnlab/dist/lib/index.d.ts'), true);
    assert.strictEqual(sys.readFile('/notebooks/a/node_modules/gdnlab/package.json'), 'content of /pkg/package.json');
    assert.strictEqual(sys.realpath('/notebooks/a/node_modules/gdnlab/dist/lib/index.d.ts'), '/pkg/dist/lib/index.d.ts');
    assert.strictEqual(sys.realpath('/notebooks/a/node_modules/gdnlabx/index.d.ts'), '/notebooks/a/node_modules/gdnlabx/index.d.ts', 'only the gdnlab folder is redirected');
    assert.strictEqual(sys.readFile('/notebooks/a/other.ts'), 'content of /notebooks/a/other.ts');
  });
});
