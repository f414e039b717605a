import { z } from 'zod';
import { ValidationError } from '../errors';
import { fleetEventSchema, type EventKind, type EventMetrics, type FleetEvent } from '../events';
import { alarmAnchorIn, alertRunbookLink, runbookLink } from '../runbook';
import { parseWith } from '../validate';

/**
 * Slack messages for the alert topic: a FleetEvent or a CloudWatch alarm becomes an incoming
 * webhook payload. Pure: no clock, no I/O; the notifier Lambda carries the payload out.
 */

/** A Block Kit text object. */
export interface SlackText {
  type: 'mrkdwn' | 'plain_text';
  text: string;
  emoji?: boolean;
  /** mrkdwn only: true stops Slack from turning plain words into links and mentions. */
  verbatim?: boolean;
}

/** The Block Kit blocks these messages use. */
export type SlackBlock =
  | { type: 'header'; text: SlackText & { type: 'plain_text' } }
  | { type: 'section'; text?: SlackText; fields?: SlackText[] }
  | { type: 'context'; elements: SlackText[] };

/** An incoming-webhook body: `text` is the notification and screen-reader fallback of `blocks`. */
export interface SlackPayload {
  text: string;
  blocks: SlackBlock[];
}

/**
 * The part of CloudWatch's alarm notification the message shows. Not strict: CloudWatch sends
 * more keys (Trigger, AlarmArn, …) and adds new ones over time.
 */
export const cloudWatchAlarmSchema = z.object({
  AlarmName: z.string().min(1).max(255),
  AlarmDescription: z.string().nullish(),
  NewStateValue: z.enum(['ALARM', 'OK', 'INSUFFICIENT_DATA']),
  NewStateReason: z.string(),
  StateChangeTime: z.string().min(1),
  OldStateValue: z.string().optional(),
  Region: z.string().optional(),
});
export type CloudWatchAlarm = z.output<typeof cloudWatchAlarmSchema>;

/** What an SNS message on the alert topic turned out to be. */
export type AlertMessage = { type: 'event'; event: FleetEvent } | { type: 'alarm'; alarm: CloudWatchAlarm };

/**
 * Classifies the body of one SNS message: a CloudWatch alarm (it has `AlarmName`) or else a
 * FleetEvent. Throws ValidationError naming the offending field.
 */
export const parseAlertMessage = (message: string): AlertMessage => {
  let json: unknown;
  try {
    json = JSON.parse(message);
  } catch {
    // No cause and no parser message: V8 quotes the start of the input in it.
    throw new ValidationError('alert message: not valid JSON', '(root)');
  }
  if (typeof json !== 'object' || json === null || Array.isArray(json)) {
    throw new ValidationError('alert message: not a JSON object', '(root)');
  }
  if ('AlarmName' in json) return { type: 'alarm', alarm: parseWith(cloudWatchAlarmSchema, json, 'CloudWatch alarm') };
  return { type: 'event', event: parseWith(fleetEventSchema, json, 'fleet event') };
};

type Severity = 'critical' | 'warning' | 'info' | 'resolved';

/** Critical: a person has to act, or the fleet lost its safety net. */
const SEVERITY: Record<EventKind, Severity> = {
  STALLED: 'warning',
  RESTART_SENT: 'info',
  RESTART_RESULT: 'info',
  RESTART_FAILED: 'critical',
  RESTART_BUDGET_EXHAUSTED: 'critical',
  STILL_STALLED: 'critical',
  NODE_DEAD: 'critical',
  NODE_SILENT: 'critical',
  AGENT_DEAD: 'warning',
  REDUNDANCY_LOST: 'critical',
  STANDBY_UNREADY: 'warning',
  REJOIN_FAILED: 'critical',
  NO_STANDBY: 'critical',
  FAILOVER_STARTED: 'warning',
  OLD_PRIMARY_STOPPED: 'info',
  PROMOTED: 'info',
  RECORD_CHANGED: 'info',
  FAILOVER_FAILED: 'critical',
  POISON_TASK: 'warning',
  MANIFEST_DAMAGED: 'warning',
  LEADER_DAMAGED: 'critical',
  DEAD_LETTERED: 'warning',
  NOTIFIER_FAILED: 'warning',
  STATE_DAMAGED: 'warning',
  INPUT_HELD: 'warning',
  INPUT_RESUMED: 'resolved',
  INPUT_WAITING: 'warning',
  OUTAGE: 'warning',
  RECOVERED: 'resolved',
};

const EMOJI: Record<Severity, string> = {
  critical: ':rotating_light:',
  warning: ':warning:',
  info: ':information_source:',
  resolved: ':white_check_mark:',
};

const ALARM_EMOJI: Record<CloudWatchAlarm['NewStateValue'], string> = {
  ALARM: ':rotating_light:',
  OK: ':white_check_mark:',
  INSUFFICIENT_DATA: ':grey_question:',
};

/** Block Kit limits: header 150 characters, section text 3000, a field 2000. */
const LIMIT = { header: 150, section: 3000, field: 2000, fallback: 3000 } as const;

/** A lone UTF-16 surrogate: no UTF-8 encodes it, so Slack would refuse or garble the payload. */
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/** The text with every lone surrogate (from a body that was never UTF-8) shown as U+FFFD. */
const wellFormed = (text: string): string => text.replace(LONE_SURROGATE, '\ufffd');

/**
 * Slack reads `&`, `<` and `>` as markup (links, mentions): everything shown is escaped. A word
 * joiner after `@` keeps `@channel`, `@here` and `@everyone` from ever being read as a broadcast
 * (the fallback `text` has no `verbatim` to turn that off), and looks the same.
 */
const escape = (text: string): string =>
  wellFormed(text)
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/@(?=(channel|here|everyone)\b)/gi, '@\u2060');

/**
 * Cuts to `max` characters with an ellipsis, never in the middle of an escape entity or of a
 * character outside the BMP (half of a surrogate pair is not UTF-8).
 */
const clip = (text: string, max: number): string => {
  if (text.length <= max) return text;
  let cut = text.slice(0, max - 1);
  if (/[\ud800-\udbff]$/.test(cut)) cut = cut.slice(0, -1);
  return `${cut.replace(/&[a-z]*$/, '')}…`;
};

const mrkdwn = (text: string, max: number = LIMIT.section): SlackText => ({
  type: 'mrkdwn',
  text: clip(text, max),
  verbatim: true,
});
const header = (text: string): SlackBlock => ({
  type: 'header',
  text: { type: 'plain_text', text: clip(wellFormed(text), LIMIT.header), emoji: true },
});
const section = (title: string, body: string): SlackBlock => ({
  type: 'section',
  text: mrkdwn(`*${title}*\n${body === '' ? '_none_' : escape(body)}`),
});
const field = (title: string, value: string): SlackText => mrkdwn(`*${title}*\n${escape(value)}`, LIMIT.field);

/** ISO 8601 of a ms timestamp, or the raw number when it is outside the Date range. */
const isoOf = (ms: number): string => {
  const date = new Date(ms);
  return Number.isNaN(date.getTime()) ? String(ms) : date.toISOString();
};

const MIB = 1024 * 1024;

/** One line per metric the sample had; null means the agent could not read it. */
export const metricLines = (m: EventMetrics): string[] => {
  const lines: [string, string | null][] = [
    ['Failing samples', String(m.failingSamples)],
    ['Fault', m.fault],
    ['Worker processes', m.workerProcesses === null ? null : String(m.workerProcesses)],
    ['CPU', m.cpuPercent === null ? null : `${Number(m.cpuPercent.toFixed(1))}%`],
    ['Memory', m.memoryBytes === null ? null : `${(m.memoryBytes / MIB).toFixed(1)} MiB`],
    ['Backlog', m.backlog === null ? null : String(m.backlog)],
    ['Completions in window', m.completionsInWindow === null ? null : String(m.completionsInWindow)],
    ['In flight', m.inFlight === null ? null : String(m.inFlight)],
  ];
  return lines.filter((l): l is [string, string] => l[1] !== null).map(([name, value]) => `• ${name}: ${value}`);
};

/**
 * The runbook entry, as the one link a message holds: built from the `runbookUrl` setting (which
 * has no `<`, `>` or `|`) and a known anchor, never from the alert's own text.
 */
const runbookSection = (url: string, label: string): SlackBlock => ({
  type: 'section',
  text: mrkdwn(`*Runbook*\n<${url.replace(/&/g, '&amp;')}|${label}>`),
});

const PAUSED_NOTE =
  'The automation is paused (fleet pause): this step is alerted, not acted on. `fleet resume` ends the pause.';

/** The Slack message of one incident step; `runbookUrl` is where its entry is linked. */
export const formatEvent = (event: FleetEvent, runbookUrl: string): SlackPayload => {
  const emoji = EMOJI[SEVERITY[event.kind]];
  const paused = event.paused === true ? 'PAUSED ' : '';
  const fields = [
    field('Node', event.node),
    field('Incident', event.incidentId),
    field('Epoch', String(event.epoch)),
    field('Time', isoOf(event.at)),
  ];
  if (event.newPrimary !== undefined) fields.push(field('New primary', event.newPrimary));
  if (event.newEpoch !== undefined) fields.push(field('New epoch', String(event.newEpoch)));
  if (event.commandId !== undefined) fields.push(field('SSM command', event.commandId));
  const failover =
    event.newPrimary === undefined
      ? ''
      : ` New primary ${event.newPrimary}${event.newEpoch === undefined ? '' : ` (epoch ${event.newEpoch})`}.`;
  return {
    text: clip(
      `${emoji} [queen-fleet] ${paused}${event.kind} on ${event.node}: ${escape(event.summary)}${escape(failover)} ` +
        `Next: ${escape(event.next)}`,
      LIMIT.fallback,
    ),
    blocks: [
      header(`${emoji} ${paused}${event.kind} on ${event.node}`),
      { type: 'section', fields },
      section('What happened', event.summary),
      { type: 'section', text: mrkdwn(`*Key metrics*\n${metricLines(event.metrics).map(escape).join('\n')}`) },
      ...(paused === '' ? [] : [section('Paused', PAUSED_NOTE)]),
      section('Next step', event.next),
      runbookSection(alertRunbookLink(runbookUrl, event.kind), `What ${event.kind} means and what to do`),
      { type: 'context', elements: [mrkdwn(`event ${escape(event.id)}`)] },
    ],
  };
};

/** CloudWatch writes `2024-01-01T00:00:00.000+0000`; shown as ISO 8601 UTC when it parses. */
const alarmTime = (text: string): string => {
  const ms = Date.parse(text);
  return Number.isNaN(ms) ? text : new Date(ms).toISOString();
};

/** The Slack message of one CloudWatch alarm state change, linking the row its description names. */
export const formatAlarm = (alarm: CloudWatchAlarm, runbookUrl: string): SlackPayload => {
  const emoji = ALARM_EMOJI[alarm.NewStateValue];
  const state =
    alarm.OldStateValue === undefined ? alarm.NewStateValue : `${alarm.OldStateValue} → ${alarm.NewStateValue}`;
  const fields = [field('State', state), field('Time', alarmTime(alarm.StateChangeTime))];
  if (alarm.Region !== undefined) fields.push(field('Region', alarm.Region));
  const blocks: SlackBlock[] = [
    header(`${emoji} ${alarm.NewStateValue}: ${alarm.AlarmName}`),
    { type: 'section', fields },
    section('Reason', alarm.NewStateReason),
  ];
  const description = alarm.AlarmDescription ?? '';
  if (description !== '') blocks.push(section('Description', description));
  const anchor = alarmAnchorIn(description);
  blocks.push(
    anchor === null
      ? runbookSection(runbookUrl, 'Alerts and alarms, and what to do')
      : runbookSection(runbookLink(runbookUrl, anchor), `What ${anchor} means and what to do`),
  );
  return {
    text: clip(
      `${emoji} [queen-fleet] CloudWatch alarm ${escape(alarm.AlarmName)} ` +
        `is ${alarm.NewStateValue}: ${escape(alarm.NewStateReason)}`,
      LIMIT.fallback,
    ),
    blocks,
  };
};

/** The Slack message of any alert-topic message. */
export const formatAlert = (message: AlertMessage, runbookUrl: string): SlackPayload =>
  message.type === 'event' ? formatEvent(message.event, runbookUrl) : formatAlarm(message.alarm, runbookUrl);
