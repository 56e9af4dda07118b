// The connection file Jupyter writes for a kernel: where to bind each channel and how to sign.

import fs from 'fs';

export interface ConnectionInfo {
  transport: 'tcp' | 'ipc';
  ip: string;
  key: string;
  signature_scheme: string;
  shell_port: number;
  iopub_port: number;
  stdin_port: number;
  control_port: number;
  hb_port: number;
}

export type Channel = 'shell' | 'iopub' | 'stdin' | 'control' | 'hb';

const PORT_FIELDS = ['shell_port', 'iopub_port', 'stdin_port', 'control_port', 'hb_port'] as const;

/** Reads and validates a connection file; errors name the file and the offending field. */
export function readConnectionFile(file: string): ConnectionInfo {
  let raw: unknown;
  try {
    raw = JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch (e) {
    throw new Error(`connection file ${file}: cannot read it as JSON (${(e as Error).message})`);
  }
  return parseConnectionInfo(raw, file);
}

export function parseConnectionInfo(raw: unknown, source = 'connection info'): ConnectionInfo {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) throw new Error(`${source}: expected a JSON object`);
  const o = raw as Record<string, unknown>;
  const transport = o.transport ?? 'tcp';
  if (transport !== 'tcp' && transport !== 'ipc') throw new Error(`${source}: transport: expected "tcp" or "ipc", got ${JSON.stringify(transport)}`);
  if (typeof o.ip !== 'string' || o.ip === '') throw new Error(`${source}: ip: expected a non-empty string`);
  const key = o.key ?? '';
  if (typeof key !== 'string') throw new Error(`${source}: key: expected a string`);
  const scheme = o.signature_scheme ?? 'hmac-sha256';
  if (typeof scheme !== 'string') throw new Error(`${source}: signature_scheme: expected a string`);
  const info = { transport, ip: o.ip, key, signature_scheme: scheme } as ConnectionInfo;
  for (const field of PORT_FIELDS) {
    const port = o[field];
    if (typeof port !== 'number' || !Number.isInteger(port) || port < 1 || port > 65535) {
      throw new Error(`${source}: ${field}: expected an integer port in [1, 65535], got ${JSON.stringify(port)}`);
    }
    info[field] = port;
  }
  return info;
}

/** The ZMQ endpoint of one channel. */
export function endpoint(info: ConnectionInfo, channel: Channel): string {
  const port = info[`${channel}_port`];
  return info.transport === 'ipc' ? `ipc://${info.ip}-${port}` : `tcp://${info.ip}:${port}`;
}
