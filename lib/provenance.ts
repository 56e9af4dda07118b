// Where a number came from: the git revision of this checkout, the host, the time.

import { execFileSync } from 'child_process';
import * as os from 'os';
import { projectRoot } from './paths';

/**
 * The version of the shared arithmetic every arm computes with (detmath's exp/log1p, the fold
 * orders of the reference arms, the rounding of every store). The bits of the reference arms are
 * pinned per version in test/golden/*.json; a change of those bits needs a new version here and
 * regenerated goldens in the same commit (docs/TESTING.md, "Pinned reference bits"). Every
 * result's provenance records it, so numbers from different arithmetic are never put side by side.
 * The library reports its own (gdn_arith_version, GDN_ARITH_VERSION in gdn.h); the loader refuses a
 * libgdn built with another one.
 */
export const ARITHMETIC_VERSION = 2;

let cachedRevision: string | undefined;

/** The git revision of the gdnlab checkout ("abc1234", with "-dirty" when files differ), or $GDN_REVISION, or "unknown". */
export function revision(): string {
  if (cachedRevision !== undefined) return cachedRevision;
  if (process.env.GDN_REVISION) return (cachedRevision = process.env.GDN_REVISION);
  try {
    const opts = { cwd: projectRoot(), stdio: ['ignore', 'pipe', 'ignore'] as ('ignore' | 'pipe')[], encoding: 'utf8' as const, timeout: 5000 };
    const rev = execFileSync('git', ['rev-parse', '--short=12', 'HEAD'], opts).trim();
    const dirty = execFileSync('git', ['status', '--porcelain', '--untracked-files=no'], opts).trim() !== '';
    cachedRevision = rev + (dirty ? '-dirty' : '');
  } catch {
    cachedRevision = 'unknown';
  }
  return cachedRevision;
}

export interface HostFacts {
  hostname: string;
  platform: string;
  cpus: number;
  node: string;
}

export function hostFacts(): HostFacts {
  return { hostname: os.hostname(), platform: `${os.platform()} ${os.release()} ${os.arch()}`, cpus: os.cpus().length, node: process.version };
}
