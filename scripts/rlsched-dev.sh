#!/usr/bin/env bash
# scripts/rlsched-dev.sh - the dev-set learning curves of docs/results/rlsched.md ("Does longer
# training help?"): hwgym-rlsched trained for EPISODES episodes with a greedy pass every EVAL_EVERY
# episodes, on a few model/accelerator pairs and seeds, under one named hyperparameter variant.
# Appends one JSON line per run to docs/results/rlsched/dev-curves.jsonl (a run already there is
# skipped), which scripts/rlsched-tables.py turns into the page's dev tables.
#
#   scripts/rlsched-dev.sh VARIANT EPISODES EVAL_EVERY "model:accel ..." "seeds" [hwgym-rlsched options]
#   e.g. scripts/rlsched-dev.sh paper 200 10 "resnet50:eyeriss_v1 resnet50:simba" "1 2 3"
#        scripts/rlsched-dev.sh ent-decay-0.98 100 10 "resnet50:eyeriss_v1" "1 2 3" --ent-decay 0.98
#
# A curve point after e episodes is exactly the greedy pass of a run trained for e episodes (the
# entropy schedule depends on the episode index alone, and the greedy pass draws no random
# numbers), so one long run gives every shorter training length. Energy objective, network mode,
# in process, one run at a time. BUILD=build, PYTHON=python3, RLSCHED_DEV_OUT=docs/results/rlsched.
set -euo pipefail
if [ $# -lt 5 ] || [ "${1:-}" = --help ] || [ "${1:-}" = -h ]; then
    sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'
    [ $# -ge 5 ] || [ "${1:-}" = --help ] || [ "${1:-}" = -h ]
    exit $?
fi
VARIANT=$1 EPISODES=$2 EVAL_EVERY=$3 PAIRS=$4 SEEDS=$5
shift 5
BIN=${BUILD:-build}/bin
PY=${PYTHON:-python3}
OUT=${RLSCHED_DEV_OUT:-docs/results/rlsched}/dev-curves.jsonl
case "$VARIANT" in *[!A-Za-z0-9._-]*|"") echo "rlsched-dev: VARIANT must be [A-Za-z0-9._-]+, got '$VARIANT'" >&2; exit 2;; esac
[ -x "$BIN/hwgym-rlsched" ] || { echo "rlsched-dev: $BIN/hwgym-rlsched is not built (make all)" >&2; exit 1; }
[ -x /usr/bin/time ] || { echo "rlsched-dev: needs /usr/bin/time (Debian package time)" >&2; exit 1; }
mkdir -p "$(dirname "$OUT")"
touch "$OUT"
WORK=$(mktemp -d /tmp/hwgym-rlsched-dev.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
# devline VARIANT MODEL ACC SEED EVAL_EVERY SUMMARY TIMEFILE ARGS: the run's JSON line
devline() {
    "$PY" - "$@" <<'EOF'
import json, sys
variant, model, acc, seed, ev, path, tpath, args = sys.argv[1:9]
d = json.load(open(path))
u, s = open(tpath).read().split()[:2]
print(json.dumps({"variant": variant, "model": model, "accelerator": acc, "seed": int(seed), "args": args,
                  "episodes": d["episodes"], "eval_every": int(ev), "objective": d["objective"],
                  "curve": d["curve"], "episode_totals": d["episode_totals"], "greedy_total": d["greedy_total"],
                  "best_seen_total": d["best_seen_total"], "steps": d["steps"], "ent_coef": d["ent_coef"],
                  "cpu_s": round(float(u) + float(s), 2)}, separators=(",", ":")))
EOF
}

for seed in $SEEDS; do
    for pair in $PAIRS; do
        model=${pair%%:*} acc=${pair##*:}
        grep -q "\"variant\":\"$VARIANT\",\"model\":\"$model\",\"accelerator\":\"$acc\",\"seed\":$seed," "$OUT" && continue
        cfg="{\"accelerator\":\"$acc\",\"model\":\"$model\",\"mode\":\"network\",\"objective\":\"energy\"}"
        /usr/bin/time -f "%U %S" -o "$WORK/time" "$BIN/hwgym-rlsched" --endpoint local --config "$cfg" \
            --episodes "$EPISODES" --budget 1000000000 --seed "$seed" --quiet --eval-every "$EVAL_EVERY" "$@" \
            > "$WORK/run.json"
        devline "$VARIANT" "$model" "$acc" "$seed" "$EVAL_EVERY" "$WORK/run.json" "$WORK/time" "$*" >> "$OUT"
        echo "rlsched-dev: $VARIANT $model $acc seed $seed: $(awk '{print $1 + $2}' "$WORK/time") CPU s" >&2
    done
done
