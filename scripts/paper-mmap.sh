#!/bin/sh
# paper-mmap.sh - reruns the MMap-MuZero paper's comparisons on mmap-v0 into docs/results/mmap.md
# (make paper-mmap). Every run is hwgym-muzero with a CPU-time limit (--cpu-limit) and an
# unbounded step budget, so all agents get the same compute, as the paper's Table 2 / Figure 5
# give them the same wall-clock time; CPU seconds instead of wall seconds because this machine is
# shared (a run's wall time depends on everyone else's load, its CPU time does not). Each run's
# budget grows with its program: BASE + PER_KBUF seconds per 1,000 buffers.
#   collapse: MuZero on mlp_train_batch_16 and inference_resnet, several seeds: no seed may end
#             below 0.9 of the heuristic (issue 25)
#   t2:       Table 2 / Figure 5: MuZero, AlphaZero mode (--model true), the untrained control
#             (MuZero with learning off), ES and random on dataset programs of increasing size
#   t3:       Table 3: MuZero and MuZero-prod speedup over the heuristic per program
#   f7:       Figure 7: MuZero vs AlphaZero mode vs search only (true game, no learning) vs
#             learning only (no MCTS)
#   t3az:     Table 3 with AlphaZero mode (--model true) beside MuZero, same budgets and seeds
#   budget:   speedup against CPU budget: MuZero(-prod), its untrained control and AlphaZero mode
#             on a few Table 3 programs at multiples of Table 3's budget (the x1 MuZero and
#             AlphaZero-mode runs are Table 3's own)
#   dev:      one variant of MuZero-prod (MMAP_DEV_ARGS) and its own untrained control (the same
#             options plus --train-every 1000000000) on the dev set at Table 3's settings and
#             budgets: dev-NAME-P-sS and dev-NAME-untrained-P-sS
#   t3v, t2v: Table 3 (MuZero-prod) and Table 2 (MuZero) with a variant's options (MMAP_DEV_ARGS),
#             each with its own untrained control: t3-P-NAME-sS / t3-P-NAME-untrained-sS and
#             t2-P-NAME-sS / t2-P-NAME-untrained-sS (ES and random are Table 2's own runs)
#   cv:       the collapse check with a variant's options (MMAP_DEV_ARGS): c-P-NAME-sS
# Knobs (environment):
#   MMAP_PARTS     parts to run ("collapse t2 t3 f7"; also budget, t3az, dev, t3v, t2v, cv); the report
#                  covers the data present
#   MMAP_T2        "BASE+PER_KBUF" CPU seconds per Table 2 run ("4+4": 5.2 s on alexnet, 44 s on
#                  tensor2tensor)
#   MMAP_T2P       Table 2 programs (the paper's four)
#   MMAP_T3        "BASE+PER_KBUF" CPU seconds per Table 3 run ("2+2.2": 2.3 s to 37 s)
#   MMAP_T3P       Table 3 programs (the paper's fourteen)
#   MMAP_F7_TIME   CPU seconds per Figure 7 run (15)
#   MMAP_COLLAPSE_TIME   CPU seconds per collapse-check run (20)
#   MMAP_COLLAPSE_SEEDS  its seeds ("1 2 3 4 5")
#   MMAP_SEEDS     seeds of t2, f7 ("1 2 3")
#   MMAP_F7_SEEDS  Figure 7's seeds in the report only (MMAP_SEEDS): the page keeps showing the
#                  seeds Figure 7 was run with when a later invocation adds Table 2 seeds
#   MMAP_T3_SEEDS  seeds of t3 and t3az (MMAP_SEEDS)
#   MMAP_BUDGET_PROGS   programs of the budget part (mobilenet, resnet50, wavenet)
#   MMAP_BUDGET_MULTS   multiples of the Table 3 budget ("1 3 9")
#   MMAP_BUDGET_SEEDS   its seeds ("1 2 3")
#   MMAP_BUDGET_AGENTS  its agents ("muzero untrained az")
#   MMAP_JOBS      runs at once (1: a shared machine; CPU budgets make the results independent of it)
#   MMAP_WALL      wall-clock cap per run, as a multiple of its CPU budget (20): a starved run stops
#                  there, and its summary's cpu_s shows it
#   MMAP_DEADLINE  wall-clock deadline (Unix seconds) for all runs: runs are cut there and later
#                  runs skipped, so the report is written in time (unset: none)
#   MMAP_KEEP      1: keep the data of earlier runs (a run whose summary exists is skipped), so
#                  parts can be added one invocation at a time; data/runs.txt and data/sizes.txt
#                  then keep the earlier invocations' lines and gain this one's
#   MMAP_DEV_NAME  the variant's name in the dev, t3v, t2v and cv parts (e.g. hp50)
#   MMAP_DEV_ARGS  its options on top of the MuZero settings (e.g. "--heuristic-prior 0.5")
#   MMAP_DEV_PROGS the dev set (mobilenet_v2_train_batch_128 resnet50_train_batch_32
#                  wavenet_coherent_batch32 tensor2tensor_transformer_bf16)
#   MMAP_DEV_SEEDS its seeds ("1 2 3")
#   MMAP_MZ_ARGS     MuZero settings for every part but Table 3
#   MMAP_T3_MZ_ARGS  MuZero settings for Table 3 (MMAP_MZ_ARGS)
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
print(round(w, 1))" "$secs" "${MMAP_WALL:-20}" "${MMAP_DEADLINE:-}")
    if "$PY" -c "import sys; sys.exit(float(sys.argv[1]) > 1)" "$wall"; then
        echo "paper-mmap: $name skipped (MMAP_DEADLINE)" >&2
        exit 0
    fi
    if [ "${MMAP_KEEP:-0}" = 1 ] && [ -s "$D/$name.json" ]; then
        exit 0
    fi
    echo "paper-mmap: $name ($mode, $prog, ${secs} CPU s)" >&2
    "$BIN" --endpoint "$EP" --config "{\"problem\":\"$prog\"}" --mode "$mode" --budget 1000000000 --cpu-limit "$secs" \
        --time-limit "$wall" --quiet --curve "$D/$name.csv" "$@" > "$D/$name.json"
    gzip -f "$D/$name.csv"
    exit 0
fi
[ $# -eq 0 ] || { echo "paper-mmap.sh takes no arguments (knobs are environment variables: see the script's header)" >&2; exit 2; }
PARTS=${MMAP_PARTS:-collapse t2 t3 f7}
T2=${MMAP_T2:-4+4}
T3=${MMAP_T3:-2+2.2}
T7=${MMAP_F7_TIME:-15}
TC=${MMAP_COLLAPSE_TIME:-20}
CSEEDS=${MMAP_COLLAPSE_SEEDS:-1 2 3 4 5}
SEEDS=${MMAP_SEEDS:-1 2 3}
T3SEEDS=${MMAP_T3_SEEDS:-$SEEDS}
JOBS=${MMAP_JOBS:-1}
# --heuristic-prior 0: the paper's MuZero, as the committed Table 2/3, Figure 7 and collapse runs
# (they ran before the binary's default became the prior); the variant parts add theirs on top
MZ=${MMAP_MZ_ARGS:---simulations 25 --gumbel --games 8 --train-every 32 --batch 64 --reanalyse-simulations 10 --heuristic-prior 0}
MZ3=${MMAP_T3_MZ_ARGS:-$MZ}
T2P=${MMAP_T2P:-alexnet_train_batch_32 wavenet_coherent_batch32 alphatensor_like tensor2tensor_transformer_bf16}
BP=${MMAP_BUDGET_PROGS:-mobilenet_v2_train_batch_128 resnet50_train_batch_32 wavenet_coherent_batch32}
BM=${MMAP_BUDGET_MULTS:-1 3 9}
BSEEDS=${MMAP_BUDGET_SEEDS:-1 2 3}
BAG=${MMAP_BUDGET_AGENTS:-muzero untrained az}
DEVN=${MMAP_DEV_NAME:-dev}
DEVA=${MMAP_DEV_ARGS:-}
DEVP=${MMAP_DEV_PROGS:-mobilenet_v2_train_batch_128 resnet50_train_batch_32 wavenet_coherent_batch32 tensor2tensor_transformer_bf16}
DEVS=${MMAP_DEV_SEEDS:-1 2 3}
T3P=${MMAP_T3P:-mlp_train_batch_16 alexnet_train_batch_32 inference_resnet inference_lstm rnn_2 mobilenet_v2_train_batch_128 wavenet_coherent_batch32 rnn_6 resnet50_train_batch_32 mlperf_nmt_1_shard_batch_64 alphatensor_like tensor2tensor_transformer_bf16 bert_base_train_batch_16 transformer_big_train}
mkdir -p "$D"
[ "${MMAP_KEEP:-0}" = 1 ] || rm -f "$D"/*.json "$D"/*.csv.gz
[ -x "$BIN" ] && [ -x "$CLI" ] || { echo "paper-mmap: $BIN or $CLI is not built (make all)" >&2; exit 1; }
T0=$(date +%s)
# buffers per program (the heuristic's game has one step per buffer)
# (with MMAP_KEEP=1 the earlier invocations' lines stay: this one's are merged in, by program)
SIZES=$D/sizes.txt
NEWSIZES=$D/sizes.new
: > "$NEWSIZES"
for p in $(echo "$T3P $T2P $DEVP mlp_train_batch_16 inference_resnet" | tr ' ' '\n' | sort -u); do
    n=$("$CLI" eval mmap-v0 --config "{\"problem\":\"$p\"}" --action '{"policy":"heuristic"}' |
        "$PY" -c 'import json, sys; print(json.load(sys.stdin)["metrics"]["steps"])')
    echo "$p $n" >> "$NEWSIZES"
done
merge() { # old new -> old's lines whose first word new lacks, then new's (new's order)
    [ "${MMAP_KEEP:-0}" = 1 ] && [ -f "$1" ] || { mv "$2" "$1"; return; }
    awk 'NR == FNR { seen[$1] = 1; next } !($1 in seen)' "$2" "$1" > "$1.tmp"
    cat "$2" >> "$1.tmp"
    mv "$1.tmp" "$1"
    rm -f "$2"
}
merge "$SIZES" "$NEWSIZES"
sort -o "$SIZES" "$SIZES"
budget() { # spec program -> seconds
    "$PY" -c 'import sys
base, per = (float(x) for x in sys.argv[1].split("+"))
n = dict(l.split() for l in open(sys.argv[3]))[sys.argv[2]]
print(round(base + per * int(n) / 1000, 1))' "$1" "$2" "$SIZES"
}
# the run list: one line per run
RUNS=$D/runs.txt
LIST=$D/runs.new
: > "$LIST"
has() { case " $PARTS " in *" $1 "*) return 0 ;; esac; return 1; }
if has collapse; then
    for p in mlp_train_batch_16 inference_resnet; do
        for s in $CSEEDS; do echo "c-$p-muzero-s$s muzero $TC $p --seed $s $MZ" >> "$LIST"; done
    done
fi
for s in $SEEDS; do
    if has t2; then
        for p in $T2P; do
            t=$(budget "$T2" "$p")
            echo "t2-$p-muzero-s$s muzero $t $p --seed $s $MZ" >> "$LIST"
            echo "t2-$p-az-s$s muzero $t $p --seed $s $MZ --model true" >> "$LIST"
            echo "t2-$p-untrained-s$s muzero $t $p --seed $s $MZ --train-every 1000000000" >> "$LIST"
            echo "t2-$p-es-s$s es $t $p --seed $s --games 8" >> "$LIST"
            echo "t2-$p-random-s$s random $t $p --seed $s --games 8" >> "$LIST"
        done
    fi
    if has f7; then
        for m in muzero az search learn; do
            extra=$MZ mode=$m
            [ "$m" = search ] && extra="--simulations 25 --games 8"
            [ "$m" = az ] && extra="$MZ --model true" mode=muzero
            echo "f7-inference_resnet-$m-s$s $mode $T7 inference_resnet --seed $s $extra" >> "$LIST"
        done
    fi
done
for s in $T3SEEDS; do
    if has t3; then
        for p in $T3P; do
            echo "t3-$p-prod-s$s prod $(budget "$T3" "$p") $p --seed $s $MZ3" >> "$LIST"
        done
    fi
    if has t3az; then
        for p in $T3P; do
            echo "t3-$p-az-s$s prod $(budget "$T3" "$p") $p --seed $s $MZ3 --model true" >> "$LIST"
        done
    fi
done
if has budget; then # cheapest first: every seed of the smaller multiples before the larger
    for x in $BM; do
        for s in $BSEEDS; do
            for p in $BP; do
                t=$("$PY" -c 'import sys; print(round(float(sys.argv[1]) * float(sys.argv[2]), 1))' "$(budget "$T3" "$p")" "$x")
                for a in $BAG; do
                    case "$a.$x" in
                        muzero.1) echo "t3-$p-prod-s$s prod $t $p --seed $s $MZ3" ;;
                        az.1) echo "t3-$p-az-s$s prod $t $p --seed $s $MZ3 --model true" ;;
                        muzero.*) echo "b-$p-muzero-x$x-s$s prod $t $p --seed $s $MZ3" ;;
                        az.*) echo "b-$p-az-x$x-s$s prod $t $p --seed $s $MZ3 --model true" ;;
                        untrained.*) echo "b-$p-untrained-x$x-s$s prod $t $p --seed $s $MZ3 --train-every 1000000000" ;;
                    esac
                done
            done
        done
    done >> "$LIST"
fi
pair() { # trained-name untrained-name mode seconds program seed args: a variant's run and its untrained control
    echo "$1-s$6 $3 $4 $5 --seed $6 $7"
    echo "$2-s$6 $3 $4 $5 --seed $6 $7 --train-every 1000000000"
}
if has cv; then # the collapse check of the variant (MMAP_DEV_NAME / MMAP_DEV_ARGS)
    for p in mlp_train_batch_16 inference_resnet; do
        for s in $CSEEDS; do echo "c-$p-$DEVN-s$s muzero $TC $p --seed $s $MZ $DEVA" >> "$LIST"; done
    done
fi
for s in $DEVS; do
    for p in $DEVP; do
        ! has dev || pair "dev-$DEVN-$p" "dev-$DEVN-untrained-$p" prod "$(budget "$T3" "$p")" "$p" "$s" "$MZ3 $DEVA"
    done
done >> "$LIST"
for s in $T3SEEDS; do
    for p in $T3P; do
        ! has t3v || pair "t3-$p-$DEVN" "t3-$p-$DEVN-untrained" prod "$(budget "$T3" "$p")" "$p" "$s" "$MZ3 $DEVA"
    done
done >> "$LIST"
for s in $SEEDS; do
    for p in $T2P; do
        ! has t2v || pair "t2-$p-$DEVN" "t2-$p-$DEVN-untrained" muzero "$(budget "$T2" "$p")" "$p" "$s" "$MZ $DEVA"
    done
done >> "$LIST"
export BUILD="${BUILD:-build}" PYTHON="$PY" MMAP_ENDPOINT="$EP" MMAP_OUT="$OUT"
xargs -P "$JOBS" -L 1 "$SELF" --one < "$LIST" || echo "paper-mmap: some runs failed (their summaries are missing or empty)" >&2
merge "$RUNS" "$LIST"
echo "paper-mmap: runs took $(( $(date +%s) - T0 )) s" >&2
"$PY" scripts/paper-mmap-report.py "$OUT" "$T2" "$T3" "$MZ" "$(( $(date +%s) - T0 ))" "$SEEDS" "$T7" "$MZ3" "$JOBS" "$TC" "$CSEEDS" "$T2P" "$T3P" "$T3SEEDS" "$BP" "$BM" "$BSEEDS" "${MMAP_F7_SEEDS:-$SEEDS}"
echo "paper-mmap: wrote $OUT/../mmap.md" >&2
