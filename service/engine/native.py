"""The build listing's modules compiled to C by mypyc, used only when built from these very sources.

A build turn's legal moves (build_shapes, build, words: a few hundred builds with their words) are
the service's hottest code: a bot asks for them after every move. Compiled by mypyc they take
about a fifth less time (docs/engine.md has the figures), with the same source: mypyc
compiles the annotated Python as it is, and the modules import and behave as they do without it.

A compiled module is an extension module beside its source, which Python imports in preference
to the `.py`. One built from other sources than those beside it would run old rules, so a build
(scripts/build_native.py) writes a stamp, the digest of every source of the engine it was built
from (mypyc reads the types and the constants of the modules they import, not only their own),
and `guard`, run when the engine package is first imported, has Python import the sources
instead when the stamp is not that of the sources now there (or AOS_NATIVE=off asks for them).
Nothing built: the sources, as ever. An edit is thus never shadowed by an old build; it runs as
plain Python until the next build (scripts/bootstrap.sh builds when the stamp is stale).
"""

from __future__ import annotations

import hashlib
import importlib.abc
import importlib.machinery
import importlib.util
import logging
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType

log = logging.getLogger(__name__)

# The modules compiled, in one group: one shared library (GROUP's) and a small extension per
# module. Not network.py: its Network and UnindexedNetwork set different attributes, which a
# native class refuses.
MODULES = ("service.engine.phases.build_shapes", "service.engine.phases.build", "service.engine.words")
PACKAGE = "service.engine"
GROUP = "service.engine.compiled"  # its library: service/engine/compiled__mypyc.<suffix>
STAMP = "native.stamp"  # in the engine package: the digest of the sources built from (build_native)
ENV = "AOS_NATIVE"  # "off": the sources, whatever is built
ENGINE = Path(__file__).resolve().parent
# What a test that needs the build says without it (scripts/bootstrap.sh builds it unless
# AOS_NATIVE=off, which the tests of the build cannot run under).
NOT_COMPILED = ("the engine's build is not in use: build it (.venv/bin/python scripts/build_native.py), "
                "and leave AOS_NATIVE unset")


def sources_digest(engine: Path = ENGINE) -> str:
    """The digest of the engine's sources (every .py under the package, by path and content) and
    of the interpreter that would load a build of them."""
    digest = hashlib.sha256(sys.implementation.cache_tag.encode())
    for path in sorted(engine.rglob("*.py")):
        digest.update(path.relative_to(engine).as_posix().encode() + b"\0")
        digest.update(path.read_bytes())
    return digest.hexdigest()


def module_path(engine: Path, name: str, suffix: str) -> Path:
    """Where module `name` (one of MODULES) lies in the engine package, with `suffix`."""
    parts = name.split(".")[len(PACKAGE.split(".")):]
    return engine.joinpath(*parts[:-1], parts[-1] + suffix)


def files(engine: Path = ENGINE) -> list[Path]:
    """What a build puts beside the sources: an extension module of this interpreter for each
    of MODULES, and the group's library, which they load."""
    suffix = importlib.machinery.EXTENSION_SUFFIXES[0]
    return [module_path(engine, name, suffix) for name in (*MODULES, GROUP + "__mypyc")]


def strays(engine: Path = ENGINE) -> list[Path]:
    """Extension modules in the engine package that are no part of this version's build: left
    by a build of a version whose MODULES differ (another commit checked out, a module compiled
    no more). This interpreter would import one ahead of its source, or with no source left,
    and it would load a library that no longer has it, or old rules."""
    built = set(files(engine))
    patterns = {"*." + suffix.rsplit(".", 1)[-1] for suffix in importlib.machinery.EXTENSION_SUFFIXES}
    return sorted({path for pattern in patterns for path in engine.rglob(pattern)
                   if path not in built and _importable(path.name)})


def _importable(name: str) -> bool:
    """Whether a file of this name is an extension module this interpreter would import (a
    module name, then one of its suffixes: not another interpreter's build, not a part)."""
    return any(name.endswith(suffix) and name[:-len(suffix)].isidentifier()
               for suffix in importlib.machinery.EXTENSION_SUFFIXES)


def module_name(engine: Path, path: Path) -> str:
    """The name of the engine module that `path` (a source or an extension) holds."""
    relative = path.relative_to(engine)
    return ".".join((*PACKAGE.split("."), *relative.parts[:-1], relative.name.split(".")[0]))


def status(engine: Path = ENGINE) -> str:
    """"compiled" when a whole build of exactly these sources is there and nothing else (strays),
    "stale" when a build of others (or part of one, or a stray) is, "absent" when none is; "off"
    when AOS_NATIVE=off leaves a build unused."""
    return _survey(engine)[0]


def _survey(engine: Path) -> tuple[str, list[Path]]:
    """status, and the strays it found."""
    present = [path.exists() for path in files(engine)]
    stray = strays(engine)
    if not any(present) and not stray:
        return "absent", stray
    if os.environ.get(ENV, "").lower() == "off":
        return "off", stray
    stamp = engine / STAMP
    fresh = (all(present) and not stray and stamp.exists()
             and stamp.read_text().strip() == sources_digest(engine))
    return "compiled" if fresh else "stale", stray


class _Sources(importlib.abc.MetaPathFinder):
    """Finds the modules `names` as their sources, ahead of the path finder (which takes the
    extension); one with no source left (a stray of a module gone) as not there at all."""

    def __init__(self, engine: Path, names: frozenset[str]) -> None:
        self.engine = engine
        self.names = names

    def find_spec(self, name: str, path: Sequence[str] | None = None,
                  target: ModuleType | None = None) -> importlib.machinery.ModuleSpec | None:
        if name not in self.names:
            return None
        source = module_path(self.engine, name, ".py")
        if not source.exists():
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return importlib.util.spec_from_file_location(name, source)


def guard(engine: Path = ENGINE) -> str:
    """Makes the compiled modules import as their sources unless they are a build of exactly
    these sources, and any stray extension module too; returns the status. Run before any of
    MODULES is imported (the engine package's __init__)."""
    found, stray = _survey(engine)
    if found in ("stale", "off") and not any(
            isinstance(f, _Sources) and f.engine == engine for f in sys.meta_path):
        stray_names = [module_name(engine, path) for path in stray]
        sys.meta_path.insert(0, _Sources(engine, frozenset((*MODULES, *stray_names))))
        if stray_names:
            log.warning("compiled modules left by another version's build, not used: %s; running "
                        "the sources (build again, which removes them: scripts/build_native.py)",
                        ", ".join(stray_names))
        elif found == "stale":
            log.warning("the engine's compiled modules were built from other sources: running the "
                        "sources (build again: scripts/build_native.py)")
    return found
