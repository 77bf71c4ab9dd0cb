import type { Plugin } from 'graphql-yoga';
import { restErrorResponse } from '../errors.js';
import { DOCS_ASSETS_PREFIX, readDocsAsset } from '../pages/docs-assets.js';
import { renderLandingPage } from '../pages/landing.js';
import { page } from '../pages/security.js';

export interface UsePagesOptions {
  /** Whether the landing page links GraphiQL (yoga serves it at /graphql outside production). Default `true`. */
  graphiql?: boolean;
}

const ONE_YEAR = 365 * 24 * 60 * 60;

/** Serves `/` (the landing page) and the REST reference's assets under `/docs/assets/`, from this server only. */
export function usePages({ graphiql = true }: UsePagesOptions = {}): Plugin {
  const landing = page('/', renderLandingPage({ graphiql }));
  return {
    async onRequest({ request, url, endResponse, fetchAPI }) {
      if (request.method !== 'GET' && request.method !== 'HEAD') return;
      if (url.pathname === '/') {
        endResponse(
          new fetchAPI.Response(landing, {
            headers: { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-cache' },
          }),
        );
        return;
      }
      if (!url.pathname.startsWith(DOCS_ASSETS_PREFIX)) return;
      const asset = readDocsAsset(url.pathname.slice(DOCS_ASSETS_PREFIX.length));
      if (!asset) {
        endResponse(restErrorResponse(404, 'Not Found', {}, fetchAPI));
        return;
      }
      endResponse(
        new fetchAPI.Response(new Uint8Array(await asset.body), {
          headers: {
            'content-type': asset.contentType,
            // The package version is part of the path, so a new version is a new URL.
            'cache-control': `public, max-age=${ONE_YEAR}, immutable`,
          },
        }),
      );
    },
  };
}
