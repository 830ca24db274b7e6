"""The app under load: the real service plus one bare floor endpoint in the same process.

The floor, POST /bench/floor/<key>, does only what every move must: read a state from Redis,
decode it, change it, encode it and compare-and-set it back (one Lua script). Its state is as
large as a real mid-game game's stored state and view, so the ratio of an endpoint's throughput
to the floor's is what the service adds over the design's physical minimum.
"""

from __future__ import annotations

import os

import orjson
import redis
from flask import Flask, Response

from service.api import create_app

_CAS = """
local current = redis.call('HGET', KEYS[1], 'version')
if current ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'version', tonumber(current) + 1, 'state', ARGV[2])
redis.call('EXPIRE', KEYS[1], 3600)
return 1
"""


def create_bench_app() -> Flask:
    app = create_app()
    client = redis.Redis.from_url(os.environ["REDIS_URL"])
    cas = client.register_script(_CAS)

    @app.post("/bench/floor/<key>")
    def floor(key: str) -> Response:
        name = f"bench:floor:{{{key}}}"
        version, raw = client.hmget(name, ["version", "state"])
        state = orjson.loads(raw)
        state["touched"] = state.get("touched", 0) + 1
        applied = cas(keys=[name], args=[version, orjson.dumps(state)])
        body = orjson.dumps({"applied": bool(applied), "version": int(version) + applied})
        return Response(body, content_type="application/json")

    return app
