import { existsSync } from 'node:fs';
import { CHROMIUM } from './chromium.js';

/** With BROWSER_TESTS=1 (CI) a missing Chromium fails the run instead of skipping the browser tests. */
export default function requireChromium() {
  if (!existsSync(CHROMIUM)) {
    throw new Error(
      `the browser tests need Chromium at ${CHROMIUM} (apt-get install -y chromium), or CHROMIUM_PATH set`,
    );
  }
}
