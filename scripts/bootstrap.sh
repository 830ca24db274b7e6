#!/usr/bin/env bash
# Makes .venv with the project installed. Safe to run again: it reinstalls only when
# pyproject.toml changed. Usage: scripts/bootstrap.sh [extras]   (e.g. "test")
#
# Needs Python 3.11 or newer: the first of $PYTHON, python3, python3.13, python3.12, python3.11
# that is new enough. From Debian's packages it installs, if missing: python3, python3-venv and
# python3-pip (as root, or with sudo). Into .venv: the project and its dependencies from PyPI
# (with "test": the test tools too, and the client in client/), by uv, which it installs there
# first, or by pip where uv can't be had or fails (uv reads none of pip's settings).
set -euo pipefail
cd "$(dirname "$0")/.."
extras="${1:-}"

as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }
apt_install() {
  echo "bootstrap: installing $* from Debian's packages" >&2
  as_root apt-get update -qq >/dev/null
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
}

new_enough() { "$1" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; }

find_python() {
  local candidate
  for candidate in ${PYTHON:-} python3 python3.13 python3.12 python3.11; do
    if command -v "$candidate" >/dev/null && new_enough "$candidate"; then
      command -v "$candidate"
      return 0
    fi
  done
  return 1
}

python="$(find_python || true)"
if [ -z "$python" ] && ! command -v python3 >/dev/null && command -v apt-get >/dev/null; then
  apt_install python3 python3-venv python3-pip
  python="$(find_python || true)"
fi
if [ -z "$python" ]; then
  found="$(command -v python3 >/dev/null && python3 --version 2>&1 || echo 'no python3')"
  cat >&2 <<EOF
bootstrap: aos-rules needs Python 3.11 or newer; this machine has $found.
  Debian 12 and Ubuntu 24.04:  sudo apt-get install python3 python3-venv
  Ubuntu 22.04 (Python 3.10):  sudo add-apt-repository ppa:deadsnakes/ppa &&
                               sudo apt-get install python3.11 python3.11-venv
  anywhere:                    install one with uv (uv python install 3.12) or pyenv
Then run this again, naming it if it is not python3: PYTHON=python3.11 $0 ${extras}
EOF
  exit 1
fi

# A .venv is reused only if a run of this script finished making it: a venv whose creation or
# first install failed half-way (no pip, an old Python) is made again from scratch.
venv_ok() {
  { [ -f .venv/.bootstrap-ok ] || compgen -G ".venv/.installed-*" >/dev/null; } &&
    [ -x .venv/bin/python ] && new_enough .venv/bin/python &&
    .venv/bin/python -m pip --version >/dev/null 2>&1
}
if [ -d .venv ] && ! venv_ok; then
  echo "bootstrap: .venv is incomplete (a failed install?): making it again" >&2
  rm -rf .venv
fi
if [ ! -d .venv ]; then
  if ! "$python" -m venv .venv 2>/dev/null; then
    rm -rf .venv
    venv_package="python3-venv"
    version="$("$python" -c 'import sys; print(f"{sys.version_info[0]}.{sys.version_info[1]}")')"
    [ "$(basename "$python")" = "python$version" ] && venv_package="python$version-venv"
    apt_install "$venv_package"
    "$python" -m venv .venv
  fi
  # uv, from PyPI into the venv, installs the project: with the test extras (some 110 packages)
  # in 4 to 14 s where pip took 27 (a fresh clone's ./test.sh spent a ninth of its five minutes
  # making .venv). Where uv can't be had, pip does it all, as before (and where uv fails: below).
  if ! .venv/bin/python -m pip install -q uv >/dev/null 2>&1; then
    echo "bootstrap: uv could not be installed; pip installs the project (slower)" >&2
    .venv/bin/python -m pip install -q --upgrade pip >/dev/null
  fi
  touch .venv/.bootstrap-ok
fi

# pip_install [--compile] ARGS...: into .venv, by uv if the venv has it, else (or if uv fails)
# by pip. Bytecode is compiled only with --compile (uv leaves it by default, pip needs
# --no-compile to).
pip_install() {
  local compile=no flags
  [ "$1" = --compile ] && { compile=yes; shift; }
  if [ -x .venv/bin/uv ]; then
    flags=(-q --python .venv/bin/python)
    [ "$compile" = yes ] && flags+=(--compile-bytecode)
    .venv/bin/uv pip install "${flags[@]}" "$@" && return 0
    # uv reads none of pip's settings: an index or mirror set up for pip alone is pip's to use.
    echo "bootstrap: uv could not install the project; pip tries (it reads pip's own settings)" >&2
  fi
  flags=(-q)
  [ "$compile" = no ] && flags+=(--no-compile)
  .venv/bin/python -m pip install "${flags[@]}" "$@"
}

# Always with "native": what scripts/build_native.py needs to compile the engine (mypy, setuptools).
spec=".[native${extras:+,$extras}]"
manifests=(pyproject.toml)
[ -f client/pyproject.toml ] && manifests+=(client/pyproject.toml)
hash="$(cat "${manifests[@]}" | sha256sum | cut -c1-16)"
stamp=".venv/.installed-$hash-${extras:-base}"
# An install with the test extras has everything the service needs too.
if [ ! -f "$stamp" ] && ! { [ -z "$extras" ] && [ -f ".venv/.installed-$hash-test" ]; }; then
  echo "bootstrap: installing aos-rules ($spec) into .venv" >&2
  # The test extras bring some 110 packages, 6,900 modules; a whole test run imports 1,100 of
  # them. Their bytecode is left to the tests (test.sh lets Python write it): compiled at install,
  # a fresh clone's ./test.sh set up in 42 s instead of 23 with pip, and its tests took no longer.
  # The service's own install has it compiled.
  if [ "$extras" = test ]; then
    targets=(-e "$spec")
    [ -f client/pyproject.toml ] && targets+=(-e ./client)
    pip_install "${targets[@]}"
  else
    pip_install --compile -e "$spec"
  fi
  rm -f .venv/.installed-*
  touch "$stamp"
fi

# The build listing compiled by mypyc (service/engine/native.py), unless a build of these very
# sources is there: some 10 s on 2 cores, once (again after an edit of the engine; a build of the
# same sources is taken from the user's cache). It needs a C compiler and Python's headers,
# installed from Debian's packages if missing. Where it can't be built, the engine runs as plain
# Python (a build turn's listing a fifth slower): the service goes on; the tests do not
# (tests/engine/test_native.py). AOS_NATIVE=off skips it (and has the engine run its sources):
# an edit-test loop on the engine, ./test.sh --quick, without the build.
headers_missing() {
  ! .venv/bin/python -c 'import os, sys, sysconfig
sys.exit(not os.path.exists(os.path.join(sysconfig.get_paths()["include"], "Python.h")))'
}
build_tools() {  # the C compiler and Python's headers, from Debian's packages: whether it installed any
  local packages=""
  command -v cc >/dev/null || command -v gcc >/dev/null || packages="gcc libc6-dev"
  if headers_missing; then
    packages="$packages python$(.venv/bin/python -c 'import sys; print("%d.%d" % sys.version_info[:2])')-dev"
  fi
  # shellcheck disable=SC2086  # one word per package
  [ -n "$packages" ] && command -v apt-get >/dev/null && apt_install $packages
}
build_native() { .venv/bin/python scripts/build_native.py --if-stale >.venv/native-build.log 2>&1; }
if [ ! -f scripts/build_native.py ]; then
  :  # a checkout without the engine (tests/deploy/test_bootstrap.py's)
elif [ "${AOS_NATIVE:-}" = off ]; then
  echo "bootstrap: AOS_NATIVE=off: the engine runs as plain Python, compiled or not" >&2
else
  # Tried as the machine is; again only if it lacked a build tool that could be installed.
  if build_native || { build_tools && build_native; }; then
    grep -hE '^engine native modules: (built|taken)' .venv/native-build.log | sed 's/^/bootstrap: /' >&2 || true
  else
    echo "bootstrap: the engine's modules could not be compiled (.venv/native-build.log); the" \
         "engine runs as plain Python" >&2
    tail -n 3 .venv/native-build.log >&2
  fi
fi
