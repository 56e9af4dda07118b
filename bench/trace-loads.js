// Preloaded with `node --require bench/trace-loads.js` (through NODE_OPTIONS, so the gdnlab kernel
// that Jupyter starts is traced too): appends to $GDNLAB_TRACE_FILE every file this process
// loads or looks at — modules through require (Module._extensions, native addons through
// process.dlopen) and any path read, opened, stat'ed or listed through fs (TypeScript reads its
// lib .d.ts files and probes package.json files that way). bench/pack-notebook-run.sh keeps the
// node_modules files of the trace, so the GPU bundle holds what a real run needs and no more.
'use strict';
const fs = require('fs');
const path = require('path');
const Module = require('module');

const out = process.env.GDNLAB_TRACE_FILE;
if (out) {
  const seen = new Set();
  const append = fs.appendFileSync.bind(fs);
  const note = (p) => {
    if (typeof p !== 'string' && !(p instanceof URL) && !Buffer.isBuffer(p)) return;
    let s = p instanceof URL ? p.pathname : String(p);
    if (!s.includes('node_modules')) return;
    s = path.resolve(s);
    if (seen.has(s)) return;
    seen.add(s);
    try {
      append(out, s + '\n');
    } catch {
      // a trace that cannot be written must not break the run it traces
    }
  };
  for (const ext of Object.keys(Module._extensions)) {
    const load = Module._extensions[ext];
    Module._extensions[ext] = function (module, filename) {
      note(filename);
      return load.apply(this, arguments);
    };
  }
  const dlopen = process.dlopen;
  process.dlopen = function (module, filename) {
    note(filename);
    return dlopen.apply(this, arguments);
  };
  const names = ['readFileSync', 'openSync', 'statSync', 'lstatSync', 'existsSync', 'readdirSync', 'realpathSync', 'accessSync',
    'readFile', 'open', 'stat', 'lstat', 'readdir', 'access', 'createReadStream'];
  for (const name of names) {
    const f = fs[name];
    if (typeof f !== 'function') continue;
    const wrapped = function (p) {
      note(p);
      return f.apply(this, arguments);
    };
    if (f.native) wrapped.native = f.native;
    fs[name] = wrapped;
  }
  for (const name of ['readFile', 'open', 'stat', 'lstat', 'readdir', 'access']) {
    const f = fs.promises[name];
    fs.promises[name] = function (p) {
      note(p);
      return f.apply(this, arguments);
    };
  }
}
