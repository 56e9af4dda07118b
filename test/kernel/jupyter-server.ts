// A real `jupyter server` on a free port of 127.0.0.1, started in a Jupyter sandbox with a random token, for tests
// that drive the gdnlab kernel as JupyterLab does (through @jupyterlab/services).

import { ChildProcess, spawn } from 'child_process';
import { randomBytes } from 'crypto';
import { ServerConnection } from '@jupyterlab/services';
import { freePorts, PROJECT_ROOT } from './kernel-client';
import { jupyterPython, JupyterSandbox } from './python-env';

export interface StartedServer {
  server: ChildProcess;
  settings: ServerConnection.ISettings;
  /** Everything the server printed so far. */
  log(): string;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Starts the server with the project as its root and waits (at most 60 s) until its REST API answers. */
export async function startJupyterServer(sandbox: JupyterSandbox): Promise<StartedServer> {
  const [port] = await freePorts(1);
  const token = randomBytes(16).toString('hex');
  const args = [
    '-m', 'jupyter', 'server', '--no-browser',
    '--ServerApp.ip=127.0.0.1', `--ServerApp.port=${port}`, '--ServerApp.port_retries=0',
    `--IdentityProvider.token=${token}`, `--ServerApp.root_dir=${PROJECT_ROOT}`,
  ];
  if (typeof process.getuid === 'function' && process.getuid() === 0) args.push('--allow-root');
  const server = spawn(jupyterPython(), args, { env: sandbox.env, cwd: sandbox.root, stdio: ['ignore', 'pipe', 'pipe'] });
  let log = '';
  server.stdout!.on('data', (d) => (log += d));
  server.stderr!.on('data', (d) => (log += d));
  const base = `http://127.0.0.1:${port}/`;
  const deadline = Date.now() + 60000;
  for (;;) {
    if (server.exitCode !== null) throw new Error(`jupyter server exited with ${server.exitCode}:\n${log}`);
    try {
      if ((await fetch(`${base}api/status`, { headers: { Authorization: `token ${token}` } })).ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      server.kill('SIGKILL');
      throw new Error(`jupyter server did not start within 60 s:\n${log}`);
    }
    await sleep(250);
  }
  const settings = ServerConnection.makeSettings({ baseUrl: base, wsUrl: `ws://127.0.0.1:${port}/`, token, appendToken: true, init: {} });
  return { server, settings, log: () => log };
}

/**
 * Ends what a test started against the server: the session (the server may already be gone), the managers, then
 * the server itself, SIGTERM first and SIGKILL when it has not exited within 10 s.
 */
export async function stopJupyterServer(
  server: ChildProcess | undefined, session?: { shutdown(): Promise<void> }, ...managers: ({ dispose(): void } | undefined)[]
): Promise<void> {
  try {
    await session?.shutdown();
  } catch {
    // the server may already be gone
  }
  for (const m of managers) m?.dispose();
  if (server && server.exitCode === null) {
    server.kill('SIGTERM');
    const exited = new Promise((r) => server.once('exit', r));
    await Promise.race([exited, sleep(10000)]);
    if (server.exitCode === null) server.kill('SIGKILL');
  }
}
