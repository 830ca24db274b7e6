"""scripts/bootstrap.sh on a machine without a new enough Python, after a failed install, and where
uv (which installs the project) cannot be had."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
BASH = shutil.which("bash") or "/bin/bash"
TINY_PROJECT = """[build-system]
requires = ["setuptools>=68"]
build-backend = "setuptools.build_meta"

[project]
name = "tiny"
version = "0"

[tool.setuptools]
py-modules = []
"""


def a_checkout(tmp_path: Path) -> Path:
    root = tmp_path / "checkout"
    (root / "scripts").mkdir(parents=True)
    shutil.copy(REPO / "scripts" / "bootstrap.sh", root / "scripts" / "bootstrap.sh")
    (root / "pyproject.toml").write_text(TINY_PROJECT)
    return root


def test_an_old_python_is_refused_with_how_to_get_a_new_one(tmp_path: Path) -> None:
    root = a_checkout(tmp_path)
    fake = tmp_path / "bin"
    fake.mkdir()
    # The only python3 on PATH is a 3.10, as on Ubuntu 22.04.
    old_python = "#!/bin/sh\n[ \"$1\" = --version ] && echo 'Python 3.10.12' && exit 0\nexit 1\n"
    (fake / "python3").write_text(old_python)
    (fake / "python3").chmod(0o755)
    for tool in ("dirname", "cat", "sha256sum", "cut", "rm", "touch", "id", "basename", "sh"):
        os.symlink(shutil.which(tool), fake / tool)
    done = subprocess.run([BASH, "scripts/bootstrap.sh"], cwd=root, env={"PATH": str(fake)},
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 1
    assert "needs Python 3.11 or newer; this machine has Python 3.10.12" in done.stderr
    assert "deadsnakes" in done.stderr and "PYTHON=python3.11" in done.stderr
    assert not (root / ".venv").exists()


def test_a_venv_left_broken_by_a_failed_install_is_made_again(tmp_path: Path) -> None:
    root = a_checkout(tmp_path)
    # What an interrupted first run leaves: a venv without pip and no mark of success.
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(root / ".venv")], check=True)
    env = {**os.environ, "PYTHON": sys.executable}
    done = subprocess.run([BASH, "scripts/bootstrap.sh"], cwd=root, env=env, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert ".venv is incomplete" in done.stderr
    assert subprocess.run([str(root / ".venv/bin/python"), "-m", "pip", "--version"]).returncode == 0
    assert (root / ".venv/.bootstrap-ok").exists() and list(root.glob(".venv/.installed-*"))
    assert (root / ".venv/bin/uv").exists(), "uv, installed into the venv, installs the project"
    # A second run reuses the venv it made and installs nothing.
    again = subprocess.run([BASH, "scripts/bootstrap.sh"], cwd=root, env=env, capture_output=True,
                           text=True, timeout=300)
    assert again.returncode == 0 and again.stderr == ""


def test_pip_installs_the_project_where_uv_cannot_be_had_or_fails(tmp_path: Path) -> None:
    root = a_checkout(tmp_path)
    # A constraint no release of uv meets: its install fails, as it would offline from PyPI.
    no_uv = tmp_path / "no-uv.txt"
    no_uv.write_text("uv<0\n")
    env = {**os.environ, "PYTHON": sys.executable, "PIP_CONSTRAINT": str(no_uv)}
    done = subprocess.run([BASH, "scripts/bootstrap.sh"], cwd=root, env=env, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "uv could not be installed; pip installs the project" in done.stderr
    assert not (root / ".venv/bin/uv").exists()
    assert list(root.glob(".venv/.installed-*"))
    assert installed_version(root, "tiny") == "0"

    # uv in the venv, but set up for no index it can reach (as where only pip is told of a
    # mirror): pip installs what uv could not.
    subprocess.run([str(root / ".venv/bin/python"), "-m", "pip", "install", "-q", "uv"], check=True)
    (root / "pyproject.toml").write_text(TINY_PROJECT.replace('version = "0"', 'version = "1"'))
    env = {**env, "UV_INDEX_URL": "http://127.0.0.1:9/simple", "UV_NO_CACHE": "1",
           "UV_HTTP_RETRIES": "0"}
    done = subprocess.run([BASH, "scripts/bootstrap.sh"], cwd=root, env=env, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "uv could not install the project; pip tries" in done.stderr
    assert installed_version(root, "tiny") == "1"


def installed_version(root: Path, package: str) -> str:
    shown = subprocess.run([str(root / ".venv/bin/python"), "-m", "pip", "show", package],
                           capture_output=True, text=True, check=True)
    return next(line.split(": ", 1)[1] for line in shown.stdout.splitlines()
                if line.startswith("Version: "))
