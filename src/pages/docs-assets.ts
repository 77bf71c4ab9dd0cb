import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';

const require = createRequire(import.meta.url);
const packageDir = path.dirname(require.resolve('swagger-ui-dist/package.json'));
const { version } = require('swagger-ui-dist/package.json') as { version: string };

/** Where the REST reference's assets are served; the version in the path lets browsers cache them forever. */
export const DOCS_ASSETS_PREFIX = `/docs/assets/swagger-ui-${version}/`;

const contentTypes: Record<string, string> = {
  'swagger-ui-bundle.js': 'text/javascript; charset=utf-8',
  'swagger-ui-bundle.js.map': 'application/json',
  'swagger-ui.css': 'text/css; charset=utf-8',
  'swagger-ui.css.map': 'application/json',
  'favicon-32x32.png': 'image/png',
};

export type DocsAsset = keyof typeof contentTypes;

export const docsAssetUrl = (file: DocsAsset) => `${DOCS_ASSETS_PREFIX}${file}`;

const loaded = new Map<string, Promise<Buffer>>();

/** The named file of swagger-ui-dist, read from node_modules once; undefined for any other name. */
export function readDocsAsset(file: string): { body: Promise<Buffer>; contentType: string } | undefined {
  const contentType = Object.hasOwn(contentTypes, file) ? contentTypes[file] : undefined;
  if (!contentType) return undefined;
  let body = loaded.get(file);
  if (!body) {
    body = readFile(path.join(packageDir, file));
    loaded.set(file, body);
  }
  return { body, contentType };
}
