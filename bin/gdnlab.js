#!/usr/bin/env node
// The gdnlab command: see `gdnlab help`. The TypeScript sources are compiled by `npm run build`.
'use strict';
const path = require('path');
let cli;
try {
  cli = require(path.join(__dirname, '..', 'dist', 'lib', 'cli.js'));
} catch (e) {
  console.error(`gdnlab: the TypeScript build is missing (${e.message}); run \`npm run build\` first`);
  process.exit(2);
}
cli.main(process.argv.slice(2)).then((code) => process.exit(code));
