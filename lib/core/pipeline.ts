import { z } from 'zod';

/**
 * The pipeline a task goes through: an ordered list of stages, each a command (argv, no shell)
 * or, without one, the built-in synthetic stage. The contract a command honours is in
 * docs/pipeline.md.
 */

/** The seed's four stages: the default pipeline, each the synthetic stage. */
export const SEED_STAGES = ['transcode', 'titling', 'metadata', 'delivery'] as const;

/** Names a stage folder and an S3 key part, so it stays short and plain. */
export const stageNameSchema = z
  .string()
  .regex(/^[a-z][a-z0-9_-]{0,31}$/, 'must be lower-case letters, digits, - and _, 32 at most');

export const pipelineStageSchema = z.strictObject({
  name: stageNameSchema,
  /** argv: the first entry is the program, run without a shell. Absent: the synthetic stage. */
  command: z.array(z.string().min(1)).min(1).optional(),
  /** The longest one attempt may run; past it the attempt is a failure. */
  timeoutSeconds: z.number().positive().optional(),
  /** How long the stage may do no work (no progress line, no CPU) before it is stopped as hung. */
  hangSeconds: z.number().positive().optional(),
  /** Failed attempts retried on the same node before the task counts one failure. */
  retries: z.number().int().min(0).max(10).default(0),
});
export type PipelineStage = z.output<typeof pipelineStageSchema>;

export const MAX_STAGES = 16;

export const pipelineSchema = z
  .array(pipelineStageSchema)
  .min(1)
  .max(MAX_STAGES)
  .superRefine((stages, ctx) => {
    const seen = new Set<string>();
    stages.forEach((s, i) => {
      if (seen.has(s.name))
        ctx.addIssue({ code: 'custom', path: [i, 'name'], message: `duplicate stage name ${s.name}` });
      seen.add(s.name);
    });
  });

/** The shorthand of earlier releases: a command for some of the seed's stages. */
export const stageCommandsSchema = z.partialRecord(z.enum(SEED_STAGES), z.array(z.string().min(1)).min(1));

/** The stages a worker runs: `pipeline`, else the seed's stages with `stageCommands` where given. */
export const pipelineOf = (c: {
  pipeline?: readonly PipelineStage[] | undefined;
  stageCommands?: z.output<typeof stageCommandsSchema> | undefined;
}): readonly PipelineStage[] =>
  c.pipeline ??
  SEED_STAGES.map((name) => {
    const command = c.stageCommands?.[name];
    return command === undefined ? { name, retries: 0 } : { name, command, retries: 0 };
  });

/** Exit status of a stage that asks to be tried again later without counting a failure (sysexits EX_TEMPFAIL). */
export const EX_TEMPFAIL = 75;

/** A stage's progress report: `progress <fraction> [<token>]` on a line of its stdout. */
export interface ProgressLine {
  fraction: number;
  token?: string;
}

/** The token a stage may report: printable, no spaces, short enough for a checkpoint and an environment. */
const TOKEN = /^[\x21-\x7e]{1,512}$/;

/** Reads one stdout line; null when it is not a progress report (then it is only logged). */
export const parseProgressLine = (line: string): ProgressLine | null => {
  const m = /^progress\s+(\S+)(?:\s+(\S+))?\s*$/.exec(line);
  if (m === null) return null;
  const fraction = Number(m[1]);
  if (!Number.isFinite(fraction) || fraction < 0 || fraction > 1) return null;
  const token = m[2];
  if (token === undefined) return { fraction };
  return TOKEN.test(token) ? { fraction, token } : null;
};
