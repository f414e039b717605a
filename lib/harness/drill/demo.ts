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
  expect: { restarts: { min: 1, max: 1 }, failovers: 0, maxDetectSeconds: 170, lostTasks: 0, duplicateCompletions: 0 },
};

export const DEMO_TIME_SCALE = 20;
