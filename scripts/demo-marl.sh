#!/usr/bin/env bash
# Second part of `make demo` (called by scripts/demo.sh with EP, BIN, OUT, PYTHON set):
# MARL with clustered agents against the random walker on MobileNet-v2 layer 3 (the MARL paper's "layer 2", docs/zoo.md) (maestro-v0,
# latency), at a budget that finishes in about a minute. The agents come from `hwgym cluster`
# over the random walker's run (the MARL paper's Algorithm 1). Prints a small table and writes
# an SVG convergence plot (best latency so far against samples).
set -euo pipefail
BUDGET=${DEMO_MARL_BUDGET:-20000}
CONFIG='{"model":"mobilenet_v2","layer":3,"objective":"latency"}'
DB="$OUT/marl-demo.db"
rm -f "$DB" "$DB-wal" "$DB-shm"
echo "== MARL (clustered agents) vs random walker, $BUDGET samples each, maestro-v0 MobileNet-v2 layer 3 = the MARL paper's layer 2" >&2
"$BIN/hwgym-search" --endpoint "$EP" --env maestro-v0 --config "$CONFIG" --algo random --seed 2 \
    --budget "$BUDGET" --db "$DB" --run-name demo-random --quiet > "$OUT/marl-random.json"
"$BIN/hwgym" cluster "$DB" --run 1 --budget 3 --out "$OUT/agents.json" --svg "$OUT/clusters.svg" > /dev/null 2> "$OUT/dendrogram.txt"
"$BIN/hwgym-marl" --endpoint "$EP" --env maestro-v0 --config "$CONFIG" --agents "$OUT/agents.json" --seed 2 \
    --budget "$BUDGET" --db "$DB" --quiet > "$OUT/marl.json" 2> "$OUT/marl.log" || {
    echo "hwgym-marl failed:" >&2; tail -5 "$OUT/marl.log" >&2; exit 1; }
"$PYTHON" - "$DB" "$OUT" <<'PYEOF'
import json, sqlite3, sys
db, out = sys.argv[1], sys.argv[2]
con = sqlite3.connect(db)
runs = con.execute("select id, agent from runs order by id").fetchall()
curves = {}
for rid, agent in runs:
    name = "MARL (%s)" % ("clustered agents") if "marl" in agent else "random walker"
    best, pts, n = None, [], 0
    for (metrics,) in con.execute("select metrics from trials where run_id=? order by id", (rid,)):
        n += 1
        m = json.loads(metrics) if metrics else {}
        rt = m.get("runtime") if m.get("feasible", True) else None
        if rt and (best is None or rt < best):
            best = rt
        if best is not None:
            pts.append((n, best))
    curves[name] = (pts, n)
agents = json.load(open(out + "/agents.json"))["agents"]
print("agents from hwgym cluster: " + "; ".join("%s=%s" % (a["name"], ",".join(a.get("params", []))) for a in agents))
print("%-24s %8s %14s %22s" % ("method", "samples", "best latency", "samples to within 5%"))
for name, (pts, n) in curves.items():
    if not pts:
        print("%-24s %8d %14s" % (name, n, "none feasible")); continue
    best = pts[-1][1]
    first = next(s for s, b in pts if b <= best * 1.05)
    print("%-24s %8d %14d %22d" % (name, n, best, first))
# SVG convergence plot
W, H, L, B = 640, 360, 70, 40
allp = [p for pts, _ in curves.values() for p in pts]
if allp:
    import math
    xmax = max(p[0] for p in allp); ylo = min(p[1] for p in allp); yhi = max(p[1] for p in allp)
    if yhi == ylo: yhi = ylo + 1
    # log axes: the first feasible designs are orders of magnitude slower than the best
    X = lambda x: L + (W - L - 20) * math.log10(x) / math.log10(xmax)
    Y = lambda y: H - B - (H - B - 20) * (math.log10(y) - math.log10(ylo)) / (math.log10(yhi) - math.log10(ylo))
    col = ["#d62728", "#1f77b4"]
    s = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="12">' % (W, H),
         '<rect width="100%" height="100%" fill="white"/>',
         '<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="black"/>' % (L, H - B, W - 20, H - B),
         '<line x1="%d" y1="20" x2="%d" y2="%d" stroke="black"/>' % (L, L, H - B),
         '<text x="%d" y="%d" text-anchor="middle">samples (log scale)</text>' % ((W + L) // 2, H - 8),
         '<text x="14" y="%d" transform="rotate(-90 14 %d)" text-anchor="middle">best latency, cycles (log scale)</text>' % (H // 2, H // 2),
         '<text x="%d" y="%d" text-anchor="end">%d</text>' % (L - 4, Y(ylo) + 4, ylo),
         '<text x="%d" y="%d" text-anchor="end">%d</text>' % (L - 4, Y(yhi) + 4, yhi),
         '<text x="%d" y="%d" text-anchor="end">%d</text>' % (W - 20, H - B + 16, xmax),
         '<text x="%d" y="%d" text-anchor="start">1</text>' % (L, H - B + 16)]
    for k, (name, (pts, _)) in enumerate(curves.items()):
        path = " ".join("%.1f,%.1f" % (X(x), Y(y)) for x, y in pts)
        s.append('<polyline fill="none" stroke="%s" stroke-width="2" points="%s"/>' % (col[k % 2], path))
        s.append('<text x="%d" y="%d" fill="%s">%s</text>' % (W - 220, 40 + 16 * k, col[k % 2], name))
    s.append("</svg>")
    open(out + "/marl-vs-random.svg", "w").write("\n".join(s))
    print("convergence plot: %s/marl-vs-random.svg (clusters and dendrogram: %s/clusters.svg)" % (out, out))
PYEOF
