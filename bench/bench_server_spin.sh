#!/usr/bin/env bash
# make bench: issue 29's fixed-step lines over fresh process pairs, like for like. bench_instances
# alone (run by make bench) measures the server as it starts by default, which polls 200 us for
# the next request after each reply while few clients step (server/spin.h), against the plain
# blocking echo. Here: a server that does not poll (--spin-us 0) against the blocking echo, then
# the default server against an echo that polls alike: both sides without, then both with, the
# wake-up the polls remove. README "The server".
set -euo pipefail
BUILD=${BUILD:-build/bench-O2}
"$BUILD/bench/bench_instances" --pairs 4 --spin-us 0
"$BUILD/bench/bench_instances" --pairs 4 --echo-spins
