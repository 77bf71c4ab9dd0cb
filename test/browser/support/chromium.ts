import { existsSync } from 'node:fs';

/** Debian's Chromium (`apt-get install chromium`); the browser tests drive it with playwright-core. */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** Whether the browser project runs: Chromium is installed, or BROWSER_TESTS=1 demands it. */
export const browserTestsEnabled = () => process.env.BROWSER_TESTS === '1' || existsSync(CHROMIUM);
