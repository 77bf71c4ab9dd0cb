-- AlterTable
ALTER TABLE "connector_credentials" ADD COLUMN     "origin" TEXT,
ADD COLUMN     "unbound_at" TIMESTAMPTZ(3);

-- A secret stored before this migration is bound to the origin its connector's base_url names now
-- (stored base URLs start with https:// and the host as the URL parser normalised it).
UPDATE "connector_credentials" AS "credential"
SET "origin" = COALESCE(
    regexp_replace(lower(substring("connector"."template"->>'base_url' from '^https://[^/?#]*')), ':443$', ''),
    '')
FROM "connectors" AS "connector"
WHERE "connector"."id" = "credential"."connector_id";

ALTER TABLE "connector_credentials" ALTER COLUMN "origin" SET NOT NULL;
