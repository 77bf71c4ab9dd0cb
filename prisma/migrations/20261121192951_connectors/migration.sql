-- CreateEnum
CREATE TYPE "ConnectorStatus" AS ENUM ('active', 'disabled');

-- CreateTable
CREATE TABLE "connectors" (
    "id" UUID NOT NULL,
    "tenant_id" UUID NOT NULL,
    "name" TEXT NOT NULL,
    "name_key" TEXT NOT NULL,
    "status" "ConnectorStatus" NOT NULL DEFAULT 'active',
    "template" JSONB NOT NULL,
    "version" INTEGER NOT NULL DEFAULT 1,
    "created_by" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "connectors_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "connector_versions" (
    "id" UUID NOT NULL,
    "connector_id" UUID NOT NULL,
    "version" INTEGER NOT NULL,
    "template" JSONB NOT NULL,
    "created_by" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "connector_versions_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "connectors_tenant_id_created_at_id_idx" ON "connectors"("tenant_id", "created_at" DESC, "id");

-- CreateIndex
CREATE UNIQUE INDEX "connectors_tenant_id_name_key_key" ON "connectors"("tenant_id", "name_key");

-- CreateIndex
CREATE UNIQUE INDEX "connector_versions_connector_id_version_key" ON "connector_versions"("connector_id", "version");

-- AddForeignKey
ALTER TABLE "connectors" ADD CONSTRAINT "connectors_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "connector_versions" ADD CONSTRAINT "connector_versions_connector_id_fkey" FOREIGN KEY ("connector_id") REFERENCES "connectors"("id") ON DELETE CASCADE ON UPDATE CASCADE;
