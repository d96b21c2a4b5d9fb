#!/usr/bin/python3
"""paper-mmap-report.py OUT T2 T3 MZARGS SECONDS SEEDS T7 MZ3ARGS JOBS TC CSEEDS T2P T3P [T3SEEDS [BP BM BSEEDS [F7SEEDS]]] - writes OUT.md
(docs/results/mmap.md) and the SVG figures in OUT/ from the summaries (OUT/data/*.json), curves
(OUT/data/*.csv.gz) and program sizes (OUT/data/sizes.txt) of scripts/paper-mmap.sh. T2 and T3 are
"BASE+PER_KBUF" CPU seconds per run; T7 and TC CPU seconds; CSEEDS the collapse check's seeds; T2P and
T3P the programs run; T3SEEDS Table 3's seeds (SEEDS); BP, BM, BSEEDS the budget part's programs, multiples of
the Table 3 budget and seeds; F7SEEDS Figure 7's seeds (SEEDS). Cells: mean ± sample sd [95% percentile bootstrap interval of the mean, 2000
resamples, fixed RNG seed]. Standard library only."""
import glob
import gzip
import json
import os
import random
import sys

out, T2S, T3S, MZ, SECS = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5]
SEEDS = sys.argv[6].split()
T7 = float(sys.argv[7])
MZ3, JOBS = sys.argv[8], sys.argv[9]
TC = float(sys.argv[10]) if len(sys.argv) > 10 else 20.0
CSEEDS = sys.argv[11].split() if len(sys.argv) > 11 else ["1", "2", "3", "4", "5"]
D = os.path.join(out, "data")
SIZES = dict(l.split() for l in open(os.path.join(D, "sizes.txt")))


def budget(spec, p):
    base, per = (float(x) for x in spec.split("+"))
    return round(base + per * int(SIZES[p]) / 1000, 1)


def spec_text(spec):
    base, per = spec.split("+")
    return f"{base} + {per} CPU s per 1,000 buffers"
T2P = sys.argv[12].split() if len(sys.argv) > 12 else ["alexnet_train_batch_32", "wavenet_coherent_batch32", "alphatensor_like",
                                                       "tensor2tensor_transformer_bf16"]
PAPER_T2 = {"alexnet_train_batch_32": (300, 0.5834, 0.5426, 0.4100), "wavenet_coherent_batch32": (3020, 0.7099, 0.7004, 0.4804),
            "alphatensor_like": (9084, 0.7680, 0.5357, 0.2481), "tensor2tensor_transformer_bf16": (9888, 0.7002, 0.6263, 0.3227)}
T3P = ["mlp_train_batch_16", "alexnet_train_batch_32", "inference_resnet", "inference_lstm", "rnn_2", "mobilenet_v2_train_batch_128",
       "wavenet_coherent_batch32", "rnn_6", "resnet50_train_batch_32", "mlperf_nmt_1_shard_batch_64", "alphatensor_like",
       "tensor2tensor_transformer_bf16", "bert_base_train_batch_16", "transformer_big_train"]
if len(sys.argv) > 13:
    T3P = sys.argv[13].split()
T3SEEDS = sys.argv[14].split() if len(sys.argv) > 14 and sys.argv[14].strip() else SEEDS
BP = sys.argv[15].split() if len(sys.argv) > 15 else []
BM = sys.argv[16].split() if len(sys.argv) > 16 else ["1", "3", "9"]
BSEEDS = sys.argv[17].split() if len(sys.argv) > 17 else ["1", "2", "3"]
F7SEEDS = sys.argv[18].split() if len(sys.argv) > 18 and sys.argv[18].strip() else SEEDS


def load(name):
    p = os.path.join(D, name + ".json")
    if not os.path.exists(p):
        return None
    with open(p) as f:
        txt = f.read().strip()
    return json.loads(txt) if txt else None


def curve(name):
    p = os.path.join(D, name + ".csv.gz")
    if not os.path.exists(p):
        return []
    pts = []
    with gzip.open(p, "rt") as f:
        next(f, None)
        for line in f:
            s, _, _, best = line.strip().split(",")
            pts.append((float(s), float(best)))
    return pts


def rel(j):
    if not j or j.get("best_reward") is None or not j.get("heuristic_return"):
        return None
    return j["best_reward"] / j["heuristic_return"]


def fmt(x, d=3):
    return "—" if x is None else f"{x:.{d}f}"


def mean(xs):
    xs = [x for x in xs if x is not None]
    return sum(xs) / len(xs) if xs else None


def boot(v, n=2000):
    """95% percentile bootstrap interval of the mean (fixed seed: the page is recomputable)."""
    rng = random.Random(12345)
    ms = sorted(sum(rng.choice(v) for _ in v) / len(v) for _ in range(n))
    return ms[int(0.025 * n)], ms[int(0.975 * n) - 1]


def msd(xs, d=3):
    """mean ± sample sd [bootstrap 95% interval] over the seeds that have a value, with the count when
    some have none."""
    v = [x for x in xs if x is not None]
    if not v:
        return "—"
    m = sum(v) / len(v)
    sd = (sum((x - m) ** 2 for x in v) / (len(v) - 1)) ** 0.5 if len(v) > 1 else 0.0
    if len(v) > 1:
        lo, hi = boot(v)
        t = f"{m:.{d}f} ± {sd:.{d}f} [{lo:.{d}f}, {hi:.{d}f}]"
    else:
        t = f"{m:.{d}f}"
    return t + (f" ({len(v)}/{len(xs)})" if len(v) < len(xs) else "")


CUT = []


def provenance(js):
    """a sentence when some of these summaries come from a binary before issue 25's second session
    (no games_retired in the summary: all games kept in flight, self-imitation off by default)."""
    old = [j for j in js if j and "games_retired" not in j]
    if not old:
        return ""
    return (f"**{len(old)} of these {len([j for j in js if j])} runs come from the binary before games in flight were "
            "fitted to the budget and self-imitation (0.25) became the default** (their summaries have no "
            "`games_retired`): all 8 games were kept in flight and `--self-imitation` was 0. They were not rerun "
            "with the current binary (see the notes below).\n")


def runs(name, seeds=None, secs=None):
    """the summaries of name-s<seed> over SEEDS (None where missing, and where the run was cut
    before 90% of its CPU budget secs, e.g. by MMAP_DEADLINE: listed in CUT)."""
    out_ = []
    for s in (seeds or SEEDS):
        j = load(f"{name}-s{s}")
        if j and secs and j.get("cpu_s", 0) < 0.9 * secs:
            if f"{name}-s{s}" not in CUT:
                CUT.append(f"{name}-s{s}")
            j = None
        out_.append(j)
    return out_


COL = {"muzero": "#1f77b4", "es": "#ff7f0e", "random": "#7f7f7f", "search": "#2ca02c", "learn": "#d62728", "az": "#9467bd",
       "untrained": "#8c564b"}


def panel(x0, y0, w, h, title, series, tmax, heur):
    """series: [(label, pts)], y = best return / heuristic return."""
    ys = [b / heur for _, pts in series for _, b in pts] + [1.0]
    ymin, ymax = min(ys + [0.0]), max(ys) * 1.05
    sx = lambda t: x0 + 40 + (w - 50) * t / tmax
    sy = lambda v: y0 + h - 25 - (h - 45) * (v - ymin) / (ymax - ymin if ymax > ymin else 1)
    o = [f'<text x="{x0 + w / 2}" y="{y0 + 14}" text-anchor="middle" font-size="12">{title}</text>',
         f'<line x1="{sx(0)}" y1="{sy(ymin)}" x2="{sx(tmax)}" y2="{sy(ymin)}" stroke="black"/>',
         f'<line x1="{sx(0)}" y1="{sy(ymin)}" x2="{sx(0)}" y2="{sy(ymax)}" stroke="black"/>',
         f'<line x1="{sx(0)}" y1="{sy(1)}" x2="{sx(tmax)}" y2="{sy(1)}" stroke="#999" stroke-dasharray="4 3"/>',
         f'<text x="{sx(tmax)}" y="{sy(1) - 3}" text-anchor="end" font-size="9" fill="#666">heuristic</text>',
         f'<text x="{x0 + 4}" y="{sy(ymax) + 8}" font-size="9">{ymax:.2f}</text>',
         f'<text x="{x0 + 4}" y="{sy(ymin)}" font-size="9">{ymin:.2f}</text>',
         f'<text x="{sx(tmax)}" y="{y0 + h - 8}" text-anchor="end" font-size="9">{tmax:.0f} s</text>']
    labs = []
    for lab, pts in series:
        c = COL.get(lab, "black")
        if lab not in labs:
            o.append(f'<text x="{x0 + 50 + 70 * len(labs)}" y="{y0 + 28}" font-size="10" fill="{c}">{lab}</text>')
            labs.append(lab)
        if not pts:
            continue
        path = [(0.0, pts[0][1])] if False else []
        prev = None
        for s, b in pts:
            if prev is not None:
                path.append((s, prev))
            path.append((s, b))
            prev = b
        path.append((tmax, prev))
        d = " ".join(f"{sx(s):.1f},{sy(b / heur):.1f}" for s, b in path)
        o.append(f'<polyline fill="none" stroke="{c}" stroke-width="1.2" stroke-opacity="0.8" points="{d}"/>')
    return o


def speedup(j):
    return j["heuristic_latency"] / j["agent_latency"] if j and j.get("agent_latency") else None


def budget_panel(x0, y0, w, h, title, lines):
    """lines: [(agent, [(cpu_s, mean speedup, [per-seed speedups])])], x on a log scale."""
    import math
    ts = [t for _, pts in lines for t, _, _ in pts] or [1.0]
    ys = [y for _, pts in lines for _, _, v in pts for y in v] + [1.0]
    tmin, tmax = min(ts) / 1.3, max(ts) * 1.3
    ymin, ymax = min(ys) - 0.02, max(ys) + 0.02
    sx = lambda t: x0 + 40 + (w - 50) * (math.log(t) - math.log(tmin)) / (math.log(tmax) - math.log(tmin))
    sy = lambda v: y0 + h - 25 - (h - 45) * (v - ymin) / (ymax - ymin)
    o = [f'<text x="{x0 + w / 2}" y="{y0 + 14}" text-anchor="middle" font-size="12">{title}</text>',
         f'<line x1="{sx(tmin)}" y1="{sy(ymin)}" x2="{sx(tmax)}" y2="{sy(ymin)}" stroke="black"/>',
         f'<line x1="{sx(tmin)}" y1="{sy(ymin)}" x2="{sx(tmin)}" y2="{sy(ymax)}" stroke="black"/>',
         f'<line x1="{sx(tmin)}" y1="{sy(1)}" x2="{sx(tmax)}" y2="{sy(1)}" stroke="#999" stroke-dasharray="4 3"/>',
         f'<text x="{x0 + 4}" y="{sy(ymax) + 8}" font-size="9">{ymax:.2f}</text>',
         f'<text x="{x0 + 4}" y="{sy(ymin)}" font-size="9">{ymin:.2f}</text>']
    for t in sorted(set(ts)):
        o.append(f'<text x="{sx(t)}" y="{y0 + h - 8}" text-anchor="middle" font-size="9">{t:g} s</text>')
    for k, (a, pts) in enumerate(lines):
        c = COL.get(a, "black")
        o.append(f'<text x="{x0 + 45 + 80 * k}" y="{y0 + 28}" font-size="10" fill="{c}">{a}</text>')
        if pts:
            o.append(f'<polyline fill="none" stroke="{c}" stroke-width="1.5" points="' + " ".join(f"{sx(t):.1f},{sy(m):.1f}" for t, m, _ in pts) + '"/>')
        for t, _, v in pts:
            for y in v:
                o.append(f'<circle cx="{sx(t):.1f}" cy="{sy(y):.1f}" r="2" fill="{c}" fill-opacity="0.6"/>')
    return o


def svg(path, panels, w, h):
    with open(path, "w") as f:
        f.write(f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" font-family="sans-serif">\n')
        f.write('<rect width="100%" height="100%" fill="white"/>\n')
        for p in panels:
            f.write("\n".join(p) + "\n")
        f.write("</svg>\n")


L = []
L.append("# MMap-MuZero on mmap-v0: our reproduction of Table 2 / Figure 5, Table 3 and Figure 7\n")
L.append(f"Produced by `make paper-mmap` (scripts/paper-mmap.sh, {SECS} s wall for this invocation's runs, {JOBS} at a time, on this "
         "2-core machine shared with other jobs). Every run is `hwgym-muzero` with `--endpoint local`, a CPU-time "
         "limit (`--cpu-limit`) that grows with the program's size, and an unbounded step budget, so agents are "
         "compared at equal compute, as the paper's Figure 5 compares them at equal time (CPU seconds, because the "
         "wall time of a run on a shared machine measures everyone's load). Data beside this page: "
         "`mmap/data/*.json` (each run's JSON summary, with the best mapping as a digit string) and "
         "`mmap/data/*.csv.gz` (every complete game: CPU seconds, env steps, return, best so far). "
         "Cells are mean ± sample standard deviation over the seeds, then the 95% percentile bootstrap interval "
         "of the mean in brackets (2000 resamples), and \"(k/n)\" means only k of the n seeds completed a game. "
         "The page recomputes from the committed data with `python3 scripts/paper-mmap-report.py` and the arguments "
         "in docs/results/mmap-notes.md.\n")
L.append(f"MuZero settings for these runs: `{MZ}` (Table 2, Figure 7, collapse check) and `{MZ3}` (Table 3), plus the defaults "
         "(discount 0.9999, c1 1.25, c2 19652, per-node Q normalisation with the floor 100/buffers, replay 20000, "
         "Reanalyse 0.5, Adam 2e-4 with weight decay 1e-4, K = 5, TD-10). AlphaZero mode adds `--model true`; the "
         "untrained control adds `--train-every 1000000000` (the same agent, search with the untrained networks, no "
         "training step). ES: `--games 8` (population 8, mirrored), sigma 0.5, step 0.5. Random: 8 games in flight. "
         "All play with Drop-backup (section 4.3.2), so a lost game is restored rather than scored 0. All but ES fit "
         "their games in flight to the budget (the binary's default since issue 25's second session): when the CPU "
         "measured per env step says the budget left cannot complete every game in flight, the ones with the most "
         "buffers left are retired (never game 0, the greedy evaluation game), so that large programs complete games; "
         "the summaries' `games_retired` counts them.\n")

# ---------------- collapse check (MuZero; then each variant of the cv part, c-<program>-<variant>-s<seed>)
CPROGS = ("mlp_train_batch_16", "inference_resnet")


def collapse_section(tag, title):
    cj = {p: runs(f"c-{p}-{tag}", CSEEDS, TC) for p in CPROGS}
    if not any(j for l in cj.values() for j in l):
        return
    L.append(f"## Collapse check: {title} at {TC:g} CPU s, seeds {', '.join(CSEEDS)}\n")
    L.append("Issue 25's target: no seed ends below 0.9 of the heuristic on these two programs (a collapsed seed is a defect). "
             "Per seed: best return / heuristic return; then the shares of Copy / NoCopy / Drop among the agent's choices "
             "(positions with two or more legal moves, forced Drops excluded) and the prior's entropy (nats) in the last "
             "window of 10 games.\n")
    L.append("| program | " + " | ".join(f"seed {s}" for s in CSEEDS) + " | mean ± sd [95% CI] | min | target met |")
    L.append("|---|" + "---|" * len(CSEEDS) + "---|---|---|")
    for p, js in cj.items():
        rs = [rel(j) for j in js]
        v = [x for x in rs if x is not None]
        met = "yes" if len(v) == len(rs) and min(v) >= 0.9 else "**no**"
        L.append(f"| {p} | " + " | ".join(fmt(x) for x in rs) + f" | {msd(rs)} | {fmt(min(v)) if v else '—'} | {met} |")
    L.append("")
    prov = provenance([j for l in cj.values() for j in l])
    if prov:
        L.append(prov)
    L.append("| program | seed | Copy / NoCopy / Drop (whole run) | last-window entropy | games | train steps |")
    L.append("|---|---|---|---|---|---|")
    for p, js in cj.items():
        for sd, j in zip(CSEEDS, js):
            if not j:
                continue
            ch = j.get("choices", {})
            w = j.get("collapse_watch") or [{}]
            e = w[-1].get("entropy")
            L.append(f"| {p} | {sd} | {ch.get('copy', 0):.2f} / {ch.get('nocopy', 0):.2f} / {ch.get('drop', 0):.2f} | {fmt(e, 2)} | "
                     f"{j['games_completed']} | {j['train_steps']} |")
    L.append("")


collapse_section("muzero", "MuZero")
CV_TEXT = {"hp50f1": "`--heuristic-prior 0.5 --minmax-floor 1`, the binary's default since issue 25's fourth session"}
for cv in sorted({os.path.basename(f)[len("c-" + CPROGS[0]) + 1:].rsplit("-s", 1)[0]
                  for f in glob.glob(os.path.join(D, f"c-{CPROGS[0]}-*-s*.json"))} - {"muzero"}):
    collapse_section(cv, f"MuZero with `{cv}` ({CV_TEXT.get(cv, cv)})")

# ---------------- Table 2
if any(any(runs(f"t2-{p}-muzero")) for p in T2P):
    L.append(f"## Table 2 / Figure 5: final reward at equal compute ({spec_text(T2S)} per agent and program)\n")
    L.append("Reward = the best complete game's return divided by the heuristic's return on the same program (the paper "
             "normalises differently; its values are not comparable in absolute terms, only in ordering).\n")
    T2A = ("muzero", "az", "untrained", "es", "random")
    L.append("| program | buffers (ours / paper) | CPU s | MuZero | AlphaZero mode | untrained MuZero | ES | Random | games MuZero / AZ / untrained / ES / Random | paper MuZero / ES / Random |")
    L.append("|---|---|---|---|---|---|---|---|---|---|")
    panels, epanel = [], []
    t2p = [p for p in T2P if p in PAPER_T2 and any(runs(f"t2-{p}-muzero"))]
    for i, p in enumerate(t2p):
        js = {m: runs(f"t2-{p}-{m}", secs=budget(T2S, p)) for m in T2A}
        some = [j for l in js.values() for j in l if j]
        nb = some[0]["num_buffers"] if some else None
        pp = PAPER_T2[p]
        vals = {m: mean([rel(j) for j in js[m]]) for m in js}
        best = max((v for v in vals.values() if v is not None), default=None)
        cell = lambda m: ("**" + msd([rel(j) for j in js[m]]) + "**") if vals[m] is not None and vals[m] == best else msd([rel(j) for j in js[m]])
        games = " / ".join("+".join(str(j["games_completed"]) if j else "—" for j in js[m]) for m in T2A)
        L.append(f"| {p} | {nb} / {pp[0]} | {budget(T2S, p):g} | " + " | ".join(cell(m) for m in T2A) + f" | {games} | {pp[1]} / {pp[2]} / {pp[3]} |")
        heur = some[0]["heuristic_return"] if some else 1.0
        series = [(m, curve(f"t2-{p}-{m}-s{sd}")) for m in T2A for sd in SEEDS]
        panels.append(panel((i % 2) * 360, (i // 2) * 220, 350, 210, p, series, budget(T2S, p), heur))
        # the policy-entropy curve of MuZero and AlphaZero mode: prior entropy per window of 10 games
        es_ = []
        for m in ("muzero", "az"):
            for sd in SEEDS:
                j = load(f"t2-{p}-{m}-s{sd}")
                w = [x for x in (j or {}).get("collapse_watch", []) if x.get("entropy") is not None]
                es_.append((m, [(float(k + 1), x["entropy"]) for k, x in enumerate(w)]))
        epanel.append(es_)
    rows = max(1, (len(t2p) + 1) // 2)
    svg(os.path.join(out, "figure5.svg"), panels, 720, 220 * rows)
    L.append("\n![Figure 5](mmap/figure5.svg)\n")
    L.append("Figure 5 (ours): best return so far / heuristic return against CPU seconds, one line per seed; the dashed line is "
             "the heuristic. Games column: complete games per seed.\n")
    ep = []
    for i, (p, es_) in enumerate(zip(t2p, epanel)):
        n = max([len(pts) for _, pts in es_] + [1])
        ep.append(panel((i % 2) * 360, (i // 2) * 220, 350, 210, p + ": prior entropy (nats) per 10 games", es_, float(n), 1.0))
    svg(os.path.join(out, "entropy.svg"), ep, 720, 220 * rows)
    L.append("![policy entropy](mmap/entropy.svg)\n")
    L.append("Beside Figure 5: the entropy of the network's prior over the legal moves at the acting roots (positions with two "
             "or more legal moves), per window of 10 complete games, MuZero and AlphaZero mode, one line per seed (the dashed "
             "line marks 1.0 nat; the uniform prior over three moves is 1.10). A collapse shows as a line falling towards 0.\n")

# ---------------- Table 3
if any(any(runs(f"t3-{p}-prod", T3SEEDS)) for p in T3P):
    L.append(f"## Table 3: speedup over the heuristic ({spec_text(T3S)} of MuZero per program and seed, seeds {', '.join(T3SEEDS)})\n")
    L.append("Speedup = heuristic program latency / agent program latency, both from the env's cost model "
             "(Σ_I L_I(S_I)); MuZero-prod keeps the mapping with the lower latency of the two. Per program: the mean "
             "over the seeds that completed a game (MuZero) and over all seeds (MuZero-prod, where a seed that "
             "completed no game scores 1.0). The summary row counts a program as improved when its mean speedup "
             "is above 1; programs where no seed completed a game count as not improved for MuZero.\n")
    with_az = any(any(runs(f"t3-{p}-az", T3SEEDS)) for p in T3P)
    L.append("| program | buffers | CPU s | MuZero games per seed | MuZero return / heuristic | MuZero speedup | MuZero-prod speedup |"
             + (" AlphaZero mode games per seed | AlphaZero mode speedup |" if with_az else ""))
    L.append("|---|---|---|---|---|---|---|" + ("---|---|" if with_az else ""))
    ag, pr, az, azrun = [], [], [], 0
    for p in T3P:
        js = runs(f"t3-{p}-prod", T3SEEDS, budget(T3S, p))
        if not any(js):
            continue
        sps = [speedup(j) for j in js]
        rrs = [j["agent_return"] / j["heuristic_return"] if j and j.get("agent_return") else None for j in js]
        prs = [j["prod_speedup_over_heuristic"] for j in js if j]
        ag.append(mean(sps))
        pr.append(mean(prs))
        nb = next(j["num_buffers"] for j in js if j)
        games = "+".join(str(j["games_completed"]) if j else "—" for j in js)
        row = f"| {p} | {nb} | {budget(T3S, p):g} | {games} | {msd(rrs)} | {msd(sps, 4)} | {msd(prs, 4)} |"
        if with_az:
            za = runs(f"t3-{p}-az", T3SEEDS, budget(T3S, p))
            az.append(mean([speedup(j) for j in za]) if any(za) else None)
            azrun += 1 if any(za) else 0
            row += f" {'+'.join(str(j['games_completed']) if j else '—' for j in za)} | {msd([speedup(j) for j in za], 4)} |"
        L.append(row)
    L.append("")
    agv = [x for x in ag if x is not None]
    L.append("| agent | mean | max | min | models improved | paper mean / max / min / improved |")
    L.append("|---|---|---|---|---|---|")
    if agv:
        L.append(f"| MuZero (programs with a complete game: {len(agv)}/{len(ag)}) | {sum(agv) / len(agv):.4f} | {max(agv):.4f} | {min(agv):.4f} | "
                 f"{sum(1 for x in agv if x > 1)}/{len(ag)} | 1.0059 / 1.8787 / 0.4853 / 33/60 |")
    if pr:
        L.append(f"| MuZero-prod | {sum(pr) / len(pr):.4f} | {max(pr):.4f} | {min(pr):.4f} | {sum(1 for x in pr if x > 1)}/{len(pr)} | "
                 "1.0405 / 1.8787 / 1.0 / 33/60 |")
    azv = [x for x in az if x is not None]
    if azv:
        L.append(f"| AlphaZero mode (run on {azrun} of the {len(ag)} programs, a complete game on {len(azv)}; mean, max, min over those) | "
                 f"{sum(azv) / len(azv):.4f} | {max(azv):.4f} | {min(azv):.4f} | {sum(1 for x in azv if x > 1)}/{azrun} | — |")
        L.append("")
        L.append(f"MuZero over the same {len(azv)} programs (those where AlphaZero mode completed a game): mean "
                 f"{sum(x for x, y in zip(ag, az) if y is not None and x is not None) / max(1, sum(1 for x, y in zip(ag, az) if y is not None and x is not None)):.4f}, "
                 f"{sum(1 for x, y in zip(ag, az) if y is not None and x is not None and x > 1)}/{len(azv)} improved.")
    L.append("")

# ---------------- dev set: value target and the untrained control at Table 3's budget
DEVP = ["mobilenet_v2_train_batch_128", "resnet50_train_batch_32", "wavenet_coherent_batch32", "tensor2tensor_transformer_bf16"]


def devname(v, p):
    """dev-<variant>-<program>; the untrained control of the budget part's programs is its x1 run"""
    if v == "untrained" and not load(f"dev-untrained-{p}-s1"):
        return f"b-{p}-untrained-x1"
    return f"dev-{v}-{p}"


if any(load(f"dev-adv-{p}-s1") for p in DEVP):
    DS = ["1", "2", "3"]
    L.append(f"## Dev set: the advantage value target and the untrained control at Table 3's budget (seeds {', '.join(DS)})\n")
    L.append("MuZero-prod with Table 3's settings and CPU budgets; `td` is Table 3's own runs of the same seeds (the default "
             "TD-10 value target), `adv` adds `--value-target adv` (the value network learns the return over the heuristic's "
             "return-to-go from the same buffer), `adv-mc` `--value-target adv-mc` (the same over the Monte Carlo return-to-go), `untrained` adds `--train-every 1000000000` (the same agent, no training step). "
             "Cell: speedup over the heuristic per seed, then the mean; Drop's share of the choices in brackets.\n")
    DV = [("td", None), ("adv", "adv")] + ([("adv-mc", "advmc")] if load(f"dev-advmc-{DEVP[0]}-s1") else []) + [("untrained", "untrained")]
    L.append("| program | CPU s | " + " | ".join(v for v, _ in DV) + " |")
    L.append("|---|---|" + "---|" * len(DV))
    tot = {v: [] for v, _ in DV}
    for p in DEVP:
        cells = []
        for v, nm in ((v, f"t3-{p}-prod" if f is None else devname(f, p)) for v, f in DV):
            js = runs(nm, DS, budget(T3S, p))
            sp = [speedup(j) for j in js]
            tot[v] += sp
            m = mean(sp)
            dr = "/".join(f"{j['choices']['drop']:.2f}" if j else "—" for j in js)
            cells.append(" ".join(fmt(x) for x in sp) + f"; **{fmt(m)}** ({dr})")
        L.append(f"| {p} | {budget(T3S, p):g} | " + " | ".join(cells) + " |")
    L.append("| mean of the 12 runs | | " + " | ".join(f"**{fmt(mean(tot[v]))}**" for v, _ in DV) + " |")
    L.append("")

# ---------------- dev set: variants, each against its own untrained control (scripts/paper-mmap.sh's dev part)
DEVV_TEXT = {"hp50": "`--heuristic-prior 0.5` (the Q normalisation's floor as in Table 3, 100 / buffers)",
             "hp50f1": "`--heuristic-prior 0.5 --minmax-floor 1`",
             "hp50f2": "`--heuristic-prior 0.5 --minmax-floor 2`",
             "azhp50f1": "`--heuristic-prior 0.5 --minmax-floor 1 --model true` (AlphaZero mode with the prior)"}


def devvariants():
    """dev-<v>-untrained-<program>-s1.json present: variant v (with its own control), in DEVV_TEXT's order, then by name"""
    names = sorted({os.path.basename(f)[4:-len("-untrained-") - len(DEVP[0]) - 8]
                    for f in glob.glob(os.path.join(D, f"dev-*-untrained-{DEVP[0]}-s1.json"))})
    return [v for v in DEVV_TEXT if v in names] + [v for v in names if v not in DEVV_TEXT]


DEVV = devvariants()
if DEVV:
    DS = ["1", "2", "3"]
    L.append(f"## Dev set: the heuristic's move as a prior, each variant against its own untrained control (seeds {', '.join(DS)})\n")
    L.append("The same dev set, programs and budgets (MuZero-prod, Table 3's settings). Each variant adds its options to "
             "Table 3's; its untrained control adds the same options and `--train-every 1000000000` (no training step). "
             "`--heuristic-prior W` mixes a one-hot of the env heuristic's move at the game's state into the search's root "
             "prior, P <- (1 - W) P + W onehot; `--minmax-floor F` is the floor of the per-node Q normalisation in scaled units "
             "(the heuristic's whole game is 100; Table 3's floor is 100 / buffers, 0.04-0.1 here), so a learned Q difference "
             "must be of the order of F to outweigh the prior. Cell: speedup over the heuristic per seed, then the mean. "
             "\"pairs\": program-seed pairs where the trained agent is above / below its control (by more than 0.0005).\n")
    for v in DEVV:
        L.append(f"- `{v}`: {DEVV_TEXT.get(v, v)}")
    L.append("")
    L.append("| variant | program | CPU s | trained | untrained control | pairs above / below |")
    L.append("|---|---|---|---|---|---|")
    for v in DEVV:
        tt, tu, up, dn = [], [], 0, 0
        for p in DEVP:
            st = [speedup(j) for j in runs(f"dev-{v}-{p}", DS, budget(T3S, p))]
            su = [speedup(j) for j in runs(f"dev-{v}-untrained-{p}", DS, budget(T3S, p))]
            tt += st
            tu += su
            for a, b in zip(st, su):
                if a is not None and b is not None:
                    up += a > b + 5e-4
                    dn += a < b - 5e-4
            c = lambda xs: " ".join(fmt(x) for x in xs) + f"; **{fmt(mean(xs))}**"
            L.append(f"| {v} | {p} | {budget(T3S, p):g} | {c(st)} | {c(su)} | |")
        L.append(f"| {v} | mean of the {len(tt)} runs | | **{fmt(mean(tt))}** | **{fmt(mean(tu))}** | {up} / {dn} |")
    L.append("")

# ---------------- Table 3 and Table 2 with a variant (the t3v / t2v parts), each against its own untrained control
def variants(prefix, prog):
    """variant names v with <prefix>-<prog>-v-untrained-s*.json present"""
    fs = glob.glob(os.path.join(D, f"{prefix}-{prog}-*-untrained-s*.json"))
    return sorted({os.path.basename(f)[len(prefix) + len(prog) + 2:].rsplit("-untrained-s", 1)[0] for f in fs})


def vseeds(prefix, progs, v, seeds):
    """the seeds with a run of the variant and of its control on every program"""
    return [sd for sd in seeds if all(load(f"{prefix}-{p}-{v}-s{sd}") and load(f"{prefix}-{p}-{v}-untrained-s{sd}") for p in progs)]


def summary_row(label, xs):
    v = [x for x in xs if x is not None]
    if not v:
        return f"| {label} | — | — | — | 0/{len(xs)} | 0/{len(xs)} |"
    return (f"| {label} | {sum(v) / len(v):.4f} | {max(v):.4f} | {min(v):.4f} | {sum(1 for x in v if x > 1)}/{len(xs)} | "
            f"{sum(1 for x in v if x > 1.005)}/{len(xs)} |")


for v in variants("t3", T3P[0]):
    VS = vseeds("t3", T3P, v, T3SEEDS)
    if not VS:
        continue
    L.append(f"## Table 3 with `{v}` ({DEVV_TEXT.get(v, v)}), against its own untrained control (seeds {', '.join(VS)})\n")
    L.append(f"The same programs, settings and CPU budgets as Table 3 (MuZero-prod runs; the speedup is the agent's own best game's, "
             f"as in Table 3's MuZero column), with the variant's options; its untrained control adds the same options and "
             f"`--train-every 1000000000`. The last column is Table 3's MuZero (no prior) over the same seeds. \"pairs\": seeds where "
             f"the trained agent is above / below its control (by more than 0.0005).\n")
    L.append(f"| program | CPU s | {v} games per seed | {v} speedup | untrained control speedup | pairs above / below | MuZero (Table 3) |")
    L.append("|---|---|---|---|---|---|---|")
    at, au, am, up, dn = [], [], [], 0, 0
    for p in T3P:
        t = budget(T3S, p)
        jt, ju = runs(f"t3-{p}-{v}", VS, t), runs(f"t3-{p}-{v}-untrained", VS, t)
        st, su = [speedup(j) for j in jt], [speedup(j) for j in ju]
        sm = [speedup(j) for j in runs(f"t3-{p}-prod", VS, t)]
        u = sum(1 for a, b in zip(st, su) if a is not None and b is not None and a > b + 5e-4)
        d = sum(1 for a, b in zip(st, su) if a is not None and b is not None and a < b - 5e-4)
        up, dn = up + u, dn + d
        at.append(mean(st))
        au.append(mean(su))
        am.append(mean(sm))
        g = "+".join(str(j["games_completed"]) if j else "—" for j in jt)
        L.append(f"| {p} | {t:g} | {g} | {msd(st, 4)} | {msd(su, 4)} | {u} / {d} | {fmt(mean(sm), 4)} |")
    L.append("")
    L.append("| agent | mean | max | min | programs improved (mean speedup > 1) | by more than 0.5% (> 1.005) |")
    L.append("|---|---|---|---|---|---|")
    L.append(summary_row(f"MuZero with `{v}`", at))
    L.append(summary_row(f"its untrained control", au))
    L.append(summary_row(f"MuZero (Table 3, same seeds)", am))
    L.append(f"\nPairs (program, seed) where the trained agent is above / below its control: {up} / {dn} of {len(T3P) * len(VS)}. "
             f"Issue 25's target: at least 8 of 14 programs improved and a mean speedup of at least 1.0.\n")
    held = [x for p, x in zip(T3P, at) if p not in DEVP]
    if held and len(held) < len(at):
        hv = [x for x in held if x is not None]
        L.append(f"The variant's options were chosen on the dev set ({len(T3P) - len(held)} of these programs). On the other "
                 f"{len(held)} programs, held out from that choice: {sum(1 for x in hv if x > 1)}/{len(held)} improved, mean "
                 f"{sum(hv) / len(hv):.4f}.\n")

T2V = sorted({v for p in T2P for v in variants("t2", p)})
for v in T2V:
    VS = vseeds("t2", T2P, v, SEEDS)
    if not VS:
        continue
    L.append(f"## Table 2 with `{v}` ({DEVV_TEXT.get(v, v)}), against its own untrained control, ES and random (seeds {', '.join(VS)})\n")
    L.append("Table 2's programs, settings and CPU budgets (best return / heuristic return); ES, random and MuZero without the prior "
             "are Table 2's own runs of the same seeds. Issue 25's target: MuZero >= ES and > random (means over the seeds).\n")
    L.append(f"| program | CPU s | {v} | its untrained control | seeds above / below the control | MuZero (Table 2) | ES | random | "
             f"{v} >= ES and > random |")
    L.append("|---|---|---|---|---|---|---|---|---|")
    met = 0
    for p in T2P:
        t = budget(T2S, p)
        cols = [[rel(j) for j in runs(nm, VS, t)] for nm in (f"t2-{p}-{v}", f"t2-{p}-{v}-untrained", f"t2-{p}-muzero", f"t2-{p}-es", f"t2-{p}-random")]
        m = [mean(c) for c in cols]
        ok = None not in (m[0], m[3], m[4]) and m[0] >= m[3] and m[0] > m[4]
        met += ok
        u = sum(1 for a, b in zip(cols[0], cols[1]) if a is not None and b is not None and a > b + 5e-4)
        d = sum(1 for a, b in zip(cols[0], cols[1]) if a is not None and b is not None and a < b - 5e-4)
        L.append(f"| {p} | {t:g} | {msd(cols[0])} | {msd(cols[1])} | {u} / {d} | " + " | ".join(msd(c) for c in cols[2:]) +
                 f" | {'yes' if ok else 'no'} |")
    L.append(f"\nMet on {met} of {len(T2P)} programs (target: 3 of 4).\n")

# ---------------- speedup against CPU budget
BAGENTS = (("muzero", "MuZero"), ("untrained", "untrained control"), ("az", "AlphaZero mode"))


def bname(p, a, x):
    """the run of agent a at x times the Table 3 budget: x1 MuZero and AlphaZero mode are Table 3's runs"""
    if x == "1" and a == "muzero":
        return f"t3-{p}-prod"
    if x == "1" and a == "az":
        return f"t3-{p}-az"
    return f"b-{p}-{a}-x{x}"


bprogs = [p for p in BP if any(load(f"b-{p}-{a}-x{x}-s{sd}") for a, _ in BAGENTS for x in BM for sd in BSEEDS)]
if bprogs:
    L.append(f"## Speedup against CPU budget (multiples {', '.join('x' + x for x in BM)} of Table 3's budget, seeds {', '.join(BSEEDS)})\n")
    L.append("Issue 25: \"if a target is out of reach on 2 cores, say what budget reaches it and show the curve\". MuZero (as in "
             "Table 3, `--mode prod`), its untrained control (`--train-every 1000000000`) and AlphaZero mode (`--model true`) at "
             "multiples of Table 3's CPU budget, each multiple a separate run (the games in flight are fitted to each run's own "
             "budget). The x1 MuZero and AlphaZero-mode cells are Table 3's runs of the same seeds. Cell: speedup over the "
             "heuristic (mean ± sd [95% CI]) of the seeds that completed a game, then how many seeds are above 1.\n")
    L.append("| program | agent | " + " | ".join(f"x{x}" for x in BM) + " |")
    L.append("|---|---|" + "---|" * len(BM))
    bpan = []
    for i, p in enumerate(bprogs):
        lines = []
        for a, lab in BAGENTS:
            cells, pts = [], []
            for x in BM:
                t = round(budget(T3S, p) * float(x), 1)
                js = runs(bname(p, a, x), BSEEDS, t)
                sp = [speedup(j) for j in js]
                v = [y for y in sp if y is not None]
                cells.append(f"{msd(sp, 3)}, {sum(1 for y in v if y > 1)}/{len(sp)} > 1" if any(js) else "—")
                if v:
                    pts.append((t, sum(v) / len(v), v))
            if any(c != "—" for c in cells):
                L.append(f"| {p} | {lab} | " + " | ".join(cells) + " |")
                lines.append((a, pts))
        bpan.append(budget_panel((i % 3) * 300, 0, 290, 230, p, lines))
    svg(os.path.join(out, "budget.svg"), bpan, 300 * min(3, len(bprogs)), 230 * ((len(bprogs) + 2) // 3))
    L.append("\n![speedup against CPU budget](mmap/budget.svg)\n")
    L.append("Speedup over the heuristic against CPU seconds per run (log scale): the mean over the seeds (line) and each "
             "seed (dots); the dashed line is the heuristic (1.0).\n")

# ---------------- Figure 7
if any(any(runs(f"f7-inference_resnet-{m}", F7SEEDS)) for m in ("muzero", "az", "search", "learn")):
    L.append(f"## Figure 7: ablation on inference_resnet ({T7:g} CPU s each, seeds {', '.join(F7SEEDS)})\n")
    L.append("| agent | best return / heuristic | games | env steps | simulations | train steps |")
    L.append("|---|---|---|---|---|---|")
    series = []
    heur = 1.0
    for m, lab in (("muzero", "MuZero (search + learning)"), ("az", "AlphaZero mode (search over the true game + learning)"),
                   ("search", "search only (MCTS over the true game, no learning)"), ("learn", "learning only (no MCTS)")):
        js = runs(f"f7-inference_resnet-{m}", F7SEEDS)
        ok = [j for j in js if j]
        if ok:
            heur = ok[0]["heuristic_return"]
            avg = lambda k: f"{mean([j[k] for j in ok]):.0f}"
            L.append(f"| {lab} | {msd([rel(j) for j in js])} | {avg('games_completed')} | {avg('env_steps')} | {avg('simulations')} | {avg('train_steps')} |")
        series += [(m, curve(f"f7-inference_resnet-{m}-s{sd}")) for sd in F7SEEDS]
    prov = provenance([j for m in ("muzero", "az", "search", "learn") for j in runs(f"f7-inference_resnet-{m}", F7SEEDS)])
    if prov:
        L.append("\n" + prov)
    svg(os.path.join(out, "figure7.svg"), [panel(0, 0, 420, 240, "inference_resnet: ablation", series, T7, heur)], 420, 240)
    L.append("\n![Figure 7](mmap/figure7.svg)\n")
    L.append("Games, env steps, simulations and train steps are means over the seeds.\n")

if CUT:
    L.append("Runs left out because they stopped before 90% of their CPU budget (the wall-clock deadline or cap cut them; their "
             "data stay in mmap/data): " + ", ".join(f"`{c}`" for c in CUT) + ".\n")
with open(os.path.join(os.path.dirname(out.rstrip("/")) or ".", os.path.basename(out.rstrip("/")) + ".md"), "w") as f:
    f.write("\n".join(L) + "\n")
    notes = out.rstrip("/") + "-notes.md"
    if os.path.exists(notes):
        with open(notes) as n:
            f.write("\n" + n.read())
