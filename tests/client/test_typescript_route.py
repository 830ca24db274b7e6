"""The README's TypeScript route works as written, where node is installed (`.ci/run` installs it
from Debian's packages): the packages it pins install (kept in a cache directory between runs, so
only the first run downloads), openapi-typescript turns this service's contract into types without
a warning, and the README's `play.ts` passes `tsc --strict`, then plays a whole game against a
live service and prints the line the README shows."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
README_API = "http://127.0.0.1:8000"

pytestmark = pytest.mark.skipif(
    not (shutil.which("node") and shutil.which("npm")), reason="node and npm are not installed"
)


def section() -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    start = text.index("## TypeScript\n")
    return text[start : text.index("\n## ", start + 1)]


def cached_packages(install: str) -> Path:
    """node_modules/.bin of the README's `npm i -D ...` line, installed once into a cache directory
    of its own and reused while the line stays the same."""
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "aos-rules" / "typescript"
    cache.mkdir(parents=True, exist_ok=True)
    stamp = cache / "installed-with"
    if not (stamp.exists() and stamp.read_text() == install and (cache / "node_modules/.bin").is_dir()):
        (cache / "package.json").write_text(json.dumps({"private": True}))
        done = subprocess.run(install.split() + ["--no-audit", "--no-fund"], cwd=cache, capture_output=True,
                              text=True, timeout=600)
        assert done.returncode == 0, done.stdout + done.stderr
        stamp.write_text(install)
    return cache / "node_modules" / ".bin"


def test_the_typescript_route_types_and_plays_a_game(live_url: str, tmp_path: Path) -> None:
    text = section()
    shell = re.findall(r"```sh\n(.*?)```", text, re.S)
    install, generate = shell[0].strip().splitlines()
    # The pins: openapi-typescript 7 takes TypeScript 5 only.
    assert install == "npm i -D typescript@5 openapi-typescript@7", install
    binaries = cached_packages(install)
    env = {**os.environ, "PATH": f"{binaries}{os.pathsep}{os.environ['PATH']}"}

    def run(line: str) -> subprocess.CompletedProcess[str]:
        line = line.replace(README_API, live_url).replace("npx ", "")
        return subprocess.run(["bash", "-c", line], cwd=tmp_path, env=env, capture_output=True, text=True,
                              timeout=300)

    generated = run(generate)
    assert generated.returncode == 0, generated.stdout + generated.stderr
    said = generated.stdout + generated.stderr
    assert "⚠" not in said and "warn" not in said.lower(), said  # e.g. a discriminator it refuses
    assert "GameView" in (tmp_path / "aos.d.ts").read_text(encoding="utf-8")

    (program,) = re.findall(r"```ts\n(.*?)```", text, re.S)
    assert f'const API = "{README_API}";' in program
    (tmp_path / "play.ts").write_text(program.replace(README_API, live_url), encoding="utf-8")
    command, *shown = shell[1].strip().splitlines()
    assert "tsc --strict" in command
    played = run(command)
    assert played.returncode == 0, played.stdout + played.stderr
    assert played.stdout.splitlines() == [line.removeprefix("# ") for line in shown]
