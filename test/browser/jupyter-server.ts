// A throw-away JupyterLab server from the project venv: 127.0.0.1, a free port, a random token, and
// its own runtime, config, data, settings and workspace folders, so that it neither sees nor changes the
// user's Jupyter state. The settings keep JupyterLab off the network (no news, no update checks, no
// extension manager) and render every cell (no windowing), so that a test sees every output in the DOM.

import { ChildProcess, spawn } from 'child_process';
import { randomBytes } from 'crypto';
import * as fs from 'fs';
import * as http from 'http';
import * as net from 'net';
import * as os from 'os';
import * as path from 'path';
import { projectRoot } from '../../lib/notebooks/paths';

export interface JupyterServer {
  url: string;
  token: string;
  port: number;
  rootDir: string;
  /** URL of a path under rootDir in JupyterLab, token included. */
  labUrl(relPath: string): string;
  /** URL of a notebook in the Notebook 7 (classic-style) interface, token included. */
  notebookUrl(relPath: string): string;
  /** What the server printed so far (for failure messages). */
  log(): string;
  stop(): Promise<void>;
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const port = (srv.address() as net.AddressInfo).port;
      srv.close(() => resolve(port));
    });
  });
}

function writeJson(file: string, value: unknown): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, JSON.stringify(value, null, 2));
}

function labSettings(dir: string): void {
  writeJson(path.join(dir, '@jupyterlab', 'apputils-extension', 'notification.jupyterlab-settings'), {
    fetchNews: 'false',
    checkForUpdates: false,
    doNotDisturbMode: true,
  });
  writeJson(path.join(dir, '@jupyterlab', 'extensionmanager-extension', 'plugin.jupyterlab-settings'), { enabled: false });
  writeJson(path.join(dir, '@jupyterlab', 'notebook-extension', 'tracker.jupyterlab-settings'), { windowingMode: 'none' });
}

function getStatus(url: string, timeoutMs: number): Promise<number> {
  return new Promise((resolve) => {
    const req = http.get(url, { timeout: timeoutMs }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', () => resolve(0));
    req.on('timeout', () => {
      req.destroy();
      resolve(0);
    });
  });
}

function waitForExit(child: ChildProcess, ms: number): Promise<boolean> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(true);
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), ms);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve(true);
    });
  });
}

/** Starts JupyterLab on rootDir and resolves once its API answers (rejects after startTimeoutMs). */
export async function startJupyterLab(rootDir: string, opts: { startTimeoutMs?: number; env?: NodeJS.ProcessEnv } = {}): Promise<JupyterServer> {
  const root = projectRoot();
  const jupyter = path.join(root, '.venv', 'bin', 'jupyter');
  if (!fs.existsSync(jupyter)) throw new Error(`${jupyter} not found: run bash scripts/setup.sh to create the project venv`);
  const port = await freePort();
  const token = randomBytes(24).toString('hex');
  const state = fs.mkdtempSync(path.join(os.tmpdir(), 'gdnlab-jupyter-'));
  const dirs = {
    JUPYTER_RUNTIME_DIR: path.join(state, 'runtime'),
    JUPYTER_CONFIG_DIR: path.join(state, 'config'),
    JUPYTER_DATA_DIR: path.join(state, 'data'),
    JUPYTERLAB_SETTINGS_DIR: path.join(state, 'lab-settings'),
    JUPYTERLAB_WORKSPACES_DIR: path.join(state, 'lab-workspaces'),
  };
  for (const d of Object.values(dirs)) fs.mkdirSync(d, { recursive: true });
  labSettings(dirs.JUPYTERLAB_SETTINGS_DIR);
  const venvData = path.join(root, '.venv', 'share', 'jupyter');
  const jupyterPath = [process.env.JUPYTER_PATH, venvData].filter(Boolean).join(path.delimiter);

  const args = [
    'lab',
    '--no-browser',
    '--ip=127.0.0.1',
    `--port=${port}`,
    '--ServerApp.port_retries=0',
    `--IdentityProvider.token=${token}`,
    `--ServerApp.root_dir=${rootDir}`,
    '--ServerApp.shutdown_no_activity_timeout=0',
    '--LabApp.expose_app_in_browser=True',
  ];
  if (process.getuid?.() === 0) args.push('--allow-root');
  const child = spawn(jupyter, args, {
    cwd: rootDir,
    env: { ...process.env, ...opts.env, ...dirs, JUPYTER_PATH: jupyterPath, PYTHONUNBUFFERED: '1' },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true, // its own process group: stop() ends the server and the kernels it started
  });
  let log = '';
  const keep = (c: Buffer) => {
    log = (log + c.toString('utf8')).slice(-64 * 1024);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);

  const url = `http://127.0.0.1:${port}`;
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null && child.pid) {
      try {
        process.kill(-child.pid, 'SIGTERM');
      } catch {
        /* already gone */
      }
      if (!(await waitForExit(child, 10_000))) {
        try {
          process.kill(-child.pid, 'SIGKILL');
        } catch {
          /* already gone */
        }
        await waitForExit(child, 5_000);
      }
    }
    fs.rmSync(state, { recursive: true, force: true });
  };

  const deadline = Date.now() + (opts.startTimeoutMs ?? 90_000);
  for (;;) {
    if (child.exitCode !== null) {
      await stop();
      throw new Error(`JupyterLab exited with status ${child.exitCode} while starting:\n${log}`);
    }
    if ((await getStatus(`${url}/api/status?token=${token}`, 2000)) === 200) break;
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`JupyterLab did not answer on ${url} in time:\n${log}`);
    }
    await new Promise((r) => setTimeout(r, 300));
  }
  const enc = (p: string) => p.split('/').map(encodeURIComponent).join('/');
  return {
    url,
    token,
    port,
    rootDir,
    labUrl: (p) => `${url}/lab/tree/${enc(p)}?token=${token}`,
    notebookUrl: (p) => `${url}/notebooks/${enc(p)}?token=${token}`,
    log: () => log,
    stop,
  };
}
