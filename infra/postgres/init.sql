-- Runs once, on first start of an empty Postgres data volume (docker-entrypoint-initdb.d).
-- One database per service that owns data. Services also create their database on start when it is missing,
-- so this file only saves a round trip; it is safe to run by hand against a fresh server too
-- (psql -v ON_ERROR_STOP=1 -U postgres -f infra/postgres/init.sql): existing databases are skipped.

SELECT 'CREATE DATABASE payments_identity'
WHERE NOT EXISTS (SELECT FROM pg_database WHERE datname = 'payments_identity')\gexec

SELECT 'CREATE DATABASE payments_ledger'
WHERE NOT EXISTS (SELECT FROM pg_database WHERE datname = 'payments_ledger')\gexec

SELECT 'CREATE DATABASE payments_currency'
WHERE NOT EXISTS (SELECT FROM pg_database WHERE datname = 'payments_currency')\gexec

SELECT 'CREATE DATABASE payments_webhook_ingest'
WHERE NOT EXISTS (SELECT FROM pg_database WHERE datname = 'payments_webhook_ingest')\gexec
