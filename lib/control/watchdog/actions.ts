import { ConflictError, describeError, EventConflictError, NotFoundError } from '../../core/errors';
import { eventKey, fleetEventSchema, sameStep, type FleetEvent } from '../../core/events';
import { KEYS } from '../../core/keys';
import type { WatchdogAction } from '../../core/fleet/watchdog';
import { markRestartResult, markRestartSent } from '../../core/fleet/outcomes';
import { emptyWatchdogState, watchdogStateSchema, type WatchdogState } from '../../core/fleet/watchdog-state';
import type { NodeCommand } from '../../aws/run-command';
import type { CommandTarget } from '../../core/fleet/managed-instance';
import type { WatchdogDeps } from './deps';

/**
 * Writes the event once (If-None-Match: *) and alerts only if this call created it. An id
 * already taken by the same step (a concurrent or repeated run) is not an error; an id taken
 * by a different event is: an EventConflictError, never a silently lost step.
 */
export const emit = async ({ store, alerts, log }: WatchdogDeps, event: FleetEvent): Promise<boolean> => {
  const key = eventKey(event);
  try {
    await store.create(key, event);
  } catch (error) {
    if (!(error instanceof ConflictError)) throw error;
    const existing = await store.read(key, fleetEventSchema).catch((cause: unknown) => {
      throw new EventConflictError(
        `${key} exists and cannot be read (${describeError(cause)}): event ${event.id} not written`,
        { cause },
      );
    });
    if (existing !== null && sameStep(existing.value, event)) return false;
    const found = existing?.value;
    const to = found?.newPrimary === undefined ? '' : ` → ${found.newPrimary}`;
    const other =
      found === undefined
        ? 'an object that is gone again'
        : `${found.kind} of ${found.node} at epoch ${found.epoch}${to}`;
    throw new EventConflictError(`${key} is taken by a different event (${other}): event ${event.id} not written`);
  }
  log.info({ event: event.kind, node: event.node, incident: event.incidentId }, event.summary);
  if (alerts !== null) {
    try {
      await alerts.publish(event);
    } catch (error) {
      log.error({ err: describeError(error), event: event.id }, 'alert not published; the event object stands');
    }
  }
  return true;
};

/** Applies an outcome reducer by CAS and emits its event. */
export const record = async (
  deps: WatchdogDeps,
  reduce: (s: WatchdogState) => { state: WatchdogState; event: FleetEvent | null } | null,
): Promise<void> => {
  const { result } = await deps.store.update(KEYS.watchdogState, watchdogStateSchema, (current) => {
    const out = reduce(current ?? emptyWatchdogState());
    return { value: out?.state ?? null, result: out?.event ?? null };
  });
  if (result !== null) await emit(deps, result);
};

/** Sends a claimed restart (worker or agent) and records that it went, or that it could not. */
export const sendCommand = async (
  deps: WatchdogDeps,
  a: Extract<WatchdogAction, { kind: 'command' }>,
): Promise<void> => {
  let commandId: string;
  try {
    commandId = await deps.commands.send(targetOf(a), a.command, commentOf(a.incidentId));
  } catch (error) {
    await record(deps, (s) =>
      markRestartResult(s, a.node, a.incidentId, false, `not delivered: ${describeError(error)}`, deps.now()),
    );
    return;
  }
  await record(deps, (s) => markRestartSent(s, a.node, a.incidentId, commandId, deps.now()));
};

/**
 * Settles a restart claimed long ago whose send was never recorded: SSM is asked for the
 * command the claim would have sent (by its comment, which names the incident). Found, it is
 * recorded as sent and verified like any other; not found, the run that claimed it died before
 * sending it, and it is sent now: a restart counts as tried only once it went out.
 */
export const findRestart = async (
  deps: WatchdogDeps,
  a: Extract<WatchdogAction, { kind: 'find-restart' }>,
): Promise<void> => {
  const commandId = await deps.commands.findSent(targetOf(a), commentOf(a.incidentId));
  if (commandId !== null) await record(deps, (s) => markRestartSent(s, a.node, a.incidentId, commandId, deps.now()));
  else await sendCommand(deps, { ...a, kind: 'command' });
};

/** The node an action commands, as Run Command addresses it. */
const targetOf = (a: { node: string; instanceId: string | undefined }): CommandTarget => ({
  name: a.node,
  instanceId: a.instanceId,
});

/** The comment a restart's command carries: it names the incident, so the command can be found again. */
const commentOf = (incidentId: string): string => `queen-fleet ${incidentId}`;

/** Reads a sent command's result; records it once it is final or the deadline passed. */
export const verify = async (deps: WatchdogDeps, a: Extract<WatchdogAction, { kind: 'verify' }>): Promise<void> => {
  let outcome: { ok: boolean; detail: string } | null = null;
  try {
    const res = await deps.commands.result(a.commandId, targetOf(a));
    if (res.status === 'succeeded' || res.status === 'failed')
      outcome = { ok: res.status === 'succeeded', detail: res.detail };
  } catch (error) {
    if (!(error instanceof NotFoundError)) throw error;
  }
  if (outcome === null && deps.now() > a.deadline) {
    // Given up on: a command still waiting for an unreachable node must not run when it comes back.
    await cancelQuietly(deps, a.commandId, targetOf(a));
    outcome = { ok: false, detail: 'no result before the verification deadline (command cancelled)' };
  }
  if (outcome !== null) {
    const { ok, detail } = outcome;
    await record(deps, (s) => markRestartResult(s, a.node, a.incidentId, ok, detail, deps.now()));
  }
};

/**
 * Runs a fixed command and waits (within `waitMs`) for its result: true only on success. Used
 * where the next step depends on it (stopping the old primary's worker before a handover).
 */
export const runAndWait = async (
  deps: WatchdogDeps,
  target: CommandTarget,
  command: NodeCommand,
  comment: string,
  waitMs: number,
): Promise<boolean> => {
  let commandId: string;
  try {
    commandId = await deps.commands.send(target, command, comment);
  } catch (error) {
    deps.log.warn({ err: describeError(error), node: target.name, command }, 'command not delivered');
    return false;
  }
  const until = deps.now() + waitMs;
  const pollMs = Math.max(20, Math.min(1000, waitMs / 20));
  while (deps.now() < until) {
    await deps.sleep(pollMs);
    try {
      const res = await deps.commands.result(commandId, target);
      if (res.status === 'succeeded') return true;
      if (res.status === 'failed') return false;
    } catch (error) {
      // InvocationDoesNotExist for a moment after SendCommand is normal: keep asking.
      if (!(error instanceof NotFoundError)) return false;
    }
  }
  // A stop that arrives after the handover went ahead without it must not run then.
  await cancelQuietly(deps, commandId, target);
  return false;
};

/** Cancels a command the caller gave up on; a failure to cancel is only logged (AWS does not promise it either). */
const cancelQuietly = async (deps: WatchdogDeps, commandId: string, target: CommandTarget): Promise<void> => {
  try {
    await deps.commands.cancel(commandId, target);
  } catch (error) {
    deps.log.warn({ err: describeError(error), commandId }, 'command not cancelled');
  }
};
