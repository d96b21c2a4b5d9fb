#!/usr/bin/env bash
# scripts/paper-egrl.sh - `make paper-egrl`: reruns the EGRL paper's comparisons on placement-v0
# (Figure 4: speedup over the compiler heuristic against iterations for EGRL, EA, PG and
# Greedy-DP on ResNet-50, ResNet-101 and BERT; Figure 5: zero-shot transfer of the trained GNN
# policies; Figure 7: placement pictures of the best maps) against a local hwgym-server, and
# writes docs/results/egrl.md with SVGs in docs/results/egrl/ and the raw data beside them
# (docs/results/egrl/runs.csv.gz: every evaluation; summaries.jsonl.gz: every run's summary).
#
# Knobs (environment):
#   BUILD=build                 where bin/ is
#   EGRL_BUDGET=4000            iterations (evaluations, counted across the population) per run
#   EGRL_SEEDS="1 2 3 4 5"      seeds (Greedy-DP is deterministic: it runs once per workload)
#   EGRL_WORKLOADS="resnet50 resnet101 bert_base"
#   EGRL_MODES="egrl ea pg greedy-dp"
#   EGRL_SEARCH=""              hwgym-search algorithms run as controls at the same budget and
#                               seeds (e.g. "sa random"); in-process (--endpoint local)
#   EGRL_HW=""                  placement-v0 chip for every run ("nnp-i"; empty: the default)
#   EGRL_DATA=$EGRL_OUT/egrl    where the committed data and SVGs go
#   EGRL_PAGE=egrl.md           the page scripts/egrl-tables.py writes from that data
#   EGRL_TRAIN_ONLY=1           stop after the runs and the transfer (report later)
#   EGRL_CHEAP_FIRST=1          run the controls and baselines of every seed before the EGRL runs
#                               (on a loaded machine the controls then have every seed)
#   EGRL_JOBS=2                 runs in parallel
#   EGRL_ARGS=""                extra hwgym-egrl arguments for every learning run (none: the paper's
#                               settings, incl. Table 2's one SAC update per evaluation; ~29 min
#                               wall on 2 idle cores, docs/egrl.md "Speed")
#   EGRL_BUDGET_<workload>=N    override the budget of one workload (e.g. EGRL_BUDGET_bert_base=2000)
#   EGRL_SEEDS_<workload>="..." override the seeds of one workload
#   EGRL_OUT=docs/results       output directory
#   EGRL_REPORT_ONLY=1          with EGRL_WORK: start no training or equal-CPU run, report on the
#                               finished ones there (saved policies not yet transferred are scored)
#   EGRL_TRAIN_SECONDS=N        the training time to state (with EGRL_REPORT_ONLY)
#   EGRL_NOTE=TEXT              appended to the timing sentence of egrl.md (e.g. ", under nice -n 5 on a shared machine")
#   EGRL_EQUAL_CPU="resnet101"  workloads on which SA and EA also run with as many evaluations as
#                               EGRL's CPU time buys (measured in-process: EGRL and EA 500
#                               iterations, SA 4,000 evaluations); data/equal_cpu.json, a table
#   EGRL_EQUAL_CPU_MODES="sa ea" which of the two get EGRL's CPU
#   EGRL_EQUAL_CPU_SEEDS=...    their seeds (default EGRL_SEEDS; each run costs as much CPU as EGRL's)
#   EGRL_WORK=DIR               keep the runs in DIR and skip every run whose summary is already
#                               there (to finish an interrupted reproduction; DIR is not deleted).
#                               scripts/egrl-work-from-data.py fills DIR from a page's committed
#                               data, so that more seeds can be added to it
# The hand-written reading in $EGRL_OUT/egrl-notes.md (if present) is appended to egrl.md.
set -euo pipefail

BUILD=${BUILD:-build}
BIN=$BUILD/bin
BUDGET=${EGRL_BUDGET:-4000}
SEEDS=${EGRL_SEEDS:-"1 2 3 4 5"}
WORKLOADS=${EGRL_WORKLOADS:-"resnet50 resnet101 bert_base"}
MODES=${EGRL_MODES:-"egrl ea pg greedy-dp"}
JOBS=${EGRL_JOBS:-2}
ARGS=${EGRL_ARGS:-}
OUT=${EGRL_OUT:-docs/results}
PY=${PYTHON:-/usr/bin/python3}
SVGDIR=${EGRL_DATA:-$OUT/egrl}
PAGE=${EGRL_PAGE:-egrl.md}
SEARCH=${EGRL_SEARCH:-}
HW=${EGRL_HW:-}
HWJ=""
[ -n "$HW" ] && HWJ=",\"hw\":\"$HW\""
mkdir -p "$SVGDIR"

for b in hwgym-server hwgym hwgym-egrl; do
    [ -x "$BIN/$b" ] || { echo "paper-egrl: $BIN/$b is not built (make all)" >&2; exit 1; }
done

# shellcheck source=scripts/paper-server.sh
. "$(dirname "$0")/paper-server.sh"
paper_server_start paper-egrl "${EGRL_WORK:-}"

T0=$(date +%s)
# ---------------------------------------------------------------- training runs (Figure 4)
JOBFILE=$WORK/jobs.txt
: > "$JOBFILE"
# seed-major order (every workload's seed 1, then seed 2, ...): a run cut short by the clock
# still has every workload and mode on its first seeds (finish it with EGRL_WORK)
maxn=0
for w in $WORKLOADS; do
    var="EGRL_SEEDS_$w"
    n=$(echo ${!var:-$SEEDS} | wc -w)
    [ "$n" -gt "$maxn" ] && maxn=$n
done
for idx in $(seq 1 "$maxn"); do
    for w in $WORKLOADS; do
        var="EGRL_BUDGET_$w"
        b=${!var:-$BUDGET}
        var="EGRL_SEEDS_$w"
        s=$(echo ${!var:-$SEEDS} | awk -v i="$idx" '{print $i}')
        [ -n "$s" ] || continue
        for m in $MODES; do
            [ "$m" = greedy-dp ] && [ "$idx" -gt 1 ] && continue # deterministic: one run
            name="$w.$m.$s"
            [ -s "$WORK/$name.json" ] && continue
            extra="$ARGS"
            [ "$m" = greedy-dp ] && extra=""
            save=""
            [ "$m" = egrl ] || [ "$m" = pg ] && save="--save $WORK/$name.gnn"
            echo "$BIN/hwgym-egrl --endpoint $EP --config '{\"workload\":\"$w\"$HWJ}' --mode $m --seed $s --budget $b --quiet --curve $WORK/$name.csv $save $extra > $WORK/$name.json 2> $WORK/$name.err || echo FAILED $name" >> "$JOBFILE"
        done
        for a in $SEARCH; do
            name="$w.$a.$s"
            [ -s "$WORK/$name.json" ] && continue
            rm -f "$WORK/$name.db"
            echo "$BIN/hwgym-search --endpoint local --env placement-v0 --config '{\"workload\":\"$w\"$HWJ}' --algo $a --seed $s --budget $b --quiet --db $WORK/$name.db > $WORK/$name.json 2> $WORK/$name.err || echo FAILED $name" >> "$JOBFILE"
        done
    done
done
if [ "${EGRL_CHEAP_FIRST:-0}" = 1 ]; then # every control and baseline first, then the EGRL runs (seed-major)
    { grep -v -- '--mode egrl ' "$JOBFILE" || true; grep -- '--mode egrl ' "$JOBFILE" || true; } > "$JOBFILE.sorted"
    mv "$JOBFILE.sorted" "$JOBFILE"
fi
if [ "${EGRL_REPORT_ONLY:-0}" = 1 ]; then
    : > "$JOBFILE" # report on the runs already in EGRL_WORK, start none
fi
echo "paper-egrl: $(wc -l < "$JOBFILE") runs, $JOBS at a time (work dir $WORK)" >&2
xargs -P "$JOBS" -I{} -d '\n' sh -c '{}; echo . >&2' < "$JOBFILE"
T1=$(date +%s)
[ -n "${EGRL_TRAIN_SECONDS:-}" ] && T0=$((T1 - EGRL_TRAIN_SECONDS)) # report-only: the training time measured before

# ---------------------------------------------------------------- transfer (Figure 5)
# every seed's saved policy, and the untrained GNN of the same seed (the control: --eval-only
# without --load), scored on every workload with both decodings of the posterior: capacity (the
# default; the agent's map fits the chip by construction) and argmax (the paper's; may overflow)
TRANS=$WORK/transfer.tsv
FEAT=$(echo "$ARGS" | grep -o -- '--features [a-z0-9]*' || true) # the policies' inputs, as trained
: > "$TRANS"
# each seed's rows are kept in $WORK/<src>.egrl.<seed>.transfer.<decode> (src "untrained" for the
# control): a finished seed is not scored again, and seeds whose policy is not here
# (scripts/egrl-work-from-data.py) keep theirs
for dec in capacity argmax; do
    for src in $WORKLOADS untrained; do
        var="EGRL_SEEDS_$src"
        [ "$src" = untrained ] && var=SEEDS
        for s in ${!var:-$SEEDS}; do
            f=$WORK/$src.egrl.$s.gnn
            tf=$WORK/$src.egrl.$s.transfer.$dec
            if [ ! -s "$tf" ]; then
                pol=(--load "$f")
                [ "$src" = untrained ] && pol=()
                [ "$src" = untrained ] || [ -f "$f" ] || continue
                : > "$tf.tmp"
                for dst in $WORKLOADS; do
                    # shellcheck disable=SC2086 # FEAT is empty or two words
                    r=$("$BIN/hwgym-egrl" --endpoint "$EP" --config "{\"workload\":\"$dst\"$HWJ}" "${pol[@]}" --eval-only --seed "$s" --decode "$dec" $FEAT --quiet)
                    printf '%s\t%s\t%s\t%s\t%s\n' "$src" "$dst" "$s" "$dec" "$r" >> "$tf.tmp"
                done
                mv "$tf.tmp" "$tf"
            fi
            cat "$tf" >> "$TRANS"
        done
    done
done

# ---------------------------------------------------------------- equal CPU (EGRL_EQUAL_CPU)
# CPU seconds (user + sys, bash's `time`) of EGRL and EA in-process for 500 iterations (x 8 = their
# 4,000) and of SA for 4,000 evaluations, all seed 1; then SA and EA with as many evaluations as
# EGRL's CPU buys (rounded to thousands), every seed
TIMEFORMAT="%3U %3S %3R"
EQMODES=${EGRL_EQUAL_CPU_MODES:-"sa ea"}
EQW=${EGRL_EQUAL_CPU:-}
[ "${EGRL_REPORT_ONLY:-0}" = 1 ] && EQW="" # report on the equal-CPU runs already there, start none
for w in $EQW; do
    cfg="{\"workload\":\"$w\"$HWJ}"
    E=$WORK/eqcpu.$w
    mkdir -p "$E"
    [ -s "$E/egrl500.time" ] || { time "$BIN/hwgym-egrl" --endpoint local --config "$cfg" --mode egrl --seed 1 --budget 500 --quiet > "$E/egrl500.json" 2> "$E/egrl500.err"; } 2> "$E/egrl500.time"
    for a in $EQMODES; do
        case $a in
        sa) ref=sa4000 refn=4000 run=("$BIN/hwgym-search" --endpoint local --env placement-v0 --config "$cfg" --algo sa --quiet) ;;
        ea) ref=ea500 refn=500 run=("$BIN/hwgym-egrl" --endpoint local --config "$cfg" --mode ea --quiet) ;;
        *) echo "paper-egrl: EGRL_EQUAL_CPU_MODES: $a is not sa or ea" >&2; exit 2 ;;
        esac
        [ -s "$E/$ref.time" ] || { time "${run[@]}" --seed 1 --budget "$refn" > "$E/$ref.json" 2> "$E/$ref.err"; } 2> "$E/$ref.time"
        n=$(awk -v rn="$refn" 'NR==FNR {e = ($1 + $2) * 8; next} {s = $1 + $2} END {printf "%d", int(rn * e / (s > 0.001 ? s : 0.001) / 1000 + 0.5) * 1000}' "$E/egrl500.time" "$E/$ref.time")
        for s in ${EGRL_EQUAL_CPU_SEEDS:-$SEEDS}; do
            [ -s "$E/$a.$s.json" ] || { time "${run[@]}" --seed "$s" --budget "$n" > "$E/$a.$s.json" 2> "$E/$a.$s.err"; } 2> "$E/$a.$s.time"
            echo "paper-egrl: $w: $a at EGRL's CPU ($n evaluations), seed $s done" >&2
        done
    done
done

[ "${EGRL_TRAIN_ONLY:-0}" = 1 ] && { echo "paper-egrl: runs and transfer done in $WORK" >&2; exit 0; }
# ---------------------------------------------------------------- the committed data, then the page
for w in $WORKLOADS; do
    v="EGRL_SEEDS_$w"; [ -n "${!v:-}" ] && export "$v"
    v="EGRL_BUDGET_$w"; [ -n "${!v:-}" ] && export "$v"
done
BOUNDS=$WORK/bounds.jsonl
: > "$BOUNDS"
for w in $WORKLOADS; do
    "$BIN/hwgym" placement-bound --config "{\"workload\":\"$w\"$HWJ}" >> "$BOUNDS"
done
T2=$(date +%s)
export EGRL_EQUAL_CPU="${EGRL_EQUAL_CPU:-}" WORK OUT SVGDIR SEEDS WORKLOADS MODES SEARCH BUDGET T0 T1 T2 JOBS ARGS HW PAGE
"$PY" - <<'PYEOF'
import csv, gzip, json, os, sqlite3
W = os.environ["WORK"]; SVG = os.environ["SVGDIR"]
seeds = os.environ["SEEDS"].split(); wls = os.environ["WORKLOADS"].split()
modes = os.environ["MODES"].split(); search = os.environ.get("SEARCH", "").split()
def seeds_of(w):
    return os.environ.get("EGRL_SEEDS_" + w, " ".join(seeds)).split()
rows, summ, maps = [], [], {}
for w in wls:
    best = (-1e300, None)
    for m in modes + search:
        for s in seeds_of(w):
            name = f"{w}.{m}.{s}"
            js = os.path.join(W, name + ".json")
            if not os.path.exists(js) or os.path.getsize(js) == 0:
                continue
            j = json.loads(open(js).read())
            if m == "egrl" and j.get("best_reward") is not None and j["best_reward"] > best[0]:
                best = (j["best_reward"], j.get("best_action"))  # a run rebuilt by egrl-work-from-data.py has it only if it is the best
            j.pop("best_action", None); j.pop("best_metrics", None); j.pop("best_point", None)
            j.update({"workload": w, "mode": m, "seed": int(s)})
            summ.append(j)
            if m in search:  # hwgym-search: the trial DB, in evaluation order
                db = sqlite3.connect(os.path.join(W, name + ".db"))
                for k, (rw, mt) in enumerate(db.execute("SELECT reward, metrics FROM trials ORDER BY id")):
                    sp = json.loads(mt or "{}").get("speedup", 0.0)
                    rows.append((w, m, s, str(k + 1), m, "%.5g" % (rw if rw is not None else float("nan")), "%.5g" % sp))
                db.close()
            else:
                with open(os.path.join(W, name + ".csv")) as f:
                    for r in csv.DictReader(f):
                        rows.append((w, m, s, r["sample"], r["worker"], "%.5g" % float(r["reward"]), "%.5g" % float(r["speedup"])))
    if best[1] is not None:
        maps[w] = best[1]
os.makedirs(SVG, exist_ok=True)
with gzip.GzipFile(os.path.join(SVG, "runs.csv.gz"), "wb", mtime=0) as f:
    f.write(("workload,mode,seed,sample,worker,reward,speedup\n" + "".join(",".join(r) + "\n" for r in rows)).encode())
with gzip.GzipFile(os.path.join(SVG, "summaries.jsonl.gz"), "wb", mtime=0) as f:
    f.write("".join(json.dumps(j, sort_keys=True) + "\n" for j in summ).encode())
json.dump(maps, open(os.path.join(SVG, "maps.json"), "w"))
tr = []
for line in open(os.path.join(W, "transfer.tsv")):
    src, dst, s, dec, js = line.rstrip("\n").split("\t", 4)
    j = json.loads(js); bm = j.get("best_metrics") or {}
    tr.append("\t".join([src, dst, s, dec, "%.6g" % j.get("best_speedup", 0.0), "%.6g" % bm.get("rectified_speedup", 0.0),
                         "%.6g" % bm.get("eps", 0.0), "%d" % bm.get("reassigned_tensors", 0)]) + "\n")
if tr:
    with gzip.GzipFile(os.path.join(SVG, "transfer.tsv.gz"), "wb", mtime=0) as f:
        f.write("".join(tr).encode())
eq = {}
for w in os.environ.get("EGRL_EQUAL_CPU", "").split():
    E = os.path.join(W, "eqcpu." + w)
    cpu = lambda f: round(sum(float(x) for x in open(os.path.join(E, f)).read().split()[:2]), 2)
    def runs(a):
        rs = []
        for s in seeds:
            js = os.path.join(E, "%s.%s.json" % (a, s))
            if os.path.exists(js) and os.path.getsize(js) > 0:
                j = json.loads(open(js).read())
                sp = j["best_speedup"] if a == "ea" else (j.get("best_metrics") or {}).get("speedup", 0.0)
                rs.append({"seed": int(s), "best_speedup": sp, "samples": j.get("samples"), "cpu_s": cpu("%s.%s.time" % (a, s))})
        return rs
    if not os.path.exists(os.path.join(E, "egrl500.time")) or os.path.getsize(os.path.join(E, "egrl500.time")) == 0:
        continue
    eq[w] = {"egrl_iterations": 500, "egrl_cpu_s": cpu("egrl500.time")}
    if runs("sa"):
        eq[w].update({"sa_evaluations": 4000, "sa_cpu_s": cpu("sa4000.time"), "runs": runs("sa")})
    if runs("ea"):
        eq[w].update({"ea_iterations": 500, "ea_cpu_s": cpu("ea500.time"), "ea_runs": runs("ea")})
if eq:
    json.dump(eq, open(os.path.join(SVG, "equal_cpu.json"), "w"), indent=1, sort_keys=True)
bounds = {w: json.loads(l) for w, l in zip(wls, open(os.path.join(W, "bounds.jsonl")).read().splitlines())}
json.dump(bounds, open(os.path.join(SVG, "bounds.json"), "w"), indent=1, sort_keys=True)
names = {"resnet50": "ResNet-50", "resnet101": "ResNet-101", "bert_base": "BERT"}
budget = os.environ["BUDGET"]
hw = os.environ.get("HW") or None
d = os.path.basename(SVG)
header = ("Generated by `make paper-egrl` (scripts/paper-egrl.sh%s). Budget %s iterations per run "
          "(evaluations counted across the population, as the paper counts them)%s, seeds %s, "
          "%s at a time%s; training took %%(train_s)d s, all of it %%(total_s)d s."
          % (", `EGRL_HW=%s`" % hw if hw else "", budget,
             "".join(", %s: %s" % (names.get(w, w), os.environ["EGRL_BUDGET_" + w]) for w in wls if os.environ.get("EGRL_BUDGET_" + w)),
             " ".join(seeds) + "".join(" (%s: %s)" % (names.get(w, w), " ".join(seeds_of(w))) for w in wls if seeds_of(w) != seeds),
             "one run" if os.environ["JOBS"] == "1" else os.environ["JOBS"] + " runs", os.environ.get("EGRL_NOTE", "")))
meta = {"title": "# EGRL on placement-v0%s: Figures 4, 5 and 7 of the EGRL paper, rerun" % (" (`%s` chip)" % hw if hw else ""),
        "header": header,
        "data_sentence": ("Speedup = the compiler heuristic's latency over the mapping's (0 for an invalid map, as the paper); "
                          "the curves and tables give the best speedup found so far. Greedy-DP is deterministic (one run)."
                          + (" Controls at the same budget and seeds: %s (hwgym-search, docs/search.md)." % ", ".join(search) if search else "")
                          + " Data: [%s/runs.csv.gz](%s/runs.csv.gz) (every evaluation), [%s/summaries.jsonl.gz](%s/summaries.jsonl.gz) "
                          "(every run's JSON summary), [%s/transfer.tsv.gz](%s/transfer.tsv.gz), [%s/maps.json](%s/maps.json), "
                          "[%s/bounds.json](%s/bounds.json); `python3 scripts/egrl-tables.py` rebuilds this page from them." % ((d,) * 10)),
        "transfer_sentence": ("Each seed's best GNN policy (the population's GNN member with the best greedy map, `--save`) scored with "
                              "`--load --eval-only` on every workload, without fine-tuning. The diagonal is the policy on its own "
                              "training workload; the run's overall best (often a Boltzmann chromosome) is in the Figure 4 table. "
                              "The control row is the same GNN untrained (`--eval-only` without `--load`: the weights each seed "
                              "initialises), scored the same way.\n\n"
                              "The agent turns the policy's posterior into a map itself, before the env sees it, in one of two ways "
                              "(docs/egrl.md, \"Transfer\"): **capacity** (`--decode capacity`, the default of `--eval-only`; "
                              "agents/egrl/decode.c): the tensors in execution order (activations, then weights) each go to the memory "
                              "the policy prefers most among those with room left in the tensor's bank, the capacities read from the "
                              "env's reset info, so the map is valid by construction; **argmax** (`--decode argmax`, the paper's): "
                              "each tensor's most probable memory, whether it fits or not. **Raw** is the speedup of the map the agent "
                              "emitted, as the env scores it with no repair (0 = invalid, the paper's metric); **rectified** is the "
                              "same map's speedup after the env's compiler rectification (metric `rectified_speedup`), with eps the "
                              "fraction of bytes the rectification moved."),
        "budget": int(budget), "seeds": seeds, "workloads": wls, "modes": modes, "search": search,
        "seeds_by_workload": {w: seeds_of(w) for w in wls if seeds_of(w) != seeds},
        "budgets": {w: int(os.environ["EGRL_BUDGET_" + w]) for w in wls if os.environ.get("EGRL_BUDGET_" + w)},
        "jobs": int(os.environ["JOBS"]), "train_s": int(os.environ["T1"]) - int(os.environ["T0"]),
        "total_s": int(os.environ["T2"]) - int(os.environ["T0"]), "args": os.environ.get("ARGS", ""), "hw": hw,
        "interval": "ci95" if hw else "std", "notes": os.environ["PAGE"].replace(".md", "-notes.md")}
json.dump(meta, open(os.path.join(SVG, "meta.json"), "w"), indent=1, sort_keys=True)
PYEOF
HWGYM_BIN=$BIN "$PY" scripts/egrl-tables.py --page "$PAGE" --data "$SVGDIR" --out "$OUT"
fail=0
for f in "$WORK"/*.json; do
    case "$f" in */best_*) continue ;; esac
    [ -s "$f" ] || { echo "paper-egrl: $(basename "$f" .json) failed: $(cat "${f%.json}.err")" >&2; fail=1; }
done
[ "$fail" = 0 ] || exit 1
echo "paper-egrl: wrote $OUT/$PAGE in $(( $(date +%s) - T0 )) s" >&2
