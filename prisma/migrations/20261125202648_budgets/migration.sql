-- CreateEnum
CREATE TYPE "BudgetPeriod" AS ENUM ('day', 'month');

-- CreateTable
CREATE TABLE "budgets" (
    "id" UUID NOT NULL,
    "tenant_id" UUID NOT NULL,
    "role" TEXT NOT NULL,
    "period" "BudgetPeriod" NOT NULL,
    "limit_usd" DECIMAL(18,6) NOT NULL,
    "limit_tokens" BIGINT,
    "warning_threshold" DECIMAL(4,3) NOT NULL,
    "estimate_usd" DECIMAL(18,6) NOT NULL,
    "estimate_tokens" BIGINT NOT NULL DEFAULT 0,
    "period_start" TIMESTAMPTZ(3) NOT NULL,
    "spent_usd" DECIMAL(18,6) NOT NULL DEFAULT 0,
    "spent_tokens" BIGINT NOT NULL DEFAULT 0,
    "reserved_usd" DECIMAL(18,6) NOT NULL DEFAULT 0,
    "reserved_tokens" BIGINT NOT NULL DEFAULT 0,
    "overshoot_usd" DECIMAL(18,6) NOT NULL DEFAULT 0,
    "warned_at" TIMESTAMPTZ(3),
    "exhausted_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "budgets_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "budget_reservations" (
    "task_id" UUID NOT NULL,
    "budget_id" UUID NOT NULL,
    "amount_usd" DECIMAL(18,6) NOT NULL,
    "tokens" BIGINT NOT NULL DEFAULT 0,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "budget_reservations_pkey" PRIMARY KEY ("task_id","budget_id")
);

-- CreateIndex
CREATE UNIQUE INDEX "budgets_tenant_id_role_key" ON "budgets"("tenant_id", "role");

-- CreateIndex
CREATE INDEX "budget_reservations_budget_id_idx" ON "budget_reservations"("budget_id");

-- AddForeignKey
ALTER TABLE "budgets" ADD CONSTRAINT "budgets_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "budget_reservations" ADD CONSTRAINT "budget_reservations_task_id_fkey" FOREIGN KEY ("task_id") REFERENCES "tasks"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "budget_reservations" ADD CONSTRAINT "budget_reservations_budget_id_fkey" FOREIGN KEY ("budget_id") REFERENCES "budgets"("id") ON DELETE CASCADE ON UPDATE CASCADE;
