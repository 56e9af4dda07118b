// `gdnlab info` in process (lib/cli/info.ts): the text and JSON facts for a CUDA device (through a stand-in
// backend) and for the host, how the backend was chosen, and one real run on the host backend.

import { strict as assert } from 'assert';
import { Backend } from '../../lib/backend';
import { ARITHMETIC_VERSION, revision } from '../../lib/provenance';
import { Stubs, cli, fakeBackend, fakeBackends, lines } from './edges-helpers';

const backendModule = require('../../lib/backend') as Record<string, unknown>;

const MiB = 2 ** 20;
const LIB = { path: '/opt/gdn/libgdn.so', build: 'cuda 12.4 sm_90', abi: 7 };
const GPU = {
  name: 'NVIDIA H100', smMajor: 9, smMinor: 0, smCount: 132, l2Bytes: 50 * MiB, totalMemBytes: 81559 * MiB, freeMemBytes: 80000 * MiB,
  memBusWidthBits: 5120, smClockMhz: 1755, maxSmClockMhz: 1980, memClockMhz: 2619, maxMemClockMhz: 2620, clocksSource: 'nvml' as const,
  driverString: '550.54', driverVersion: 12040, runtimeVersion: 12030,
};

describe('gdnlab info, in process', () => {
  const stubs = new Stubs();
  afterEach(() => stubs.restore());

  const withLibrary = (choice: string) => {
    stubs.set(backendModule, 'buildInfo', () => LIB);
    stubs.set(backendModule, 'backendChoice', () => choice);
  };

  it('a CUDA device: sm, memory, clocks and driver lines; the choice comes from backendChoice()', async () => {
    withLibrary('auto → cuda (1 CUDA device usable)');
    fakeBackends(stubs, fakeBackend('cuda', GPU));
    const r = await cli(['info']);
    assert.equal(r.status, 0, r.err);
    assert.deepEqual(lines(r.out), [
      `gdnlab ${revision()} (arithmetic v${ARITHMETIC_VERSION})`,
      'backend: auto → cuda (1 CUDA device usable)',
      'library: /opt/gdn/libgdn.so (cuda 12.4 sm_90, ABI 7)',
      'device:  NVIDIA H100',
      'sm:      9.0, 132 multiprocessors, L2 50 MiB',
      'memory:  81559 MiB total, 80000 MiB free, bus 5120 bits',
      'clocks:  SM 1755 MHz (max 1980), memory 2619 MHz (max 2620) [nvml]',
      'driver:  550.54 (CUDA driver API 12040), runtime 12030',
    ]);
    assert.equal(r.err, '');
  });

  it('--backend cuda: the backend given, named as chosen by the flag (backendChoice is not asked); no driver string: ?', async () => {
    stubs.set(backendModule, 'buildInfo', () => LIB);
    stubs.set(backendModule, 'backendChoice', () => assert.fail('backendChoice called with --backend'));
    const backends = fakeBackends(stubs, undefined, { cuda: { ...GPU, driverString: '' } });
    const r = await cli(['info', '--backend', 'cuda']);
    assert.equal(r.status, 0, r.err);
    assert.deepEqual(backends.opened.map((b) => b.kind), ['cuda']);
    assert.equal(backends.activeCalls, 0);
    const l = lines(r.out);
    assert.equal(l[1], 'backend: cuda (--backend)');
    assert.equal(l[7], 'driver:  ? (CUDA driver API 12040), runtime 12030');
  });

  it('the host: cpus and memory only; an unknown last-level cache says so', async () => {
    withLibrary('host (GDN_BACKEND=host)');
    const host = { backend: 'host' as const, name: 'AMD EPYC', smCount: 2, l2Bytes: 32 * MiB, totalMemBytes: 24576 * MiB };
    fakeBackends(stubs, fakeBackend('host', host));
    assert.deepEqual(lines((await cli(['info'])).out).slice(1), [
      'backend: host (GDN_BACKEND=host)',
      'library: /opt/gdn/libgdn.so (cuda 12.4 sm_90, ABI 7)',
      'device:  AMD EPYC',
      'cpus:    2 logical, last-level cache 32 MiB',
      'memory:  24576 MiB total',
    ]);
    stubs.restore();
    withLibrary('host (GDN_BACKEND=host)');
    fakeBackends(stubs, fakeBackend('host', { ...host, l2Bytes: 0 }));
    assert.equal(lines((await cli(['info'])).out)[4], 'cpus:    2 logical, last-level cache unknown');
  });

  it('--json: every fact as one JSON object, nothing else on stdout', async () => {
    withLibrary('auto → cuda (1 CUDA device usable)');
    const gpu = fakeBackend('cuda', GPU);
    fakeBackends(stubs, gpu);
    const r = await cli(['info', '--json']);
    assert.equal(r.status, 0);
    assert.equal(r.out, JSON.stringify({
      backend: 'cuda', choice: 'auto → cuda (1 CUDA device usable)', library: LIB, revision: revision(), arithmetic: ARITHMETIC_VERSION, device: gpu.info(),
    }, null, 2) + '\n');
    const given = JSON.parse((await cli(['info', '--json', '--backend', 'host'])).out);
    assert.deepEqual([given.backend, given.choice, given.device.name], ['host', 'host (--backend)', 'host device']);
  });

  it('runs for real on the host backend', async () => {
    // The backend --backend opens is closed after (the command leaves that to the process's exit).
    const opened: Backend[] = [];
    const open = Backend.open.bind(Backend);
    stubs.set(Backend, 'open', (kind: 'host') => {
      const b = open(kind);
      opened.push(b);
      return b;
    });
    const r = await cli(['info', '--backend', 'host']);
    for (const b of opened) b.close();
    assert.equal(opened.length, 1);
    assert.equal(r.status, 0, r.err);
    const l = lines(r.out);
    assert.equal(l[1], 'backend: host (--backend)');
    assert.match(l[2], /^library: .*libgdn\.so \(.*, ABI \d+\)$/);
    assert.match(l[4], /^cpus: {4}\d+ logical, last-level cache (\d+ MiB|unknown)$/);
    assert.match(l[5], /^memory: {2}\d+ MiB total$/);
    assert.equal(l.length, 6);
  });
});
