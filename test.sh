#!/usr/bin/env bash
# Sets up and runs the whole test suite: ./test.sh [pytest args]
# Installs what the tests need (the project, its test extras, redis-server, curl, jq);
# the tests start and stop their own Redis servers on free ports.
set -euo pipefail
cd "$(dirname "$0")"
scripts/bootstrap.sh test
# Debian packages the tests use: a real Redis, curl and jq for the README's walk-through, and
# Chromium for the browser tests (driven by the playwright package; never `playwright install`).
missing=""
for tool in redis-server:redis-server redis-cli:redis-tools curl:curl jq:jq chromium:chromium; do
  command -v "${tool%%:*}" >/dev/null || missing="$missing ${tool#*:}"
done
if [ -n "$missing" ]; then
  echo "test.sh: installing$missing from Debian's packages" >&2
  as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }
  as_root apt-get update -qq >/dev/null
  # shellcheck disable=SC2086  # one word per package
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $missing >/dev/null
fi
.venv/bin/ruff check .
exec .venv/bin/python -m pytest "$@"
