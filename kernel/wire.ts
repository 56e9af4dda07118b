// The Jupyter wire protocol (messaging spec v5): turning ZMQ multipart frames into messages and
// back, with HMAC signatures.
//
//   [identity...] "<IDS|MSG>" signature header parent_header metadata content [buffer...]
//
// The signature is the hex HMAC of the four JSON frames, with the scheme and key from the
// connection file. An empty key means unsigned messages (signature "").

import { createHmac, randomUUID, timingSafeEqual } from 'crypto';

export const PROTOCOL_VERSION = '5.3';

const DELIMITER = Buffer.from('<IDS|MSG>');

export interface Header {
  msg_id: string;
  msg_type: string;
  session: string;
  username: string;
  date: string;
  version: string;
  [extra: string]: unknown;
}

export type JsonObject = Record<string, unknown>;

export interface Message {
  /** ZMQ routing prefix (ROUTER identities, or the iopub topic). */
  identities: Buffer[];
  header: Header;
  /** The header of the request this message answers or belongs to; {} when none. */
  parentHeader: Header | JsonObject;
  metadata: JsonObject;
  content: JsonObject;
  buffers: Buffer[];
}

/** Thrown for frames that are not a well-formed, correctly signed message. */
export class WireError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'WireError';
  }
}

/** Computes and checks message signatures for one connection. */
export class Signer {
  private readonly algorithm: string | null;

  constructor(scheme: string, private readonly key: string) {
    if (key === '') {
      this.algorithm = null;
      return;
    }
    const m = /^hmac-([a-z0-9-]+)$/.exec(scheme);
    if (!m) throw new WireError(`signature_scheme: expected "hmac-<digest>" (e.g. hmac-sha256), got ${JSON.stringify(scheme)}`);
    this.algorithm = m[1];
    try {
      createHmac(this.algorithm, key);
    } catch {
      throw new WireError(`signature_scheme: digest "${this.algorithm}" is not supported by this Node.js`);
    }
  }

  sign(parts: readonly (Buffer | string)[]): string {
    if (this.algorithm === null) return '';
    const hmac = createHmac(this.algorithm, this.key);
    for (const p of parts) hmac.update(p);
    return hmac.digest('hex');
  }

  verify(signature: string, parts: readonly Buffer[]): boolean {
    if (this.algorithm === null) return true;
    const expected = Buffer.from(this.sign(parts));
    const got = Buffer.from(signature);
    return expected.length === got.length && timingSafeEqual(expected, got);
  }
}

function parseJsonFrame(frame: Buffer, what: string): JsonObject {
  let value: unknown;
  try {
    value = JSON.parse(frame.toString('utf8'));
  } catch (e) {
    throw new WireError(`${what}: not valid JSON (${(e as Error).message})`);
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new WireError(`${what}: expected a JSON object`);
  }
  return value as JsonObject;
}

/** Decodes and verifies one multipart message. */
export function decode(frames: readonly Buffer[], signer: Signer): Message {
  const delim = frames.findIndex((f) => f.equals(DELIMITER));
  if (delim < 0) throw new WireError('message has no <IDS|MSG> delimiter');
  if (frames.length < delim + 6) throw new WireError(`message has ${frames.length - delim - 1} frames after the delimiter; expected at least 5`);
  const signature = frames[delim + 1].toString('ascii');
  const body = frames.slice(delim + 2, delim + 6);
  if (!signer.verify(signature, body)) throw new WireError('message signature does not match (wrong key?)');
  const header = parseJsonFrame(body[0], 'header');
  for (const field of ['msg_id', 'msg_type'] as const) {
    if (typeof header[field] !== 'string') throw new WireError(`header.${field}: expected a string`);
  }
  return {
    identities: frames.slice(0, delim),
    header: header as Header,
    parentHeader: parseJsonFrame(body[1], 'parent_header'),
    metadata: parseJsonFrame(body[2], 'metadata'),
    content: parseJsonFrame(body[3], 'content'),
    buffers: frames.slice(delim + 6),
  };
}

/** Encodes and signs one message into multipart frames. */
export function encode(msg: Message, signer: Signer): Buffer[] {
  const body = [msg.header, msg.parentHeader, msg.metadata, msg.content].map((part) => Buffer.from(JSON.stringify(part), 'utf8'));
  return [...msg.identities, DELIMITER, Buffer.from(signer.sign(body), 'ascii'), ...body, ...msg.buffers];
}

/** A fresh header for a message this kernel sends. */
export function newHeader(msgType: string, session: string): Header {
  return {
    msg_id: randomUUID(),
    msg_type: msgType,
    session,
    username: 'gdnlab',
    date: new Date().toISOString(),
    version: PROTOCOL_VERSION,
  };
}
