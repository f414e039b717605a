import fc from 'fast-check';
import { drillHtml, roleSegments } from '../../../../lib/core/drill/html';
import { buildReport, type Observations } from '../../../../lib/core/drill/report';
import { parseScenario } from '../../../../lib/core/drill/scenario';
import { blankObservations } from '../../../helpers/observations';

const scenario = parseScenario({
  name: 'kill <b>primary</b> & "friends"',
  nodes: 2,
  seconds: 400,
  workload: { tasks: 2, meanTaskSeconds: 60 },
  faults: [{ at: 120, kind: 'kill-node', target: 'primary' }],
  expect: { failovers: 1, lostTasks: 0, maxFailoverSeconds: 45 },
});

/** A killed primary, failed over to node-2 at 150 s, with the watchdog's metrics and the queues' depths. */
const failover = (over: Partial<Observations> = {}): Observations =>
  blankObservations({
    faults: [{ at: 120, kind: 'kill-node', node: 'node-1' }],
    events: [
      { t: 140, kind: 'NODE_DEAD', node: 'node-1', incidentId: 'i1' },
      { t: 150, kind: 'PROMOTED', node: 'node-1', incidentId: 'i1' },
    ],
    leaders: [
      { t: 0, epoch: 1, primary: 'node-1' },
      { t: 150, epoch: 2, primary: 'node-2' },
    ],
    receives: [
      { t: 10, node: 'node-1', count: 1, epoch: 1 },
      { t: 155, node: 'node-2', count: 1, epoch: 2 },
    ],
    writes: [
      { t: 90, node: 'node-1', kind: 'done', taskId: 'task-0001', epoch: 1 },
      { t: 200, node: 'node-2', kind: 'done', taskId: 'task-0002', epoch: 2 },
      { t: 201, node: 'node-2', kind: 'done', taskId: 'task-0002', epoch: 2 },
    ],
    completions: new Map([
      ['task-0001', 1],
      ['task-0002', 1],
    ]),
    enqueued: ['task-0001', 'task-0002'],
    heartbeatGaps: { 'node-1': 280, 'node-2': 15 },
    depths: [
      { t: 0, backlog: 2, intake: 0 },
      { t: 100, backlog: 1, intake: 0 },
      { t: 250, backlog: 0, intake: 0 },
    ],
    timeline: [
      { t: 0, node: 'node-1', event: 'role', detail: 'primary, epoch 1 (immediate, by drill)' },
      { t: 120, node: 'node-1', event: 'fault', detail: 'kill-node: <script>alert(1)</script>' },
      { t: 150, node: 'node-2', event: 'role', detail: 'primary, epoch 2' },
      { t: 152, node: 'node-2', event: 'agent-role', detail: 'standby → pending (epoch 2)' },
      { t: 160, node: 'node-2', event: 'agent-role', detail: 'pending → primary (epoch 2)' },
      { t: 400, node: 'drill', event: 'end', detail: '2 of 2 tasks completed' },
    ],
    metrics: [
      {
        name: 'HeartbeatAge',
        node: 'node-1',
        unit: 'Seconds',
        points: [
          [60, 5],
          [120, 3],
          [180, 60],
          [240, 120],
        ],
      },
      {
        name: 'HeartbeatAge',
        node: 'node-2',
        unit: 'Seconds',
        points: [
          [60, 4],
          [120, 6],
          [180, 2],
          [240, 7],
        ],
      },
      {
        name: 'Epoch',
        node: null,
        unit: 'None',
        points: [
          [60, 1],
          [180, 2],
        ],
      },
    ],
    ...over,
  });
const meta = { seed: 1, timeScale: 20, wallSeconds: 30 };

const count = (html: string, re: RegExp): number => [...html.matchAll(re)].length;

describe('drillHtml', () => {
  const report = buildReport(scenario, failover(), meta);
  const html = drillHtml(report);

  it('carries the backlog and the completions in the report, each task once', () => {
    expect(report.series).toEqual({
      depths: [
        [0, 2, 0],
        [100, 1, 0],
        [250, 0, 0],
      ],
      completed: [
        [90, 1],
        [200, 2],
      ],
    });
  });

  it('is one self-contained page: no script, no external reference, every piece of fleet text escaped', () => {
    expect(html).toMatch(/^<!doctype html>/);
    expect(html).not.toMatch(/<script|src=|href=|@import|url\(/i);
    expect(html).toContain('kill &lt;b&gt;primary&lt;/b&gt; &amp; &quot;friends&quot;');
    expect(html).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
  });

  it('draws a lane a node and one for the fleet, the lease by epoch, the roles, the fault and the failover', () => {
    expect(count(html, /<g class="lane" data-lane="/g)).toBe(3);
    expect(html).toMatch(/<rect class="lease epoch-1" data-epoch="1"/);
    expect(html).toMatch(/<rect class="lease epoch-2" data-epoch="2"/);
    expect(count(html, /class="role role-primary"/g)).toBe(2);
    expect(html).toContain('data-role="pending"');
    // node-1's agent died with its VM: its last word is not its role after the kill.
    expect(roleSegments(report, 'node-1', 400)).toEqual([
      { from: 0, to: 120, role: 'primary', epoch: 1 },
      { from: 120, to: 400, role: 'down', epoch: null },
    ]);
    expect(count(html, /<g class="fault"/g)).toBe(1);
    expect(html).toMatch(/data-step="failover"/);
    expect(html).toMatch(/data-step="serving"/);
  });

  it(
    "plots each node's heartbeat age with the silence line, " + 'the epoch, and the backlog and completions as lines',
    () => {
      expect(html).toMatch(
        /data-series="HeartbeatAge"[^]*class="threshold"[^]*data-label="node-1"[^]*data-label="node-2"/,
      );
      expect(html).toMatch(/data-series="Fleet"[^]*data-label="epoch"/);
      expect(html).toMatch(/data-series="Work"[^]*data-label="backlog \(task queue\)"[^]*data-label="tasks completed"/);
    },
  );

  it('lists every expectation and invariant with its result', () => {
    expect(count(html, /<tr class="(ok|failed)" data-check=/g)).toBe(
      report.expectations.length + Object.keys(report.invariants).length,
    );
    expect(html).toContain(report.ok ? 'class="verdict ok"' : 'class="verdict failed"');
  });

  it('says so when the drill captured no metrics, instead of an empty chart', () => {
    const bare = drillHtml(buildReport(scenario, failover({ metrics: [] }), meta));
    expect(bare).not.toContain('data-series="HeartbeatAge"');
    expect(bare).toContain('No heartbeat ages captured');
  });

  it("splits each node's time into role segments that follow one another from 0 to the end", () => {
    const roles = ['primary', 'pending', 'standby', 'fenced', 'sleeping'];
    // Faults that take the agent down, and their clearing, among the role changes.
    const faults = [
      { event: 'fault', detail: 'freeze-node: every process stops' },
      { event: 'fault-cleared', detail: 'freeze-node' },
      { event: 'fault', detail: 'stall-worker: SIGSTOP to the worker' },
    ];
    fc.assert(
      fc.property(
        fc.array(
          fc.tuple(
            fc.integer({ min: 0, max: 399 }),
            fc.oneof(fc.constantFrom(...roles), fc.constantFrom(...faults)),
            fc.integer({ min: 1, max: 9 }),
          ),
          { maxLength: 12 },
        ),
        (changes) => {
          const timeline = [...changes]
            .sort((a, b) => a[0] - b[0])
            .map(([t, what, epoch]) =>
              typeof what === 'string'
                ? { t, node: 'node-2', event: 'agent-role', detail: `x → ${what} (epoch ${epoch})` }
                : { t, node: 'node-2', ...what },
            );
          const segments = roleSegments({ ...report, timeline }, 'node-2', 400);
          expect(segments[0]?.from).toBe(0);
          expect(segments.at(-1)?.to).toBe(400);
          segments.forEach((s, i) => {
            expect(s.to).toBeGreaterThanOrEqual(s.from);
            if (i > 0) expect(s.from).toBe(segments[i - 1]?.to);
            expect(['primary', 'pending', 'standby', 'fenced', 'down', 'unknown']).toContain(s.role);
          });
        },
      ),
    );
  });
});
