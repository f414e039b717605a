import { describeInstances } from '../../../../lib/harness/localcloud/ssm-describe';
import type { MachineView } from '../../../../lib/harness/localcloud/fakes';

const machine = (i: number, iamRole?: string): MachineView => ({
  instanceId: `mi-${String(i).padStart(17, '0')}`,
  name: `node-${i}`,
  lightsailName: `queen-fleet-node-${i}`,
  lightsailState: 'running',
  reachable: true,
  ...(iamRole === undefined ? {} : { iamRole }),
});
const online = () => ({ status: 'Online' as const, at: 5_000 });

describe('the SSM fake: DescribeInstanceInformation', () => {
  const machines = Array.from({ length: 12 }, (_, i) => machine(i + 1, `role-${(i % 3) + 1}`));

  it('filters by IamRole and by InstanceIds, and says each one role and last ping', () => {
    const byRole = describeInstances(machines, { Filters: [{ Key: 'IamRole', Values: ['role-2'] }] }, online);
    expect(byRole.InstanceInformationList.map((i) => i.ComputerName)).toEqual([
      'node-2',
      'node-5',
      'node-8',
      'node-11',
    ]);
    expect(byRole.InstanceInformationList[0]).toMatchObject({ IamRole: 'role-2', LastPingDateTime: 5 });
    const byId = describeInstances(
      machines,
      { Filters: [{ Key: 'InstanceIds', Values: ['mi-00000000000000003'] }] },
      online,
    );
    expect(byId.InstanceInformationList.map((i) => i.ComputerName)).toEqual(['node-3']);
    expect(describeInstances([machine(1)], { Filters: [{ Key: 'IamRole', Values: ['role-1'] }] }, online)).toEqual({
      InstanceInformationList: [],
    });
  });

  it('answers in pages of MaxResults (5 to 50) with a NextToken, as SSM does', () => {
    const first = describeInstances(machines, { MaxResults: 5 }, online);
    expect(first.InstanceInformationList).toHaveLength(5);
    const second = describeInstances(machines, { MaxResults: 5, NextToken: first.NextToken }, online);
    const third = describeInstances(machines, { MaxResults: 5, NextToken: second.NextToken }, online);
    expect(third.InstanceInformationList.map((i) => i.ComputerName)).toEqual(['node-11', 'node-12']);
    expect(third.NextToken).toBeUndefined();
    expect(describeInstances(machines, {}, online).InstanceInformationList).toHaveLength(10);
  });
});
