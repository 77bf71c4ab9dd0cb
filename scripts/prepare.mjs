// `npm install` / `npm ci` run this: with the dev dependencies present it builds (which also generates the
// Prisma client and the typed documents the tests import). `npm ci --omit=dev` has no build tools, so it
// only says so; such a tree needs a dist/ built elsewhere (see docs/production.md).
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';

try {
  createRequire(import.meta.url).resolve('esbuild');
} catch {
  console.log('boardroom: build tools not installed (production install); skipping the build.');
  process.exit(0);
}
const result = spawnSync(process.execPath, [new URL('build.mjs', import.meta.url).pathname], {
  stdio: 'inherit',
});
process.exit(result.status ?? 1);
