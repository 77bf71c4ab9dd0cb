-- AlterTable
ALTER TABLE "agent_roles" ADD COLUMN     "resume_event_id" UUID,
ADD COLUMN     "resumed_at" TIMESTAMPTZ(3),
ADD COLUMN     "resumed_by" TEXT;
