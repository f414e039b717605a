import type { AlertTopic } from '../../aws/alerts';
import type { OriginRecord } from '../../aws/dns';
import type { InstanceProbe } from '../../aws/instances';
import type { IntakeQueue } from '../../aws/intake';
import type { RunCommand } from '../../aws/run-command';
import type { StateStore } from '../../aws/state-store';
import type { Config } from '../../core/config';
import type { Logger } from '../../log';

/** Everything one watchdog invocation needs; built once per Lambda container. */
export interface WatchdogDeps {
  config: Config;
  store: StateStore;
  alerts: AlertTopic | null;
  commands: RunCommand;
  probe: InstanceProbe;
  /** The origin record moved on failover; null when Route 53 is not configured. */
  dns: OriginRecord | null;
  /** The intake queue admission moves from; null when producers send to the task queue directly. */
  intake: IntakeQueue | null;
  log: Logger;
  now: () => number;
  sleep: (ms: number) => Promise<void>;
  /**
   * What this container saw of its own runs: `failing` while S3 refused them. The first run
   * that gets through judges no silence it could not see (lib/core/fleet/watchdog.ts).
   */
  sight: { failing: boolean };
  /** Where an Embedded Metric Format line goes: standard output in Lambda, whose logs CloudWatch turns into metrics. */
  metrics: (line: string) => void;
}
