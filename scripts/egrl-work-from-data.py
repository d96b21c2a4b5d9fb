#!/usr/bin/env python3
"""Rebuilds a `make paper-egrl` work directory (EGRL_WORK) from a page's committed data, so that
a reproduction can be extended (more seeds, another mode) without rerunning what is committed:

    python3 scripts/egrl-work-from-data.py docs/results/egrl-nnpi /tmp/egrl-nnpi
    EGRL_WORK=/tmp/egrl-nnpi EGRL_SEEDS="1 2 3 4 5" ... make paper-egrl   # runs only seeds 4 and 5

For every run in summaries.jsonl.gz it writes what scripts/paper-egrl.sh reads back: the run's
JSON summary (<w>.<mode>.<seed>.json; the best EGRL map of maps.json goes back into the run it
came from), its evaluations (<w>.<mode>.<seed>.csv for hwgym-egrl runs, a trials table in
<w>.<mode>.<seed>.db for hwgym-search runs) and each seed's Figure 5 rows
(<w>.egrl.<seed>.transfer.<decode>, <w> "untrained" for the control, which paper-egrl.sh keeps
instead of rerunning a policy that is not committed). The values are the committed ones (5 and 6 significant
digits), which paper-egrl.sh writes back unchanged. Existing files are not overwritten.
"""
import argparse
import csv
import gzip
import json
import os
import sqlite3
import sys

SEARCH_AGENT = "hwgym-search"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("data", help="a page's data directory (docs/results/egrl-nnpi)")
    ap.add_argument("work", help="the work directory to fill (EGRL_WORK)")
    a = ap.parse_args()
    for f in ("meta.json", "summaries.jsonl.gz", "runs.csv.gz"):
        if not os.path.exists(os.path.join(a.data, f)):
            sys.exit("egrl-work-from-data: %s: no %s" % (a.data, f))
    os.makedirs(a.work, exist_ok=True)
    maps = {}
    if os.path.exists(os.path.join(a.data, "maps.json")):
        maps = json.load(open(os.path.join(a.data, "maps.json")))
    runs = {}
    with gzip.open(os.path.join(a.data, "runs.csv.gz"), "rt") as f:
        for r in csv.DictReader(f):
            runs.setdefault((r["workload"], r["mode"], r["seed"]), []).append(r)
    summ = [json.loads(line) for line in gzip.open(os.path.join(a.data, "summaries.jsonl.gz"), "rt")]
    # the run each committed Figure 7 map came from: the first EGRL run (in the page's order) with
    # the workload's highest best_reward, as paper-egrl.sh picks it
    best_of = {}
    for j in summ:
        if j["mode"] == "egrl" and j.get("best_reward") is not None:
            b = best_of.get(j["workload"])
            if b is None or j["best_reward"] > b["best_reward"]:
                best_of[j["workload"]] = j
    wrote = 0
    for j in summ:
        w, m, s = j["workload"], j["mode"], str(j["seed"])
        base = os.path.join(a.work, "%s.%s.%s" % (w, m, s))
        if os.path.exists(base + ".json"):
            continue
        out = dict(j)
        if best_of.get(w) is j and w in maps:
            out["best_action"] = maps[w]
        rows = runs.get((w, m, s), [])
        if str(j.get("agent", "")).startswith(SEARCH_AGENT):
            db = sqlite3.connect(base + ".db")
            db.execute("CREATE TABLE trials (id INTEGER PRIMARY KEY, reward REAL, metrics TEXT)")
            for r in sorted(rows, key=lambda r: int(r["sample"])):
                rw = float(r["reward"])
                db.execute("INSERT INTO trials (id, reward, metrics) VALUES (?, ?, ?)",
                           (int(r["sample"]), None if rw != rw else rw, json.dumps({"speedup": float(r["speedup"])})))
            db.commit()
            db.close()
        else:
            with open(base + ".csv", "w") as f:
                f.write("sample,worker,reward,speedup\n")
                for r in rows:
                    f.write("%s,%s,%s,%s\n" % (r["sample"], r["worker"], r["reward"], r["speedup"]))
        with open(base + ".json", "w") as f:
            f.write(json.dumps(out) + "\n")
        wrote += 1
    tp = os.path.join(a.data, "transfer.tsv.gz")
    if os.path.exists(tp):
        per = {}
        for line in gzip.open(tp, "rt"):
            src, dst, s, dec, sp, rs, eps, nt = line.rstrip("\n").split("\t")
            res = {"best_speedup": float(sp), "best_metrics": {"rectified_speedup": float(rs), "eps": float(eps),
                                                               "reassigned_tensors": int(nt)}}
            per.setdefault("%s.egrl.%s.transfer.%s" % (src, s, dec), []).append("%s\t%s\t%s\t%s\t%s\n" % (src, dst, s, dec, json.dumps(res)))
        for name, lines in per.items():
            p = os.path.join(a.work, name)
            if not os.path.exists(p):
                with open(p, "w") as f:
                    f.write("".join(lines))
    print("egrl-work-from-data: %d runs written to %s" % (wrote, a.work), file=sys.stderr)


if __name__ == "__main__":
    main()
