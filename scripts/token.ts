// Prints a token signed with the configured secret:
//   npm run token -- --tenant <uuid> --sub <id> --roles chairman,operator [--ttl 1h]
import { parseArgs } from 'node:util';
import { loadOrCreateDevSecret } from '../src/auth/dev-secret.js';
import { signToken } from '../src/auth/tokens.js';
import { ROLES } from '../src/auth/viewer.js';
import { loadConfig } from '../src/config.js';

const { values } = parseArgs({
  options: {
    tenant: { type: 'string' },
    sub: { type: 'string' },
    roles: { type: 'string', default: 'member' },
    ttl: { type: 'string', default: '1h' },
  },
});
const roles = (values.roles ?? '')
  .split(',')
  .map((role) => role.trim())
  .filter(Boolean);
const unknown = roles.filter((role) => !(ROLES as readonly string[]).includes(role));
if (!values.tenant || !/^[0-9a-f-]{36}$/i.test(values.tenant) || !values.sub || unknown.length > 0) {
  console.error(`usage: npm run token -- --tenant <uuid> --sub <id> --roles ${ROLES.join(',')} [--ttl 1h]`);
  if (unknown.length > 0) console.error(`unknown roles: ${unknown.join(', ')}`);
  process.exit(2);
}
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
