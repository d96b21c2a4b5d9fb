#!/usr/bin/env bash
# make bench: what --spin-us costs when clients outnumber the CPUs. N clients (bench_server --drive,
# 5,000 maestro-v0 steps each, in a loop) step one server at once, with --spin-us 0 and 200 in
# turn: the steps per second of all of them together and the server's CPU seconds (README "The
# server", bench/README.md "Ninth session"). One client per CPU or fewer: polling is faster; more
# clients than CPUs: its polls take CPU the clients need.
set -euo pipefail
BUILD=${BUILD:-build/bench-O2}
port=$(( 20000 + $$ % 10000 ))
run() { # spin clients
  "$BUILD/bin/hwgym-server" --bind "tcp://127.0.0.1:$port" --spin-us "$1" 2>/dev/null &
  local sp=$! pids=() i
  sleep 0.5
  local c0 t0 t1 c1
  c0=$(awk '{print $14 + $15}' "/proc/$sp/stat")
  t0=$(date +%s.%N)
  for ((i = 0; i < $2; i++)); do
    "$BUILD/bench/bench_server" --drive "tcp://127.0.0.1:$port" --only maestro-v0 --iters 5000 >/dev/null 2>&1 &
    pids+=($!)
  done
  wait "${pids[@]}"
  t1=$(date +%s.%N)
  c1=$(awk '{print $14 + $15}' "/proc/$sp/stat")
  kill "$sp"; wait "$sp" 2>/dev/null || true
  awk -v s="$1" -v n="$2" -v t0="$t0" -v t1="$t1" -v c="$((c1 - c0))" -v hz="$(getconf CLK_TCK)" \
    'BEGIN { printf "  --spin-us %3d, %d clients: %6.0f steps/s together (wall %.2f s, client start-up included), server CPU %.2f s\n", s, n, 5000 * n / (t1 - t0), t1 - t0, c / hz }'
  port=$((port + 1))
}
echo "N clients stepping one server at once, $(nproc) CPUs:"
for n in 1 2 4 8; do run 0 "$n"; run 200 "$n"; done
