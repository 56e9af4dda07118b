// `gdnlab kernel install`: installs the gdnlab Jupyter kernelspec (kernel/install.ts does the work).

import * as path from 'path';
import { spawnSync } from 'child_process';
import { Command } from './args';

export const kernelInstallCommand: Command = {
  words: ['kernel', 'install'],
  summary: 'installs (or with --uninstall removes) the gdnlab Jupyter kernelspec',
  flags: [
    { name: 'python', value: 'PY', help: 'the Python whose Jupyter gets the kernel' },
    { name: 'user', help: 'the per-user kernels folder (default)' },
    { name: 'sys-prefix', help: '<sys.prefix of that python>/share/jupyter/kernels' },
    { name: 'prefix', value: 'DIR', help: 'DIR/share/jupyter/kernels' },
    { name: 'name', value: 'NAME', help: 'the kernelspec name (default gdnlab)' },
    { name: 'display-name', value: 'TEXT', help: 'the name Jupyter shows' },
    { name: 'env', value: 'NAME=VALUE', repeatable: true, help: 'an environment variable of the kernel (repeatable)' },
    { name: 'uninstall', help: 'remove the kernelspec from the chosen place instead' },
  ],
  async run(args) {
    // The installer reads the same flags again (it also runs on its own: node dist/kernel/install.js).
    const rest: string[] = [];
    for (const [name, value] of args.flags) {
      if (value === true) rest.push(`--${name}`);
      else for (const v of args.all.get(name) ?? [value]) rest.push(`--${name}`, v);
    }
    const installer = path.join(__dirname, '..', '..', 'kernel', 'install.js');  // dist/lib/cli -> dist/kernel
    return spawnSync(process.execPath, [installer, ...rest], { stdio: 'inherit' }).status ?? 1;
  },
};
