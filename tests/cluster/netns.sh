#!/usr/bin/env bash
# Many hosts, for real: network namespaces joined by veth pairs (addresses 10.231.x.y exist only
# inside the namespaces this script creates and removes). hwgym-server (CURVE on, allow-list)
# and the hwgym-marl launcher run in one namespace, the two MARL workers in two others, each over
# its own veth link. Mid-run the second worker's link is cut: the first worker must get the
# barrier-timeout error naming the missing agent within its timeout, and the trial log must hold
# exactly the samples the first worker reported before the cut.
#   tests/cluster/netns.sh BUILD_BIN     exit 0 pass, 1 fail, 77 skipped (reason on stdout)
set -uo pipefail
BIN=$(readlink -f "${1:-build/bin}")
skip() { echo "SKIP: $*"; exit 77; }
command -v ip >/dev/null || skip "iproute2 not installed"
[ -x "$BIN/hwgym-server" ] || skip "$BIN/hwgym-server not built"
command -v sqlite3 >/dev/null || skip "sqlite3 not installed"
id=$$
NS_S=hwgs$id NS_1=hwg1$id NS_2=hwg2$id
ip netns add "$NS_S" 2>/dev/null || skip "cannot create network namespaces (needs CAP_NET_ADMIN)"
T=$(mktemp -d /tmp/hwgym-netns.XXXXXX)
PIDS=()
cleanup() {
  for p in "${PIDS[@]}"; do kill -KILL "$p" 2>/dev/null; done
  for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null; done
  ip netns del "$NS_S" 2>/dev/null; ip netns del "$NS_1" 2>/dev/null; ip netns del "$NS_2" 2>/dev/null
  rm -rf "$T"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; for l in "$T"/*.err "$T"/*.log; do [ -f "$l" ] && { echo "== $l"; tail -5 "$l"; }; done; exit 1; }
ip netns add "$NS_1" && ip netns add "$NS_2" || fail "ip netns add"
ip link add "hwv1$id" netns "$NS_S" type veth peer name "hwp1$id" netns "$NS_1" || fail "veth 1"
ip link add "hwv2$id" netns "$NS_S" type veth peer name "hwp2$id" netns "$NS_2" || fail "veth 2"
ip -n "$NS_S" addr add 10.231.1.1/24 dev "hwv1$id"; ip -n "$NS_S" addr add 10.231.2.1/24 dev "hwv2$id"
ip -n "$NS_1" addr add 10.231.1.2/24 dev "hwp1$id"; ip -n "$NS_2" addr add 10.231.2.2/24 dev "hwp2$id"
for ns in "$NS_S" "$NS_1" "$NS_2"; do ip -n "$ns" link set lo up; done
ip -n "$NS_S" link set "hwv1$id" up; ip -n "$NS_S" link set "hwv2$id" up
ip -n "$NS_1" link set "hwp1$id" up; ip -n "$NS_2" link set "hwp2$id" up
ip netns exec "$NS_1" ip route get 10.231.2.1 >/dev/null 2>&1 && fail "namespace 1 can route to link 2 (not isolated)"

# CURVE: a server keypair and one allow-listed client identity
sk=$("$BIN/hwgym-server" --curve-keygen); ck=$("$BIN/hwgym-server" --curve-keygen)
field() { echo "$1" | sed -n "s/.*\"$2\": *\"\([^\"]*\)\".*/\1/p"; }
field "$sk" secret > "$T/server.key"; field "$ck" public > "$T/allow.txt"
export HWGYM_CURVE_SERVERKEY=$(field "$sk" public) HWGYM_CURVE_PUBLICKEY=$(field "$ck" public) HWGYM_CURVE_SECRETKEY=$(field "$ck" secret)

ip netns exec "$NS_S" "$BIN/hwgym-server" --bind tcp://0.0.0.0:5555 --workers 2 --curve-secret "$T/server.key" \
  --curve-allow "$T/allow.txt" 2> "$T/server.log" &
PIDS+=($!)
for _ in $(seq 1 50); do ip netns exec "$NS_1" "$BIN/hwgym" envs --endpoint tcp://10.231.1.1:5555 >/dev/null 2>&1 && break; sleep 0.1; done
ip netns exec "$NS_1" "$BIN/hwgym" envs --endpoint tcp://10.231.1.1:5555 >/dev/null 2>&1 || fail "workers' namespace 1 cannot reach the server over CURVE"
# without the allow-listed identity the server refuses (no reply: the client times out)
if ip netns exec "$NS_2" env -u HWGYM_CURVE_PUBLICKEY -u HWGYM_CURVE_SECRETKEY timeout 10 "$BIN/hwgym" envs --endpoint tcp://10.231.2.1:5555 --timeout 1500 >/dev/null 2>&1; then
  fail "a client outside the allow-list was served"
fi

TMO=3000
echo '{"agents":[{"name":"pe","dims":[0,1,2,3,4]},{"name":"tile","dims":[5,6,7,8,9]}]}' > "$T/two.json"
ip netns exec "$NS_S" "$BIN/hwgym-marl" --endpoint tcp://10.231.1.1:5555 --env maestro-v0 \
  --config '{"model":"mobilenet_v2","layer":2}' --agents "$T/two.json" --budget 1000000 --seed 1 \
  --agent-timeout-ms $TMO --db "$T/marl.db" --print-commands --quiet > "$T/cmds.txt" 2> "$T/launcher.err" &
PIDS+=($!)
for _ in $(seq 1 50); do [ "$(wc -l < "$T/cmds.txt")" -ge 2 ] && break; sleep 0.1; done
[ "$(wc -l < "$T/cmds.txt")" -ge 2 ] || fail "the launcher printed no worker commands"
c_pe=$(sed -n 1p "$T/cmds.txt"); c_tile=$(sed -n 2p "$T/cmds.txt" | sed 's#tcp://10.231.1.1:5555#tcp://10.231.2.1:5555#')
case "$c_pe" in *"--agent pe"*) ;; *) fail "unexpected first command: $c_pe";; esac
ip netns exec "$NS_1" bash -c "exec $c_pe" > "$T/pe.out" 2> "$T/pe.err" &
pe=$!; PIDS+=($pe)
ip netns exec "$NS_2" bash -c "exec $c_tile" > "$T/tile.out" 2> "$T/tile.err" &
PIDS+=($!)
# mid-run: once trials are arriving, cut the second worker's link
for _ in $(seq 1 100); do
  n=$(sqlite3 "$T/marl.db" "SELECT COUNT(*) FROM trials" 2>/dev/null || echo 0); [ "${n:-0}" -ge 200 ] && break; sleep 0.1
done
[ "${n:-0}" -ge 200 ] || fail "no trials arrived ($n)"
ip -n "$NS_2" link set "hwp2$id" down
t_cut=$(date +%s.%N)
wait $pe; rc=$?
t_end=$(date +%s.%N)
el=$(awk "BEGIN{printf \"%.2f\", $t_end - $t_cut}")
[ $rc -eq 1 ] || fail "worker pe exited $rc, expected 1"
grep -q "TIMEOUT" "$T/pe.err" && grep -q "missing agents: tile" "$T/pe.err" || fail "pe's error does not name the missing agent: $(cat "$T/pe.err")"
# within its timeout: the barrier timeout (3 s) plus at most one step's slack
ok=$(awk "BEGIN{print ($el <= $TMO / 1000 + 2)}"); [ "$ok" = 1 ] || fail "pe noticed after ${el}s (timeout $((TMO / 1000))s)"
# the log holds exactly the samples pe completed (its error: '... after N samples: ...')
said=$(sed -n 's/.* after \([0-9]*\) samples:.*/\1/p' "$T/pe.err" | head -1)
got=$(sqlite3 "$T/marl.db" "SELECT COUNT(*) FROM trials WHERE worker = 'pe'")
all=$(sqlite3 "$T/marl.db" "SELECT COUNT(*) FROM trials")
[ -n "$said" ] && [ "$said" = "$got" ] && [ "$got" = "$all" ] || fail "pe reported $said samples; the log holds $got of pe ($all in all)"
last=$(sqlite3 "$T/marl.db" "SELECT MAX(episode) FROM trials")
echo "cut after $said samples (episode $last); pe got: $(grep -o 'TIMEOUT.*' "$T/pe.err" | head -1) after ${el}s"
echo PASS
