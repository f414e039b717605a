/**
 * The names the stack gives what it creates (serverless.yml, resources/*.yml), from its stage:
 * one place, so the CLI's defaults, the node roles and the watchdog's lookups agree with the stack.
 */

/** serverless.yml's `service`. */
export const SERVICE = 'queens-fleet';
/** serverless.yml's stage when `--stage` is not given. */
export const DEFAULT_STAGE = 'dev';
/** A stage as the stack's names can carry it (its bucket name must be lower case). */
export const STAGE_PATTERN = /^[a-z0-9][a-z0-9-]{0,30}$/;

/** The CloudFormation stack the framework deploys: `<service>-<stage>`. */
export const stackNameOf = (stage: string): string => `${SERVICE}-${stage}`;
/** The `stateBucket` parameter's default. */
export const stateBucketOf = (stage: string): string => `${SERVICE}-state-${stage}`;
/** The `controlTable` parameter's default. */
export const controlTableOf = (stage: string): string => `${SERVICE}-control-${stage}`;

/** A node's own IAM role, which its hybrid activation hands it (lib/deploy/node-roles.ts). */
export const nodeRoleNameOf = (where: { stage: string; region: string }, node: string): string =>
  `${SERVICE}-node-${where.stage}-${where.region}-${node}`;

/** `node-1` → `Node1`: the resource id part, letters and digits only as CloudFormation wants. */
export const idPart = (name: string): string =>
  name
    .split('-')
    .map((part) => part.charAt(0).toUpperCase() + part.slice(1))
    .join('');

/** The stack output naming a node's role (lib/deploy/node-roles.ts). */
export const nodeRoleOutputOf = (node: string): string => `NodeRole${idPart(node)}Name`;

/** The tag whose value the watchdog's ssm:SendCommand requires (serverless.yml `instanceTagValue`). */
export const FLEET_TAG = 'queen-fleet';
/** The tag naming the node an activation registers (read by people and `fleet doctor`). */
export const NODE_TAG = 'queen-fleet-node';
