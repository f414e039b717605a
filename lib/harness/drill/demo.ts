import type { Scenario } from '../../core/drill/scenario';

/**
 * The built-in scenario `fleet demo` runs: two nodes, a steady workload, and the primary's
 * worker frozen at t=120 s. At ×20 it takes about 45 s of wall time.
 */
export const DEMO_SCENARIO: Scenario = {
  name: 'demo: stalled primary worker is detected and restarted',
  nodes: 2,
  seconds: 600,
  workload: { tasks: 14, meanTaskSeconds: 90, spread: 0.3, stages: 'module' },
  faults: [{ at: 120, kind: 'stall-worker', target: 'primary', until: 'restart' }],
  operator: [],
  expect: { restarts: { min: 1, max: 1 }, failovers: 0, maxDetectSeconds: 170, lostTasks: 0, duplicateCompletions: 0 },
};

export const DEMO_TIME_SCALE = 20;

/**
 * `fleet demo --pipeline DIR`: DIR/pipeline.json on four test episodes made with ffmpeg (8, 30, 8
 * and 8 s long), sent together. The primary dies halfway through transcoding the 30 s one: the
 * standby transcodes it again, finishes the others, and ffprobe checks every delivered rendition.
 */
export const MEDIA_DEMO_SCENARIO: Scenario = {
  name: 'demo: a media pipeline whose primary dies mid-transcode',
  nodes: 2,
  seconds: 200,
  workload: {
    tasks: 4,
    meanTaskSeconds: 60,
    spread: 0,
    arrivalSeconds: 4,
    stages: 'module',
    payload: { source: '{source}', title: 'Episode {episode}', shots: [[0, 4.5]], delivery: { dir: '{delivery}' } },
  },
  media: { episodes: 4, seconds: [8, 30, 8, 8], stall: [] },
  faults: [{ at: { after: 'source', node: 'primary', episode: 2, count: 1 }, kind: 'kill-node', target: 'primary' }],
  operator: [],
  expect: { failovers: 1, lostTasks: 0, duplicateCompletions: 0, deadLettered: 0 },
};

/** Slow enough for a standby's self-test, four stages of ffmpeg, to finish within a sample interval. */
export const MEDIA_DEMO_TIME_SCALE = 5;
