import type { Database, PrismaClient } from '../db/client.js';
import type { EgressClient } from '../domain/connectors/egress/index.js';
import type { Keyring } from '../domain/connectors/sealing.js';
import type { WebhookDispatcher } from '../domain/webhooks/dispatcher.js';
import { DEFAULT_RETRY_POLICY, type RetryPolicy, retryDelayMs } from '../domain/webhooks/retry.js';
import { signedHeaders, unsealWebhookSecret } from '../domain/webhooks/signing.js';
import { enqueueEvent } from '../events/outbox.js';
import { Prisma } from '../generated/prisma/client.js';
import type { Logger } from '../logger.js';

export interface WebhookDispatcherOptions {
  prisma: PrismaClient;
  logger: Logger;
  /** Wakes the dispatcher when deliveries commit (the webhook_deliveries_notify rule). */
  listen: Database['listen'];
  /** The guarded client deliveries are sent with (redirects are not followed: see app.ts). */
  egress: EgressClient;
  /** Opens the webhooks' sealed secrets. */
  keyring: Keyring;
  /** Default DEFAULT_RETRY_POLICY. */
  retry?: Partial<RetryPolicy>;
  /**
   * An attempt's deadline, from its claim: connecting, sending and the receiver's whole answer. A claim's
   * lease is this and RECORD_MS, so a place is never held longer, even by an instance that died. Default 10 s.
   */
  callTimeoutMs?: number;
  /** Attempts in flight at once per instance (each webhook has at most one). Default 16. */
  concurrency?: number;
  /** Attempts one tenant may have in flight at once, across all instances. Default 4. */
  inFlightPerTenant?: number;
  /**
   * Whether each claim first takes a lock that serializes claims: where several connections claim at once
   * (PostgreSQL), so that each counts the attempts of every instance exactly. PGlite runs one statement at
   * a time, so a claim (one statement) is alone there already. Default true.
   */
  serializeClaims?: boolean;
  /** Longest sleep between looks when nothing woke the dispatcher and nothing falls due. Default 15 s. */
  idleMs?: number;
  /** Told the outcome of every pass (metrics): `claimed` (it took deliveries), `empty` or `failed`. */
  onPass?: (outcome: 'claimed' | 'empty' | 'failed') => void;
}

interface ClaimedDelivery {
  id: string;
  tenant_id: string;
  webhook_id: string;
  message_id: string;
  body: string;
  attempts: number;
  url: string;
  key_id: string;
  sealed_secret: Uint8Array<ArrayBuffer>;
  previous_key_id: string | null;
  previous_secret: Uint8Array<ArrayBuffer> | null;
  previous_expires_at: Date | null;
  role: string | null;
  notification_token: string | null;
}

interface AttemptOutcome {
  ok: boolean;
  statusCode: number | null;
  error: string | null;
  durationMs: number;
}

const DELIVERIES_CHANNEL = 'webhook_deliveries';
const USER_AGENT = 'Boardroom-Webhooks/1';
/** Time a claim's lease gives, past the attempt's deadline, to record its outcome. */
const RECORD_MS = 5000;
/** Serializes claims across instances, so each counts every tenant's attempts in flight exactly. */
const CLAIM_LOCK_SQL = `hashtext('boardroom.webhook_claims')`;

/**
 * Each webhook's next delivery (the only one of its webhook that may be sent: `seq` order), whether its
 * webhook is active, and whether an attempt holds it (a live lease); `busy` counts each tenant's attempts
 * in flight. An attempt always holds its webhook's next delivery, so the heads are all that claims and the
 * dispatcher's planning need to read: one index lookup per webhook, however long the queues behind them.
 */
const HEADS = Prisma.sql`
  heads AS (
    SELECT h.id, h.tenant_id, h.seq, h.next_attempt_at, h.locked_until, w.status = 'active' AS active,
      coalesce(h.locked_until > now(), false) AS in_flight
    FROM webhooks AS w
    CROSS JOIN LATERAL (
      SELECT d.id, d.tenant_id, d.seq, d.next_attempt_at, d.locked_until
      FROM webhook_deliveries AS d
      WHERE d.webhook_id = w.id AND d.status = 'pending'
      ORDER BY d.seq
      LIMIT 1
    ) AS h
  ),
  busy AS (
    SELECT tenant_id, count(*) FILTER (WHERE in_flight) AS in_flight FROM heads GROUP BY tenant_id
  )`;

/**
 * Sends queued webhook deliveries. Each webhook's deliveries go one at a time in `seq` order: a delivery is
 * claimable only when no earlier one of its webhook is still pending, so a later delivery waits for the
 * earlier one, retries included. Claims take rows with FOR UPDATE SKIP LOCKED and hold them with a lease
 * (`locked_until`) for the attempt, so instances share the work and a crash mid-attempt only delays it.
 * Tenants share the places fairly: one has at most `inFlightPerTenant` attempts in flight across instances,
 * and each claim serves the tenants with the fewest in flight first, so one tenant's slow receivers and
 * backlog leave the other places to everyone else.
 */
export function createWebhookDispatcher(options: WebhookDispatcherOptions): WebhookDispatcher {
  const { prisma, logger, egress, keyring } = options;
  const policy: RetryPolicy = { ...DEFAULT_RETRY_POLICY, ...options.retry };
  const callTimeoutMs = options.callTimeoutMs ?? 10_000;
  const leaseMs = callTimeoutMs + RECORD_MS;
  const concurrency = options.concurrency ?? 16;
  const inFlightPerTenant = options.inFlightPerTenant ?? 4;
  const serializeClaims = options.serializeClaims ?? true;
  const idleMs = options.idleMs ?? 15_000;
  const onPass = options.onPass ?? (() => {});

  const inFlight = new Set<Promise<void>>();
  let running: Promise<void> | undefined;
  let again = false;
  let stopped = true;
  let timer: NodeJS.Timeout | undefined;
  let unlisten: (() => Promise<void>) | undefined;

  /**
   * Claims up to `limit` due deliveries, each the next of an active webhook, taking turns across tenants:
   * a tenant's n-th candidate has turn (its attempts in flight + n), turns above the cap are left, and
   * lower turns go first (the older delivery first among equals). Claims run one at a time across
   * instances: under a lock on PostgreSQL; PGlite runs one statement at a time.
   */
  async function claim(limit: number): Promise<ClaimedDelivery[]> {
    const run = (tx: Prisma.TransactionClient) =>
      tx.$queryRaw<ClaimedDelivery[]>`
        WITH ${HEADS},
        chosen AS (
          SELECT id FROM (
            SELECT heads.id, heads.seq,
              busy.in_flight + row_number() OVER (PARTITION BY heads.tenant_id ORDER BY heads.seq) AS turn
            FROM heads JOIN busy USING (tenant_id)
            WHERE heads.active AND NOT heads.in_flight AND heads.next_attempt_at <= now()
          ) AS candidates
          WHERE turn <= ${inFlightPerTenant}
          ORDER BY turn, seq
          LIMIT ${limit}
        ),
        due AS (
          SELECT d.id FROM webhook_deliveries AS d JOIN chosen USING (id)
          WHERE d.status = 'pending' AND (d.locked_until IS NULL OR d.locked_until <= now())
          FOR UPDATE OF d SKIP LOCKED
        )
        UPDATE webhook_deliveries AS d
        SET locked_until = clock_timestamp() + ${leaseMs} * interval '1 millisecond', attempts = d.attempts + 1,
            last_attempt_at = clock_timestamp()
        FROM due, webhooks AS w
        WHERE d.id = due.id AND w.id = d.webhook_id
        RETURNING d.id::text, d.tenant_id::text, d.webhook_id::text, d.message_id::text, d.body, d.attempts,
          w.url, w.key_id, w.sealed_secret, w.previous_key_id, w.previous_secret, w.previous_expires_at, w.role,
          w.notification_token`;
    if (!serializeClaims) return run(prisma);
    return prisma.$transaction(async (tx) => {
      await tx.$executeRawUnsafe(`SELECT pg_advisory_xact_lock(${CLAIM_LOCK_SQL})`);
      return run(tx);
    });
  }

  /** The secrets that sign: the current one, and the previous one during a rotation's overlap. */
  function secretsOf(delivery: ClaimedDelivery, now: Date): string[] {
    const current = unsealWebhookSecret(keyring, delivery.tenant_id, delivery.webhook_id, {
      keyId: delivery.key_id,
      sealed: delivery.sealed_secret,
    });
    const { previous_key_id: keyId, previous_secret: sealed, previous_expires_at: expiresAt } = delivery;
    if (!keyId || !sealed || !expiresAt || expiresAt <= now) return [current];
    return [
      current,
      unsealWebhookSecret(keyring, delivery.tenant_id, delivery.webhook_id, { keyId, sealed }),
    ];
  }

  async function attempt(delivery: ClaimedDelivery): Promise<AttemptOutcome> {
    const started = Date.now();
    // The deadline is the dispatcher's, whatever the client's own: the lease was sized from it.
    const deadline = { at: started + callTimeoutMs, ms: callTimeoutMs };
    const took = () => Date.now() - started;
    let secrets: string[];
    try {
      secrets = secretsOf(delivery, new Date());
    } catch (error) {
      return {
        ok: false,
        statusCode: null,
        error: `the signing secret cannot be opened: ${(error as Error).message}`,
        durationMs: 0,
      };
    }
    try {
      const response = await egress.send(
        {
          url: delivery.url,
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            'user-agent': USER_AGENT,
            ...signedHeaders(secrets, delivery.message_id, new Date(), delivery.body),
            // A task webhook's A2A client token, for the client to tell its own notifications.
            ...(delivery.notification_token
              ? { 'x-a2a-notification-token': delivery.notification_token }
              : {}),
          },
          body: delivery.body,
        },
        { deadline },
      );
      const ok = response.status >= 200 && response.status < 300;
      return {
        ok,
        statusCode: response.status,
        error: ok ? null : `the receiver answered ${response.status}`,
        durationMs: took(),
      };
    } catch (error) {
      const reason = (error as { reason?: unknown }).reason;
      const message =
        typeof reason === 'string' ? `${reason}: ${(error as Error).message}` : 'the request failed';
      return { ok: false, statusCode: null, error: message, durationMs: took() };
    }
  }

  async function recordSuccess(delivery: ClaimedDelivery, outcome: AttemptOutcome): Promise<void> {
    await prisma.$transaction(async (tx) => {
      await tx.$executeRaw`
        UPDATE webhook_deliveries SET status = 'delivered', delivered_at = clock_timestamp(),
          latency_ms = round(extract(epoch FROM clock_timestamp() - created_at) * 1000)::int,
          last_status_code = ${outcome.statusCode}, last_error = NULL, last_duration_ms = ${outcome.durationMs},
          locked_until = NULL
        WHERE id = ${delivery.id}::uuid`;
      await tx.$executeRaw`
        UPDATE webhooks SET failing_since = NULL, updated_at = now()
        WHERE id = ${delivery.webhook_id}::uuid AND failing_since IS NOT NULL`;
    });
  }

  async function recordFailure(delivery: ClaimedDelivery, outcome: AttemptOutcome): Promise<void> {
    const delayMs = retryDelayMs(policy, delivery.attempts);
    await prisma.$transaction(async (tx) => {
      const [webhook] = await tx.$queryRaw<{ failing_since: Date; status: string }[]>`
        UPDATE webhooks SET failing_since = coalesce(failing_since, now())
        WHERE id = ${delivery.webhook_id}::uuid
        RETURNING failing_since, status`;
      await tx.$executeRaw`
        UPDATE webhook_deliveries SET next_attempt_at = clock_timestamp() + ${delayMs} * interval '1 millisecond',
          last_status_code = ${outcome.statusCode}, last_error = ${outcome.error},
          last_duration_ms = ${outcome.durationMs}, locked_until = NULL
        WHERE id = ${delivery.id}::uuid`;
      if (webhook?.status !== 'active') return;
      if (Date.now() - webhook.failing_since.getTime() < policy.disableAfterMs) return;
      await disableFailingWebhook(tx, delivery, webhook.failing_since, outcome);
    });
  }

  /** Gives up on a webhook that kept failing: disabled, its pending deliveries failed, an event and an audit row. */
  async function disableFailingWebhook(
    tx: Prisma.TransactionClient,
    delivery: ClaimedDelivery,
    failingSince: Date,
    outcome: AttemptOutcome,
  ): Promise<void> {
    const reason = `deliveries failed without a success since ${failingSince.toISOString()}; last: ${outcome.error}`;
    const [disabled] = await tx.$queryRaw<{ disabled_at: Date }[]>`
      UPDATE webhooks SET status = 'disabled', disabled_at = now(), disabled_reason = ${reason}, updated_at = now()
      WHERE id = ${delivery.webhook_id}::uuid AND status = 'active'
      RETURNING disabled_at`;
    if (!disabled) return;
    const failed = await tx.$executeRaw`
      UPDATE webhook_deliveries SET status = 'failed', locked_until = NULL
      WHERE webhook_id = ${delivery.webhook_id}::uuid AND status = 'pending'`;
    await enqueueEvent(tx, {
      type: 'WEBHOOK_DISABLED',
      tenantId: delivery.tenant_id,
      payload: {
        webhook_id: delivery.webhook_id,
        role: delivery.role,
        failing_since: failingSince.toISOString(),
        disabled_at: disabled.disabled_at.toISOString(),
      },
    });
    await tx.auditEntry.create({
      data: {
        tenantId: delivery.tenant_id,
        actor: 'system',
        action: 'webhook.disabled',
        targetType: 'webhook',
        targetId: delivery.webhook_id,
        outcome: 'failing',
        details: {
          failing_since: failingSince.toISOString(),
          last_error: outcome.error,
          last_status_code: outcome.statusCode,
          deliveries_failed: failed,
        } as Prisma.InputJsonValue,
      },
    });
    logger.warn(
      { webhookId: delivery.webhook_id, tenantId: delivery.tenant_id },
      'webhook disabled after failing',
    );
  }

  async function deliver(delivery: ClaimedDelivery): Promise<void> {
    const outcome = await attempt(delivery);
    if (outcome.ok) await recordSuccess(delivery, outcome);
    else await recordFailure(delivery, outcome);
  }

  function track(delivery: ClaimedDelivery) {
    const work: Promise<void> = deliver(delivery)
      .catch((error: unknown) => {
        // The lease lapses and another pass sends it again: at least once.
        logger.error({ err: error, deliveryId: delivery.id }, 'webhook delivery could not be recorded');
      })
      .finally(() => {
        inFlight.delete(work);
        // The webhook's next delivery may be claimable now.
        if (!stopped) kick();
      });
    inFlight.add(work);
  }

  /**
   * Sleeps until something it could claim may fall due (at most idleMs): the next delivery of an active
   * webhook whose tenant has a place free, or a lease's end (a tenant's place then comes back, and an
   * attempt an instance left behind becomes claimable). Deliveries behind another of their webhook, of a
   * disabled webhook or of a tenant at its cap plan nothing: a commit, a finished attempt or a lease's end
   * wakes the dispatcher for them. Neither does anything while this instance has no place free: each of its
   * attempts wakes it when it ends.
   */
  async function scheduleNext(): Promise<void> {
    let wait = idleMs;
    if (inFlight.size < concurrency) {
      const [next] = await prisma.$queryRaw<{ wait_ms: number | null }[]>`
        WITH ${HEADS}
        SELECT (extract(epoch FROM min(
          CASE WHEN heads.in_flight THEN heads.locked_until
               WHEN heads.active AND busy.in_flight < ${inFlightPerTenant} THEN heads.next_attempt_at END
        ) - now()) * 1000)::float8 AS wait_ms
        FROM heads JOIN busy USING (tenant_id)`;
      // Null: nothing it could claim is pending at all.
      if (next?.wait_ms != null) wait = Math.max(0, next.wait_ms);
    }
    clearTimeout(timer);
    if (stopped) return;
    timer = setTimeout(kick, Math.min(Math.max(wait, 10), idleMs));
    timer.unref();
  }

  async function drain(): Promise<void> {
    do {
      again = false;
      let taken = 0;
      try {
        for (;;) {
          const room = concurrency - inFlight.size;
          if (stopped || room <= 0) break;
          const claimed = await claim(room);
          for (const delivery of claimed) track(delivery);
          taken += claimed.length;
          if (claimed.length < room) break;
        }
        await scheduleNext();
        onPass(taken > 0 ? 'claimed' : 'empty');
      } catch (error) {
        onPass('failed');
        logger.error({ err: error }, 'webhook dispatch pass failed; it is tried again');
        clearTimeout(timer);
        if (!stopped) {
          timer = setTimeout(kick, 1000);
          timer.unref();
        }
      }
    } while (again && !stopped);
  }

  function kick(): void {
    if (stopped) return;
    if (running) {
      again = true;
      return;
    }
    running = drain().finally(() => {
      running = undefined;
      // A wake-up that came after the pass's last look starts another pass rather than being lost.
      if (again && !stopped) kick();
    });
  }

  return {
    kick,
    async start() {
      stopped = false;
      unlisten ??= await options.listen(DELIVERIES_CHANNEL, kick);
    },
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await unlisten?.();
      unlisten = undefined;
      await running;
      await Promise.all([...inFlight]);
    },
  };
}
