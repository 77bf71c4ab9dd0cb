-- Idempotency keys: the first answer of a side effect sent with an Idempotency-Key, kept for at least
-- 24 hours and replayed for the same key and the same request, by tenant and caller.
CREATE TABLE "idempotency_keys" (
    "tenant_id" UUID NOT NULL,
    "caller" TEXT NOT NULL,
    "key" TEXT NOT NULL,
    "fingerprint" TEXT NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'in_progress',
    "answer" TEXT,
    "http_status" INTEGER,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,
    "locked_until" TIMESTAMPTZ(3),

    CONSTRAINT "idempotency_keys_pkey" PRIMARY KEY ("tenant_id","caller","key")
);

-- The sweeper deletes expired keys.
CREATE INDEX "idempotency_keys_expires_at_idx" ON "idempotency_keys"("expires_at");
