#!/usr/bin/env bash
# Sets up and runs the service: ./run.sh [--host H] [--port P]
# With REDIS_URL set, games live in that Redis; without it, in this process's memory.
set -euo pipefail
cd "$(dirname "$0")"
scripts/bootstrap.sh
exec .venv/bin/python -m service "$@"
