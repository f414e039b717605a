import { Option, type Command } from 'commander';
import {
  parseKind,
  parseLimit,
  parseNode,
  parseSince,
  sinceTime,
  type EventQuery,
  type Since,
} from '../../lib/core/views/event-query';
import { EVENT_KINDS, type EventKind } from '../../lib/core/events';
import { queryEvents } from '../../lib/ops/events';
import { argument, connect, paint, printJson, withTargetOptions, type TargetOptions } from './common';
import { renderEvents } from './render';

interface EventsOptions extends TargetOptions {
  node?: string;
  kind?: EventKind;
  since?: Since;
  limit: number;
}

/** `fleet events [--node N] [--kind K] [--since 15m|ISO] [--limit N]`: incident steps, newest first. */
export const registerEvents = (program: Command): void => {
  withTargetOptions(program.command('events').description('incident steps stored under events/, newest first'))
    .option('--node <name>', 'only events about this node', argument(parseNode))
    .option('--kind <kind>', `only this kind: ${EVENT_KINDS.join(', ')}`, argument(parseKind))
    .option(
      '--since <when>',
      'only events since a duration ago (30s, 15m, 2h, 1d) or an ISO date',
      argument(parseSince),
    )
    .addOption(new Option('--limit <n>', 'at most n events').argParser(argument(parseLimit)).default(20))
    .action(async (o: EventsOptions) => {
      const { target, deps } = connect(o);
      const now = deps.now();
      const query: EventQuery = {
        limit: o.limit,
        ...(o.node === undefined ? {} : { node: o.node }),
        ...(o.kind === undefined ? {} : { kind: o.kind }),
        ...(o.since === undefined ? {} : { since: sinceTime(o.since, now) }),
      };
      const found = await queryEvents(deps.store, query);
      if (o.json === true)
        printJson({
          where: target.where,
          query,
          count: found.events.length,
          events: found.events,
          corrupt: found.corrupt,
        });
      else console.log(renderEvents(found.events, found.corrupt, now, paint()));
    });
};
