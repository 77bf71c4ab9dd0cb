import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createSchema, createYoga } from 'graphql-yoga';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useDashboard } from '../../src/plugins/use-dashboard.js';
import { useSecurityHeaders } from '../../src/plugins/use-security-headers.js';

const schema = createSchema({ typeDefs: 'type Query { ok: Boolean }' });
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'boardroom-dashboard-'));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

const serve = (options: Parameters<typeof useDashboard>[0]) =>
  createYoga({ schema, plugins: [useSecurityHeaders(), useDashboard(options)], logging: false });

describe('useDashboard', () => {
  it('answers 503 with the build command when the page is not built and may not be built here', async () => {
    const yoga = serve({ dir: path.join(dir, 'missing'), buildOnDemand: false });
    const response = await yoga.fetch('http://yoga/dashboard');
    expect(response.status).toBe(503);
    expect(await response.text()).toContain('npm run build:dashboard');
  });

  it('serves the page and its assets with a same-origin-only policy', async () => {
    await writeFile(path.join(dir, 'index.html'), '<!doctype html><div id="app"></div>');
    await writeFile(path.join(dir, 'app.js'), 'console.log(1)');
    await writeFile(path.join(dir, 'app.css'), 'body{}');
    const yoga = serve({ dir });

    const page = await yoga.fetch('http://yoga/dashboard');
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(page.headers.get('content-security-policy')).toContain("connect-src 'self'");
    expect(page.headers.get('referrer-policy')).toBe('no-referrer');
    expect(await page.text()).toContain('id="app"');
    const script = await yoga.fetch('http://yoga/dashboard/app.js');
    expect(script.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect((await yoga.fetch('http://yoga/dashboard/app.css')).headers.get('content-type')).toBe(
      'text/css; charset=utf-8',
    );
    expect((await yoga.fetch('http://yoga/dashboard/other.js')).status).toBe(404);
  });
});
