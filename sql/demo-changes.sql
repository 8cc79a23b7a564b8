-- The demo's changes on the source, made between two pgmirror runs.
INSERT INTO products VALUES
    (1, 'espresso', 2.40, true),
    (2, 'flat white', 3.60, true),
    (3, 'croissant', 2.10, true),
    (4, 'bagel', 2.80, false);
INSERT INTO orders (product_id, quantity) VALUES (1, 2), (3, 1), (2, 1);
BEGIN;
UPDATE products SET price = 2.50 WHERE id = 1;
UPDATE products SET in_stock = true WHERE id = 4;
INSERT INTO orders (product_id, quantity) VALUES (4, 3);
COMMIT;
DELETE FROM orders WHERE product_id = 3;
