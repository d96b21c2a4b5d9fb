#!/usr/bin/env bash
# scripts/paper-marl.sh - `make paper-marl`: reruns the comparisons of the MARL DNN-mapping paper
# (Table III, Figures 4, 5, 6) and of the DRAM MARL paper (Figure 2) against a local
# hwgym-server and writes docs/results/marl.md with SVG plots in docs/results/marl/.
#
# Knobs (environment):
#   BUILD=build              where bin/ is
#   MARL_BUDGET=5000         samples per run for the maestro-v0 comparisons (the papers: 20000)
#   MARL_DRAM_BUDGET=2000    samples (designs) per run for dram-v0
#   MARL_SEEDS=3             seeds per configuration (the papers: 5)
#   MARL_LR=2.5e-3           PPO learning rate for MARL workers and single-agent PPO alike
#   MARL_OUT=docs/results    output directory (marl.md and marl/*.svg)
#   MARL_KEEP_DB=PATH        keep the trial DB of all runs at PATH
#   MARL_JOBS=2              runs played at a time (every run is independent and deterministic for
#                            its seed, so this changes the wall time, not the results)
#   MARL_DEADLINE=TIME       (date -d syntax, e.g. 16:20) start no run after TIME; the report then
#                            keeps seeds 1..k, the seeds whose every run finished
# CPU time per seed (2-core VM, docs/results/marl-notes.md): about 16 minutes at 20,000 samples and
# 1,000 dram-v0 designs, most of it in the MARL runs (10 worker processes stepping in lock-step).
set -euo pipefail
case "${1:-}" in
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0;;
    "") ;;
    *) echo "paper-marl: no arguments (the knobs are environment variables; --help)" >&2; exit 2;;
esac

BUILD=${BUILD:-build}
BIN=$BUILD/bin
BUDGET=${MARL_BUDGET:-5000}
DRAM_BUDGET=${MARL_DRAM_BUDGET:-2000}
SEEDS=${MARL_SEEDS:-3}
LR=${MARL_LR:-2.5e-3}
OUT=${MARL_OUT:-docs/results}
SVGDIR=$OUT/marl
mkdir -p "$SVGDIR"

for b in hwgym-server hwgym hwgym-marl hwgym-marl-worker; do
    [ -x "$BIN/$b" ] || { echo "paper-marl: $BIN/$b is not built (make all)" >&2; exit 1; }
done
have() { [ -x "$BIN/$1" ]; }

WORK=$(mktemp -d /tmp/hwgym-paper-marl.XXXXXX)
EP="ipc://$WORK/server.sock"
DB=$WORK/trials.db
MAN=$WORK/manifest.tsv
HDR=$WORK/header.md
: > "$MAN"
"$BIN/hwgym-server" --bind "$EP" --workers 2 > "$WORK/server.log" 2>&1 &
SERVER=$!
cleanup() {
    local rc=$?
    kill "$SERVER" 2>/dev/null || true
    wait "$SERVER" 2>/dev/null || true
    if [ -n "${MARL_KEEP_DB:-}" ] && [ -f "$DB" ]; then cp "$DB" "$MARL_KEEP_DB"; fi
    if [ "$rc" = 0 ]; then rm -rf "$WORK"; else echo "paper-marl: failed; the runs' DB and logs are kept in $WORK" >&2; fi
}
trap cleanup EXIT
for _ in $(seq 50); do "$BIN/hwgym" envs --endpoint "$EP" > /dev/null 2>&1 && break; sleep 0.1; done

T0=$(date +%s)
log() { printf '[paper-marl %4ds] %s\n' $(( $(date +%s) - T0 )) "$*" >&2; }
run_id() { sed -n 's/.*"run_id":\([0-9][0-9]*\).*/\1/p' | tail -1; }
# add SECTION GROUP METHOD SEED RUN_ID
add() { printf '%s\t%s\t%s\t%s\t%s\n' "$@" >> "$MAN"; }

SKIPPED=""
common() { echo --endpoint "$EP" --db "$DB" --quiet; }

# Every run is independent (its own session and seed; a MARL session steps in lock-step through
# the server's barriers), so its trials do not depend on which other runs share the server: the
# runs are queued first and then played MARL_JOBS at a time, longest first. The manifest is
# written in queue order afterwards, so it does not depend on the schedule either (only the run
# ids, which the DB hands out in start order, do).
JOBS=$WORK/jobs
mkdir -p "$JOBS"
NJ=0
# queue COST CMD...: queue a run of seed $seed (the schedule plays seed 1's runs first, then seed
# 2's, ..., largest COST first within a seed); sets J to its number
queue() {
    local cost=$1; shift
    NJ=$((NJ + 1)); J=$NJ
    printf '%q ' "$@" > "$JOBS/$J.cmd"
    printf '%s\t%s\t%s\n' "$seed" "$cost" "$J" >> "$JOBS/list"
}
# add SECTION GROUP METHOD SEED JOB: a manifest row, resolved to the job's run id at the end
add() { printf '%s\t%s\t%s\t%s\t%s\n' "$@" >> "$MAN.jobs"; }
: > "$MAN.jobs"

marl() { # cost cfg seed budget [extra...]
    local cost=$1 cfg=$2 seed=$3 budget=$4; shift 4
    queue "$cost" "$BIN/hwgym-marl" $(common) --env "$ENV" --config "$cfg" --seed "$seed" --budget "$budget" \
        --policy-config "{\"lr\":$LR}" "$@"
}
ppo() { queue "$4" "$BIN/hwgym-ppo" $(common) --env "$ENV" --config "$1" --seed "$2" --budget "$3" --lr "$LR"; }
search() { queue "$5" "$BIN/hwgym-search" $(common) --env "$ENV" --config "$1" --seed "$2" --budget "$3" --algo "$4"; }
# relative CPU cost per sample, measured on maestro-v0 / dram-v0 (docs/results/marl-notes.md)
C_MARL=$((BUDGET * 30)) C_PPO=$((BUDGET * 6)) C_BO=$((BUDGET * 25)) C_FAST=$BUDGET
C_DRAM=$((DRAM_BUDGET * 60))

# ---------------------------------------------------------------- Table III + Figure 5 (maestro-v0)
ENV=maestro-v0
# The papers' "layer 2" is row 2 of ArchGym's layer table: MobileNet-v2's 1x1 conv K=16, C=32
# (Bottleneck1_1_3, our zoo index 3; our index 2 is the depthwise Bottleneck1_1_2) and VGG16's
# CONV3 (our index 2). docs/zoo.md has the mapping. MAESTRO_PRESET=archgym (default) runs
# ArchGym's harness (1024 PEs, effectively unbounded buffers); MAESTRO_PRESET=default ours.
PRESET=${MAESTRO_PRESET:-archgym}
paper_layer() { case $1 in mobilenet_v2) echo 3;; *) echo 2;; esac; }
for model in mobilenet_v2 vgg16; do
    for obj in latency edp area; do
        cfg="{\"model\":\"$model\",\"layer\":$(paper_layer $model),\"objective\":\"$obj\",\"preset\":\"$PRESET\"}"
        group="$model L2 $obj"
        for seed in $(seq 1 "$SEEDS"); do
            marl "$C_MARL" "$cfg" "$seed" "$BUDGET"
            [ "$obj" != area ] && add table3 "$group" MARL "$seed" "$J"
            add fig5 "$group" MARL "$seed" "$J"
            if have hwgym-ppo; then
                ppo "$cfg" "$seed" "$BUDGET" "$C_PPO"
            else
                marl "$C_MARL" "$cfg" "$seed" "$BUDGET" --agents single
            fi
            [ "$obj" != area ] && add table3 "$group" "PPO (single agent)" "$seed" "$J"
            add fig5 "$group" PPO "$seed" "$J"
            [ "$obj" = area ] && continue
            if have hwgym-search; then
                for algo in random bo ga gamma; do
                    case $algo in random) name="Random walker";; bo) name="BO";; ga) name="GA";; gamma) name="GAMMA";; esac
                    cost=$C_FAST; [ $algo = bo ] && cost=$C_BO
                    search "$cfg" "$seed" "$BUDGET" "$algo" "$cost"; add table3 "$group" "$name" "$seed" "$J"
                done
            fi
        done
    done
done
have hwgym-ppo || SKIPPED="$SKIPPED hwgym-ppo (single-agent PPO ran as hwgym-marl --agents single);"
have hwgym-search || SKIPPED="$SKIPPED hwgym-search (random walker, BO, GA, GAMMA rows missing);"

# ---------------------------------------------------------------- Figures 4 and 6 (clustering)
# the clustering dataset is run at once: Figure 6's agent assignments come from it
cfg="{\"model\":\"mobilenet_v2\",\"layer\":3,\"objective\":\"latency\",\"preset\":\"$PRESET\"}"
log "clustering dataset (random walker, $BUDGET samples)"
if have hwgym-search; then
    data=$("$BIN/hwgym-search" $(common) --env "$ENV" --config "$cfg" --seed 100 --budget "$BUDGET" --algo random | run_id)
else
    data=$("$BIN/hwgym-marl" $(common) --env "$ENV" --config "$cfg" --seed 100 --budget "$BUDGET" \
        --policy-config "{\"lr\":$LR}" --agents single --policy random | run_id)
fi
[ -n "$data" ] || { echo "paper-marl: the clustering run failed" >&2; exit 1; }
DENDRO=$WORK/dendrogram.txt
for k in 1 2 3 6 9 10; do
    svg=()
    [ "$k" = 3 ] && svg=(--svg "$SVGDIR/fig4_mobilenet_v2_L2_latency.svg")
    "$BIN/hwgym" cluster "$DB" --run "$data" --budget "$k" --out "$WORK/assign$k.json" "${svg[@]}" \
        > /dev/null 2> "$WORK/cluster$k.txt"
done
cp "$WORK/cluster3.txt" "$DENDRO"
for k in 1 2 3 6 9 10; do
    for seed in $(seq 1 "$SEEDS"); do
        name="$k agents"; [ "$k" = 1 ] && name="1 agent"
        marl $((C_MARL * (k + 2) / 12)) "$cfg" "$seed" "$BUDGET" --agents "$WORK/assign$k.json"
        add fig6 "MobileNet-v2 L2 latency" "$name" "$seed" "$J"
    done
done

# ---------------------------------------------------------------- DRAM Figure 2
ENV=dram-v0
for wl in random stream; do
    for obj in power latency joint; do
        # the paper's experiment: one fixed trace per workload (ArchGym-style: all reads, one
        # per cycle), the same in every episode (trace_seed), the paper's Table 1 ranges
        cfg="{\"workload\":\"archgym_$wl\",\"trace_seed\":1,\"objective\":\"$obj\"}"
        case $obj in power) o="low power";; latency) o="low latency";; joint) o="joint";; esac
        group="$wl trace, $o"
        for seed in $(seq 1 "$SEEDS"); do
            marl "$C_DRAM" "$cfg" "$seed" "$DRAM_BUDGET"; add dram "$group" "PPO (MARL)" "$seed" "$J"
            if have hwgym-ppo; then ppo "$cfg" "$seed" "$DRAM_BUDGET" "$C_DRAM"; add dram "$group" "PPO (SARL)" "$seed" "$J"; fi
            if have hwgym-tdm-ppo; then
                queue "$C_DRAM" "$BIN/hwgym-tdm-ppo" $(common) --env "$ENV" --config "$cfg" --seed "$seed" \
                    --budget "$DRAM_BUDGET" --lr "$LR"
                add dram "$group" "PPO (TDM)" "$seed" "$J"
            fi
            if have hwgym-sac; then
                queue "$C_DRAM" "$BIN/hwgym-sac" $(common) --env "$ENV" --config "$cfg" --seed "$seed" --budget "$DRAM_BUDGET"
                add dram "$group" "SAC (SARL)" "$seed" "$J"
            fi
        done
    done
done
have hwgym-tdm-ppo || SKIPPED="$SKIPPED hwgym-tdm-ppo (no TDM rows);"
have hwgym-sac || SKIPPED="$SKIPPED hwgym-sac (no SAC rows);"

# ---------------------------------------------------------------- play the queue
PAR=${MARL_JOBS:-2}
DEADLINE=0
if [ -n "${MARL_DEADLINE:-}" ]; then DEADLINE=$(date -d "$MARL_DEADLINE" +%s) || exit 2; fi
log "$NJ runs queued, $PAR at a time${MARL_DEADLINE:+, none started after $MARL_DEADLINE}"
export JOBS T0 DEADLINE
run_job() { # N: runs job N, writes its run id to $JOBS/N.id, its stderr to $JOBS/N.err
    local n=$1 t=$(date +%s) id
    [ "$DEADLINE" -gt 0 ] && [ "$t" -ge "$DEADLINE" ] && return 0 # past MARL_DEADLINE: not run
    id=$(eval "$(cat "$JOBS/$n.cmd")" 2> "$JOBS/$n.err" | sed -n 's/.*"run_id":\([0-9][0-9]*\).*/\1/p' | tail -1)
    if [ -z "$id" ]; then
        printf '[paper-marl %4ds] run %s FAILED: %s\n' $(( $(date +%s) - T0 )) "$n" "$(cat "$JOBS/$n.cmd")" >&2
        tail -5 "$JOBS/$n.err" >&2
        return 1
    fi
    echo "$id" > "$JOBS/$n.id"
    printf '[paper-marl %4ds] run %s done in %ds (%s left): %s\n' $(( $(date +%s) - T0 )) "$n" $(( $(date +%s) - t )) \
        "$(( $(wc -l < "$JOBS/list") - $(find "$JOBS" -name '*.id' | wc -l) ))" \
        "$(sed 's/--endpoint [^ ]* --db [^ ]* --quiet //; s/[^ ]*\/bin\///' "$JOBS/$n.cmd" | cut -c1-150)" >&2
}
export -f run_job
sort -t$'\t' -k1,1n -k2,2nr -k3,3n "$JOBS/list" | cut -f3 | xargs -P "$PAR" -I{} bash -c 'run_job {}' ||
    { echo "paper-marl: some runs failed (above)" >&2; exit 1; }
# with MARL_DEADLINE, the report keeps seeds 1..SEEDS_DONE: the seeds whose every run finished
SEEDS_ASKED=$SEEDS SEEDS=0
for s in $(seq 1 "$SEEDS_ASKED"); do
    while IFS=$'\t' read -r js _ j; do
        [ "$js" = "$s" ] && [ ! -f "$JOBS/$j.id" ] && break 2
    done < "$JOBS/list"
    SEEDS=$s
done
[ "$SEEDS" -ge 1 ] || { echo "paper-marl: not one seed finished before MARL_DEADLINE" >&2; exit 1; }
[ "$SEEDS" = "$SEEDS_ASKED" ] || log "MARL_DEADLINE: reporting seeds 1..$SEEDS of $SEEDS_ASKED (the runs of later seeds are dropped)"
while IFS=$'\t' read -r sec grp meth seed j; do
    [ "$seed" -le "$SEEDS" ] || continue
    printf '%s\t%s\t%s\t%s\t%s\n' "$sec" "$grp" "$meth" "$seed" "$(cat "$JOBS/$j.id")" >> "$MAN"
done < "$MAN.jobs"
ELAPSED=$(( $(date +%s) - T0 ))

# ---------------------------------------------------------------- the report
{
    echo "# MARL papers' comparisons, as our implementation shows them"
    echo
    echo "Generated by \`make paper-marl\` (scripts/paper-marl.sh) on $(date -u '+%Y-%m-%d %H:%M UTC'),"
    echo "commit $(git rev-parse --short HEAD 2>/dev/null || echo '?'), $(nproc) cores, in ${ELAPSED} s."
    echo
    echo "Command: \`MARL_BUDGET=$BUDGET MARL_DRAM_BUDGET=$DRAM_BUDGET MARL_SEEDS=$SEEDS_ASKED MARL_LR=$LR${MARL_DEADLINE:+ MARL_DEADLINE='$MARL_DEADLINE'} MARL_JOBS=$PAR make paper-marl\`"
    echo
    if [ "$SEEDS" != "$SEEDS_ASKED" ]; then
        echo "**Seeds 1..$SEEDS of the $SEEDS_ASKED asked for**: MARL_DEADLINE passed before every run of seed"
        echo "$((SEEDS + 1)) had finished, so its runs and later ones are not in the tables."
        echo
    fi
    echo "| setting | this run | the papers |"
    echo "|---|---|---|"
    echo "| samples per run, maestro-v0 | $BUDGET | 20,000 |"
    echo "| samples (designs) per run, dram-v0 | $DRAM_BUDGET | not stated (curves over ~10^5 steps) |"
    echo "| seeds per configuration | $SEEDS | 5 |"
    echo "| PPO learning rate (MARL workers and single-agent PPO) | $LR | not stated / {1e-5 .. 2e-4} (DRAM) |"
    echo
    echo "Settings: maestro-v0 tables use \"preset\": \"$PRESET\" (archgym = ArchGym's MAESTRO harness: 1024 PEs,"
    echo "buffers of 2^30 bytes) on the papers' layers: \"MobileNet-v2 L2\" = the paper's layer 2 = our"
    echo "\`mobilenet_v2\` index 3 (1x1 conv, K=16, C=32), \"VGG16 L2\" = our \`vgg16\` index 2 (CONV3)"
    echo "(docs/zoo.md). dram-v0 (Figure 2) uses one fixed ArchGym-style trace per workload"
    echo "(\`archgym_random\` / \`archgym_stream\`: 10,000 reads, one per cycle, \`trace_seed\` 1) and the"
    echo "paper's Table 1 ranges. Every PPO-family agent uses the same observation/reward normalisation"
    echo "(agents/lib/nn/ag_norm.h: log-running observations, return-std rewards)."
    echo
    echo "The trial data of every table is in \`marl-data/\` (xz CSV, the lead worker's rewards per run)."
    echo "Recompute this file from it alone: \`scripts/marl-report-from-data.sh $OUT/marl-data OUT.md\`."
    echo "Means are over seeds with 95% confidence intervals (t quantiles, GSL); \"±\" is the CI half-width"
    echo "(n/a with one seed). MARL = hwgym-marl with one agent per parameter (decentralised), every"
    echo "worker a PPO agent (agents/lib PPO, 64-64 tanh MLPs) over its own action elements; single-agent"
    echo "PPO = hwgym-ppo over all elements with the same PPO code and learning rate."
    [ -n "$SKIPPED" ] && { echo; echo "Skipped (binary not built):$SKIPPED"; }
    echo
    echo "## Figure 4: correlation matrix and dendrogram (MobileNet-v2 layer 2 = our index 3, latency)"
    echo
    echo "Top 15% of $BUDGET random-walker samples (\`hwgym cluster DB --run ID --budget 3 --svg ...\`):"
    echo
    echo '```'
    cat "$DENDRO"
    echo '```'
    echo
    echo "![Figure 4](marl/fig4_mobilenet_v2_L2_latency.svg)"
    echo
    echo "Agent assignments used for Figure 6:"
    echo
    for k in 1 2 3 6 9 10; do
        printf -- '- %s: ' "$k"
        jq -r '[.agents[] | "{" + (.params | join(", ")) + "}"] | join("; ")' "$WORK/assign$k.json" 2>/dev/null ||
            echo "(jq not installed)"
    done
} > "$HDR"
# The data the tables come from (scripts/marl-report-from-data.sh recomputes marl.md from it
# alone): per run, the lead worker's rewards in trial order (what the report reads, exact to the
# last bit with %.17g), plus the
# clustering run's actions (Figure 4), the manifest and the header.
DATA=$OUT/marl-data
mkdir -p "$DATA"
cp "$MAN" "$DATA/manifest.tsv"
cp "$HDR" "$DATA/header.md"
# only the runs the report uses (with MARL_DEADLINE, the runs of dropped seeds stay out)
IDS=$( (cut -f5 "$MAN"; echo "$data") | sort -un | paste -sd,)
sqlite3 -csv -header "$DB" "SELECT t.run_id, t.worker, t.episode,
    CASE WHEN t.reward IS NULL THEN '' ELSE printf('%.17g', t.reward) END AS reward,
    CASE WHEN t.run_id = $data THEN t.action ELSE '' END AS action
    FROM trials t JOIN (SELECT run_id, MIN(id) AS first FROM trials WHERE run_id IN ($IDS) GROUP BY run_id) f
    ON f.run_id = t.run_id
    WHERE t.worker = (SELECT worker FROM trials WHERE id = f.first) ORDER BY t.id" | xz -9 -T1 > "$DATA/trials.csv.xz"
sqlite3 -csv -header "$DB" "SELECT id, agent, env, env_config, seed FROM runs WHERE id IN ($IDS) ORDER BY id" | xz -9 -T1 > "$DATA/runs.csv.xz"
rm -f "$DATA/trials.csv.gz" "$DATA/runs.csv.gz"
# the report is computed from the exported data alone, so rerunning the script below on the
# committed data gives exactly the committed tables
BUILD=$BUILD scripts/marl-report-from-data.sh "$DATA" "$OUT/marl.md" "$SVGDIR"
log "wrote $OUT/marl.md, $SVGDIR/*.svg and $DATA/ ($(du -sh "$DATA" | cut -f1))"
