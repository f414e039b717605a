import { buildConfig, type Config } from './config';
import { ValidationError } from './errors';
import { parseJsonText } from './validate';

/** Each stack output (resources/outputs.yml) and the config key it fills. */
export const OUTPUT_KEYS = {
  Stage: 'stage',
  StateBucketName: 'bucket',
  ControlTableName: 'table',
  TaskQueueUrl: 'queueUrl',
  IntakeQueueUrl: 'intakeQueueUrl',
  DeadLetterQueueUrl: 'deadLetterQueueUrl',
  NotifierFailureQueueUrl: 'notifierFailureQueueUrl',
  AlertTopicArn: 'topicArn',
  WatchdogFunctionName: 'watchdogFunction',
  RunbookUrl: 'runbookUrl',
  HostedZoneId: 'hostedZoneId',
  OriginRecordName: 'recordName',
} as const satisfies Record<string, keyof Config>;

/** Without these the outputs are not a Queen's Fleet stack's. */
const REQUIRED = ['StateBucketName', 'ControlTableName', 'TaskQueueUrl'] as const;

/** The fleet config a stack's outputs make, and what they lacked (a stack deployed by an older release). */
export interface StackConfig {
  /** The file's content: only what the stack says, so every other key keeps its default. */
  file: Record<string, unknown>;
  missing: string[];
}

/** Keys the stack's outputs own in the config file: replaced on every `fleet init`. */
export const STACK_KEYS: readonly string[] = ['region', 'nodes', ...Object.values(OUTPUT_KEYS)];

/**
 * An existing config file brought up to date with the stack: the stack's keys from `fromStack`
 * (one it no longer outputs is dropped), every other key (a pipeline, timings) kept as it was.
 */
export const refreshConfig = (
  existing: Readonly<Record<string, unknown>>,
  fromStack: Readonly<Record<string, unknown>>,
): Record<string, unknown> => {
  const kept = Object.fromEntries(Object.entries(existing).filter(([key]) => !STACK_KEYS.includes(key)));
  const file = { ...kept, ...fromStack };
  buildConfig({}, file);
  return file;
};

/**
 * The fleet config file from a stack's outputs: every name and URL the stack made, its region
 * and the node list (`FleetNodes`). Checked as the daemons will read it.
 */
export const configFromOutputs = (outputs: Readonly<Record<string, string>>, region: string): StackConfig => {
  const absent = REQUIRED.filter((key) => outputs[key] === undefined);
  if (absent.length > 0)
    throw new ValidationError(`the stack has no output ${absent.join(', ')}: is it a Queen's Fleet stack?`, 'outputs');
  const file: Record<string, unknown> = { region };
  const missing: string[] = [];
  for (const [output, key] of Object.entries(OUTPUT_KEYS)) {
    const value = outputs[output];
    if (value !== undefined && value !== '') file[key] = value;
    else if (output !== 'HostedZoneId' && output !== 'OriginRecordName') missing.push(output);
  }
  if (outputs.FleetNodes === undefined) missing.push('FleetNodes');
  else file.nodes = parseJsonText(outputs.FleetNodes, 'stack output FleetNodes');
  buildConfig({}, file);
  return { file, missing };
};
