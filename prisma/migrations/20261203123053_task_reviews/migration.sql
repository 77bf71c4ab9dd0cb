-- AlterEnum
ALTER TYPE "TaskStatus" ADD VALUE 'in_review';

-- AlterTable
ALTER TABLE "agent_roles" ADD COLUMN     "reviewer_role" TEXT;

-- CreateTable
CREATE TABLE "task_reviews" (
    "id" UUID NOT NULL,
    "tenant_id" UUID NOT NULL,
    "task_id" UUID NOT NULL,
    "role" TEXT NOT NULL,
    "reviewer_role" TEXT NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'pending',
    "requested_by" TEXT NOT NULL,
    "attempt" INTEGER NOT NULL,
    "decided_by" TEXT,
    "decided_at" TIMESTAMPTZ(3),
    "note" TEXT,
    "outcome" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "task_reviews_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "task_reviews_task_id_created_at_idx" ON "task_reviews"("task_id", "created_at");

-- CreateIndex
CREATE INDEX "task_reviews_tenant_id_status_created_at_idx" ON "task_reviews"("tenant_id", "status", "created_at");

-- AddForeignKey
ALTER TABLE "task_reviews" ADD CONSTRAINT "task_reviews_task_id_fkey" FOREIGN KEY ("task_id") REFERENCES "tasks"("id") ON DELETE CASCADE ON UPDATE CASCADE;
