-- AlterTable: requests made before expiry existed wait the default 24 hours from now.
ALTER TABLE "task_approvals" ADD COLUMN "expires_at" TIMESTAMPTZ(3);
UPDATE "task_approvals" SET "expires_at" = GREATEST("created_at", CURRENT_TIMESTAMP) + INTERVAL '24 hours';
ALTER TABLE "task_approvals" ALTER COLUMN "expires_at" SET NOT NULL;

-- CreateIndex
CREATE INDEX "task_approvals_status_expires_at_idx" ON "task_approvals"("status", "expires_at");
