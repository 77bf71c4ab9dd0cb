import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/**
 * Global setup: the tests that start the server, the agent runtime or the operator commands as processes
 * run the build in dist/, what ships (test/support/built.ts), so dist/ is built first when it is missing
 * or older than the sources, as `npm start` does.
 */
export default function ensureBuild() {
  const script = fileURLToPath(new URL('../../scripts/ensure-build.mjs', import.meta.url));
  const result = spawnSync(process.execPath, [script], { stdio: ['ignore', 'inherit', 'inherit'] });
  if (result.status !== 0) throw new Error(`scripts/ensure-build.mjs failed (exit ${result.status})`);
}
