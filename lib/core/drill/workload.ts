import type { Scenario } from './scenario';

/** A seeded PRNG (mulberry32): the same seed gives the same workload. */
export const seededRandom = (seed: number): (() => number) => {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
};

/** A lognormal draw with the given mean and sigma (Box–Muller). */
export const lognormal = (mean: number, sigma: number, random: () => number): number => {
  const u = Math.max(random(), Number.EPSILON);
  const z = Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * random());
  return Math.exp(Math.log(mean) - (sigma * sigma) / 2 + sigma * z);
};

/** One task of a drill: when it arrives (scenario s) and what its message says. */
export interface PlannedTask {
  at: number;
  message: { taskId: string; episode: string; workSeconds: number; payload?: Record<string, unknown> };
}

/**
 * The scenario's workload: tasks arriving evenly over `arrivalSeconds` (default: the first
 * half of the run), each lasting a lognormal time around the mean. `workSeconds` in the
 * message is wall time: scenario seconds divided by the time scale.
 */
export const planWorkload = (scenario: Scenario, seed: number, timeScale: number): PlannedTask[] => {
  const random = seededRandom(seed);
  const { tasks, meanTaskSeconds, spread } = scenario.workload;
  const arrival = scenario.workload.arrivalSeconds ?? scenario.seconds / 2;
  const burst = scenario.workload.burst;
  // The steady arrivals, then the burst's, evenly over its own window.
  const times = [
    ...Array.from({ length: tasks }, (_, i) => (i * arrival) / Math.max(1, tasks)),
    ...(burst === undefined
      ? []
      : Array.from({ length: burst.tasks }, (_, i) => burst.at + (i * burst.seconds) / Math.max(1, burst.tasks))),
  ];
  return times.map((at, i) => {
    const seconds = Math.min(meanTaskSeconds * 10, lognormal(meanTaskSeconds, spread, random));
    const { payload } = scenario.workload;
    const message = {
      taskId: `task-${String(i + 1).padStart(4, '0')}`,
      episode: `episode-${4 + (i % 3)}`,
      workSeconds: seconds / timeScale,
    };
    return { at, message: payload === undefined ? message : { ...message, payload } };
  });
};
