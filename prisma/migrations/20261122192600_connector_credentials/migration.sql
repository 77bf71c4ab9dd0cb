-- CreateTable
CREATE TABLE "connector_credentials" (
    "id" UUID NOT NULL,
    "tenant_id" UUID NOT NULL,
    "connector_id" UUID NOT NULL,
    "auth_type" TEXT NOT NULL,
    "key_id" TEXT NOT NULL,
    "sealed" BYTEA NOT NULL,
    "fingerprint" TEXT NOT NULL,
    "created_by" TEXT NOT NULL,
    "updated_by" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "connector_credentials_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "connector_credentials_connector_id_key" ON "connector_credentials"("connector_id");

-- CreateIndex
CREATE INDEX "connector_credentials_tenant_id_idx" ON "connector_credentials"("tenant_id");

-- CreateIndex
CREATE INDEX "connector_credentials_key_id_idx" ON "connector_credentials"("key_id");

-- AddForeignKey
ALTER TABLE "connector_credentials" ADD CONSTRAINT "connector_credentials_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "connector_credentials" ADD CONSTRAINT "connector_credentials_connector_id_fkey" FOREIGN KEY ("connector_id") REFERENCES "connectors"("id") ON DELETE CASCADE ON UPDATE CASCADE;
