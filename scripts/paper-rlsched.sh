#!/usr/bin/env bash
# scripts/paper-rlsched.sh - `make paper-rlsched`: reruns the RL-Scheduling paper's comparisons
# (Tables 5 and 6, Figures 7-9) on sched-v0 in network mode, with the controls that say what the
# policy adds to the search (issue 26), and writes
#   docs/results/rlsched/runs.csv      one row per (method, model, accelerator, objective, seed)
#   docs/results/rlsched/curves.jsonl  per RL run: greedy objective against episodes, and the
#                                      objective each training episode ended with
#   docs/results/rlsched/transfer.csv  a policy trained on one model, scored greedily on another
#   docs/results/rlsched/layers.jsonl.gz   the per-layer tables behind the baseline and RL rows
#   docs/results/rlsched.md            the page, made from the three files above alone by
#                                      scripts/rlsched-tables.py (rerun it to recompute the page)
#
# For every model/accelerator pair (PAIRS, in order):
#   - the baselines (bottom-up, top-down, CoSA-like, random-pruned) under every objective in OBJECTIVES;
#   - for every seed and every objective in RL_OBJECTIVES: hwgym-rlsched trained for EPISODES
#     episodes with a greedy pass every EVAL_EVERY episodes (rows rl-greedy and rl-best-seen), and
#     the same run with --no-learn (untrained-greedy, untrained-best-seen; untrained-sampled is
#     the mean objective its sampled training episodes ended with);
#   - transfer: each trained policy scored greedily (--load --eval-only) on the other models of
#     TRANSFER_MODELS on the same accelerator.
# Each run appends its rows as it ends, so a run cut short keeps what it finished; RLSCHED_APPEND=1
# continues an earlier run (rows already present are skipped).
#
# Knobs (environment):
#   BUILD=build
#   RLSCHED_PAIRS="resnet50:eyeriss_v1 ..."   model:accelerator pairs (default: every model x
#                                              eyeriss_v1 simba tpu_v3)
#   RLSCHED_EPISODES=50  RLSCHED_EVAL_EVERY=10  RLSCHED_SEEDS="1 2 3 4 5"
#   RLSCHED_CONTROL_EPISODES=$RLSCHED_EPISODES  episodes of the --no-learn control runs (the
#                                              committed page used 10: see docs/results/rlsched.md)
#   RLSCHED_OBJECTIVES="energy cycles"  (baselines)   RLSCHED_RL_OBJECTIVES=energy
#   RLSCHED_SAMPLES=2000  random-pruned samples per layer
#   RLSCHED_BASELINES="bottom-up top-down cosa random-pruned"
#   (RLSCHED_SEEDS="" runs the baselines alone)
#   RLSCHED_TRANSFER_MODELS="resnet50 mobilenet_v3"
#   RLSCHED_OUT=docs/results   RLSCHED_APPEND=0   RLSCHED_WEIGHTS=/tmp/hwgym-rlsched-weights
#   RLSCHED_WORKERS=1  episode workers of every training and control run (hwgym-rlsched
#                      --workers; results are deterministic per seed and N, and differ between
#                      N: the committed page is N = 1)
# Runs in process (--endpoint local), one process at a time.
set -euo pipefail

BUILD=${BUILD:-build}
BIN=$BUILD/bin
EPISODES=${RLSCHED_EPISODES:-50}
EVAL_EVERY=${RLSCHED_EVAL_EVERY:-10}
CONTROL_EPISODES=${RLSCHED_CONTROL_EPISODES:-$EPISODES}
SEEDS=${RLSCHED_SEEDS-1 2 3 4 5}
SAMPLES=${RLSCHED_SAMPLES:-2000}
BASELINE_LIST=${RLSCHED_BASELINES-bottom-up top-down cosa random-pruned}
OBJECTIVES=${RLSCHED_OBJECTIVES:-energy cycles}
RL_OBJECTIVES=${RLSCHED_RL_OBJECTIVES:-energy}
TRANSFER_MODELS=${RLSCHED_TRANSFER_MODELS:-resnet50 mobilenet_v3}
if [ -z "${RLSCHED_PAIRS:-}" ]; then
    RLSCHED_PAIRS=""
    for a in eyeriss_v1 simba tpu_v3; do
        for m in yolov3 inception_v4 mobilenet_v3 resnet50; do RLSCHED_PAIRS="$RLSCHED_PAIRS $m:$a"; done
    done
fi
OUT=${RLSCHED_OUT:-docs/results}
APPEND=${RLSCHED_APPEND:-0}
WORKERS=${RLSCHED_WORKERS:-1}
case "$WORKERS" in ''|*[!0-9]*) echo "paper-rlsched: RLSCHED_WORKERS must be a positive integer, got '$WORKERS'" >&2; exit 2;; esac
WEIGHTS=${RLSCHED_WEIGHTS:-/tmp/hwgym-rlsched-weights}   # trained policies (for transfer; not committed)
PY=${PYTHON:-python3}
DATA=$OUT/rlsched
mkdir -p "$DATA" "$WEIGHTS"
for b in hwgym hwgym-rlsched; do
    [ -x "$BIN/$b" ] || { echo "paper-rlsched: $BIN/$b is not built (make all)" >&2; exit 1; }
done
[ -x /usr/bin/time ] || { echo "paper-rlsched: needs /usr/bin/time (Debian package time)" >&2; exit 1; }
WORK=$(mktemp -d /tmp/hwgym-paper-rlsched.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
CSV=$DATA/runs.csv
CURVES=$DATA/curves.jsonl
TRANSFER=$DATA/transfer.csv
LAYERS=$DATA/layers.jsonl.gz
if [ "$APPEND" != 1 ] || [ ! -s "$CSV" ]; then
    echo "method,model,accelerator,objective,seed,energy_pj,cycles,objective_total,steps,episodes,cpu_s,samples" > "$CSV"
    echo "trained_on,model,accelerator,objective,seed,greedy_total,cpu_s" > "$TRANSFER"
    : > "$CURVES"
    rm -f "$LAYERS" "$DATA/layers.jsonl"
fi
[ -s "$TRANSFER" ] || echo "trained_on,model,accelerator,objective,seed,greedy_total,cpu_s" > "$TRANSFER"
touch "$CURVES"
NEWLAYERS=$DATA/layers.jsonl   # this invocation's per-layer tables, gzipped into $LAYERS at the end
touch "$NEWLAYERS"
T0=$(date +%s)
log() { printf '[paper-rlsched %5ds] %s\n' $(( $(date +%s) - T0 )) "$*" >&2; }
have() { grep -q "^$1,$2,$3,$4,$5," "$CSV"; }
# timed OUTFILE CMD...: runs CMD with stdout to OUTFILE; CPU seconds (user+sys) into $WORK/cpu
timed() {
    local out=$1
    shift
    /usr/bin/time -f "%U %S" -o "$WORK/time" "$@" > "$out"
    awk '{printf "%.2f", $1 + $2}' "$WORK/time" > "$WORK/cpu"
}

# rows KIND MODEL ACC OBJ SEED JSONFILE CPU: the CSV rows, per-layer tables and curve of one run
rows() {
    "$PY" - "$@" "$CSV" "$NEWLAYERS" "$CURVES" <<'EOF'
import json, sys
kind, model, acc, obj, seed, path, cpu, csv_path, layers_path, curves_path = sys.argv[1:11]
d = json.load(open(path))
def metric(e, c):
    return c if obj == "cycles" else e * c if obj == "edp" else e
out, lay = [], []
def put(method, t, steps, episodes, samples):
    e, c = t["total_energy_pj"], t["total_cycles"]
    out.append(f"{method},{model},{acc},{obj},{seed},{e:.6e},{c:.6e},{metric(e, c):.6e},{steps},{episodes},{cpu},{samples}")
    lay.append({"method": method, "model": model, "accelerator": acc, "objective": obj, "seed": int(seed),
                "layers": t["layers"]})
if kind == "baseline":
    m = d["metrics"]
    t = {"total_energy_pj": m["energy_pj"], "total_cycles": m["cycles"], "layers": m.get("layers", [])}
    method = d["_method"]
    put(method, t, 0, 0, d["_samples"])
else:
    pre = "rl" if d["learning"] else "untrained"
    assert d["objective"] == obj, (d["objective"], obj)
    put(pre + "-greedy", d["greedy"], d["greedy_steps"], d["episodes"], 0)
    put(pre + "-best-seen", d["best_seen"], d["steps"], d["episodes"], 0)
    ep = [x for x in d["episode_totals"] if x is not None]
    if not d["learning"] and ep:
        m = sum(ep) / len(ep)
        out.append(f"untrained-sampled,{model},{acc},{obj},{seed},,,{m:.6e},{d['steps']},{d['episodes']},{cpu},0")
    with open(curves_path, "a") as f:
        f.write(json.dumps({"model": model, "accelerator": acc, "objective": obj, "seed": int(seed),
                            "learning": d["learning"], "curve": d["curve"], "episode_totals": d["episode_totals"],
                            "greedy_total": d["greedy_total"], "best_seen_total": d["best_seen_total"],
                            "steps": d["steps"], "cpu_s": float(cpu)}, separators=(",", ":")) + "\n")
with open(csv_path, "a") as f:
    f.write("\n".join(out) + "\n")
with open(layers_path, "a") as f:
    for x in lay:
        f.write(json.dumps(x, separators=(",", ":")) + "\n")
EOF
}

tag() { "$PY" -c "import json,sys; d=json.load(open(sys.argv[1])); d['_method']=sys.argv[2]; d['_samples']=int(sys.argv[3]); json.dump(d, open(sys.argv[1],'w'))" "$@"; }

for pair in $RLSCHED_PAIRS; do
    model=${pair%%:*}
    acc=${pair##*:}
    for obj in $OBJECTIVES; do
        cfg="{\"accelerator\":\"$acc\",\"model\":\"$model\",\"mode\":\"network\",\"objective\":\"$obj\"}"
        for m in $BASELINE_LIST; do
            have "$m" "$model" "$acc" "$obj" 1 && continue
            f=$WORK/$m.json
            timed "$f" "$BIN/hwgym" eval sched-v0 --config "$cfg" \
                --action "{\"baseline\":\"$m\",\"seed\":1,\"samples\":$SAMPLES}"
            s=0
            [ "$m" = random-pruned ] && s=$SAMPLES
            tag "$f" "$m" "$s"
            rows baseline "$model" "$acc" "$obj" 1 "$f" "$(cat "$WORK/cpu")"
        done
        log "$model $acc $obj: baselines"
    done
    for obj in $RL_OBJECTIVES; do
        cfg="{\"accelerator\":\"$acc\",\"model\":\"$model\",\"mode\":\"network\",\"objective\":\"$obj\"}"
        for seed in $SEEDS; do
            for learn in 1 0; do
                if [ $learn = 1 ]; then
                    have rl-greedy "$model" "$acc" "$obj" "$seed" && continue
                    extra=(--eval-every "$EVAL_EVERY" --save "$WEIGHTS/w-$model-$acc-$obj-$seed.bin")
                    n=$EPISODES
                else
                    have untrained-greedy "$model" "$acc" "$obj" "$seed" && continue
                    extra=(--no-learn)
                    n=$CONTROL_EPISODES
                fi
                f=$WORK/rl.json
                timed "$f" "$BIN/hwgym-rlsched" --endpoint local --config "$cfg" --episodes "$n" \
                    --budget 1000000000 --seed "$seed" --quiet --workers "$WORKERS" "${extra[@]}"
                rows rl "$model" "$acc" "$obj" "$seed" "$f" "$(cat "$WORK/cpu")"
                log "$model $acc $obj seed $seed learning=$learn: $(cat "$WORK/cpu") s CPU"
            done
        done
    done
done

# transfer: a policy trained on one model, one greedy pass on each other model (same accelerator)
for pair in $RLSCHED_PAIRS; do
    src=${pair%%:*}
    acc=${pair##*:}
    for obj in $RL_OBJECTIVES; do
        for dst in $TRANSFER_MODELS; do
            [ "$dst" = "$src" ] && continue
            for seed in $SEEDS; do
                w=$WEIGHTS/w-$src-$acc-$obj-$seed.bin
                [ -s "$w" ] || continue
                grep -q "^$src,$dst,$acc,$obj,$seed," "$TRANSFER" && continue
                cfg="{\"accelerator\":\"$acc\",\"model\":\"$dst\",\"mode\":\"network\",\"objective\":\"$obj\"}"
                f=$WORK/tr.json
                timed "$f" "$BIN/hwgym-rlsched" --endpoint local --config "$cfg" --load "$w" --eval-only \
                    --budget 1000000000 --seed "$seed" --quiet
                g=$("$PY" -c "import json,sys; print('%.6e' % json.load(open(sys.argv[1]))['greedy_total'])" "$f")
                echo "$src,$dst,$acc,$obj,$seed,$g,$(cat "$WORK/cpu")" >> "$TRANSFER"
            done
            log "transfer $src -> $dst on $acc ($obj)"
        done
    done
done

if [ -s "$LAYERS" ]; then
    { gzip -dc "$LAYERS"; cat "$NEWLAYERS"; } | gzip -9 -n > "$WORK/l.gz"
else
    gzip -9 -n -c "$NEWLAYERS" > "$WORK/l.gz"
fi
mv "$WORK/l.gz" "$LAYERS"
rm -f "$NEWLAYERS"
"$PY" scripts/rlsched-tables.py "$DATA" --episodes "$EPISODES" --control-episodes "$CONTROL_EPISODES" \
    --eval-every "$EVAL_EVERY" --samples "$SAMPLES" \
    > "$OUT/rlsched.md"
log "wrote $OUT/rlsched.md and $DATA/"
