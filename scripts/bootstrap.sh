#!/usr/bin/env bash
# Installs what the-loop needs on a fresh Debian-like machine, and with --tests what its tests need
# too (the dev tools, PostgreSQL, Chromium, the real agents); cheap when done already.
set -euo pipefail
cd "$(dirname "$0")/.."
tests=0
[ "${1:-}" = "--tests" ] && tests=1

missing=()
command -v tmux >/dev/null 2>&1 || missing+=(tmux)
command -v gh >/dev/null 2>&1 || missing+=(gh)
command -v git >/dev/null 2>&1 || missing+=(git)  # workspaces: one git worktree per work item
command -v openssl >/dev/null 2>&1 || missing+=(openssl)  # the tests' HTTPS stand-in makes its certificate
command -v python3 >/dev/null 2>&1 || missing+=(python3 python3-venv)
if [ "$tests" -eq 1 ]; then
  # the PostgreSQL state store's tests start a private server from Debian's binaries
  compgen -G '/usr/lib/postgresql/*/bin/initdb' >/dev/null || missing+=(postgresql)
  # the fault tests mount a small ext4 of their own at the state folder, fill it, make it immutable
  { command -v mkfs.ext4 && command -v chattr; } >/dev/null 2>&1 || missing+=(e2fsprogs)
  # npm fetches the real agents' pinned packages for the tests (scripts/install_*.py), unless all are
  # installed; Node runs those that are bundles (Gemini CLI), the others are native binaries
  for installer in scripts/install_*.py; do
    command -v python3 >/dev/null 2>&1 && python3 "$installer" --check >/dev/null 2>&1 && continue
    command -v npm >/dev/null 2>&1 || missing+=(npm)
    break
  done
  command -v node >/dev/null 2>&1 || missing+=(nodejs)
  # the fleet page's browser tests drive Debian's Chromium with Playwright (never a downloaded browser)
  [ -x /usr/bin/chromium ] || missing+=(chromium)
fi
if [ ${#missing[@]} -gt 0 ]; then
  echo "bootstrap: installing ${missing[*]} from the distribution's packages" >&2
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi

python=${PYTHON:-python3}
if ! "$python" -c 'import sys; sys.exit(sys.version_info < (3, 11))'; then
  echo "bootstrap: the-loop needs Python 3.11 or newer ($python is $("$python" -V 2>&1))" >&2
  exit 1
fi

# The project alone to run it; its dev extras (mypy, ruff, pytest...) only for the tests. The stamp
# says what was installed from which pyproject.toml: "<sha256> runtime" or "<sha256> dev".
stamp=.venv/.the-loop-installed
hash=$(sha256sum pyproject.toml | cut -d' ' -f1)
{ read -r had_hash had_kind < "$stamp"; } 2>/dev/null || { had_hash=""; had_kind=""; }
[ -n "$had_hash" ] && [ -z "$had_kind" ] && had_kind=dev  # a stamp from before the split: it installed both
[ -x .venv/bin/python ] || had_kind=""
kind=runtime
{ [ "$tests" -eq 1 ] || [ "$had_kind" = dev ]; } && kind=dev  # a dev install stays one
if [ "$had_hash" != "$hash" ] || [ "$had_kind" != "$kind" ]; then
  if [ "$kind" = dev ]; then
    echo "bootstrap: installing the Python project and its dev tools into .venv" >&2
    extras='.[dev]'
  else
    echo "bootstrap: installing the Python project into .venv" >&2
    extras='.'
  fi
  "$python" -m venv .venv
  .venv/bin/pip install -q --disable-pip-version-check -e "$extras"
  echo "$hash $kind" > "$stamp"
fi

[ "$tests" -eq 1 ] || exit 0

# the real agents at pinned versions, for the tests that run them (tests/claude/, tests/codex/, …);
# each installer declares its pin over scripts/pinned_npm.py
# (exit 3: no package for this machine; the tests that need it then say so)
for installer in scripts/install_*.py; do
  rc=0
  "$python" "$installer" >/dev/null || rc=$?
  if [ "$rc" -ne 0 ] && [ "$rc" -ne 3 ]; then
    echo "bootstrap: $installer could not install its tool (see above)" >&2
    exit 1
  fi
done
