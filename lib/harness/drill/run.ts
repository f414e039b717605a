import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import type { ClientFactory } from '../../aws/clients';
import { originRecordFor } from '../../aws/dns';
import { TaskQueue } from '../../aws/queue';
import { inTable, stateStoreFor } from '../../aws/stores';
import { requestFigures } from '../../core/drill/requests';
import { buildConfig, scaleConfig } from '../../core/config';
import { describeError } from '../../core/errors';
import { KEYS, nodeOfHeartbeatKey, underPrefix } from '../../core/keys';
import { buildReport, type Report } from '../../core/drill/report';
import type { Scenario } from '../../core/drill/scenario';
import { describeEvent } from '../../core/drill/trigger';
import { nextEpoch } from '../../core/fleet/lease';
import type { Leader } from '../../core/schemas';
import { planWorkload } from '../../core/drill/workload';
import { buildBundles } from '../localcloud/bundle';
import { resolveBehaviour } from '../localcloud/behaviour';
import { HARNESS_PRINCIPAL, LOCAL, startLocalCloud, type LocalCloud } from '../localcloud/cloud';
import { LocalFleet, localInstanceId, type MachineEvent } from '../localcloud/fleet';
import { LocalScheduler } from '../localcloud/scheduler';
import type { DrillOptions } from './options';
import { buildWatchdogDeps } from '../../control/watchdog/build';
import { createWatchdogHandler } from '../../control/watchdog/handler';
import { createLogger } from '../../log';
import { FaultInjector } from './faults';
import { runOperatorAction } from './operator';
import { hungStops, stageStartsOf } from './node-logs';
import { opsDeps } from '../../ops/observe';
import { requestSwitchover } from '../../ops/switchover';
import { MediaShelf } from './media';
import { Recorder } from './recorder';
import { drillConfig, localClients, waitFor, WATCHDOG_TIMEOUT_SECONDS } from './setup';
import { EventTriggers } from './triggers';
import { WatchdogCrash } from './watchdog-crash';
import { sleep } from '../../sleep';
import { announceLocal, withdrawLocal } from '../../ops/target';

export type { DrillOptions, DrillStats } from './options';

/**
 * Runs one scenario on a fresh local cloud and local fleet, then reports. Everything it
 * starts is stopped before it returns, also on failure.
 */
export const runDrill = async (scenario: Scenario, options: DrillOptions): Promise<Report> => {
  const { timeScale, seed, signal } = options;
  const phase = options.onPhase ?? ((): void => undefined);
  // Bad overrides are bad input: refused before anything starts.
  const behaviour = resolveBehaviour(scenario.behaviour);
  const { stallSamples, sampleIntervalSeconds } = buildConfig({}, scenario.config);
  const runDir = await mkdtemp(join(tmpdir(), 'qf-run-'));
  let cloud: LocalCloud | undefined;
  let fleet: LocalFleet | undefined;
  let scheduler: LocalScheduler | undefined;
  let clients: ClientFactory | undefined;
  let watchdogClients: ClientFactory | undefined;
  const timers: NodeJS.Timeout[] = [];
  let depthEvery: NodeJS.Timeout | undefined;
  const media = scenario.media === undefined ? null : new MediaShelf(join(runDir, 'media'), scenario.media, timeScale);
  try {
    if (media !== null) phase('making the test media with ffmpeg');
    await media?.start();
    phase('building node bundles');
    const bundles = await buildBundles(join(runDir, 'bundles'));
    const base = { prefix: 'peer-sync/' };
    const recorder = new Recorder(base.prefix, timeScale, stallSamples, (sampleIntervalSeconds * 1000) / timeScale);
    if (options.onEntry !== undefined) recorder.onEntry = options.onEntry;
    phase('starting the local cloud');
    cloud = await startLocalCloud({ observer: recorder.observer, behaviour, timeScale, seed });
    const config = scaleConfig(drillConfig(scenario, cloud), timeScale);
    const configFile = join(runDir, 'config.json');
    await writeFile(configFile, JSON.stringify(config, null, 2));
    if (options.announce !== false)
      announceLocal({
        pid: process.pid,
        endpoint: cloud.endpoint,
        region: cloud.region,
        configFile,
        scenario: scenario.name,
        startedAt: Date.now(),
      });

    // The drill's own calls (bootstrap, enqueue) carry their own key, apart from the watchdog's.
    clients = localClients(cloud, HARNESS_PRINCIPAL);
    const harnessS3 = clients.s3();
    const store = stateStoreFor(config, clients);
    // Producers send to the intake queue; the watchdog admits from it (backpressure).
    const queue = new TaskQueue(clients.sqs(), cloud.intakeUrl);
    const leader: Leader = nextEpoch(null, 'node-1', 'drill bootstrap', 'drill', 'immediate');
    await store.create(KEYS.leader, leader);
    // A deployed fleet has its origin record before anything fails; so does the drill's.
    const primaryAddress = config.nodes[0]?.address;
    const origin = originRecordFor(config, clients.route53());
    if (origin !== null && primaryAddress !== undefined) await origin.upsert(primaryAddress);

    const nodeOf = new Map(config.nodes.map((n, i) => [localInstanceId(i + 1), n.name]));
    cloud.fakes.ssm.onDone = (c): void => {
      if (c.principal === 'watchdog')
        recorder.note(
          nodeOf.get(c.instanceId) ?? c.instanceId,
          'ssm',
          `${c.status}${c.details === c.status ? '' : ` (${c.details})`}: ${c.command}`,
        );
    };
    phase(`starting ${scenario.nodes} nodes`);
    fleet = new LocalFleet(cloud, config, bundles, runDir, configFile, options.nodeArgs);
    const insyncMs = cloud.behaviour.route53Propagation.on ? cloud.behaviour.route53Propagation.insyncAfterMs : 0;
    cloud.route53.onChange = (change, at): void => recorder.dnsChange(change.values, at, insyncMs);
    fleet.on('event', (e: MachineEvent) => recorder.machineEvent(e));
    config.nodes.forEach((n, i) => fleet?.startNode(n.name, i + 1));
    cloud.fakes.attach(fleet);

    // The watchdog runs in this process as in Lambda, from its own dependencies on the local
    // cloud; its info lines would interleave with the live timeline.
    watchdogClients = localClients(cloud, 'watchdog');
    const watchdogDeps = buildWatchdogDeps(
      config,
      watchdogClients,
      createLogger('watchdog', {}, process.env.LOG_LEVEL ?? 'warn'),
      (line) => recorder.metric(line),
    );
    let sleptMs = 0;
    // A run struck by watchdog-crash dies in the scheduler's hands, which ends it at its timeout.
    const crash = new WatchdogCrash(
      () => sched.hang(),
      (id, command, comment) => {
        const what = `${command} of ${nodeOf.get(id) ?? id} (${comment})`;
        recorder.note('watchdog', 'fault-struck', `watchdog-crash: a run died after claiming ${what}, before its send`);
      },
    );
    const watchdog = createWatchdogHandler({
      ...watchdogDeps,
      commands: crash.wrap(watchdogDeps.commands),
      sleep: (ms) => {
        sleptMs += ms;
        return watchdogDeps.sleep(ms);
      },
    });
    const invocationMs: number[] = [];
    const timedHandler = async (event: unknown): Promise<unknown> => {
      const started = performance.now();
      try {
        return await watchdog(event);
      } finally {
        invocationMs.push(performance.now() - started);
      }
    };
    const sched = new LocalScheduler(
      timedHandler,
      config.watchdogScheduleSeconds * 1000,
      (error) => recorder.note('watchdog', 'error', describeError(error)),
      cloud.behaviour,
      cloud.chance,
      4,
      (WATCHDOG_TIMEOUT_SECONDS * 1000) / timeScale,
    );
    scheduler = sched;
    // The deployed triggers: the bucket's notification of heartbeat writes, and the agents' direct invokes.
    cloud.notifications.subscribe(
      (key) => nodeOfHeartbeatKey(underPrefix(config.prefix, key) ?? '') !== null,
      (bucket, key) => sched.notification(bucket, key),
    );
    cloud.lambda.onInvoke = (name, payload): void => {
      if (name === LOCAL.watchdogFunction) sched.enqueue(payload, 'direct');
    };
    const ready = await waitFor(() => recorder.heartbeatsSeen.size >= scenario.nodes, 30_000, signal);
    if (!ready)
      throw new Error(
        `the local fleet did not report in: ${recorder.heartbeatsSeen.size} of ${scenario.nodes} heartbeats ` +
          `(logs in ${runDir})`,
      );

    recorder.begin();
    sched.start();
    phase('running');
    const wall = (scenarioSeconds: number): number => (scenarioSeconds * 1000) / timeScale;
    const plan = planWorkload(scenario, seed, timeScale);
    let workFactor = 1;
    for (const [i, task] of plan.entries()) {
      const own = task.message.payload;
      const payload = media === null || own === undefined ? {} : { payload: media.payloadFor(own, i) };
      timers.push(
        setTimeout(() => {
          const message = { ...task.message, ...payload, workSeconds: task.message.workSeconds * workFactor };
          queue
            .send(JSON.stringify(message))
            .catch((error: unknown) =>
              recorder.note('drill', 'error', `enqueue ${task.message.taskId}: ${describeError(error)}`),
            );
        }, wall(task.at)),
      );
    }
    let poisons = 0;
    // An operator's commands (fleet switchover) go through the CLI's own code, with the drill's key.
    const operatorLog = createLogger('operator', {}, process.env.LOG_LEVEL ?? 'warn');
    const operator = opsDeps({ config, clients, where: 'drill' }, operatorLog);
    const injector = new FaultInjector({
      cloud,
      fleet,
      scheduler: sched,
      recorder,
      config,
      timeScale,
      setWorkFactor: (f) => {
        workFactor = f;
      },
      writeRaw: async (key, text) => {
        if (inTable(key)) return cloud?.dynamo.damage(config.table, key, text);
        await harnessS3.send(
          new PutObjectCommand({
            Bucket: config.bucket,
            Key: `${config.prefix}${key}`,
            Body: text,
            ContentType: 'application/json',
          }),
        );
      },
      watchdogCrash: crash,
      switchover: async (to) => {
        const r = await requestSwitchover(operator, { to, reason: 'drill', by: 'drill', force: false, waitMs: 0 });
        return r.refused ?? `switchover ${r.id ?? '?'} recorded for epoch ${r.fromEpoch ?? '?'}`;
      },
      enqueuePoison: () => {
        // Valid JSON, invalid task: every receive fails its schema until SQS dead-letters it.
        void queue.send(JSON.stringify({ taskId: `poison-${++poisons}`, workSeconds: -1 })).catch(() => undefined);
      },
    });
    const later = (afterScenarioSeconds: number, fn: () => void): void => {
      timers.push(setTimeout(fn, wall(afterScenarioSeconds)));
    };
    const triggers = new EventTriggers((i, error) => {
      recorder.note('drill', 'error', `faults.${i}: not injected: ${describeError(error)}`);
    });
    recorder.onEvent = (event) => triggers.saw(event);
    if (media !== null) {
      media.onHalf = (episode, stalled): void => {
        const what = `ep-${episode} read past its middle: sending stopped, connection open`;
        if (stalled) recorder.note('media', 'source-stalled', what);
        triggers.saw({ kind: 'source', node: recorder.leaders.at(-1)?.primary ?? 'node-1', stages: 0, episode });
      };
    }
    // A media drill notes which sources were being read as a fault struck: the transcodes it cut.
    const strike = (inject: () => void) => (): void => {
      inject();
      if (media !== null) recorder.note('media', 'at-fault', media.readingNow());
    };
    scenario.faults.forEach((fault, i) => {
      const at = fault.at;
      if (typeof at === 'number')
        return later(
          at,
          strike(() => injector.inject(fault, later)),
        );
      // Resolved now: `primary` is the bootstrap's node-1.
      const node = injector.resolve(at.node);
      triggers.add(
        i,
        fault.kind,
        at,
        node,
        strike(() => injector.inject(fault, later, describeEvent(at, node))),
      );
    });
    const maintainer = { config, store, recorder, timeScale, resolve: (n: string) => injector.resolve(n) };
    for (const action of scenario.operator) later(action.at, () => void runOperatorAction(action, maintainer));
    const snapshot = options.snapshot;
    const counted = cloud;
    if (snapshot !== undefined) {
      later(snapshot.at, () =>
        snapshot.take(counted, {
          invocations: sched.invocations,
          byTrigger: { ...sched.byTrigger },
          invocationMs: [...invocationMs],
          sleptMs,
          wallSeconds: recorder.t() / timeScale,
        }),
      );
    }
    depthEvery = setInterval(
      () => recorder.depth(counted.depth('tasks'), counted.depth('intake')),
      wall(sampleIntervalSeconds),
    );
    await sleep(wall(scenario.seconds), signal);
    const unfired = triggers.close(scenario.seconds);
    for (const u of unfired) recorder.note('drill', 'error', u.reason);
    phase('draining');
    recorder.note('drill', 'drain', 'faults cleared; waiting for every task to complete');
    for (const t of timers.splice(0)) clearTimeout(t);
    injector.clearAll();
    const ids = plan.map((p) => p.message.taskId);
    await waitFor(() => ids.every((id) => recorder.completions.has(id)), wall(scenario.seconds), signal);
    const wallSeconds = recorder.t() / timeScale;
    const dead = await deadLetters(new TaskQueue(clients.sqs(), cloud.dlqUrl)).catch(() => ({ tasks: 0, messages: 0 }));
    const deadLettered = dead.tasks;
    if (dead.messages > 0)
      recorder.note(
        'queue',
        'dead-letter',
        `${dead.messages} message(s) of ${dead.tasks} task(s) in the dead-letter queue`,
      );
    // The hang rule's own clock, from the workers' logs: when each hung stage was stopped, and after how long.
    for (const n of config.nodes)
      for (const s of await hungStops(fleet.dataDir(n.name))) {
        const idle = ((s.idleMs / 1000) * timeScale).toFixed(1);
        recorder.note(
          n.name,
          'stage-hung',
          `${s.taskId} stage ${s.stage}: no work for ${idle} s, stopped`,
          recorder.t(s.atMs),
        );
      }
    recorder.note('drill', 'end', `${[...recorder.completions.keys()].length} of ${ids.length} tasks completed`);
    if (media !== null) phase('checking every delivered rendition with ffprobe');
    const deliveries = await media?.verify(ids);
    recorder.finish();
    clearInterval(depthEvery);

    const report = buildReport(
      scenario,
      {
        faults: recorder.faults,
        unfired,
        events: recorder.events,
        restarts: recorder.restarts(cloud, (id) => nodeOf.get(id) ?? id),
        supervisorRestarts: recorder.supervisorRestarts,
        workerStarts: recorder.workerStarts,
        leaders: recorder.leaders,
        receives: recorder.receives,
        writes: recorder.writes,
        extensions: recorder.extensions,
        windows: recorder.windows,
        readiness: recorder.readiness,
        dnsChanges: recorder.dnsChanges,
        addresses: Object.fromEntries(config.nodes.map((n) => [n.name, n.address ?? ''])),
        completions: recorder.completions,
        enqueued: ids,
        deadLettered,
        givenBack: recorder.givenBack,
        timeline: recorder.timeline,
        aws: {
          s3: { ...cloud.counts.s3 },
          sqs: cloud.counts.sqs,
          dynamodb: cloud.counts.dynamodb,
          sns: cloud.counts.sns,
          ssm: cloud.counts.ssm,
          lambdaInvocations: sched.invocations,
        },
        requests: requestFigures(cloud.purposes, recorder.t(), recorder.completions.size, sched.invocations),
        lambdaInvocations: sched.invocations,
        heartbeatGaps: recorder.heartbeatGaps,
        artifacts: recorder.artifacts,
        stageStarts: await stageStartsOf(config.nodes.map((n) => fleet?.dataDir(n.name) ?? '')),
        ...(deliveries === undefined ? {} : { deliveries }),
        metrics: recorder.metrics,
        depths: recorder.depths,
        cloud: {
          ...cloud.struck,
          notificationsDelivered: cloud.notifications.delivered,
          directInvokes: sched.byTrigger.direct,
          lambdaRetries: sched.byTrigger.retry,
        },
      },
      { seed, timeScale, wallSeconds },
    );
    // The watchdog keeps judging while a held fleet is looked at.
    await options.hold?.(report);
    await sched.stop();
    options.inspect?.(cloud, {
      invocations: sched.invocations,
      byTrigger: sched.byTrigger,
      invocationMs,
      sleptMs,
      wallSeconds,
    });
    return report;
  } finally {
    clearInterval(depthEvery);
    if (options.announce !== false) withdrawLocal();
    for (const t of timers) clearTimeout(t);
    await scheduler?.stop();
    await fleet?.stop();
    clients?.destroy();
    watchdogClients?.destroy();
    await cloud?.stop();
    await media?.stop();
    if (options.keep === true) {
      const deliveries = media === null ? '' : `; deliveries in ${media.deliveryDir}`;
      phase(`kept the run's folder: ${runDir} (node logs${deliveries})`);
    } else await rm(runDir, { recursive: true, force: true });
  }
};

/**
 * The tasks in the dead-letter queue, and its messages: a task moved there twice (the delete of
 * its last receive came late, and the copy failed again) is one task dead-lettered.
 */
const deadLetters = async (queue: TaskQueue): Promise<{ tasks: number; messages: number }> => {
  const tasks = new Set<string>();
  let messages = 0;
  for (let round = 0; round < 100; round++) {
    const got = await queue.receive(10, 0, 300);
    if (got.length === 0) break;
    messages += got.length;
    for (const m of got) {
      let id: unknown;
      try {
        id = (JSON.parse(m.body) as { taskId?: unknown }).taskId;
      } catch {
        id = undefined;
      }
      tasks.add(typeof id === 'string' ? id : m.body);
    }
  }
  return { tasks: tasks.size, messages };
};
