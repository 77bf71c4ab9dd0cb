import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { type Caller, createTestApp, type TestApp } from '../support/app.js';
import {
  CREATE_WEBHOOK,
  createWebhook,
  DELIVERIES,
  DISABLE_WEBHOOK,
  ENABLE_WEBHOOK,
  nth,
  PRIVATE_HOST,
  queueTask,
  RECEIVER_HOST,
  RECORDED,
  REDELIVER,
  type Receiver,
  ROTATE_SECRET,
  startReceiver,
  WEBHOOK,
  WEBHOOKS,
  webhookEnv,
} from './webhooks-support.js';

let receiver: Receiver;
let t: TestApp;
/** The same service without CONNECTOR_SECRETS_KEY. */
let keyless: TestApp;

beforeAll(async () => {
  const started = await startReceiver();
  receiver = started.receiver;
  receiver.answer('/hook', (_delivery, response) => void response.writeHead(200).end());
  const egress = { ca: started.ca, lookup: started.lookup };
  [t, keyless] = await Promise.all([
    createTestApp({ env: webhookEnv(receiver), egress }),
    createTestApp({ env: { CONNECTOR_EGRESS_ALLOW: `127.0.0.1:${receiver.server.port}` }, egress }),
  ]);
});
afterAll(async () => {
  await Promise.all([t?.close(), keyless?.close()]);
  await receiver?.close();
});

/** Everything a webhook write may leave behind in a tenant. */
async function rowsOf(app: TestApp, tenantId: string) {
  const prisma = app.db.prisma;
  const [webhooks, deliveries, audits] = await Promise.all([
    prisma.webhook.count({ where: { tenantId } }),
    prisma.webhookDelivery.count({ where: { tenantId } }),
    prisma.auditEntry.count({ where: { tenantId, action: { startsWith: 'webhook.' } } }),
  ]);
  return { webhooks, deliveries, audits };
}

const codeOf = (result: { errors?: readonly { extensions?: Record<string, unknown> }[] }) =>
  result.errors?.[0]?.extensions?.code;

describe('registration', () => {
  it('answers the secret once, stores it sealed and writes an audit row without it', async () => {
    const operator = await t.caller(['operator']);
    const created = await createWebhook(t, operator, { url: receiver.url('/hook'), role: 'cfo' });
    expect(created.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(created.webhook).toMatchObject({ role: 'cfo', status: 'active', url: receiver.url('/hook') });

    const row = await t.db.prisma.webhook.findUniqueOrThrow({ where: { id: created.id } });
    const key = created.secret.slice('whsec_'.length);
    expect(Buffer.from(row.sealedSecret).toString('latin1')).not.toContain(key);
    expect(Buffer.from(row.sealedSecret).toString('base64')).not.toContain(key);
    const audit = await t.db.prisma.auditEntry.findFirstOrThrow({
      where: { tenantId: operator.tenantId, action: 'webhook.created' },
    });
    expect(JSON.stringify(audit)).not.toContain(key);

    const listed = await t.graphql<any, unknown>(WEBHOOKS, undefined, operator);
    expect(listed.data.webhooks).toHaveLength(1);
    expect(JSON.stringify(listed)).not.toContain(key);
  });

  it('takes a tenant-wide webhook without a role, and registered roles of the tenant', async () => {
    const chairman = await t.caller(['chairman']);
    const all = await createWebhook(t, chairman, { url: receiver.url('/hook') });
    expect(all.webhook.role).toBeNull();
    const registered = await t.graphql<any, unknown>(
      'mutation { registerAgentRole(input: { role: "treasury" }) { role } }',
      undefined,
      chairman,
    );
    expect(registered.errors).toBeUndefined();
    const treasury = await createWebhook(t, chairman, { url: receiver.url('/hook'), role: 'Treasury' });
    expect(treasury.webhook.role).toBe('treasury');
  });

  const refusedUrls: [string, RegExp][] = [
    ['http://hooks.acme-payments.com/hook', /url must use https/],
    ['https://127.0.0.1/hook', /url host 127\.0\.0\.1 is a loopback address/],
    ['https://localhost/hook', /url host localhost is a loopback host name/],
    ['https://hooks.internal/hook', /non-public \.internal domain/],
    ['https://169.254.169.254/latest', /url host 169\.254\.169\.254/],
    ['https://user:pw@hooks.acme-payments.com/hook', /must not contain user info/],
    ['https://[::1]/hook', /url host \[::1\]/],
    ['not-a-url', /must be an absolute URL/],
    ['', /must not be empty/],
    [`https://${PRIVATE_HOST}/hook`, /resolved to 10\.1\.2\.3, which .*refused/],
    ['https://unknown.acme-payments.com/hook', /could not be resolved/],
  ];
  it.each(refusedUrls)('refuses %s with the reason and stores nothing', async (url, reason) => {
    const chairman = await t.caller(['chairman']);
    const result = await t.graphql<any, unknown>(CREATE_WEBHOOK, { input: { url, role: 'cfo' } }, chairman);
    expect(codeOf(result)).toBe('BAD_USER_INPUT');
    expect(result.errors?.[0]?.message).toMatch(reason);
    expect(await rowsOf(t, chairman.tenantId)).toEqual({ webhooks: 0, deliveries: 0, audits: 0 });
  });

  it('refuses the receiver’s own port when the allowlist does not name it', async () => {
    const chairman = await t.caller(['chairman']);
    const url = `https://${RECEIVER_HOST}:${receiver.server.port + 1}/hook`;
    const result = await t.graphql<any, unknown>(CREATE_WEBHOOK, { input: { url } }, chairman);
    expect(result.errors?.[0]?.message).toMatch(
      /resolved to 127\.0\.0\.1, which is a loopback address; .* are refused/,
    );
    expect(await rowsOf(t, chairman.tenantId)).toEqual({ webhooks: 0, deliveries: 0, audits: 0 });
  });

  it('refuses an unknown role (NOT_FOUND) and a malformed one (BAD_USER_INPUT), storing nothing', async () => {
    const chairman = await t.caller(['chairman']);
    const unknown = await t.graphql<any, unknown>(
      CREATE_WEBHOOK,
      { input: { url: receiver.url('/hook'), role: 'astronaut' } },
      chairman,
    );
    expect(codeOf(unknown)).toBe('NOT_FOUND');
    const long = await t.graphql<any, unknown>(
      CREATE_WEBHOOK,
      { input: { url: receiver.url('/hook'), role: 'x'.repeat(65) } },
      chairman,
    );
    expect(codeOf(long)).toBe('BAD_USER_INPUT');
    const typed = await t.graphql<any, unknown>(CREATE_WEBHOOK, { input: { url: 42 } }, chairman);
    expect(typed.errors).toBeDefined();
    expect(await rowsOf(t, chairman.tenantId)).toEqual({ webhooks: 0, deliveries: 0, audits: 0 });
  });

  it('needs CONNECTOR_SECRETS_KEY to store a secret (NOT_CONFIGURED), storing nothing', async () => {
    const chairman = await keyless.caller(['chairman']);
    const result = await keyless.graphql<any, unknown>(
      CREATE_WEBHOOK,
      { input: { url: receiver.url('/hook') } },
      chairman,
    );
    expect(codeOf(result)).toBe('NOT_CONFIGURED');
    expect(await rowsOf(keyless, chairman.tenantId)).toEqual({ webhooks: 0, deliveries: 0, audits: 0 });
  });
});

describe('roles', () => {
  it.each([['member'], ['agent']] as const)(
    'refuses a %s every webhook field (FORBIDDEN), changing nothing',
    async (role) => {
      const chairman = await t.caller(['chairman']);
      const { id } = await createWebhook(t, chairman, { url: receiver.url('/hook'), role: 'cfo' });
      await queueTask(t, chairman, 'cfo');
      // The relay writes the delivery just after the chat commits.
      const delivery = await vi.waitFor(
        () => t.db.prisma.webhookDelivery.findFirstOrThrow({ where: { webhookId: id, status: 'delivered' } }),
        RECORDED,
      );
      const before = await rowsOf(t, chairman.tenantId);
      const caller = await t.caller([role], { tenantId: chairman.tenantId });
      const operations: [string, Record<string, unknown>][] = [
        [CREATE_WEBHOOK, { input: { url: receiver.url('/hook') } }],
        [ROTATE_SECRET, { id }],
        [DISABLE_WEBHOOK, { id }],
        [ENABLE_WEBHOOK, { id }],
        [REDELIVER, { id: delivery.id }],
        [WEBHOOKS, {}],
        [WEBHOOK, { id }],
        [DELIVERIES, { webhookId: id }],
      ];
      for (const [document, variables] of operations) {
        const result = await t.graphql<any, unknown>(document, variables, caller);
        expect(codeOf(result)).toBe('FORBIDDEN');
      }
      const unauthenticated = await t.graphql<any, unknown>(WEBHOOKS, {}, null);
      expect(codeOf(unauthenticated)).toBe('UNAUTHENTICATED');
      const after = await rowsOf(t, chairman.tenantId);
      expect(after.webhooks).toBe(before.webhooks);
      expect(after.audits).toBe(before.audits);
      const row = await t.db.prisma.webhook.findUniqueOrThrow({ where: { id } });
      expect(row.status).toBe('active');
      expect(row.secretRotatedAt).toBeNull();
    },
  );
});

describe('tenant isolation', () => {
  it('answers another tenant’s webhook and deliveries NOT_FOUND and changes nothing', async () => {
    const owner = await t.caller(['chairman']);
    const { id } = await createWebhook(t, owner, { url: receiver.url('/hook'), role: 'cfo' });
    await queueTask(t, owner, 'cfo');
    // The relay writes the delivery just after the chat commits.
    const delivery = await vi.waitFor(
      () => t.db.prisma.webhookDelivery.findFirstOrThrow({ where: { webhookId: id, status: 'delivered' } }),
      RECORDED,
    );
    const before = await rowsOf(t, owner.tenantId);

    const stranger: Caller = await t.caller(['chairman']);
    for (const [document, variables] of [
      [ROTATE_SECRET, { id }],
      [DISABLE_WEBHOOK, { id }],
      [ENABLE_WEBHOOK, { id }],
      [REDELIVER, { id: delivery.id }],
      [WEBHOOK, { id }],
      [DELIVERIES, { webhookId: id }],
    ] as const) {
      const result = await t.graphql<any, unknown>(document, variables, stranger);
      expect(codeOf(result)).toBe('NOT_FOUND');
      expect(JSON.stringify(result)).not.toContain(receiver.url('/hook'));
    }
    const listed = await t.graphql<any, unknown>(WEBHOOKS, undefined, stranger);
    expect(listed.data.webhooks).toEqual([]);
    expect(await rowsOf(t, owner.tenantId)).toEqual(before);
    expect(await rowsOf(t, stranger.tenantId)).toEqual({ webhooks: 0, deliveries: 0, audits: 0 });
  });

  it('never delivers one tenant’s events to another tenant’s webhook', async () => {
    const owner = await t.caller(['chairman']);
    const other = await t.caller(['chairman']);
    receiver.answer('/isolated', (_delivery, response) => void response.writeHead(200).end());
    await createWebhook(t, other, { url: receiver.url('/isolated') });
    await queueTask(t, owner, 'cfo');
    const marker = await queueTask(t, other, 'cfo');
    const received = await receiver.waitFor('/isolated', 1);
    expect(received.map((delivery) => delivery.payload.data.task_id)).toEqual([marker]);
    expect(nth(received).payload.data.tenant_id).toBe(other.tenantId);
  });

  it('refuses malformed ids (BAD_USER_INPUT) without touching anything', async () => {
    const chairman = await t.caller(['chairman']);
    for (const [document, variables] of [
      [ROTATE_SECRET, { id: 'nope' }],
      [REDELIVER, { id: 'nope' }],
      [DELIVERIES, { webhookId: 'nope' }],
      [DELIVERIES, { webhookId: '00000000-0000-4000-8000-000000000000', first: 0 }],
      [DELIVERIES, { webhookId: '00000000-0000-4000-8000-000000000000', after: 'garbage' }],
    ] as const) {
      const result = await t.graphql<any, unknown>(document, variables, chairman);
      expect(codeOf(result)).toBe('BAD_USER_INPUT');
    }
    expect(await rowsOf(t, chairman.tenantId)).toEqual({ webhooks: 0, deliveries: 0, audits: 0 });
  });
});
