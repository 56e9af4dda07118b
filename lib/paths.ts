// Where the gdnlab checkout is: the one place that answers it (no native code loaded).

import * as fs from 'fs';
import * as path from 'path';

let cached: string | undefined;

/** The gdnlab project root: the nearest folder above this file holding package.json and cuda/include/gdn.h. */
export function projectRoot(): string {
  if (cached) return cached;
  for (let dir = __dirname; ; ) {
    if (fs.existsSync(path.join(dir, 'package.json')) && fs.existsSync(path.join(dir, 'cuda', 'include', 'gdn.h'))) return (cached = dir);
    const up = path.dirname(dir);
    if (up === dir) throw new Error(`gdnlab: cannot find the project root (package.json and cuda/include/gdn.h) above ${__dirname}`);
    dir = up;
  }
}
