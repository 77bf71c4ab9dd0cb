-- AlterTable
ALTER TABLE "tasks" ALTER COLUMN "tokens_used" SET DATA TYPE BIGINT;
