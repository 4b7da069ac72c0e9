-- E-mail addresses take one spelling per address from this version on
-- (the domain in its IDNA ASCII form, the local part in NFC). Rust respells
-- the stored ones once this migration is applied (crates/storage/src/respell.rs):
-- the rules are Unicode's, not SQL's.
SELECT 1;
