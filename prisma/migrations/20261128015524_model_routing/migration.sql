-- AlterTable
ALTER TABLE "agent_roles" ADD COLUMN     "base_model" TEXT;

-- AlterTable
ALTER TABLE "tasks" ADD COLUMN     "model_version_id" UUID;

-- CreateTable
CREATE TABLE "model_version_outcomes" (
    "tenant_id" UUID NOT NULL,
    "model_version_id" UUID NOT NULL,
    "hour_start" TIMESTAMPTZ(3) NOT NULL,
    "completed" INTEGER NOT NULL DEFAULT 0,
    "failed" INTEGER NOT NULL DEFAULT 0,
    "execution_ms" BIGINT NOT NULL DEFAULT 0,
    "tokens" BIGINT NOT NULL DEFAULT 0,
    "cost_usd" DECIMAL(18,6) NOT NULL DEFAULT 0,
    "decided" INTEGER NOT NULL DEFAULT 0,
    "accepted" INTEGER NOT NULL DEFAULT 0,
    "evaluated" INTEGER NOT NULL DEFAULT 0,
    "matched" INTEGER NOT NULL DEFAULT 0,

    CONSTRAINT "model_version_outcomes_pkey" PRIMARY KEY ("model_version_id","hour_start")
);

-- CreateIndex
CREATE INDEX "tasks_thread_id_created_at_idx" ON "tasks"("thread_id", "created_at");

-- AddForeignKey
ALTER TABLE "tasks" ADD CONSTRAINT "tasks_model_version_id_fkey" FOREIGN KEY ("model_version_id") REFERENCES "model_versions"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "model_version_outcomes" ADD CONSTRAINT "model_version_outcomes_model_version_id_fkey" FOREIGN KEY ("model_version_id") REFERENCES "model_versions"("id") ON DELETE CASCADE ON UPDATE CASCADE;
