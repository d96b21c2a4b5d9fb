#!/usr/bin/env bash
# make bench: issue 29's fixed-step lines over fresh process pairs with hwgym-server --spin-us 200
# (the router polls 200 us for the next request after each reply instead of sleeping at once):
# against the plain blocking echo (what a client stepping in a loop gains, and the server's CPU it
# costs), then against an echo that polls alike (like for like). README "The server".
set -euo pipefail
BUILD=${BUILD:-build/bench-O2}
"$BUILD/bench/bench_instances" --pairs 4 --spin-us 200
"$BUILD/bench/bench_instances" --pairs 4 --spin-us 200 --echo-spins
