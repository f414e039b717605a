import type { Report, TimelineEntry } from '../../core/drill/report';
import type { LocalCloud } from '../localcloud/cloud';
import type { TriggerKind } from '../localcloud/scheduler';

export interface DrillOptions {
  timeScale: number;
  seed: number;
  /** Each timeline entry as it happens (the live view). */
  onEntry?: (entry: TimelineEntry) => void;
  /** Progress of long phases, for people. */
  onPhase?: (phase: string) => void;
  signal?: AbortSignal;
  /** Keep the run directory (node logs) instead of deleting it. */
  keep?: boolean;
  /** Announce the local cloud for operator commands (`fleet status --local`); default true. */
  announce?: boolean;
  /** Awaited after the report is built, before teardown: `--hold` keeps the fleet up for a look. */
  hold?: (report: Report) => Promise<void>;
  /** Node's own options for the agent and the worker (V8 flags a bench weighs); by default the units'. */
  nodeArgs?: readonly string[];
  /** Called once the run is over, before teardown: benches read the cloud's counters here. */
  /**
   * The local cloud and the watchdog's runs once the drill is over: how many, by trigger, each
   * one's wall time, and the wall time all of them slept (`sleptMs`: for a late node, an SSM
   * result, a DNS change; at the drill's time scale, so a cost bench bills it that many times over).
   */
  inspect?: (cloud: LocalCloud, stats: DrillStats) => void;
  /**
   * Called once at scenario second `at` with what `inspect` gets, so far (the counters are live:
   * copy what you keep). A bench takes a fleet's steady rate as the difference from the end.
   */
  snapshot?: { at: number; take: (cloud: LocalCloud, stats: DrillStats) => void };
}

/** The watchdog's runs so far: how many, by trigger, each one's wall time, what they slept, the drill's wall time. */
export interface DrillStats {
  invocations: number;
  byTrigger: Record<TriggerKind, number>;
  invocationMs: number[];
  sleptMs: number;
  wallSeconds: number;
}
