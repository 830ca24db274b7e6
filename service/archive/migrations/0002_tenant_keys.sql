-- Tenant API keys (service/tenants): only a SHA-256 digest of each key is kept, never the key.
-- A revoked key keeps its row (revoked_at set): who had access, and until when, stays on record.
CREATE TABLE tenant_keys (
    key_id      text PRIMARY KEY,            -- public: the CLI lists it, a revocation names it
    tenant      text NOT NULL,
    scopes      text[] NOT NULL,
    digest      text NOT NULL,               -- SHA-256 (hex) of the whole key
    quotas      jsonb NOT NULL DEFAULT '{}', -- per-key quotas; absent ones take the defaults
    created_at  timestamptz NOT NULL,
    revoked_at  timestamptz
);
CREATE INDEX tenant_keys_tenant ON tenant_keys (tenant);
