"""The HTTP benchmark measures the service as deployed: the engine's build listing compiled
(benchmarks/http/run.py's built_engine), whatever set up the venv, unless AOS_NATIVE=off."""

from __future__ import annotations

import shutil
from pathlib import Path

from benchmarks.http.run import built_engine
from service.engine import native

ROOT = Path(__file__).resolve().parents[2]


def a_tree(tmp_path: Path) -> Path:
    """A checkout's service/ and scripts/build_native.py, without a build."""
    tree = tmp_path / "tree"
    shutil.copytree(ROOT / "service", tree / "service",
                    ignore=shutil.ignore_patterns("__pycache__", "*.so", native.STAMP))
    (tree / "scripts").mkdir()
    shutil.copy2(ROOT / "scripts" / "build_native.py", tree / "scripts")
    return tree


def test_a_tree_not_built_is_built_before_it_is_served(tmp_path, monkeypatch):
    assert native.status() == "compiled", native.NOT_COMPILED
    tree = a_tree(tmp_path)
    engine = tree / "service" / "engine"
    assert native.status(engine) == "absent"
    # The cache holds this checkout's build of the same sources: the script takes it from there
    # (a compile would take 10 s; what it is given is the build the tests of the build check).
    cache = tmp_path / "cache"
    kept = cache / native.sources_digest(engine)
    for path in native.files():
        target = kept / path.relative_to(native.ENGINE)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(path, target)
    monkeypatch.setenv("AOS_NATIVE_CACHE", str(cache))
    monkeypatch.delenv(native.ENV, raising=False)
    assert built_engine(tree) == "compiled"
    assert all(path.is_file() for path in native.files(engine))


def test_aos_native_off_measures_the_plain_engine(tmp_path, monkeypatch):
    tree = a_tree(tmp_path)
    for path in native.files(tree / "service" / "engine"):
        path.write_bytes(b"")
    monkeypatch.setenv(native.ENV, "off")
    monkeypatch.setenv("AOS_NATIVE_CACHE", str(tmp_path / "cache"))
    assert built_engine(tree) == "off"
    assert not (tmp_path / "cache").exists()  # nothing was built
