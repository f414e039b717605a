import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { SendCommandCommand } from '@aws-sdk/client-ssm';
import { handler, resetForTests } from '../../functions/replay/handler';
import type { FleetEvent } from '../../lib/core/events';
import { emptyCounter } from '../../lib/core/fleet/stall';
import { upgradeV1, watchdogStateV1Schema, type IncidentV1 as Incident } from '../../lib/core/fleet/watchdog-state-v1';
import { makeEvent } from '../../lib/core/fleet/watchdog-events';
import { frozen, heartbeat, working } from '../helpers/fixtures';
import {
  answerControlPlane,
  mockControlPlane,
  mutations as mutationsOf,
  routedFleetEnv,
} from '../helpers/control-plane';
import { MemoryS3 } from '../helpers/memory-s3';

const INCIDENT = 'node-1-e3-i1';
const EVENTS_DIR = join(__dirname, '..', '..', 'functions', 'replay', 'events');

const cp = mockControlPlane();
const { ssm } = cp;
let s3: MemoryS3;

const quiet = { counter: emptyCounter(), incident: null, restartTimes: [], incidents: 0, seen: null };
const incident = (over: Partial<Incident>): Incident => ({
  id: INCIDENT,
  kind: 'stall',
  openedAt: 1,
  epoch: 3,
  restart: null,
  escalated: false,
  failover: null,
  noStandbyAlerted: false,
  ...over,
});
const event = (kind: FleetEvent['kind'], epoch = 3): FleetEvent =>
  makeEvent(kind, 'node-1', { id: INCIDENT, epoch }, emptyCounter(), 1, `node-1 ${kind}`);

/**
 * Writes the watchdog state with node-1's incident, and the events it already produced. The
 * state is written as version 1, as a fleet upgraded in the middle of an incident has it: the
 * replay reads it through the converter, and whatever it writes back is version 2.
 */
const given = (open: Incident | null, written: FleetEvent['kind'][]): void => {
  s3.set('peer-sync/watchdog/state.json', {
    version: 1,
    revision: 5,
    lastFailoverAt: null,
    nodes: { 'node-1': { ...quiet, incident: open, incidents: 1 }, 'node-2': quiet },
  });
  for (const kind of written) s3.set(`peer-sync/events/${INCIDENT}/${kind}.json`, event(kind));
};

const mutations = (): string[] => mutationsOf(s3, cp);

describe('replay handler', () => {
  const saved = { ...process.env };
  beforeEach(() => {
    answerControlPlane(cp, { instance: 'running', ping: [] });
    s3 = new MemoryS3();
    Object.assign(process.env, {
      ...routedFleetEnv(),
      LOG_LEVEL: 'silent',
    });
    resetForTests();
    s3.set('peer-sync/leader.json', {
      version: 1,
      primary: 'node-1',
      epoch: 3,
      renewals: 40,
      reason: 't',
      changedBy: 't',
      previous: null,
      handover: 'immediate',
    });
    s3.set('peer-sync/nodes/node-1/heartbeat.json', heartbeat('node-1', frozen(0, 9, { epochSeen: 3 })));
    s3.set(
      'peer-sync/nodes/node-2/heartbeat.json',
      heartbeat(
        'node-2',
        working(0, 9).map((s) => ({ ...s, epochSeen: 3, consumingEpoch: null })),
      ),
    );
    s3.puts = [];
  });
  afterAll(() => {
    process.env = saved;
    for (const m of [...cp.all, s3]) m.restore();
  });

  describe('dry run', () => {
    it.each(readdirSync(EVENTS_DIR).filter((f) => !f.startsWith('execute')))(
      'changes nothing for the shipped console event %s',
      async (file) => {
        // The most tempting state to act on: a failover claimed and left half done.
        given(
          incident({
            escalated: true,
            restart: { command: 'restartWorker', status: 'succeeded', claimedAt: 1, commandId: 'cmd-0' },
            failover: {
              status: 'claimed',
              to: 'node-2',
              fromEpoch: 3,
              claimedAt: 1,
              outgoingStopped: false,
              stopOutgoing: true,
            },
          }),
          ['STALLED', 'RESTART_SENT', 'RESTART_RESULT', 'STILL_STALLED', 'FAILOVER_STARTED'],
        );
        const input = JSON.parse(readFileSync(join(EVENTS_DIR, file), 'utf8')) as unknown;
        const out = await handler(input);
        expect(out.mode).toBe('dry-run');
        expect(out.plan.action).toMatchObject({ kind: 'resume-failover' });
        expect(out.text.join('\n')).toContain('with "execute": true it would: resume-failover');
        expect(mutations()).toEqual([]);
      },
    );

    it('shows each step and whether it is done', async () => {
      given(
        incident({
          restart: { command: 'restartWorker', status: 'sent', claimedAt: 1, commandId: 'cmd-7', sentAt: 2 },
        }),
        ['STALLED', 'RESTART_SENT'],
      );
      const out = await handler({ eventId: `${INCIDENT}.STALLED` });
      expect(out.plan.steps.map((s) => [s.step, s.status])).toEqual([
        ['detect the stall', 'done'],
        ['restart the worker', 'done'],
        ['restart result', 'pending'],
        ['close the incident', 'pending'],
      ]);
      expect(mutations()).toEqual([]);
    });
  });

  describe('execute', () => {
    it('does not restart again when the restart already happened', async () => {
      given(
        incident({
          restart: { command: 'restartWorker', status: 'sent', claimedAt: 1, commandId: 'cmd-7', sentAt: 2 },
        }),
        ['STALLED', 'RESTART_SENT'],
      );
      const out = await handler({ eventId: `${INCIDENT}.STALLED`, execute: true });
      expect(out.executed).toEqual(['read the result of command cmd-7']);
      expect(ssm).toHaveReceivedCommandTimes(SendCommandCommand, 0);
      expect(out.after?.steps.find((s) => s.step === 'restart result')?.status).toBe('done');
      // And once the result is in, a second execute has nothing left to do.
      const again = await handler({ eventId: `${INCIDENT}.STALLED`, execute: true });
      expect(again.plan.verdict).toBe('watchdog-owns');
      expect(again.executed).toEqual([]);
      expect(ssm).toHaveReceivedCommandTimes(SendCommandCommand, 0);
    });

    it('sends a claimed but unsent restart once, however many replays race', async () => {
      given(incident({ restart: { command: 'restartWorker', status: 'claimed', claimedAt: 1 } }), ['STALLED']);
      await Promise.all([1, 2, 3].map(() => handler({ eventId: `${INCIDENT}.STALLED`, execute: true })));
      expect(ssm).toHaveReceivedCommandTimes(SendCommandCommand, 1);
      expect(ssm).toHaveReceivedCommandWith(SendCommandCommand, {
        InstanceIds: ['mi-00000000000000001'],
        Parameters: { commands: ['systemctl restart queen-fleet-worker'], executionTimeout: ['60'] },
      });
    });

    it('refuses an event of an older epoch and changes nothing', async () => {
      s3.set('peer-sync/leader.json', {
        version: 1,
        primary: 'node-2',
        epoch: 5,
        renewals: 1,
        reason: 't',
        changedBy: 't',
        previous: 'node-1',
        handover: 'immediate',
      });
      given(incident({ restart: { command: 'restartWorker', status: 'claimed', claimedAt: 1 } }), ['STALLED']);
      const out = await handler({ ...event('STALLED', 3), execute: true });
      expect(out.plan.verdict).toBe('refused');
      expect(out.plan.reason).toMatch(/names epoch 3 but the fleet is at epoch 5/);
      expect(out.executed).toEqual([]);
      expect(mutations()).toEqual([]);
    });

    it('retries a failed failover to a ready standby, then has nothing left to do', async () => {
      given(
        incident({
          escalated: true,
          restart: { command: 'restartWorker', status: 'succeeded', claimedAt: 1 },
          failover: {
            status: 'failed',
            to: 'node-2',
            fromEpoch: 3,
            claimedAt: 1,
            outgoingStopped: false,
            stopOutgoing: true,
            detail: 'boom',
          },
        }),
        ['STALLED', 'STILL_STALLED', 'FAILOVER_STARTED', 'FAILOVER_FAILED'],
      );
      const out = await handler({ eventId: `${INCIDENT}.FAILOVER_FAILED`, execute: true });
      expect(out.executed).toEqual(['retried the failover of node-1 to node-2']);
      expect(s3.json('peer-sync/leader.json')).toMatchObject({ primary: 'node-2', epoch: 4 });
      const again = await handler({ eventId: `${INCIDENT}.FAILOVER_FAILED`, execute: true });
      expect(again.plan.verdict).toBe('nothing-to-do');
      expect(again.plan.reason).toMatch(/the failover made epoch 4/);
      expect(s3.puts.filter((p) => p.key === 'peer-sync/leader.json')).toHaveLength(1);
    });

    it('retries no failover to a cordoned standby, however ready', async () => {
      const open = incident({
        escalated: true,
        restart: { command: 'restartWorker', status: 'succeeded', claimedAt: 1 },
        failover: {
          status: 'failed',
          to: 'node-2',
          fromEpoch: 3,
          claimedAt: 1,
          outgoingStopped: false,
          stopOutgoing: true,
          detail: 'boom',
        },
      });
      given(open, ['STALLED', 'STILL_STALLED', 'FAILOVER_STARTED', 'FAILOVER_FAILED']);
      const v1 = watchdogStateV1Schema.parse(s3.json('peer-sync/watchdog/state.json'));
      const note = { at: 1, by: 'ops@host', reason: null };
      s3.set('peer-sync/watchdog/state.json', {
        ...upgradeV1(v1),
        maintenance: { paused: null, cordoned: { 'node-2': note } },
      });
      const out = await handler({ eventId: `${INCIDENT}.FAILOVER_FAILED`, execute: true });
      expect(out.executed).toEqual([]);
      expect(s3.json('peer-sync/leader.json')).toMatchObject({ primary: 'node-1', epoch: 3 });
    });
  });

  describe('input', () => {
    it.each([
      [[], 'must be a JSON object'],
      [{ eventId: 'nonsense' }, 'eventId'],
      [{ eventId: `${INCIDENT}.STALLED`, execute: 'yes' }, 'execute'],
      [{ Records: [{ Sns: { Message: '{not json' } }] }, 'SNS message: not valid JSON'],
      [{ kind: 'STALLED' }, 'replay input'],
    ])('rejects %j naming the problem', async (input, message) => {
      await expect(handler(input)).rejects.toThrow(message);
    });

    it('says so when the named event does not exist', async () => {
      given(null, []);
      await expect(handler({ eventId: 'node-9-e1-i1.STALLED' })).rejects.toThrow(
        /event node-9-e1-i1.STALLED not found/,
      );
    });
  });
});
