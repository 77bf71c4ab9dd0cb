import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { type Keyring, type SealedSecret, seal, unseal } from '../connectors/sealing.js';

/** How long the secret before a rotation keeps signing beside the new one. */
export const ROTATION_OVERLAP_MS = 24 * 60 * 60 * 1000;

/** A new Standard Webhooks secret: `whsec_` and 32 random bytes in base64. */
export function newWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

/** Binds a sealed secret to its webhook: copied to another row or tenant, it no longer opens. */
const sealingContext = (tenantId: string, webhookId: string) => `webhook-secret\n${tenantId}\n${webhookId}`;

export function sealWebhookSecret(
  keyring: Keyring,
  tenantId: string,
  webhookId: string,
  secret: string,
): SealedSecret {
  return seal(keyring, secret, sealingContext(tenantId, webhookId));
}

export function unsealWebhookSecret(
  keyring: Keyring,
  tenantId: string,
  webhookId: string,
  sealed: SealedSecret,
): string {
  return unseal(keyring, sealed, sealingContext(tenantId, webhookId));
}

/** The Standard Webhooks headers of one attempt: one `v1,<signature>` per secret, space-separated. */
export function signedHeaders(
  secrets: readonly string[],
  messageId: string,
  at: Date,
  body: string,
): Record<string, string> {
  return {
    'webhook-id': messageId,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': secrets.map((secret) => new Webhook(secret).sign(messageId, at, body)).join(' '),
  };
}
