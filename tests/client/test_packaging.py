"""`pip install ./client` builds the client without writing into its source tree."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

CLIENT = Path(__file__).resolve().parents[2] / "client"


def tree(root: Path) -> set[str]:
    return {p.relative_to(root).as_posix() for p in root.rglob("*") if "__pycache__" not in p.parts}


def test_pip_install_leaves_the_source_tree_as_it_was(tmp_path: Path) -> None:
    source = tmp_path / "client"
    shutil.copytree(CLIENT, source, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info", "build"))
    before = tree(source)
    target = tmp_path / "installed"
    done = subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(target), str(source)],
        capture_output=True, text=True, timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert tree(source) == before  # no build/, no aos_client.egg-info
    installed = {p.name for p in (target / "aos_client").iterdir()}
    assert {"__init__.py", "_model.py", "_transport.py", "bot.py", "models.py", "py.typed"} <= installed
    check = subprocess.run([sys.executable, "-c", "import aos_client; print(aos_client.API_VERSION)"],
                           cwd=tmp_path, env={"PYTHONPATH": str(target)}, capture_output=True, text=True)
    assert check.returncode == 0 and check.stdout.strip() == "1.0.0", check.stderr
