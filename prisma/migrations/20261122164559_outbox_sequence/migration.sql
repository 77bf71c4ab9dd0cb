-- AlterTable
ALTER TABLE "outbox_events" ADD COLUMN     "seq" BIGSERIAL NOT NULL;

-- CreateIndex
CREATE INDEX "outbox_events_tenant_id_seq_idx" ON "outbox_events"("tenant_id", "seq");
