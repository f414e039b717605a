import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildConfig } from '../../../lib/core/config';
import { ValidationError } from '../../../lib/core/errors';
import { EVENT_KINDS } from '../../../lib/core/events';
import {
  ALARM_ANCHORS,
  alarmAnchorIn,
  alertRunbookLink,
  RUNBOOK_URL_PLACEHOLDER,
  runbookUrlSchema,
} from '../../../lib/core/runbook';

const BASE = 'https://github.com/acme/queens-fleet/blob/main/docs/runbook.md';

describe('runbook links', () => {
  it("links each alert kind to its own row, by the kind's name", () => {
    const links = EVENT_KINDS.map((kind) => alertRunbookLink(BASE, kind));
    expect(new Set(links).size).toBe(EVENT_KINDS.length);
    expect(alertRunbookLink(BASE, 'REDUNDANCY_LOST')).toBe(`${BASE}#redundancy_lost`);
  });

  it.each(ALARM_ANCHORS)("reads the alarm row %s from a description's link", (anchor) => {
    expect(alarmAnchorIn(`Something lasted. Dashboard panel "X". Runbook: ${BASE}#${anchor}`)).toBe(anchor);
  });

  it.each([
    ['no link', 'The watchdog failed.'],
    ['an anchor the runbook has no alarm row for', `Runbook: ${BASE}#stalled`],
    ['a known name run on into another word', `Runbook: ${BASE}#StallOpenToo and #HeartbeatOld-x`],
  ])('reads no alarm row from a description with %s', (_case, description) => {
    expect(alarmAnchorIn(description)).toBeNull();
  });

  it.each([BASE, 'http://wiki.internal:8080/ops/runbook?space=ops&page=fleet'])('takes %s as runbookUrl', (url) => {
    expect(runbookUrlSchema.parse(url)).toBe(url);
  });

  it.each([
    ['a fragment', `${BASE}#top`],
    ["Slack's link separator", `${BASE}?a=|b`],
    ['an angle bracket', `${BASE}?a=<b>`],
    ['a space', 'https://example.com/run book.md'],
    ['another scheme', 'javascript://example.com/%0Aalert(1)'],
    ['a relative path', 'docs/runbook.md'],
  ])('refuses a runbookUrl with %s', (_case, url) => {
    expect(runbookUrlSchema.safeParse(url).success).toBe(false);
  });

  it('is a setting with the placeholder as default, in the configuration and the stack alike', () => {
    expect(buildConfig({}).runbookUrl).toBe(RUNBOOK_URL_PLACEHOLDER);
    expect(buildConfig({ FLEET_RUNBOOK_URL: BASE }).runbookUrl).toBe(BASE);
    expect(() => buildConfig({ FLEET_RUNBOOK_URL: `${BASE}#x` })).toThrow(ValidationError);
    const stack = readFileSync(join(__dirname, '../../../serverless.yml'), 'utf8');
    expect(stack).toContain(`\n    runbookUrl: ${RUNBOOK_URL_PLACEHOLDER}\n`);
  });
});
