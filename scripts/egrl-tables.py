#!/usr/bin/env python3
"""Regenerates the EGRL result pages from the committed data alone (standard library, plus
`hwgym render` for the Figure 7 pictures):

    python3 scripts/egrl-tables.py                 # every page below, in place
    python3 scripts/egrl-tables.py --out DIR       # the same files under DIR (the test compares them)
    python3 scripts/egrl-tables.py --page egrl-nnpi.md

A page's data directory (docs/results/<dir>/) holds:
    meta.json            how the runs were made: budget, seeds, workloads, modes, controls,
                         timing, the chip, the notes file, the interval (std or ci95)
    runs.csv.gz          every evaluation: workload,mode,seed,sample,worker,reward,speedup
    summaries.jsonl.gz   every run's JSON summary
    maps.json            the best EGRL map per workload (Figure 7)
    transfer.tsv.gz      (optional) Figure 5: src (a workload, or "untrained" for the control),
                         dst, seed, decode (capacity or argmax), speedup (raw), rectified_speedup,
                         eps, reassigned_tensors
    bounds.json          (optional) `hwgym placement-bound` per workload
The page's Figure 4 curves (fig4_<workload>.svg) are written beside the data; Figure 7's
(fig7_<workload>.svg) come from `hwgym render` ($HWGYM_BIN, else build/bin).
"""
import argparse
import csv
import gzip
import io
import json
import math
import os
import statistics as st
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RESULTS = os.path.join(ROOT, "docs", "results")
# page -> data directory (both under docs/results)
PAGES = {"egrl.md": "egrl", "egrl-nnpi.md": "egrl-nnpi"}

NAMES = {"resnet50": "ResNet-50", "resnet101": "ResNet-101", "bert_base": "BERT"}
PAPER = {"egrl": (1.28, 1.78, 1.66), "ea": (1.06, 1.47, 1.64), "greedy-dp": (0.72, 1.27, 0.67), "pg": (0.29, 0.23, 0.21)}
PIDX = {"resnet50": 0, "resnet101": 1, "bert_base": 2}
LABEL = {"egrl": "EGRL", "ea": "EA", "pg": "PG", "greedy-dp": "Greedy-DP", "sa": "SA", "random": "random"}
COLOUR = {"egrl": "#d62728", "ea": "#1f77b4", "pg": "#2ca02c", "greedy-dp": "#ff7f0e", "sa": "#9467bd", "random": "#7f7f7f"}
# two-sided 95 % Student t quantiles by degrees of freedom
T95 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306, 9: 2.262}


def load(ddir):
    meta = json.load(open(os.path.join(ddir, "meta.json")))
    summ = []
    with gzip.open(os.path.join(ddir, "summaries.jsonl.gz"), "rt") as f:
        for line in f:
            summ.append(json.loads(line))
    meta["_summaries"] = summ
    runs = {}
    with gzip.open(os.path.join(ddir, "runs.csv.gz"), "rt") as f:
        for r in csv.DictReader(f):
            runs.setdefault((r["workload"], r["mode"], r["seed"]), []).append((int(r["sample"]), float(r["speedup"])))
    tr = []
    tp = os.path.join(ddir, "transfer.tsv.gz")
    if os.path.exists(tp):
        with gzip.open(tp, "rt") as f:
            for line in f:
                src, dst, s, dec, sp, rs, eps, nt = line.rstrip("\n").split("\t")
                tr.append((src, dst, s, dec, float(sp), float(rs), float(eps), float(nt)))
    bp = os.path.join(ddir, "bounds.json")
    bounds = json.load(open(bp)) if os.path.exists(bp) else {}
    mp = os.path.join(ddir, "maps.json")
    maps = json.load(open(mp)) if os.path.exists(mp) else {}
    ep = os.path.join(ddir, "equal_cpu.json")
    meta["_equal_cpu"] = json.load(open(ep)) if os.path.exists(ep) else {}
    return meta, runs, tr, bounds, maps


def equal_cpu_table(meta, bounds, finals, interval):
    """The page's equal-CPU lines (paper-egrl.sh's EGRL_EQUAL_CPU): SA and EA given EGRL's CPU time."""
    eqs = sorted(meta["_equal_cpu"].items(), key=lambda kv: meta["workloads"].index(kv[0]))
    L = ["Equal CPU: each agent's CPU seconds (user + sys) measured in-process with seed 1 (EGRL and EA over 500 "
         "iterations, scaled to 4,000; SA over 4,000 evaluations); SA and EA then ran, every seed, with as many "
         "evaluations as EGRL's 4,000 iterations cost (rounded to thousands), against the 4,000-iteration runs above "
         "(mean ± %s over seeds; seeds in brackets):\n" % ("95 % CI" if interval == "ci95" else "std")]
    counts = lambda rs: " / ".join("{:,}".format(x) for x in sorted({r["samples"] for r in rs}))
    mean_cpu = lambda rs: st.mean(r["cpu_s"] for r in rs) if rs else 0
    for w, e in eqs:
        egrl_cpu = e["egrl_cpu_s"] * 4000 / e["egrl_iterations"]
        line = "- %s: EGRL %.1f s for %d iterations (so ≈ %.0f s for 4,000)" % (NAMES.get(w, w), e["egrl_cpu_s"],
                                                                            e["egrl_iterations"], egrl_cpu)
        if "runs" in e:
            line += ("; SA %.2f s for 4,000 evaluations, so %s evaluations per seed (mean %.0f CPU s per run)"
                     % (e["sa_cpu_s"], counts(e["runs"]), mean_cpu(e["runs"])))
        if "ea_runs" in e:
            line += ("; EA %.1f s for %d iterations, so %s iterations per seed (mean %.0f CPU s per run)"
                     % (e["ea_cpu_s"], e["ea_iterations"], counts(e["ea_runs"]), mean_cpu(e["ea_runs"])))
        L.append(line + ".")
    L.append("")
    L.append("| workload | EGRL, 4,000 iterations | SA, 4,000 evaluations | SA at EGRL's CPU | EA, 4,000 iterations | "
             "EA at EGRL's CPU | capacity_aware bound |")
    L.append("|---|---|---|---|---|---|---|")
    cell = lambda v: fmt(v, interval) + (" (%d)" % len(v) if v else "")
    for w, e in eqs:
        b = bounds.get(w, {}).get("capacity_aware")
        sa = cell([r["best_speedup"] for r in e["runs"]]) if "runs" in e else "not run"
        ea = cell([r["best_speedup"] for r in e["ea_runs"]]) if "ea_runs" in e else "not run"
        L.append("| %s | %s | %s | %s | %s | %s | %s |" % (NAMES.get(w, w), cell(finals(w, "egrl")), cell(finals(w, "sa")), sa,
                                                          cell(finals(w, "ea")), ea, "%.3f" % b if b else "–"))
    L.append("")
    return L


DECODE_HEAD = {"capacity": "Capacity-aware decoding (`--decode capacity`, the default)",
               "argmax": "Argmax decoding (`--decode argmax`, the paper's)"}


def transfer_tables(meta, tr, wls, interval, iv):
    """Figure 5: per decoding, the raw speedup of the emitted maps (with how many were valid as
    emitted) and their rectified speedup (with how much the rectification moved)."""
    L = ["## Figure 5: zero-shot transfer of the best EGRL GNN policy\n", meta["transfer_sentence"] + "\n"]
    decs = sorted({t[3] for t in tr}, key=lambda d: (list(DECODE_HEAD).index(d) if d in DECODE_HEAD else len(DECODE_HEAD), d))
    srcs = wls + sorted({t[0] for t in tr} - set(wls))
    name = lambda w: "untrained GNN (control)" if w == "untrained" else NAMES.get(w, w)
    for dec in decs:
        cell = {}
        for t in tr:
            if t[3] == dec:
                cell.setdefault((t[0], t[1]), []).append(t)
        head = DECODE_HEAD.get(dec, "Decoding `%s`" % dec)
        for what in ("raw", "rectified"):
            if what == "raw":
                L.append("%s, **raw** speedup (mean ± %s over seeds; in brackets the maps that were valid as emitted):\n" % (head, iv))
            else:
                L.append("%s, **rectified** speedup (mean ± %s over seeds), with the mean fraction of bytes moved (eps) and of "
                         "tensors moved per map:\n" % (head, iv))
            L.append("| trained on \\ tested on | " + " | ".join(NAMES.get(d, d) for d in wls) + " |")
            L.append("|---|" + "---|" * len(wls))
            for src in srcs:
                cs = []
                for d in wls:
                    v = cell.get((src, d), [])
                    if not v:
                        cs.append("–")
                    elif what == "raw":
                        cs.append("%s (%d/%d)" % (fmt([t[4] for t in v], interval), sum(t[6] == 0 for t in v), len(v)))
                    else:
                        cs.append("%s (eps %.2f, %.1f moved)" % (fmt([t[5] for t in v], interval), st.mean([t[6] for t in v]),
                                                                  st.mean([t[7] for t in v])))
                if any(c != "–" for c in cs):
                    L.append("| %s | %s |" % (name(src), " | ".join(cs)))
            L.append("")
    return L


def best_curve(pts, budget, step):
    out, b, k = [], 0.0, 0
    for x in range(step, budget + 1, step):
        while k < len(pts) and pts[k][0] <= x:
            b = max(b, pts[k][1])
            k += 1
        out.append(b)
    return out


def fmt(v, interval):
    if not v:
        return "–"
    if len(v) == 1:
        return "%.3f" % v[0]
    if interval == "ci95":
        return "%.3f ± %.3f" % (st.mean(v), T95.get(len(v) - 1, 1.96) * st.stdev(v) / math.sqrt(len(v)))
    return "%.3f ± %.3f" % (st.mean(v), st.stdev(v))


def fig4_svg(w, B, curves, nseeds):
    step = max(1, B // 100)
    xs = list(range(step, B + 1, step))
    ymax = max([max(mu[i] + sd[i] for i in range(len(mu))) for mu, sd in curves.values()] + [1.05]) * 1.05
    Wd, Ht, L, T, Rr, Bt = 560, 320, 50, 30, 120, 40

    def X(x):
        return L + (Wd - L - Rr) * x / B

    def Y(y):
        return T + (Ht - T - Bt) * (1 - y / ymax)

    svg = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="11">' % (Wd, Ht),
           '<rect width="100%" height="100%" fill="white"/>',
           '<text x="%d" y="18" font-size="13">%s: best speedup vs iterations (mean ± std, %d seeds)</text>' % (L, NAMES.get(w, w), nseeds)]
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
        svg.append('<polygon points="%s %s" fill="%s" opacity="0.15"/>' % (up, dn, COLOUR[m]))
        svg.append('<polyline points="%s" fill="none" stroke="%s" stroke-width="2"/>' % (" ".join("%.1f,%.1f" % (X(x), Y(mu[k])) for k, x in enumerate(xs)), COLOUR[m]))
        svg.append('<text x="%d" y="%d" fill="%s">%s %.3f</text>' % (Wd - Rr + 4, T + 16 * i + 10, COLOUR[m], LABEL[m], mu[-1]))
    svg.append("</svg>")
    return "\n".join(svg)


def render_fig7(w, amap, hw, path):
    bindir = os.environ.get("HWGYM_BIN") or os.path.join(ROOT, "build", "bin")
    exe = os.path.join(bindir, "hwgym")
    if not os.access(exe, os.X_OK):
        sys.exit("egrl-tables: %s is not built (make), needed for the Figure 7 pictures" % exe)
    cfg = {"workload": w}
    if hw:
        cfg["hw"] = hw
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(amap, f)
        act = f.name
    try:
        subprocess.run([exe, "render", "--env", "placement-v0", "--config", json.dumps(cfg, separators=(",", ":")),
                        "--action", "@" + act, "--title", "EGRL best map, %s" % w, "--out", path],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=ROOT)
    finally:
        os.unlink(act)


def page(name, ddir, outdir):
    meta, runs, tr, bounds, maps = load(ddir)
    dname = os.path.basename(ddir)
    svgdir = os.path.join(outdir, dname)
    os.makedirs(svgdir, exist_ok=True)
    wls, modes, seeds = meta["workloads"], meta["modes"], meta["seeds"]
    ctrl = meta.get("search", [])
    allm = modes + ctrl
    interval = meta.get("interval", "std")
    iv = "95 % CI" if interval == "ci95" else "std"

    def seeds_of(w):
        return meta.get("seeds_by_workload", {}).get(w, seeds)

    def budget_of(w):
        return int(meta.get("budgets", {}).get(w, meta["budget"]))

    def finals(w, m):
        return [max([p[1] for p in runs[(w, m, s)]] or [0]) for s in seeds_of(w) if (w, m, s) in runs]

    L = []
    L.append(meta.get("title", "# EGRL on placement-v0: Figures 4, 5 and 7 of the EGRL paper, rerun") + "\n")
    L.append(meta["header"] % {"train_s": meta["train_s"], "total_s": meta["total_s"]} + "\n")
    if meta.get("args"):
        L.append("Extra arguments of every learning run: `%s`.\n" % meta["args"])
    L.append(meta["data_sentence"] + "\n")
    L.append("## Figure 4: final speedup (mean ± %s over seeds%s) vs the paper\n"
             % (iv, "; seeds in brackets" if interval == "ci95" else ""))
    L.append("| workload | " + " | ".join("%s (ours)" % LABEL[m] for m in allm) + " | " + " | ".join("%s (paper)" % LABEL[m] for m in modes if m in PAPER) + " |")
    L.append("|---|" + "---|" * (len(allm) + sum(m in PAPER for m in modes)))
    for w in wls:
        cells = [fmt(finals(w, m), interval) + (" (%d)" % len(finals(w, m)) if interval == "ci95" and finals(w, m) else "")
                 for m in allm]
        pc = ["%.2f" % PAPER[m][PIDX[w]] if w in PIDX else "–" for m in modes if m in PAPER]
        L.append("| %s | %s | %s |" % (NAMES.get(w, w), " | ".join(cells), " | ".join(pc)))
    L.append("")
    if bounds:
        L.append("Headroom (`hwgym placement-bound`, docs/placement.md): upper bounds of any map's speedup, and each "
                 "agent's mean final speedup as a fraction of the capacity-aware bound (1.000 = at the bound):\n")
        L.append("| workload | capacity_free | capacity_aware | " + " | ".join("%s / aware" % LABEL[m] for m in allm) + " |")
        L.append("|---|---|---|" + "---|" * len(allm))
        for w in wls:
            b = bounds.get(w)
            if not b:
                continue
            cells = ["%.3f" % (st.mean(finals(w, m)) / b["capacity_aware"]) if finals(w, m) else "–" for m in allm]
            L.append("| %s | %.3f | %.3f | %s |" % (NAMES.get(w, w), b["capacity_free"], b["capacity_aware"], " | ".join(cells)))
        L.append("")
    if ctrl:
        L.append("Cost: mean wall time of one run in seconds (every run of this page went one at a time under "
                 "`nice` on a shared machine, so these are wall seconds under load, for comparison only):\n")
        L.append("| workload | " + " | ".join(LABEL[m] for m in allm) + " |")
        L.append("|---|" + "---|" * len(allm))
        for w in wls:
            cells = []
            for m in allm:
                ws = [j["wall_s"] for j in meta["_summaries"] if j.get("workload") == w and j.get("mode") == m and "wall_s" in j]
                cells.append("%.1f" % st.mean(ws) if ws else "–")
            L.append("| %s | %s |" % (NAMES.get(w, w), " | ".join(cells)))
        L.append("")
    if meta["_equal_cpu"]:
        L += equal_cpu_table(meta, bounds, finals, interval)
    L.append("Iterations until a mapping at least as fast as the heuristic (speedup ≥ 1), mean over the seeds that got there:\n")
    L.append("| workload | " + " | ".join(LABEL[m] for m in allm) + " |")
    L.append("|---|" + "---|" * len(allm))
    for w in wls:
        cells = []
        for m in allm:
            its, n = [], 0
            for s in seeds_of(w):
                if (w, m, s) not in runs:
                    continue
                n += 1
                hit = [x for x, sp in runs[(w, m, s)] if sp >= 1.0]
                if hit:
                    its.append(hit[0])
            cells.append("%d (%d/%d)" % (st.mean(its), len(its), n) if its else "never (0/%d)" % n)
        L.append("| %s | %s |" % (NAMES.get(w, w), " | ".join(cells)))
    L.append("")
    for w in wls:
        B = budget_of(w)
        step = max(1, B // 100)
        curves = {}
        for m in allm:
            cs = [best_curve(runs[(w, m, s)], B, step) for s in seeds_of(w) if (w, m, s) in runs]
            if cs:
                curves[m] = ([st.mean(c) for c in zip(*cs)], [st.stdev(c) if len(c) > 1 else 0 for c in zip(*cs)])
        with open(os.path.join(svgdir, "fig4_%s.svg" % w), "w") as f:
            f.write(fig4_svg(w, B, curves, len(seeds_of(w))))
        L.append("![%s](%s/fig4_%s.svg)\n" % (NAMES.get(w, w), dname, w))
    if tr:
        L += transfer_tables(meta, tr, wls, interval, iv)
    L.append("## Figure 7: placements of the best EGRL maps\n")
    L.append("Top band of each picture: the compiler heuristic's map; below it EGRL's best map (W row: weights, "
             "A row: activations, x = node in execution order); then the transition matrix (fraction of the "
             "heuristic's tensors in memory r that EGRL puts in memory c) and the occupancy of each memory.\n")
    for w in wls:
        if w in maps:
            render_fig7(w, maps[w], meta.get("hw"), os.path.join(svgdir, "fig7_%s.svg" % w))
        L.append("![%s](%s/fig7_%s.svg)\n" % (NAMES.get(w, w), dname, w))
    notes = os.path.join(RESULTS, meta["notes"]) if meta.get("notes") else None
    if notes and os.path.exists(notes):
        L.append(open(notes).read())
    with open(os.path.join(outdir, name), "w") as f:
        f.write("\n".join(L) + "\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=RESULTS, help="output directory (default docs/results, in place)")
    ap.add_argument("--page", action="append", help="only this page (default: all of %s)" % ", ".join(PAGES))
    ap.add_argument("--data", help="with one --page: read its data from DIR instead (make paper-egrl's EGRL_DATA)")
    a = ap.parse_args()
    if a.data and (not a.page or len(a.page) != 1):
        sys.exit("egrl-tables: --data needs exactly one --page")
    for name in a.page or list(PAGES):
        if name not in PAGES and not a.data:
            sys.exit("egrl-tables: --page %s: unknown (known: %s)" % (name, ", ".join(PAGES)))
        ddir = os.path.abspath(a.data) if a.data else os.path.join(RESULTS, PAGES[name])
        if not os.path.exists(os.path.join(ddir, "meta.json")):
            print("egrl-tables: %s: no data (%s/meta.json), skipped" % (name, ddir), file=sys.stderr)
            continue
        page(name, ddir, a.out)


if __name__ == "__main__":
    main()
