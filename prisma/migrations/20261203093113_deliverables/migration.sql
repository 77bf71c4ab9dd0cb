-- AlterTable
ALTER TABLE "agent_roles" ADD COLUMN     "require_deliverable" BOOLEAN NOT NULL DEFAULT false;

-- CreateTable
CREATE TABLE "task_deliverables" (
    "id" UUID NOT NULL,
    "tenant_id" UUID NOT NULL,
    "task_id" UUID NOT NULL,
    "position" INTEGER NOT NULL,
    "kind" TEXT NOT NULL,
    "title" TEXT,
    "text" TEXT,
    "url" TEXT,
    "sha256" TEXT NOT NULL,
    "mime_type" TEXT,
    "filename" TEXT,
    "size" INTEGER NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "task_deliverables_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "task_deliverables_task_id_position_idx" ON "task_deliverables"("task_id", "position");

-- CreateIndex
CREATE INDEX "task_deliverables_sha256_idx" ON "task_deliverables"("sha256");

-- AddForeignKey
ALTER TABLE "task_deliverables" ADD CONSTRAINT "task_deliverables_task_id_fkey" FOREIGN KEY ("task_id") REFERENCES "tasks"("id") ON DELETE CASCADE ON UPDATE CASCADE;
