-- AlterTable
ALTER TABLE "tasks" ADD COLUMN     "cached_input_tokens" BIGINT,
ADD COLUMN     "input_tokens" BIGINT,
ADD COLUMN     "output_tokens" BIGINT,
ADD COLUMN     "reasoning_tokens" BIGINT;
