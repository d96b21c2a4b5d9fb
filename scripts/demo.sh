#!/usr/bin/env bash
# make demo: start a server, run a seeded random search of 2,000 samples on MobileNet-v2 layer 3 (the MARL paper's "layer 2", docs/zoo.md)
# (maestro-v0, latency objective), log every trial to SQLite, replay the run against the server
# to show it reproduces, and print the best mapping as MAESTRO directives with its metrics.
# Then, when the MARL agents are built, a short MARL-vs-random comparison (scripts/demo-marl.sh).
# Env: BUILD (default build), PYTHON (an interpreter for pretty-printing), OUT (default out/demo).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
BIN=$BUILD/bin
OUT=${OUT:-out/demo}
PY=${PYTHON:-python3}
demo_start=$(date +%s.%N)
mkdir -p "$OUT"
rm -f "$OUT/demo.db" "$OUT/demo.db-wal" "$OUT/demo.db-shm"
tmp=$(mktemp -d)
EP="ipc://$tmp/hwgym.sock"
"$BIN/hwgym-server" --bind "$EP" --workers 2 &
SRV=$!
cleanup() { kill -TERM "$SRV" 2>/dev/null; wait "$SRV" 2>/dev/null || true; rm -rf "$tmp"; }
trap cleanup EXIT
for _ in $(seq 50); do "$BIN/hwgym" envs --endpoint "$EP" >/dev/null 2>&1 && break; sleep 0.1; done

CONFIG='{"model":"mobilenet_v2","layer":3,"objective":"latency"}'
echo "== hwgym demo: random search, 2000 samples, maestro-v0 on MobileNet-v2 layer 3 = the MARL paper's layer 2 (latency)" >&2
echo "   server $EP, trials -> $OUT/demo.db" >&2
start=$(date +%s.%N)
"$BIN/hwgym-search" --endpoint "$EP" --env maestro-v0 --config "$CONFIG" --algo random --seed 1 \
    --budget 2000 --db "$OUT/demo.db" --run-name demo-random > "$OUT/search.json"
echo "== replaying the logged run against the server" >&2
set +e
"$BIN/hwgym" replay "$OUT/demo.db" --endpoint "$EP" > "$OUT/replay.json"
rc=$?
set -e
end=$(date +%s.%N)
"$PY" - "$OUT/search.json" "$OUT/replay.json" "$start" "$end" <<'PYEOF'
import json, sys
s = json.loads(open(sys.argv[1]).read().strip().splitlines()[-1])
r = json.load(open(sys.argv[2]))
m = s.get("best_metrics") or {}
print("random search: %d samples, %.2f s, best reward %.6g" % (s.get("samples", 0), s.get("wall_time_s", s.get("wall_s", 0.0)), s.get("best_reward", 0.0)))
print("replay: %d of %d trials reproduce exactly%s" % (r.get("matching", 0), r.get("trials", 0),
      "" if r.get("matching") == r.get("trials") else "  <-- MISMATCH: " + json.dumps(r.get("mismatches", [])[:2])))
print("best design point:", json.dumps(s.get("best_point", s.get("best_action"))))
mapping = m.get("mapping") or m.get("directives") or ""
print("best mapping (MAESTRO directives):")
for d in [x.strip() for x in mapping.replace("\n", ";").split(";") if x.strip()]:
    print("    " + d + ";")
keys = ["runtime", "energy", "power", "area", "throughput", "edp", "l1_size", "l2_size", "num_pes", "feasible"]
for k in keys:
    if k in m:
        print("    %-12s %s" % (k, m[k]))
print("random search + replay: %.1f s" % (float(sys.argv[4]) - float(sys.argv[3])))
PYEOF
[ $rc -eq 0 ] || { echo "replay found mismatches" >&2; exit 1; }
if [ -x "$BIN/hwgym-marl" ] && [ -x scripts/demo-marl.sh ]; then
    EP="$EP" BIN="$BIN" OUT="$OUT" PYTHON="$PY" scripts/demo-marl.sh
fi
# the whole demo after the build, from the server's start to here (what README.md quotes)
awk -v a="$demo_start" -v b="$(date +%s.%N)" 'BEGIN { printf "total demo time: %.1f s\n", b - a }'
