#!/usr/bin/env bash
# Sets up what is missing, then runs the gates and the whole test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/bootstrap.sh --tests
echo "== mypy --strict" && .venv/bin/mypy
echo "== ruff" && .venv/bin/ruff check . && .venv/bin/ruff format --check .
echo "== import-linter" && .venv/bin/lint-imports
echo "== pytest" && .venv/bin/pytest "$@"
