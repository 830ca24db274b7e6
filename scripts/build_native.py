"""Compiles the build listing's modules with mypyc, beside their sources (service/engine/native.py).

    .venv/bin/python scripts/build_native.py [--if-stale] [--status] [--jobs N] [--into DIR]

Needs mypy (the native extra; the Docker image's build stage installs it) and a C compiler.
Writes the stamp last, after removing the old one first: a build that fails leaves no module that
the engine would use. scripts/bootstrap.sh runs it with --if-stale, and goes on without it (the
engine runs as plain Python) when it fails.

A build is kept in a cache of this user's (AOS_NATIVE_CACHE, else ~/.cache/aos-rules/native), by
the digest of the sources it was built from, and taken from there for the same sources (another
checkout, a fresh clone, a source edited and put back): the newest CACHE_KEPT builds are kept.
"""

from __future__ import annotations

import argparse
import logging
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

# The engine's own warning that a build is stale (native.guard, on importing the engine) is this
# script's to act on, not to print.
logging.getLogger("service.engine.native").setLevel(logging.ERROR)

from service.engine import native  # noqa: E402  (after the logger's level)

# mypyc's C at gcc's -O1, not its default -O3: a cold build-turn listing's instructions within
# 2 % (count_cold --split: 0.568 M against 0.558 M for its body), its time the same in process,
# and the build 10 s instead of 16 on 2 cores (a fresh clone's ./test.sh pays it).
OPT_LEVEL = "1"
CACHE_KEPT = 8  # builds in the cache, the most recently made or used


def cache_dir() -> Path:
    return Path(os.environ.get("AOS_NATIVE_CACHE") or Path.home() / ".cache" / "aos-rules" / "native")


def build(engine: Path = native.ENGINE, jobs: int | None = None,
          cached: bool = True) -> tuple[float, bool]:
    """Compiles native.MODULES in a directory of its own (unless `cached` and the cache has the
    build of these sources), then puts the build beside their sources in `engine` and writes
    the stamp; returns the seconds it took and whether the build came from the cache."""
    started = time.perf_counter()
    digest = native.sources_digest(engine)
    if cached and from_cache(digest, engine):
        return time.perf_counter() - started, True
    from mypyc.build import mypycify  # build tools, needed only to compile
    from setuptools import setup

    root = engine.parent.parent  # the directory that holds the `service` package
    here = Path.cwd()
    with tempfile.TemporaryDirectory(prefix="aos-native-") as work:
        # From a copy of the engine (it imports nothing else of the service), not from where it
        # is installed: mypy takes every module beside the package for the project's own (in a
        # site-packages, mypy_extensions.py "shadows" its own). build_ext --inplace writes the
        # build into the work directory, from where it is put in place whole.
        copy = Path(work, "src", "service")
        shutil.copytree(engine, copy / "engine", ignore=shutil.ignore_patterns("__pycache__", "*.so"))
        shutil.copy2(root / "service" / "__init__.py", copy / "__init__.py")
        if native.sources_digest(copy / "engine") != digest:
            raise RuntimeError("the engine's sources changed while copied: build again")
        os.chdir(work)
        try:
            # multi_file: a C file a module, compiled side by side (_side_by_side).
            target = os.path.join(work, "c")
            extensions = mypycify([str(native.module_path(copy / "engine", name, ".py"))
                                   for name in native.MODULES],
                                  opt_level=OPT_LEVEL, group_name=native.GROUP, multi_file=True,
                                  target_dir=target)
            # The group's headers are written under its package's directory, which mypyc
            # leaves off the library's include path when the group is named by a dotted name.
            extensions[0].include_dirs.append(os.path.join(target, *native.GROUP.split(".")[:-1]))
            for extension in extensions:  # --inplace writes into their packages' directories
                Path(work, *extension.name.split(".")[:-1]).mkdir(parents=True, exist_ok=True)
            setup(name="aos-engine-native", ext_modules=extensions, script_name="build_native",
                  cmdclass={"build_ext": _side_by_side(jobs or os.cpu_count() or 1)},
                  script_args=["-q", "build_ext", "--inplace", "--build-temp",
                               os.path.join(work, "o")])
        finally:
            os.chdir(here)
        made = Path(work, "service", "engine")
        _put(digest, made, engine)
        to_cache(digest, made, engine)
    return time.perf_counter() - started, False


def from_cache(digest: str, engine: Path) -> bool:
    """Puts the cached build of the sources of `digest` beside them in `engine`, if there is one."""
    kept = cache_dir() / digest
    if not all((kept / path.relative_to(engine)).is_file() for path in native.files(engine)):
        return False
    _put(digest, kept, engine)
    os.utime(kept)  # used: the last to go
    return True


def to_cache(digest: str, made: Path, engine: Path) -> None:
    """Keeps the build in `made` (an engine package's layout) in the cache, whole or not at all
    (a directory renamed into place), and drops all but the CACHE_KEPT newest. A cache that can't
    be written costs the next build its time, nothing else."""
    cache = cache_dir()
    try:
        cache.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(dir=cache, prefix=".part-") as part:
            for path in native.files(engine):
                relative = path.relative_to(engine)
                (Path(part) / relative).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(made / relative, Path(part) / relative)
            if not (cache / digest).exists():
                os.rename(part, cache / digest)
                os.mkdir(part)  # for TemporaryDirectory to remove
        builds = sorted((p for p in cache.iterdir() if not p.name.startswith(".")),
                        key=lambda p: p.stat().st_mtime, reverse=True)
        for old in builds[CACHE_KEPT:]:
            shutil.rmtree(old, ignore_errors=True)
    except OSError as error:
        print(f"engine native modules: not cached ({error})", file=sys.stderr)


def copy_build(into: Path, engine: Path = native.ENGINE) -> None:
    """Copies the build beside the sources in `engine` to `into`, the engine package of another
    install of the same sources: built where mypy is, used where it is not (deploy/Dockerfile)."""
    stamp = (engine / native.STAMP).read_text().strip()
    if native.status(engine) != "compiled" or native.sources_digest(into) != stamp:
        raise SystemExit(f"{into} holds other sources than the build's ({engine}): not copied")
    _put(stamp, engine, into)


def _put(digest: str, built: Path, engine: Path) -> None:
    """Puts the build in `built` (an engine package's layout) beside the sources in `engine`,
    their stamp `digest` last, the old stamp removed first: a build cut short is never used.
    Each file by a rename of a copy: a process that has the old one loaded keeps it whole. The
    modules an earlier build compiled that this one does not (native.strays) go."""
    (engine / native.STAMP).unlink(missing_ok=True)
    for path in native.files(engine):
        part = path.with_name(path.name + ".part")
        shutil.copy2(built / path.relative_to(engine), part)
        os.replace(part, path)
    for path in native.strays(engine):
        path.unlink()
    (engine / native.STAMP).write_text(digest + "\n")


def _side_by_side(jobs: int) -> type:
    """setuptools' build_ext, compiling an extension's C files `jobs` at a time: distutils
    compiles them one after another, and the group's library is most of the build (one C file
    a module, and mypyc's runtime's)."""
    from concurrent.futures import ThreadPoolExecutor

    from setuptools.command.build_ext import build_ext

    class BuildExt(build_ext):
        def build_extension(self, ext: Any) -> None:
            one_by_one = self.compiler.compile

            def compile_all(sources: list[str], *args: Any, **kwargs: Any) -> list[str]:
                with ThreadPoolExecutor(jobs) as pool:  # each a gcc process: threads will do
                    made = pool.map(lambda source: one_by_one([source], *args, **kwargs), sources)
                    return [obj for objs in made for obj in objs]

            self.compiler.compile = compile_all
            try:
                super().build_extension(ext)
            finally:
                self.compiler.compile = one_by_one

    return BuildExt


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--if-stale", action="store_true",
                        help="build only when no build of these sources is there")
    parser.add_argument("--status", action="store_true", help="print the status; build nothing")
    parser.add_argument("--fresh", action="store_true", help="compile, even if the cache has the build")
    parser.add_argument("--jobs", type=int, default=None, help="C compilers at once (all cores)")
    parser.add_argument("--into", type=Path, default=None, metavar="ENGINE_DIR",
                        help="then copy the build to the engine package of another install of the "
                             "same sources (where mypy is not)")
    args = parser.parse_args()
    found = native.status()
    if args.status or (args.if_stale and found == "compiled"):
        print(f"engine native modules: {found}")
    else:
        seconds, cached = build(jobs=args.jobs, cached=not args.fresh)
        how = "taken from the cache" if cached else "built"
        print(f"engine native modules: {how} in {seconds:.1f} s ({native.status()})")
    if args.into is not None and not args.status:
        copy_build(args.into.resolve())
        print(f"engine native modules: copied to {args.into} ({native.status(args.into.resolve())})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
