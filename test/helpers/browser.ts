import { existsSync } from 'node:fs';
import { type Browser, chromium } from 'playwright-core';

/** Debian's Chromium, which `.ci/run` installs; browser tests drive it through playwright-core. */
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/**
 * Why the browser tests cannot run here, or undefined when they can. A newcomer's machine may lack
 * Chromium: the tests are then skipped with that reason, except where `REQUIRE_BROWSER=1` (set by
 * `.ci/run`), where a missing browser fails them.
 */
export function browserUnavailable(): string | undefined {
  if (existsSync(CHROMIUM_PATH) || process.env.REQUIRE_BROWSER === '1') return undefined;
  return `no Chromium at ${CHROMIUM_PATH} (apt-get install chromium, or set CHROMIUM_PATH)`;
}

/** Launches headless Chromium, isolated from the network services a desktop browser would call. */
export function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}
