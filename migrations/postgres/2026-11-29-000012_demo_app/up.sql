-- The demo app platform-api makes on a fresh database (docs/platform.md,
-- "Quickstart"): only its codes are redeemed by the built-in callback page
-- /developers/demo/callback.
ALTER TABLE apps ADD COLUMN is_demo BOOLEAN NOT NULL DEFAULT FALSE;
