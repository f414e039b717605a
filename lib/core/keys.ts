/** The key layout below the state prefix (`peer-sync/` by default), built and parsed here only. */
export const KEYS = {
  leader: 'leader.json',
  manifest: 'manifest.json',
  manifestShard: (bucket: number): string => `manifest/${bucket}.json`,
  archive: (day: string, bucket: number): string => `archive/${day}/${bucket}.json`,
  watchdogState: 'watchdog/state.json',
  heartbeat: (node: string): string => `nodes/${node}/heartbeat.json`,
  /** A standby's newest sample (boot and sequence number), written every sample: in the control table. */
  beat: (node: string): string => `nodes/${node}/beat`,
  done: (taskId: string): string => `tasks/${taskId}/done.json`,
  checkpoint: (taskId: string): string => `tasks/${taskId}/checkpoint.json`,
  output: (taskId: string, stage: string): string => `outputs/${taskId}/${stage}.json`,
  /** A file a stage left in its OUTPUT_DIR, under the attempt that made it: no upload replaces another. */
  artifact: (taskId: string, stage: string, attempt: string, path: string): string =>
    `artifacts/${taskId}/${stage}/${attempt}/${path}`,
  event: (incidentId: string, kind: string): string => `events/${incidentId}/${kind}.json`,
  quarantine: (key: string, at: number): string => `quarantine/${key.replace(/\//g, '_')}.${at}.txt`,
} as const;

/** Prefixes that are listed. */
export const PREFIXES = {
  events: 'events/',
  incidentEvents: (incidentId: string): string => `events/${incidentId}/`,
  heartbeats: 'nodes/',
  tasks: 'tasks/',
  manifestShards: 'manifest/',
} as const;

const HEARTBEAT_RE = /^nodes\/([^/]+)\/heartbeat\.json$/;
const BEAT_RE = /^nodes\/([^/]+)\/beat$/;
const DONE_RE = /^tasks\/([^/]+)\/done\.json$/;
const CHECKPOINT_RE = /^tasks\/([^/]+)\/checkpoint\.json$/;
const SHARD_RE = /^manifest\/(\d{1,3})\.json$/;
const EVENT_RE = /^events\/(.+)\/([A-Z_]+)\.json$/;

const group = (re: RegExp, key: string): string | null => re.exec(key)?.[1] ?? null;

/** The key below `prefix`, or null when the full key is not under it. */
export const underPrefix = (prefix: string, fullKey: string): string | null =>
  fullKey.startsWith(prefix) ? fullKey.slice(prefix.length) : null;

/** The node named by a heartbeat key, or null when the key is not a heartbeat. */
export const nodeOfHeartbeatKey = (key: string): string | null => group(HEARTBEAT_RE, key);

/** The node named by a beat key, or null when the key is not a beat. */
export const nodeOfBeatKey = (key: string): string | null => group(BEAT_RE, key);

/** The task whose `done.json` the key is, or null. */
export const taskOfDoneKey = (key: string): string | null => group(DONE_RE, key);

/** The task whose checkpoint the key is, or null. */
export const taskOfCheckpointKey = (key: string): string | null => group(CHECKPOINT_RE, key);

/** The bucket a manifest shard key names, or null. */
export const bucketOfShardKey = (key: string): number | null => {
  const found = group(SHARD_RE, key);
  return found === null ? null : Number(found);
};

/** The incident id and kind (unchecked) an event key names, or null. */
export const eventOfKey = (key: string): { incidentId: string; kind: string } | null => {
  const m = EVENT_RE.exec(key);
  return m?.[1] === undefined || m[2] === undefined ? null : { incidentId: m[1], kind: m[2] };
};
