-- CreateEnum
CREATE TYPE "AbTestAnalysis" AS ENUM ('fixed_horizon', 'sequential');

-- AlterTable
ALTER TABLE "ab_tests" ADD COLUMN     "analysis" "AbTestAnalysis" NOT NULL DEFAULT 'fixed_horizon';
