// Arm definitions from files, for the command line (`gdnlab check|bench … --define FILE[,FILE]`;
// docs/USER-ARMS.md, "From the command line"): the same specs a cell passes to defineArm, so an arm
// written in a notebook can be checked and benchmarked by the CLI exactly as the built-ins are.
//
// A file is a .json document or a CommonJS module (.js/.cjs) whose value (module.exports) is one spec
// or an array of specs. Each spec names its family with `op: 'conv' | 'postconv'`; `sourceFile`
// (relative to the definition file) may stand in for an inline `source`.

import * as fs from 'fs';
import * as path from 'path';
import { Backend } from '../backend';
import { defineConvArm, definePostconvArm, ConvArmSpec, PostconvArmSpec, DefinedArm } from './define';

type FileSpec = (ConvArmSpec | PostconvArmSpec) & { op?: unknown; sourceFile?: unknown };

function readSpecs(file: string): unknown {
  const ext = path.extname(file).toLowerCase();
  if (ext === '.json') {
    try {
      return JSON.parse(fs.readFileSync(file, 'utf8'));
    } catch (e) {
      throw new TypeError(`--define ${file}: not valid JSON (${(e as Error).message})`);
    }
  }
  if (ext === '.js' || ext === '.cjs') {
    // eslint-disable-next-line @typescript-eslint/no-var-requires
    const m = require(file);
    return m && typeof m === 'object' && 'default' in m ? m.default : m;
  }
  throw new TypeError(`--define ${file}: expected a .json, .js or .cjs file holding one arm spec or a list of them`);
}

/** Defines every arm of the files (comma-separated paths) for `backend`; errors name the file and spec. */
export function defineArmsFromFiles(files: string, backend: Backend): DefinedArm[] {
  const defined: DefinedArm[] = [];
  for (const given of files.split(',').map((f) => f.trim()).filter((f) => f !== '')) {
    const file = path.resolve(given);
    if (!fs.existsSync(file)) throw new TypeError(`--define ${given}: no such file`);
    const value = readSpecs(file);
    const specs = Array.isArray(value) ? value : [value];
    if (specs.length === 0) throw new TypeError(`--define ${given}: the file defines no arm (an empty list)`);
    specs.forEach((raw, i) => {
      const where = `--define ${given}${specs.length > 1 ? ` [${i}]` : ''}`;
      if (!raw || typeof raw !== 'object') throw new TypeError(`${where}: expected an arm spec object, got ${JSON.stringify(raw)}`);
      const { op, sourceFile, ...spec } = raw as FileSpec;
      if (op !== 'conv' && op !== 'postconv') throw new TypeError(`${where}: op: expected 'conv' or 'postconv', got ${JSON.stringify(op)}`);
      if (sourceFile !== undefined) {
        if (typeof sourceFile !== 'string') throw new TypeError(`${where}: sourceFile: expected a path relative to the file, got ${JSON.stringify(sourceFile)}`);
        if (spec.source !== undefined) throw new TypeError(`${where}: give source or sourceFile, not both`);
        const src = path.resolve(path.dirname(file), sourceFile);
        if (!fs.existsSync(src)) throw new TypeError(`${where}: sourceFile: no such file ${src}`);
        spec.source = fs.readFileSync(src, 'utf8');
      }
      try {
        defined.push(op === 'conv' ? defineConvArm(spec as ConvArmSpec, { backend }) : definePostconvArm(spec as PostconvArmSpec, { backend }));
      } catch (e) {
        // The same error a cell gets (a compile error keeps its class and compiler messages), with the file named.
        if (e instanceof Error) e.message = `${where}: ${e.message}`;
        throw e;
      }
    });
  }
  return defined;
}
