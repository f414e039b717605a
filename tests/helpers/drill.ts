import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Report } from '../../lib/core/drill/report';
import { ROOT, runFleet } from './children';

export const DRILL_OUT = mkdtempSync(join(tmpdir(), 'qf-drill-test-'));
export const scenarioFile = (name: string): string => join(ROOT, 'tests/scenarios', `${name}.json`);
export const DRILL_MS = 150_000;

/** Runs `fleet drill` on one of tests/scenarios at ×20, seed 1, and reads its JSON report. */
export const drill = async (
  name: string,
  extra: string[] = [],
  timeoutMs = DRILL_MS,
): Promise<{ code: number | null; report: Report; stdout: string }> => {
  const json = join(DRILL_OUT, `${name}.json`);
  const res = await runFleet(
    ['drill', '--scenario', scenarioFile(name), '--time-scale', '20', '--seed', '1', '--json', json, ...extra],
    timeoutMs,
  );
  if (res.code !== 0 && res.code !== 1) throw new Error(`drill ${name} exited ${res.code}: ${res.stderr}`);
  return { code: res.code, report: JSON.parse(readFileSync(json, 'utf8')) as Report, stdout: res.stdout };
};

/** The expectation's measured value. */
export const actual = (report: Report, name: string): number | null | undefined =>
  report.expectations.find((e) => e.name === name)?.actual;

/** Every expectation and invariant held; the failing ones are named when not. */
export const passed = (report: Report): void => {
  const failing = [
    ...report.expectations.filter((e) => !e.ok).map((e) => `${e.name}: ${JSON.stringify(e.actual)}`),
    ...Object.entries(report.invariants)
      .filter(([, ok]) => !ok)
      .map(([name]) => name),
    ...report.unfiredFaults.map((u) => u.reason),
  ];
  expect(failing).toEqual([]);
  expect(report.ok).toBe(true);
};
