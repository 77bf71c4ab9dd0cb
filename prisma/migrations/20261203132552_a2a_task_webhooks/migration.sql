-- AlterTable
ALTER TABLE "webhooks" ADD COLUMN     "notification_token" TEXT,
ADD COLUMN     "task_id" UUID;

-- CreateIndex
CREATE INDEX "webhooks_task_id_idx" ON "webhooks"("task_id");

-- AddForeignKey
ALTER TABLE "webhooks" ADD CONSTRAINT "webhooks_task_id_fkey" FOREIGN KEY ("task_id") REFERENCES "tasks"("id") ON DELETE CASCADE ON UPDATE CASCADE;
