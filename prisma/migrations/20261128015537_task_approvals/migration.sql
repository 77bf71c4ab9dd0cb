-- AlterEnum
ALTER TYPE "TaskStatus" ADD VALUE 'awaiting_approval';

-- CreateTable
CREATE TABLE "task_approvals" (
    "id" UUID NOT NULL,
    "tenant_id" UUID NOT NULL,
    "task_id" UUID NOT NULL,
    "role" TEXT NOT NULL,
    "summary" TEXT NOT NULL,
    "payload" JSONB NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'pending',
    "requested_by" TEXT NOT NULL,
    "decided_by" TEXT,
    "decided_at" TIMESTAMPTZ(3),
    "note" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "task_approvals_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "task_approvals_tenant_id_created_at_id_idx" ON "task_approvals"("tenant_id", "created_at" DESC, "id");

-- CreateIndex
CREATE INDEX "task_approvals_task_id_created_at_idx" ON "task_approvals"("task_id", "created_at" DESC);

-- AddForeignKey
ALTER TABLE "task_approvals" ADD CONSTRAINT "task_approvals_task_id_fkey" FOREIGN KEY ("task_id") REFERENCES "tasks"("id") ON DELETE CASCADE ON UPDATE CASCADE;
