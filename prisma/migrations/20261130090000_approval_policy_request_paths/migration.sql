-- The rules of an approval policy matched the path of an endpoint relative to base_url. They now match
-- the path the request is sent to: the path of base_url and the path of the endpoint together. Every rule
-- stored before keeps its pattern, now read as a whole path (so /** still gates every call whatever
-- base_url becomes), and is followed by the same pattern under the base path its connector had then
-- (/customers/* under https://api.example.com/v1 gains /v1/customers/*), so that no call waits less than
-- it did. Each version row gets the same, under the base path of its own template.
-- (No apostrophe or semicolon in these comments: on PostgreSQL the statements are split at semicolons
-- outside quotes, and an apostrophe in a comment opens a quote.)

UPDATE "connectors" AS "connector"
SET "approval_policy" = jsonb_set("connector"."approval_policy", '{rules}', (
  SELECT jsonb_agg("rule"."value" ORDER BY "rule"."position", "rule"."copy")
  FROM (
    SELECT "original"."value", "original"."position", 0 AS "copy"
    FROM jsonb_array_elements("connector"."approval_policy"->'rules')
      WITH ORDINALITY AS "original"("value", "position")
    UNION ALL
    SELECT jsonb_set("original"."value", '{path}', to_jsonb("base"."path" || ("original"."value"->>'path'))),
      "original"."position", 1
    FROM jsonb_array_elements("connector"."approval_policy"->'rules')
      WITH ORDINALITY AS "original"("value", "position")
    WHERE left("original"."value"->>'path', 3) <> '/**'
  ) AS "rule"
))
FROM (
  SELECT "id", regexp_replace(substring("template"->>'base_url' from '^https://[^/?#]*(/[^?#]*)'), '/+$', '') AS "path"
  FROM "connectors"
) AS "base"
WHERE "base"."id" = "connector"."id" AND "connector"."approval_policy" IS NOT NULL AND "base"."path" <> '';

UPDATE "connector_versions" AS "version"
SET "approval_policy" = jsonb_set("version"."approval_policy", '{rules}', (
  SELECT jsonb_agg("rule"."value" ORDER BY "rule"."position", "rule"."copy")
  FROM (
    SELECT "original"."value", "original"."position", 0 AS "copy"
    FROM jsonb_array_elements("version"."approval_policy"->'rules')
      WITH ORDINALITY AS "original"("value", "position")
    UNION ALL
    SELECT jsonb_set("original"."value", '{path}', to_jsonb("base"."path" || ("original"."value"->>'path'))),
      "original"."position", 1
    FROM jsonb_array_elements("version"."approval_policy"->'rules')
      WITH ORDINALITY AS "original"("value", "position")
    WHERE left("original"."value"->>'path', 3) <> '/**'
  ) AS "rule"
))
FROM (
  SELECT "id", regexp_replace(substring("template"->>'base_url' from '^https://[^/?#]*(/[^?#]*)'), '/+$', '') AS "path"
  FROM "connector_versions"
) AS "base"
WHERE "base"."id" = "version"."id" AND "version"."approval_policy" IS NOT NULL AND "base"."path" <> '';
