-- AlterTable
ALTER TABLE "tasks" ADD COLUMN     "canary_run_id" UUID;

-- CreateTable
CREATE TABLE "canary_run_outcomes" (
    "run_id" UUID NOT NULL,
    "tenant_id" UUID NOT NULL,
    "model_version_id" UUID NOT NULL,
    "completed" INTEGER NOT NULL DEFAULT 0,
    "failed" INTEGER NOT NULL DEFAULT 0,
    "decided" INTEGER NOT NULL DEFAULT 0,
    "accepted" INTEGER NOT NULL DEFAULT 0,
    "evaluated" INTEGER NOT NULL DEFAULT 0,
    "matched" INTEGER NOT NULL DEFAULT 0,

    CONSTRAINT "canary_run_outcomes_pkey" PRIMARY KEY ("run_id","model_version_id")
);

-- AddForeignKey
ALTER TABLE "tasks" ADD CONSTRAINT "tasks_canary_run_id_fkey" FOREIGN KEY ("canary_run_id") REFERENCES "model_deployments"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "canary_run_outcomes" ADD CONSTRAINT "canary_run_outcomes_run_id_fkey" FOREIGN KEY ("run_id") REFERENCES "model_deployments"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "canary_run_outcomes" ADD CONSTRAINT "canary_run_outcomes_model_version_id_fkey" FOREIGN KEY ("model_version_id") REFERENCES "model_versions"("id") ON DELETE CASCADE ON UPDATE CASCADE;
