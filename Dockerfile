# A containerised integration run: tmux, gh, the project and every test, set up and run by the very
# script CI runs (.ci/run -> scripts/test.sh -> scripts/bootstrap.sh), so CI exercises each step.
#
#   docker build -t the-loop . && docker run --rm the-loop
#
# Some tests only: docker run --rm the-loop scripts/test.sh tests/e2e -x
# The fault tests mount a small loop file system at a state folder: `docker run --privileged` runs
# them; without it they skip, loudly.
FROM python:3.11-bookworm

WORKDIR /the-loop
COPY . .
# tmux, gh and openssl from Debian's packages (as root: no sudo), the project and its dev tools
# into .venv; in a layer of its own, so `docker run` starts with everything installed
RUN scripts/bootstrap.sh --tests
CMD [".ci/run"]
