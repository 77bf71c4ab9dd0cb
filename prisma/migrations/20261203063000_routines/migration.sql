-- Routines: recurring work for an agent role. Each occurrence of its schedule queues one task, or is
-- recorded as skipped with the reason.
CREATE TYPE "RoutineCatchUp" AS ENUM ('skip', 'run_once');

CREATE TABLE "routines" (
    "id" UUID NOT NULL,
    "tenant_id" UUID NOT NULL,
    "role" TEXT NOT NULL,
    "cron" TEXT NOT NULL,
    "time_zone" TEXT NOT NULL,
    "message" TEXT NOT NULL,
    "cost_cap_usd" DECIMAL(18,6),
    "catch_up" "RoutineCatchUp" NOT NULL DEFAULT 'skip',
    "enabled" BOOLEAN NOT NULL DEFAULT true,
    "next_run_at" TIMESTAMPTZ(3) NOT NULL,
    "last_run_at" TIMESTAMPTZ(3),
    "last_outcome" TEXT,
    "last_reason" TEXT,
    "last_task_id" UUID,
    "created_by" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "routines_pkey" PRIMARY KEY ("id")
);

-- The tick reads only this index while nothing is due (enabled routines by their next run).
CREATE INDEX "routines_enabled_next_run_at_idx" ON "routines"("enabled", "next_run_at");
CREATE INDEX "routines_tenant_id_created_at_id_idx" ON "routines"("tenant_id", "created_at" DESC, "id");

ALTER TABLE "routines" ADD CONSTRAINT "routines_tenant_id_fkey"
  FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- One row per occurrence handled: the unique key is what makes an occurrence fire once across instances.
CREATE TABLE "routine_occurrences" (
    "id" UUID NOT NULL,
    "tenant_id" UUID NOT NULL,
    "routine_id" UUID NOT NULL,
    "scheduled_for" TIMESTAMPTZ(3) NOT NULL,
    "outcome" TEXT NOT NULL,
    "reason" TEXT,
    "task_id" UUID,
    "missed_count" INTEGER NOT NULL DEFAULT 0,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "routine_occurrences_pkey" PRIMARY KEY ("id")
);

CREATE UNIQUE INDEX "routine_occurrences_routine_id_scheduled_for_key"
  ON "routine_occurrences"("routine_id", "scheduled_for");

ALTER TABLE "routine_occurrences" ADD CONSTRAINT "routine_occurrences_routine_id_fkey"
  FOREIGN KEY ("routine_id") REFERENCES "routines"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- The routine that queued a task, so its cost can be attributed to it.
ALTER TABLE "tasks" ADD COLUMN "routine_id" UUID;
ALTER TABLE "tasks" ADD CONSTRAINT "tasks_routine_id_fkey"
  FOREIGN KEY ("routine_id") REFERENCES "routines"("id") ON DELETE SET NULL ON UPDATE CASCADE;
CREATE INDEX "tasks_routine_id_idx" ON "tasks"("routine_id");
