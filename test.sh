#!/usr/bin/env bash
# Sets up and runs the whole test suite: ./test.sh [--quick] [pytest args]
# The tests run in two xdist workers a core (pytest-xdist --dist loadgroup; AOS_TEST_WORKERS sets
# another count): most of the suite waits on servers, processes and sockets rather than on the CPU:
# a whole run on 2 cores took 4 min 31 s with 4 workers, using 7 CPU-minutes of the 8.6 there were;
# with a worker a core the cores stood idle about a third of the time; six were no quicker
# (4 min 29 s). Each worker starts its own Redis servers and PostgreSQL clusters on free ports.
# --quick leaves out the slow tiers (-m "not slow": e2e under gunicorn, scale and Redis Cluster,
# deploy, archive outages, browser, whole random games, schemathesis, mypy, processes; the markers
# are in pyproject.toml), for the edit-test loop.
# Later pytest arguments still count:
#   ./test.sh --quick tests/api      ./test.sh -m cluster      ./test.sh -n 0 -x tests/engine
# Installs, before any test runs, everything the tests use:
#   into .venv (scripts/bootstrap.sh test): the project, its test extras (pytest, schemathesis,
#     openapi-core, ruff, mypy, playwright, cairosvg, the deploy linters...) and the client in client/;
#   from Debian's packages, those missing of: redis-server and redis-tools (the tests start their
#     own Redis servers on free ports), curl and jq (the README's walk-through), shellcheck and
#     util-linux's unshare (deploy/check.sh, offline), chromium (the browser tests, driven by
#     Playwright; never `playwright install`), libcairo2 (cairosvg renders the board) and
#     postgresql (the archive's tests run initdb and pg_ctl on clusters of their own).
# Then: ruff over the tree, and pytest.
set -euo pipefail
cd "$(dirname "$0")"
# Bytecode written and read again: with PYTHONDONTWRITEBYTECODE set (some machines set it), every
# pytest worker and every server a test starts compiled the service afresh (0.6 -> 0.43 CPU-s an
# import of the API and the worker; pytest's own start 1.65 -> 0.82 CPU-s).
unset PYTHONDONTWRITEBYTECODE
scripts/bootstrap.sh test
# command:package pairs; a library is checked by its file.
missing=""
for tool in redis-server:redis-server redis-cli:redis-tools curl:curl jq:jq shellcheck:shellcheck \
            unshare:util-linux chromium:chromium; do
  command -v "${tool%%:*}" >/dev/null || missing="$missing ${tool#*:}"
done
dpkg-query -W -f='${Status}' libcairo2 2>/dev/null | grep -q 'ok installed' || missing="$missing libcairo2"
# PostgreSQL for the archive's tests, which run initdb and pg_ctl on clusters of their own.
compgen -G "/usr/lib/postgresql/*/bin/initdb" >/dev/null || missing="$missing postgresql"
if [ -n "$missing" ]; then
  echo "test.sh: installing$missing from Debian's packages (before the tests)" >&2
  as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }
  as_root apt-get update -qq >/dev/null
  # shellcheck disable=SC2086  # one word per package
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $missing >/dev/null
fi
printf 'ruff check: '
.venv/bin/ruff check .
quick=()
if [ "${1:-}" = --quick ]; then
  shift
  quick=(-m "not slow")
fi
workers="${AOS_TEST_WORKERS:-$(( $(nproc) * 2 ))}"
exec .venv/bin/python -m pytest -n "$workers" --dist loadgroup ${quick[@]+"${quick[@]}"} "$@"
