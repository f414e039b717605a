import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext } from 'playwright-core';

/** Debian's chromium package (.ci/run installs it when it runs as root). */
export const CHROMIUM = '/usr/bin/chromium';

/** The flags that work on these machines (DEVELOPERS.md); headless and the profile folder are playwright's to set. */
const FLAGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/**
 * Why a browser test cannot run here, or null when it can. Where the browser is required
 * (QF_REQUIRE_BROWSER=1: .ci/run installed it) a missing one is a failure, never a skip.
 */
export const noBrowser = (): string | null => {
  if (existsSync(CHROMIUM)) return null;
  const why = `${CHROMIUM} is missing (apt-get install chromium)`;
  if (process.env.QF_REQUIRE_BROWSER === '1')
    throw new Error(`${why}, and QF_REQUIRE_BROWSER=1 requires it (.ci/run installs it)`);
  return why;
};

/**
 * Runs `use` in a fresh headless Chromium profile with JavaScript off and the network cut
 * (every request but the page's own file is refused and counted), then closes the browser and
 * removes the profile, whatever happened.
 */
export const withOfflinePage = async <T>(use: (ctx: BrowserContext, refused: string[]) => Promise<T>): Promise<T> => {
  const profile = mkdtempSync(join(tmpdir(), 'qf-chromium-'));
  const ctx = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: FLAGS,
    javaScriptEnabled: false,
    offline: true,
    viewport: { width: 1100, height: 900 },
  });
  const refused: string[] = [];
  try {
    await ctx.route('**/*', async (route) => {
      if (route.request().url().startsWith('file://')) return route.continue();
      refused.push(route.request().url());
      return route.abort();
    });
    return await use(ctx, refused);
  } finally {
    await ctx.close();
    rmSync(profile, { recursive: true, force: true });
  }
};
