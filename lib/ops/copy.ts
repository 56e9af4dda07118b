// The memory roofline: a device-to-device copy of a given number of bytes, timed in the same run
// as the kernels it is the yardstick for.

import { Tensor } from '../tensor';
import { Backend, NativeOp } from '../backend';
import { backendOf, expectInt } from './common';

/**
 * A copy op moving `bytes` in total (bytes/2 read + bytes/2 written), for the timing loop. A kernel
 * that reads R and writes W bytes is compared with copyOp(R + W): both move the same traffic.
 */
export function copyOp(bytes: number, opts: { backend?: Backend; label?: string } = {}): NativeOp & { release(): void } {
  expectInt(bytes, 'bytes', 2);
  const half = Math.floor(bytes / 2);
  const backend = backendOf(opts);
  const src = Tensor.empty([half], 'i8', { backend });
  const dst = Tensor.empty([half], 'i8', { backend });
  backend.fillU32(src.addr, 0x3f803f80, Math.floor(half / 4) * 4);
  return {
    kind: 'copy',
    args: { dst: dst.addr, src: src.addr, bytes: half },
    label: opts.label ?? `copy ${formatBytes(bytes)}`,
    release() {
      src.release();
      dst.release();
    },
  };
}

export function formatBytes(n: number): string {
  if (n >= 1e9) return `${(n / 1e9).toFixed(2)} GB`;
  if (n >= 1e6) return `${(n / 1e6).toFixed(1)} MB`;
  if (n >= 1e3) return `${(n / 1e3).toFixed(1)} kB`;
  return `${n} B`;
}
