// `gdnlab kernel install` in process (lib/cli/kernel.ts): the flags are handed on to the installer
// (dist/kernel/install.js, which reads them again) in the order given, each value after its flag, a repeated
// --env once per value; the installer's exit status is the command's. spawnSync is replaced by a recorder.

import { strict as assert } from 'assert';
import * as path from 'path';
import { kernelInstallCommand } from '../../lib/cli/kernel';
import { Stubs, captured, cli } from './edges-helpers';

const childProcess = require('child_process') as Record<string, unknown>;
// dist/test/cli -> dist/kernel/install.js, where the command (dist/lib/cli) finds it too.
const INSTALLER = path.resolve(__dirname, '..', '..', 'kernel', 'install.js');

describe('gdnlab kernel install, in process', () => {
  const stubs = new Stubs();
  afterEach(() => stubs.restore());

  const spawned = (status: number | null) => {
    const calls: { file: string; argv: string[]; opts: unknown }[] = [];
    stubs.set(childProcess, 'spawnSync', (file: string, argv: string[], opts: unknown) => (calls.push({ file, argv, opts }), { status }));
    return calls;
  };

  it('every flag reaches the installer, in order, values after their flags, --env once per value', async () => {
    const calls = spawned(0);
    const r = await cli([
      'kernel', 'install', '--python', '/v/bin/python', '--user', '--sys-prefix', '--prefix', '/p', '--name', 'gdn2',
      '--display-name', 'GDN two', '--env', 'A=1', '--env', 'B=2', '--uninstall',
    ]);
    assert.equal(r.status, 0, r.err);
    assert.deepEqual(calls, [{
      file: process.execPath,
      argv: [INSTALLER, '--python', '/v/bin/python', '--user', '--sys-prefix', '--prefix', '/p', '--name', 'gdn2', '--display-name', 'GDN two', '--env', 'A=1', '--env', 'B=2', '--uninstall'],
      opts: { stdio: 'inherit' },
    }]);
  });

  it('no flags: the installer alone; its exit status is the command\'s, and a killed installer (no status) is 1', async () => {
    const calls = spawned(3);
    assert.equal((await cli(['kernel', 'install'])).status, 3);
    assert.deepEqual(calls[0].argv, [INSTALLER]);
    stubs.restore();
    spawned(null);
    assert.equal((await cli(['kernel', 'install', '--user'])).status, 1);
  });

  it('a value without its list in args.all (a Parsed made by hand) is still passed', async () => {
    const calls = spawned(0);
    const r = await captured(() => kernelInstallCommand.run({ flags: new Map<string, string | true>([['name', 'x'], ['user', true]]), all: new Map(), operands: [] }));
    assert.equal(r.status, 0);
    assert.deepEqual(calls[0].argv, [INSTALLER, '--name', 'x', '--user']);
  });
});
