import { z } from 'zod';
import { EVENT_KINDS, type EventKind } from './events';

/**
 * Links into docs/runbook.md from every alert and alarm, so whoever meets one is a click away
 * from what to do. The anchors come from this file only; tests/docs/runbook.test.ts checks each
 * against the page. Pure.
 */

/**
 * The default `runbookUrl`: a host that never resolves (`.invalid`, RFC 2606), so a link nobody
 * set says so. Operators set it to where they read docs/runbook.md (docs/deploy.md).
 */
export const RUNBOOK_URL_PLACEHOLDER = 'https://runbook-url-not-set.invalid/docs/runbook.md';

/** A base URL the anchors are appended to: http(s), no fragment, nothing Slack's `<url|label>` syntax reads. */
export const runbookUrlSchema = z
  .url({ protocol: /^https?$/ })
  .max(500)
  .refine((url) => !/[#|<>"\s]/.test(url), 'must have no #, |, <, >, quotes or spaces: anchors are added to it');

/** Each alert's row in the runbook's table: the kind in lower case, as GitHub slugs a heading of that name. */
export const ALERT_ANCHORS = Object.fromEntries(EVENT_KINDS.map((kind) => [kind, kind.toLowerCase()])) as Readonly<
  Record<EventKind, string>
>;

/** The alarms' rows: the control plane's (resources/alarms.yml) and the metrics' (lib/core/metrics/alarms.ts). */
export const ALARM_ANCHORS = [
  'WatchdogErrors',
  'WatchdogNotRunning',
  'NoReadyStandby',
  'StallOpen',
  'HeartbeatOld',
] as const;
export type AlarmAnchor = (typeof ALARM_ANCHORS)[number];

const isAlarmAnchor = (name: string): name is AlarmAnchor => (ALARM_ANCHORS as readonly string[]).includes(name);

/** The runbook's address, at one anchor. */
export const runbookLink = (base: string, anchor: string): string => `${base}#${anchor}`;

/** Where an alert of this kind is explained. */
export const alertRunbookLink = (base: string, kind: EventKind): string => runbookLink(base, ALERT_ANCHORS[kind]);

/**
 * The alarm row an alarm's description links (`…/runbook.md#StallOpen`), or null (an alarm of
 * another stack): only a known anchor is taken, so a description never chooses the link.
 */
export const alarmAnchorIn = (description: string): AlarmAnchor | null => {
  for (const [, name = ''] of description.matchAll(/#([A-Za-z]+)(?![\w-])/g)) if (isAlarmAnchor(name)) return name;
  return null;
};
