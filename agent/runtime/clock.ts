/**
 * Clocks of one machine. `mono` is CLOCK_MONOTONIC in ms, shared by every process on the
 * machine (the agent and the worker compare it through the role file) and immune to wall
 * clock steps. `wall` is for display and for timestamps compared only on this machine; a
 * drill may skew it to prove that no decision depends on it.
 */
let wallOffsetMs = 0;

export const mono = (): number => Number(process.hrtime.bigint() / 1_000_000n);
export const wall = (): number => Date.now() + wallOffsetMs;

/** Skews this process's wall clock (drills only, through the node host's IPC channel). */
export const setWallOffset = (ms: number): void => {
  wallOffsetMs = ms;
};

/** Under a local node host, accept clock-skew messages; a no-op in production. */
export const listenForClockSkew = (): void => {
  if (process.send === undefined) return;
  process.on('message', (m: { type?: string; offsetMs?: number }) => {
    if (m.type === 'clock-offset' && typeof m.offsetMs === 'number') setWallOffset(m.offsetMs);
  });
  // The channel must not keep the daemon alive on its own.
  process.channel?.unref();
};

/**
 * Under a local node host (drills), tell it a step of this process's start is done; a no-op in
 * production. The host's lasting stall freezes each new worker once it has `taken-up` what the
 * last one held.
 */
export const tellHost = (step: 'taken-up'): void => {
  if (process.send !== undefined && process.connected) process.send({ type: step });
};
