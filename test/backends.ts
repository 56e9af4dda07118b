// Which backends the native tests run on: GDN_TEST_BACKENDS=host (default) or host,cuda on a GPU machine.
// A test file calls forEachBackend(b => { ... }) so the same assertions run on every backend.

import { Backend, BackendKind } from '../lib/backend';

export function testBackendKinds(): BackendKind[] {
  const list = (process.env.GDN_TEST_BACKENDS ?? 'host').split(',').map((s) => s.trim()).filter(Boolean);
  for (const k of list) if (k !== 'host' && k !== 'cuda') throw new Error(`GDN_TEST_BACKENDS: unknown backend '${k}'`);
  return list as BackendKind[];
}

const opened = new Map<BackendKind, Backend>();

export function openBackend(kind: BackendKind): Backend {
  let b = opened.get(kind);
  if (!b || b.closed) {
    b = Backend.open(kind);
    opened.set(kind, b);
  }
  return b;
}

/** Runs `body` once per test backend, inside a describe named after it. */
export function forEachBackend(body: (backend: () => Backend, kind: BackendKind) => void): void {
  for (const kind of testBackendKinds()) {
    describe(`[${kind}]`, () => body(() => openBackend(kind), kind));
  }
}

/**
 * Cross-backend comparisons (CUDA against the host, bit for bit) exist only when the CUDA backend is
 * tested. Without it, say so: one skipped test with the reason, instead of a loop that silently
 * runs zero times.
 */
export function noteCrossBackend(what: string): void {
  if (testBackendKinds().includes('cuda')) return;
  it(`${what}: cuda == host bit for bit — SKIPPED, needs a GPU (GDN_TEST_BACKENDS=host,cuda)`, function () {
    this.skip();
  });
}
