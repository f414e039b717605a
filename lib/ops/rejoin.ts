import { describeError, ValidationError } from '../core/errors';
import { KEYS } from '../core/keys';
import { noteManualRejoin } from '../core/fleet/outcomes';
import { watchdogStateSchema } from '../core/fleet/watchdog-state';
import { planRejoin, rejoinedSince } from '../core/views/rejoin';
import { valueOf } from '../core/views/observed';
import { leaderSchema } from '../core/schemas';
import { runAndWait } from '../control/watchdog/actions';
import { observeHeartbeats, observeObject, type OpsDeps } from './observe';

export interface RejoinRequest {
  node: string;
  /** How long to wait for the restarted worker's self-test, ms. */
  waitMs: number;
}

export type RejoinStepOutcome = 'ok' | 'warn' | 'fail' | 'skipped';

export interface RejoinLogEntry {
  step: 'check' | 'budget' | 'restart-worker' | 'self-test';
  status: RejoinStepOutcome;
  detail: string;
}

/** The JSON document of `fleet rejoin --json` (without `where`). */
export interface RejoinResult {
  node: string;
  /** True once the node's heartbeat shows a worker that passed its self-test after the restart. */
  ok: boolean;
  refused: string | null;
  steps: RejoinLogEntry[];
}

/**
 * A rejoin by hand: restart the standby's worker (it starts in standby mode, fenced by the
 * epoch, never consuming), with a fresh rejoin budget for the watchdog, then wait for a
 * heartbeat showing its self-test passed. Refused for the primary, and for a node whose agent
 * still holds a lease. `progress` is told of each step as it ends.
 */
export const rejoinNode = async (
  deps: OpsDeps,
  req: RejoinRequest,
  progress: (entry: RejoinLogEntry) => void = () => undefined,
): Promise<RejoinResult> => {
  const { store, config } = deps;
  const sampleMs = config.sampleIntervalSeconds * 1000;
  const [leader, { heartbeats }] = await Promise.all([
    observeObject(store, KEYS.leader, leaderSchema),
    observeHeartbeats(store, config.nodes),
  ]);
  const plan = planRejoin({
    node: req.node,
    nodes: config.nodes,
    leader,
    heartbeat: heartbeats.get(req.node)?.heartbeat,
    sampleMs,
  });
  if (plan.kind === 'unknown-node') throw new ValidationError(plan.message, 'NODE');
  const result: RejoinResult = { node: req.node, ok: false, refused: null, steps: [] };
  const step = (s: RejoinLogEntry['step'], status: RejoinStepOutcome, detail: string): void => {
    const entry = { step: s, status, detail };
    result.steps.push(entry);
    progress(entry);
  };
  if (plan.kind === 'refuse') {
    step('check', 'fail', plan.message);
    return { ...result, refused: plan.message };
  }
  step(
    'check',
    'ok',
    plan.fault === null
      ? `${req.node} is a standby and looks ready; restarting its worker anyway`
      : `${req.node} is a standby: ` +
          (plan.fault === 'no-worker' ? 'no worker process runs' : 'its worker has not passed its self-test lately'),
  );
  await store
    .update(KEYS.watchdogState, watchdogStateSchema, (current) => ({
      value: current === null ? null : noteManualRejoin(current, req.node),
      result: null,
    }))
    .then(
      () =>
        step(
          'budget',
          'ok',
          `the watchdog's rejoin budget for ${req.node} starts afresh; its open rejoin incident, if any, is closed`,
        ),
      (error: unknown) =>
        step(
          'budget',
          'warn',
          `watchdog state not updated (${describeError(error)}): the watchdog keeps its own count`,
        ),
    );
  const spec = config.nodes.find((n) => n.name === req.node);
  if (spec === undefined) throw new Error(`planned node ${req.node} is not configured`);
  const restarted = await runAndWait(
    deps,
    spec,
    'restartWorker',
    `queen-fleet rejoin-${req.node}`,
    config.commandWaitSeconds * 1000,
  );
  if (!restarted) {
    step(
      'restart-worker',
      'fail',
      `${req.node}: worker restart not confirmed within ${config.commandWaitSeconds} s (not delivered, failed, or ` +
        `no result); check its SSM agent`,
    );
    return result;
  }
  step('restart-worker', 'ok', `${req.node}: systemctl restart queen-fleet-worker succeeded`);
  const doneAt = deps.now();
  while (deps.now() - doneAt < req.waitMs) {
    await deps.sleep(Math.max(50, sampleMs / 3));
    const seen = await observeHeartbeats(store, [spec]).catch(() => null);
    const hb = seen === null ? null : valueOf(seen.heartbeats.get(req.node)?.heartbeat);
    if (rejoinedSince(hb, { boot: plan.boot, seq: plan.seq, elapsedMs: deps.now() - doneAt }, sampleMs)) {
      step('self-test', 'ok', `${req.node}'s worker passed its self-test: a ready standby again`);
      return { ...result, ok: true };
    }
  }
  step(
    'self-test',
    'fail',
    `no heartbeat of ${req.node} showed a passed self-test within ${Math.round(req.waitMs / 1000)} s: read its ` +
      `journal (journalctl -u queen-fleet-worker) and proof.json`,
  );
  return result;
};
