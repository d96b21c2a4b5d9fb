#!/usr/bin/env bash
# scripts/paper-egrl-width.sh - `make paper-egrl-width`: the critic-width ablation of the EGRL
# reproduction. make paper-egrl runs the SAC critics 32 wide (hwgym-egrl --critic-hidden, default
# 32) where Table 2 gives 128 for the GNN layers; this reruns make paper-egrl's EGRL command on
# one workload at every width asked for, same seeds, budget and server, and writes
# docs/results/egrl-critic-width.md with the data beside it (docs/results/egrl/critic-width.csv.gz:
# every improvement of the best speedup per run; critic-width.jsonl.gz: every run's summary and
# CPU seconds). Spot-check runs (other workloads, one width and seed each) are compared with the
# same seed's run in make paper-egrl's committed summaries (docs/results/egrl/summaries.jsonl.gz).
#
# Knobs (environment):
#   BUILD=build                      where bin/ is
#   EGRL_WIDTHS="32 128"             critic widths (--critic-hidden)
#   EGRL_WORKLOAD=resnet50           workload of the full comparison
#   EGRL_SEEDS="1 2 3 4 5"           its seeds (make paper-egrl's)
#   EGRL_BUDGET=4000                 iterations per run (make paper-egrl's)
#   EGRL_SPOT="bert_base:128:1 bert_base:128:2 bert_base:128:3"
#                                    extra runs, workload:width:seed, space-separated ("" for none)
#   EGRL_JOBS=2                      runs in parallel
#   EGRL_OUT=docs/results            output directory
#   EGRL_WORK=DIR                    keep the runs in DIR and skip those already there (with
#                                    every run there: only the report is rewritten)
#   EGRL_TRAIN_SECONDS=N             the wall time to state (when rewriting the report from EGRL_WORK)
# The hand-written reading in $EGRL_OUT/egrl-critic-width-notes.md (if present) is appended.
set -euo pipefail

BUILD=${BUILD:-build}
BIN=$BUILD/bin
WIDTHS=${EGRL_WIDTHS:-"32 128"}
WL=${EGRL_WORKLOAD:-resnet50}
SEEDS=${EGRL_SEEDS:-"1 2 3 4 5"}
BUDGET=${EGRL_BUDGET:-4000}
SPOT=${EGRL_SPOT-"bert_base:128:1 bert_base:128:2 bert_base:128:3"}
JOBS=${EGRL_JOBS:-2}
OUT=${EGRL_OUT:-docs/results}
PY=${PYTHON:-/usr/bin/python3}
mkdir -p "$OUT/egrl"

for b in hwgym-server hwgym hwgym-egrl; do
    [ -x "$BIN/$b" ] || { echo "paper-egrl-width: $BIN/$b is not built (make all)" >&2; exit 1; }
done
[ -x /usr/bin/time ] || { echo "paper-egrl-width: /usr/bin/time is missing (package time)" >&2; exit 1; }

# shellcheck source=scripts/paper-server.sh
. "$(dirname "$0")/paper-server.sh"
paper_server_start paper-egrl-width "${EGRL_WORK:-}"

T0=$(date +%s)
JOBFILE=$WORK/jobs.txt
: > "$JOBFILE"
job() { # workload width seed: make paper-egrl's EGRL command plus --critic-hidden
    local name="$1.w$2.$3"
    [ -s "$WORK/$name.json" ] && return 0
    echo "/usr/bin/time -f '%U %S %e' -o $WORK/$name.time $BIN/hwgym-egrl --endpoint $EP --config '{\"workload\":\"$1\"}' --mode egrl --seed $3 --budget $BUDGET --quiet --curve $WORK/$name.csv --critic-hidden $2 > $WORK/$name.json 2> $WORK/$name.err || echo FAILED $name" >> "$JOBFILE"
}
# the slow spot checks first, so that they overlap the full comparison
for sp in $SPOT; do
    IFS=: read -r w h s <<< "$sp"
    job "$w" "$h" "$s"
done
for s in $SEEDS; do
    for h in $WIDTHS; do job "$WL" "$h" "$s"; done
done
echo "paper-egrl-width: $(wc -l < "$JOBFILE") runs, $JOBS at a time (work dir $WORK)" >&2
xargs -P "$JOBS" -I{} -d '\n' sh -c '{}; echo . >&2' < "$JOBFILE"
T1=$(date +%s)
[ -n "${EGRL_TRAIN_SECONDS:-}" ] && T0=$((T1 - EGRL_TRAIN_SECONDS))

export WORK OUT WL SEEDS WIDTHS BUDGET SPOT JOBS T0 T1
"$PY" - <<'PYEOF'
import csv, gzip, json, os, statistics as st
W = os.environ["WORK"]; OUT = os.environ["OUT"]; wl = os.environ["WL"]
seeds = os.environ["SEEDS"].split(); widths = os.environ["WIDTHS"].split()
spots = [tuple(x.split(":")) for x in os.environ["SPOT"].split()]
names = {"resnet50": "ResNet-50", "resnet101": "ResNet-101", "bert_base": "BERT"}
T95 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306, 9: 2.262}

def load(w, h, s):
    name = f"{w}.w{h}.{s}"
    js = os.path.join(W, name + ".json")
    if not os.path.exists(js) or os.path.getsize(js) == 0:
        return None
    j = json.loads(open(js).read())
    j.pop("best_action", None); j.pop("best_metrics", None)
    u, sy, e = (float(x) for x in open(os.path.join(W, name + ".time")).read().split()[-3:])
    j.update({"workload": w, "critic_hidden": int(h), "seed": int(s), "cpu_s": u + sy, "time_wall_s": e})
    pts, b = [], 0.0
    with open(os.path.join(W, name + ".csv")) as f:
        for r in csv.DictReader(f):
            sp = float(r["speedup"])
            if sp > b:
                b = sp; pts.append((int(r["sample"]), sp))
    return j, pts

runs = {}
for h in widths:
    for s in seeds:
        r = load(wl, h, s)
        if r: runs[(wl, h, s)] = r
for w, h, s in spots:
    r = load(w, h, s)
    if r: runs[(w, h, s)] = r
with gzip.open(os.path.join(OUT, "egrl", "critic-width.csv.gz"), "wt") as f:
    f.write("workload,critic_hidden,seed,sample,best_speedup\n")
    for (w, h, s), (_, pts) in sorted(runs.items()):
        for x, sp in pts:
            f.write("%s,%s,%s,%d,%.6g\n" % (w, h, s, x, sp))
with gzip.open(os.path.join(OUT, "egrl", "critic-width.jsonl.gz"), "wt") as f:
    for k in sorted(runs):
        f.write(json.dumps(runs[k][0], sort_keys=True) + "\n")
committed = {}
cp = os.path.join(OUT, "egrl", "summaries.jsonl.gz")
if os.path.exists(cp):
    for line in gzip.open(cp, "rt"):
        j = json.loads(line)
        if j.get("mode") == "egrl" and j.get("budget") == int(os.environ["BUDGET"]):
            committed[(j["workload"], str(j["seed"]))] = j

CHK = [x for x in (500, 1000, 2000) if x < int(os.environ["BUDGET"])]
def best_at(pts, x):
    return max([sp for i, sp in pts if i <= x] or [0.0])
curves32 = {}  # committed make paper-egrl EGRL curves (improvements only), for the spot checks
rp = os.path.join(OUT, "egrl", "runs.csv.gz")
if os.path.exists(rp) and spots:
    want = {w for w, _, _ in spots}
    for r in csv.DictReader(gzip.open(rp, "rt")):
        if r["mode"] == "egrl" and r["workload"] in want:
            curves32.setdefault((r["workload"], r["seed"]), []).append((int(r["sample"]), float(r["speedup"])))

def ci(v):
    if len(v) < 2: return "%.4f" % v[0]
    return "%.4f ± %.4f" % (st.mean(v), T95.get(len(v) - 1, 1.96) * st.stdev(v) / len(v) ** 0.5)

L = []
L.append("# EGRL critic width: 32 vs 128 (ablation)\n")
L.append("Generated by `make paper-egrl-width` (scripts/paper-egrl-width.sh): make paper-egrl's EGRL command "
         "(`hwgym-egrl --mode egrl --budget %s`, Table 2's one SAC update per evaluation, against one local "
         "hwgym-server) on %s with `--critic-hidden` %s, seeds %s, %s runs at a time; all of it took %d s wall. "
         "[Back to the reproduction](egrl.md).\n"
         % (os.environ["BUDGET"], names.get(wl, wl), " and ".join(widths), " ".join(seeds), os.environ["JOBS"],
            int(os.environ["T1"]) - int(os.environ["T0"])))
L.append("Final speedup = the best speedup over the compiler heuristic found in the run; ± is the 95% "
         "confidence half-width of the mean (Student t over seeds). CPU = user + system seconds of the "
         "agent process (the server's evaluations are not in it). Data: "
         "[egrl/critic-width.csv.gz](egrl/critic-width.csv.gz) (every improvement of each run's best), "
         "[egrl/critic-width.jsonl.gz](egrl/critic-width.jsonl.gz) (every run's summary).\n")
L.append("| critic width | seeds | final speedup (mean ± 95% CI) | per seed | " + " | ".join("best at %d (mean)" % x for x in CHK)
         + " | best GNN member (mean) | valid maps | agent CPU per run | wall per run |")
L.append("|---|---|---|---|" + "---|" * len(CHK) + "---|---|---|---|")
for h in widths:
    rs = [runs[(wl, h, s)][0] for s in seeds if (wl, h, s) in runs]
    if not rs: continue
    cs = [runs[(wl, h, s)][1] for s in seeds if (wl, h, s) in runs]
    L.append("| %s | %d | %s | %s | %s%.4f | %.3f | %.0f s | %.0f s |" % (
        h, len(rs), ci([j["best_speedup"] for j in rs]), " ".join("%.4f" % j["best_speedup"] for j in rs),
        "".join("%.4f | " % st.mean(best_at(c, x) for c in cs) for x in CHK),
        st.mean(j["best_gnn_reward"] for j in rs), st.mean(j["valid_fraction"] for j in rs),
        st.mean(j["cpu_s"] for j in rs), st.mean(j["time_wall_s"] for j in rs)))
L.append("")
if len(widths) == 2 and all((wl, h, s) in runs for h in widths for s in seeds):
    d = [runs[(wl, widths[1], s)][0]["best_speedup"] - runs[(wl, widths[0], s)][0]["best_speedup"] for s in seeds]
    L.append("Paired by seed, %s minus %s: %s (mean ± 95%% CI).\n" % (widths[1], widths[0], ci(d)))
rows = []
for h in widths:
    for s in seeds:
        c = committed.get((wl, s)); r = runs.get((wl, h, s))
        if c and r and int(h) == 32:
            rows.append("seed %s: %.6f vs %.6f" % (s, r[0]["best_speedup"], c["best_speedup"]))
if rows:
    L.append("The width-32 runs against make paper-egrl's committed runs of the same seeds (same command): %s.\n" % "; ".join(rows))
sp = [(w, h, s) for w, h, s in spots if (w, h, s) in runs]
if sp:
    L.append("Spot checks against make paper-egrl's committed width-32 run of the same seed:\n")
    L.append("| workload | seed | width | final speedup | " + " | ".join("best at %d" % x for x in CHK)
             + " | agent CPU | wall | width 32 (committed): final | " + " | ".join("at %d" % x for x in CHK) + " | its wall |")
    L.append("|---|---|---|---|" + "---|" * len(CHK) + "---|---|---|" + "---|" * len(CHK) + "---|")
    for w, h, s in sp:
        j, pts = runs[(w, h, s)]; c = committed.get((w, s)); c32 = curves32.get((w, s))
        L.append("| %s | %s | %s | %.4f | %s | %.0f s | %.0f s | %s | %s | %s |" % (
            names.get(w, w), s, h, j["best_speedup"], " | ".join("%.4f" % best_at(pts, x) for x in CHK), j["cpu_s"], j["time_wall_s"],
            "%.4f" % c["best_speedup"] if c else "–", " | ".join("%.4f" % best_at(c32, x) if c32 else "–" for x in CHK),
            "%.0f s" % c["wall_s"] if c else "–"))
    L.append("")
notes = os.path.join(OUT, "egrl-critic-width-notes.md")
if os.path.exists(notes):
    L.append(open(notes).read())
open(os.path.join(OUT, "egrl-critic-width.md"), "w").write("\n".join(L) + "\n")
PYEOF
fail=0
for f in "$WORK"/*.json; do
    [ -s "$f" ] || { echo "paper-egrl-width: $(basename "$f" .json) failed: $(cat "${f%.json}.err")" >&2; fail=1; }
done
[ "$fail" = 0 ] || exit 1
echo "paper-egrl-width: wrote $OUT/egrl-critic-width.md in $(($(date +%s) - T0)) s" >&2
