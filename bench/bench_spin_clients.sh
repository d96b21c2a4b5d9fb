#!/usr/bin/env bash
# make bench: what the router's polling (hwgym-server --spin-us, --spin-clients; server/spin.h)
# gives and costs as clients outnumber the CPUs. N clients (bench_server --drive, 5,000 maestro-v0
# steps each, in a loop) step one server at once, the server in turn not polling (--spin-us 0),
# as it starts by default (polling 200 us while at most half the CPUs' worth of clients step), and
# polling whatever the clients (--spin-clients 64): the steps per second of all of them together and
# the server's CPU seconds (README "The server", bench/README.md issue 29). Polling pays while a
# CPU is free for it and costs the clients CPU when they outnumber the CPUs; the default's gate
# should follow the better of the other two at every N.
set -euo pipefail
BUILD=${BUILD:-build/bench-O2}
STEPS=${STEPS:-5000} # maestro-v0 steps a client
port=$(( 20000 + $$ % 10000 ))
run() { # label clients server-flags...
  local label=$1 n=$2
  shift 2
  "$BUILD/bin/hwgym-server" --bind "tcp://127.0.0.1:$port" "$@" 2>/dev/null &
  local sp=$! pids=() i
  sleep 0.5
  local c0 t0 t1 c1
  c0=$(awk '{print $14 + $15}' "/proc/$sp/stat")
  t0=$(date +%s.%N)
  for ((i = 0; i < n; i++)); do
    "$BUILD/bench/bench_server" --drive "tcp://127.0.0.1:$port" --only maestro-v0 --iters "$STEPS" >/dev/null 2>&1 &
    pids+=($!)
  done
  wait "${pids[@]}"
  t1=$(date +%s.%N)
  c1=$(awk '{print $14 + $15}' "/proc/$sp/stat")
  kill "$sp"; wait "$sp" 2>/dev/null || true
  awk -v l="$label" -v n="$n" -v t0="$t0" -v t1="$t1" -v c="$((c1 - c0))" -v hz="$(getconf CLK_TCK)" -v steps="$STEPS" \
    'BEGIN { printf "  %-28s %d clients: %6.0f steps/s together (wall %.2f s, client start-up included), server CPU %.2f s\n", l ",", n, steps * n / (t1 - t0), t1 - t0, c / hz }'
  port=$((port + 1))
}
echo "N clients stepping one server at once, $(nproc) CPUs:"
for n in 1 2 4 8; do
  run "--spin-us 0 (not polling)" "$n" --spin-us 0
  run "default" "$n"
  run "--spin-clients 64 (ungated)" "$n" --spin-clients 64
done
