-- AlterTable
ALTER TABLE "tasks" ADD COLUMN     "claims" INTEGER NOT NULL DEFAULT 0,
ADD COLUMN     "steps_recorded" INTEGER NOT NULL DEFAULT 0;

-- AlterTable
ALTER TABLE "tenants" ADD COLUMN     "run_content_capture" BOOLEAN NOT NULL DEFAULT false,
ADD COLUMN     "run_content_retention_days" INTEGER NOT NULL DEFAULT 30;

-- CreateTable
CREATE TABLE "task_steps" (
    "id" UUID NOT NULL,
    "tenant_id" UUID NOT NULL,
    "task_id" UUID NOT NULL,
    "seq" INTEGER NOT NULL,
    "attempt" INTEGER NOT NULL,
    "kind" TEXT NOT NULL,
    "source" TEXT NOT NULL,
    "actor" TEXT,
    "started_at" TIMESTAMPTZ(3) NOT NULL,
    "duration_ms" INTEGER,
    "model" TEXT,
    "input_tokens" BIGINT,
    "cached_input_tokens" BIGINT,
    "output_tokens" BIGINT,
    "reasoning_tokens" BIGINT,
    "tokens" BIGINT,
    "cost_usd" DECIMAL(18,6) NOT NULL DEFAULT 0,
    "finish_reason" TEXT,
    "connector_id" UUID,
    "endpoint" TEXT,
    "http_status" INTEGER,
    "bytes" INTEGER,
    "outcome" TEXT,
    "approval_id" UUID,
    "child_task_id" UUID,
    "model_version_id" UUID,
    "routing" TEXT,
    "reason" TEXT,
    "content" JSONB,
    "content_expires_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "task_steps_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "task_steps_content_expires_at_idx" ON "task_steps"("content_expires_at");

-- CreateIndex
CREATE UNIQUE INDEX "task_steps_task_id_seq_key" ON "task_steps"("task_id", "seq");

-- AddForeignKey
ALTER TABLE "task_steps" ADD CONSTRAINT "task_steps_task_id_fkey" FOREIGN KEY ("task_id") REFERENCES "tasks"("id") ON DELETE CASCADE ON UPDATE CASCADE;
