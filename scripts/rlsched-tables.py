#!/usr/bin/env python3
"""Recomputes docs/results/rlsched.md from the committed data in docs/results/rlsched/ (standard library).

    python3 scripts/rlsched-tables.py docs/results/rlsched [--episodes N] [--eval-every N] [--samples N]
        > docs/results/rlsched.md

Reads runs.csv (every baseline and RL row), curves.jsonl (learning curves) and transfer.csv. The 95%
intervals are percentile bootstraps of the mean over seeds (10,000 resamples, fixed generator seed),
so the page is the same byte for byte on every run.
"""
import argparse
import csv
import json
import os
import random
import sys

# The paper's Tables 5 and 6 (NeuroSpector N, RL-Scheduling RL); None where the paper has no entry.
PAPER_E = {
    ("yolov3", "eyeriss_v1"): (1.39e11, 1.29e11), ("yolov3", "simba"): (8.99e10, 9.65e10),
    ("yolov3", "tpu_v3"): (3.64e11, 3.57e11),
    ("inception_v4", "eyeriss_v1"): (3.21e10, 3.19e10), ("inception_v4", "simba"): (2.26e10, 2.66e10),
    ("inception_v4", "tpu_v3"): (1.05e11, 1.05e11),
    ("mobilenet_v3", "eyeriss_v1"): (8.54e9, 8.14e9), ("mobilenet_v3", "simba"): (8.77e9, 8.32e9),
    ("mobilenet_v3", "tpu_v3"): (6.34e10, 6.30e10),
    ("resnet50", "eyeriss_v1"): (1.25e10, 1.09e10), ("resnet50", "simba"): (8.33e9, 9.14e9),
    ("resnet50", "tpu_v3"): (5.44e10, 5.41e10),
}
PAPER_C = {
    ("yolov3", "eyeriss_v1"): (1.56e9, 1.14e9), ("yolov3", "simba"): (1.99e8, 2.19e8),
    ("yolov3", "tpu_v3"): (6.23e7, 6.15e7),
    ("inception_v4", "eyeriss_v1"): (3.04e8, 2.92e8), ("inception_v4", "simba"): (5.53e7, 6.40e7),
    ("inception_v4", "tpu_v3"): (1.91e7, 1.91e7),
    ("mobilenet_v3", "eyeriss_v1"): (9.74e7, 8.76e7), ("mobilenet_v3", "simba"): (2.85e7, 2.88e7),
    ("mobilenet_v3", "tpu_v3"): (1.30e7, 1.29e7),
    ("resnet50", "eyeriss_v1"): (1.62e8, 1.11e8), ("resnet50", "simba"): (2.45e7, 2.72e7),
    ("resnet50", "tpu_v3"): (1.07e7, 1.07e7),
}
MODELS = ["yolov3", "inception_v4", "mobilenet_v3", "resnet50"]
ACCELS = ["eyeriss_v1", "simba", "tpu_v3", "tpu_v3_vmem"]
NAMES = {"yolov3": "YOLOv3", "inception_v4": "Inception-v4", "mobilenet_v3": "MobileNet-v3", "resnet50": "ResNet-50",
         "eyeriss_v1": "Eyeriss v1", "simba": "Simba", "tpu_v3": "TPU v3", "tpu_v3_vmem": "TPU v3 (VMEM preset)"}
BASELINES = ["bottom-up", "top-down", "cosa", "random-pruned"]
BLABEL = {"bottom-up": "bottom-up (N)", "top-down": "top-down (Z)", "cosa": "CoSA-like (C)",
          "random-pruned": "random-pruned (T)"}
# MACs of each model at batch 1 (the product of every layer's table, layers.jsonl.gz) and MAC units
# of each preset: the MAC-bound ("ideal") cycles are MACs / units.
MACS = {"yolov3": 3.29e10, "inception_v4": 1.23e10, "mobilenet_v3": 2.17e8, "resnet50": 4.09e9}
UNITS = {"eyeriss_v1": 14 * 12, "simba": 64 * 16 * 36, "tpu_v3": 256 * 128 * 8, "tpu_v3_vmem": 256 * 128 * 16}


def load(d):
    runs = {}
    with open(os.path.join(d, "runs.csv")) as f:
        for r in csv.DictReader(f):
            runs.setdefault((r["method"], r["model"], r["accelerator"], r["objective"]), {})[int(r["seed"])] = r
    curves = []
    p = os.path.join(d, "curves.jsonl")
    if os.path.exists(p):
        with open(p) as f:
            curves = [json.loads(x) for x in f if x.strip()]
    transfer = []
    p = os.path.join(d, "transfer.csv")
    if os.path.exists(p):
        with open(p) as f:
            transfer = list(csv.DictReader(f))
    return runs, curves, transfer


def mean(v):
    return sum(v) / len(v)


def boot(v, n=10000):
    """Mean and 95% percentile bootstrap interval of the mean."""
    if len(v) < 2:
        return mean(v), None, None
    rng = random.Random(20261127)
    ms = sorted(mean([v[rng.randrange(len(v))] for _ in v]) for _ in range(n))
    return mean(v), ms[int(0.025 * n)], ms[int(0.975 * n) - 1]


def vals(runs, method, m, a, obj, col="objective_total"):
    rows = runs.get((method, m, a, obj), {})
    return [float(rows[s][col]) for s in sorted(rows) if rows[s][col]]


def ci_txt(v):
    mu, lo, hi = boot(v)
    return "%.4g [%.4g, %.4g]" % (mu, lo, hi) if lo is not None else "%.4g" % mu


def episodes_of(runs, method, m, a, obj):
    """The training episodes of a method's runs on a pair ("10", or "10-50" when they differ)."""
    e = sorted({int(r["episodes"]) for r in runs.get((method, m, a, obj), {}).values()})
    return "–" if not e else str(e[0]) if len(e) == 1 else "%d-%d" % (e[0], e[-1])


def pct(a, b):
    return "%+.1f%%" % (100.0 * (b - a) / a) if a and b else ""


def pairs_with(runs, method, obj):
    return [(m, a) for a in ACCELS for m in MODELS if (method, m, a, obj) in runs]


def best_baseline(runs, m, a, obj):
    best = None
    for b in BASELINES:
        v = vals(runs, b, m, a, obj)
        if v and (best is None or v[0] < best[1]):
            best = (b, v[0])
    return best


def policy_table(runs, obj):
    out = ["| model | accelerator | seeds | episodes: trained / control | trained greedy | untrained greedy | "
           "untrained sampled pass | "
           "greedy: trained vs untrained | trained greedy vs untrained sampled pass | trained best-seen (search) | "
           "untrained best-seen (search) | "
           "strongest baseline | trained greedy vs it | trained best-seen vs it |",
           "|---" * 14 + "|"]
    wins = sep = wins_s = sep_s = n = 0
    for m, a in pairs_with(runs, "rl-greedy", obj):
        tg, ug = vals(runs, "rl-greedy", m, a, obj), vals(runs, "untrained-greedy", m, a, obj)
        us = vals(runs, "untrained-sampled", m, a, obj)
        tb, ub = vals(runs, "rl-best-seen", m, a, obj), vals(runs, "untrained-best-seen", m, a, obj)
        if not tg or not ug:
            continue
        n += 1
        t_mu, t_lo, t_hi = boot(tg)
        u_mu, u_lo, u_hi = boot(ug)
        s_mu, s_lo, s_hi = boot(us) if us else (None, None, None)
        win = t_mu < u_mu
        apart = t_hi is not None and u_lo is not None and (t_hi < u_lo)
        wins += win
        sep += apart
        if s_mu is not None:
            wins_s += t_mu < s_mu
            sep_s += t_hi is not None and s_lo is not None and t_hi < s_lo
        bb = best_baseline(runs, m, a, obj)
        verdict = "%s%s" % (pct(u_mu, t_mu), " (intervals apart)" if apart else
                            (" (intervals overlap)" if t_lo is not None else ""))
        apart_s = s_mu is not None and t_hi is not None and s_lo is not None and (t_hi < s_lo or s_hi < t_lo)
        verdict_s = "%s%s" % (pct(s_mu, t_mu), " (intervals apart)" if apart_s else
                              (" (intervals overlap)" if t_lo is not None and s_lo is not None else "")) if s_mu else "–"
        out.append("| %s | %s | %d | %s / %s | %s | %s | %s | %s | %s | %s | %s | %s %.4g | %s | %s |" % (
            NAMES[m], NAMES[a], len(tg), episodes_of(runs, "rl-greedy", m, a, obj),
            episodes_of(runs, "untrained-greedy", m, a, obj), ci_txt(tg), ci_txt(ug), ci_txt(us) if us else "–", verdict, verdict_s,
            ci_txt(tb),
            ci_txt(ub) if ub else "–", BLABEL[bb[0]] if bb else "–", bb[1] if bb else float("nan"),
            pct(bb[1], t_mu) if bb else "", pct(bb[1], mean(tb)) if bb and tb else ""))
    return "\n".join(out), (wins, sep, wins_s, sep_s, n)


def curve_table(curves, obj):
    groups = {}
    for c in curves:
        if c["objective"] == obj:
            groups.setdefault((c["model"], c["accelerator"]), []).append(c)
    if not groups:
        return "(no curves)"
    eps = sorted({p["episode"] for cs in groups.values() for c in cs if c["learning"] for p in c["curve"]})
    out = ["| model | accelerator | " + " | ".join("greedy @ ep %d" % e for e in eps) +
           " | untrained greedy | sampled episodes, first half: trained / untrained | second half: trained / untrained |",
           "|---" * (len(eps) + 5) + "|"]
    for a in ACCELS:
        for m in MODELS:
            cs = groups.get((m, a))
            if not cs:
                continue
            tr = [c for c in cs if c["learning"]]
            un = [c for c in cs if not c["learning"]]
            cells = []
            for e in eps:
                v = [p["greedy_total"] for c in tr for p in c["curve"] if p["episode"] == e and p["greedy_total"]]
                cells.append("%.4g" % mean(v) if v else "–")
            ug = [c["greedy_total"] for c in un if c["greedy_total"]]

            def half(cs2, second):
                v = []
                for c in cs2:
                    t = [x for x in c["episode_totals"] if x is not None]
                    h = len(t) // 2
                    v += t[h:] if second else t[:h]
                return "%.4g" % mean(v) if v else "–"
            out.append("| %s | %s | %s | %s | %s / %s | %s / %s |" % (
                NAMES[m], NAMES[a], " | ".join(cells), "%.4g" % mean(ug) if ug else "–", half(tr, False),
                half(un, False), half(tr, True), half(un, True)))
    return "\n".join(out)


DEV_EPS = [0, 10, 20, 50, 100, 150, 200, 300, 500, 1000, 2000, 3000]


def load_dev(d):
    p = os.path.join(d, "dev-curves.jsonl")
    if not os.path.exists(p):
        return []
    with open(p) as f:
        return [json.loads(x) for x in f if x.strip()]


def dev_groups(dev):
    """{(variant, args, model, accelerator): [runs in seed order]}, variants in the order first met."""
    groups = {}
    for r in dev:
        groups.setdefault((r["variant"], r["args"], r["model"], r["accelerator"]), []).append(r)
    for v in groups.values():
        v.sort(key=lambda r: r["seed"])
    return groups


def at(r, e):
    """The greedy total of run r after e training episodes (None when its curve has no such point)."""
    for p in r["curve"]:
        if p["episode"] == e:
            return p["greedy_total"]
    return None


def dev_table(runs, dev):
    """The dev-set learning curves: greedy objective against training episodes, per hyperparameter
    variant and pair, beside the untrained controls of the same seeds (runs.csv)."""
    groups = dev_groups(dev)
    eps = [e for e in DEV_EPS if any(at(r, e) is not None for rs in groups.values() for r in rs)]
    out = ["| variant | options | model | accelerator | seeds | " +
           " | ".join("greedy @ %d" % e for e in eps) +
           " | untrained sampled pass (same seeds) | untrained greedy (same seeds) | "
           "trained greedy below the sampled pass (seeds), at " + " / ".join(str(e) for e in eps[1:]) +
           " | sampled training episodes: first 10 / last 10 | CPU s per run |",
           "|---" * (len(eps) + 10) + "|"]
    for (var, args, m, a), rs in groups.items():
        seeds = [r["seed"] for r in rs]
        us = runs.get(("untrained-sampled", m, a, "energy"), {})
        ug = runs.get(("untrained-greedy", m, a, "energy"), {})
        us_v = [float(us[s]["objective_total"]) for s in seeds if s in us]
        ug_v = [float(ug[s]["objective_total"]) for s in seeds if s in ug]
        cells, below = [], []
        for e in eps:
            v = [at(r, e) for r in rs if at(r, e) is not None]
            cells.append(("%.4g%s" % (mean(v), " (%s)" % pct(mean(us_v), mean(v)) if us_v else "")) if v else "–")
            if e and len(us_v) == len(rs):
                below.append("%d/%d" % (sum(1 for r in rs if at(r, e) is not None and
                                            at(r, e) < float(us[r["seed"]]["objective_total"])),
                                        sum(1 for r in rs if at(r, e) is not None)) if v else "–")
            elif e:
                below.append("–")
        first = [x for r in rs for x in r["episode_totals"][:10] if x is not None]
        last = [x for r in rs for x in r["episode_totals"][-10:] if x is not None]
        out.append("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s / %s | %.0f |" % (
            var, "`%s`" % args if args else "(paper defaults)", NAMES[m], NAMES[a], ", ".join(map(str, seeds)),
            " | ".join(cells), "%.4g" % mean(us_v) if us_v else "–", "%.4g" % mean(ug_v) if ug_v else "–",
            " / ".join(below), "%.4g" % mean(first) if first else "–", "%.4g" % mean(last) if last else "–",
            mean([r["cpu_s"] for r in rs])))
    return "\n".join(out)


def dev_svg(runs, dev):
    """The dev-set learning curves as an SVG (stdlib only): one panel per pair, x = training episodes,
    y = trained greedy energy relative to the untrained sampled pass of the same seeds (mean over the
    seeds, %), one line per variant; the control is the 0% line, below it is better."""
    groups = dev_groups(dev)
    pairs = []
    for (_, _, m, a) in groups:
        if (m, a) not in pairs:
            pairs.append((m, a))
    variants = []
    for (v, args, _, _) in groups:
        if (v, args) not in variants:
            variants.append((v, args))
    colours = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b"]
    pw, ph, ml, mt, mb = 300, 220, 48, 28, 36
    width, height = ml + len(pairs) * (pw + 40) + 10, mt + ph + mb + 18 * len(variants) + 10
    out = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" '
           'font-size="11">' % (width, height), '<rect width="100%" height="100%" fill="white"/>']
    series = {}
    for (v, args, m, a), rs in groups.items():
        us = runs.get(("untrained-sampled", m, a, "energy"), {})
        ctl = [float(us[r["seed"]]["objective_total"]) for r in rs if r["seed"] in us]
        if len(ctl) != len(rs):
            continue
        c = mean(ctl)
        eps = sorted({p["episode"] for r in rs for p in r["curve"]})
        pts = [(e, 100.0 * (mean([at(r, e) for r in rs]) - c) / c) for e in eps
               if all(at(r, e) is not None for r in rs)]
        series[(v, args, m, a)] = pts
    xmax = max([e for pts in series.values() for e, _ in pts] + [1])
    for i, (m, a) in enumerate(pairs):
        # each panel its own y range (the pairs differ by 10x), episode 0 left out (the untrained greedy
        # pass is up to 25x the control)
        ys = [y for (v, args, m2, a2), pts in series.items() if (m2, a2) == (m, a) for e, y in pts if e > 0] + [0.0]
        lo, hi = min(ys), max(ys)
        lo, hi = lo - 0.05 * (hi - lo + 1), hi + 0.05 * (hi - lo + 1)
        x0 = ml + i * (pw + 40)
        X = lambda e: x0 + pw * e / xmax
        Y = lambda y: mt + ph * (hi - y) / (hi - lo)
        out.append('<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="#888"/>' % (x0, mt, pw, ph))
        out.append('<text x="%.1f" y="%d" text-anchor="middle">%s / %s</text>' % (x0 + pw / 2, mt - 8, NAMES[m],
                                                                                 NAMES[a]))
        out.append('<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="black" stroke-dasharray="4 3"/>' % (
            x0, x0 + pw, Y(0), Y(0)))
        for t in range(0, 5):
            e = xmax * t / 4
            out.append('<text x="%.1f" y="%d" text-anchor="middle">%g</text>' % (X(e), mt + ph + 14, e))
        for t in range(0, 5):
            y = lo + (hi - lo) * t / 4
            out.append('<text x="%d" y="%.1f" text-anchor="end">%+.0f%%</text>' % (x0 - 4, Y(y) + 4, y))
        for k, (v, args) in enumerate(variants):
            pts = [p for p in series.get((v, args, m, a), []) if p[0] > 0]
            if pts:
                out.append('<polyline fill="none" stroke="%s" stroke-width="1.5" points="%s"/>' % (
                    colours[k % len(colours)], " ".join("%.1f,%.1f" % (X(e), Y(y)) for e, y in pts)))
    out.append('<text x="%d" y="%d">training episodes (x); trained greedy energy vs the untrained sampled pass of '
               'the same seeds, mean over seeds (y; dashed: the control, below is better)</text>' % (
                   ml, mt + ph + 30))
    for k, (v, args) in enumerate(variants):
        y = mt + ph + 48 + 18 * k
        out.append('<line x1="%d" x2="%d" y1="%d" y2="%d" stroke="%s" stroke-width="2"/>' % (
            ml, ml + 24, y - 4, y - 4, colours[k % len(colours)]))
        out.append('<text x="%d" y="%d">%s%s</text>' % (ml + 30, y, v, " (%s)" % args if args else
                                                        " (paper defaults)"))
    out.append("</svg>")
    return "\n".join(out) + "\n"


def paper_table(runs, obj, col, paper):
    meths = BASELINES
    out = ["| model | accelerator | " + " | ".join(BLABEL[b] for b in meths) +
           " | RL greedy (mean) | RL best-seen (mean) | untrained greedy (mean) | paper N | paper RL |",
           "|---" * (len(meths) + 7) + "|"]
    for a in ACCELS:
        for m in MODELS:
            if not any((b, m, a, obj) in runs for b in meths):
                continue
            cells = []
            for b in meths:
                v = vals(runs, b, m, a, obj, col)
                cells.append("%.4g" % v[0] if v else "–")
            for me in ["rl-greedy", "rl-best-seen", "untrained-greedy"]:
                v = vals(runs, me, m, a, obj, col)
                cells.append("%.4g" % mean(v) if v else "–")
            p = paper.get((m, a))
            cells += ["%.3g" % p[0], "%.3g" % p[1]] if p else ["–", "–"]
            out.append("| %s | %s | %s |" % (NAMES[m], NAMES[a], " | ".join(cells)))
    return "\n".join(out)


def transfer_table(runs, transfer):
    if not transfer:
        return "(no transfer runs)"
    groups = {}
    for r in transfer:
        groups.setdefault((r["trained_on"], r["model"], r["accelerator"], r["objective"]), []).append(
            float(r["greedy_total"]))
    out = ["| trained on | scored on | accelerator | objective | transferred greedy | untrained greedy on it | "
           "trained on it, greedy | transferred vs untrained |", "|---" * 8 + "|"]
    for (src, dst, a, obj), v in sorted(groups.items(), key=lambda kv: (ACCELS.index(kv[0][2]) if kv[0][2] in ACCELS else 9,
                                                                          kv[0][0], kv[0][1])):
        ug = vals(runs, "untrained-greedy", dst, a, obj)
        tg = vals(runs, "rl-greedy", dst, a, obj)
        out.append("| %s | %s | %s | %s | %s | %s | %s | %s |" % (
            NAMES[src], NAMES[dst], NAMES.get(a, a), obj, ci_txt(v), ci_txt(ug) if ug else "–",
            ci_txt(tg) if tg else "–", pct(mean(ug), mean(v)) if ug else ""))
    return "\n".join(out)


def cpu_table(runs):
    meths = BASELINES + ["rl-greedy", "untrained-greedy"]
    out = ["| model | accelerator | objective | " + " | ".join(meths) + " |", "|---" * (len(meths) + 3) + "|"]
    for a in ACCELS:
        for m in MODELS:
            for obj in ["energy", "cycles"]:
                if not any((me, m, a, obj) in runs for me in meths):
                    continue
                cells = []
                for me in meths:
                    v = vals(runs, me, m, a, obj, "cpu_s")
                    cells.append("%.1f" % mean(v) if v else "–")
                out.append("| %s | %s | %s | %s |" % (NAMES[m], NAMES[a], obj, " | ".join(cells)))
    return "\n".join(out)


def util_table(runs):
    out = ["| model | accelerator | MAC units | MAC-bound cycles | bottom-up (cycles objective) | best baseline | "
           "paper N | paper RL |", "|---" * 8 + "|"]
    for a in ACCELS:
        for m in MODELS:
            v = vals(runs, "bottom-up", m, a, "cycles", "cycles")
            if not v:
                continue
            ideal = MACS[m] / UNITS[a]
            bb = best_baseline(runs, m, a, "cycles")
            p = PAPER_C.get((m, a))
            out.append("| %s | %s | %d | %.3g | %.3g (%.1f%%) | %s %.3g (%.1f%%) | %s | %s |" % (
                NAMES[m], NAMES[a], UNITS[a], ideal, v[0], 100 * ideal / v[0], BLABEL[bb[0]], bb[1],
                100 * ideal / bb[1], "%.3g (%.2f%%)" % (p[0], 100 * ideal / p[0]) if p else "–",
                "%.3g (%.2f%%)" % (p[1], 100 * ideal / p[1]) if p else "–"))
    return "\n".join(out)


def rate(runs, method):
    """(runs, training episodes, CPU seconds) of the RL rows of one method (greedy passes included)."""
    rs = [r for k, v in runs.items() if k[0] == method for r in v.values()]
    return len(rs), sum(int(r["episodes"]) for r in rs), sum(float(r["cpu_s"]) for r in rs)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("data", help="directory with runs.csv, curves.jsonl, transfer.csv")
    ap.add_argument("--episodes", default="?", help="training episodes of the trained runs")
    ap.add_argument("--control-episodes", default=None,
                    help="episodes of the untrained (--no-learn) control runs (default: --episodes)")
    ap.add_argument("--eval-every", default="?")
    ap.add_argument("--samples", default="?")
    ap.add_argument("--svg", action="store_true",
                    help="print the dev-set learning curves as an SVG (docs/results/rlsched/dev-curves.svg) "
                         "instead of the page")
    a = ap.parse_args()
    if a.svg:
        runs, _, _ = load(a.data)
        sys.stdout.write(dev_svg(runs, load_dev(a.data)))
        return 0
    ctl = a.control_episodes if a.control_episodes is not None else a.episodes
    runs, curves, transfer = load(a.data)
    dev = load_dev(a.data)
    pol, (wins, sep, wins_s, sep_s, n) = policy_table(runs, "energy")
    seeds = sorted({s for k, v in runs.items() if k[0] == "rl-greedy" for s in v})
    cpu = sum(float(r["cpu_s"]) for v in runs.values() for r in v.values() if r["method"] != "untrained-sampled")
    cpu += sum(float(r["cpu_s"]) for r in transfer)
    cpu += sum(r["cpu_s"] for r in dev)
    tn, te, tc = rate(runs, "rl-greedy")
    un, ue, uc = rate(runs, "untrained-greedy")
    print("# RL-Scheduling on sched-v0: the policy, the search, and their controls (Tables 5 and 6)\n")
    print("Generated by `make paper-rlsched` (scripts/paper-rlsched.sh). Data: [rlsched/runs.csv](rlsched/runs.csv) "
          "(every baseline and RL row), [rlsched/curves.jsonl](rlsched/curves.jsonl) (learning curves), "
          "[rlsched/transfer.csv](rlsched/transfer.csv), the per-layer tables in "
          "[rlsched/layers.jsonl.gz](rlsched/layers.jsonl.gz), and the dev-set learning curves in "
          "[rlsched/dev-curves.jsonl](rlsched/dev-curves.jsonl) (scripts/rlsched-dev.sh). Recompute this page "
          "from the committed data:\n")
    print("```\npython3 scripts/rlsched-tables.py docs/results/rlsched --episodes %s%s --eval-every %s --samples %s "
          "> docs/results/rlsched.md\n```\n" % (a.episodes, "" if a.control_episodes is None else
                                                " --control-episodes %s" % a.control_episodes, a.eval_every,
                                                a.samples))
    same = ctl == a.episodes
    by_eps = {}
    for m, c in pairs_with(runs, "rl-greedy", "energy"):
        by_eps.setdefault(episodes_of(runs, "rl-greedy", m, c, "energy"), []).append("%s / %s" % (NAMES[m], NAMES[c]))
    other = sorted((e, v) for e, v in by_eps.items() if e != str(a.episodes))
    mixed = "" if not other else " on %d pair%s; %s" % (
        len(by_eps.get(str(a.episodes), [])), "" if len(by_eps.get(str(a.episodes), [])) == 1 else "s",
        "; ".join("**%s episodes** on %s (not rerun in the time available)" % (e, ", ".join(v)) for e, v in other))
    print("Settings: network mode (every conv/fc layer, 16 brute-force steps per layer), the paper's PPO settings, "
          "**%s training episodes** per trained run%s (the paper: up to 3000), a greedy pass every %s episodes%s, "
          "seeds %s; %s random-pruned scores %s valid tables per layer. %d trained runs played %d training "
          "episodes in %.0f CPU seconds (**%.0f episodes per CPU hour**, their greedy passes included); %d untrained "
          "runs played %d in %.0f (%.0f per CPU hour: an untrained policy rarely repeats a state, so the step "
          "memo hits less). Everything on this page took %.0f CPU seconds, single-threaded, under `nice` on a "
          "shared 2-core machine. %s Each run's CPU seconds are in runs.csv.\n" % (
              a.episodes, mixed, a.eval_every, " (curves.jsonl lists each run's points)" if other else "",
              ", ".join(map(str, seeds)) or "–",
              "the untrained controls play the same number of episodes;" if same else
              "the untrained (`--no-learn`) controls play **%s episodes** (run before the trained runs were made "
              "longer, and not rerun for lack of CPU time: their greedy pass does not depend on the episode count, "
              "and their sampled pass is a mean over %s passes of the same fixed policy, so neither changes in "
              "expectation; their best-seen search, though, had %s/%s of the trained runs' brute-force steps);" % (
                  ctl, ctl, ctl, a.episodes),
              a.samples, tn, te, tc, 3600.0 * te / tc if tc else 0, un, ue, uc, 3600.0 * ue / uc if uc else 0,
              cpu, LOAD_NOTE))
    covered = pairs_with(runs, "rl-greedy", "energy")
    print("**Coverage.** RL and its controls ran on %d model/accelerator pairs under the energy objective: %s. "
          "The baselines ran on %d pairs under both objectives. Pairs not listed were not run in the time "
          "available (see the command above to extend: `RLSCHED_APPEND=1 RLSCHED_PAIRS=...`).\n" % (
              len(covered), ", ".join("%s / %s" % (NAMES[m], NAMES[c]) for m, c in covered) or "none",
              len(pairs_with(runs, "bottom-up", "cycles"))))
    if dev:
        print("## Does longer training help? Learning curves on a dev set (energy objective)\n")
        print("Each row: one hyperparameter variant on one pair, trained once per seed for the longest episode "
              "count shown, with a greedy pass every few episodes (scripts/rlsched-dev.sh; the greedy pass after e "
              "episodes is exactly what a run trained for e episodes ends with). Cells: trained greedy network "
              "energy (pJ, mean over the seeds) and its difference to the untrained sampled pass of the same seeds "
              "(the stronger control; its mean over the seeds, from runs.csv). The untrained greedy pass is the "
              "same network at episode 0. \"Below the sampled pass\" counts the seeds whose trained greedy pass "
              "is below their own untrained sampled pass. The last columns: the mean objective of the trained "
              "policy's own sampled training episodes, first 10 against last 10, and the CPU seconds of a run "
              "(greedy passes included).\n")
        print(dev_table(runs, dev) + "\n")
        print("![Dev-set learning curves: trained greedy energy against training episodes, relative to the "
              "untrained sampled pass](rlsched/dev-curves.svg)\n")
        print("The figure ([rlsched/dev-curves.svg](rlsched/dev-curves.svg)) is made from the same data: "
              "`python3 scripts/rlsched-tables.py docs/results/rlsched --svg > docs/results/rlsched/dev-curves.svg`.\n")
    print("## What the policy adds to the search (energy objective)\n")
    print("Network energy (pJ), mean over seeds with 95% bootstrap intervals. **trained greedy**: one "
          "deterministic pass of the trained policy, each layer keeps the table its pass ends with (no "
          "best-seen). **untrained greedy**: the same pass by the same network before any update (the "
          "`--no-learn` run of the same seed). **untrained sampled pass**: the mean objective the untrained "
          "policy's sampled episodes ended with (one pass each). **best-seen**: the best table per layer over "
          "all training steps — a search result, for trained and untrained alike, at the brute-force steps of "
          "its own run (column `steps` of runs.csv). The strongest baseline is the lowest of bottom-up, "
          "top-down, CoSA-like and random-pruned, each run under the energy objective.\n")
    print(pol + "\n")
    def met(w, sp):
        return n >= 12 and w >= 9 and sp >= 6
    verdict = ("**Not met as stated: only %d of the 12 pairs were run.**" % n if n < 12 else
               "**Met against both controls.**" if met(wins, sep) and met(wins_s, sep_s) else
               "**Met against the untrained greedy pass only; not met against the untrained sampled pass, the "
               "stronger control.**" if met(wins, sep) else "**Not met.**")
    print("**Target** (issue 26: trained greedy below the untrained control on at least 9 of 12 pairs, "
          "intervals apart on at least 6): trained greedy is below the untrained greedy pass on **%d of %d** pairs "
          "run, with intervals apart on **%d**; below the untrained sampled pass on **%d of %d** (apart on %d). %s "
          "The untrained greedy pass is the argmax of a randomly initialised network, which concentrates on a few "
          "actions whatever the layer (seed 2 on ResNet-50 / Eyeriss v1: three actions make 87%% of its 864 steps), "
          "so its result swings with the seed; the untrained sampled pass, the same network sampling, is the "
          "stronger control.\n" % (wins, n, sep, wins_s, n, sep_s, verdict))
    print("## Learning curves (energy objective)\n")
    print("Greedy network energy (pJ, mean over seeds) after 0, ... episodes of training, beside the untrained "
          "policy's greedy pass (the same network at episode 0, flat by construction), and the mean objective "
          "the sampled training episodes ended with in the first and second half of training, trained against "
          "untrained. Per-seed curves are in curves.jsonl.\n")
    print(curve_table(curves, "energy") + "\n")
    print("## Table 5: energy (pJ), every method under the energy objective\n")
    print(paper_table(runs, "energy", "energy_pj", PAPER_E) + "\n")
    print("## Table 6: cycles, every method under the cycles objective\n")
    print(paper_table(runs, "cycles", "cycles", PAPER_C) + "\n")
    cyc = pairs_with(runs, "rl-greedy", "cycles")
    if not cyc:
        print("RL was trained under the energy objective only in this run (`RLSCHED_RL_OBJECTIVES`); its Table 6 "
              "cells are empty unless a cycles run was added.\n")
    else:
        ctab, (cw, cs, cws, css, cn) = policy_table(runs, "cycles")
        print("RL under the cycles objective ran on %d pair%s only (%s), the rest of Table 6's RL cells are empty. "
              "What its policy adds to the search, as above but in cycles (the strongest baseline is the lowest "
              "run under the cycles objective):\n" % (
                  cn, "" if cn == 1 else "s", ", ".join("%s / %s" % (NAMES[m], NAMES[c]) for m, c in cyc)))
        print(ctab + "\n")
        print("Under cycles the trained greedy pass is below the untrained greedy pass on %d of %d pairs (intervals "
              "apart on %d) and below the untrained sampled pass on %d of %d (apart on %d).\n" % (
                  cw, cn, cs, cws, cn, css))
    print("## Transfer: a policy trained on one model, scored greedily on another\n")
    print("The paper claims the policy generalises across models. Each trained policy (the same seeds) plays "
          "one greedy pass on another model on the same accelerator (`--load W --eval-only`), beside the "
          "untrained network's greedy pass on that model and the policy trained on that model itself.\n")
    print(transfer_table(runs, transfer) + "\n")
    print("## Run time (CPU seconds per run, mean over seeds)\n")
    print(cpu_table(runs) + "\n")
    print("## Why the absolute numbers cannot match the paper's\n")
    print("MAC-bound cycles = the model's MACs at batch 1 / the preset's MAC units; the percentage is that bound "
          "over the cycles reported (utilisation).\n")
    print(util_table(runs) + "\n")
    print(READING)


LOAD_NOTE = ("The baselines and the untrained controls were run in two earlier sessions (load average 2-27; the "
             "step was about 3x slower in the first, so the untrained rate above mixes both); the trained runs "
             "in a third (2026-11-27 08:54-09:48 UTC, load average 3-8.4) on the faster step, and RL under "
             "cycles on ResNet-50 / Eyeriss v1 after them (09:47-09:56 UTC, load average 3-4.7).")

READING = """- **The models are not the cause**: our MAC totals are the standard figures at batch 1 (YOLOv3-416
  3.29e10, Inception-v4 1.23e10, MobileNet-v3 2.17e8, ResNet-50 4.09e9).
- **TPU v3 and Simba**: the paper's cycles imply 0.01-0.6% MAC utilisation (MobileNet-v3 on TPU v3 takes
  more cycles than ResNet-50 with 19x fewer MACs), which no MAC-bound model gives; they point to
  per-layer fixed costs, a latency-bound model or another reading of Table 4. Our `tpu_v3` preset takes
  Table 4 literally (8/32/3 KB local buffers *per PE* across 32,768 PEs per chip: 1.4 GB of PE-local
  SRAM), so capacity constrains almost nothing (the previous run's RL reached 86% of the MAC bound on
  ResNet-50). We keep that literal preset and add `tpu_v3_vmem`
  (docs/sched.md): two 128x128 MXUs per TensorCore as one 256x128 array, no per-PE buffer (one weight
  register per cell), the TensorCore's 16 MiB vector memory as the shared unified buffer, 2x8 TensorCores
  (8 chips of 2), HBM at 8 x 900 GB/s. Neither brings the TPU into the paper's regime; the gap is the
  architecture and energy description, which the paper does not publish.
- **Eyeriss v1** is the one preset whose utilisation is in the paper's range (ResNet-50: bottom-up at 23% of
  the MAC bound against the paper's N at 15%, energy 1.65x the paper's); MobileNet-v3 is 3-10x below the
  paper's figures even there.
- **Baselines** are our NeuroSpector-, ZigZag-, CoSA- and Timeloop-mapper-like heuristics inside sched-v0
  (docs/sched.md), each run under the objective of its table. Bottom-up's first pass minimises DRAM
  traffic whatever the objective; under cycles it is the strongest baseline only on ResNet-50 / TPU v3
  (literal preset): top-down is on Eyeriss v1, random-pruned on Simba and the other TPU rows.
- **Layers**: our zoo keeps every conv/fc layer (ResNet-50 54 vs the paper's 50, MobileNet-v3 64 vs 57,
  Inception-v4 150 vs 149).
"""

if __name__ == "__main__":
    sys.exit(main())
