"""The digests that show a refactor kept behaviour (tools/play_digest.py for the engine,
tools/http_digest.py for the API) are themselves deterministic, and see a change."""

from __future__ import annotations

import hashlib
import importlib.util
import logging
from pathlib import Path

TOOLS = Path(__file__).resolve().parents[2] / "tools"


def load(name: str):  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location(name, TOOLS / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def http_digest_of(map_id: str, seed: str) -> str:
    tool = load("http_digest")
    digest = hashlib.sha256()
    client = tool.digest_client()
    moves = tool.play(client, map_id, 3, seed, digest)
    assert moves > 10
    return digest.hexdigest()


def test_the_http_digest_is_the_same_for_the_same_seed_and_differs_for_another() -> None:
    logging.disable(logging.CRITICAL)
    try:
        first = http_digest_of("rust_belt", "digest-test")
        assert http_digest_of("rust_belt", "digest-test") == first  # new ids, tokens and salt
        assert http_digest_of("rust_belt", "digest-test-2") != first
    finally:
        logging.disable(logging.NOTSET)


def test_the_engine_digest_is_the_same_for_the_same_seed_and_differs_for_another() -> None:
    tool = load("play_digest")
    digests = []
    for seed in ("a", "a", "b"):
        digest = hashlib.sha256()
        tool.play("holland", 3, seed, True, digest)
        digests.append(digest.hexdigest())
    assert digests[0] == digests[1] != digests[2]
