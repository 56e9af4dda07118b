// kernel/main.ts is process wiring: arguments, module resolution set-up, the IO thread, the engine and the
// server, output capture and the display channel, process.exit, SIGINT and the handlers for stray errors.
// Here it is loaded afresh into the test's own process with every collaborator replaced by a recorder
// (CommonJS exports of connection, io-thread, engine, server, capture, display and package-resolution;
// process.argv / exit / on / stdout.write / stderr.write), all restored after each test, so nothing is
// bound, installed or exited for real. Checked: the argument forms, the failure messages and exit codes,
// what each part is built with, the order of start-up, the banner, and what the process hooks do.

import assert from 'assert';
import path from 'path';
import { settle } from './fake-sockets';

/* eslint-disable @typescript-eslint/no-var-requires */
const mods = {
  connection: require('../../kernel/connection'),
  ioThread: require('../../kernel/io-thread'),
  engine: require('../../kernel/engine'),
  server: require('../../kernel/server'),
  capture: require('../../kernel/capture'),
  display: require('../../kernel/display'),
  resolution: require('../../kernel/package-resolution'),
} as Record<string, Record<string, unknown>>;
const fs = require('fs') as Record<string, unknown>;
const ts = require('@tslab/typescript-for-tslab') as { version: string; sys: { getCurrentDirectory(): string } };
/* eslint-enable @typescript-eslint/no-var-requires */

const projectVersion = String(JSON.parse(String((fs.readFileSync as (f: string, e: string) => string)(path.resolve(__dirname, '..', '..', '..', 'package.json'), 'utf8'))).version);
const tslabVersion = String(JSON.parse(String((fs.readFileSync as (f: string, e: string) => string)(require.resolve('tslab/package.json'), 'utf8'))).version);

interface Run {
  calls: unknown[][];
  exits: (number | undefined)[];
  stdout: string[];
  stderr: string[];
  handlers: Map<string, (...a: unknown[]) => void>;
  server?: { options: Record<string, unknown> };
}

/** Loads main.js with `argv`; `tweak` adjusts the recorders before loading. Resolves after start-up settles. */
async function runMain(argv: string[], tweak: (r: Run, stubs: Record<string, Record<string, unknown>>) => void = () => undefined, readFile?: (file: string) => string | null): Promise<Run> {
  const r: Run = { calls: [], exits: [], stdout: [], stderr: [], handlers: new Map() };
  const saved = new Map<Record<string, unknown>, Record<string, unknown>>();
  const stub = (m: Record<string, unknown>, name: string, value: unknown) => {
    if (!saved.has(m)) saved.set(m, {});
    const s = saved.get(m)!;
    if (!(name in s)) s[name] = m[name];
    m[name] = value;
  };
  const io = { where: 'worker', iopub: { tag: 'iopub' } };
  class FakeEngine {
    constructor(...args: unknown[]) {
      r.calls.push(['Engine', ...args]);
    }
    warmUp() {
      r.calls.push(['warmUp']);
    }
  }
  class FakeServer {
    iopub = { tag: 'server iopub' };
    constructor(readonly options: Record<string, unknown>) {
      r.calls.push(['KernelServer']);
      r.server = this;
    }
    async start() {
      r.calls.push(['start']);
    }
    closeNow() {
      r.calls.push(['closeNow']);
    }
    interrupt() {
      r.calls.push(['interrupt']);
    }
    fallbackCell() {
      return 'fallback cell';
    }
    currentCell() {
      return 'current cell';
    }
    currentExecutionCount() {
      return 17;
    }
  }
  class FakeCapture {
    constructor(readonly options: { iopub: unknown; fallbackCell: () => unknown }) {
      r.calls.push(['OutputCapture', options.iopub, options.fallbackCell()]);
    }
    install() {
      r.calls.push(['capture.install']);
    }
  }
  const stubs: Record<string, Record<string, unknown>> = {
    connection: { readConnectionFile: (f: string) => (r.calls.push(['readConnectionFile', f]), { conn: f }) },
    ioThread: { startIoThread: async (...a: unknown[]) => (r.calls.push(['startIoThread', ...a]), io) },
    engine: { Engine: FakeEngine },
    server: { KernelServer: FakeServer },
    capture: { OutputCapture: FakeCapture },
    display: {
      createKernelChannel: (o: { iopub: unknown; currentCell(): unknown; executionCount(): unknown }) => (r.calls.push(['createKernelChannel', o.iopub, o.currentCell(), o.executionCount()]), { tag: 'channel' }),
      installKernelChannel: (c: unknown) => void r.calls.push(['installKernelChannel', c]),
      hookTslabDisplay: (c: unknown) => void r.calls.push(['hookTslabDisplay', c]),
    },
    resolution: {
      installedPackageAbove: (d: string) => (r.calls.push(['installedPackageAbove', d]), null),
      packageRoot: () => (r.calls.push(['packageRoot']), '/root/of/gdnlab'),
      ensureNodePathLink: (root: string) => (r.calls.push(['ensureNodePathLink', root]), '/node/path'),
      prependNodePath: (d: string) => void r.calls.push(['prependNodePath', d]),
      redirectTypeScriptResolution: (sys: unknown, cwd: string, root: string) => void r.calls.push(['redirectTypeScriptResolution', sys === ts.sys, cwd, root]),
    },
  };
  tweak(r, stubs);
  for (const [name, values] of Object.entries(stubs)) for (const [k, v] of Object.entries(values)) stub(mods[name], k, v);
  const realReadFileSync = fs.readFileSync as (...a: unknown[]) => unknown;
  if (readFile) stub(fs, 'readFileSync', (file: string, ...rest: unknown[]) => (String(file).endsWith('package.json') ? (() => { const t = readFile(file); if (t === null) throw new Error('ENOENT'); return t; })() : realReadFileSync(file, ...rest)));
  stub(process as unknown as Record<string, unknown>, 'argv', ['node', 'main.js', ...argv]);
  stub(process as unknown as Record<string, unknown>, 'exit', (code?: number) => void r.exits.push(code));
  stub(process as unknown as Record<string, unknown>, 'on', (event: string, h: (...a: unknown[]) => void) => (r.handlers.set(event, h), process));
  stub(process.stdout as unknown as Record<string, unknown>, 'write', (t: string) => (r.stdout.push(t), true));
  stub(process.stderr as unknown as Record<string, unknown>, 'write', (t: string) => (r.stderr.push(t), true));
  try {
    const file = require.resolve('../../kernel/main');
    delete require.cache[file];
    require(file);
    if (readFile) {
      fs.readFileSync = realReadFileSync;
    }
    await settle(5);
    return r;
  } finally {
    hooks = { exit: process.exit };
    for (const [m, values] of saved) Object.assign(m, values);
  }
}
/** process.exit as main.ts left it (its wrapper around the recorder). */
let hooks: { exit: unknown } = { exit: null };


const USAGE = 'usage: node dist/kernel/main.js --connection-file <kernel-*.json>';

describe('kernel main edges (wiring, with every part replaced)', function () {
  // A change that leaves a request unanswered fails here quickly instead of hanging.
  this.timeout(2000);
  it('starts: reads the connection file, sets up resolution, builds IO, engine and server with one id and log, then starts and warms up', async () => {
    const r = await runMain(['--connection-file', 'kernel-1.json']);
    assert.deepStrictEqual(r.exits, []);
    const cwd = process.cwd();
    const [first, resolution, io, engine, server, ...rest] = [r.calls[0], r.calls.slice(1, 6), r.calls[6], r.calls[7], r.calls[8], ...r.calls.slice(9)];
    assert.deepStrictEqual(first, ['readConnectionFile', 'kernel-1.json']);
    assert.deepStrictEqual(resolution, [['installedPackageAbove', cwd], ['packageRoot'], ['ensureNodePathLink', '/root/of/gdnlab'], ['prependNodePath', '/node/path'], ['redirectTypeScriptResolution', true, ts.sys.getCurrentDirectory(), '/root/of/gdnlab']]);
    assert.deepStrictEqual(io.slice(0, 2), ['startIoThread', { conn: 'kernel-1.json' }]);
    const sid = io[2] as string;
    assert.match(sid, /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    const log = io[3] as (t: string) => void;
    assert.deepStrictEqual(engine, ['Engine', cwd, log]);
    assert.deepStrictEqual(server, ['KernelServer']);
    const o = r.server!.options;
    assert.deepStrictEqual(Object.keys(o).sort(), ['connection', 'engine', 'info', 'io', 'log', 'onShutdown', 'session'].sort());
    assert.deepStrictEqual([o.connection, o.session, (o.io as { where: string }).where, o.log], [{ conn: 'kernel-1.json' }, sid, 'worker', log]);
    assert.ok(o.engine && (o.engine as object).constructor.name === 'FakeEngine');
    assert.deepStrictEqual(o.info, {
      implementationVersion: projectVersion,
      languageVersion: ts.version,
      banner: `gdnlab ${projectVersion}: TypeScript ${ts.version} cells (compiled by tslab ${tslabVersion}) on Node.js ${process.version}`,
    });
    assert.deepStrictEqual(rest, [
      ['OutputCapture', { tag: 'server iopub' }, 'fallback cell'],
      ['capture.install'],
      ['createKernelChannel', { tag: 'server iopub' }, 'current cell', 17],
      ['installKernelChannel', { tag: 'channel' }],
      ['hookTslabDisplay', { tag: 'channel' }],
      ['start'],
      ['warmUp'],
    ]);
    assert.deepStrictEqual(r.stderr, [
      '[gdnlab kernel] gdnlab resolves to /root/of/gdnlab\n',
      `[gdnlab kernel] ready (pid ${process.pid}, cwd ${cwd}, IOPub and heartbeat on the IO thread)\n`,
    ]);
    log('through the log');
    assert.strictEqual(r.stderr.at(-1), '[gdnlab kernel] through the log\n');
    assert.deepStrictEqual([...r.handlers.keys()].sort(), ['SIGINT', 'uncaughtException', 'unhandledRejection']);
  });

  it('process hooks: SIGINT interrupts; stray errors become stderr text; exit closes the sockets first; shutdown exits 0', async () => {
    const r = await runMain(['-f', 'k.json']);
    r.calls.length = 0;
    const stderr: string[] = [];
    const realWrite = process.stderr.write;
    (process.stderr as unknown as { write: unknown }).write = (t: string) => (stderr.push(t), true);
    const realExit = process.exit;
    try {
      r.handlers.get('SIGINT')!();
      assert.deepStrictEqual(r.calls, [['interrupt']]);
      r.handlers.get('uncaughtException')!(new RangeError('late'));
      r.handlers.get('unhandledRejection')!({ why: 'no' });
      assert.strictEqual(stderr.length, 2);
      assert.match(stderr[0], /^Uncaught exception in asynchronous work: RangeError: late\n\s+at [^]*\n$/);
      assert.strictEqual(stderr[1], "Unhandled promise rejection: { why: 'no' }\n");
      // main.ts wrapped the process.exit it found (the recorder): the wrapper closes first, then exits.
      const wrapped = hooks.exit as (code?: number) => void;
      r.calls.length = 0;
      wrapped(3);
      assert.deepStrictEqual(r.calls, [['closeNow']]);
      assert.deepStrictEqual(r.exits, [3]);
      (process as unknown as { exit: unknown }).exit = wrapped;
      (r.server!.options.onShutdown as (restart: boolean) => void)(true);
      assert.deepStrictEqual(r.exits, [3, 0]);
      assert.deepStrictEqual(r.calls, [['closeNow'], ['closeNow']]);
    } finally {
      (process.stderr as unknown as { write: unknown }).write = realWrite;
      process.exit = realExit;
    }
  });

  it('--connection-file=FILE; the main thread named in the ready line; an installed gdnlab is used as it is', async () => {
    const r = await runMain(['--connection-file=x.json'], (_r, s) => {
      s.ioThread.startIoThread = async () => ({ where: 'main' });
      s.resolution.installedPackageAbove = () => '/nb/node_modules/gdnlab';
    });
    assert.deepStrictEqual(r.calls[0], ['readConnectionFile', 'x.json']);
    assert.ok(!r.calls.some((c) => c[0] === 'packageRoot'));
    assert.deepStrictEqual(r.stderr, ['[gdnlab kernel] gdnlab resolves to the installed /nb/node_modules/gdnlab\n', `[gdnlab kernel] ready (pid ${process.pid}, cwd ${process.cwd()}, IOPub and heartbeat on the main thread)\n`]);
  });

  it('resolution that fails is logged and start-up goes on', async () => {
    const r = await runMain(['-f', 'x.json'], (_r, s) => {
      s.resolution.packageRoot = () => {
        throw new Error('no package.json above');
      };
    });
    assert.strictEqual(r.stderr[0], "[gdnlab kernel] import 'gdnlab' will not resolve: no package.json above\n");
    assert.deepStrictEqual(r.exits, []);
    assert.ok(r.calls.some((c) => c[0] === 'warmUp'));
  });

  it('versions: unreadable or version-less package.json gives "unknown"; a number is shown as text', async () => {
    const missing = await runMain(['-f', 'x.json'], undefined, () => null);
    assert.deepStrictEqual((missing.server!.options.info as Record<string, string>).implementationVersion, 'unknown');
    assert.match((missing.server!.options.info as Record<string, string>).banner, /^gdnlab unknown: .* \(compiled by tslab unknown\) on /);
    const none = await runMain(['-f', 'x.json'], undefined, () => '{}');
    assert.strictEqual((none.server!.options.info as Record<string, string>).implementationVersion, 'unknown');
    const num = await runMain(['-f', 'x.json'], undefined, () => '{"version": 3}');
    assert.strictEqual((num.server!.options.info as Record<string, string>).implementationVersion, '3');
  });

  it('bad arguments and failures: a message on stderr and exit 1; --help prints the usage and exits 0', async () => {
    const cases: [string[], string][] = [
      [[], `--connection-file: missing\n${USAGE}`],
      [['--connection-file'], `--connection-file: missing\n${USAGE}`],
      [['x.json'], `unknown argument "x.json"\n${USAGE}`],
      [['-f', 'a.json', '--verbose'], `unknown argument "--verbose"\n${USAGE}`],
    ];
    for (const [argv, message] of cases) {
      const r = await runMain(argv);
      assert.deepStrictEqual(r.stderr, [`[gdnlab kernel] failed to start: ${message}\n`], argv.join(' '));
      assert.deepStrictEqual(r.exits, [1]);
      assert.deepStrictEqual(r.calls, []);
    }
    for (const help of ['--help', '-h']) {
      const r = await runMain([help, '-f', 'k.json']);
      assert.deepStrictEqual(r.stdout, [`${USAGE}\n`]);
      assert.deepStrictEqual(r.exits[0], 0);
    }
    const thrown = await runMain(['-f', 'k.json'], (_r, s) => {
      s.connection.readConnectionFile = () => {
        throw 'not an Error';
      };
    });
    assert.deepStrictEqual(thrown.stderr, ['[gdnlab kernel] failed to start: not an Error\n']);
    assert.deepStrictEqual(thrown.exits, [1]);
  });
});
