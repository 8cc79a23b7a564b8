-- Example source setup for pgmirror (run as a superuser on the source).
-- postgresql.conf needs: wal_level = logical (then restart the server).
CREATE ROLE mirror_user WITH LOGIN REPLICATION PASSWORD 'change-me';
CREATE TABLE IF NOT EXISTS products (
    id    integer PRIMARY KEY,
    name  text NOT NULL,
    price numeric(10,2)
);
GRANT SELECT ON products TO mirror_user;
CREATE PUBLICATION shop FOR TABLE products;
