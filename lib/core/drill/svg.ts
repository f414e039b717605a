/**
 * The drill page's charts as inline SVG, drawn here rather than in the browser: the page needs
 * no script and no network to open (lib/core/drill/html.ts). Pure text.
 */

/** Escapes text for HTML and SVG, attributes included. */
export const esc = (s: string): string =>
  s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');

/** Chart geometry: the plot sits between the margins; x is scenario seconds from 0 to `end`. */
export interface Frame {
  width: number;
  left: number;
  right: number;
  end: number;
}

export const FRAME_WIDTH = 1000;

export const frameFor = (end: number): Frame => ({ width: FRAME_WIDTH, left: 110, right: 20, end: Math.max(1, end) });

export const xOf = (f: Frame, t: number): number =>
  f.left + (Math.min(Math.max(t, 0), f.end) / f.end) * (f.width - f.left - f.right);

const fmt = (n: number): string => (Math.round(n * 10) / 10).toString();

/** A tick step of 1, 2 or 5 times a power of ten that gives about `count` ticks. */
export const niceStep = (span: number, count: number): number => {
  const raw = Math.max(span, 1e-9) / Math.max(1, count);
  const power = 10 ** Math.floor(Math.log10(raw));
  const m = raw / power;
  return (m <= 1 ? 1 : m <= 2 ? 2 : m <= 5 ? 5 : 10) * power;
};

/** The time axis under a plot whose bottom is at `y`, with grid lines up to `top`. */
export const timeAxis = (f: Frame, top: number, y: number): string => {
  const step = niceStep(f.end, 12);
  const parts: string[] = [`<line class="axis" x1="${f.left}" y1="${y}" x2="${f.width - f.right}" y2="${y}"/>`];
  for (let t = 0; t <= f.end + 1e-9; t += step) {
    const x = fmt(xOf(f, t));
    parts.push(
      `<line class="grid" x1="${x}" y1="${top}" x2="${x}" y2="${y}"/>`,
      `<text class="tick" x="${x}" y="${y + 14}" text-anchor="middle">${fmt(t)}</text>`,
    );
  }
  parts.push(`<text class="tick" x="${f.width - f.right}" y="${y + 28}" text-anchor="end">scenario seconds</text>`);
  return parts.join('');
};

export interface Line {
  label: string;
  /** A CSS class of its own (its colour). */
  cls: string;
  points: readonly (readonly [number, number])[];
  /** Drawn as steps (a count that holds until it changes) rather than straight between points. */
  steps?: boolean;
}

const pathOf = (f: Frame, y: (v: number) => number, line: Line): string => {
  const pts: string[] = [];
  let last: string | null = null;
  for (const [t, v] of line.points) {
    const x = fmt(xOf(f, t));
    if (line.steps === true && last !== null) pts.push(`${x},${last}`);
    last = fmt(y(v));
    pts.push(`${x},${last}`);
  }
  if (line.steps === true && last !== null && line.points.length > 0) pts.push(`${fmt(xOf(f, f.end))},${last}`);
  return pts.join(' ');
};

/**
 * A line chart over scenario time: a polyline a series (each point also a dot with its value
 * in a tooltip), an optional horizontal threshold, a legend. `data-series` names the chart and
 * `data-label` each line, for whoever reads the page by machine.
 */
export const lineChart = (
  f: Frame,
  opts: { id: string; unit: string; lines: readonly Line[]; threshold?: { value: number; label: string } },
): string => {
  const height = 200;
  const top = 10;
  const bottom = height - 40;
  const values = [...opts.lines.flatMap((l) => l.points.map(([, v]) => v)), opts.threshold?.value ?? 0, 1];
  const step = niceStep(Math.max(...values), 4);
  const max = Math.ceil(Math.max(...values) / step) * step;
  const y = (v: number): number => bottom - (v / max) * (bottom - top);
  const parts: string[] = [
    `<svg class="chart series" data-series="${esc(opts.id)}" viewBox="0 0 ${f.width} ${height}" ` +
      `role="img" aria-label="${esc(opts.id)}">`,
  ];
  for (let v = 0; v <= max + 1e-9; v += step)
    parts.push(
      `<line class="grid" x1="${f.left}" y1="${fmt(y(v))}" x2="${f.width - f.right}" y2="${fmt(y(v))}"/>`,
      `<text class="tick" x="${f.left - 6}" y="${fmt(y(v) + 4)}" text-anchor="end">${fmt(v)}</text>`,
    );
  parts.push(`<text class="tick" x="4" y="${top + 10}">${esc(opts.unit)}</text>`, timeAxis(f, top, bottom));
  if (opts.threshold !== undefined) {
    const ty = fmt(y(opts.threshold.value));
    parts.push(
      `<line class="threshold" x1="${f.left}" y1="${ty}" x2="${f.width - f.right}" y2="${ty}"/>`,
      `<text class="threshold-label" x="${f.width - f.right - 4}" y="${fmt(y(opts.threshold.value) - 4)}" ` +
        `text-anchor="end">${esc(opts.threshold.label)}</text>`,
    );
  }
  for (const line of opts.lines) {
    parts.push(
      `<polyline class="line ${esc(line.cls)}" data-label="${esc(line.label)}" points="${pathOf(f, y, line)}"/>`,
    );
    for (const [t, v] of line.points)
      parts.push(
        `<circle class="dot ${esc(line.cls)}" cx="${fmt(xOf(f, t))}" cy="${fmt(y(v))}" r="2">` +
          `<title>${esc(line.label)} at ${fmt(t)} s: ${fmt(v)}</title></circle>`,
      );
  }
  parts.push(
    legend(
      f,
      opts.lines.map((l) => ({ label: l.label, cls: l.cls })),
      height - 8,
    ),
    '</svg>',
  );
  return parts.join('');
};

/** A row of coloured swatches with their labels along the bottom of a chart. */
export const legend = (f: Frame, items: readonly { label: string; cls: string }[], y: number): string => {
  let x = f.left;
  const parts: string[] = [];
  for (const item of items) {
    parts.push(
      `<rect class="swatch ${esc(item.cls)}" x="${x}" y="${y - 9}" width="12" height="10"/>`,
      `<text class="legend" x="${x + 16}" y="${y}">${esc(item.label)}</text>`,
    );
    x += 30 + item.label.length * 7;
  }
  return `<g class="legend-row">${parts.join('')}</g>`;
};
