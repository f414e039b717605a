import { readFileSync } from 'node:fs';

let cached: string | undefined;

/**
 * This machine's boot id: CLOCK_MONOTONIC values mean nothing across a reboot. The local fleet's
 * machines share one kernel, so each local boot names itself in QUEEN_FLEET_BOOT_ID.
 */
export const bootId = (): string => {
  if (cached === undefined) {
    const given = process.env.QUEEN_FLEET_BOOT_ID;
    if (given !== undefined && given !== '') return (cached = given);
    try {
      cached = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
    } catch {
      cached = 'unknown';
    }
  }
  return cached;
};
