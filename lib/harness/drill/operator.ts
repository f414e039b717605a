import { hostname } from 'node:os';
import type { StateStore } from '../../aws/state-store';
import type { Config } from '../../core/config';
import type { OperatorAction } from '../../core/drill/operator';
import { describeError, NotFoundError } from '../../core/errors';
import type { MaintenanceChange } from '../../core/fleet/maintenance';
import { changeMaintenance } from '../../ops/maintenance';
import type { Recorder } from './recorder';

/** How often (wall ms) an action made before the watchdog's first run looks again for its state. */
const RETRY_MS = 50;
const RETRIES = 100;

/** What the drill's operator acts with: the harness's own store, as the CLI would on AWS. */
export interface OperatorTargets {
  config: Config;
  store: StateStore;
  recorder: Recorder;
  timeScale: number;
  /** `primary`, `standby` or a node name, resolved when the action runs. */
  resolve: (target: string) => string;
}

/** The change `fleet pause|resume|cordon|uncordon` would make for this action, now. */
const changeOf = (a: OperatorAction, t: OperatorTargets, now: number): MaintenanceChange => {
  const note = { at: now, by: `drill@${hostname()}`, reason: `scenario second ${a.at}` };
  switch (a.action) {
    case 'pause':
      return { kind: 'pause', note, forMs: a.for === undefined ? null : (a.for * 1000) / t.timeScale };
    case 'resume':
      return { kind: 'resume' };
    case 'cordon':
      return { kind: 'cordon', node: t.resolve(a.target), note };
    case 'uncordon':
      return { kind: 'uncordon', node: t.resolve(a.target) };
  }
};

/**
 * Runs one action and puts it on the timeline as `operator`. The watchdog's state may not exist
 * before its first run: the action waits for it, as an operator would try again.
 */
export const runOperatorAction = async (a: OperatorAction, t: OperatorTargets): Promise<void> => {
  const change = changeOf(a, t, Date.now());
  const deps = { config: t.config, store: t.store, now: Date.now };
  for (let attempt = 1; ; attempt++) {
    try {
      await changeMaintenance(deps, change);
      const what = 'node' in change ? `${change.kind} ${change.node}` : change.kind;
      t.recorder.note(
        'operator',
        change.kind,
        `fleet ${what}${a.action === 'pause' && a.for ? ` --for ${a.for}s` : ''}`,
      );
      return;
    } catch (error) {
      if (attempt >= RETRIES || !(error instanceof NotFoundError)) {
        t.recorder.note('drill', 'error', `operator ${a.action} at ${a.at}: ${describeError(error)}`);
        return;
      }
      await new Promise((resolve) => setTimeout(resolve, RETRY_MS));
    }
  }
};
