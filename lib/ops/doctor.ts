import { describeError } from '../core/errors';
import { doctorChecks } from '../core/views/doctor';
import {
  deadLetterUrl,
  type Check,
  type DeadLetterObservation,
  type DoctorFacts,
  type OriginObservation,
} from '../core/views/doctor-checks';
import { KEYS } from '../core/keys';
import type { Confirmation } from '../core/fleet/liveness';
import { leaderSchema } from '../core/schemas';
import { observeObject, observeHeartbeats, observeQueue, type OpsDeps } from './observe';

/**
 * The bucket, by listing the heartbeats (a missing bucket fails a LIST, not only a GET), then the
 * control table, by reading leader.json from it (an upgrade's first read may copy it from the bucket).
 */
const observeBucket = async (
  deps: OpsDeps,
): Promise<Pick<DoctorFacts, 'bucket' | 'table' | 'leader' | 'heartbeats'> & { serverNow: number | null }> => {
  let seen: Awaited<ReturnType<typeof observeHeartbeats>>;
  try {
    seen = await observeHeartbeats(deps.store, deps.config.nodes);
  } catch (error) {
    return {
      bucket: { state: 'error', error: describeError(error) },
      table: null,
      leader: null,
      heartbeats: null,
      serverNow: null,
    };
  }
  const { heartbeats, serverNow } = seen;
  try {
    const leader = await observeObject(deps.store, KEYS.leader, leaderSchema);
    return { bucket: { state: 'ok' }, table: { state: 'ok' }, leader, heartbeats, serverNow };
  } catch (error) {
    return {
      bucket: { state: 'ok' },
      table: { state: 'error', error: describeError(error) },
      leader: null,
      heartbeats,
      serverNow,
    };
  }
};

/** The dead-letter queue named by the task queue's redrive policy, and what waits in it. */
const observeDeadLetter = async (deps: OpsDeps): Promise<DeadLetterObservation> => {
  const queue = deps.queue;
  if (queue === null) return { state: 'none' };
  try {
    const arn = await queue.deadLetterArn();
    const url = arn === null ? null : deadLetterUrl(queue.queueUrl, arn);
    if (arn === null || url === null) return { state: 'none' };
    return { state: 'ok', name: arn.split(':').at(-1) ?? arn, ...(await deps.queueAt(url).backlog()) };
  } catch (error) {
    return { state: 'error', error: describeError(error) };
  }
};

const observeOrigin = async (deps: OpsDeps): Promise<OriginObservation> => {
  if (deps.dns === null) return { state: 'not-configured' };
  try {
    return { state: 'ok', value: await deps.dns.current() };
  } catch (error) {
    return { state: 'error', error: describeError(error) };
  }
};

/** Runs every check of `fleet doctor`; none throws, each becomes an ok / warn / fail line. */
export const runDoctor = async (deps: OpsDeps): Promise<Check[]> => {
  const [storage, queue, origin, probes] = await Promise.all([
    observeBucket(deps),
    observeQueue(deps.queue),
    observeOrigin(deps),
    Promise.all(
      deps.config.nodes.map(async (spec): Promise<[string, Confirmation]> => [
        spec.name,
        await deps.probe.confirm(spec),
      ]),
    ),
  ]);
  const deadLetter = queue.state === 'ok' ? await observeDeadLetter(deps) : null;
  const { serverNow, ...facts } = storage;
  return doctorChecks({
    config: deps.config,
    ...facts,
    queue,
    deadLetter,
    instances: new Map(probes),
    origin,
    now: serverNow ?? deps.now(),
  });
};
