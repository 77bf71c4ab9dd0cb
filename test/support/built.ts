import { fileURLToPath } from 'node:url';

/**
 * The built entry points in dist/ that tests start as processes: what ships, started as the supervisor
 * or `npm start` would. The test projects' global setup (test/support/ensure-build.ts) builds them first.
 */
export const built = {
  main: entry('main'),
  agent: entry('agent'),
  token: entry('token'),
  resealCredentials: entry('reseal-credentials'),
  migrate: entry('migrate'),
};

function entry(name: string): string {
  return fileURLToPath(new URL(`../../dist/${name}.js`, import.meta.url));
}
