import { afterAll, describe, expect, it } from 'vitest';
import type { RunningServer } from '../../src/server.js';
import { serveTestApp } from '../support/fixtures.js';
import { type Browser, launchBrowser } from './support/browser.js';

let server: RunningServer;
let browser: Browser;

serveTestApp(async (app) => {
  ({ server } = app);
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
});

describe('/ in Chromium', () => {
  it('renders its links, and requests nothing from another host', async () => {
    const page = await browser.open(`${server.url}/`);
    await expect.poll(() => page.getByRole('heading', { name: 'Boardroom' }).isVisible()).toBe(true);
    const links = await page
      .locator('a')
      .evaluateAll((anchors) => anchors.map((anchor) => [anchor.textContent, anchor.getAttribute('href')]));
    expect(links).toEqual([
      ['GraphiQL', '/graphql'],
      ['REST API reference', '/docs'],
      ['/api/v1/openapi.json', '/api/v1/openapi.json'],
      ['Live dashboard', '/dashboard'],
      ['Readiness', '/readyz'],
      ['/healthz', '/healthz'],
    ]);
    await expect.poll(() => page.getByText('npm run token -- --tenant').isVisible()).toBe(true);
    await browser.screenshot(page, 'landing');
    expect(browser.foreignRequests(server.url)).toEqual([]);
  });

  it('works with JavaScript off', async () => {
    const page = await browser.open(`${server.url}/`, { javaScript: false });
    await expect.poll(() => page.getByRole('link', { name: 'REST API reference' }).isVisible()).toBe(true);
    await browser.screenshot(page, 'landing-no-javascript');
    expect(browser.foreignRequests(server.url)).toEqual([]);
  });

  it('reported no Content-Security-Policy violation', () => {
    expect(browser.cspViolations()).toEqual([]);
  });
});
