// Seals every connector credential held under an older key of CONNECTOR_SECRETS_KEY again under the
// current (first) key, then prints what it did. Exits 1 when a secret could not be opened (its key is
// missing from CONNECTOR_SECRETS_KEY, or it was altered): keep the old keys configured until it exits 0.
import { ConfigError, loadConfig } from '../src/config.js';
import { openDatabase } from '../src/db/client.js';
import { resealConnectorCredentials } from '../src/domain/connectors/credential-store.js';

let config: ReturnType<typeof loadConfig>;
try {
  config = loadConfig();
} catch (error) {
  if (!(error instanceof ConfigError)) throw error;
  console.error(error.message);
  process.exit(2);
}
if (config.connectorSecretsKeys.length === 0) {
  console.error('CONNECTOR_SECRETS_KEY is not set: there is no key to seal under');
  process.exit(2);
}
const db = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
try {
  const outcome = await resealConnectorCredentials(db.prisma, config.connectorSecretsKeys);
  const currentId = config.connectorSecretsKeys[0]?.id;
  console.log(
    `re-sealed ${outcome.resealed} under key '${currentId}'; ${outcome.current} already were; ${outcome.unreadable.length} unreadable`,
  );
  for (const { connectorId, keyId, reason } of outcome.unreadable) {
    console.error(`connector ${connectorId}: sealed under '${keyId}', ${reason.replace('_', ' ')}`);
  }
  process.exitCode = outcome.unreadable.length > 0 ? 1 : 0;
} finally {
  await db.close();
}
