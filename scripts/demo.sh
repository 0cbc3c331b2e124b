#!/usr/bin/env bash
# Sets up what is missing, then runs the demo: the sandbox tracker and the demo harness.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/bootstrap.sh
exec .venv/bin/python -m app demo "$@"
