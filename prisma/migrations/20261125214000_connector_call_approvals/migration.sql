-- AlterTable
ALTER TABLE "connector_versions" ADD COLUMN     "approval_policy" JSONB;

-- AlterTable
ALTER TABLE "connectors" ADD COLUMN     "approval_policy" JSONB;

-- CreateTable
CREATE TABLE "connector_call_approvals" (
    "id" UUID NOT NULL,
    "tenant_id" UUID NOT NULL,
    "connector_id" UUID NOT NULL,
    "connector_version" INTEGER NOT NULL,
    "origin" TEXT NOT NULL,
    "method" TEXT NOT NULL,
    "path" TEXT NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'pending',
    "approver_roles" TEXT[],
    "key_id" TEXT NOT NULL,
    "sealed_input" BYTEA NOT NULL,
    "requested_by" TEXT NOT NULL,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,
    "decided_by" TEXT,
    "decided_at" TIMESTAMPTZ(3),
    "note" TEXT,
    "reason" TEXT,
    "outcome" TEXT,
    "response_status" INTEGER,
    "response_bytes" INTEGER,
    "duration_ms" INTEGER,
    "sealed_response" BYTEA,
    "response_key_id" TEXT,
    "executed_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "connector_call_approvals_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "connector_call_approvals_tenant_id_created_at_id_idx" ON "connector_call_approvals"("tenant_id", "created_at" DESC, "id");

-- CreateIndex
CREATE INDEX "connector_call_approvals_status_expires_at_idx" ON "connector_call_approvals"("status", "expires_at");

-- AddForeignKey
ALTER TABLE "connector_call_approvals" ADD CONSTRAINT "connector_call_approvals_connector_id_fkey" FOREIGN KEY ("connector_id") REFERENCES "connectors"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- The status of a request is one of these, and it leaves pending once.
ALTER TABLE "connector_call_approvals" ADD CONSTRAINT "connector_call_approvals_status_check"
  CHECK ("status" IN ('pending', 'approved', 'rejected', 'changes_requested', 'expired', 'cancelled'));
