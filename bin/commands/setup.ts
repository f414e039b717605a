import type { Command } from 'commander';
import { setupSdk } from '../../lib/aws/setup-sdk';
import { configFileOf, CWD_CONFIG_FILE, loadConfigWithSources } from '../../lib/config';
import { copyFiles, DEFAULT_EXPIRY_HOURS, MAX_EXPIRY_HOURS } from '../../lib/core/enroll';
import { ValidationError } from '../../lib/core/errors';
import { STAGE_PATTERN } from '../../lib/core/stack-names';
import { parseNode } from '../../lib/core/views/event-query';
import { enrollNode, initConfig } from '../../lib/ops/setup';
import { VERSION } from '../../lib/version';
import { argument, configFlag, paint, printJson } from './common';

/** Where `fleet init` writes when neither --config nor FLEET_CONFIG_FILE names a file. */
export const DEFAULT_CONFIG_FILE = CWD_CONFIG_FILE;

const parseStage = (raw: string): string => {
  if (!STAGE_PATTERN.test(raw)) throw new ValidationError('--stack: must be a stage such as prod', '--stack');
  return raw;
};

const parseHours = (raw: string): number => {
  const hours = Number(raw);
  if (!Number.isFinite(hours) || hours <= 0 || hours > MAX_EXPIRY_HOURS)
    throw new ValidationError(`--expires-in: must be hours from 1 to ${MAX_EXPIRY_HOURS}`, '--expires-in');
  return hours;
};

/** The region the stack is in: --region, else the AWS variables, else the framework's default. */
const regionOf = (flag: string | undefined): string =>
  flag ?? process.env.AWS_REGION ?? process.env.AWS_DEFAULT_REGION ?? 'us-west-2';

interface InitOptions {
  stack: string;
  region?: string;
  overwrite?: boolean;
  json?: boolean;
}

/** `fleet init --stack STAGE`: the fleet config from the stack's outputs. */
export const registerInit = (program: Command): void => {
  program
    .command('init')
    .description(
      "write the fleet config (--config, FLEET_CONFIG_FILE or ./fleet-config.json) from the stack's outputs: " +
        'its names, URLs and nodes',
    )
    .requiredOption('--stack <stage>', 'the stage deployed (stack queens-fleet-STAGE)', argument(parseStage))
    .option('--region <region>', 'where the stack is (default: AWS_REGION, else us-west-2)')
    .option('--overwrite', "update an existing config file: the stack's keys replaced, every other key kept")
    .option('--json', 'print one JSON document on stdout')
    .action(async (o: InitOptions) => {
      const region = regionOf(o.region);
      const file = configFileOf(process.env, configFlag.file)?.path ?? DEFAULT_CONFIG_FILE;
      const cfn = new (setupSdk.cloudformation().CloudFormationClient)({ region });
      const done = await initConfig(cfn, { stage: o.stack, region, file, overwrite: o.overwrite === true });
      if (o.json === true) return printJson(done);
      const c = paint();
      console.log(c.green(`wrote ${done.path}`) + ` from stack ${done.stack} in ${region}`);
      const none = '(none: list them in the nodes parameter and deploy)';
      console.log(`nodes: ${done.nodes.length === 0 ? none : done.nodes.join(', ')}`);
      if (done.missing.length > 0)
        console.log(c.yellow(`the stack lacks ${done.missing.join(', ')}: deploy this release, then init again`));
      if (configFileOf(process.env, configFlag.file) === null)
        console.log(`fleet commands run here read it; elsewhere: export FLEET_CONFIG_FILE=${done.path}`);
      console.log(`next: fleet enroll <node> for each node (${done.nodes.join(', ') || 'none yet'})`);
    });
};

interface EnrollOptions {
  expiresIn: number;
  json?: boolean;
}

/** `fleet enroll NODE`: the node's hybrid activation, and the exact command that installs it. */
export const registerEnroll = (program: Command): void => {
  program
    .command('enroll')
    .description(
      "create NODE's SSM hybrid activation (its own role, the fleet's tag, one registration, a short life) " +
        'and print the command that installs the node',
    )
    .argument(
      '<node>',
      'the node, as named in the stack nodes parameter',
      argument((raw) => parseNode(raw, 'NODE')),
    )
    .option(
      '--expires-in <hours>',
      `how long the activation may be used (1-${MAX_EXPIRY_HOURS})`,
      argument(parseHours),
      DEFAULT_EXPIRY_HOURS,
    )
    .option('--json', 'print one JSON document on stdout')
    .action(async (node: string, o: EnrollOptions) => {
      const { config, sources, file: named } = loadConfigWithSources(process.env, configFlag.file, true);
      // A stage nobody set would be the default, very likely not the stack deployed: an activation
      // is a credential, so no guessing.
      if (sources.stage.kind === 'default')
        throw new ValidationError(
          named === null
            ? 'no fleet config found: run `fleet init --stack STAGE` in this directory, or pass --config FILE'
            : `${named.path} sets no stage: run \`fleet init --stack STAGE --overwrite\`, or set FLEET_STAGE`,
          '--config',
        );
      const configFile = named?.path ?? DEFAULT_CONFIG_FILE;
      const clients = {
        cfn: new (setupSdk.cloudformation().CloudFormationClient)({ region: config.region }),
        ssm: new (setupSdk.ssm().SSMClient)({ region: config.region }),
      };
      const req = { stage: config.stage, region: config.region, node, expiresInHours: o.expiresIn, configFile };
      const done = await enrollNode(clients, { ...req, version: VERSION, now: Date.now() });
      if (o.json === true) return printJson({ node, ...done });
      const c = paint();
      const files = copyFiles({ version: VERSION, configFile });
      console.log(
        `Activation ${done.activationId} for ${node} (role ${done.role}): one registration, ` +
          `until ${done.expires.toISOString()}. The code is shown only this once.\n`,
      );
      console.log(`1. Copy the release (npm run build:agent makes it) and the config to ${node}:`);
      console.log(`   scp ${files.join(' ')} <user>@<${node}>:\n`);
      console.log(`2. On ${node}, in that directory (Node.js 22 and the SSM agent installed: docs/install.md):`);
      console.log(`   ${c.bold(done.command)}`);
    });
};
