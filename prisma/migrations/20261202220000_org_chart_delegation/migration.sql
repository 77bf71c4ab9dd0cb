-- A parent task waits for the sub-tasks it delegated, holding no lease.
ALTER TYPE "TaskStatus" ADD VALUE 'waiting';

-- The org chart: every role but the CEO reports to another role of its tenant, the CEO to the board (null).
ALTER TABLE "agent_roles"
  ADD COLUMN "reports_to" TEXT,
  ADD COLUMN "delegates_across" BOOLEAN NOT NULL DEFAULT false;
UPDATE "agent_roles" SET "reports_to" = 'ceo' WHERE "role" <> 'ceo';

-- Delegation: the parent of a task, the root of its tree, its depth below the root and the roles above it.
ALTER TABLE "tasks"
  ADD COLUMN "parent_task_id" UUID,
  ADD COLUMN "root_task_id" UUID,
  ADD COLUMN "depth" INTEGER NOT NULL DEFAULT 0,
  ADD COLUMN "role_chain" TEXT[] NOT NULL DEFAULT ARRAY[]::TEXT[],
  ADD COLUMN "resume_on" TEXT,
  ADD COLUMN "cost_cap_usd" DECIMAL(18,6);

ALTER TABLE "tasks" ADD CONSTRAINT "tasks_parent_task_id_fkey"
  FOREIGN KEY ("parent_task_id") REFERENCES "tasks"("id") ON DELETE CASCADE ON UPDATE CASCADE;

CREATE INDEX "tasks_parent_task_id_idx" ON "tasks"("parent_task_id");
CREATE INDEX "tasks_root_task_id_idx" ON "tasks"("root_task_id");
