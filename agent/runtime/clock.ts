/**
 * Clocks of one machine. `mono` is CLOCK_MONOTONIC in ms, shared by every process on the
 * machine (the agent and the worker compare it through the role file) and immune to wall
 * clock steps. `wall` is for display and for timestamps compared only on this machine; a
 * drill may skew it to prove that no decision depends on it.
 */
let wallOffsetMs = 0;

export const mono = (): number => Number(process.hrtime.bigint() / 1_000_000n);
export const wall = (): number => Date.now() + wallOffsetMs;

/** Skews `wall` alone (tests of this process). */
export const setWallOffset = (ms: number): void => {
  wallOffsetMs = ms;
};

/** Set by the local node host in its processes' environment: they may pass its gates. */
export const HOST_GATE = 'QUEEN_FLEET_HOST_GATE';

/** `Date.now` as the process started with it: the machine's own clock. */
const systemNow = Date.now.bind(Date);

/**
 * Skews this whole process's clock as a machine's wrong clock would be: `Date.now` (so `wall`,
 * and the time the AWS SDK signs requests with: `new Date(Date.now() + systemClockOffset)`), never
 * `mono`. Only the local node host asks for it, through its IPC channel: drills only.
 */
export const skewProcessClock = (ms: number): void => {
  wallOffsetMs = 0;
  Date.now = ms === 0 ? systemNow : (): number => systemNow() + ms;
};

/**
 * Under a local node host, accept its clock-skew messages: they skew the process's clock
 * (`skewProcessClock`). A process with another parent (a test runner) skews only `wall`; in
 * production there is no parent to send any.
 */
export const listenForClockSkew = (): void => {
  if (process.send === undefined) return;
  process.on('message', (m: { type?: string; offsetMs?: number }) => {
    if (m.type !== 'clock-offset' || typeof m.offsetMs !== 'number') return;
    if (process.env[HOST_GATE] === '1') skewProcessClock(m.offsetMs);
    else setWallOffset(m.offsetMs);
  });
  // The channel must not keep the daemon alive on its own.
  process.channel?.unref();
};

/**
 * Under a local node host (drills), tell it a step of this process's start is done and wait
 * until it lets the process go on: its lasting stall freezes each new worker here, once it has
 * taken up what the last one held and before it does anything else (a self-test would make a
 * stalled node look ready). The host freezes first and answers after, so a frozen worker finds
 * the go-ahead waiting when it is continued. No time limit: a wait that gave up could let a
 * worker go on when a loaded host answered late, and a stalled node count ready. Only a host that is gone lets it go on
 * unanswered. A no-op in
 * production: no node host.
 */
export const passHostGate = async (step: 'taken-up'): Promise<void> => {
  const send = process.send?.bind(process);
  // Only the node host sets this: another parent with an IPC channel (a test runner's worker
  // pool) must never see these messages.
  if (process.env[HOST_GATE] !== '1' || send === undefined || !process.connected) return;
  await new Promise<void>((resolve) => {
    const onMessage = (m: { type?: string; step?: string }): void => {
      if (m.type === 'go' && m.step === step) finish();
    };
    const finish = (): void => {
      clearInterval(alive);
      process.off('message', onMessage);
      process.off('disconnect', finish);
      resolve();
    };
    // The channel is unref'd (listenForClockSkew): without this the process would end here.
    const alive = setInterval(() => undefined, 60_000);
    process.on('message', onMessage);
    process.on('disconnect', finish);
    send({ type: step });
  });
};
