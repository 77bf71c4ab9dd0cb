-- Wake the outbox relay of every instance when events commit, instead of polling: each statement that
-- inserts outbox rows also notifies the channel. PostgreSQL delivers the notification at commit (never for
-- a rolled-back insert) and folds a transaction's identical notifications into one. A rule rather than a
-- trigger: its action is a single statement, which migration scripts (split at semicolons) can carry.
CREATE RULE "outbox_events_notify" AS ON INSERT TO "outbox_events" DO ALSO NOTIFY outbox_events;
