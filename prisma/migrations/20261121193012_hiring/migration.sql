-- CreateTable
CREATE TABLE "onboarding_packets" (
    "id" UUID NOT NULL,
    "tenant_id" UUID NOT NULL,
    "process_id" TEXT NOT NULL,
    "candidate_id" TEXT NOT NULL,
    "generation" INTEGER NOT NULL,
    "candidate_name" TEXT NOT NULL,
    "location" TEXT NOT NULL,
    "salary" JSONB NOT NULL,
    "jurisdiction" JSONB NOT NULL,
    "offer_letter" TEXT NOT NULL,
    "checklist" JSONB NOT NULL,
    "compliance_reminders" JSONB NOT NULL,
    "created_by" TEXT NOT NULL,
    "request_id" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "onboarding_packets_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "onboarding_packets_tenant_id_process_id_candidate_id_genera_key" ON "onboarding_packets"("tenant_id", "process_id", "candidate_id", "generation");

-- AddForeignKey
ALTER TABLE "onboarding_packets" ADD CONSTRAINT "onboarding_packets_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
