import type { EventKind } from '../events';
import {
  advance,
  openIncident,
  type Incident,
  type IncidentKind,
  type Opening,
  type Stage,
  type StageName,
  type Step,
} from './incident';

/**
 * An incident's history read back: the kinds written under `events/<incidentId>/`, folded
 * through the same tables the watchdog applies forward (lib/core/fleet/incident.ts). A
 * replay uses it to show how far an incident got, open or closed. Pure.
 */

/** The order the ladder writes event kinds in: replay folds a set of written kinds in this order. */
const LADDER_ORDER: readonly EventKind[] = [
  'STALLED',
  'REDUNDANCY_LOST',
  'STANDBY_UNREADY',
  'AGENT_DEAD',
  'NODE_SILENT',
  'NODE_DEAD',
  'RESTART_BUDGET_EXHAUSTED',
  'RESTART_SENT',
  // Before the results: a restart's result may be read after its node was judged still stalled.
  'STILL_STALLED',
  'RESTART_RESULT',
  'RESTART_FAILED',
  'NO_STANDBY',
  'FAILOVER_STARTED',
  'OLD_PRIMARY_STOPPED',
  'FAILOVER_FAILED',
  'PROMOTED',
  'RECORD_CHANGED',
  'REJOIN_FAILED',
  'RECOVERED',
];

/** What folding an incident's written events through the machine found. */
export interface Trail {
  kind: IncidentKind | null;
  /** The stage after the last written event, or closed; null when no event opened an incident. */
  stage: Stage | 'closed' | null;
  /** Every stage the incident passed through, in order. */
  visited: StageName[];
  /** Written kinds the machine did not accept in order (a retried failover, a gap). */
  unplaced: EventKind[];
}

/** The incident a written kind opens, and the step it stands for. */
const openerOf = (kind: EventKind, written: ReadonlySet<EventKind>): { kind: IncidentKind; step: Opening } | null => {
  const restarted =
    written.has('RESTART_SENT') ||
    written.has('RESTART_FAILED') ||
    written.has('RESTART_RESULT') ||
    written.has('RESTART_BUDGET_EXHAUSTED');
  switch (kind) {
    case 'STALLED':
      return { kind: 'stall', step: { kind, at: 0 } };
    case 'REDUNDANCY_LOST':
    // Written by releases before state version 2 for a silent agent: healed as a lost standby is, by an agent restart.
    case 'AGENT_DEAD':
      return { kind: 'standby', step: { kind: 'REDUNDANCY_LOST', at: 0, restart: restarted } };
    case 'STANDBY_UNREADY':
      return { kind: 'rejoin', step: { kind, at: 0 } };
    case 'NODE_SILENT':
    case 'NODE_DEAD':
      return { kind: 'dead', step: { kind } };
    default:
      return null;
  }
};

/** The step a written event stands for (its payload is not needed to know the stage). */
const stepOf = (kind: EventKind): Step | null => {
  switch (kind) {
    case 'RESTART_BUDGET_EXHAUSTED':
      return { kind, at: 0 };
    case 'RESTART_SENT':
      return { kind, at: 0, commandId: '' };
    case 'RESTART_RESULT':
    case 'RESTART_FAILED':
    case 'FAILOVER_FAILED':
      return { kind, at: 0, detail: '' };
    case 'FAILOVER_STARTED':
      return { kind, failover: { to: '?', fromEpoch: 0, claimedAt: 0, outgoingStopped: false, stopOutgoing: false } };
    case 'NODE_SILENT':
    case 'NODE_DEAD':
    case 'STILL_STALLED':
    case 'NO_STANDBY':
    case 'OLD_PRIMARY_STOPPED':
    case 'PROMOTED':
    case 'RECORD_CHANGED':
    case 'REJOIN_FAILED':
    case 'RECOVERED':
      return { kind };
    default:
      return null;
  }
};

/**
 * Folds the kinds written under `events/<incident>/` through its kind's table, in the order the
 * ladder writes them (each kind is written at most once per incident). A PROMOTED event closes
 * the fold: the failover it belongs to made the new primary. REDUNDANCY_LOST does not say
 * whether an agent restart was claimed; the restart's own later steps do.
 */
export const foldWritten = (written: ReadonlySet<EventKind>): Trail => {
  const openedBy = LADDER_ORDER.find((k) => written.has(k) && openerOf(k, written) !== null);
  const opener = openedBy === undefined ? null : openerOf(openedBy, written);
  if (opener === null) return { kind: null, stage: null, visited: [], unplaced: [] };
  let incident: Incident | 'closed' = openIncident({ id: 'fold', kind: opener.kind, epoch: 0, at: 0 }, opener.step);
  const visited: StageName[] = [incident.stage.name];
  const unplaced: EventKind[] = [];
  for (const kind of LADDER_ORDER) {
    if (!written.has(kind) || kind === openedBy || incident === 'closed') continue;
    const step = stepOf(kind);
    // A retried failover that succeeded wrote FAILOVER_FAILED and PROMOTED: the promotion stands.
    const from: Incident =
      kind === 'PROMOTED' && incident.stage.name === 'failover-failed'
        ? { ...incident, stage: { name: 'failing-over', failover: incident.stage.failover } }
        : incident;
    const moved = step === null ? null : advance(from, step);
    if (moved === null) {
      unplaced.push(kind);
      continue;
    }
    incident = kind === 'PROMOTED' ? 'closed' : moved;
    if (incident !== 'closed' && visited.at(-1) !== incident.stage.name) visited.push(incident.stage.name);
  }
  return { kind: opener.kind, stage: incident === 'closed' ? 'closed' : incident.stage, visited, unplaced };
};
