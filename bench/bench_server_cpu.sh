#!/usr/bin/env bash
# make bench: bench_server's step round trips again with one CPU for the server's router and
# ZeroMQ I/O threads and for the raw echo alike (hwgym-server --cpu N; bench/README.md, eighth
# session). N is the last CPU this process may run on. Issue 29's line comes out of both runs.
set -euo pipefail
BUILD=${BUILD:-build/bench-O2}
last=$(grep Cpus_allowed_list /proc/self/status | awk '{print $2}' | tr ',' '\n' | tail -1 | sed 's/.*-//')
exec "$BUILD/bench/bench_server" --steps-only --cpu "$last"
