import { ValidationError } from '../../../../lib/core/errors';
import { EVENT_KINDS, type FleetEvent } from '../../../../lib/core/events';
import { ALARM_ANCHORS, ALERT_ANCHORS } from '../../../../lib/core/runbook';
import { slackProblems } from '../../../helpers/slack-limits';
import { stalledEvent } from '../../../helpers/fixtures';
import {
  formatAlarm,
  formatAlert,
  formatEvent,
  metricLines,
  parseAlertMessage,
  type CloudWatchAlarm,
  type SlackBlock,
  type SlackPayload,
} from '../../../../lib/core/views/slack-message';

const RUNBOOK = 'https://example.com/acme/queens-fleet/docs/runbook.md';

/** The shared STALLED event, with the full words of a real one. */
const stalled: FleetEvent = {
  ...stalledEvent,
  summary: 'node-1 stalled: 8 consecutive failing samples (the backlog is not shrinking and no task progressed).',
  next: 'The watchdog restarts the worker through SSM Run Command.',
};

const promoted: FleetEvent = {
  ...stalled,
  id: 'node-1-e3-i1.PROMOTED',
  kind: 'PROMOTED',
  summary: 'node-2 promoted.',
  next: 'The new primary takes over.',
  newPrimary: 'node-2',
  newEpoch: 4,
};

/** CloudWatch's alarm notification, as SNS delivers it (keys the formatter ignores included). */
const alarm = {
  AlarmName: 'queens-fleet-prod-watchdog-errors',
  AlarmDescription: 'The watchdog Lambda failed.',
  AWSAccountId: '123456789012',
  AlarmConfigurationUpdatedTimestamp: '2023-11-01T10:00:00.000+0000',
  NewStateValue: 'ALARM',
  NewStateReason:
    'Threshold Crossed: 1 datapoint [2.0 (14/11/23 22:14:00)] was greater than or equal to the threshold (1.0).',
  StateChangeTime: '2023-11-14T22:15:20.000+0000',
  Region: 'US West (Oregon)',
  AlarmArn: 'arn:aws:cloudwatch:us-west-2:123456789012:alarm:queens-fleet-prod-watchdog-errors',
  OldStateValue: 'OK',
  OKActions: [],
  AlarmActions: ['arn:aws:sns:us-west-2:123456789012:fleet-events-prod'],
  InsufficientDataActions: [],
  Trigger: {
    MetricName: 'Errors',
    Namespace: 'AWS/Lambda',
    StatisticType: 'Statistic',
    Statistic: 'SUM',
    Unit: null,
    Dimensions: [{ value: 'queens-fleet-prod-watchdog', name: 'FunctionName' }],
    Period: 60,
    EvaluationPeriods: 1,
    ComparisonOperator: 'GreaterThanOrEqualToThreshold',
    Threshold: 1.0,
    TreatMissingData: 'notBreaching',
  },
};

/** Every text a person can see in a payload, joined. */
const allText = (payload: SlackPayload): string =>
  [
    payload.text,
    ...payload.blocks.flatMap((b: SlackBlock) =>
      (b.type === 'context'
        ? b.elements
        : b.type === 'header'
          ? [b.text]
          : [...(b.text ? [b.text] : []), ...(b.fields ?? [])]
      ).map((t) => t.text),
    ),
  ].join('\n');

const sectionTexts = (payload: SlackPayload): string[] =>
  payload.blocks.flatMap((b) => (b.type === 'section' && b.text ? [b.text.text] : []));

describe('slack-message', () => {
  describe('formatEvent', () => {
    it('heads the message with the kind and the node', () => {
      const payload = formatEvent(stalled, RUNBOOK);
      expect(payload.blocks[0]).toEqual({
        type: 'header',
        text: { type: 'plain_text', text: ':warning: STALLED on node-1', emoji: true },
      });
      expect(payload.text).toMatch(/^:warning: \[queen-fleet\] STALLED on node-1: node-1 stalled: 8 consecutive/);
    });

    it('marks a step judged while paused as PAUSED in the header, the notification and a section of its own', () => {
      const payload = formatEvent({ ...stalled, paused: true }, RUNBOOK);
      expect(payload.blocks[0]).toMatchObject({ text: { text: ':warning: PAUSED STALLED on node-1' } });
      expect(payload.text).toMatch(/^:warning: \[queen-fleet\] PAUSED STALLED on node-1: /);
      expect(JSON.stringify(payload.blocks)).toContain('*Paused*\\nThe automation is paused (fleet pause)');
      expect(JSON.stringify(formatEvent(stalled, RUNBOOK).blocks)).not.toContain('Paused');
    });

    it('shows node, incident, epoch and the time as ISO 8601', () => {
      const fields = formatEvent(stalled, RUNBOOK).blocks[1];
      expect(fields).toEqual({
        type: 'section',
        fields: [
          { type: 'mrkdwn', text: '*Node*\nnode-1', verbatim: true },
          { type: 'mrkdwn', text: '*Incident*\nnode-1-e3-i1', verbatim: true },
          { type: 'mrkdwn', text: '*Epoch*\n3', verbatim: true },
          { type: 'mrkdwn', text: '*Time*\n2023-11-14T22:15:20.000Z', verbatim: true },
        ],
      });
    });

    it('says what happened, the key metrics and the next step', () => {
      expect(sectionTexts(formatEvent(stalled, RUNBOOK))).toEqual([
        `*What happened*\n${stalled.summary}`,
        '*Key metrics*\n• Failing samples: 8\n• Fault: no-progress\n• Worker processes: 1\n' +
          '• CPU: 3.1%\n• Memory: 50.0 MiB\n• Backlog: 5\n• Completions in window: 0\n• In flight: 1',
        '*Next step*\nThe watchdog restarts the worker through SSM Run Command.',
        `*Runbook*\n<${RUNBOOK}#stalled|What STALLED means and what to do>`,
      ]);
    });

    it.each(EVENT_KINDS)('links the runbook row of %s, its one link', (kind) => {
      const payload = formatEvent({ ...stalled, kind }, RUNBOOK);
      expect(sectionTexts(payload)).toContain(
        `*Runbook*\n<${RUNBOOK}#${ALERT_ANCHORS[kind]}|What ${kind} means and what to do>`,
      );
      expect(slackProblems(payload, RUNBOOK)).toEqual([]);
    });

    it("escapes an & in the runbook's address, as Slack's link syntax needs", () => {
      const payload = formatEvent(stalled, 'https://wiki.example.com/view?space=ops&page=runbook');
      expect(sectionTexts(payload).at(-1)).toBe(
        '*Runbook*\n<https://wiki.example.com/view?space=ops&amp;page=runbook#stalled|' +
          'What STALLED means and what to do>',
      );
    });

    it('skips the metrics the agent could not read', () => {
      const lines = metricLines({
        failingSamples: 0,
        healthySamples: 0,
        fault: null,
        workerProcesses: 0,
        cpuPercent: null,
        memoryBytes: null,
        backlog: null,
        completionsInWindow: null,
        inFlight: null,
      });
      expect(lines).toEqual(['• Failing samples: 0', '• Worker processes: 0']);
    });

    it('names the new primary and its epoch for a failover step', () => {
      const payload = formatEvent(promoted, RUNBOOK);
      expect(payload.blocks[1]).toMatchObject({
        fields: expect.arrayContaining([
          { type: 'mrkdwn', text: '*New primary*\nnode-2', verbatim: true },
          { type: 'mrkdwn', text: '*New epoch*\n4', verbatim: true },
        ]),
      });
      expect(payload.text).toContain('New primary node-2 (epoch 4).');
    });

    it('marks a recovery as resolved and a node death as critical', () => {
      expect(formatEvent({ ...stalled, kind: 'RECOVERED' }, RUNBOOK).text).toMatch(/^:white_check_mark: /);
      expect(formatEvent({ ...stalled, kind: 'NODE_DEAD' }, RUNBOOK).text).toMatch(/^:rotating_light: /);
    });

    it('escapes Slack markup so a summary cannot ping the channel or forge a link', () => {
      const payload = formatEvent(
        { ...stalled, summary: 'worker said <!channel> & <https://evil.example|click>' },
        RUNBOOK,
      );
      expect(allText(payload)).not.toMatch(/<!channel>|<https:\/\/evil/);
      expect(allText(payload).match(/</g)).toHaveLength(1);
      expect(sectionTexts(payload)[0]).toBe(
        '*What happened*\nworker said &lt;!channel&gt; &amp; &lt;https://evil.example|click&gt;',
      );
    });

    it('keeps every block within the Block Kit limits, even for the longest fields', () => {
      const payload = formatEvent(
        {
          ...stalled,
          summary: '&'.repeat(1000),
          next: '<'.repeat(500),
          incidentId: 'i'.repeat(160),
        },
        RUNBOOK,
      );
      for (const text of sectionTexts(payload)) expect(text.length).toBeLessThanOrEqual(3000);
      expect(sectionTexts(payload)[0]).toMatch(/(&amp;)+…$/);
      expect(payload.text.length).toBeLessThanOrEqual(3000);
    });
  });

  describe('formatAlarm', () => {
    it('shows the alarm name, the state change, the reason and the time', () => {
      const payload = formatAlarm(alarm as CloudWatchAlarm, RUNBOOK);
      expect(payload.blocks[0]).toMatchObject({
        type: 'header',
        text: { text: ':rotating_light: ALARM: queens-fleet-prod-watchdog-errors' },
      });
      expect(payload.blocks[1]).toEqual({
        type: 'section',
        fields: [
          { type: 'mrkdwn', text: '*State*\nOK → ALARM', verbatim: true },
          { type: 'mrkdwn', text: '*Time*\n2023-11-14T22:15:20.000Z', verbatim: true },
          { type: 'mrkdwn', text: '*Region*\nUS West (Oregon)', verbatim: true },
        ],
      });
      expect(sectionTexts(payload)).toEqual([
        `*Reason*\n${alarm.NewStateReason}`,
        '*Description*\nThe watchdog Lambda failed.',
        `*Runbook*\n<${RUNBOOK}|Alerts and alarms, and what to do>`,
      ]);
      expect(payload.text).toBe(
        `:rotating_light: [queen-fleet] CloudWatch alarm ` +
          `queens-fleet-prod-watchdog-errors is ALARM: ${alarm.NewStateReason}`,
      );
    });

    it('omits a null description and marks a return to OK as resolved', () => {
      const payload = formatAlarm(
        {
          ...(alarm as CloudWatchAlarm),
          AlarmDescription: null,
          NewStateValue: 'OK',
          OldStateValue: 'ALARM',
        },
        RUNBOOK,
      );
      expect(sectionTexts(payload)).toEqual([
        `*Reason*\n${alarm.NewStateReason}`,
        `*Runbook*\n<${RUNBOOK}|Alerts and alarms, and what to do>`,
      ]);
      expect(payload.text).toMatch(/^:white_check_mark: /);
    });

    it.each(ALARM_ANCHORS)('links the row %s its description names, never a link of its own', (anchor) => {
      const description = `Stalled. Runbook: https://elsewhere.example/x#${anchor} and #Evil <https://evil.example|x>`;
      const payload = formatAlarm({ ...(alarm as CloudWatchAlarm), AlarmDescription: description }, RUNBOOK);
      expect(sectionTexts(payload).at(-1)).toBe(
        `*Runbook*\n<${RUNBOOK}#${anchor}|What ${anchor} means and what to do>`,
      );
      expect(slackProblems(payload, RUNBOOK)).toEqual([]);
    });

    it('links the runbook itself for a description that names no row of it', () => {
      const payload = formatAlarm(
        { ...(alarm as CloudWatchAlarm), AlarmDescription: 'See #StallOpenToo and #evil' },
        RUNBOOK,
      );
      expect(sectionTexts(payload).at(-1)).toBe(`*Runbook*\n<${RUNBOOK}|Alerts and alarms, and what to do>`);
    });
  });

  describe('parseAlertMessage', () => {
    it('classifies a FleetEvent', () => {
      expect(parseAlertMessage(JSON.stringify(stalled))).toEqual({ type: 'event', event: stalled });
    });

    it('classifies a CloudWatch alarm notification', () => {
      const parsed = parseAlertMessage(JSON.stringify(alarm));
      expect(parsed).toMatchObject({
        type: 'alarm',
        alarm: { AlarmName: alarm.AlarmName, NewStateValue: 'ALARM', OldStateValue: 'OK' },
      });
      expect(formatAlert(parsed, RUNBOOK).text).toContain('CloudWatch alarm');
    });

    it.each([
      ['text that is not JSON', 'hello from the console', '(root)'],
      ['a JSON array', '[1,2]', '(root)'],
      ['a JSON string', '"STALLED"', '(root)'],
      ['an event without a kind', JSON.stringify({ ...stalled, kind: undefined }), 'kind'],
      ['an event of an unknown kind', JSON.stringify({ ...stalled, kind: 'EXPLODED' }), 'kind'],
      [
        'an event with a bad metric',
        JSON.stringify({ ...stalled, metrics: { ...stalled.metrics, fault: 'melted' } }),
        'metrics.fault',
      ],
      ['an event of a version after the next', JSON.stringify({ ...stalled, version: 3 }), 'version'],
      ['an alarm in an unknown state', JSON.stringify({ ...alarm, NewStateValue: 'PANIC' }), 'NewStateValue'],
      ['an alarm without a reason', JSON.stringify({ ...alarm, NewStateReason: undefined }), 'NewStateReason'],
    ])('throws ValidationError naming the field for %s', (_case, message, field) => {
      const error = (() => {
        try {
          parseAlertMessage(message);
        } catch (e) {
          return e;
        }
        return undefined;
      })();
      expect(error).toBeInstanceOf(ValidationError);
      expect((error as ValidationError).field).toBe(field);
    });

    it('reads an event of the next version, dropping the fields it adds (a rolling upgrade)', () => {
      const parsed = parseAlertMessage(JSON.stringify({ ...stalled, version: 2, severity: 'high' }));
      expect(parsed).toMatchObject({ type: 'event', event: { kind: 'STALLED', version: 2 } });
      expect(parsed.type === 'event' && parsed.event).not.toHaveProperty('severity');
    });
  });
});
