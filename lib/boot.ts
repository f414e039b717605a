import { readFileSync } from 'node:fs';

let cached: string | undefined;

/** This machine's boot id: CLOCK_MONOTONIC values mean nothing across a reboot. */
export const bootId = (): string => {
  if (cached === undefined) {
    try {
      cached = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
    } catch {
      cached = 'unknown';
    }
  }
  return cached;
};
