import fc from 'fast-check';
import type { FleetEvent } from '../../../../lib/core/events';
import { formatAlert, parseAlertMessage } from '../../../../lib/core/views/slack-message';
import {
  brokenTextArb,
  expectNoPollution,
  hostileStringArb,
  hostileValueArb,
  markupRunArb,
  outcomeOf,
  POLLUTERS,
  RUNS,
  SLACK_MARKUP,
} from '../../../helpers/hostile';
import { slackProblems, unescapeSlack } from '../../../helpers/slack-limits';
import { stalledEvent } from '../../../helpers/fixtures';

/**
 * Hostile input: the text that reaches Slack. An alert's strings come from the fleet (and so
 * from whoever can write events/ or publish to the topic): whatever they hold, the message must
 * not ping anyone, forge a link, carry text that is not UTF-8, or break a Block Kit limit.
 */
const STALLED: FleetEvent = stalledEvent;
/** With an `&`, which Slack's link syntax needs escaped. */
const RUNBOOK = 'https://wiki.example.com/view?space=ops&page=runbook';

/** Hostile text that mostly fits the schema's bounds, so it reaches the formatter. */
const textArb = (max: number): fc.Arbitrary<string> =>
  fc.oneof(hostileStringArb, markupRunArb, brokenTextArb).map((s) => s.slice(0, max));

const eventArb = fc
  .record({
    summary: textArb(1000),
    next: textArb(500),
    id: textArb(200),
    incidentId: textArb(160),
    commandId: textArb(64),
    at: fc.oneof(fc.integer(), fc.constantFrom(1e300, -1e300, 8.64e15 + 1)),
    cpuPercent: fc.oneof(fc.double({ min: 0, max: 1e308, noNaN: true }), fc.constant(1e308)),
  })
  .map(({ cpuPercent, ...strings }) => ({ ...STALLED, ...strings, metrics: { ...STALLED.metrics, cpuPercent } }));

const alarmArb = fc.record(
  {
    AlarmName: textArb(255),
    AlarmDescription: fc.oneof(hostileStringArb, fc.constant(null)),
    NewStateValue: fc.constantFrom('ALARM', 'OK', 'INSUFFICIENT_DATA'),
    NewStateReason: fc.oneof(hostileStringArb, markupRunArb),
    StateChangeTime: fc.oneof(
      hostileStringArb,
      fc.constantFrom('2023-11-14T22:15:20.000+0000', '+275760-09-13T00:00:00.000Z'),
    ),
    OldStateValue: hostileStringArb,
    Region: hostileStringArb,
  },
  { requiredKeys: ['AlarmName', 'NewStateValue', 'NewStateReason', 'StateChangeTime'] },
);

describe('slack-message, over hostile alerts', () => {
  afterEach(expectNoPollution);

  it('formats any event it accepts into a payload Slack takes and nobody is pinged by', () => {
    fc.assert(
      fc.property(eventArb, (event) => {
        const parsed = outcomeOf(() => parseAlertMessage(JSON.stringify(event)));
        if (parsed.ok) expect(slackProblems(formatAlert(parsed.value, RUNBOOK), RUNBOOK)).toEqual([]);
      }),
      { numRuns: RUNS },
    );
  });

  it('formats any CloudWatch alarm it accepts into a payload Slack takes and nobody is pinged by', () => {
    fc.assert(
      fc.property(alarmArb, (alarm) => {
        const parsed = outcomeOf(() => parseAlertMessage(JSON.stringify(alarm)));
        if (parsed.ok) expect(slackProblems(formatAlert(parsed.value, RUNBOOK), RUNBOOK)).toEqual([]);
      }),
      { numRuns: RUNS },
    );
  });

  it('still shows a summary that fits, word for word, once Slack unescapes it', () => {
    // Escaping must neutralise markup, not drop what the watchdog said.
    const fitting = fc
      .array(fc.constantFrom<string>(...SLACK_MARKUP, 'node-1 ', '😀', 'é', ' '), { minLength: 1, maxLength: 40 })
      .map((p) => p.join(''));
    fc.assert(
      fc.property(fitting, (summary) => {
        const payload = formatAlert({ type: 'event', event: { ...STALLED, summary } }, RUNBOOK);
        const shown =
          payload.blocks.flatMap((b) => (b.type === 'section' && b.text !== undefined ? [b.text.text] : []))[0] ?? '';
        expect(unescapeSlack(shown)).toBe(`*What happened*\n${summary}`);
      }),
      { numRuns: RUNS },
    );
  });

  it('reads any message body as an event or an alarm, or refuses it naming the field', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          hostileValueArb.map((v) => JSON.stringify(v) ?? ''),
          fc.constantFrom(...POLLUTERS.map((p) => JSON.stringify(p))),
          brokenTextArb,
        ),
        (message) => {
          outcomeOf(() => parseAlertMessage(message));
          expectNoPollution();
        },
      ),
      { numRuns: RUNS },
    );
  });

  it('keeps a long text of emoji whole at the cut, in every block', () => {
    const payload = formatAlert(
      {
        type: 'event',
        event: { ...STALLED, summary: '😀'.repeat(500), next: '😀'.repeat(250) },
      },
      RUNBOOK,
    );
    expect(slackProblems(payload, RUNBOOK)).toEqual([]);
    const alarm = formatAlert(
      {
        type: 'alarm',
        alarm: {
          AlarmName: `${'x'.repeat(130)}${'😀'.repeat(60)}`,
          NewStateValue: 'ALARM',
          NewStateReason: 'r',
          StateChangeTime: 't',
        },
      },
      RUNBOOK,
    );
    expect(slackProblems(alarm, RUNBOOK)).toEqual([]);
  });
});
