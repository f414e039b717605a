/** Keys below the state prefix (`peer-sync/` by default). */
export const KEYS = {
  leader: 'leader.json',
  manifest: 'manifest.json',
  manifestShard: (bucket: number): string => `manifest/${bucket}.json`,
  archive: (day: string, bucket: number): string => `archive/${day}/${bucket}.json`,
  watchdogState: 'watchdog/state.json',
  heartbeat: (node: string): string => `nodes/${node}/heartbeat.json`,
  done: (taskId: string): string => `tasks/${taskId}/done.json`,
  checkpoint: (taskId: string): string => `tasks/${taskId}/checkpoint.json`,
  output: (taskId: string, stage: string): string => `outputs/${taskId}/${stage}.json`,
  quarantine: (key: string, at: number): string => `quarantine/${key.replace(/\//g, '_')}.${at}.txt`,
} as const;

const HEARTBEAT_RE = /(?:^|\/)nodes\/([^/]+)\/heartbeat\.json$/;

/** The node named by a heartbeat key, or null when the key is not a heartbeat. */
export const nodeOfHeartbeatKey = (key: string): string | null => HEARTBEAT_RE.exec(key)?.[1] ?? null;
