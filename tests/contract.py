"""openapi.yaml as data, for the tests that read the contract: parsed once per test process, with
libyaml's parser when PyYAML has it (the pure-Python one took 0.4 CPU-s a parse, and a dozen test
modules parsed it, five of them on import in every xdist worker). Each call gets its own copy."""

from __future__ import annotations

import copy
import functools
from pathlib import Path
from typing import Any

import yaml

PATH = Path(__file__).resolve().parents[1] / "openapi.yaml"


@functools.cache
def _parsed() -> dict[str, Any]:
    return yaml.load(PATH.read_text(encoding="utf-8"), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))


def parsed_contract() -> dict[str, Any]:
    """openapi.yaml parsed (a copy the caller may change)."""
    return copy.deepcopy(_parsed())
