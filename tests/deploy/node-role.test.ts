import { KEYS } from '../../lib/core/keys';
import { nodeWrites, type NodeWrite } from './node-writes';
import { asList, CI_PARAMS, NODE_ROLES, packageTemplate, reader, type Statement, type Template } from './packaged';
import { arnOf, decide, type Decision, type Request } from './policy-eval';

/**
 * The nodes' roles in the packaged template (resources/node-roles.cjs, resources/node-iam.yml),
 * judged request by request with IAM's evaluation logic (policy-eval.ts): what a node may write,
 * read and call, and what it may not even by a conditional write. docs/security.md is the prose.
 */
let template: Template;
let t: ReturnType<typeof reader>;
beforeAll(() => {
  ({ template } = packageTemplate('package-node-test', CI_PARAMS));
  t = reader(template);
}, 120_000);

const STATE = 'arn:aws:s3:::acme-queens-fleet-ci/peer-sync/';
const TABLE = 'ref:ControlTable.Arn';
const WEBHOOK = 'arn:aws:ssm:us-west-2:123456789012:parameter/queens-fleet/ci/slack-webhook-url';
type Condition = NodeWrite['condition'];
const CONDITIONS: readonly Condition[] = [null, 'if-match', 'if-none-match'];
/** A PutObject of `key` below the state prefix, carrying `condition` as S3 puts it in the request context. */
const put = (key: string, condition: Condition = null): Request => ({
  action: 's3:PutObject',
  resource: `${STATE}${key}`,
  context:
    condition === 'if-match'
      ? { 's3:if-match': '"0a1b"' }
      : condition === 'if-none-match'
        ? { 's3:if-none-match': '*' }
        : {},
});
const judge = (role: string, request: Request): Decision => decide(t.statements(role), request);
/** A request on one item of the control table, naming its key as DynamoDB puts it in the request context. */
const item = (action: string, key: string): Request => ({
  action,
  resource: TABLE,
  context: { 'dynamodb:LeadingKeys': key },
});
/** The nodes NODE_ROLES are for, in the same order. */
const NODES = ['node-1', 'node-2', 'node-3'];
/** The decision for each condition, in CONDITIONS' order: plain, If-Match, If-None-Match. */
const byCondition = (role: string, key: string): Decision[] => CONDITIONS.map((c) => judge(role, put(key, c)));

describe('node roles', () => {
  it('gives each node a role of its own, to hand to its own activation', () => {
    expect(
      t
        .resources('AWS::IAM::Role')
        .map(([id]) => id)
        .filter((id) => id.startsWith('NodeRole')),
    ).toEqual(NODE_ROLES);
    NODE_ROLES.forEach((role, i) => {
      const props = t.props(role);
      expect(props.RoleName).toBe(`queens-fleet-node-ci-us-west-2-node-${i + 1}`);
      expect(template.Outputs?.[`${role}Name`]?.Value).toEqual({ Ref: role });
      const [trust] = (props.AssumeRolePolicyDocument as { Statement: Statement[] }).Statement;
      expect(trust).toMatchObject({
        Effect: 'Allow',
        Principal: { Service: 'ssm.amazonaws.com' },
        Action: 'sts:AssumeRole',
        Condition: { StringEquals: { 'aws:SourceAccount': { Ref: 'AWS::AccountId' } } },
      });
      // No AWS managed policy (AmazonSSMManagedInstanceCore reads every parameter): only the fleet's own two.
      expect(props.ManagedPolicyArns).toEqual([{ Ref: 'NodePolicy' }, { Ref: 'NodeSsmAgentPolicy' }]);
    });
  });

  it("lets a node write its own heartbeat, and no other node's, not even by a conditional write", () => {
    const grid = NODE_ROLES.map((role) =>
      ['node-1', 'node-2', 'node-3'].map((node) => byCondition(role, KEYS.heartbeat(node)).join('/')),
    );
    const own = 'allow/allow/allow';
    const other = 'implicit-deny/implicit-deny/implicit-deny';
    expect(grid).toEqual([
      [own, other, other],
      [other, own, other],
      [other, other, own],
    ]);
  });

  it(
    'refuses every node the watchdog state and the incident ' + 'events by an explicit Deny, whatever the condition',
    () => {
      for (const role of NODE_ROLES) {
        for (const key of [KEYS.watchdogState, KEYS.event('node-1-e1-i1', 'STALLED'), 'watchdog/anything']) {
          expect(byCondition(role, key)).toEqual(['explicit-deny', 'explicit-deny', 'explicit-deny']);
          expect(judge(role, { action: 's3:DeleteObject', resource: `${STATE}${key}` })).toBe('explicit-deny');
        }
      }
    },
  );

  it.each([
    KEYS.manifest,
    KEYS.manifestShard(7),
    KEYS.archive('2025-01-02', 7),
    KEYS.checkpoint('t1'),
    KEYS.output('t1', 'transcode'),
  ])('lets nodes write %s only by compare-and-swap (If-Match) or by creating it (If-None-Match: *)', (key) => {
    for (const role of NODE_ROLES) expect(byCondition(role, key)).toEqual(['implicit-deny', 'allow', 'allow']);
  });

  it.each([KEYS.done('t1'), KEYS.quarantine('manifest.json', 1)])('lets nodes create %s, never replace it', (key) => {
    for (const role of NODE_ROLES) {
      expect(byCondition(role, key)).toEqual(['implicit-deny', 'implicit-deny', 'allow']);
      // If-None-Match takes only `*` in S3; any other value is not a create.
      expect(judge(role, { ...put(key), context: { 's3:if-none-match': '"0a1b"' } })).toBe('implicit-deny');
    }
  });

  it('lets nodes write nothing else in the bucket, delete nothing, and read only the state prefix', () => {
    const elsewhere: Request[] = [
      ...CONDITIONS.flatMap((c) =>
        ['other.json', 'nodes/node-1/other.json', 'tasks/t1/other.json', 'archivex.json'].map((k) => put(k, c)),
      ),
      {
        action: 's3:PutObject',
        resource: 'arn:aws:s3:::acme-queens-fleet-ci/leader.json',
        context: { 's3:if-match': '"0a1b"' },
      },
      { action: 's3:DeleteObject', resource: `${STATE}${KEYS.leader}` },
      { action: 's3:PutObjectAcl', resource: `${STATE}${KEYS.leader}` },
      { action: 's3:GetObjectVersion', resource: `${STATE}${KEYS.leader}` },
      { action: 's3:GetObject', resource: 'arn:aws:s3:::acme-queens-fleet-ci/elsewhere.json' },
      { action: 's3:PutBucketPolicy', resource: 'arn:aws:s3:::acme-queens-fleet-ci' },
    ];
    for (const role of NODE_ROLES) {
      expect(elsewhere.filter((r) => judge(role, r) === 'allow')).toEqual([]);
      expect(judge(role, { action: 's3:GetObject', resource: `${STATE}${KEYS.watchdogState}` })).toBe('allow');
      expect(judge(role, { action: 's3:ListBucket', resource: 'arn:aws:s3:::acme-queens-fleet-ci' })).toBe('allow');
    }
  });

  it('lets nodes upload stage artifacts, in parts and without a condition, under artifacts/ only', () => {
    const key = KEYS.artifact('t1', 'transcode', 'e3-0a1b2c3d', 'hls/seg-0001.ts');
    for (const role of NODE_ROLES) {
      expect(judge(role, put(key))).toBe('allow');
      expect(judge(role, { action: 's3:AbortMultipartUpload', resource: `${STATE}${key}` })).toBe('allow');
      expect(judge(role, { action: 's3:DeleteObject', resource: `${STATE}${key}` })).not.toBe('allow');
      expect(judge(role, put('artifactsx/t1/a.bin'))).not.toBe('allow');
    }
  });

  it(
    'lets nodes read and update the lease item of the control table, read the watchdog state, ' +
      'and no other item but the beats, nor anything else of it',
    () => {
      for (const role of NODE_ROLES) {
        expect(judge(role, item('dynamodb:GetItem', KEYS.leader))).toBe('allow');
        expect(judge(role, item('dynamodb:UpdateItem', KEYS.leader))).toBe('allow');
        // A standby reads the operator's pause and cordons there before it takes a lapsed lease.
        expect(judge(role, item('dynamodb:GetItem', KEYS.watchdogState))).toBe('allow');
        expect(judge(role, item('dynamodb:UpdateItem', KEYS.watchdogState))).toBe('implicit-deny');
        for (const action of [
          'dynamodb:PutItem',
          'dynamodb:DeleteItem',
          'dynamodb:Scan',
          'dynamodb:DeleteTable',
          'dynamodb:UpdateTable',
        ])
          expect(judge(role, item(action, KEYS.leader))).toBe('implicit-deny');
        for (const action of ['dynamodb:PutItem', 'dynamodb:DeleteItem'])
          expect(judge(role, item(action, KEYS.watchdogState))).toBe('implicit-deny');
        for (const key of ['other', KEYS.heartbeat('node-1')]) {
          expect(judge(role, item('dynamodb:UpdateItem', key))).toBe('implicit-deny');
          expect(judge(role, item('dynamodb:GetItem', key))).toBe('implicit-deny');
        }
      }
    },
  );

  it("lets a node update its own beat item, and no other node's, and nothing else of a beat", () => {
    const grid = NODE_ROLES.map((role) =>
      NODES.map((node) => judge(role, item('dynamodb:UpdateItem', KEYS.beat(node)))),
    );
    expect(grid).toEqual([
      ['allow', 'implicit-deny', 'implicit-deny'],
      ['implicit-deny', 'allow', 'implicit-deny'],
      ['implicit-deny', 'implicit-deny', 'allow'],
    ]);
    for (const role of NODE_ROLES) {
      // Every beat may be read: a primary that lost S3 steps down only for a peer whose beat moves.
      for (const node of NODES) expect(judge(role, item('dynamodb:GetItem', KEYS.beat(node)))).toBe('allow');
      for (const action of [
        'dynamodb:PutItem',
        'dynamodb:DeleteItem',
        'dynamodb:BatchWriteItem',
        'dynamodb:Query',
        'dynamodb:Scan',
      ]) {
        for (const node of NODES) expect(judge(role, item(action, KEYS.beat(node)))).toBe('implicit-deny');
      }
      // Exactly the key: not below it, not beside it, not under the bucket's prefix.
      for (const key of [
        `${KEYS.beat('node-1')}/x`,
        `${KEYS.beat('node-1')}s`,
        `peer-sync/${KEYS.beat('node-1')}`,
        'nodes/node-1/heartbeat.json',
        'nodes/beat',
      ]) {
        expect(judge(role, item('dynamodb:UpdateItem', key))).toBe('implicit-deny');
      }
    }
  });

  it(
    "grants the beat write by the role's OwnBeat alone, for its own item only, " +
      'and the shared NodePolicy reads of beats and no write',
    () => {
      NODE_ROLES.forEach((role, i) => {
        const own = NODES[i] ?? '';
        const ownBeat = t.statements(role).filter((s) => s.Sid === 'OwnBeat');
        expect(ownBeat).toHaveLength(1);
        expect(ownBeat[0]?.Resource).toEqual({ 'Fn::GetAtt': ['ControlTable', 'Arn'] });
        expect(decide(ownBeat, item('dynamodb:UpdateItem', KEYS.beat(own)))).toBe('allow');
        // Through this statement: not another node's beat, not the lease, not the watchdog's state, no read.
        for (const other of NODES.filter((n) => n !== own))
          expect(decide(ownBeat, item('dynamodb:UpdateItem', KEYS.beat(other)))).toBe('implicit-deny');
        for (const key of [KEYS.leader, KEYS.watchdogState])
          expect(decide(ownBeat, item('dynamodb:UpdateItem', key))).toBe('implicit-deny');
        expect(decide(ownBeat, item('dynamodb:GetItem', KEYS.beat(own)))).toBe('implicit-deny');
      });
      const shared = t.documentStatements(t.props('NodePolicy').PolicyDocument as { Statement: Statement[] });
      // Every node reads the beats (a step-down's look at its peers) and writes none through the shared policy.
      for (const node of NODES) {
        expect(decide(shared, item('dynamodb:GetItem', KEYS.beat(node)))).toBe('allow');
        for (const action of ['dynamodb:UpdateItem', 'dynamodb:PutItem', 'dynamodb:DeleteItem']) {
          expect(decide(shared, item(action, KEYS.beat(node)))).toBe('implicit-deny');
        }
      }
      for (const key of ['nodes/node-1/heartbeat.json', 'nodes/beat', 'other/nodes/node-1/beat'])
        expect(decide(shared, item('dynamodb:GetItem', key))).toBe('implicit-deny');
    },
  );

  it('allows every write the node code makes, each one conditional but the heartbeat', async () => {
    const { s3: writes, table } = await nodeWrites();
    // The table's items a node writes: the lease, only by condition, and its own beat (one
    // writer, so written plainly) while it is not the primary.
    expect(table.length).toBeGreaterThan(1);
    expect(table.filter((w) => (w.key === KEYS.leader ? w.condition === null : w.key !== KEYS.beat('node-1')))).toEqual(
      [],
    );
    expect(table.filter((w) => judge('NodeRoleNode1', item('dynamodb:UpdateItem', w.key)) !== 'allow')).toEqual([]);
    // The stretch must reach every kind of key a node writes, or this test proves little.
    const kindOf = (key: string): string => {
      const perItem = key.replace(/^(nodes|tasks|outputs)\/[^/]+\//, '$1/…/');
      return perItem.replace(/^(manifest|archive|quarantine)\/.*$/, '$1/…');
    };
    const kinds = new Set(writes.map((w) => kindOf(w.key)));
    expect([...kinds].sort()).toEqual(
      [
        'archive/…',
        'manifest.json',
        'manifest/…',
        'nodes/…/heartbeat.json',
        'outputs/…/delivery.json',
        'outputs/…/metadata.json',
        'outputs/…/titling.json',
        'outputs/…/transcode.json',
        'quarantine/…',
        'tasks/…/checkpoint.json',
        'tasks/…/done.json',
      ].sort(),
    );
    expect(writes.filter((w) => w.key === KEYS.output('t2', 'transcode')).map((w) => w.condition)).toEqual([
      'if-match',
    ]);
    expect(writes.filter((w) => w.condition === null).map((w) => w.key)).toEqual([KEYS.heartbeat('node-1')]);
    expect(writes.filter((w) => judge('NodeRoleNode1', put(w.key, w.condition)) !== 'allow')).toEqual([]);
  });

  it(
    'keeps the Slack webhook from every node: ' + 'nothing grants a parameter read, and an explicit Deny refuses it',
    () => {
      // The documented core of AmazonSSMManagedInstanceCore (AWS managed policy reference, v2) lets
      // its holder read any parameter: were it ever attached again, the Deny must still win.
      const core: Statement = { Effect: 'Allow', Action: ['ssm:GetParameter', 'ssm:GetParameters'], Resource: '*' };
      for (const role of NODE_ROLES) {
        expect(
          t
            .statements(role)
            .filter((s) => s.Effect === 'Allow' && asList(s.Action).some((a) => a.startsWith('ssm:GetParameter'))),
        ).toEqual([]);
        for (const action of ['ssm:GetParameter', 'ssm:GetParameters', 'ssm:GetParameterHistory']) {
          expect(decide([...t.statements(role), core], { action, resource: WEBHOOK })).toBe('explicit-deny');
        }
        const byPath = {
          action: 'ssm:GetParametersByPath',
          resource: 'arn:aws:ssm:us-west-2:123456789012:parameter/queens-fleet/ci',
        };
        expect(decide([...t.statements(role), { ...core, Action: 'ssm:GetParametersByPath' }], byPath)).toBe(
          'explicit-deny',
        );
      }
    },
  );

  it(
    "gives the SSM Agent its ping, its association poll and Run Command's messages; " +
      'the node code only its tasks, alerts and the watchdog poke',
    () => {
      const agent = [
        ...['AcknowledgeMessage', 'DeleteMessage', 'FailMessage', 'GetEndpoint', 'GetMessages', 'SendReply'].map(
          (a) => `ec2messages:${a}`,
        ),
        'ssm:ListInstanceAssociations',
        'ssm:UpdateInstanceInformation',
        'ssmmessages:CreateControlChannel',
        'ssmmessages:OpenControlChannel',
      ];
      const code = [
        'dynamodb:GetItem',
        'dynamodb:UpdateItem',
        'lambda:InvokeFunction',
        'sns:Publish',
        'sqs:ChangeMessageVisibility',
        'sqs:DeleteMessage',
        'sqs:GetQueueAttributes',
        'sqs:ReceiveMessage',
        'sqs:SendMessage',
      ];
      for (const role of NODE_ROLES) {
        const allowed = t.statements(role).filter((s) => s.Effect === 'Allow');
        const granted = [
          ...new Set(allowed.flatMap((s) => asList(s.Action)).filter((a) => !a.startsWith('s3:'))),
        ].sort();
        expect(granted).toEqual([...agent, ...code].sort());
        const on = (action: string): string[] =>
          allowed.filter((s) => asList(s.Action).includes(action)).map((s) => arnOf(s.Resource));
        expect(on('lambda:InvokeFunction')).toEqual(['ref:WatchdogLambdaFunction.Arn']);
        // The lease (NodePolicy's Lease) and the node's own beat (its role's OwnBeat); reads of the lease
        // of the watchdog's state (Maintenance) and of the beats (PeerBeats), each by its keys (tested above).
        expect(on('dynamodb:UpdateItem')).toEqual([TABLE, TABLE]);
        expect(on('dynamodb:GetItem')).toEqual([TABLE, TABLE, TABLE]);
        expect(on('sns:Publish')).toEqual(['ref:AlertTopic']);
        expect(on('sqs:ReceiveMessage')).toEqual(['ref:TaskQueue.Arn']);
        // A failed task goes back as a new message; one that failed maxTaskFailures times, to the dead-letter queue.
        expect(on('sqs:SendMessage').sort()).toEqual(['ref:DeadLetterQueue.Arn', 'ref:TaskQueue.Arn']);
      }
    },
  );
});
