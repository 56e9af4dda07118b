// A run's facts at their edges. On the host backend (what this machine has) every fact is read from the
// real libgdn; the CUDA facts (compute capability, driver and runtime versions as major.minor, an
// unnamed driver) come from a stand-in backend put in place of activeBackend / backendChoice /
// buildInfo for a test, and the revision from a stand-in for provenance's revision(). showRunInfo is
// watched through the stand-in kernel channel of fake-kernel.ts: one output, a table and a line
// without the empty facts, and the facts themselves as JSON.

import { strict as assert } from 'assert';
import * as os from 'os';
import { Backend, backendChoice, buildInfo } from '../../lib/backend';
import { htmlTable, textTable } from '../../lib/view/format';
import { RUN_INFO_MIME, RunInfo, runInfo, showRunInfo } from '../../lib/view/run-info';
import { withKernel } from './fake-kernel';

// The modules themselves, so that a test can replace an export that run-info.ts calls.
// eslint-disable-next-line @typescript-eslint/no-var-requires
const backendModule = require('../../lib/backend') as Record<string, unknown>;
// eslint-disable-next-line @typescript-eslint/no-var-requires
const provenanceModule = require('../../lib/provenance') as Record<string, unknown>;

const KEYS = ['backend', 'backendChoice', 'device', 'sm', 'driver', 'library', 'revision', 'date', 'host', 'node'];

describe('run info: edges', () => {
  const saved: [Record<string, unknown>, string, unknown][] = [];
  const replace = (m: Record<string, unknown>, key: string, value: unknown) => {
    saved.push([m, key, m[key]]);
    m[key] = value;
  };
  // The host backend is the active one for every test (whatever GDN_BACKEND says: on a GPU machine it may be cuda);
  // the CUDA facts come from the stand-in below.
  let host: Backend;
  before(() => (host = Backend.open('host')));
  after(() => host.close());
  beforeEach(() => {
    replace(provenanceModule, 'revision', () => 'rev1234');
    replace(backendModule, 'activeBackend', () => host);
  });
  afterEach(() => {
    for (const [m, key, value] of saved.reverse()) m[key] = value;
    saved.length = 0;
  });

  /** A CUDA backend as far as runInfo looks: kind and info(). */
  const cuda = (info: Record<string, unknown>) => {
    replace(backendModule, 'activeBackend', () => ({ kind: 'cuda', info: () => ({ backend: 'cuda', name: 'NVIDIA H100 80GB HBM3', smMajor: 9, smMinor: 0, driverString: '550.54.15', driverVersion: 12040, runtimeVersion: 12080, ...info }) }));
    replace(backendModule, 'backendChoice', () => 'cuda (GDN_BACKEND=cuda)');
    replace(backendModule, 'buildInfo', () => ({ path: '/x/libgdn.so', build: 'cuda; sm_90', abi: 9 }));
  };

  it('on the host backend: the real backend, choice and build; no compute capability or driver', () => {
    const t0 = Date.now();
    const facts = runInfo();
    const t1 = Date.now();
    assert.deepEqual(Object.keys(facts), KEYS);
    assert.deepEqual(
      [facts.backend, facts.backendChoice, facts.device, facts.sm, facts.driver, facts.library, facts.revision, facts.host, facts.node],
      ['host', backendChoice(), host.info().name, '', '', buildInfo().build, 'rev1234', os.hostname(), process.version],
    );
    assert.match(facts.date, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    const at = Date.parse(facts.date);
    assert.ok(at >= t0 && at <= t1, `${facts.date} between ${t0} and ${t1}`);
  });

  it('on CUDA: sm major.minor, the driver with CUDA versions as major.minor (thousands, then tens)', () => {
    cuda({});
    const facts = runInfo();
    assert.deepEqual([facts.backend, facts.backendChoice, facts.device, facts.sm, facts.driver, facts.library], [
      'cuda', 'cuda (GDN_BACKEND=cuda)', 'NVIDIA H100 80GB HBM3', '9.0', '550.54.15 (CUDA 12.4, runtime 12.8)', 'cuda; sm_90',
    ]);
  });

  it('versions: 12345 is 12.34, 1000 is 1.0, 999 is 0.99, 0 (unknown) is empty; a driver without a name is "?"', () => {
    cuda({ smMajor: 12, smMinor: 1, driverString: '', driverVersion: 12345, runtimeVersion: 1000 });
    assert.deepEqual([runInfo().sm, runInfo().driver], ['12.1', '? (CUDA 12.34, runtime 1.0)']);
    cuda({ driverVersion: 0, runtimeVersion: 999 });
    assert.equal(runInfo().driver, '550.54.15 (CUDA , runtime 0.99)');
    cuda({ driverVersion: 1, runtimeVersion: -5 });
    assert.equal(runInfo().driver, '550.54.15 (CUDA 0.0, runtime )');
  });

  it('the device\'s own backend decides: a host device reports no sm or driver whatever its fields', () => {
    cuda({ backend: 'host', name: 'cpu' });
    const facts = runInfo();
    assert.deepEqual([facts.backend, facts.device, facts.sm, facts.driver], ['cuda', 'cpu', '', '']);
  });

  it('showRunInfo: one output with a table, a line and the facts; empty facts left out of the table', async () => {
    const { value, outputs } = await withKernel(() => showRunInfo());
    assert.equal(outputs.length, 1);
    const [out] = outputs;
    assert.deepEqual(Object.keys(out.data), ['text/html', 'text/plain', RUN_INFO_MIME]);
    assert.equal(RUN_INFO_MIME, 'application/vnd.gdnlab.run-info+json');
    assert.equal(out.data[RUN_INFO_MIME], value);
    assert.deepEqual(out.metadata, {});
    const rows = KEYS.filter((k) => k !== 'sm' && k !== 'driver').map((fact) => ({ fact, value: value[fact as keyof RunInfo] }));
    const caption = `This run: host backend on ${value.device}, revision rev1234`;
    assert.equal(out.data['text/html'], htmlTable(['fact', 'value'], rows, { caption }));
    assert.equal(out.data['text/plain'], textTable(['fact', 'value'], rows, { caption }));
    assert.ok((out.data['text/plain'] as string).startsWith(caption));
  });

  it('showRunInfo on CUDA: every fact in the table, in order', async () => {
    cuda({});
    const { value, outputs } = await withKernel(() => showRunInfo());
    const rows = KEYS.map((fact) => ({ fact, value: value[fact as keyof RunInfo] }));
    const caption = 'This run: cuda backend on NVIDIA H100 80GB HBM3, revision rev1234';
    assert.equal(outputs[0].data['text/html'], htmlTable(['fact', 'value'], rows, { caption }));
    assert.equal(outputs[0].data['text/plain'], textTable(['fact', 'value'], rows, { caption }));
  });

  it('showRunInfo outside a kernel: nothing shown, the facts returned', () => {
    const facts = showRunInfo();
    assert.deepEqual(Object.keys(facts), KEYS);
    assert.equal(facts.revision, 'rev1234');
  });
});
