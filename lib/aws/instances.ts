import type { LightsailClient } from '@aws-sdk/client-lightsail';
import type { NodeSpec } from '../core/config';
import type { Confirmation } from '../core/fleet/liveness';
import type { ManagedInstances } from './managed-instances';
import { sdk } from './sdk';

const RUNNING = new Set(['running']);
/**
 * Only these confirm that nothing runs on the instance any more. `stopping` and `shutting-down`
 * do not: the OS may still be shutting its services down, the worker among them.
 */
const STOPPED = new Set(['stopped', 'terminated']);
const STOPPING = new Set(['stopping', 'shutting-down']);

/**
 * The independent opinions about a silent node: Lightsail's view of the instance and SSM's
 * view of its SSM agent (a process apart from ours). Errors become "unknown", never "dead".
 */
export class InstanceProbe {
  constructor(
    private readonly lightsail: LightsailClient,
    private readonly instances: ManagedInstances,
    /** Told why an opinion is "unknown" (denied, throttled, unreachable): worth a log line. */
    private readonly onError: (call: string, error: unknown) => void = () => undefined,
  ) {}

  private async instance(spec: NodeSpec): Promise<Confirmation['instance']> {
    if (spec.lightsailName === undefined) return 'unknown';
    try {
      const out = await this.lightsail.send(
        new (sdk.lightsail().GetInstanceStateCommand)({ instanceName: spec.lightsailName }),
      );
      const name = out.state?.name ?? '';
      return RUNNING.has(name)
        ? 'running'
        : STOPPED.has(name)
          ? 'stopped'
          : STOPPING.has(name)
            ? 'stopping'
            : 'unknown';
    } catch (error) {
      this.onError(`Lightsail GetInstanceState ${spec.lightsailName}`, error);
      return 'unknown';
    }
  }

  private async ping(spec: NodeSpec): Promise<Confirmation['ssm']> {
    try {
      const info = await this.instances.describe(spec);
      if (info === null) return 'unknown';
      return info.online ? 'online' : 'lost';
    } catch (error) {
      this.onError(`SSM DescribeInstanceInformation ${spec.instanceId ?? spec.name}`, error);
      return 'unknown';
    }
  }

  async confirm(spec: NodeSpec): Promise<Confirmation> {
    const [instance, ssm] = await Promise.all([this.instance(spec), this.ping(spec)]);
    return { instance, ssm };
  }
}
