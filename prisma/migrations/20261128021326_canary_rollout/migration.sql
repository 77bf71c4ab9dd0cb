-- CreateTable
CREATE TABLE "canary_policies" (
    "line_id" UUID NOT NULL,
    "tenant_id" UUID NOT NULL,
    "guardrails" JSONB NOT NULL,
    "minimum_tasks" INTEGER NOT NULL,
    "max_duration_seconds" INTEGER NOT NULL,
    "action" TEXT NOT NULL,
    "updated_by" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "canary_policies_pkey" PRIMARY KEY ("line_id")
);

-- CreateTable
CREATE TABLE "canary_decisions" (
    "id" UUID NOT NULL,
    "tenant_id" UUID NOT NULL,
    "model_version_id" UUID NOT NULL,
    "canary_started_at" TIMESTAMPTZ(3) NOT NULL,
    "verdict" TEXT NOT NULL,
    "action" TEXT NOT NULL,
    "evidence" JSONB NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "canary_decisions_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "canary_decisions_model_version_id_canary_started_at_key" ON "canary_decisions"("model_version_id", "canary_started_at");

-- AddForeignKey
ALTER TABLE "canary_policies" ADD CONSTRAINT "canary_policies_line_id_fkey" FOREIGN KEY ("line_id") REFERENCES "model_lines"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "canary_decisions" ADD CONSTRAINT "canary_decisions_model_version_id_fkey" FOREIGN KEY ("model_version_id") REFERENCES "model_versions"("id") ON DELETE CASCADE ON UPDATE CASCADE;
