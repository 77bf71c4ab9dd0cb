// Runs before `npm start`, `npm run agent`, `npm run demo`, `npm run token` and `npm run db:migrate`: builds dist/ when it is missing or
// older than the sources, if the build tools are installed. A production tree (dev dependencies pruned)
// never builds here; it only warns when its dist/ looks older than the sources it was shipped with.
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const built = path.join(root, 'dist', 'main.js');
// Not package-lock.json: `npm prune` rewrites it after the build.
const sources = [
  'src',
  'rest',
  'mcp',
  'agent',
  'scripts',
  'dashboard',
  'prisma/schema.prisma',
  'schema.graphql',
];

function newest(target) {
  let stats;
  try {
    stats = statSync(target);
  } catch {
    return 0;
  }
  if (!stats.isDirectory()) return stats.mtimeMs;
  let latest = 0;
  for (const entry of readdirSync(target)) {
    if (entry === 'generated') continue;
    latest = Math.max(latest, newest(path.join(target, entry)));
  }
  return latest;
}

function buildToolsInstalled() {
  try {
    createRequire(import.meta.url).resolve('esbuild');
    return true;
  } catch {
    return false;
  }
}

let builtAt = 0;
try {
  builtAt = statSync(built).mtimeMs;
} catch {}
const stale = builtAt > 0 && Math.max(...sources.map((source) => newest(path.join(root, source)))) > builtAt;
if (builtAt > 0 && !stale) process.exit(0);

if (buildToolsInstalled()) {
  const result = spawnSync(process.execPath, [path.join(root, 'scripts', 'build.mjs')], {
    cwd: root,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  process.exit(result.status ?? 1);
}
if (builtAt === 0) {
  console.error(
    'dist/ is missing and the build tools are not installed: run `npm install` then `npm run build`.',
  );
  process.exit(1);
}
console.error(
  'warning: dist/ is older than the sources and the build tools are not installed; running it anyway.',
);
