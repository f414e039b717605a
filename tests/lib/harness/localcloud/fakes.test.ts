import type { FastifyReply, FastifyRequest } from 'fastify';
import { FAITHFUL } from '../../../../lib/harness/localcloud/behaviour';
import { Chance } from '../../../../lib/harness/localcloud/chance';
import { AwsFakes, lightsailView, type MachineView } from '../../../../lib/harness/localcloud/fakes';

/** A fastify reply that only records what was sent. */
const recorder = () => {
  const sent: { status: number; body: unknown } = { status: 0, body: undefined };
  const reply = {
    status(code: number) {
      sent.status = code;
      return reply;
    },
    header() {
      return reply;
    },
    send(body: string) {
      sent.body = JSON.parse(body) as unknown;
      return reply;
    },
  };
  return { sent, reply: reply as unknown as FastifyReply };
};

const request = (target: string, body: unknown): FastifyRequest =>
  ({ headers: { 'x-amz-target': target }, body: Buffer.from(JSON.stringify(body)) }) as unknown as FastifyRequest;

describe('Lightsail fake (lightsailStates)', () => {
  it('reports a crashed or frozen VM as running, as Lightsail does; the kind old answer was stopped', () => {
    expect(lightsailView('running', false, FAITHFUL.lightsailStates)).toBe('running');
    expect(lightsailView('running', false, { on: false })).toBe('stopped');
    expect(lightsailView('stopping', true, FAITHFUL.lightsailStates)).toBe('stopping');
  });

  it('answers GetInstanceState with the state name and its EC2 code', () => {
    const fakes = new AwsFakes(new Set(), FAITHFUL, new Chance(1));
    const machines: MachineView[] = [
      {
        instanceId: 'mi-00000000000000001',
        name: 'node-1',
        lightsailName: 'fleet-1',
        lightsailState: 'running',
        reachable: false,
      },
      {
        instanceId: 'mi-00000000000000002',
        name: 'node-2',
        lightsailName: 'fleet-2',
        lightsailState: 'stopping',
        reachable: false,
      },
    ];
    fakes.attach({ list: () => machines, run: () => Promise.resolve({ ok: true, output: '' }) });
    const states = ['fleet-1', 'fleet-2'].map((instanceName) => {
      const { sent, reply } = recorder();
      fakes.handle(request('Lightsail_20161128.GetInstanceState', { instanceName }), reply, 'watchdog');
      return sent.body;
    });
    fakes.stop();
    expect(states).toEqual([{ state: { code: 16, name: 'running' } }, { state: { code: 64, name: 'stopping' } }]);
  });
});
