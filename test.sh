#!/usr/bin/env bash
# Sets up and runs the whole test suite: ./test.sh [pytest args]
# Installs what the tests need (the project, its test extras, a Redis server binary);
# the tests start and stop their own Redis servers on free ports.
set -euo pipefail
cd "$(dirname "$0")"
scripts/bootstrap.sh test
if ! command -v redis-server >/dev/null; then
  echo "test.sh: installing redis-server" >&2
  if [ "$(id -u)" = 0 ]; then apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server >/dev/null
  else sudo apt-get update -qq && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server >/dev/null; fi
fi
.venv/bin/ruff check .
exec .venv/bin/python -m pytest "$@"
