// Entry point of the gdnlab kernel: node dist/kernel/main.js --connection-file <file>
// (the kernelspec written by install.ts starts it this way; the working folder is the notebook's).

import { randomUUID } from 'crypto';
import fs from 'fs';
import path from 'path';
import util from 'util';
import * as ts from '@tslab/typescript-for-tslab';
import { OutputCapture } from './capture';
import { readConnectionFile } from './connection';
import { createKernelChannel, hookTslabDisplay, installKernelChannel } from './display';
import { Engine } from './engine';
import { startIoThread } from './io-thread';
import { ensureNodePathLink, installedPackageAbove, packageRoot, prependNodePath, redirectTypeScriptResolution } from './package-resolution';
import { KernelServer } from './server';

const USAGE = 'usage: node dist/kernel/main.js --connection-file <kernel-*.json>';

function parseArgs(argv: string[]): { connectionFile: string } {
  let connectionFile: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--connection-file' || a === '-f') connectionFile = argv[++i];
    else if (a.startsWith('--connection-file=')) connectionFile = a.slice('--connection-file='.length);
    else if (a === '--help' || a === '-h') {
      process.stdout.write(`${USAGE}\n`);
      process.exit(0);
    } else throw new Error(`unknown argument ${JSON.stringify(a)}\n${USAGE}`);
  }
  if (!connectionFile) throw new Error(`--connection-file: missing\n${USAGE}`);
  return { connectionFile };
}

function readVersion(file: string): string {
  try {
    return String((JSON.parse(fs.readFileSync(file, 'utf8')) as { version?: unknown }).version ?? 'unknown');
  } catch {
    return 'unknown';
  }
}

/** Lets `import 'gdnlab'` resolve (runtime and types) from the notebook's folder; returns a note for the log. */
function setUpPackageResolution(cwd: string): string {
  const installed = installedPackageAbove(cwd);
  if (installed) return `gdnlab resolves to the installed ${installed}`;
  const root = packageRoot();
  prependNodePath(ensureNodePathLink(root));
  redirectTypeScriptResolution(ts.sys, ts.sys.getCurrentDirectory(), root);
  return `gdnlab resolves to ${root}`;
}

async function main(): Promise<void> {
  const { connectionFile } = parseArgs(process.argv.slice(2));
  const connection = readConnectionFile(connectionFile);
  const realStderr = process.stderr.write.bind(process.stderr);
  const log = (text: string) => realStderr(`[gdnlab kernel] ${text}\n`);

  try {
    log(setUpPackageResolution(process.cwd()));
  } catch (e) {
    log(`import 'gdnlab' will not resolve: ${(e as Error).message}`);
  }

  const ownRoot = path.resolve(__dirname, '..', '..');
  const version = readVersion(path.join(ownRoot, 'package.json'));
  const tslabVersion = readVersion(require.resolve('tslab/package.json'));
  const session = randomUUID();
  const io = await startIoThread(connection, session, log);
  const engine = new Engine(process.cwd(), log);
  const server = new KernelServer({
    connection,
    session,
    io,
    engine,
    log,
    info: {
      implementationVersion: version,
      languageVersion: ts.version,
      banner: `gdnlab ${version}: TypeScript ${ts.version} cells (compiled by tslab ${tslabVersion}) on Node.js ${process.version}`,
    },
    onShutdown: () => process.exit(0),
  });

  const capture = new OutputCapture({ iopub: server.iopub, fallbackCell: () => server.fallbackCell() });
  capture.install();
  const channel = createKernelChannel({ iopub: server.iopub, currentCell: () => server.currentCell(), executionCount: () => server.currentExecutionCount() });
  installKernelChannel(channel);
  hookTslabDisplay(channel);

  // process.exit() in a cell ends the kernel (Jupyter restarts it), but the sockets must be
  // closed first: a process that exits with open zeromq sockets on the IO thread aborts.
  const exit = process.exit.bind(process);
  process.exit = ((code?: number) => {
    server.closeNow();
    return exit(code);
  }) as typeof process.exit;

  process.on('SIGINT', () => {
    server.interrupt();
  });
  // Errors thrown by work a cell left running must not end the kernel: they become stderr
  // output of that cell (or of the running cell when their origin is unknown).
  process.on('uncaughtException', (e) => {
    process.stderr.write(`Uncaught exception in asynchronous work: ${util.inspect(e)}\n`);
  });
  process.on('unhandledRejection', (reason) => {
    process.stderr.write(`Unhandled promise rejection: ${util.inspect(reason)}\n`);
  });

  await server.start();
  engine.warmUp();
  log(`ready (pid ${process.pid}, cwd ${process.cwd()}, IOPub and heartbeat on the ${io.where === 'worker' ? 'IO thread' : 'main thread'})`);
}

main().catch((e: unknown) => {
  process.stderr.write(`[gdnlab kernel] failed to start: ${e instanceof Error ? e.message : String(e)}\n`);
  process.exit(1);
});
