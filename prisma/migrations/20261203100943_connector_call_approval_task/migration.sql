-- AlterTable
ALTER TABLE "connector_call_approvals" ADD COLUMN     "task_id" UUID;
