import { z } from 'zod';
import type { FleetEvent } from '../events';
import type { Leader } from '../schemas';
import { emptyCounter } from './stall';
import { makeEvent } from './watchdog-events';
import type { NodeWatch } from './watchdog-state';

/**
 * Backpressure. Producers send to the intake queue; the watchdog admits from it to the task
 * queue, topping the task queue up to the high mark and never above, so the fleet takes work at
 * the rate it completes it. Input is held (nothing admitted) while a failover is under way, or
 * while no standby is ready and the backlog reached the high mark; once held it resumes only
 * when the backlog is down to the low mark (hysteresis: a backlog hovering at one mark does not
 * flap). An operator may hold or open it by hand (`fleet admission`). Pure.
 */
export const ADMISSION_MODES = ['auto', 'hold', 'open'] as const;
export type AdmissionMode = (typeof ADMISSION_MODES)[number];

export const admissionSchema = z.object({
  /** `auto`: the rule above; `hold`/`open`: an operator's override. */
  mode: z.enum(ADMISSION_MODES).default('auto'),
  held: z.boolean().default(false),
  /** Since when (watchdog clock) input is held or open. */
  since: z.number().nullable().default(null),
  reason: z.string().max(300).nullable().default(null),
  /** Transitions so far: part of each INPUT_HELD / INPUT_RESUMED event id, so ids never repeat. */
  changes: z.number().int().min(0).default(0),
  /**
   * When a run last admitted (watchdog clock). The run that admits claims it here by CAS, and no
   * run admits again within a sample interval: two runs at once (the schedule and a node's
   * trigger) would otherwise both top the queue up from the same reading.
   */
  admittedAt: z.number().nullable().default(null),
});
export type Admission = z.output<typeof admissionSchema>;

export const emptyAdmission = (): Admission => ({
  mode: 'auto',
  held: false,
  since: null,
  reason: null,
  changes: 0,
  admittedAt: null,
});

/** The most one watchdog run moves from the intake queue (ten batches of ten). */
export const ADMIT_PER_RUN = 100;

export interface AdmissionInput {
  /**
   * Task queue backlog (visible and in flight: SQS's approximate counts, never a node's) and
   * what waits in intake; null on runs that read no queue (the heartbeats' notifications): they
   * can only hold input, never resume or admit it.
   */
  depths: { backlog: number; intake: number } | null;
  /** Standbys that could take over now (readyStandbys). */
  readyStandbys: number;
  /** A failover or an await-fence handover is under way (failoverUnderWay). */
  failingOver: boolean;
}

export interface AdmissionSettings {
  admissionHighMark: number;
  admissionLowMark: number;
  /** Admissions are at least one sample interval apart (see `admittedAt`). */
  sampleIntervalSeconds: number;
}

export interface AdmissionDecision {
  admission: Admission;
  /** How many messages to move from intake to the task queue now. */
  admit: number;
  event: FleetEvent | null;
}

/** Why input should be held now, or null to admit; without depths, only what needs none. */
const holdReason = (previous: Admission, input: AdmissionInput, s: AdmissionSettings): string | null => {
  if (previous.mode === 'hold') return 'held by an operator (fleet admission --hold)';
  if (previous.mode === 'open') return null;
  if (input.failingOver) return 'a failover is under way';
  const d = input.depths;
  if (d === null) return previous.held ? previous.reason : null;
  if (input.readyStandbys === 0 && d.backlog >= s.admissionHighMark)
    return `no ready standby and the backlog (${d.backlog}) reached the high mark (${s.admissionHighMark})`;
  if (previous.held && d.backlog > s.admissionLowMark)
    return `the backlog (${d.backlog}) is still above the low mark (${s.admissionLowMark})`;
  return null;
};

/**
 * True while a failover is on its way or under way: some node's incident escalates or fails
 * over, or the primary itself went silent (its lease will lapse and a standby take it).
 */
export const failoverUnderWay = (watches: Readonly<Record<string, NodeWatch>>, leader: Leader | null): boolean =>
  Object.entries(watches).some(([name, w]) => {
    const stage = w.incident?.stage.name;
    return (
      stage === 'escalating' ||
      stage === 'failing-over' ||
      stage === 'failover-failed' ||
      (stage === 'silent' && name === leader?.primary)
    );
  });

export const decideAdmission = (
  previous: Admission,
  input: AdmissionInput,
  settings: AdmissionSettings,
  now: number,
  leader: Leader | null,
): AdmissionDecision => {
  const reason = holdReason(previous, input, settings);
  const held = reason !== null;
  const d = input.depths;
  // A run that read no queue leaves open input open, but admits nothing itself.
  const spaced = previous.admittedAt === null || now - previous.admittedAt >= settings.sampleIntervalSeconds * 1000;
  const admit =
    held || d === null || !spaced
      ? 0
      : Math.max(0, Math.min(d.intake, settings.admissionHighMark - d.backlog, ADMIT_PER_RUN));
  // An admission is claimed with the verdict: a run that loses the CAS reads it and admits nothing.
  const claimed = admit > 0 ? { ...previous, admittedAt: now } : previous;
  if (held === previous.held) {
    // The reason may change while held (a failover ends, the backlog still drains): kept current, no alert.
    return { admission: held && reason !== previous.reason ? { ...claimed, reason } : claimed, admit, event: null };
  }
  const changes = previous.changes + 1;
  const where =
    d === null ? '' : ` ${d.intake} message(s) wait in the intake queue; the task queue holds ${d.backlog}.`;
  const summary = held
    ? `Input held: ${reason}.${where}`
    : `Input resumed ` +
      `(${previous.mode === 'open' ? 'opened by an operator' : `low mark ${settings.admissionLowMark}`}):${where} ` +
      `Admitting ${admit} now.`;
  const event = makeEvent(
    held ? 'INPUT_HELD' : 'INPUT_RESUMED',
    leader?.primary ?? 'fleet',
    { id: `admission-${changes}`, epoch: leader?.epoch ?? 0 },
    emptyCounter(),
    now,
    summary,
  );
  return {
    admission: { ...claimed, held, since: now, reason, changes },
    admit,
    event: { ...event, metrics: { ...event.metrics, backlog: d?.backlog ?? null } },
  };
};

/**
 * An operator's override (`fleet admission --hold|--open|--auto`), stored for the watchdog's next
 * run to apply; null when the mode is already that one.
 */
export const withMode = (admission: Admission | undefined, mode: AdmissionMode): Admission | null => {
  const current = admission ?? emptyAdmission();
  return current.mode === mode ? null : { ...current, mode };
};
