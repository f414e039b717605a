import type { Check } from '../../lib/core/views/doctor-checks';
import type { Maintenance } from '../../lib/core/fleet/maintenance';
import type { FleetEvent } from '../../lib/core/events';
import { CATALOGUE } from '../../lib/core/metrics/catalogue';
import type { NodeStatus, StatusView } from '../../lib/core/views/status';
import type { FailoverResult, FailoverStepOutcome } from '../../lib/ops/manual-failover';
import type { RejoinLogEntry } from '../../lib/ops/rejoin';
import { table, when, type Paint } from './common';

const dash = '–';

const roleCell = (n: NodeStatus, c: Paint): string => {
  const role = n.role ?? (n.designated === null ? 'unknown' : `${n.designated}?`);
  const colour =
    role === 'primary' ? c.green : role === 'fenced' ? c.red : role === 'pending' ? c.yellow : (s: string) => s;
  return colour(role) + (n.roleNote === null ? '' : c.yellow(' *'));
};

const heartbeatCell = (n: NodeStatus, c: Paint): string => {
  const hb = n.heartbeat;
  if (hb.state === 'missing') return c.red('none');
  if (hb.state === 'corrupt') return c.red('corrupt');
  const age = hb.ageSeconds === null ? '?' : `${hb.ageSeconds} s`;
  return hb.fresh ? age : c.yellow(`${age} (stale)`);
};

const incidentCell = (n: NodeStatus, c: Paint): string => {
  const i = n.incident;
  if (i === null) return dash;
  const stage = `${i.stage}${i.why === null ? '' : ` (${i.why})`}${i.failoverTo === null ? '' : ` → ${i.failoverTo}`}`;
  return c.red(`${i.id} (${i.kind})`) + `\n${stage}`;
};

const num = (v: number | null, unit = ''): string => (v === null ? dash : `${v}${unit}`);

/** One metric's value as a dashboard shows it, by its unit in the catalogue. */
const metricText = (name: string, value: number): string => {
  const unit = CATALOGUE.find((m) => m.name === name)?.unit;
  const shown =
    unit === 'Bytes'
      ? `${Math.round(value / 1024 / 1024)} MiB`
      : unit === 'Seconds'
        ? `${Math.round(value * 10) / 10} s`
        : unit === 'Percent'
          ? `${Math.round(value * 10) / 10}%`
          : String(Math.round(value * 100) / 100);
  return `${name} ${shown}`;
};

const metricLine = (values: Readonly<Record<string, number>>): string =>
  Object.entries(values)
    .sort(([a], [b]) => CATALOGUE.findIndex((m) => m.name === a) - CATALOGUE.findIndex((m) => m.name === b))
    .map(([name, v]) => metricText(name, v))
    .join(' · ') || dash;

/** The pause and the cordons as stored, for a person. */
export const renderMaintenance = (m: Maintenance, now: number, c: Paint): string[] => {
  const p = m.paused;
  // Its end is the watchdog's clock: stamped by its first run after the pause, which also ends it.
  const end =
    p?.until != null
      ? `, until ${new Date(p.until).toISOString()} by the watchdog's clock`
      : p?.forMs != null
        ? `, for ${Math.round(p.forMs / 60_000)} min from the watchdog's next run`
        : ', until fleet resume';
  const pause =
    p === null
      ? c.green('automation on')
      : c.yellow(`PAUSED by ${p.by} ${when(p.at, now)}${end}${p.reason === null ? '' : `: ${p.reason}`}`);
  const cordons = Object.entries(m.cordoned).map(
    ([node, n]) =>
      `  ${c.yellow(`${node} CORDONED`)} by ${n.by} ${when(n.at, now)}${n.reason === null ? '' : `: ${n.reason}`}`,
  );
  return [`  ${pause}`, ...(cordons.length === 0 ? ['  no node cordoned'] : cordons)];
};

/** `fleet status` for people: the fleet-wide lines, one row per node, then notes. */
export const renderStatus = (v: StatusView, where: string, c: Paint): string => {
  const lines: string[] = [c.bold(`Queen's Fleet: ${where}, ${new Date(v.at).toISOString()}`)];
  const l = v.leader;
  if (l.state === 'ok')
    lines.push(
      `primary   ${c.green(l.primary)}, epoch ${l.epoch}, handover ${l.handover} (by ${l.changedBy}: ${l.reason})`,
    );
  else
    lines.push(`primary   ${c.red(l.state === 'missing' ? 'leader.json missing' : `leader.json corrupt: ${l.error}`)}`);
  const f = v.lastFailover;
  const failover =
    f.state === 'none'
      ? 'none so far'
      : f.state === 'corrupt'
        ? c.red(`newest PROMOTED event ${f.key} is corrupt: ${f.error}`)
        : `${when(f.at, v.at)}: ${f.from} → ${f.newPrimary ?? '?'}, epoch ${f.newEpoch ?? '?'} ` +
          `(${f.manual ? 'manual, ' : ''}${f.incidentId})`;
  lines.push(`failover  ${failover}`);
  const m = v.watchdog.maintenance;
  if (m.paused !== null || Object.keys(m.cordoned).length > 0)
    lines.push(`maintenance\n${renderMaintenance(m, v.at, c).join('\n')}`);
  if (v.watchdog.state !== 'ok') {
    const why = v.watchdog.error === null ? ' (the watchdog has not run yet)' : `: ${v.watchdog.error}`;
    lines.push(`watchdog  ${c.yellow(`watchdog/state.json ${v.watchdog.state}${why}`)}`);
  }
  const q = v.queue;
  const queue =
    q.state === 'ok'
      ? `${q.visible + q.inFlight} (${q.visible} visible, ${q.inFlight} in flight)`
      : q.state === 'not-configured'
        ? 'not configured (queueUrl)'
        : c.red(`unreadable: ${q.error}`);
  lines.push(`queue     ${queue}`);
  const i = v.lastIncident;
  if (i.state === 'none') lines.push('incident  none so far (no events)');
  else if (i.state === 'corrupt') lines.push(`incident  ${c.red(`newest event ${i.key} is corrupt: ${i.error}`)}`);
  else lines.push(`incident  ${i.incidentId} ${i.kind} on ${i.node}, ${when(i.at, v.at)}: ${i.summary}`);
  const rows = v.nodes.map((n) => [
    n.zone === null ? n.name : `${n.name}\n${c.dim(n.zone)}`,
    roleCell(n, c),
    num(n.epochSeen),
    heartbeatCell(n, c),
    num(n.workerProcesses),
    num(n.cpuPercent, '%'),
    num(n.backlog),
    n.stall === null
      ? dash
      : `${n.stall.failing}/${n.stall.healthy}${n.stall.fault === null ? '' : ` ${n.stall.fault}`}`,
    incidentCell(n, c),
  ]);
  lines.push(
    table(
      ['node', 'role', 'epoch', 'heartbeat age', 'workers', 'cpu', 'backlog', 'failing/healthy', 'open incident'],
      rows,
    ),
  );
  for (const n of v.nodes) {
    if (n.roleNote !== null) lines.push(`${c.yellow('*')} ${n.name}: ${n.roleNote}`);
    if (n.heartbeat.state === 'corrupt') lines.push(`${c.red('!')} ${n.name}: heartbeat corrupt: ${n.heartbeat.error}`);
    if (n.heartbeat.state === 'ok' && !n.heartbeat.fresh)
      lines.push(`${c.yellow('!')} ${n.name}: heartbeat written ${n.heartbeat.writtenSecondsAgo ?? '?'} s ago: silent`);
  }
  if (v.strays.length > 0)
    lines.push(`${c.yellow('!')} heartbeats from nodes not in the configuration: ${v.strays.join(', ')}`);
  const source = c.dim('(as the watchdog publishes them: docs/operations.md "Metrics")');
  lines.push(`metrics   ${metricLine(v.metrics.fleet)} ${source}`);
  for (const [node, values] of Object.entries(v.metrics.nodes)) lines.push(`  ${node}  ${metricLine(values)}`);
  return lines.join('\n');
};

/** `fleet events` for people: newest first. */
export const renderEvents = (
  events: readonly FleetEvent[],
  corrupt: readonly { key: string; error: string }[],
  now: number,
  c: Paint,
): string => {
  const lines: string[] = [];
  if (events.length === 0) lines.push('No events match.');
  else {
    const rows = events.map((e) => [when(e.at, now), c.bold(e.kind), e.node, String(e.epoch), e.incidentId, e.summary]);
    lines.push(table(['at', 'kind', 'node', 'epoch', 'incident', 'summary'], rows, [null, null, null, null, null, 60]));
  }
  for (const k of corrupt) lines.push(c.red(`corrupt: ${k.key}: ${k.error}`));
  return lines.join('\n');
};

const MARK: Record<FailoverStepOutcome | Check['status'], (c: Paint) => string> = {
  ok: (c) => c.green('ok  '),
  warn: (c) => c.yellow('warn'),
  fail: (c) => c.red('FAIL'),
  skipped: (c) => c.dim('skip'),
};

/** `fleet failover` for people: each step, then the outcome. */
export const renderFailover = (r: FailoverResult, where: string, c: Paint): string => {
  const how = `${r.forced ? ', readiness ignored' : ''}${r.dryRun ? ', dry run' : ''}`;
  const lines = [c.bold(`Manual failover to ${r.to} (${where})${how}`)];
  for (const s of r.steps) lines.push(`${MARK[s.status](c)}  ${s.step.padEnd(18)} ${s.detail}`);
  // A refusal is said once, on stderr, by the command.
  if (r.ok) lines.push(c.green(`${r.to} is primary of epoch ${r.newEpoch ?? '?'} (incident ${r.incidentId ?? '?'}).`));
  else if (r.dryRun && r.refused === null) lines.push('Dry run: nothing was changed.');
  return lines.join('\n');
};

/** One step of `fleet rejoin`, printed as it ends. */
export const renderRejoinStep = (s: RejoinLogEntry, c: Paint): string =>
  `${MARK[s.status](c)}  ${s.step.padEnd(15)} ${s.detail}`;

/** `fleet doctor` for people: one line per check, its hint below, then a count. */
export const renderDoctor = (checks: readonly Check[], where: string, c: Paint): string => {
  const lines = [c.bold(`fleet doctor (${where})`)];
  for (const k of checks) {
    lines.push(`${MARK[k.status](c)}  ${k.name.padEnd(20)} ${k.detail}`);
    if (k.hint !== null) lines.push(`      ${' '.repeat(20)} ${c.dim('fix:')} ${k.hint}`);
  }
  const failed = checks.filter((k) => k.status === 'fail').length;
  const warned = checks.filter((k) => k.status === 'warn').length;
  lines.push(
    failed === 0
      ? c.green(`No check failed${warned > 0 ? ` (${warned} warning${warned === 1 ? '' : 's'})` : ''}.`)
      : c.red(`${failed} check${failed === 1 ? '' : 's'} failed, ${warned} warning${warned === 1 ? '' : 's'}.`),
  );
  return lines.join('\n');
};
