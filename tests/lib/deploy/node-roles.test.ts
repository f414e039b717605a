import { ValidationError } from '../../../lib/core/errors';
import { nodeNamesOf, nodeRolesFragment, type NodeRoleInputs } from '../../../lib/deploy/node-roles';

const spec = (name: string, n: number): { name: string; instanceId: string } => ({
  name,
  instanceId: `mi-0000000000000000${n}`,
});
const inputs = (over: Partial<NodeRoleInputs> = {}): NodeRoleInputs => ({
  service: 'queens-fleet',
  stage: 'prod',
  region: 'us-west-2',
  bucket: 'acme-state',
  nodes: JSON.stringify([spec('node-1', 1), spec('node-2', 2)]),
  ...over,
});

describe('nodeRolesFragment', () => {
  it(
    'makes one role per node, one given by its name alone too, ' +
      'each writing only its own heartbeat and its own beat',
    () => {
      const nodes = JSON.stringify([spec('node-1', 1), spec('node-2', 2), { name: 'node-3' }]);
      const { Resources, Outputs } = nodeRolesFragment(inputs({ nodes }));
      expect(Object.keys(Resources)).toEqual(['NodeRoleNode1', 'NodeRoleNode2', 'NodeRoleNode3']);
      expect(Outputs.NodeRoleNode3Name).toEqual({
        Description: 'node-3: the role fleet enroll node-3 hands its activation',
        Value: { Ref: 'NodeRoleNode3' },
      });
      // The one list of nodes, for `fleet init`: as the config reads it.
      expect(JSON.parse((Outputs.FleetNodes as { Value: string }).Value)).toEqual([
        { ...spec('node-1', 1), priority: 100 },
        { ...spec('node-2', 2), priority: 100 },
        { name: 'node-3', priority: 100 },
      ]);
      const role = Resources.NodeRoleNode2 as {
        Properties: {
          RoleName: string;
          Policies: { PolicyDocument: { Statement: { Resource: unknown; Condition?: unknown }[] } }[];
        };
      };
      expect(role.Properties.RoleName).toBe('queens-fleet-node-prod-us-west-2-node-2');
      expect(
        role.Properties.Policies.flatMap((p) => p.PolicyDocument.Statement.map((s) => [s.Resource, s.Condition])),
      ).toEqual([
        [{ 'Fn::Sub': 'arn:${AWS::Partition}:s3:::acme-state/peer-sync/nodes/node-2/heartbeat.json' }, undefined],
        [
          { 'Fn::GetAtt': ['ControlTable', 'Arn'] },
          { 'ForAllValues:StringEquals': { 'dynamodb:LeadingKeys': ['nodes/node-2/beat'] } },
        ],
      ]);
    },
  );

  it.each([
    ['JSON text', '[{"name":"node-1","instanceId":"mi-00000000000000001"}]', ['node-1']],
    ['a parsed list (set in YAML)', [spec('node-1', 1)], ['node-1']],
    ['names alone', '[{"name":"node-1"},{"name":"node-2"}]', ['node-1', 'node-2']],
    ['an empty parameter', '', []],
  ])('reads the nodes parameter given as %s', (_how, nodes, names) => {
    expect(nodeNamesOf({ nodes })).toEqual(names);
  });

  it(
    "attaches the user's own managed policies to every node role, " +
      "beside the fleet's two, and refuses what is no policy ARN",
    () => {
      const media = 'arn:aws:iam::123456789012:policy/media-read';
      const { Resources } = nodeRolesFragment(inputs({ nodePolicyArns: JSON.stringify([media, media]) }));
      for (const role of Object.values(Resources) as { Properties: { ManagedPolicyArns: unknown[] } }[]) {
        expect(role.Properties.ManagedPolicyArns).toEqual([
          { Ref: 'NodePolicy' },
          { Ref: 'NodeSsmAgentPolicy' },
          media,
        ]);
      }
      expect(() => nodeRolesFragment(inputs({ nodePolicyArns: '["arn:aws:s3:::media"]' }))).toThrow(
        /parameter nodePolicyArns: 0: must be a managed policy ARN/,
      );
      const many = JSON.stringify(Array.from({ length: 9 }, (_, i) => `arn:aws:iam::123456789012:policy/p${i}`));
      expect(() => nodeRolesFragment(inputs({ nodePolicyArns: many }))).toThrow(/at most 8/);
      expect(
        (nodeRolesFragment(inputs()).Resources.NodeRoleNode1 as { Properties: { ManagedPolicyArns: unknown[] } })
          .Properties.ManagedPolicyArns,
      ).toHaveLength(2);
    },
  );

  it.each([
    ['a node named twice', { nodes: JSON.stringify([spec('node-1', 1), spec('node-1', 2)]) }, /node-1 is named twice/],
    [
      'names that would share a resource id',
      { nodes: '[{"name":"node-1"},{"name":"node--1"}]' },
      /node-1 and node--1 would share the resource id NodeRoleNode1/,
    ],
    [
      'a role name longer than IAM allows',
      { nodes: JSON.stringify([{ name: 'n'.repeat(40) }]) },
      /longer than IAM's 64 characters/,
    ],
    ['a name the config would refuse', { nodes: '[{"name":"Node_3"}]' }, /parameter nodes: 0\.name/],
    ['a nodes parameter that is not JSON', { nodes: '[{' }, /parameter nodes: not valid JSON/],
  ])('throws a ValidationError for %s', (_what, over, message) => {
    const make = (): unknown => nodeRolesFragment(inputs(over));
    expect(make).toThrow(ValidationError);
    expect(make).toThrow(message);
  });
});
