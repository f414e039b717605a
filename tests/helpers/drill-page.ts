import { statSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import type { Report } from '../../lib/core/drill/report';
import { withOfflinePage } from './browser';

/**
 * Opens a drill's HTML page (`fleet drill --html`) in headless Chromium with no script and no
 * network, checks that what explains a failover is drawn (each node's lane with its lease and
 * role, the fault, the failover step, the heartbeat ages, the backlog, every check), and takes
 * a screenshot next to it.
 */
export const expectDrillPage = async (file: string, report: Report, screenshot: string): Promise<void> => {
  const failover = report.incidents.find((i) => i.failoverAt !== null);
  if (failover === undefined || failover.newPrimary === null)
    throw new Error('expectDrillPage wants a drill with a failover');
  const nodes = Object.keys(report.heartbeatGaps).sort();
  await withOfflinePage(async (ctx, refused) => {
    const page = await ctx.newPage();
    await page.goto(pathToFileURL(file).href);
    expect(await page.title()).toBe(`Drill ${report.scenario}: ${report.ok ? 'passed' : 'FAILED'}`);
    // The timeline: a lane a node and the fleet's; the new epoch on the new primary's
    // lane; the fault on the old one's; the failover step on the new one's.
    const lanes = page.locator('svg.timeline g.lane');
    expect(
      await Promise.all(Array.from({ length: await lanes.count() }, (_, i) => lanes.nth(i).getAttribute('data-lane'))),
    ).toEqual([...nodes, 'fleet']);
    const epoch = report.epochs.at(-1)!.epoch;
    expect(
      await page
        .locator(`svg.timeline g.lane[data-lane="${failover.newPrimary}"] rect.lease[data-epoch="${epoch}"]`)
        .count(),
    ).toBe(1);
    expect(
      await page.locator(`svg.timeline g.lane[data-lane="${failover.newPrimary}"] rect.role-primary`).count(),
    ).toBeGreaterThanOrEqual(1);
    expect(await page.locator(`svg.timeline g.fault[data-node="${failover.node}"]`).count()).toBeGreaterThanOrEqual(1);
    expect(
      await page.locator(`svg.timeline circle[data-step="failover"][data-node="${failover.newPrimary}"]`).count(),
    ).toBeGreaterThanOrEqual(1);
    // The series: a heartbeat-age line a node with the silence line, and the backlog and completions.
    for (const node of nodes)
      expect(
        (
          (await page
            .locator(`svg[data-series="HeartbeatAge"] polyline[data-label="${node}"]`)
            .getAttribute('points')) ?? ''
        ).split(' ').length,
      ).toBeGreaterThanOrEqual(2);
    expect(await page.locator('svg[data-series="HeartbeatAge"] line.threshold').count()).toBe(1);
    for (const label of ['backlog (task queue)', 'tasks completed'])
      expect(
        (
          (await page.locator(`svg[data-series="Work"] polyline[data-label="${label}"]`).getAttribute('points')) ?? ''
        ).split(' ').length,
      ).toBeGreaterThanOrEqual(2);
    // Every expectation and invariant, each with its result.
    expect(await page.locator('table.checks tbody tr').count()).toBe(
      report.expectations.length + Object.keys(report.invariants).length,
    );
    expect(await page.locator('table.checks tbody tr.failed').count()).toBe(
      report.expectations.filter((e) => !e.ok).length + Object.values(report.invariants).filter((ok) => !ok).length,
    );
    // Laid out, not just present: the timeline spans the page.
    expect((await page.locator('svg.timeline').boundingBox())?.width).toBeGreaterThan(900);
    await page.screenshot({ path: screenshot, fullPage: true });
    expect(refused).toEqual([]);
  });
  expect(statSync(screenshot).size).toBeGreaterThan(20_000);
};
