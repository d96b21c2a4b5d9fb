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
#   EGRL_JOBS=2                 runs in parallel
#   EGRL_ARGS=""                extra hwgym-egrl arguments for every learning run (none: the paper's
#                               settings, incl. Table 2's one SAC update per evaluation; ~29 min
#                               wall on 2 idle cores, docs/egrl.md "Speed")
#   EGRL_BUDGET_<workload>=N    override the budget of one workload (e.g. EGRL_BUDGET_bert_base=2000)
#   EGRL_SEEDS_<workload>="..." override the seeds of one workload
#   EGRL_OUT=docs/results       output directory
#   EGRL_REPORT_ONLY=1          with EGRL_WORK: start no run, report on the finished ones there
#   EGRL_TRAIN_SECONDS=N        the training time to state (with EGRL_REPORT_ONLY)
#   EGRL_NOTE=TEXT              appended to the timing sentence of egrl.md (e.g. ", under nice -n 5 on a shared machine")
#   EGRL_WORK=DIR               keep the runs in DIR and skip every run whose summary is already
#                               there (to finish an interrupted reproduction; DIR is not deleted)
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
SVGDIR=$OUT/egrl
mkdir -p "$SVGDIR"

for b in hwgym-server hwgym hwgym-egrl; do
    [ -x "$BIN/$b" ] || { echo "paper-egrl: $BIN/$b is not built (make all)" >&2; exit 1; }
done

if [ -n "${EGRL_WORK:-}" ]; then
    WORK=$EGRL_WORK
    KEEP=1
    mkdir -p "$WORK"
else
    WORK=$(mktemp -d /tmp/hwgym-paper-egrl.XXXXXX)
    KEEP=0
fi
EP="ipc://$WORK/server.sock"
"$BIN/hwgym-server" --bind "$EP" --workers 2 > "$WORK/server.log" 2>&1 &
SERVER=$!
cleanup() {
    kill "$SERVER" 2>/dev/null || true
    wait "$SERVER" 2>/dev/null || true
    [ "$KEEP" = 1 ] || rm -rf "$WORK"
}
trap cleanup EXIT
for _ in $(seq 50); do "$BIN/hwgym" envs --endpoint "$EP" > /dev/null 2>&1 && break; sleep 0.1; done

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
            echo "$BIN/hwgym-egrl --endpoint $EP --config '{\"workload\":\"$w\"}' --mode $m --seed $s --budget $b --quiet --curve $WORK/$name.csv $save $extra > $WORK/$name.json 2> $WORK/$name.err || echo FAILED $name" >> "$JOBFILE"
        done
    done
done
if [ "${EGRL_REPORT_ONLY:-0}" = 1 ]; then
    : > "$JOBFILE" # report on the runs already in EGRL_WORK, start none
fi
echo "paper-egrl: $(wc -l < "$JOBFILE") runs, $JOBS at a time (work dir $WORK)" >&2
xargs -P "$JOBS" -I{} -d '\n' sh -c '{}; echo . >&2' < "$JOBFILE"
T1=$(date +%s)
[ -n "${EGRL_TRAIN_SECONDS:-}" ] && T0=$((T1 - EGRL_TRAIN_SECONDS)) # report-only: the training time measured before

# ---------------------------------------------------------------- transfer (Figure 5)
TRANS=$WORK/transfer.tsv
: > "$TRANS"
for src in $WORKLOADS; do
    var="EGRL_SEEDS_$src"
    for s in ${!var:-$SEEDS}; do
        f=$WORK/$src.egrl.$s.gnn
        [ -f "$f" ] || continue
        for dst in $WORKLOADS; do
            r=$("$BIN/hwgym-egrl" --endpoint "$EP" --config "{\"workload\":\"$dst\"}" --load "$f" --eval-only --quiet)
            printf '%s\t%s\t%s\t%s\n' "$src" "$dst" "$s" "$r" >> "$TRANS"
        done
    done
done

# ---------------------------------------------------------------- aggregate, plots, pictures
for w in $WORKLOADS; do
    v="EGRL_SEEDS_$w"; [ -n "${!v:-}" ] && export "$v"
    v="EGRL_BUDGET_$w"; [ -n "${!v:-}" ] && export "$v"
done
export WORK OUT SVGDIR SEEDS WORKLOADS MODES BUDGET T0 T1 JOBS ARGS
"$PY" - <<'PYEOF'
import csv, gzip, json, math, os, statistics as st
W = os.environ["WORK"]; OUT = os.environ["OUT"]; SVG = os.environ["SVGDIR"]
seeds = os.environ["SEEDS"].split(); wls = os.environ["WORKLOADS"].split(); modes = os.environ["MODES"].split()
names = {"resnet50": "ResNet-50", "resnet101": "ResNet-101", "bert_base": "BERT"}
paper = {"egrl": (1.28, 1.78, 1.66), "ea": (1.06, 1.47, 1.64), "greedy-dp": (0.72, 1.27, 0.67), "pg": (0.29, 0.23, 0.21)}
pidx = {"resnet50": 0, "resnet101": 1, "bert_base": 2}
label = {"egrl": "EGRL", "ea": "EA", "pg": "PG", "greedy-dp": "Greedy-DP"}
colour = {"egrl": "#d62728", "ea": "#1f77b4", "pg": "#2ca02c", "greedy-dp": "#ff7f0e"}
runs = {}   # (w, m, s) -> list of (sample, speedup)
summ = []
rows_out = []
def seeds_of(w):
    return os.environ.get("EGRL_SEEDS_" + w, " ".join(seeds)).split()
for w in wls:
    for m in modes:
        for s in seeds_of(w):
            name = f"{w}.{m}.{s}"
            js = os.path.join(W, name + ".json")
            if not os.path.exists(js) or os.path.getsize(js) == 0:
                continue
            j = json.loads(open(js).read())
            j.pop("best_action", None); j.pop("best_metrics", None)
            j.update({"workload": w, "mode": m, "seed": int(s)})
            summ.append(j)
            pts = []
            with open(os.path.join(W, name + ".csv")) as f:
                for r in csv.DictReader(f):
                    pts.append((int(r["sample"]), float(r["speedup"])))
                    rows_out.append((w, m, s, r["sample"], r["worker"], "%.5g" % float(r["reward"]), "%.5g" % float(r["speedup"])))
            runs[(w, m, s)] = pts
with gzip.open(os.path.join(SVG, "runs.csv.gz"), "wt") as f:
    f.write("workload,mode,seed,sample,worker,reward,speedup\n")
    for r in rows_out:
        f.write(",".join(r) + "\n")
with gzip.open(os.path.join(SVG, "summaries.jsonl.gz"), "wt") as f:
    for j in summ:
        f.write(json.dumps(j, sort_keys=True) + "\n")

def best_curve(pts, budget, step):
    out, b, k = [], 0.0, 0
    for x in range(step, budget + 1, step):
        while k < len(pts) and pts[k][0] <= x:
            b = max(b, pts[k][1]); k += 1
        out.append(b)
    return out

def budget_of(w):
    return int(os.environ.get("EGRL_BUDGET_" + w, os.environ["BUDGET"]))

def ms(v):
    if not v: return "–"
    if len(v) == 1: return "%.3f" % v[0]
    return "%.3f ± %.3f" % (st.mean(v), st.stdev(v))

lines = []
lines.append("# EGRL on placement-v0: Figures 4, 5 and 7 of the EGRL paper, rerun\n")
lines.append("Generated by `make paper-egrl` (scripts/paper-egrl.sh). Budget %s iterations per run "
             "(evaluations counted across the population, as the paper counts them)%s, seeds %s, "
             "%s parallel runs against one local hwgym-server%s; training took %d s, all of it %d s.\n"
             % (os.environ["BUDGET"], "".join(", %s: %s" % (names.get(w, w), budget_of(w)) for w in wls if budget_of(w) != int(os.environ["BUDGET"])),
                " ".join(seeds) + "".join(" (%s: %s)" % (names.get(w, w), " ".join(seeds_of(w))) for w in wls if seeds_of(w) != seeds), os.environ["JOBS"],
                os.environ.get("EGRL_NOTE", ""), int(os.environ["T1"]) - int(os.environ["T0"]), 0))
if os.environ.get("ARGS"):
    lines.append("Extra arguments of every learning run: `%s`.\n" % os.environ["ARGS"])
lines.append("Speedup = the compiler heuristic's latency over the mapping's (0 for an invalid map, as the paper); "
             "the curves and tables give the best speedup found so far. Greedy-DP is deterministic (one run). "
             "Data: [egrl/runs.csv.gz](egrl/runs.csv.gz) (every evaluation), "
             "[egrl/summaries.jsonl.gz](egrl/summaries.jsonl.gz) (every run's JSON summary).\n")
lines.append("## Figure 4: final speedup (mean ± std over seeds) vs the paper\n")
lines.append("| workload | " + " | ".join("%s (ours)" % label[m] for m in modes) + " | " + " | ".join("%s (paper)" % label[m] for m in modes if m in paper) + " |")
lines.append("|---|" + "---|" * (len(modes) + sum(m in paper for m in modes)))
for w in wls:
    cells = []
    for m in modes:
        v = [max([p[1] for p in runs[(w, m, s)]] or [0]) for s in seeds_of(w) if (w, m, s) in runs]
        cells.append(ms(v))
    pc = ["%.2f" % paper[m][pidx[w]] if w in pidx else "–" for m in modes if m in paper]
    lines.append("| %s | %s | %s |" % (names.get(w, w), " | ".join(cells), " | ".join(pc)))
lines.append("")
# iterations to reach the heuristic (speedup >= 1)
lines.append("Iterations until a mapping at least as fast as the heuristic (speedup ≥ 1), mean over the seeds that got there:\n")
lines.append("| workload | " + " | ".join(label[m] for m in modes) + " |")
lines.append("|---|" + "---|" * len(modes))
for w in wls:
    cells = []
    for m in modes:
        its = []
        n = 0
        for s in seeds_of(w):
            if (w, m, s) not in runs: continue
            n += 1
            hit = [x for x, sp in runs[(w, m, s)] if sp >= 1.0]
            if hit: its.append(hit[0])
        cells.append("%d (%d/%d)" % (st.mean(its), len(its), n) if its else "never (0/%d)" % n)
    lines.append("| %s | %s |" % (names.get(w, w), " | ".join(cells)))
lines.append("")
# curves
for w in wls:
    B = budget_of(w); step = max(1, B // 100)
    xs = list(range(step, B + 1, step))
    curves = {}
    for m in modes:
        cs = [best_curve(runs[(w, m, s)], B, step) for s in seeds_of(w) if (w, m, s) in runs]
        if cs:
            curves[m] = ([st.mean(c) for c in zip(*cs)], [st.stdev(c) if len(c) > 1 else 0 for c in zip(*cs)])
    ymax = max([max(mu[i] + sd[i] for i in range(len(mu))) for mu, sd in curves.values()] + [1.05]) * 1.05
    Wd, Ht, L, T, Rr, Bt = 560, 320, 50, 30, 120, 40
    def X(x): return L + (Wd - L - Rr) * x / B
    def Y(y): return T + (Ht - T - Bt) * (1 - y / ymax)
    svg = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="11">' % (Wd, Ht),
           '<rect width="100%" height="100%" fill="white"/>',
           '<text x="%d" y="18" font-size="13">%s: best speedup vs iterations (mean ± std, %d seeds)</text>' % (L, names.get(w, w), len(seeds_of(w)))]
    for k in range(0, 6):
        yv = ymax * k / 5
        svg.append('<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="#ddd"/><text x="%d" y="%.1f" text-anchor="end">%.2f</text>' % (L, Wd - Rr, Y(yv), Y(yv), L - 4, Y(yv) + 4, yv))
    for k in range(0, 5):
        xv = B * k / 4
        svg.append('<text x="%.1f" y="%d" text-anchor="middle">%d</text>' % (X(xv), Ht - Bt + 15, xv))
    svg.append('<text x="%d" y="%d" text-anchor="middle">iterations</text>' % ((L + Wd - Rr) / 2, Ht - 8))
    svg.append('<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="#000" stroke-dasharray="4,3"/><text x="%d" y="%.1f">heuristic</text>' % (L, Wd - Rr, Y(1), Y(1), Wd - Rr + 4, Y(1) + 4))
    for i, (m, (mu, sd)) in enumerate(curves.items()):
        up = " ".join("%.1f,%.1f" % (X(x), Y(mu[k] + sd[k])) for k, x in enumerate(xs))
        dn = " ".join("%.1f,%.1f" % (X(x), Y(mu[k] - sd[k])) for k, x in reversed(list(enumerate(xs))))
        svg.append('<polygon points="%s %s" fill="%s" opacity="0.15"/>' % (up, dn, colour[m]))
        svg.append('<polyline points="%s" fill="none" stroke="%s" stroke-width="2"/>' % (" ".join("%.1f,%.1f" % (X(x), Y(mu[k])) for k, x in enumerate(xs)), colour[m]))
        svg.append('<text x="%d" y="%d" fill="%s">%s %.3f</text>' % (Wd - Rr + 4, T + 16 * i + 10, colour[m], label[m], mu[-1]))
    svg.append("</svg>")
    open(os.path.join(SVG, "fig4_%s.svg" % w), "w").write("\n".join(svg))
    lines.append("![%s](egrl/fig4_%s.svg)\n" % (names.get(w, w), w))
# transfer
tr = {}
tp = os.path.join(W, "transfer.tsv")
if os.path.exists(tp):
    for line in open(tp):
        src, dst, s, js = line.rstrip("\n").split("\t", 3)
        j = json.loads(js)
        bm = j.get("best_metrics") or {}
        tr.setdefault((src, dst), []).append((j.get("best_speedup", 0.0), bm.get("rectified_speedup", 0.0), bm.get("eps", 0.0),
                                              bm.get("reassigned_tensors", 0)))
if tr:
    lines.append("## Figure 5: zero-shot transfer of the best EGRL GNN policy\n")
    lines.append("Each seed's best GNN policy (the population's GNN member with the best greedy map, `--save`) "
                 "scored with `--load --eval-only` on every workload, without fine-tuning: speedup of its greedy map "
                 "(mean ± std over seeds; 0 = invalid map). The diagonal is the policy on its own training workload; "
                 "the run's overall best (often a Boltzmann chromosome) is in the Figure 4 table.\n")
    lines.append("| trained on \\ tested on | " + " | ".join(names.get(d, d) for d in wls) + " |")
    lines.append("|---|" + "---|" * len(wls))
    for src in wls:
        lines.append("| %s | %s |" % (names.get(src, src), " | ".join(ms([t[0] for t in tr.get((src, d), [])]) for d in wls)))
    lines.append("")
    lines.append("The same maps after the compiler's rectification (placement-v0 moves the tensors that do not fit "
                 "to DRAM, as the NNP-I compiler does; metric `rectified_speedup`), with the mean fraction of bytes moved "
                 "(eps) and of tensors moved per map:\n")
    lines.append("| trained on \\ tested on | " + " | ".join(names.get(d, d) for d in wls) + " |")
    lines.append("|---|" + "---|" * len(wls))
    for src in wls:
        cells = []
        for d in wls:
            v = tr.get((src, d), [])
            cells.append("%s (eps %.2f, %.1f moved)" % (ms([t[1] for t in v]), st.mean([t[2] for t in v]), st.mean([t[3] for t in v]))
                         if v else "–")
        lines.append("| %s | %s |" % (names.get(src, src), " | ".join(cells)))
    lines.append("")
lines.append("## Figure 7: placements of the best EGRL maps\n")
lines.append("Top band of each picture: the compiler heuristic's map; below it EGRL's best map (W row: weights, "
             "A row: activations, x = node in execution order); then the transition matrix (fraction of the "
             "heuristic's tensors in memory r that EGRL puts in memory c) and the occupancy of each memory.\n")
for w in wls:
    lines.append("![%s](egrl/fig7_%s.svg)\n" % (names.get(w, w), w))
notes = os.path.join(OUT, "egrl-notes.md")
if os.path.exists(notes):
    lines.append(open(notes).read())
open(os.path.join(OUT, "egrl.md"), "w").write("\n".join(lines) + "\n")
# best EGRL action per workload for the pictures
best = {}
for w in wls:
    bv, ba = -1e9, None
    for s in seeds_of(w):
        js = os.path.join(W, f"{w}.egrl.{s}.json")
        if os.path.exists(js) and os.path.getsize(js):
            j = json.loads(open(js).read())
            if j.get("best_reward", -1e9) is not None and j["best_reward"] > bv:
                bv, ba = j["best_reward"], j["best_action"]
    if ba:
        open(os.path.join(W, f"best_{w}.json"), "w").write(json.dumps(ba))
PYEOF
for w in $WORKLOADS; do
    [ -f "$WORK/best_$w.json" ] || continue
    "$BIN/hwgym" render --env placement-v0 --config "{\"workload\":\"$w\"}" --action "@$WORK/best_$w.json" \
        --title "EGRL best map, $w" --out "$SVGDIR/fig7_$w.svg" 2> /dev/null
done
T2=$(date +%s)
sed -i "s/all of it 0 s/all of it $((T2 - T0)) s/" "$OUT/egrl.md"
fail=0
for f in "$WORK"/*.json; do
    case "$f" in */best_*) continue ;; esac
    [ -s "$f" ] || { echo "paper-egrl: $(basename "$f" .json) failed: $(cat "${f%.json}.err")" >&2; fail=1; }
done
[ "$fail" = 0 ] || exit 1
echo "paper-egrl: wrote $OUT/egrl.md in $((T2 - T0)) s" >&2
