"""A tenant's webhook deliveries in its usage: a real worker process sends them, counts each
delivery once when its receiver takes it (retries are not new deliveries), in the ledger that
`GET /v1/usage` reads and in the metric beside it."""

from __future__ import annotations

import datetime as dt
import time

from service.tenants import RedisKeys, new_key
from service.tenants.ledger import RedisLedger


def test_usage_counts_the_tenants_webhook_deliveries_as_the_worker_metric_saw_them(
        api, start_worker, receiver, redis_url: str) -> None:
    hosted = api.client.application.extensions["aos.tenancy"]
    hosted.registry, hosted.ledger = RedisKeys(redis_url), RedisLedger(redis_url)
    key, record = new_key("Deliveries Inc", ["games:write", "games:read"])
    hosted.registry.add(record)
    body = {"map": "rust_belt", "players": [{"name": n} for n in ("Ada", "Brunel", "Cugnot")], "seed": "d"}
    made = api.client.post("/v1/games", json=body, headers={"X-API-Key": key})
    assert made.status_code == 201, made.get_json()
    game = made.get_json()
    nobodys = api.create()  # a game of no tenant's: its deliveries are nobody's usage
    receiver.answer = lambda _id, attempt: (500, 0.0) if attempt == 1 else (200, 0.0)
    worker = start_worker(AOS_WEBHOOKS_RETRY_SCHEDULE="0.2,0.2")
    for one, name in ((game, "tenant"), (nobodys, "nobody")):
        hook = api.register(one, one["turn_order"][1], receiver.url(name), ["move"])
        receiver.secrets[name] = hook["secret"]
    for one in (game, nobodys):
        for _ in range(3):
            api.move(one, {"type": "issue_shares", "count": 0})
    # Three moves a game, each delivered on its second attempt (the first gets a 500).
    receiver.wait_for(lambda: len(receiver.ids()) == 12)
    time.sleep(0.5)  # a stray count would land by now
    today = dt.datetime.now(dt.UTC).date().isoformat()
    usage = api.client.get(f"/v1/usage?from={today}&to={today}", headers={"X-API-Key": key}).get_json()
    counted = usage["days"][0]["webhook_deliveries"]
    assert counted == 3
    seen = worker.metric("aos_tenant_usage_total", kind="webhook_deliveries", tenant="Deliveries Inc")
    assert seen == counted
    assert worker.metric("aos_webhook_deliveries_total", outcome="delivered") == 6
    hosted.registry.close()
    hosted.ledger.close()
