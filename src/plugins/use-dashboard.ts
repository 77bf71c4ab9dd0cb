import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { Plugin } from 'graphql-yoga';
import { page } from '../pages/security.js';

export interface UseDashboardOptions {
  /** Where `npm run build:dashboard` wrote the page. Default `dist/dashboard` under the working directory. */
  dir?: string;
  /**
   * Build the page on the first request when it is missing (needs the dev dependencies). Default false;
   * the app turns it on outside production. Otherwise a missing build answers 503 saying how to make it.
   */
  buildOnDemand?: boolean;
}

const FILES: Record<string, { file: string; type: string }> = {
  '/dashboard': { file: 'index.html', type: 'text/html; charset=utf-8' },
  '/dashboard/': { file: 'index.html', type: 'text/html; charset=utf-8' },
  '/dashboard/app.js': { file: 'app.js', type: 'text/javascript; charset=utf-8' },
  '/dashboard/app.css': { file: 'app.css', type: 'text/css; charset=utf-8' },
};

const NOT_BUILT = page(
  '/dashboard',
  `<!doctype html><html lang="en"><meta charset="utf-8"><title>Dashboard not built</title>
<style>body{font-family:system-ui;max-width:40rem;margin:4rem auto}</style>
<h1>The dashboard is not built</h1><p>Run <code>npm run build:dashboard</code>, then reload this page.</p>`,
);

/** Serves the live dashboard built into `dir` at `/dashboard` (its script and style sheet beside it). */
export function useDashboard({
  dir = path.resolve('dist', 'dashboard'),
  buildOnDemand = false,
}: UseDashboardOptions = {}): Plugin {
  let building: Promise<unknown> | undefined;

  async function read(file: string): Promise<Buffer | null> {
    const attempt = () => readFile(path.join(dir, file)).catch(() => null);
    const found = await attempt();
    if (found || !buildOnDemand) return found;
    building ??= import(new URL('../../scripts/build-dashboard.mjs', import.meta.url).href)
      .then((module: { buildDashboard(options: { outDir: string }): Promise<string> }) =>
        module.buildDashboard({ outDir: dir }),
      )
      .catch(() => undefined);
    await building;
    return attempt();
  }

  return {
    async onRequest({ request, url, endResponse, fetchAPI }) {
      const entry = FILES[url.pathname];
      if (!entry || (request.method !== 'GET' && request.method !== 'HEAD')) return;
      const body = await read(entry.file);
      if (!body) {
        endResponse(
          new fetchAPI.Response(NOT_BUILT, {
            status: 503,
            headers: {
              'content-type': 'text/html; charset=utf-8',
              'cache-control': 'no-cache',
              'retry-after': '10',
            },
          }),
        );
        return;
      }
      endResponse(
        new fetchAPI.Response(request.method === 'HEAD' ? null : new Uint8Array(body), {
          headers: { 'content-type': entry.type, 'cache-control': 'no-cache' },
        }),
      );
    },
  };
}
