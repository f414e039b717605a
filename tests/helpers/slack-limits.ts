import type { SlackPayload, SlackText } from '../../lib/core/views/slack-message';

const escapeRegExp = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** The one link a message may hold: its runbook entry, under the base the notifier was given. */
const runbookLinks = (runbookUrl: string): RegExp =>
  new RegExp(`<${escapeRegExp(runbookUrl.replace(/&/g, '&amp;'))}(#[A-Za-z_]+)?\\|[A-Za-z_ ,]+>`, 'g');

/**
 * What Slack requires of an incoming-webhook payload, and what a hostile text must not achieve in
 * it, as a list of broken rules (empty when the payload is fine). Limits from the Block Kit
 * reference: a header's plain_text 150 characters, a section's text 3000, a field 2000, at most
 * 10 fields and 50 blocks; every text at least 1 character. The blocks hold exactly one link, to
 * the runbook at `runbookUrl`, and nothing else may form one.
 */
export const slackProblems = (payload: SlackPayload, runbookUrl: string): string[] => {
  const problems: string[] = [];
  const texts: { where: string; text: SlackText; max: number }[] = [];
  payload.blocks.forEach((b, i) => {
    if (b.type === 'header') texts.push({ where: `blocks.${i}.text`, text: b.text, max: 150 });
    if (b.type === 'section') {
      if (b.text !== undefined) texts.push({ where: `blocks.${i}.text`, text: b.text, max: 3000 });
      if ((b.fields?.length ?? 0) > 10) problems.push(`blocks.${i}: more than 10 fields`);
      b.fields?.forEach((f, j) => texts.push({ where: `blocks.${i}.fields.${j}`, text: f, max: 2000 }));
    }
    if (b.type === 'context')
      b.elements.forEach((e, j) => texts.push({ where: `blocks.${i}.elements.${j}`, text: e, max: 3000 }));
  });
  if (payload.blocks.length > 50) problems.push('more than 50 blocks');
  const links = texts.flatMap(
    ({ text }) => (text.type === 'mrkdwn' ? text.text.match(runbookLinks(runbookUrl)) : null) ?? [],
  );
  if (links.length !== 1) problems.push(`${links.length} runbook links in the blocks (1)`);
  texts.push({ where: 'text', text: { type: 'mrkdwn', text: payload.text, verbatim: true }, max: 3000 });
  for (const { where, text, max } of texts) {
    const t = text.text.replace(runbookLinks(runbookUrl), '');
    if (t.length === 0 || t.length > max) problems.push(`${where}: ${t.length} characters (1 to ${max})`);
    if (/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/.test(t))
      problems.push(`${where}: a lone surrogate (not UTF-8)`);
    // plain_text is shown as it is: Slack parses no markup there.
    if (text.type === 'plain_text') continue;
    if (text.verbatim !== true)
      problems.push(`${where}: mrkdwn without verbatim (Slack would parse mentions in plain words)`);
    if (/[<>]/.test(t)) problems.push(`${where}: an unescaped < or > (a mention or a link)`);
    if (/&(?!amp;|lt;|gt;)/.test(t)) problems.push(`${where}: a bare & or a cut entity`);
    if (/@(channel|here|everyone)\b/i.test(t)) problems.push(`${where}: a broadcast word Slack may turn into a ping`);
  }
  return problems;
};

/** Slack's reading of an escaped text: entities back to characters, word joiners dropped. */
export const unescapeSlack = (text: string): string =>
  text
    .replace(/\u2060/g, '')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');
