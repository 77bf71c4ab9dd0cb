-- AlterTable
ALTER TABLE "ab_tests" ADD COLUMN     "sequential_state" JSONB;
