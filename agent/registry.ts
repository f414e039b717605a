import { readFileSync } from 'node:fs';
import { copyFile, mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { z } from 'zod';
import { taskEntrySchema } from '../lib/core/sync/manifest';
import { inFlightTaskSchema, STORE_NAMES, taskIdSchema } from '../lib/core/schemas';
import { parseJsonText, parseWith } from '../lib/core/validate';

/**
 * The node-local task registry: written by the worker, read by the agent. It lives in the
 * node's data directory, so it survives agent and worker restarts.
 */
export const registrySchema = z.strictObject({
  version: z.literal(1),
  /** Cumulative completions on this node. */
  completedTotal: z.number().int().min(0),
  /** Wall-clock ms of recent completions on this node (same machine as the reader). */
  recentCompletions: z.array(z.number()).max(10_000),
  inFlight: z.array(inFlightTaskSchema).max(256),
  /** The epoch the worker consumes under right now, or null. */
  consumingEpoch: z.number().int().min(0).nullable().default(null),
  /** The stores the worker's tasks wait for (their last attempt could not reach them); empty when none waits. */
  unreachable: z.array(z.enum(STORE_NAMES)).max(3).default([]),
  /**
   * The generation of the task snapshot and journal (agent/task-journal.ts) that holds what this
   * node knows of each task; peer-sync reads the journal's new lines each round.
   */
  tasksGeneration: z.number().int().min(0).default(0),
  /** The epoch whose switchover drain is done: no task in hand and no receive open (null otherwise). */
  drained: z.number().int().min(0).nullable().default(null),
  /** Before the journal, the tasks lived here; a worker that finds them moves them into its first snapshot. */
  tasks: z.record(taskIdSchema, taskEntrySchema).optional(),
});
export type Registry = z.output<typeof registrySchema>;

/** The worker's pid file: the pid and its start time, so a reused pid is not mistaken for it. */
export const pidFileSchema = z.strictObject({ pid: z.number().int().positive(), startTicks: z.number().int().min(0) });
export type PidFile = z.output<typeof pidFileSchema>;

export const emptyRegistry = (): Registry => ({
  version: 1,
  completedTotal: 0,
  recentCompletions: [],
  inFlight: [],
  consumingEpoch: null,
  unreachable: [],
  tasksGeneration: 0,
  drained: null,
});

export const registryPath = (dataDir: string): string => `${dataDir}/registry.json`;
export const workerPidPath = (dataDir: string): string => `${dataDir}/worker.pid.json`;
export const rolePath = (dataDir: string): string => `${dataDir}/role.json`;

/** Writes JSON atomically: a reader sees the old file or the new one, never half of one. */
export const writeJsonAtomic = async (path: string, value: unknown): Promise<void> => {
  await mkdir(dirname(path), { recursive: true });
  const tmp = `${path}.${process.pid}.tmp`;
  await writeFile(tmp, JSON.stringify(value));
  await rename(tmp, path);
};

/** Reads and validates a local JSON file; null when it does not exist. */
/** `readJsonFile` for the few places that cannot wait (a write guard): one small file, read at once. */
export const readJsonFileSync = <S extends z.ZodType>(path: string, schema: S): z.output<S> | null => {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
  return parseWith(schema, parseJsonText(text, path), path);
};

export const readJsonFile = async <S extends z.ZodType>(path: string, schema: S): Promise<z.output<S> | null> => {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
  return parseWith(schema, parseJsonText(text, path), path);
};

/**
 * `proof.json`: the worker's last self-test, by this machine's monotonic clock. The agent
 * reads its age into each sample; a standby is ready only with a recent passing one, so a
 * worker that exists but does not work (frozen, wedged, its stage commands broken) is never
 * promoted.
 */
export const proofSchema = z.object({
  /** The machine boot `at` belongs to. */
  boot: z.string().max(64),
  /** CLOCK_MONOTONIC ms when the self-test finished. */
  at: z.number(),
  ok: z.boolean(),
  detail: z.string().max(500).optional(),
  /**
   * The worker that ran it, `pid:startTicks` as the sampler names the running worker: a proof
   * counts only while that worker runs. (A frozen worker stopped by a restart is continued to
   * exit, and could finish a self-test on its way out: its proof said nothing of the next one.)
   * Absent in a proof of an earlier release, which counts as before.
   */
  worker: z.string().max(64).optional(),
});
export type Proof = z.output<typeof proofSchema>;

export const proofPath = (dataDir: string): string => `${dataDir}/proof.json`;

/** What the agent tells the worker: may it consume, and under which epoch. */
export const roleFileSchema = z.strictObject({
  role: z.enum(['primary', 'pending', 'standby', 'fenced']),
  epoch: z.number().int().min(0),
  /**
   * CLOCK_MONOTONIC ms until which the worker may consume without hearing again from the
   * agent: a frozen or dead agent cannot extend it, so the worker fences itself.
   */
  validUntil: z.number(),
  /** The machine boot the monotonic `validUntil` belongs to. */
  boot: z.string().max(64),
  /** A switchover drains this primary: take no new message, stop each task at its next checkpoint. */
  draining: z.boolean().optional(),
});
export type RoleFile = z.output<typeof roleFileSchema>;

/**
 * Loads the registry, or quarantines a damaged one (copied aside, never overwritten in place)
 * and starts empty: the fleet's copy of every task lives in the S3 manifest, so nothing valid
 * is lost. Returns the reason when it quarantined.
 */
export const loadRegistry = async (
  dataDir: string,
  now: number,
): Promise<{ registry: Registry; damaged: string | null }> => {
  const path = registryPath(dataDir);
  try {
    return { registry: (await readJsonFile(path, registrySchema)) ?? emptyRegistry(), damaged: null };
  } catch (error) {
    await copyFile(path, `${path}.quarantine.${now}`).catch(() => undefined);
    return { registry: emptyRegistry(), damaged: error instanceof Error ? error.message : String(error) };
  }
};
