/**
 * One IAM role per node, generated from the service's `nodes` parameter
 * (resources/node-roles.cjs hands them in): each role may write that node's own heartbeat (S3)
 * and its own beat item (the control table), and nothing else of its own; what all nodes share
 * is the `NodePolicy` and `NodeSsmAgentPolicy` managed policies (resources/node-iam.yml),
 * attached to every role.
 *
 * Why roles and not one role with a policy variable: a hybrid activation hands its managed
 * instances the one role named by `CreateActivation`'s `IamRole`, and `UpdateManagedInstanceRole`
 * changes the role of one managed instance (SSM API reference); both are documented. A key that
 * names the calling managed instance in S3 requests is not: `ssm:SourceInstanceARN` is documented
 * only for SSM's own agent calls (Service Authorization Reference, "Condition keys for AWS
 * Systems Manager"; the `${ssm:SourceInstanceARN}` example in "Configuring permissions for
 * Compliance" is for ssm:PutComplianceItems). docs/security.md has the whole reasoning.
 */
import { z } from 'zod';
import { nodeSpecSchema, type NodeSpec } from '../core/config';
import { ValidationError } from '../core/errors';
import { idPart, nodeRoleNameOf, nodeRoleOutputOf, SERVICE } from '../core/stack-names';

export { idPart };
import { parseJsonText, parseWith } from '../core/validate';

/** What the generator reads from the service's parameters and variables. */
export interface NodeRoleInputs {
  service: string;
  stage: string;
  region: string;
  bucket: string;
  /**
   * The `nodes` parameter: a JSON array of node specs (lib/core/config.ts), or the array itself. A node needs no
   * managed-instance id to get its role: it is enrolled with that role after the deploy (`fleet enroll`).
   */
  nodes: unknown;
  /**
   * The `nodePolicyArns` parameter: the user's own managed policies (their media buckets),
   * attached to every node role.
   */
  nodePolicyArns?: unknown;
}

/** The CloudFormation the generator adds: the roles and an output naming each. */
export interface NodeRolesFragment {
  Resources: Record<string, unknown>;
  Outputs: Record<string, unknown>;
}

/** The key prefix every node reads and writes below (lib/core/config.ts `prefix`'s default). */
const STATE_PREFIX = 'peer-sync/';
/** IAM's limit on a role name. */
const ROLE_NAME_MAX = 64;

/** A parameter given on the command line arrives as JSON text; one set in YAML arrives parsed. */
const jsonParam = (value: unknown, what: string): unknown =>
  typeof value === 'string' ? parseJsonText(value === '' ? '[]' : value, what) : value;

/** A managed policy's ARN, the user's own or AWS's. */
const policyArnSchema = z
  .string()
  .regex(
    /^arn:aws[a-z-]*:iam::(\d{12}|aws):policy\/[\w+=,.@/-]{1,512}$/,
    'must be a managed policy ARN such as arn:aws:iam::123456789012:policy/media-read',
  );
/** IAM's default quota of managed policies per role, less the fleet's two. */
const USER_POLICIES_MAX = 8;

/** The user's policies every node role attaches beside the fleet's own. */
export const nodePolicyArnsOf = (value: unknown): string[] => {
  const arns = parseWith(
    z
      .array(policyArnSchema)
      .max(
        USER_POLICIES_MAX,
        `at most ${USER_POLICIES_MAX}: a role holds 10 managed policies by default, and the fleet's take 2`,
      ),
    jsonParam(value ?? '[]', 'parameter nodePolicyArns'),
    'parameter nodePolicyArns',
  );
  return [...new Set(arns)];
};

/**
 * The role of `node`: fixed, so the activation can name it; the watchdog finds the node's instance by it
 * (lib/core/stack-names.ts, with this service's name).
 */
export const nodeRoleName = (inputs: Pick<NodeRoleInputs, 'service' | 'stage' | 'region'>, node: string): string => {
  if (inputs.service !== SERVICE)
    throw new ValidationError(`service ${inputs.service}: node roles are found by ${SERVICE}'s names`, 'service');
  return nodeRoleNameOf(inputs, node);
};

/** The `nodes` parameter, checked as the config checks its nodes. */
const nodeSpecsOf = (inputs: Pick<NodeRoleInputs, 'nodes'>): NodeSpec[] => {
  const specs = parseWith(z.array(nodeSpecSchema), jsonParam(inputs.nodes, 'parameter nodes'), 'parameter nodes');
  const names = specs.map((n) => n.name);
  const twice = names.find((name, i) => names.indexOf(name) !== i);
  if (twice !== undefined) throw new ValidationError(`parameter nodes: ${twice} is named twice`, 'nodes');
  return specs;
};

/** The names the roles are for: every configured node, each once. */
export const nodeNamesOf = (inputs: Pick<NodeRoleInputs, 'nodes'>): string[] => nodeSpecsOf(inputs).map((n) => n.name);

/** The roles, one per node, and an output per role for `aws ssm create-activation --iam-role`. */
export const nodeRolesFragment = (inputs: NodeRoleInputs): NodeRolesFragment => {
  const Resources: Record<string, unknown> = {};
  const Outputs: Record<string, unknown> = {};
  const ids = new Map<string, string>();
  const own = nodePolicyArnsOf(inputs.nodePolicyArns);
  for (const node of nodeNamesOf(inputs)) {
    const id = `NodeRole${idPart(node)}`;
    const clash = ids.get(id);
    if (clash !== undefined)
      throw new ValidationError(
        `parameter nodes: ${clash} and ${node} would share the resource id ${id}; rename one`,
        'nodes',
      );
    ids.set(id, node);
    const roleName = nodeRoleName(inputs, node);
    if (roleName.length > ROLE_NAME_MAX) {
      throw new ValidationError(
        `parameter nodes: the role name ${roleName} is longer than IAM's ${ROLE_NAME_MAX} characters; ` +
          'shorten the node name',
        'nodes',
      );
    }
    const heartbeatObject = `${inputs.bucket}/${STATE_PREFIX}nodes/${node}/heartbeat.json`;
    Resources[id] = {
      Type: 'AWS::IAM::Role',
      Properties: {
        RoleName: roleName,
        Description: `Queen's Fleet node ${node} (${inputs.stage}), via its own SSM hybrid activation`,
        AssumeRolePolicyDocument: {
          Version: '2012-10-17',
          Statement: [
            {
              Effect: 'Allow',
              Principal: { Service: 'ssm.amazonaws.com' },
              Action: 'sts:AssumeRole',
              // The confused-deputy guard AWS's hybrid service role page gives.
              Condition: {
                StringEquals: { 'aws:SourceAccount': { Ref: 'AWS::AccountId' } },
                ArnLike: {
                  'aws:SourceArn': { 'Fn::Sub': 'arn:${AWS::Partition}:ssm:${AWS::Region}:${AWS::AccountId}:*' },
                },
              },
            },
          ],
        },
        ManagedPolicyArns: [{ Ref: 'NodePolicy' }, { Ref: 'NodeSsmAgentPolicy' }, ...own],
        Policies: [
          {
            // The name stays what it was before the beat: a deploy then replaces this document
            // in place (one PutRolePolicy) rather than adding one policy and removing another.
            PolicyName: 'own-heartbeat',
            PolicyDocument: {
              Version: '2012-10-17',
              Statement: [
                // Plain PUT, this key only: the heartbeat has one writer, and its writes are what
                // call the watchdog (the bucket's notification). Every other node key is refused.
                {
                  Sid: 'OwnHeartbeat',
                  Effect: 'Allow',
                  Action: 's3:PutObject',
                  Resource: {
                    'Fn::Sub': `arn:\${AWS::Partition}:s3:::${heartbeatObject}`,
                  },
                },
                // The beat, a standby's newest sample, written every sample (UpdateItem, as the
                // TableStore writes every item), this item only: one writer per beat, as per
                // heartbeat, so no node can speak for another's liveness. Table items have no
                // prefix (as leader.json). No node reads a beat: only the functions do.
                {
                  Sid: 'OwnBeat',
                  Effect: 'Allow',
                  Action: 'dynamodb:UpdateItem',
                  Resource: { 'Fn::GetAtt': ['ControlTable', 'Arn'] },
                  Condition: { 'ForAllValues:StringEquals': { 'dynamodb:LeadingKeys': [`nodes/${node}/beat`] } },
                },
              ],
            },
          },
        ],
        Tags: [{ Key: 'queen-fleet-node', Value: node }],
      },
    };
    Outputs[nodeRoleOutputOf(node)] = {
      Description: `${node}: the role fleet enroll ${node} hands its activation`,
      Value: { Ref: id },
    };
  }
  // The one list of nodes, as `fleet init` writes it into the fleet config (lib/core/stack-config.ts).
  Outputs.FleetNodes = {
    Description: 'nodes (FLEET_NODES): the nodes parameter, for fleet init',
    Value: JSON.stringify(nodeSpecsOf(inputs)),
  };
  return { Resources, Outputs };
};
