// `gdnlab bench conv|postconv|fused|overhead|host|verdict` in process (lib/cli/bench.ts): the benchmarks are
// replaced by recorders, so each test sees the options every flag maps to (--quick, --no-torch, --samples, --arms,
// --shapes, --vllm or GDN_VLLM_PATH, the backend, the progress writer), the command line the report quotes
// (process.argv without the output files), what goes to stdout, stderr and the --json=FILE / --markdown FILE files.

import { strict as assert } from 'assert';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { Stubs, cli, fakeBackend, fakeBackends, fakeDefine, lines } from './edges-helpers';

const benchLib = require('../../lib/bench/bench') as Record<string, unknown>;
const overheadLib = require('../../lib/bench/overhead') as Record<string, unknown>;
const hostLib = require('../../lib/bench/host') as Record<string, unknown>;
const verdictLib = require('../../lib/bench/verdict') as Record<string, unknown>;

type Opts = Record<string, unknown> & { log: (l: string) => void; onProgress?: (partial: object) => void };

const HOST_WARNING = 'gdnlab bench: the host backend runs the GPU-sized shapes for minutes; use --quick for a small host run';

describe('gdnlab bench commands, in process', () => {
  const stubs = new Stubs();
  let scratch: string;
  const saved = { argv: process.argv, vllm: process.env.GDN_VLLM_PATH };
  before(() => {
    scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'gdnlab-bench-edges-'));
  });
  after(() => fs.rmSync(scratch, { recursive: true, force: true }));
  afterEach(() => {
    stubs.restore();
    process.argv = saved.argv;
    if (saved.vllm === undefined) delete process.env.GDN_VLLM_PATH;
    else process.env.GDN_VLLM_PATH = saved.vllm;
  });

  /** Runs `gdnlab <args>` as if typed: process.argv holds the words too (the report quotes them). */
  const typed = (args: string[]) => {
    process.argv = [process.execPath, '/usr/bin/gdnlab', ...args];
    return cli(args);
  };

  /** The three op benches replaced: the one called records its options (and may call back), the others fail. */
  const opBenches = (during?: (o: Opts) => void) => {
    const calls: [string, Opts][] = [];
    for (const [name, op] of [['benchConv', 'conv'], ['benchPostconv', 'postconv'], ['benchFused', 'fused']]) {
      stubs.set(benchLib, name, async (o: Opts) => {
        calls.push([op, o]);
        during?.(o);
        return { op, rows: [{ arm: 'scalar' }] };
      });
    }
    const markdown: [unknown, string][] = [];
    stubs.set(benchLib, 'benchMarkdown', (r: { op: string; incomplete?: string }, command: string) => (markdown.push([r, command]), `MD ${r.op}${r.incomplete ? ' (partial)' : ''} | ${command}`));
    return { calls, markdown };
  };

  describe('bench conv|postconv|fused', () => {
    it('every flag of bench conv reaches benchConv: --quick, --no-torch, --samples, --arms and --shapes (split, trimmed), --vllm', async () => {
      const host = fakeBackend('host');
      fakeBackends(stubs, host);
      const { calls, markdown } = opBenches((o) => o.log('timing scalar'));
      const args = ['bench', 'conv', '--quick', '--arms', ' scalar, vec/exact,,', '--shapes', 'T=64', '--no-torch', '--samples', '--vllm', '/packed/vllm'];
      const r = await typed(args);
      assert.equal(r.status, 0, r.err);
      assert.equal(calls.length, 1);
      const [op, o] = calls[0];
      assert.equal(op, 'conv');
      assert.deepEqual(Object.keys(o), ['backend', 'quick', 'torch', 'samples', 'arms', 'shapes', 'vllmPath', 'log', 'onProgress']);
      assert.deepEqual({ ...o, log: undefined }, {
        backend: host, quick: true, torch: false, samples: true, arms: ['scalar', 'vec/exact'], shapes: ['T=64'], vllmPath: '/packed/vllm', log: undefined, onProgress: undefined,
      });
      const command = `gdnlab ${args.join(' ')}`;
      assert.deepEqual(markdown, [[{ op: 'conv', rows: [{ arm: 'scalar' }] }, command]]);
      assert.equal(r.out, `MD conv | ${command}\n`);
      // The bench's log goes to stderr; --quick: no warning.
      assert.equal(r.err, 'timing scalar\n');
    });

    it('bench postconv without flags: every default, GDN_VLLM_PATH for vLLM, and a warning on the host without --quick', async () => {
      const host = fakeBackend('host');
      fakeBackends(stubs, host);
      const { calls } = opBenches();
      process.env.GDN_VLLM_PATH = '/env/vllm';
      const r = await typed(['bench', 'postconv']);
      assert.equal(r.status, 0);
      assert.deepEqual(calls.map(([op, o]) => [op, { ...o, log: undefined }]), [['postconv', {
        backend: host, quick: false, torch: true, samples: false, arms: undefined, shapes: undefined, vllmPath: '/env/vllm', log: undefined, onProgress: undefined,
      }]]);
      assert.equal(r.err, `${HOST_WARNING}\n`);
      assert.equal(r.out, 'MD postconv | gdnlab bench postconv\n');
      delete process.env.GDN_VLLM_PATH;
      await typed(['bench', 'postconv', '--quick']);
      assert.equal(calls[1][1].vllmPath, undefined);
      process.env.GDN_VLLM_PATH = '/env/vllm';
      await typed(['bench', 'postconv', '--vllm', '/flag/vllm']);
      assert.equal(calls[2][1].vllmPath, '/flag/vllm');
    });

    it('bench fused --json --backend cuda: the report as JSON on stdout, on the backend given (no host warning)', async () => {
      const backends = fakeBackends(stubs);
      const { calls, markdown } = opBenches();
      const r = await typed(['bench', 'fused', '--json', '--backend', 'cuda']);
      assert.equal(r.status, 0);
      assert.deepEqual(calls.map(([op, o]) => [op, o.backend]), [['fused', backends.opened[0]]]);
      assert.equal(backends.opened[0].kind, 'cuda');
      assert.equal(r.out, JSON.stringify({ op: 'fused', rows: [{ arm: 'scalar' }] }, null, 2) + '\n');
      assert.equal(r.err, '');
      assert.equal(markdown[0][1], 'gdnlab bench fused --backend cuda');
    });

    it('--json=FILE and --markdown FILE: each partial report written as the run goes, the final one after; the Markdown on stdout', async () => {
      fakeBackends(stubs, fakeBackend('host'));
      const json = path.join(scratch, 'out', 'conv.json');
      const md = path.join(scratch, 'conv.md');
      const seen: string[] = [];
      const { calls } = opBenches((o) => {
        o.onProgress!({ op: 'conv', rows: [], incomplete: 'after shape 1' });
        seen.push(fs.readFileSync(json, 'utf8'), fs.readFileSync(md, 'utf8'));
      });
      const r = await typed(['bench', 'conv', '--quick', `--json=${json}`, '--markdown', md, '--arms', 'vec']);
      assert.equal(r.status, 0, r.err);
      assert.equal(typeof calls[0][1].onProgress, 'function');
      const command = 'gdnlab bench conv --quick --arms vec';
      assert.deepEqual(seen, [JSON.stringify({ op: 'conv', rows: [], incomplete: 'after shape 1' }, null, 2) + '\n', `MD conv (partial) | ${command}\n`]);
      assert.equal(fs.readFileSync(json, 'utf8'), JSON.stringify({ op: 'conv', rows: [{ arm: 'scalar' }] }, null, 2) + '\n');
      assert.equal(fs.readFileSync(md, 'utf8'), `MD conv | ${command}\n`);
      assert.equal(r.out, `MD conv | ${command}\n`);
    });

    it('--markdown=FILE alone, or --json=FILE alone: a progress writer for that file only; bare --json with --markdown: JSON on stdout', async () => {
      fakeBackends(stubs, fakeBackend('host'));
      const { calls } = opBenches((o) => o.onProgress!({ op: 'x', rows: [], incomplete: 'partial' }));
      const md = path.join(scratch, 'only.md');
      const json = path.join(scratch, 'only.json');
      await typed(['bench', 'conv', '--quick', `--markdown=${md}`]);
      assert.equal(fs.readFileSync(md, 'utf8'), 'MD conv | gdnlab bench conv --quick\n');
      assert.ok(!fs.existsSync(json));
      await typed(['bench', 'conv', '--quick', `--json=${json}`]);
      assert.equal(JSON.parse(fs.readFileSync(json, 'utf8')).op, 'conv');
      assert.equal(fs.readFileSync(md, 'utf8'), 'MD conv | gdnlab bench conv --quick\n', 'the Markdown file untouched');
      const bare = await typed(['bench', 'conv', '--quick', '--json', '--markdown', md]);
      assert.equal(typeof calls[2][1].onProgress, 'function');
      assert.equal(bare.out, JSON.stringify({ op: 'conv', rows: [{ arm: 'scalar' }] }, null, 2) + '\n');
    });

    it('the command line quoted: the words after the op without the output files; without the op in argv, the op alone', async () => {
      fakeBackends(stubs, fakeBackend('host'));
      const { markdown } = opBenches();
      const md = path.join(scratch, 'quoted.md');
      await typed(['bench', 'conv', '--json', '--quick', '--markdown', md, '--shapes', 'T=64']);
      await typed(['bench', 'conv', '--quick', `--markdown=${md}`]);
      process.argv = [process.execPath, '/usr/bin/gdnlab'];
      await cli(['bench', 'conv', '--quick']);
      // An empty last value (--shapes '') leaves no blank at the end.
      await typed(['bench', 'conv', '--quick', '--shapes', '']);
      assert.deepEqual(markdown.map(([, c]) => c), ['gdnlab bench conv --quick --shapes T=64', 'gdnlab bench conv --quick', 'gdnlab bench conv', 'gdnlab bench conv --quick --shapes']);
    });
  });

  it('--help of an op bench ends with its note: bits are checked before timing; nothing runs', async () => {
    opBenches();
    for (const op of ['conv', 'postconv', 'fused']) {
      const r = await cli(['bench', op, '--help']);
      assert.equal(r.status, 0);
      assert.deepEqual(lines(r.out).slice(-2), ['', 'Bits are checked against the reference before any arm is timed.']);
    }
  });

  describe('bench overhead|host|verdict', () => {
    it('bench overhead: --quick and the backend reach benchOverhead; Markdown on stdout, --json on stdout, --json=FILE to the file', async () => {
      const backends = fakeBackends(stubs, fakeBackend('host'));
      const calls: Opts[] = [];
      const report = { bench: 'overhead', rows: [1] };
      stubs.set(overheadLib, 'benchOverhead', async (o: Opts) => (calls.push(o), o.log('timing alloc'), report));
      stubs.set(overheadLib, 'overheadMarkdown', (r: unknown, command: string) => `OMD ${JSON.stringify(r)} | ${command}`);
      const r = await typed(['bench', 'overhead', '--quick', '--backend', 'cuda']);
      assert.equal(r.status, 0);
      assert.deepEqual(Object.keys(calls[0]), ['backend', 'quick', 'log']);
      assert.deepEqual([calls[0].backend, calls[0].quick], [backends.opened[0], true]);
      assert.equal(r.out, `OMD ${JSON.stringify(report)} | gdnlab bench overhead --quick --backend cuda\n`);
      assert.equal(r.err, 'timing alloc\n');
      const j = await typed(['bench', 'overhead', '--json']);
      assert.equal(calls[1].quick, false);
      assert.equal(j.out, JSON.stringify(report, null, 2) + '\n');
      const file = path.join(scratch, 'overhead.json');
      const f = await typed(['bench', 'overhead', `--json=${file}`]);
      assert.equal(f.out, `OMD ${JSON.stringify(report)} | gdnlab bench overhead\n`);
      assert.equal(fs.readFileSync(file, 'utf8'), JSON.stringify(report, null, 2) + '\n');
    });

    it('bench host: a host backend of its own (whatever GDN_BACKEND says), --define on it, --quick; closed after, also when the bench throws', async () => {
      const backends = fakeBackends(stubs);
      const defined = fakeDefine(stubs);
      const calls: Opts[] = [];
      const report = { bench: 'host', rows: [] };
      stubs.set(hostLib, 'benchHost', async (o: Opts) => (calls.push(o), o.log('validating 3 arms'), report));
      stubs.set(hostLib, 'hostMarkdown', (r: unknown, command: string) => `HMD ${JSON.stringify(r)} | ${command}`);
      const r = await typed(['bench', 'host', '--quick', '--define', 'reg16.json']);
      assert.equal(r.status, 0, r.err);
      assert.equal(backends.activeCalls, 0);
      const [host] = backends.opened;
      assert.deepEqual(backends.opened.map((b) => [b.kind, b.closes]), [['host', 1]]);
      assert.deepEqual(defined, [{ files: 'reg16.json', backend: host }]);
      assert.deepEqual(Object.keys(calls[0]), ['backend', 'quick', 'log']);
      assert.deepEqual([calls[0].backend, calls[0].quick], [host, true]);
      assert.equal(r.out, `HMD ${JSON.stringify(report)} | gdnlab bench host --quick --define reg16.json\n`);
      assert.equal(r.err, 'gdnlab: defined reg16.json\nvalidating 3 arms\n');
      const j = await typed(['bench', 'host', '--json']);
      assert.equal(calls[1].quick, false);
      assert.equal(j.out, JSON.stringify(report, null, 2) + '\n');
      stubs.set(hostLib, 'benchHost', async () => {
        throw new Error('the bench broke');
      });
      const broke = await typed(['bench', 'host']);
      assert.deepEqual([broke.status, broke.err], [1, 'gdnlab: the bench broke\n']);
      assert.deepEqual(backends.opened.map((b) => b.closes), [1, 1, 1]);
    });

    it('bench verdict: the two comparisons and the provenance line; exit 0 only for same and slower; --backend reaches the self-check', async () => {
      const host = fakeBackend('host');
      const backends = fakeBackends(stubs, host);
      const seen: unknown[] = [];
      const comparison = (verdict: string) => ({ verdict, toString: () => `a vs b: ${verdict}` });
      let answer = { same: comparison('same'), slower: comparison('slower'), line: 'revision r, host h' };
      stubs.set(verdictLib, 'verdictSelfCheck', async (b: unknown) => (seen.push(b), answer));
      const r = await cli(['bench', 'verdict']);
      assert.equal(r.status, 0);
      assert.equal(r.out, 'a vs b: same\na vs b: slower\nrevision r, host h\n');
      answer = { ...answer, same: comparison('faster') };
      assert.equal((await cli(['bench', 'verdict'])).status, 1);
      answer = { ...answer, same: comparison('same'), slower: comparison('same') };
      assert.equal((await cli(['bench', 'verdict', '--backend', 'cuda'])).status, 1);
      assert.deepEqual(seen, [host, host, backends.opened[0]]);
      assert.equal(backends.opened[0].kind, 'cuda');
    });
  });
});
