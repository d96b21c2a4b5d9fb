#!/usr/bin/env bash
# scripts/paper-rlsched.sh - `make paper-rlsched`: reruns the RL-Scheduling paper's comparisons
# (Tables 5 and 6, Figures 7-9) on sched-v0 in network mode and writes
#   docs/results/rlsched/runs.csv     one row per (method, model, accelerator, objective) run
#   docs/results/rlsched/layers.jsonl.gz   the per-layer tables behind each row
#   docs/results/rlsched.md           the tables, made from runs.csv alone by
#                                     scripts/rlsched-tables.py (rerun it to recompute them)
#
# Knobs (environment):
#   BUILD=build               where bin/ is
#   RLSCHED_EPISODES=10       training episodes per RL run (the paper: up to 3000)
#   RLSCHED_SAMPLES=2000      random-pruned samples per layer (Timeloop-style mapper)
#   RLSCHED_SEED=1
#   RLSCHED_MODELS="yolov3 inception_v4 mobilenet_v3 resnet50"
#   RLSCHED_ACCELS="eyeriss_v1 simba tpu_v3"
#   RLSCHED_OUT=docs/results
# Runs in process (--endpoint local); every RL step is logged in a temporary trial DB.
set -euo pipefail

BUILD=${BUILD:-build}
BIN=$BUILD/bin
EPISODES=${RLSCHED_EPISODES:-10}
SAMPLES=${RLSCHED_SAMPLES:-2000}
SEED=${RLSCHED_SEED:-1}
MODELS=${RLSCHED_MODELS:-yolov3 inception_v4 mobilenet_v3 resnet50}
ACCELS=${RLSCHED_ACCELS:-eyeriss_v1 simba tpu_v3}
OUT=${RLSCHED_OUT:-docs/results}
PY=${PYTHON:-python3}
DATA=$OUT/rlsched
mkdir -p "$DATA"
for b in hwgym hwgym-rlsched; do
    [ -x "$BIN/$b" ] || { echo "paper-rlsched: $BIN/$b is not built (make all)" >&2; exit 1; }
done
WORK=$(mktemp -d /tmp/hwgym-paper-rlsched.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
CSV=$DATA/runs.csv
LAYERS=$WORK/layers.jsonl
echo "method,model,accelerator,objective,energy_pj,cycles,wall_s,samples,episodes" > "$CSV"
: > "$LAYERS"
T0=$(date +%s)
log() { printf '[paper-rlsched %4ds] %s\n' $(( $(date +%s) - T0 )) "$*" >&2; }
now() { date +%s.%N; }

# row METHOD MODEL ACC OBJ JSONFILE WALL SAMPLES EPISODES: totals from a summary file
row() {
    "$PY" - "$@" >> "$CSV" 2>>"$WORK/py.err" <<'EOF'
import json, sys
method, model, acc, obj, path, wall, samples, episodes = sys.argv[1:9]
d = json.load(open(path))
if method == "rl":
    t = d["best_seen"]
    e, c = t["total_energy_pj"], t["total_cycles"]
else:
    e, c = d["metrics"]["energy_pj"], d["metrics"]["cycles"]
print(f"{method},{model},{acc},{obj},{e:.6e},{c:.6e},{float(wall):.2f},{samples},{episodes}")
EOF
}
# keep the per-layer tables of a run (one JSON line)
keep_layers() {
    "$PY" - "$@" >> "$LAYERS" <<'EOF'
import json, sys
method, model, acc, obj, path = sys.argv[1:6]
d = json.load(open(path))
layers = d["best_seen"]["layers"] if method == "rl" else d["metrics"].get("layers", [])
print(json.dumps({"method": method, "model": model, "accelerator": acc, "objective": obj, "layers": layers},
                 separators=(",", ":")))
EOF
}

for obj in energy cycles; do
    for acc in $ACCELS; do
        for model in $MODELS; do
            cfg="{\"accelerator\":\"$acc\",\"model\":\"$model\",\"mode\":\"network\",\"objective\":\"$obj\"}"
            methods="bottom-up"
            # Figures 7-8: every method on Eyeriss and TPU v3 (energy objective)
            if [ "$obj" = energy ] && { [ "$acc" = eyeriss_v1 ] || [ "$acc" = tpu_v3 ]; }; then
                methods="bottom-up top-down random-pruned cosa"
            fi
            for m in $methods; do
                f=$WORK/$m-$model-$acc-$obj.json
                t=$(now)
                "$BIN/hwgym" eval sched-v0 --config "$cfg" \
                    --action "{\"baseline\":\"$m\",\"seed\":$SEED,\"samples\":$SAMPLES}" > "$f"
                w=$(awk -v a="$(now)" -v b="$t" "BEGIN{print a-b}")
                row "$m" "$model" "$acc" "$obj" "$f" "$w" "$([ "$m" = random-pruned ] && echo "$SAMPLES" || echo 0)" 0
                keep_layers "$m" "$model" "$acc" "$obj" "$f"
            done
            f=$WORK/rl-$model-$acc-$obj.json
            t=$(now)
            "$BIN/hwgym-rlsched" --endpoint local --config "$cfg" --episodes "$EPISODES" --budget 100000000 \
                --seed "$SEED" --quiet --no-greedy --db "$WORK/rl.db" > "$f"
            w=$(awk -v a="$(now)" -v b="$t" "BEGIN{print a-b}")
            s=$("$PY" -c "import json,sys; print(json.load(open(sys.argv[1]))['samples'])" "$f")
            row rl "$model" "$acc" "$obj" "$f" "$w" "$s" "$EPISODES"
            keep_layers rl "$model" "$acc" "$obj" "$f"
            log "$obj $acc $model done"
        done
    done
done
gzip -9 -n -c "$LAYERS" > "$DATA/layers.jsonl.gz"
"$PY" scripts/rlsched-tables.py "$CSV" --episodes "$EPISODES" --samples "$SAMPLES" --seconds $(( $(date +%s) - T0 )) \
    > "$OUT/rlsched.md"
log "wrote $OUT/rlsched.md and $DATA/"
