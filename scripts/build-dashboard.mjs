// Bundles the dashboard (dashboard/) into dist/dashboard/: index.html, app.js and app.css, minified, with
// every dependency inside (the page loads nothing from another host). `npm run build:dashboard`; the
// gateway serves the result at /dashboard. Writes nothing outside dist/dashboard/.
import { copyFile, mkdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));

/** Builds into `outDir` (default dist/dashboard under the project); resolves with the directory. */
export async function buildDashboard({ outDir = path.join(root, 'dist', 'dashboard') } = {}) {
  const { build } = await import('esbuild');
  await rm(outDir, { recursive: true, force: true });
  await mkdir(outDir, { recursive: true });
  await build({
    entryPoints: { app: path.join(root, 'dashboard', 'src', 'main.tsx') },
    outdir: outDir,
    bundle: true,
    format: 'esm',
    minify: true,
    target: ['chrome110', 'firefox110', 'safari16'],
    jsx: 'automatic',
    jsxImportSource: 'preact',
    tsconfig: path.join(root, 'dashboard', 'tsconfig.json'),
    legalComments: 'none',
    logLevel: 'warning',
    define: { 'process.env.NODE_ENV': '"production"' },
  });
  await copyFile(path.join(root, 'dashboard', 'index.html'), path.join(outDir, 'index.html'));
  return outDir;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const started = performance.now();
  const outDir = await buildDashboard();
  console.log(
    `built ${path.relative(process.cwd(), outDir)} in ${Math.round(performance.now() - started)} ms`,
  );
}
