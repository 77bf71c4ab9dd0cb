-- Event ingestion inserts up to 1000 subjects per statement, and PostgreSQL checks each foreign key once
-- per inserted row. One composite key to the test's variant replaces the two (to the test, to the variant):
-- half the checks, and it also rules out a subject whose variant belongs to another test.

-- DropForeignKey
ALTER TABLE "ab_test_subjects" DROP CONSTRAINT "ab_test_subjects_test_id_fkey";

-- DropForeignKey
ALTER TABLE "ab_test_subjects" DROP CONSTRAINT "ab_test_subjects_variant_id_fkey";

-- CreateIndex
CREATE UNIQUE INDEX "ab_test_variants_test_id_id_key" ON "ab_test_variants"("test_id", "id");

-- AddForeignKey
ALTER TABLE "ab_test_subjects" ADD CONSTRAINT "ab_test_subjects_test_id_variant_id_fkey" FOREIGN KEY ("test_id", "variant_id") REFERENCES "ab_test_variants"("test_id", "id") ON DELETE CASCADE ON UPDATE CASCADE;
