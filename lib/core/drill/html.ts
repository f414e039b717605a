import { configSchema } from '../config';
import type { Report } from './report-types';
import { esc, frameFor, legend, lineChart, timeAxis, xOf, type Frame, type Line } from './svg';

/**
 * A drill's report as one self-contained HTML page (`fleet drill --html FILE`): the
 * timeline of each node's role and epoch with the faults and each incident's steps, the
 * heartbeat ages, the backlog and completions, and the expectations and invariants. Inline CSS
 * and SVG only: no script, no font, no request, so it opens from a mail or an artefact store.
 * Pure: report in, text out.
 */

const ROLES = ['primary', 'pending', 'standby', 'fenced', 'down'] as const;
type Role = (typeof ROLES)[number] | 'unknown';

/** Faults after which a node's agent is dead or frozen: what it said last is no longer its role. */
const DOWNING = /^(kill-node|stop-node|reboot-node|freeze-node|kill-agent):/;

const DEFAULTS = configSchema.parse({});

/** Every node the report knows, in name order. */
const nodesOf = (r: Report): string[] =>
  [
    ...new Set([
      ...Object.keys(r.heartbeatGaps),
      ...r.epochs.map((e) => e.primary),
      ...r.metrics.flatMap((m) => (m.node === null ? [] : [m.node])),
    ]),
  ].sort();

/** How far the charts go: the last thing the report saw. */
const endOf = (r: Report): number => Math.max(1, ...r.timeline.map((e) => e.t), ...r.series.depths.map(([t]) => t));

/**
 * Each node's role as its own agent said it (its `agent-role` lines), from the drill's first
 * primary at 0; `down` from a fault that killed or froze its agent until it was cleared, then
 * unknown until the agent speaks again.
 */
export const roleSegments = (
  r: Report,
  node: string,
  end: number,
): { from: number; to: number; role: Role; epoch: number | null }[] => {
  const first = r.epochs[0];
  let role: Role = first?.primary === node && first.from === 0 ? 'primary' : 'standby';
  let epoch: number | null = role === 'primary' ? (first?.epoch ?? null) : null;
  let from = 0;
  let down = false;
  const out: { from: number; to: number; role: Role; epoch: number | null }[] = [];
  const change = (t: number, next: Role, nextEpoch: number | null): void => {
    if (t > from) out.push({ from, to: t, role, epoch });
    role = next;
    epoch = nextEpoch;
    from = Math.max(from, t);
  };
  for (const e of r.timeline.filter((x) => x.node === node)) {
    if (e.event === 'fault' && DOWNING.test(e.detail)) {
      down = true;
      change(e.t, 'down', null);
    } else if (e.event === 'fault-cleared' && down && DOWNING.test(`${e.detail}:`)) {
      down = false;
      change(e.t, 'unknown', null);
    } else if (e.event === 'agent-role' && !down) {
      const m = /→\s*(\w+)(?:\s*\(epoch (\d+)\))?/.exec(e.detail);
      if (m === null) continue;
      change(
        e.t,
        (ROLES as readonly string[]).includes(m[1] ?? '') ? (m[1] as Role) : 'unknown',
        m[2] === undefined ? null : Number(m[2]),
      );
    }
  }
  out.push({ from, to: Math.max(from, end), role, epoch });
  return out;
};

const STEPS = [
  { key: 'detectedAt', label: 'detected', on: 'node' },
  { key: 'restartedAt', label: 'restarted', on: 'node' },
  { key: 'recoveredAt', label: 'recovered', on: 'node' },
  { key: 'failoverAt', label: 'failover', on: 'new' },
  { key: 'servingAt', label: 'serving', on: 'new' },
  { key: 'trafficAt', label: 'traffic moved', on: 'new' },
] as const;

const LANE = 58;

/**
 * The timeline: a lane a node (the lease band, the agent's role bar, the incident steps) and one
 * for faults on no node.
 */
const timeline = (r: Report, f: Frame, nodes: readonly string[]): string => {
  const lanes = [...nodes, 'fleet'];
  const top = 8;
  const bottom = top + lanes.length * LANE;
  const height = bottom + 60;
  const laneY = (name: string): number =>
    top + Math.max(0, lanes.indexOf(nodes.includes(name) ? name : 'fleet')) * LANE;
  const x = (t: number): string => xOf(f, t).toFixed(1);
  const parts: string[] = [
    `<svg class="chart timeline" viewBox="0 0 ${f.width} ${height}" role="img" aria-label="timeline">`,
    timeAxis(f, top, bottom),
  ];
  for (const name of lanes) {
    const y = laneY(name);
    parts.push(
      `<g class="lane" data-lane="${esc(name)}"><text class="lane-label" x="4" y="${y + 26}">${esc(name)}</text>`,
    );
    if (name !== 'fleet') {
      for (const e of r.epochs.filter((p) => p.primary === name)) {
        const to = e.to ?? f.end;
        parts.push(
          `<rect class="lease epoch-${e.epoch % 6}" data-epoch="${e.epoch}" x="${x(e.from)}" y="${y + 4}" ` +
            `width="${Math.max(1, xOf(f, to) - xOf(f, e.from)).toFixed(1)}" height="8">` +
            `<title>leader.json names ${esc(name)}: epoch ${e.epoch}, ${e.from}–${e.to ?? 'end'} s</title></rect>`,
        );
        parts.push(
          `<text class="epoch-label" x="${(xOf(f, e.from) + 2).toFixed(1)}" y="${y + 2}">epoch ${e.epoch}</text>`,
        );
      }
      for (const s of roleSegments(r, name, f.end)) {
        const label = `${s.role}${s.epoch === null ? '' : ` (epoch ${s.epoch})`}`;
        parts.push(
          `<rect class="role role-${s.role}" data-role="${s.role}" x="${x(s.from)}" y="${y + 16}" ` +
            `width="${Math.max(1, xOf(f, s.to) - xOf(f, s.from)).toFixed(1)}" height="16">` +
            `<title>${esc(name)}'s agent: ${esc(label)}, ${s.from}–${s.to} s</title></rect>`,
        );
      }
    }
    parts.push('</g>');
  }
  for (const e of r.timeline.filter((x) => x.event === 'fault')) {
    const y = laneY(e.node);
    parts.push(
      `<g class="fault" data-node="${esc(e.node)}" data-t="${e.t}">` +
        `<line x1="${x(e.t)}" y1="${y + 2}" x2="${x(e.t)}" y2="${y + LANE - 4}"/>` +
        `<path d="M${x(e.t)},${y + 44} l-5,9 h10 z"/>` +
        `<title>fault at ${e.t} s on ${esc(e.node)}: ${esc(e.detail)}</title></g>`,
    );
  }
  for (const incident of r.incidents) {
    for (const step of STEPS) {
      const t = incident[step.key];
      const on = step.on === 'new' ? incident.newPrimary : incident.node;
      if (t === null || on === null) continue;
      const y = laneY(on) + 40;
      parts.push(
        `<circle class="step step-${step.label.replace(/\s+/g, '-')}" data-step="${step.label}" ` +
          `data-node="${esc(on)}" cx="${x(t)}" cy="${y}" r="4.5">` +
          `<title>${esc(incident.fault)} on ${esc(incident.node)} (${incident.faultAt} s): ` +
          `${step.label} at ${t} s</title></circle>`,
      );
    }
  }
  const keys = [
    ...ROLES.map((role) => ({ label: role, cls: `role-${role}` })),
    { label: 'leader.json names it', cls: 'lease epoch-1' },
    { label: 'fault', cls: 'fault-swatch' },
    ...STEPS.map((s) => ({ label: s.label, cls: `step-${s.label.replace(/\s+/g, '-')}` })),
  ];
  parts.push(legend(f, keys.slice(0, 7), bottom + 36), legend(f, keys.slice(7), bottom + 52), '</svg>');
  return parts.join('');
};

const lineFor = (r: Report, metric: string, node: string | null, label: string, cls: string): Line | null => {
  const m = r.metrics.find((s) => s.name === metric && s.node === node);
  return m === undefined || m.points.length === 0
    ? null
    : { label, cls, points: m.points, steps: metric !== 'HeartbeatAge' };
};

const present = (lines: readonly (Line | null)[]): Line[] => lines.filter((l): l is Line => l !== null);

const missing = (what: string): string =>
  `<p class="missing">No ${what} captured: ` +
  "the drill's fleet published no metrics (its <code>metrics</code> setting was off).</p>";

const CSS = [
  '',
  'body{font:14px/1.4 system-ui,sans-serif;margin:24px auto;max-width:1040px;color:#222}',
  'h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:28px 0 6px}',
  '.verdict{display:inline-block;padding:2px 10px;border-radius:4px;color:#fff;font-weight:600}',
  '.verdict.ok{background:#2e7d32}.verdict.failed{background:#c62828}',
  '.meta{color:#555}svg.chart{width:100%;height:auto;display:block;background:#fafafa;border:1px solid #ddd}',
  '.axis{stroke:#444}.grid{stroke:#e3e3e3}.tick,.legend,.epoch-label{font-size:11px;fill:#444}' +
    '.lane-label{font-size:13px;font-weight:600}',
  '.threshold{stroke:#c62828;stroke-dasharray:5 4}.threshold-label{font-size:11px;fill:#c62828}',
  'polyline.line{fill:none;stroke-width:2}.dot{stroke:none}',
  '.role-primary{fill:#2e7d32;stroke:#2e7d32}.role-pending{fill:#f9a825;stroke:#f9a825}' +
    '.role-standby{fill:#90a4ae;stroke:#90a4ae}.role-fenced{fill:#c62828;stroke:#c62828}' +
    '.role-down{fill:#eceff1;stroke:#78909c;stroke-dasharray:4 3}.role-unknown{fill:#cfd8dc}',
  '.lease{fill:#5c6bc0}.lease.epoch-0{fill:#8e24aa}.lease.epoch-2{fill:#00838f}' +
    '.lease.epoch-3{fill:#6d4c41}.lease.epoch-4{fill:#3949ab}.lease.epoch-5{fill:#ad1457}',
  '.fault line{stroke:#c62828;stroke-width:1.5;stroke-dasharray:3 3}.fault path,.fault-swatch{fill:#c62828}',
  '.step{stroke:#fff;stroke-width:1}.step-detected{fill:#ef6c00}.step-restarted{fill:#1565c0}' +
    '.step-recovered{fill:#2e7d32}.step-failover{fill:#6a1b9a}.step-serving{fill:#00897b}' +
    '.step-traffic-moved{fill:#37474f}',
  '.n0{stroke:#1565c0;fill:#1565c0}.n1{stroke:#ef6c00;fill:#ef6c00}.n2{stroke:#6a1b9a;fill:#6a1b9a}' +
    '.n3{stroke:#00897b;fill:#00897b}.n4{stroke:#6d4c41;fill:#6d4c41}.n5{stroke:#ad1457;fill:#ad1457}',
  '.backlog{stroke:#1565c0;fill:#1565c0}.intake{stroke:#90a4ae;fill:#90a4ae}.completed{stroke:#2e7d32;fill:#2e7d32}',
  'table{border-collapse:collapse;margin-top:4px}' +
    'td,th{border:1px solid #ddd;padding:3px 8px;text-align:left}th{background:#f0f0f0}',
  'tr.ok td.result{color:#2e7d32;font-weight:600}tr.failed td.result{color:#c62828;font-weight:600}' +
    '.missing{color:#777}',
  '',
].join('\n');

const checks = (r: Report): string => {
  const rows = [
    ...r.expectations.map((e) => ({
      kind: 'expectation',
      name: e.name,
      expected: JSON.stringify(e.expected),
      actual: e.actual === null ? '—' : String(e.actual),
      ok: e.ok,
    })),
    ...Object.entries(r.invariants).map(([name, ok]) => ({
      kind: 'invariant',
      name,
      expected: 'holds',
      actual: ok ? 'holds' : 'broken',
      ok,
    })),
    ...r.unfiredFaults.map((u) => ({
      kind: 'fault',
      name: `faults.${u.fault} ${u.kind}`,
      expected: 'fired',
      actual: u.reason,
      ok: false,
    })),
  ];
  const body = rows
    .map(
      (x) =>
        `<tr class="${x.ok ? 'ok' : 'failed'}" data-check="${esc(x.name)}">` +
        `<td>${x.kind}</td><td>${esc(x.name)}</td><td>${esc(x.expected)}</td><td>${esc(x.actual)}</td>` +
        `<td class="result">${x.ok ? 'ok' : 'FAILED'}</td></tr>`,
    )
    .join('');
  return (
    '<table class="checks"><thead><tr>' +
    '<th></th><th>check</th><th>expected</th><th>actual</th><th>result</th>' +
    `</tr></thead><tbody>${body}</tbody></table>`
  );
};

const incidents = (r: Report): string => {
  const cell = (v: number | string | null): string => `<td>${v === null ? '—' : esc(String(v))}</td>`;
  const body = r.incidents
    .map((i) => {
      const failover = i.failoverAt === null ? null : `${i.failoverAt} → ${i.newPrimary ?? '?'}`;
      const cells = [
        i.fault,
        i.node,
        i.faultAt,
        i.detectedAt,
        i.restartedAt,
        i.recoveredAt,
        failover,
        i.servingAt,
        i.trafficAt,
        i.consumeGapSeconds,
      ];
      return `<tr>${cells.map(cell).join('')}</tr>`;
    })
    .join('');
  return (
    '<table class="incidents"><thead><tr>' +
    '<th>fault</th><th>node</th><th>at</th><th>detected</th><th>restarted</th><th>recovered</th>' +
    '<th>failover</th><th>serving</th><th>traffic</th><th>longest stop</th>' +
    `</tr></thead><tbody>${body}</tbody></table>`
  );
};

const TIMELINE_NOTE =
  "<p>Each node's lane: the band above names the node while <code>leader.json</code> does (its epoch); " +
  'the bar is the role its own agent held (<em>down</em> while a fault killed or froze it). ' +
  "Red marks are faults; dots are each incident's steps (hover for times).</p>";

const HEARTBEAT_NOTE =
  '<p>Seconds since the watchdog last saw a new sample from each node, by its own clock ' +
  '(the <code>HeartbeatAge</code> metric); past the line a node is silent.</p>';

/** The whole page. */
export const drillHtml = (r: Report): string => {
  const f = frameFor(endOf(r));
  const nodes = nodesOf(r);
  const silence = 2 * DEFAULTS.sampleIntervalSeconds;
  const heartbeat = present(nodes.map((n, i) => lineFor(r, 'HeartbeatAge', n, n, `n${i % 6}`)));
  const fleet = present([
    lineFor(r, 'Epoch', null, 'epoch', 'n2'),
    lineFor(r, 'ReadyStandbys', null, 'ready standbys', 'n3'),
  ]);
  const work: Line[] = [
    {
      label: 'backlog (task queue)',
      cls: 'backlog',
      points: r.series.depths.map(([t, b]) => [t, b] as const),
      steps: true,
    },
    { label: 'intake queue', cls: 'intake', points: r.series.depths.map(([t, , i]) => [t, i] as const), steps: true },
    { label: 'tasks completed', cls: 'completed', points: [[0, 0] as const, ...r.series.completed], steps: true },
  ];
  const verdict = r.ok ? '<span class="verdict ok">passed</span>' : '<span class="verdict failed">FAILED</span>';
  const epochs = r.epochs.map((e) => `${e.epoch} ${esc(e.primary)} from ${e.from} s`).join(', ');
  const meta =
    `seed ${r.seed}, time ×${r.timeScale}, ${r.wallSeconds} s of wall time; ` +
    `${r.tasks.completed} of ${r.tasks.enqueued} tasks completed, ${r.tasks.lost} lost, ` +
    `${r.tasks.duplicateCompletions} completed twice; epochs: ${epochs}. Every time is in scenario seconds.`;
  const heartbeatChart =
    heartbeat.length === 0
      ? missing('heartbeat ages')
      : lineChart(f, {
          id: 'HeartbeatAge',
          unit: 'seconds',
          lines: heartbeat,
          threshold: { value: silence, label: `silent (${silence} s)` },
        });
  const fleetChart =
    fleet.length === 0
      ? missing('epoch or ready standbys')
      : lineChart(f, { id: 'Fleet', unit: 'count', lines: fleet });
  const incidentTable = r.incidents.length === 0 ? '<p>No fault, no incident.</p>' : incidents(r);
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Drill ${esc(r.scenario)}: ${r.ok ? 'passed' : 'FAILED'}</title><style>${CSS}</style></head>
<body>
<header><h1>Drill <code>${esc(r.scenario)}</code> ${verdict}</h1>
<p class="meta">${meta}</p></header>
<section id="timeline"><h2>Roles, faults and incidents</h2>
${TIMELINE_NOTE}
${timeline(r, f, nodes)}</section>
<section id="heartbeat"><h2>Heartbeat age</h2>
${HEARTBEAT_NOTE}
${heartbeatChart}</section>
<section id="fleet"><h2>Epoch and ready standbys</h2>
${fleetChart}</section>
<section id="work"><h2>Backlog and completions</h2>
<p>The queues' depths (visible and in flight) as the drill sampled them, and the tasks completed so far.</p>
${lineChart(f, { id: 'Work', unit: 'tasks', lines: work })}</section>
<section id="checks"><h2>Expectations and invariants</h2>${checks(r)}</section>
<section id="incidents"><h2>Incidents</h2>${incidentTable}</section>
</body></html>
`;
};
