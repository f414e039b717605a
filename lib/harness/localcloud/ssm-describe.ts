import type { MachineView } from './fakes';

/** What DescribeInstanceInformation says of one managed instance, as the fake answers it. */
interface InstanceInformation {
  InstanceId: string;
  PingStatus: 'Online' | 'ConnectionLost';
  LastPingDateTime?: number;
  IamRole?: string;
  ComputerName: string;
  ResourceType: 'ManagedInstance';
}

/**
 * DescribeInstanceInformation over the local machines, as SSM answers it (SSM API reference,
 * "DescribeInstanceInformation"): `Filters` by `InstanceIds` or `IamRole` (a hybrid node's
 * activation role, by name), and pages of `MaxResults` (5 to 50, default 10; the caller refuses
 * others, as SSM does) with a `NextToken`,
 * so a caller that reads only the first page misses instances, as it would on AWS.
 */
export const describeInstances = (
  machines: readonly MachineView[],
  body: Record<string, unknown>,
  ping: (instanceId: string) => { status: 'Online' | 'ConnectionLost'; at: number | null },
): { InstanceInformationList: InstanceInformation[]; NextToken?: string } => {
  const filters = Array.isArray(body.Filters) ? (body.Filters as { Key?: unknown; Values?: unknown }[]) : [];
  const wanted = (key: string): string[] | null => {
    const f = filters.find((x) => x.Key === key);
    return f === undefined || !Array.isArray(f.Values) ? null : f.Values.map(String);
  };
  const ids = wanted('InstanceIds');
  const roles = wanted('IamRole');
  const all = machines
    .filter((m) => (ids === null || ids.includes(m.instanceId)) && (roles === null || roles.includes(m.iamRole ?? '')))
    .map((m): InstanceInformation => {
      const p = ping(m.instanceId);
      return {
        InstanceId: m.instanceId,
        PingStatus: p.status,
        ...(p.at === null ? {} : { LastPingDateTime: p.at / 1000 }),
        ...(m.iamRole === undefined ? {} : { IamRole: m.iamRole }),
        ComputerName: m.name,
        ResourceType: 'ManagedInstance',
      };
    });
  const size = Math.min(50, Math.max(5, Number(body.MaxResults ?? 10) || 10));
  const from = Number(body.NextToken ?? 0) || 0;
  const page = all.slice(from, from + size);
  return from + size < all.length
    ? { InstanceInformationList: page, NextToken: String(from + size) }
    : { InstanceInformationList: page };
};
