import pc from 'picocolors';
import type { RequestUnits } from '../../core/drill/requests';
import type { Report, TimelineEntry } from '../../core/drill/report';

const COLOURS: Record<string, (s: string) => string> = {
  fault: pc.red,
  stalled: pc.yellow,
  ssm: pc.cyan,
  node_dead: pc.red,
  agent_dead: pc.yellow,
  redundancy_lost: pc.yellow,
  no_standby: pc.red,
  promoted: pc.magenta,
  record: pc.magenta,
  restart_sent: pc.cyan,
  restart_result: pc.cyan,
  recovered: pc.green,
  role: pc.magenta,
  error: pc.red,
};

/** One timeline line: `  t= 142.3s  node-1    stalled         node-1 stalled: …` */
export const formatEntry = (e: TimelineEntry): string => {
  const colour = COLOURS[e.event] ?? ((s: string): string => s);
  return `  t=${e.t.toFixed(1).padStart(6)}s  ${e.node.padEnd(9)} ${colour(e.event.padEnd(15))} ${e.detail}`;
};

const mark = (ok: boolean): string => (ok ? pc.green('✔') : pc.red('✘'));

/** The end-of-run summary: incidents, tasks, invariants, expectations, verdict. */
export const formatSummary = (r: Report): string => {
  const lines: string[] = [
    '',
    pc.bold(
      `Scenario "${r.scenario}": ${r.ok ? pc.green('PASSED') : pc.red('FAILED')}  ` +
        `(seed ${r.seed}, ×${r.timeScale}, ${r.wallSeconds}s wall)`,
    ),
  ];
  for (const i of r.incidents) {
    const takenUp = (label: string, t: number | null): string =>
      t === null ? 'never taken up again' : `${label} +${(t - i.faultAt).toFixed(1)}s`;
    const resumed = i.inFlight === 0 ? [] : [`${i.inFlight} task(s) in flight ${takenUp('resumed', i.resumedAt)}`];
    if (i.unrecorded > 0)
      resumed.push(
        `${i.unrecorded} received as it struck (receipt not yet on disk) ${takenUp('taken up', i.unrecordedResumedAt)}`,
      );
    // Only worth a word when redundancy was lost: a failover, or a later return.
    if (i.redundantAt === null) resumed.push('no ready standby again');
    else if (i.redundantAt > (i.failoverAt ?? i.faultAt))
      resumed.push(`redundant again +${(i.redundantAt - i.faultAt).toFixed(1)}s`);
    if (i.consumeGapSeconds !== null) resumed.push(`consumption stopped at most ${i.consumeGapSeconds}s`);
    if (!i.watched && i.newPrimary === null) {
      lines.push(
        `  fault     ${i.fault} on ${i.node} at t=${i.faultAt}s: ${['no incident to detect', ...resumed].join(', ')}`,
      );
      continue;
    }
    const detect = i.detectedAt === null ? 'not detected' : `detected +${(i.detectedAt - i.faultAt).toFixed(1)}s`;
    const restart = i.restartedAt === null ? 'no restart' : `restarted +${(i.restartedAt - i.faultAt).toFixed(1)}s`;
    const recover = i.recoveredAt === null ? 'not recovered' : `recovered +${(i.recoveredAt - i.faultAt).toFixed(1)}s`;
    const after = (label: string, t: number | null): string[] =>
      t === null ? [] : [`${label} +${(t - i.faultAt).toFixed(1)}s`];
    const verdict =
      i.windowAt === null || i.detectedAt === null
        ? []
        : [`verdict ${(i.detectedAt - i.windowAt).toFixed(1)}s after the window closed`];
    const failover =
      i.newPrimary === null
        ? []
        : [
            ...after(`failover to ${i.newPrimary}`, i.failoverAt),
            ...after('serving', i.servingAt),
            ...after('traffic', i.trafficAt),
            ...after('in sync', i.trafficInsyncAt),
          ];
    const steps = [detect, ...verdict, restart, recover, ...failover, ...resumed];
    lines.push(`  incident  ${i.fault} on ${i.node} at t=${i.faultAt}s: ${steps.join(', ')}`);
  }
  const t = r.tasks;
  lines.push(
    `  tasks     ${t.completed}/${t.enqueued} completed, ${t.lost} lost, ` +
      `${t.duplicateCompletions} duplicate completions, ${t.deadLettered} dead-lettered`,
  );
  const input = r.input;
  lines.push(
    `  input     held ${input.holds}×, resumed ${input.resumes}×; ` +
      `task queue at most ${input.maxBacklog}, intake at most ${input.maxIntake}`,
  );
  lines.push(
    `  aws       S3 ${r.aws.s3.GET} GET / ${r.aws.s3.PUT} PUT / ${r.aws.s3.LIST} LIST, SQS ${r.aws.sqs}, ` +
      `DynamoDB ${r.aws.dynamodb}, SNS ${r.aws.sns}, SSM ${r.aws.ssm}, watchdog runs ${r.aws.lambdaInvocations}`,
  );
  const q = r.requests;
  const fmt = (u: RequestUnits): string =>
    `S3 ${u.s3Get} GET / ${u.s3Put} PUT, SQS ${u.sqs}, DynamoDB ${u.ddbRead} RRU / ${u.ddbWrite} WRU`;
  lines.push(`  requests  per hour ${fmt(q.perHour)}, watchdog runs ${q.perHour.lambda}; per task ${fmt(q.perTask)}`);
  const struck = Object.entries(r.cloud)
    .filter(([, n]) => n > 0)
    .map(([what, n]) => `${what} ${n}`);
  if (struck.length > 0) lines.push(`  cloud     ${struck.join(', ')}`);
  const gaps = Object.entries(r.heartbeatGaps).map(([node, s]) => `${node} ${s}s`);
  if (gaps.length > 0) lines.push(`  gaps      longest time between heartbeats: ${gaps.join(', ')}`);
  for (const d of r.deliveries) lines.push(`  ${mark(d.ok)} delivered ${d.taskId}: ${d.detail}`);
  for (const [name, ok] of Object.entries(r.invariants)) lines.push(`  ${mark(ok)} invariant ${name}`);
  for (const e of r.expectations)
    lines.push(
      `  ${mark(e.ok)} expect ${e.name}: expected ${JSON.stringify(e.expected)}, ` +
        `actual ${e.actual === null ? 'none' : e.actual}`,
    );
  for (const u of r.unfiredFaults) lines.push(`  ${mark(false)} ${u.reason}`);
  return lines.join('\n');
};
