-- The demo's sample source: a small shop. scripts/demo.sh loads it into a
-- throwaway PostgreSQL before pgmirror's first run.
CREATE TABLE products (
    id       integer PRIMARY KEY,
    name     text NOT NULL,
    price    numeric(10,2) NOT NULL,
    in_stock boolean NOT NULL DEFAULT true
);
CREATE TABLE orders (
    id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    product_id integer NOT NULL REFERENCES products,
    quantity   integer NOT NULL,
    placed_at  timestamptz NOT NULL DEFAULT now()
);
CREATE PUBLICATION shop FOR TABLE products, orders;

-- rows that exist before pgmirror's first run: its initial copy brings them
INSERT INTO products VALUES
    (1, 'espresso', 2.40, true),
    (2, 'flat white', 3.60, true),
    (3, 'croissant', 2.10, true);
INSERT INTO orders (product_id, quantity) VALUES (1, 2), (3, 1);
