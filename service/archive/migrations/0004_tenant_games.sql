-- Whose game each archived game is (service/tenants), so that a tenant's listing
-- (GET /v1/games) reads the archive, newest first, a page at a time: games that left Redis
-- (expired, flushed) are listed still. NULL: a game of no tenant's. Set once, by the copier,
-- from the game's meta; a tenant never changes.
ALTER TABLE games ADD COLUMN tenant text;
UPDATE games SET tenant = convert_from(s.meta, 'UTF8')::jsonb ->> 'tenant'
FROM game_secrets s
WHERE s.game_id = games.id AND s.meta IS NOT NULL;
-- Ids compare in byte order ("C"), as the listing's cursors and Redis's ledger do.
CREATE INDEX games_tenant ON games (tenant, created_at, (id COLLATE "C")) WHERE tenant IS NOT NULL;
