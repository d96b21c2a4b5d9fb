#!/usr/bin/env bash
# MARL over network namespaces vs loopback (issue 19): hwgym-marl, maestro-v0 (MobileNet-v2
# layer 2), decentralised (10 workers), HWGYM_MARL_BENCH_BUDGET samples (default 20000), seed 1:
#  - loopback: server, launcher and the 10 workers on tcp 127.0.0.1;
#  - namespaces: server + launcher in one namespace, the 10 workers spread round-robin over three
#    other namespaces, each joined to the server's by its own veth pair.
# Prints both wall times and their ratio. Needs root (CAP_NET_ADMIN); says so and exits 0 otherwise.
set -uo pipefail
cd "$(dirname "$0")/.."
BIN=$(readlink -f "${BUILD:-build/bench-O2}/bin")
B=${HWGYM_MARL_BENCH_BUDGET:-20000}
CFG='{"model":"mobilenet_v2","layer":2}'
id=$$
ip netns add "hwbs$id" 2>/dev/null || { echo "bench_marl_netns: skipped (cannot create network namespaces: needs root)"; exit 0; }
T=$(mktemp -d /tmp/hwgym-bench-netns.XXXXXX)
PIDS=()
cleanup() {
  for p in "${PIDS[@]}"; do kill -TERM "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
  for n in s 0 1 2; do ip netns del "hwb$n$id" 2>/dev/null; done
  rm -rf "$T"
}
trap cleanup EXIT
for k in 0 1 2; do
  ip netns add "hwb$k$id"
  ip link add "hwbv$k$id" netns "hwbs$id" type veth peer name "hwbp$k$id" netns "hwb$k$id"
  ip -n "hwbs$id" addr add "10.232.$k.1/24" dev "hwbv$k$id"; ip -n "hwb$k$id" addr add "10.232.$k.2/24" dev "hwbp$k$id"
  ip -n "hwbs$id" link set "hwbv$k$id" up; ip -n "hwb$k$id" link set "hwbp$k$id" up; ip -n "hwb$k$id" link set lo up
done
ip -n "hwbs$id" link set lo up

# loopback
port=$((22000 + id % 20000))
"$BIN/hwgym-server" --bind "tcp://127.0.0.1:$port" --workers 2 2>/dev/null & PIDS+=($!)
sleep 0.3
t0=$(date +%s.%N)
"$BIN/hwgym-marl" --endpoint "tcp://127.0.0.1:$port" --env maestro-v0 --config "$CFG" --budget "$B" --seed 1 --quiet \
  > "$T/lo.json" || { echo "loopback run failed"; exit 1; }
t_lo=$(awk "BEGIN{print $(date +%s.%N) - $t0}")

# namespaces
ip netns exec "hwbs$id" "$BIN/hwgym-server" --bind "tcp://0.0.0.0:5555" --workers 2 2>/dev/null & PIDS+=($!)
sleep 0.3
t0=$(date +%s.%N)
ip netns exec "hwbs$id" "$BIN/hwgym-marl" --endpoint tcp://10.232.0.1:5555 --env maestro-v0 --config "$CFG" \
  --budget "$B" --seed 1 --db "$T/ns.db" --print-commands --quiet > "$T/cmds.txt" & launcher=$!
for _ in $(seq 1 100); do [ "$(wc -l < "$T/cmds.txt")" -ge 10 ] && break; sleep 0.05; done
w=()
i=0
while IFS= read -r line; do
  case "$line" in \{*) continue;; esac
  k=$((i % 3)); i=$((i + 1))
  cmd=$(echo "$line" | sed "s#tcp://10.232.0.1:5555#tcp://10.232.$k.1:5555#")
  ip netns exec "hwb$k$id" bash -c "exec $cmd" > /dev/null & w+=($!)
done < <(head -10 "$T/cmds.txt")
for p in "${w[@]}"; do wait "$p" || { echo "a namespaced worker failed"; exit 1; }; done
wait $launcher || { echo "the namespaced launcher failed"; exit 1; }
t_ns=$(awk "BEGIN{print $(date +%s.%N) - $t0}")
n=$(sqlite3 "$T/ns.db" "SELECT COUNT(*) FROM trials")
awk "BEGIN{printf \"MARL %d samples, 10 workers: loopback %.1f s; three namespaces over veth %.1f s (%d trials logged): ratio ns/loopback %.2f\n\", $B, $t_lo, $t_ns, $n, $t_ns / $t_lo}"
