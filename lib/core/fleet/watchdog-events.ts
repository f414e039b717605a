import type { EventKind, EventMetrics, FleetEvent } from '../events';
import type { StallCounter } from './stall';
import type { Incident } from './watchdog-state';

/** The "what next" line of every alert: what the fleet does, or what a person should do. */
const NEXT_STEP: Record<EventKind, string> = {
  STALLED: 'The watchdog restarts the worker through SSM Run Command.',
  RESTART_SENT: 'The watchdog checks the command result and watches the next samples.',
  RESTART_RESULT: 'Watching the next samples for recovery.',
  RESTART_FAILED: 'The restart did not run: the watchdog fails over if a standby is ready (docs/runbook.md).',
  RESTART_BUDGET_EXHAUSTED: 'No automatic restart: the hourly budget is spent. Investigate the node.',
  STILL_STALLED: 'The restart did not heal the node: the watchdog fails over to the best ready standby.',
  NODE_DEAD: 'AWS confirms the machine is gone: the watchdog promotes the best ready standby at once.',
  NODE_SILENT:
    'Nothing confirms yet that the machine is gone (a crashed VM still reads running): if its lease is not renewed, ' +
    'the best standby takes over within leaseExpirySeconds, and traffic follows.',
  AGENT_DEAD: 'The watchdog restarts the agent through SSM Run Command.',
  REDUNDANCY_LOST:
    'The watchdog restarts its agent through SSM if the node answers; otherwise bring it back (docs/runbook.md). ' +
    'The fleet has no failover target meanwhile.',
  STANDBY_UNREADY:
    'The watchdog restarts its worker in standby mode (fenced, never consuming) through SSM; it rejoins once its ' +
    'self-test passes.',
  REJOIN_FAILED:
    'The restarted worker still fails its self-test: the node stays out; the watchdog tries again within its hourly ' +
    'budget. Investigate the node (docs/runbook.md), then `fleet rejoin NODE`.',
  NO_STANDBY: 'No failover possible now (no ready standby, or within the cooldown): act by hand (docs/runbook.md).',
  FAILOVER_STARTED: 'The old primary is stopped or fenced, the standby promoted, traffic moved.',
  OLD_PRIMARY_STOPPED: 'The new primary may start at once.',
  PROMOTED:
    'The new primary takes over; the old one fences itself at its next lease round (it cannot renew over the new ' +
    'epoch).',
  RECORD_CHANGED: 'Traffic follows the origin record.',
  FAILOVER_FAILED: 'The failover did not complete: check the state with `fleet status` and act by hand.',
  POISON_TASK: 'SQS moves the message to the dead-letter queue; inspect it there (docs/runbook.md).',
  MANIFEST_DAMAGED:
    'The damaged object was copied to quarantine/ and rebuilt from the fleet; nothing to do unless it recurs.',
  DEAD_LETTERED:
    'Read the messages (`aws sqs receive-message` on the dead-letter queue) and the POISON_TASK alerts; fix the ' +
    'cause, then redrive them (docs/runbook.md).',
  NOTIFIER_FAILED:
    "Check the Slack webhook parameter; the missed alerts wait 14 days in the notifier's failure queue " +
    '(docs/runbook.md).',
  LEADER_DAMAGED:
    'The damaged record was copied to quarantine/ and rebuilt from the highest epoch the fleet knows; check `fleet ' +
    'status`, and find what wrote it (docs/security.md).',
  STATE_DAMAGED:
    "The watchdog's state was copied to quarantine/ and rebuilt from the next samples; incident numbers carry on " +
    'from the events written. Find what wrote it (docs/security.md).',
  INPUT_HELD:
    'Producers keep sending to the intake queue; nothing is admitted to the task queue until the fleet can take it ' +
    '(docs/runbook.md). `fleet admission --open` overrides.',
  INPUT_RESUMED: 'The watchdog admits from the intake queue again, up to the high mark.',
  INPUT_WAITING:
    '`fleet admission` says whether input is held and why: make a standby ready, or add capacity (docs/runbook.md).',
  OUTAGE:
    'Nothing: no node can do the work, so none takes the role; the tasks wait, held, and go on by themselves once ' +
    'S3 answers (docs/runbook.md).',
  RECOVERED: 'Nothing to do.',
};

export const metricsOf = (counter: StallCounter): EventMetrics => {
  const s = counter.last;
  return {
    failingSamples: counter.failing,
    healthySamples: counter.healthy,
    fault: counter.lastFault,
    workerProcesses: s?.workerProcesses ?? null,
    cpuPercent: s === null ? null : Math.round(s.cpuPercent * 10) / 10,
    memoryBytes: s?.memoryBytes ?? null,
    backlog: s?.backlog ?? null,
    completionsInWindow: s?.completionsInWindow ?? null,
    inFlight: s?.inFlight.length ?? null,
  };
};

/** Builds the event of one incident step; its id is a pure function of incident and kind. */
export const makeEvent = (
  kind: EventKind,
  node: string,
  incident: Pick<Incident, 'id' | 'epoch'>,
  counter: StallCounter,
  now: number,
  summary: string,
  extra: Pick<FleetEvent, 'commandId' | 'newPrimary' | 'newEpoch'> = {},
): FleetEvent => ({
  version: 1,
  id: `${incident.id}.${kind}`,
  incidentId: incident.id,
  kind,
  node,
  epoch: incident.epoch,
  at: now,
  summary: summary.slice(0, 1000),
  next: NEXT_STEP[kind],
  metrics: metricsOf(counter),
  ...extra,
});
