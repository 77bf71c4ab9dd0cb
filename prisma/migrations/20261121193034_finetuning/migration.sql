-- CreateEnum
CREATE TYPE "ModelProvider" AS ENUM ('openai', 'anthropic', 'google', 'mistral', 'together', 'fireworks', 'self_hosted');

-- CreateEnum
CREATE TYPE "DeploymentStatus" AS ENUM ('training', 'ready', 'canary', 'production', 'archived', 'retired', 'failed');

-- CreateTable
CREATE TABLE "model_lines" (
    "id" UUID NOT NULL,
    "tenant_id" UUID NOT NULL,
    "base_model" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "model_lines_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "model_versions" (
    "id" UUID NOT NULL,
    "tenant_id" UUID NOT NULL,
    "line_id" UUID NOT NULL,
    "base_model" TEXT NOT NULL,
    "provider" "ModelProvider" NOT NULL,
    "version_number" INTEGER NOT NULL,
    "deployment_status" "DeploymentStatus" NOT NULL DEFAULT 'ready',
    "canary_traffic_pct" INTEGER,
    "training_data_hash" TEXT NOT NULL,
    "hyperparameters" JSONB NOT NULL,
    "evaluation_metrics" JSONB NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "model_versions_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "model_deployments" (
    "id" UUID NOT NULL,
    "tenant_id" UUID NOT NULL,
    "model_version_id" UUID NOT NULL,
    "from_status" "DeploymentStatus",
    "to_status" "DeploymentStatus" NOT NULL,
    "canary_traffic_pct" INTEGER,
    "reason" TEXT,
    "performed_by" TEXT,
    "actor" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "model_deployments_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "model_lines_tenant_id_base_model_key" ON "model_lines"("tenant_id", "base_model");

-- CreateIndex
CREATE INDEX "model_versions_tenant_id_base_model_deployment_status_idx" ON "model_versions"("tenant_id", "base_model", "deployment_status");

-- CreateIndex
CREATE UNIQUE INDEX "model_versions_line_id_version_number_key" ON "model_versions"("line_id", "version_number");

-- CreateIndex
CREATE INDEX "model_deployments_model_version_id_created_at_idx" ON "model_deployments"("model_version_id", "created_at");

-- AddForeignKey
ALTER TABLE "model_lines" ADD CONSTRAINT "model_lines_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "model_versions" ADD CONSTRAINT "model_versions_line_id_fkey" FOREIGN KEY ("line_id") REFERENCES "model_lines"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "model_deployments" ADD CONSTRAINT "model_deployments_model_version_id_fkey" FOREIGN KEY ("model_version_id") REFERENCES "model_versions"("id") ON DELETE CASCADE ON UPDATE CASCADE;
