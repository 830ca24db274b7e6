#!/usr/bin/env bash
# Makes .venv with the project installed. Safe to run again: it reinstalls only when
# pyproject.toml changed. Usage: scripts/bootstrap.sh [extras]   (e.g. "test")
set -euo pipefail
cd "$(dirname "$0")/.."
extras="${1:-}"

as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }
apt_install() {
  echo "bootstrap: installing $* from Debian's packages" >&2
  as_root apt-get update -qq >/dev/null
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
}

command -v python3 >/dev/null || apt_install python3 python3-venv python3-pip
if [ ! -x .venv/bin/python ]; then
  python3 -m venv .venv 2>/dev/null || { apt_install python3-venv; rm -rf .venv; python3 -m venv .venv; }
fi

spec="."; [ -n "$extras" ] && spec=".[$extras]"
hash="$(cat pyproject.toml client/pyproject.toml 2>/dev/null | sha256sum | cut -c1-16)"
stamp=".venv/.installed-$hash-${extras:-base}"
# An install with the test extras has everything the service needs too.
if [ ! -f "$stamp" ] && ! { [ -z "$extras" ] && [ -f ".venv/.installed-$hash-test" ]; }; then
  echo "bootstrap: installing aos-rules ($spec) into .venv" >&2
  .venv/bin/python -m pip install -q --upgrade pip >/dev/null
  .venv/bin/python -m pip install -q -e "$spec"
  if [ -f client/pyproject.toml ] && [ "$extras" = test ]; then
    .venv/bin/python -m pip install -q -e ./client
  fi
  rm -f .venv/.installed-*
  touch "$stamp"
fi
