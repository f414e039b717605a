/** What the wire showed of redundancy: each node's readiness as a standby (changes), and the epochs. */
interface Wire {
  readiness: readonly { t: number; node: string; ready: boolean }[];
}

/**
 * When the fleet had a ready standby again at or after `from`: the first moment some node other
 * than the primary of that moment says, by its own heartbeat, that it is a ready standby (not
 * claiming the role, its worker's self-test passed lately, synced to the newest epoch). `epochs`
 * name each epoch's primary and when it began. Null when that never happened. Pure.
 */
export const redundantAfter = (
  o: Wire,
  epochs: readonly { primary: string; from: number }[],
  from: number,
): number | null => {
  const primaryAt = (t: number): string | undefined => [...epochs].reverse().find((e) => e.from <= t)?.primary;
  const ready = new Map<string, boolean>();
  const changes = [...o.readiness].sort((a, b) => a.t - b.t);
  const anyReady = (t: number): boolean => [...ready].some(([node, r]) => r && node !== primaryAt(t));
  let i = 0;
  for (; i < changes.length && (changes[i]?.t ?? Infinity) <= from; i++)
    ready.set(changes[i]?.node ?? '', changes[i]?.ready ?? false);
  if (anyReady(from)) return from;
  // A change of primary can make a node that was already ready count (or not): look at each moment.
  const moments = [...changes.slice(i).map((c) => c.t), ...epochs.map((e) => e.from).filter((t) => t > from)].sort(
    (a, b) => a - b,
  );
  for (const t of moments) {
    for (; i < changes.length && (changes[i]?.t ?? Infinity) <= t; i++)
      ready.set(changes[i]?.node ?? '', changes[i]?.ready ?? false);
    if (anyReady(t)) return t;
  }
  return null;
};
