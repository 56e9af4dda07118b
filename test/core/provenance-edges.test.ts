// lib/provenance.ts and lib/paths.ts with their outside world replaced: git (child_process's
// execFileSync) answers what each test says, and fs.existsSync decides where a project root
// is. Each test loads fresh copies of the modules, so the caches they keep start empty.

import { strict as assert } from 'assert';
import * as os from 'os';
import * as path from 'path';

type Provenance = typeof import('../../lib/provenance');
type Paths = typeof import('../../lib/paths');

// The modules themselves, not the import-star wrappers, whose properties are getters.
// eslint-disable-next-line @typescript-eslint/no-var-requires
const childProcess = require('child_process') as { execFileSync: unknown };
// eslint-disable-next-line @typescript-eslint/no-var-requires
const fs = require('fs') as { existsSync: unknown };

const provenancePath = require.resolve('../../lib/provenance');
const pathsPath = require.resolve('../../lib/paths');
const libDir = path.dirname(pathsPath);

/** Fresh copies of paths.ts and provenance.ts (provenance's import gets the fresh paths). */
function fresh(): { prov: Provenance; paths: Paths } {
  const saved = [provenancePath, pathsPath].map((p) => [p, require.cache[p]] as const);
  for (const [p] of saved) delete require.cache[p];
  try {
    // eslint-disable-next-line @typescript-eslint/no-var-requires
    return { paths: require(pathsPath) as Paths, prov: require(provenancePath) as Provenance };
  } finally {
    for (const [p, m] of saved) {
      if (m) require.cache[p] = m;
      else delete require.cache[p];
    }
  }
}

type Call = { file: string; args: string[]; opts: unknown };

/** Runs fn with git answered by `answer` (its calls recorded) and GDN_REVISION set to `env` (or unset). */
function withGit<T>(answer: (args: string[]) => string, env: string | undefined, fn: (calls: Call[]) => T): T {
  const cp = childProcess;
  const original = cp.execFileSync;
  const saved = process.env.GDN_REVISION;
  const calls: Call[] = [];
  cp.execFileSync = (file: string, args: string[], opts: unknown) => {
    calls.push({ file, args, opts });
    return answer(args);
  };
  if (env === undefined) delete process.env.GDN_REVISION;
  else process.env.GDN_REVISION = env;
  try {
    return fn(calls);
  } finally {
    cp.execFileSync = original;
    if (saved === undefined) delete process.env.GDN_REVISION;
    else process.env.GDN_REVISION = saved;
  }
}

/** Runs fn with fs.existsSync answered by `exists` (its questions recorded). */
function withExists<T>(exists: (p: string) => boolean, fn: (asked: string[]) => T): T {
  const f = fs;
  const original = f.existsSync;
  const asked: string[] = [];
  f.existsSync = (p: string) => {
    asked.push(p);
    return exists(p);
  };
  try {
    return fn(asked);
  } finally {
    f.existsSync = original;
  }
}

const git = (rev: string, status: string) => (args: string[]) => (args[0] === 'rev-parse' ? rev : status);

describe('provenance: edges', () => {
  it('revision: the short hash, with -dirty when tracked files differ; git asked exactly so', () => {
    const { prov, paths } = fresh();
    withGit(git('0123456789ab\n', ' M lib/x.ts\n'), undefined, (calls) => {
      assert.equal(prov.revision(), '0123456789ab-dirty');
      const opts = { cwd: paths.projectRoot(), stdio: ['ignore', 'pipe', 'ignore'], encoding: 'utf8', timeout: 5000 };
      assert.deepEqual(calls, [
        { file: 'git', args: ['rev-parse', '--short=12', 'HEAD'], opts },
        { file: 'git', args: ['status', '--porcelain', '--untracked-files=no'], opts },
      ]);
      // Cached: git is not asked again, even when the answer would differ.
      assert.equal(prov.revision(), '0123456789ab-dirty');
      assert.equal(calls.length, 2);
    });
  });

  it('revision: clean (blank status), unknown when git fails', () => {
    withGit(git(' 0123456789ab \n', '  \n'), undefined, () => assert.equal(fresh().prov.revision(), '0123456789ab'));
    withGit(
      () => {
        throw new Error('not a git repository');
      },
      undefined,
      (calls) => {
        const { prov } = fresh();
        assert.equal(prov.revision(), 'unknown');
        assert.equal(prov.revision(), 'unknown');
        assert.equal(calls.length, 1);
      },
    );
  });

  it('revision: $GDN_REVISION when set and not empty, and then kept', () => {
    const { prov } = fresh();
    withGit(git('0123456789ab', ''), 'v1-from-env', (calls) => {
      assert.equal(prov.revision(), 'v1-from-env');
      assert.equal(calls.length, 0);
    });
    withGit(git('0123456789ab', ''), undefined, (calls) => {
      assert.equal(prov.revision(), 'v1-from-env');
      assert.equal(calls.length, 0);
    });
    withGit(git('fedcba987654', ''), '', () => assert.equal(fresh().prov.revision(), 'fedcba987654'));
  });

  it('hostFacts: the host, its platform line, cores and node version', () => {
    assert.deepEqual(fresh().prov.hostFacts(), {
      hostname: os.hostname(),
      platform: `${os.platform()} ${os.release()} ${os.arch()}`,
      cpus: os.cpus().length,
      node: process.version,
    });
  });
});

describe('paths: edges', () => {
  it('projectRoot: the nearest folder with both package.json and cuda/include/gdn.h, found once', () => {
    const { paths } = fresh();
    const root = path.resolve(libDir, '..', '..');
    withExists(
      // dist/lib has a package.json only, dist has gdn.h only: neither is the root.
      (p) => p === path.join(libDir, 'package.json') || p === path.join(libDir, '..', 'cuda', 'include', 'gdn.h') || p === path.join(root, 'package.json') || p === path.join(root, 'cuda', 'include', 'gdn.h'),
      (asked) => {
        assert.equal(paths.projectRoot(), root);
        assert.deepEqual(asked, [
          path.join(libDir, 'package.json'),
          path.join(libDir, 'cuda', 'include', 'gdn.h'),
          path.join(libDir, '..', 'package.json'),
          path.join(root, 'package.json'),
          path.join(root, 'cuda', 'include', 'gdn.h'),
        ]);
        assert.equal(paths.projectRoot(), root);
        assert.equal(asked.length, 5);
      },
    );
  });

  it('projectRoot: none up to the file system root is an error naming where it looked from', () => {
    const { paths } = fresh();
    withExists(
      () => false,
      (asked) => {
        assert.throws(() => paths.projectRoot(), {
          name: 'Error',
          message: `gdnlab: cannot find the project root (package.json and cuda/include/gdn.h) above ${libDir}`,
        });
        assert.equal(asked.length, libDir.split(path.sep).length); // one question per folder, '/' included
      },
    );
  });
});
