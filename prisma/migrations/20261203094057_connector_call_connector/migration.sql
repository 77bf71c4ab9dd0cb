-- AlterTable
ALTER TABLE "connector_call_fingerprints" ADD COLUMN     "connector_id" UUID;
