#!/bin/sh
# paper-mmap.sh - reruns the MMap-MuZero paper's comparisons on mmap-v0 into docs/results/mmap.md
# (make paper-mmap). Every run is hwgym-muzero with a CPU-time limit (--cpu-limit) and an
# unbounded step budget, so all agents get the same compute, as the paper's Table 2 / Figure 5
# give them the same wall-clock time; CPU seconds instead of wall seconds because this machine is
# shared (a run's wall time depends on everyone else's load, its CPU time does not). Each run's
# budget grows with its program: BASE + PER_KBUF seconds per 1,000 buffers.
#   Table 2 / Figure 5: MuZero, ES and random on four dataset programs of increasing size.
#   Table 3: MuZero and MuZero-prod speedup over the heuristic on every dataset program.
#   Figure 7: MuZero vs search only (true game, no learning) vs learning only (no MCTS).
# Knobs (environment):
#   MMAP_T2       "BASE+PER_KBUF" CPU seconds per Table 2 run ("4+4": 4.7 s on alexnet, 40 s on
#                 tensor2tensor)
#   MMAP_T3       "BASE+PER_KBUF" CPU seconds per Table 3 run ("2+2.2": 2.3 s to 37 s)
#   MMAP_F7_TIME  CPU seconds per Figure 7 run (15)
#   MMAP_SEEDS    seeds ("1 2 3")
#   MMAP_JOBS     runs at once (2: the machine's cores; CPU budgets make the results independent
#                 of it)
#   MMAP_WALL     wall-clock cap per run, as a multiple of its CPU budget (8): a starved run stops
#                 there, and its summary's cpu_s shows it
#   MMAP_DEADLINE wall-clock deadline (Unix seconds) for all runs: runs are cut there and later
#                 runs skipped, so the report is written in time (unset: none)
# The defaults are about 1,450 CPU seconds (87 runs): about 13 minutes on 2 free cores, 25 on a
# loaded machine.
#   MMAP_MZ_ARGS     MuZero settings for Table 2 and Figure 7
#   MMAP_T3_MZ_ARGS  MuZero settings for Table 3 (one game in flight: the first complete game
#                    comes after one program's worth of steps instead of two)
#   MMAP_ENDPOINT    local (default) or a server endpoint
#   MMAP_OUT         output directory (docs/results/mmap); its data/ holds the summaries and curves
set -eu
SELF=$(cd "$(dirname "$0")" && pwd)/$(basename "$0")
cd "$(dirname "$0")/.."
BIN=${BUILD:-build}/bin/hwgym-muzero
CLI=${BUILD:-build}/bin/hwgym
PY=${PYTHON:-/usr/bin/python3}
EP=${MMAP_ENDPOINT:-local}
OUT=${MMAP_OUT:-docs/results/mmap}
D=$OUT/data
if [ "${1:-}" = "--one" ]; then # one run: --one name mode cpu_seconds program extra...
    name=$2 mode=$3 secs=$4 prog=$5
    shift 5
    wall=$("$PY" -c "import sys, time
w = float(sys.argv[1]) * float(sys.argv[2])
if sys.argv[3]:
    w = min(w, float(sys.argv[3]) - time.time())
print(round(w, 1))" "$secs" "${MMAP_WALL:-8}" "${MMAP_DEADLINE:-}")
    if "$PY" -c "import sys; sys.exit(float(sys.argv[1]) > 1)" "$wall"; then
        echo "paper-mmap: $name skipped (MMAP_DEADLINE)" >&2
        exit 0
    fi
    echo "paper-mmap: $name ($mode, $prog, ${secs} CPU s)" >&2
    "$BIN" --endpoint "$EP" --config "{\"problem\":\"$prog\"}" --mode "$mode" --budget 1000000000 --cpu-limit "$secs" \
        --time-limit "$wall" --quiet --curve "$D/$name.csv" "$@" > "$D/$name.json"
    gzip -f "$D/$name.csv"
    exit 0
fi
[ $# -eq 0 ] || { echo "paper-mmap.sh takes no arguments (knobs are environment variables: see the script's header)" >&2; exit 2; }
T2=${MMAP_T2:-4+4}
T3=${MMAP_T3:-2+2.2}
T7=${MMAP_F7_TIME:-15}
SEEDS=${MMAP_SEEDS:-1 2 3}
JOBS=${MMAP_JOBS:-2}
MZ=${MMAP_MZ_ARGS:---simulations 25 --gumbel --games 2 --train-every 32 --batch 64 --reanalyse-simulations 10}
MZ3=${MMAP_T3_MZ_ARGS:---simulations 25 --gumbel --games 1 --train-every 32 --batch 64 --reanalyse-simulations 10}
T2P="alexnet_train_batch_32 wavenet_coherent_batch32 alphatensor_like tensor2tensor_transformer_bf16"
T3P="mlp_train_batch_16 alexnet_train_batch_32 inference_resnet inference_lstm rnn_2 mobilenet_v2_train_batch_128 wavenet_coherent_batch32 rnn_6 resnet50_train_batch_32 mlperf_nmt_1_shard_batch_64 alphatensor_like tensor2tensor_transformer_bf16 bert_base_train_batch_16 transformer_big_train"
mkdir -p "$D"
[ -x "$BIN" ] && [ -x "$CLI" ] || { echo "paper-mmap: $BIN or $CLI is not built (make all)" >&2; exit 1; }
T0=$(date +%s)
# buffers per program (the heuristic's game has one step per buffer)
SIZES=$D/sizes.txt
: > "$SIZES"
for p in $T3P; do
    n=$("$CLI" eval mmap-v0 --config "{\"problem\":\"$p\"}" --action '{"policy":"heuristic"}' |
        "$PY" -c 'import json, sys; print(json.load(sys.stdin)["metrics"]["steps"])')
    echo "$p $n" >> "$SIZES"
done
budget() { # spec program -> seconds
    "$PY" -c 'import sys
base, per = (float(x) for x in sys.argv[1].split("+"))
n = dict(l.split() for l in open(sys.argv[3]))[sys.argv[2]]
print(round(base + per * int(n) / 1000, 1))' "$1" "$2" "$SIZES"
}
# the run list: one line per run, longest first within each seed (balances the job slots)
LIST=$D/runs.txt
: > "$LIST"
for s in $SEEDS; do
    for p in tensor2tensor_transformer_bf16 alphatensor_like wavenet_coherent_batch32 alexnet_train_batch_32; do
        t=$(budget "$T2" "$p")
        echo "t2-$p-muzero-s$s muzero $t $p --seed $s $MZ" >> "$LIST"
        echo "t2-$p-es-s$s es $t $p --seed $s --games 8" >> "$LIST"
        echo "t2-$p-random-s$s random $t $p --seed $s --games 8" >> "$LIST"
    done
    for m in muzero search learn; do
        extra=$MZ
        [ "$m" = search ] && extra="--simulations 25 --games 2"
        echo "f7-inference_resnet-$m-s$s $m $T7 inference_resnet --seed $s $extra" >> "$LIST"
    done
    for p in $T3P; do
        echo "t3-$p-prod-s$s prod $(budget "$T3" "$p") $p --seed $s $MZ3" >> "$LIST"
    done
done
export BUILD="${BUILD:-build}" PYTHON="$PY" MMAP_ENDPOINT="$EP" MMAP_OUT="$OUT"
xargs -P "$JOBS" -L 1 "$SELF" --one < "$LIST" || echo "paper-mmap: some runs failed (their summaries are missing or empty)" >&2
echo "paper-mmap: runs took $(( $(date +%s) - T0 )) s" >&2
"$PY" scripts/paper-mmap-report.py "$OUT" "$T2" "$T3" "$MZ" "$(( $(date +%s) - T0 ))" "$SEEDS" "$T7" "$MZ3" "$JOBS"
echo "paper-mmap: wrote $OUT/../mmap.md" >&2
