// A temporary copy of one notebook placed so that it behaves as the committed one: a temp folder
// mirrors the project (symbolic links to every top-level entry and to the notebook's neighbours),
// with only the notebook itself a real copy. A test can run, change and save it freely.

import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { projectRoot } from '../../lib/notebooks/paths';

export interface StagedNotebook {
  /** The temp folder standing in for the project root (serve this). */
  root: string;
  /** The notebook's path relative to root, with forward slashes. */
  relPath: string;
  /** The copy on disk. */
  file: string;
  cleanup(): void;
}

export function stageNotebook(notebook: string): StagedNotebook {
  const project = projectRoot();
  const source = path.resolve(notebook);
  const rel = path.relative(project, source);
  if (rel.startsWith('..') || path.isAbsolute(rel)) throw new Error(`notebook: ${notebook} is not inside ${project}`);
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'gdnlab-stage-'));
  const link = (from: string, to: string) => fs.symlinkSync(from, to);

  // Mirror the path down to the notebook's folder: at each level, link every sibling.
  const parts = rel.split(path.sep);
  let srcDir = project;
  let dstDir = root;
  for (let i = 0; i < parts.length; i++) {
    const keep = parts[i];
    for (const entry of fs.readdirSync(srcDir)) {
      if (entry === keep || entry === '.git') continue;
      link(path.join(srcDir, entry), path.join(dstDir, entry));
    }
    if (i < parts.length - 1) {
      srcDir = path.join(srcDir, keep);
      dstDir = path.join(dstDir, keep);
      fs.mkdirSync(dstDir);
    }
  }
  const file = path.join(root, rel);
  fs.copyFileSync(source, file);
  return {
    root,
    relPath: parts.join('/'),
    file,
    cleanup: () => fs.rmSync(root, { recursive: true, force: true }),
  };
}
