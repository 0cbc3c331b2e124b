#!/usr/bin/env bash
# Sets up what is missing, then runs the gates and the whole test suite, printing its 25 slowest tests.
#   scripts/test.sh [PYTEST ARGS...]   everything, as CI runs it, four tests at a time (pytest-xdist);
#                                      TEST_WORKERS=N for another number (0: one process, in order)
#   scripts/test.sh --quick [ARGS...]  a developer's loop: the domain, service and contract tests only,
#                                      side by side (pytest-xdist); no gates, no real agents
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/bootstrap.sh --tests
if [ "${1:-}" = "--quick" ]; then
  shift
  # most of these tests wait on tmux, gh or PostgreSQL rather than compute: more workers than cores
  exec .venv/bin/pytest -n 4 --dist worksteal tests/unit tests/service tests/contract "$@"
fi
echo "== mypy --strict" && .venv/bin/mypy
echo "== ruff" && .venv/bin/ruff check . && .venv/bin/ruff format --check .
echo "== import-linter" && .venv/bin/lint-imports
# Most tests wait on tmux, an agent's turn, gh or PostgreSQL rather than compute: four at a time on two
# cores took a third of the serial run's time (docs/reliability.md, "The test suite"). The slow folders
# run first (tests/conftest.py); a worker left without work takes queued tests from a busy one
# (`--dist worksteal`), so no worker ends the run alone on a queue the others could have shared.
echo "== pytest" && .venv/bin/pytest -n "${TEST_WORKERS:-4}" --dist worksteal --durations=25 "$@"
