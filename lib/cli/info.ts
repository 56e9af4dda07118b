// `gdnlab info`: the backend, library and device this checkout would run on.

import { buildInfo, DeviceInfo, backendChoice } from '../backend';
import { ARITHMETIC_VERSION, revision } from '../provenance';
import { Command } from './args';
import { BACKEND_FLAG, JSON_FLAG, pickBackend } from './common';

function formatInfo(info: DeviceInfo): string[] {
  const mib = (n: number) => `${(n / 2 ** 20).toFixed(0)} MiB`;
  const lines = [`device:  ${info.name}`];
  if (info.backend === 'cuda') {
    lines.push(`sm:      ${info.smMajor}.${info.smMinor}, ${info.smCount} multiprocessors, L2 ${mib(info.l2Bytes)}`);
    lines.push(`memory:  ${mib(info.totalMemBytes)} total, ${mib(info.freeMemBytes)} free, bus ${info.memBusWidthBits} bits`);
    lines.push(`clocks:  SM ${info.smClockMhz} MHz (max ${info.maxSmClockMhz}), memory ${info.memClockMhz} MHz (max ${info.maxMemClockMhz}) [${info.clocksSource}]`);
    lines.push(`driver:  ${info.driverString || '?'} (CUDA driver API ${info.driverVersion}), runtime ${info.runtimeVersion}`);
  } else {
    lines.push(`cpus:    ${info.smCount} logical, last-level cache ${info.l2Bytes ? mib(info.l2Bytes) : 'unknown'}`);
    lines.push(`memory:  ${mib(info.totalMemBytes)} total`);
  }
  return lines;
}

export const infoCommand: Command = {
  words: ['info'],
  summary: 'backend, library and device facts',
  flags: [BACKEND_FLAG, JSON_FLAG],
  async run(args) {
    const backend = pickBackend(args);
    const lib = buildInfo();
    const facts = { backend: backend.kind, choice: args.flags.has('backend') ? `${backend.kind} (--backend)` : backendChoice(), library: lib, revision: revision(), arithmetic: ARITHMETIC_VERSION, device: backend.info() };
    if (args.flags.has('json')) {
      console.log(JSON.stringify(facts, null, 2));
    } else {
      console.log(`gdnlab ${revision()} (arithmetic v${ARITHMETIC_VERSION})`);
      console.log(`backend: ${facts.choice}`);
      console.log(`library: ${lib.path} (${lib.build}, ABI ${lib.abi})`);
      for (const l of formatInfo(facts.device)) console.log(l);
    }
    return 0;
  },
};
