// Prints a token signed with the configured secret:
//   npm run token -- --tenant <uuid> --sub <id> --roles chairman,operator [--ttl 1h]
// Bad input prints the usage line and exits 2; it never shows a stack trace.
import { parseArgs } from 'node:util';
import { loadOrCreateDevSecret } from '../src/auth/dev-secret.js';
import { signToken } from '../src/auth/tokens.js';
import { ROLES } from '../src/auth/viewer.js';
import { ConfigError, loadConfig } from '../src/config.js';

const usage = `usage: npm run token -- --tenant <uuid> --sub <id> [--roles ${ROLES.join(',')}] [--ttl 1h]`;
// The durations jose accepts for `exp`, restricted to the future: a number and a unit.
const TTL = /^\d+ ?(s|secs?|seconds?|m|mins?|minutes?|h|hrs?|hours?|d|days?|w|weeks?)$/i;

function refuse(problem: string): never {
  console.error(problem);
  console.error(usage);
  process.exit(2);
}

let values: { tenant?: string; sub?: string; roles: string; ttl: string; help?: boolean };
try {
  ({ values } = parseArgs({
    options: {
      tenant: { type: 'string' },
      sub: { type: 'string' },
      roles: { type: 'string', default: 'member' },
      ttl: { type: 'string', default: '1h' },
      help: { type: 'boolean', short: 'h' },
    },
  }));
} catch (error) {
  refuse((error as Error).message);
}
if (values.help) {
  console.log(usage);
  console.log('Roles: any of', ROLES.join(', '), '(comma-separated; default member). TTL: e.g. 30m, 1h, 7d.');
  process.exit(0);
}
const roles = values.roles
  .split(',')
  .map((role) => role.trim())
  .filter(Boolean);
const unknown = roles.filter((role) => !(ROLES as readonly string[]).includes(role));
if (!values.tenant || !/^[0-9a-f]{8}(-[0-9a-f]{4}){3}-[0-9a-f]{12}$/i.test(values.tenant)) {
  refuse('--tenant must be a uuid');
}
if (!values.sub?.trim()) refuse('--sub is required');
if (roles.length === 0 || unknown.length > 0)
  refuse(`unknown roles: ${unknown.join(', ') || '(none given)'}`);
if (!TTL.test(values.ttl))
  refuse(`--ttl ${JSON.stringify(values.ttl)} is not a duration such as 30m, 1h or 7d`);

try {
  const config = loadConfig();
  if (config.auth.jwksUrl && !config.auth.jwtSecret) {
    console.error('AUTH_JWKS_URL is set: tokens come from your identity provider, not from this command.');
    process.exit(2);
  }
  const secret = config.auth.jwtSecret ?? (await loadOrCreateDevSecret(config.dataDir));
  console.log(
    await signToken(secret, {
      tenantId: values.tenant,
      sub: values.sub,
      roles,
      ttl: values.ttl,
      issuer: config.auth.issuer,
      audience: config.auth.audience,
    }),
  );
} catch (error) {
  console.error(error instanceof ConfigError ? error.message : `token: ${(error as Error).message}`);
  process.exit(error instanceof ConfigError ? 2 : 1);
}
