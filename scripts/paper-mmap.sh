#!/bin/sh
# paper-mmap.sh - reruns the MMap-MuZero paper's comparisons on mmap-v0 into docs/results/mmap.md
# (make paper-mmap). Every run is hwgym-muzero with a wall-clock limit (--time-limit) and an
# unbounded step budget, so all agents get the same time, as in the paper's Table 2 / Figure 5.
#   Table 2 / Figure 5: MuZero, ES and random on four dataset programs of increasing size.
#   Table 3: MuZero and MuZero-prod speedup over the heuristic on every dataset program.
#   Figure 7: MuZero vs search only (true game, no learning) vs learning only (no MCTS).
# Knobs (environment):
#   MMAP_TIME     seconds per Table 2 run (24)
#   MMAP_F7_TIME  seconds per Figure 7 run (36)
#   MMAP_T3_TIME  seconds per Table 3 program (10)
#   MMAP_SEEDS    seeds ("1 2 3")
# The defaults fit the whole reproduction (29 runs per seed) in about 30 minutes.
#   MMAP_MZ_ARGS  MuZero settings for the time-budgeted runs
#   MMAP_ENDPOINT local (default) or a server endpoint
#   MMAP_OUT      output directory (docs/results/mmap); its data/ holds the summaries and curves
set -eu
cd "$(dirname "$0")/.."
BIN=${BUILD:-build}/bin/hwgym-muzero
PY=${PYTHON:-/usr/bin/python3}
T=${MMAP_TIME:-24}
T7=${MMAP_F7_TIME:-36}
T3=${MMAP_T3_TIME:-10}
SEEDS=${MMAP_SEEDS:-1 2 3}
EP=${MMAP_ENDPOINT:-local}
MZ=${MMAP_MZ_ARGS:---simulations 25 --gumbel --games 2 --train-every 32 --batch 64 --reanalyse-simulations 10}
OUT=${MMAP_OUT:-docs/results/mmap}
D=$OUT/data
mkdir -p "$D"
[ -x "$BIN" ] || { echo "paper-mmap: $BIN is not built (make all)" >&2; exit 1; }
T0=$(date +%s)
run() { # name mode seconds program extra...
    name=$1 mode=$2 secs=$3 prog=$4
    shift 4
    echo "paper-mmap: $name ($mode, $prog, ${secs}s)" >&2
    "$BIN" --endpoint "$EP" --config "{\"problem\":\"$prog\"}" --mode "$mode" --budget 1000000000 --time-limit "$secs" \
        --quiet --curve "$D/$name.csv" "$@" > "$D/$name.json"
    gzip -f "$D/$name.csv"
}
for s in $SEEDS; do
    for p in alexnet_train_batch_32 wavenet_coherent_batch32 alphatensor_like tensor2tensor_transformer_bf16; do
        run "t2-$p-muzero-s$s" muzero "$T" "$p" --seed "$s" $MZ
        run "t2-$p-es-s$s" es "$T" "$p" --seed "$s" --games 8
        run "t2-$p-random-s$s" random "$T" "$p" --seed "$s" --games 8
    done
    for m in muzero search learn; do
        extra=$MZ
        [ "$m" = search ] && extra="--simulations 25 --games 2"
        run "f7-inference_resnet-$m-s$s" "$m" "$T7" inference_resnet --seed "$s" $extra
    done
    for p in $("$PY" -c 'print(" ".join(["mlp_train_batch_16","alexnet_train_batch_32","inference_resnet","inference_lstm","rnn_2","mobilenet_v2_train_batch_128","wavenet_coherent_batch32","rnn_6","resnet50_train_batch_32","mlperf_nmt_1_shard_batch_64","alphatensor_like","tensor2tensor_transformer_bf16","bert_base_train_batch_16","transformer_big_train"]))'); do
        run "t3-$p-prod-s$s" prod "$T3" "$p" --seed "$s" $MZ
    done
done
echo "paper-mmap: runs took $(( $(date +%s) - T0 )) s" >&2
"$PY" scripts/paper-mmap-report.py "$OUT" "$T" "$T3" "$MZ" "$(( $(date +%s) - T0 ))" "$SEEDS" "$T7"
echo "paper-mmap: wrote $OUT/../mmap.md" >&2
