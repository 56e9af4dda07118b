#!/usr/bin/env node
// The gdnlab command: see `gdnlab help`. The TypeScript sources are compiled by `npm run build`.
'use strict';
const path = require('path');
let cli;
try {
  cli = require(path.join(__dirname, '..', 'dist', 'lib', 'cli', 'index.js'));
} catch (e) {
  console.error(`gdnlab: the TypeScript build is missing (${e.message}); run \`npm run build\` first`);
  process.exit(2);
}
// stdout and stderr are asynchronous on pipes: process.exit() right after a large write cuts the
// output at whatever the pipe had taken (seen: 131,072 bytes of `check conv --json | python3 -m json.tool`).
// So the exit waits until both streams have handed every byte written so far to the OS.
// A reader that goes away early (`| head`) is not an error of ours.
for (const s of [process.stdout, process.stderr]) {
  s.on('error', (e) => {
    if (e.code === 'EPIPE') process.exit(process.exitCode ?? 0);
    throw e;
  });
}
cli.main(process.argv.slice(2)).then(
  (code) => cli.exitAfterDrain(code),
  (e) => {
    console.error(`gdnlab: ${e && e.stack ? e.stack : e}`);
    cli.exitAfterDrain(1);
  },
);
