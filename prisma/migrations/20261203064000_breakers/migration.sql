-- Circuit breakers: a policy per role (no row means the documented defaults), the trips, and the counts of
-- repeated connector calls within one task. A trip is unique per incident, so it happens once across instances.
CREATE TABLE "breaker_policies" (
    "tenant_id" UUID NOT NULL,
    "role" TEXT NOT NULL,
    "enabled" BOOLEAN NOT NULL DEFAULT true,
    "consecutive_failures" INTEGER NOT NULL DEFAULT 5,
    "spend_window_minutes" INTEGER NOT NULL DEFAULT 60,
    "spend_limit_usd" DECIMAL(18,6),
    "spend_multiple" DECIMAL(10,3) DEFAULT 5,
    "max_attempts" INTEGER,
    "max_duration_minutes" INTEGER NOT NULL DEFAULT 120,
    "repeated_call_limit" INTEGER NOT NULL DEFAULT 5,
    "on_delegation_cycle" BOOLEAN NOT NULL DEFAULT true,
    "updated_by" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "breaker_policies_pkey" PRIMARY KEY ("tenant_id","role")
);

CREATE TABLE "breaker_trips" (
    "id" UUID NOT NULL,
    "tenant_id" UUID NOT NULL,
    "role" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "incident_key" TEXT NOT NULL,
    "evidence" JSONB NOT NULL,
    "tripped_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "breaker_trips_pkey" PRIMARY KEY ("id")
);

CREATE UNIQUE INDEX "breaker_trips_tenant_id_role_kind_incident_key_key"
  ON "breaker_trips"("tenant_id", "role", "kind", "incident_key");
CREATE INDEX "breaker_trips_tenant_id_role_tripped_at_idx"
  ON "breaker_trips"("tenant_id", "role", "tripped_at" DESC);

CREATE TABLE "connector_call_fingerprints" (
    "task_id" UUID NOT NULL,
    "fingerprint" TEXT NOT NULL,
    "count" INTEGER NOT NULL DEFAULT 0,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "connector_call_fingerprints_pkey" PRIMARY KEY ("task_id","fingerprint")
);

ALTER TABLE "breaker_policies" ADD CONSTRAINT "breaker_policies_tenant_id_fkey"
  FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
ALTER TABLE "breaker_trips" ADD CONSTRAINT "breaker_trips_tenant_id_fkey"
  FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
ALTER TABLE "connector_call_fingerprints" ADD CONSTRAINT "connector_call_fingerprints_task_id_fkey"
  FOREIGN KEY ("task_id") REFERENCES "tasks"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- Why a role is paused: the reason given with the pause, and the trip of the breaker that paused it.
ALTER TABLE "agent_roles"
  ADD COLUMN "pause_reason" TEXT,
  ADD COLUMN "last_breaker_trip_id" UUID;
