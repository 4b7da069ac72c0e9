-- Respelled addresses stay respelled: the new spelling is the same address.
SELECT 1;
