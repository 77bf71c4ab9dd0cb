-- AlterTable
ALTER TABLE "ab_tests" ADD COLUMN     "results_announced_at" TIMESTAMPTZ(6),
ADD COLUMN     "results_pending" BOOLEAN NOT NULL DEFAULT false;
