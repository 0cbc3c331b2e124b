#!/bin/sh
# gh, each request of it naming the host it runs for ($STANDIN_CLIENT) in a header the stand-in reads
# (tests/github_standin/server.py, CLIENT_HEADER): several daemons on one machine share one stand-in, and
# each keeps installation tokens of its own. gh takes a flag after the endpoint as before it.
exec gh "$@" -H "X-Standin-Client: ${STANDIN_CLIENT:?the host this gh runs for}"
