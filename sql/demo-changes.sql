-- The demo's changes on the source, made between two pgmirror runs.
INSERT INTO products VALUES (4, 'bagel', 2.80, false);
INSERT INTO orders (product_id, quantity) VALUES (2, 1);
BEGIN;
UPDATE products SET price = 2.50 WHERE id = 1;
UPDATE products SET in_stock = true WHERE id = 4;
INSERT INTO orders (product_id, quantity) VALUES (4, 3);
COMMIT;
DELETE FROM orders WHERE product_id = 3;
