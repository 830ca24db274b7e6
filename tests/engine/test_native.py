"""The build listing compiled by mypyc (service/engine/native.py): used only when built from the
very sources beside it, and answering byte for byte what the sources answer."""

from __future__ import annotations

import importlib.machinery
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from service.engine import native

ROOT = Path(__file__).resolve().parents[2]
SUFFIX = importlib.machinery.EXTENSION_SUFFIXES[0]


def engine_tree(tmp_path: Path) -> Path:
    """A small engine package: a source for each compiled module and one they would import."""
    engine = tmp_path / "service" / "engine"
    for name in native.MODULES:
        path = native.module_path(engine, name, ".py")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"WHO = {name!r}\n")
    (engine / "network.py").write_text("CENTRE = 6\n")
    return engine


def fake_build(engine: Path) -> None:
    for path in native.files(engine):
        path.write_bytes(b"")


def test_nothing_built_is_absent_and_the_sources_run(tmp_path):
    assert native.status(engine_tree(tmp_path)) == "absent"


def test_a_build_is_used_only_with_the_stamp_of_the_sources_beside_it(tmp_path, monkeypatch):
    monkeypatch.delenv(native.ENV, raising=False)
    engine = engine_tree(tmp_path)
    fake_build(engine)
    assert native.status(engine) == "stale"  # no stamp: a build that did not finish
    (engine / native.STAMP).write_text(native.sources_digest(engine) + "\n")
    assert native.status(engine) == "compiled"
    library = native.files(engine)[-1]
    assert library.name.startswith("compiled__mypyc.") and library.parent == engine
    library.unlink()  # part of a build: its modules would not load
    assert native.status(engine) == "stale"
    library.write_bytes(b"")
    # An edit of any source of the engine, not only of a compiled module's: mypyc builds in
    # the types and constants of the modules they import.
    (engine / "network.py").write_text("CENTRE = 7\n")
    assert native.status(engine) == "stale"
    (engine / native.STAMP).write_text(native.sources_digest(engine) + "\n")
    assert native.status(engine) == "compiled"
    (engine / "phases" / "new_phase.py").write_text("")  # a module added counts too
    assert native.status(engine) == "stale"


def test_aos_native_off_leaves_a_fresh_build_unused(tmp_path, monkeypatch):
    engine = engine_tree(tmp_path)
    fake_build(engine)
    (engine / native.STAMP).write_text(native.sources_digest(engine) + "\n")
    monkeypatch.setenv(native.ENV, "off")
    assert native.status(engine) == "off"


def test_the_guard_finds_the_compiled_modules_as_their_sources_when_stale(tmp_path, monkeypatch):
    engine = engine_tree(tmp_path)
    fake_build(engine)
    before = list(sys.meta_path)
    monkeypatch.setattr(sys, "meta_path", before[:])  # the guard's finder leaves with the test
    assert native.guard(engine) == "stale"
    finder = sys.meta_path[0]
    assert native.guard(engine) == "stale" and sys.meta_path[1:] == before  # put in once
    for name in native.MODULES:
        spec = finder.find_spec(name)
        assert spec is not None and spec.origin == str(native.module_path(engine, name, ".py"))
        assert isinstance(spec.loader, importlib.machinery.SourceFileLoader)
    assert finder.find_spec("service.engine.network") is None  # the others as ever


def test_a_module_compiled_by_another_version_is_a_stray_and_leaves_the_build_stale(tmp_path, monkeypatch):
    # A checkout of another commit whose build compiled other modules leaves their extensions
    # behind: Python would import one ahead of its source, linked to a library without it.
    monkeypatch.delenv(native.ENV, raising=False)
    engine = engine_tree(tmp_path)
    stray = engine / f"network{SUFFIX}"
    stray.write_bytes(b"")
    assert native.strays(engine) == [stray]
    assert native.status(engine) == "stale"  # a stray alone is not "absent"
    fake_build(engine)
    (engine / native.STAMP).write_text(native.sources_digest(engine) + "\n")
    assert native.status(engine) == "stale"
    stray.unlink()
    assert native.status(engine) == "compiled"
    # Not strays: another interpreter's build (never imported here), a copy cut short, the
    # build's own files.
    other = engine / "network.cpython-399-x86_64-linux-gnu.so"
    other.write_bytes(b"")
    (engine / f"network{SUFFIX}.part").write_bytes(b"")
    assert native.strays(engine) == [] and native.status(engine) == "compiled"
    assert native.module_name(engine, engine / "phases" / f"build{SUFFIX}") == "service.engine.phases.build"


def test_the_guard_finds_a_stray_as_its_source_and_one_without_a_source_not_at_all(tmp_path, monkeypatch):
    engine = engine_tree(tmp_path)
    fake_build(engine)
    (engine / native.STAMP).write_text(native.sources_digest(engine) + "\n")
    (engine / f"network{SUFFIX}").write_bytes(b"")
    (engine / f"gone{SUFFIX}").write_bytes(b"")  # a module whose source is no more
    monkeypatch.setattr(sys, "meta_path", list(sys.meta_path))
    assert native.guard(engine) == "stale"
    finder = sys.meta_path[0]
    spec = finder.find_spec("service.engine.network")
    assert spec is not None and spec.origin == str(engine / "network.py")
    with pytest.raises(ModuleNotFoundError):
        finder.find_spec("service.engine.gone")
    for name in native.MODULES:  # the build is stale: its modules as their sources too
        assert finder.find_spec(name).origin == str(native.module_path(engine, name, ".py"))
    assert finder.find_spec("service.engine.layout") is None


def _ran(code: str, env: dict[str, str], pythonpath: Path | None = None) -> subprocess.CompletedProcess:
    """`code` run by this interpreter (from `pythonpath`, if given), which must succeed."""
    env = {**os.environ, **env}
    if pythonpath is not None:
        env["PYTHONPATH"] = str(pythonpath)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                          cwd=pythonpath or ROOT, timeout=300)
    assert done.returncode == 0, done.stderr
    return done


def _run(code: str, env: dict[str, str], pythonpath: Path | None = None) -> str:
    return _ran(code, env, pythonpath).stdout.strip()


def _package_copy(tmp_path: Path) -> Path:
    """A copy of the service package with the checkout's build; its engine package."""
    assert native.status() == "compiled", native.NOT_COMPILED
    shutil.copytree(ROOT / "service", tmp_path / "service", ignore=shutil.ignore_patterns("__pycache__"))
    return tmp_path / "service" / "engine"


# Every listing of two random games on every map, each player's cash made to last every round
# (build turns with their hundreds of builds, and the other phases'), digested: what the
# sources answer and what the compiled modules do.
LISTINGS = """
import hashlib, random
from service.engine import game, native, words
from service.engine.phases import build
from service.engine.playout import play_random_game
digest, listings = hashlib.sha256(), [0]
def listed(before, seat, move, options, after, events):
    digest.update(words.listing_json(before, seat, {"seat": seat}))
    listings[0] += 1
for map_id in game.MAP_IDS:
    for seed in ("native-1", "native-2"):
        play_random_game(map_id, 4, seed, random.Random(seed), on_move=listed, cash=60)
print(native.status(), build.__file__.endswith(".py"), listings[0], digest.hexdigest())
"""


@pytest.mark.slow
def test_the_compiled_listing_answers_what_the_sources_answer():
    # The suite runs on what scripts/bootstrap.sh built: that it is the compiled engine that the
    # rest of the suite tests is asserted here, and that it answers as the sources do.
    assert native.status() == "compiled", native.NOT_COMPILED
    compiled = _run(LISTINGS, {native.ENV: "on"}).split()
    plain = _run(LISTINGS, {native.ENV: "off"}).split()
    assert compiled[:2] == ["compiled", "False"] and plain[:2] == ["off", "True"]
    assert int(plain[2]) > 2000
    assert compiled[2:] == plain[2:]


@pytest.mark.slow
def test_an_edited_source_runs_as_written_not_as_built(tmp_path):
    # A copy of the package with its build: the build is used; once a source is edited, the
    # source is, with a warning, and the edit shows.
    engine = _package_copy(tmp_path)
    where = ("import logging; logging.basicConfig(); "
             "from service.engine.phases import build; from service.engine import native; "
             "print(native.status(), build.__file__.endswith('.py'), build.NOTHING)")
    assert _run(where, {}, tmp_path) == "compiled False frozenset()"
    source = engine / "phases" / "build.py"
    text = source.read_text()
    assert "\nNOTHING: frozenset = frozenset()\n" in text
    source.write_text(text.replace("\nNOTHING: frozenset = frozenset()\n",
                                   "\nNOTHING: frozenset = frozenset({'edited'})\n"))
    done = _ran(where, {}, tmp_path)
    assert done.stdout.strip() == "stale True frozenset({'edited'})"
    assert "built from other sources" in done.stderr


@pytest.mark.slow
def test_a_stray_left_by_another_build_is_not_imported_and_the_next_build_removes_it(tmp_path, monkeypatch):
    # A copy of the package with its build, and an extension module of view.py as a build that
    # compiled it would have left (here words' extension under view's name: Python would fail to
    # load it). The engine imports, view as its source; the next build takes it away.
    engine = _package_copy(tmp_path)
    shutil.copy2(engine / f"words{SUFFIX}", engine / f"view{SUFFIX}")
    where = ("import logging; logging.basicConfig(); "
             "from service.engine import native, view, game; from service.engine.phases import build; "
             "print(native.status(), view.__file__.endswith('.py'), build.__file__.endswith('.py'))")
    done = _ran(where, {}, tmp_path)
    assert done.stdout.strip() == "stale True True"
    assert "not used: service.engine.view" in done.stderr
    tool = _build_native(monkeypatch, tmp_path / "cache")
    tool.to_cache(native.sources_digest(ROOT / "service" / "engine"), ROOT / "service" / "engine",
                  ROOT / "service" / "engine")
    assert tool.from_cache(native.sources_digest(engine), engine)
    assert not (engine / f"view{SUFFIX}").exists() and native.status(engine) == "compiled"
    assert _run(where, {}, tmp_path) == "compiled True False"


def _build_native(monkeypatch, cache: Path):
    """scripts/build_native.py as a module, its cache in `cache` (its logger's level kept)."""
    import importlib.util
    import logging

    monkeypatch.setenv("AOS_NATIVE_CACHE", str(cache))
    logger = logging.getLogger("service.engine.native")
    level = logger.level
    spec = importlib.util.spec_from_file_location("build_native", ROOT / "scripts" / "build_native.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    logger.setLevel(level)
    return module


def test_a_cached_build_is_taken_only_for_its_own_sources(tmp_path, monkeypatch):
    monkeypatch.delenv(native.ENV, raising=False)
    tool = _build_native(monkeypatch, tmp_path / "cache")
    made = engine_tree(tmp_path / "made")
    for path in native.files(made):
        path.write_bytes(b"build of " + path.name.encode())
    digest = native.sources_digest(made)
    tool.to_cache(digest, made, made)
    other = engine_tree(tmp_path / "other")  # the same sources, elsewhere: the cache's build
    assert native.status(other) == "absent"
    assert tool.from_cache(native.sources_digest(other), other)
    assert native.status(other) == "compiled"
    assert native.files(other)[0].read_bytes() == native.files(made)[0].read_bytes()
    (other / "network.py").write_text("CENTRE = 7\n")  # other sources: nothing cached for them
    assert not tool.from_cache(native.sources_digest(other), other)
    assert native.status(other) == "stale"


def test_the_cache_keeps_the_newest_builds_whole(tmp_path, monkeypatch):
    tool = _build_native(monkeypatch, tmp_path / "cache")
    made = engine_tree(tmp_path / "made")
    for path in native.files(made):
        path.write_bytes(b"")
    for n in range(tool.CACHE_KEPT + 3):
        tool.to_cache(f"digest-{n:02}", made, made)
        os.utime(tmp_path / "cache" / f"digest-{n:02}", (n, n))  # made in this order
    kept = sorted(p.name for p in (tmp_path / "cache").iterdir())
    assert kept == [f"digest-{n:02}" for n in range(3, tool.CACHE_KEPT + 3)]
    for name in kept:  # each whole: every file of a build
        assert all((tmp_path / "cache" / name / p.relative_to(made)).is_file()
                   for p in native.files(made))
