"""`hwgym leaderboard` end to end on the tiny suite (leaderboard/tiny.json, its "quick" block:
2 diag-v0 configs x {random, GA, PPO, PPO learning off} x 2 seeds, 64 evaluations each): the
cells land in the SQLite file with their trials, the statistics on the page equal an independent
recomputation from the trials in numpy (normalisation, IQM, probability of improvement),
--resume runs exactly the missing cells, --from-db recomputes the same results, bad suites are
refused naming the field, and the HTML page renders in headless chromium (skipped without it).
The statistics' hand-computed unit cases are in tests/c/leaderboard."""

import json
import os
import shutil
import sqlite3
import subprocess
import tempfile
import unittest

import numpy as np

from tests.python._support import REPO, ServerProcess
from tests.python.test_report_html import check_renders

TINY = os.path.join(REPO, "leaderboard", "tiny.json")


def load(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def iqm(x):
    x = np.sort(np.asarray(x, dtype=float))
    k = len(x) // 4
    return float(np.mean(x[k:len(x) - k]))


def poi(xs, ys):
    """P(X > Y) averaged over tasks, ties 1/2 (xs, ys: lists of per-task arrays)."""
    ps = []
    for x, y in zip(xs, ys):
        x, y = np.asarray(x)[:, None], np.asarray(y)[None, :]
        ps.append(float(np.mean((x > y) + 0.5 * (x == y))))
    return float(np.mean(ps))


class Leaderboard(unittest.TestCase):
    def setUp(self):
        d = os.environ.get("HWGYM_BIN")
        if not d or not os.access(os.path.join(d, "hwgym"), os.X_OK):
            self.skipTest("HWGYM_BIN with hwgym and the agents is required (run via make test-py)")
        self.hw = os.path.join(d, "hwgym")
        self.tmp = tempfile.mkdtemp(prefix="hwgym-lb-")
        self.out = os.path.join(self.tmp, "out")

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def lb(self, *args, check=True):
        r = subprocess.run([self.hw, "leaderboard"] + list(args), capture_output=True, text=True, timeout=600)
        if check:
            self.assertEqual(r.returncode, 0, r.stderr[-3000:])
        return r

    def run_tiny(self, *extra):
        r = self.lb(TINY, "--quick", "--out", self.out, "--quiet", *extra)
        return json.loads(r.stdout)

    def recompute(self, db):
        """normalised scores at the large budget per (env, variant): {env: {variant: [scores by seed]}}"""
        suite = load(TINY)
        evals = suite["quick"]["budget"]["evals"]
        con = sqlite3.connect(db)
        best = {}
        for env, variant, seed, run_id in con.execute(
                "SELECT env_name, variant, seed, run_id FROM leaderboard_cells WHERE status = 0"):
            rewards = [r for (r,) in con.execute("SELECT reward FROM trials WHERE run_id = ? ORDER BY id LIMIT ?", (run_id, evals))]
            best.setdefault(env, {}).setdefault(variant, {})[seed] = max(rewards)
        con.close()
        norm = {}
        for e in suite["envs"]:
            b = best[e["name"]]
            lo = np.mean(list(b["random"].values()))
            hi = e.get("optimum", max(max(v.values()) for v in b.values()))
            norm[e["name"]] = {v: [(s - lo) / (hi - lo) if hi > lo else float(s > lo) for _, s in sorted(seeds.items())]
                               for v, seeds in b.items()}
        return norm

    def test_run_statistics_resume_and_pages(self):
        s = self.run_tiny()
        self.assertEqual(s["cells"], {"total": 16, "done": 16, "failed": 0})
        db = s["db"]
        con = sqlite3.connect(db)
        self.assertEqual(con.execute("SELECT count(*) FROM leaderboard_cells").fetchone()[0], 16)
        # every cell: one run in the project's trials schema with its 64 evaluations
        for key, run_id, evals in con.execute("SELECT key, run_id, evals FROM leaderboard_cells"):
            self.assertEqual(evals, 64, key)
            self.assertEqual(con.execute("SELECT count(*) FROM trials WHERE run_id = ?", (run_id,)).fetchone()[0], 64, key)
        agents = {a for (a,) in con.execute("SELECT agent FROM runs")}
        self.assertEqual(agents, {"hwgym-search --algo random", "hwgym-search --algo ga", "hwgym-ppo"})
        # the learning-off control really ran with learning off
        cfg = json.loads(con.execute("SELECT r.agent_config FROM runs r JOIN leaderboard_cells c ON c.run_id = r.id "
                                     "WHERE c.variant = 'ppo~off' LIMIT 1").fetchone()[0])
        self.assertEqual(cfg["lr"], 0.0)
        con.close()

        res = load(s["json"])
        norm = self.recompute(db)
        fam = res["families"][0]
        self.assertEqual(fam["family"], "diag-v0")
        envs = [e["name"] for e in load(TINY)["envs"]]
        for v in fam["variants"]:
            pooled = [x for e in envs for x in norm[e][v["variant"]]]
            self.assertAlmostEqual(v["large"]["point"], iqm(pooled), places=9, msg=v["variant"])
            self.assertLessEqual(v["large"]["lo"], v["large"]["point"] + 1e-12)
            self.assertGreaterEqual(v["large"]["hi"], v["large"]["point"] - 1e-12)
            self.assertEqual(v["runs"], 4)
        # random search is 0 by construction at the large budget: its mean is the zero point
        rnd = [x for e in envs for x in norm[e]["random"]]
        self.assertAlmostEqual(np.mean(rnd), 0.0, places=9)
        learn = [l for l in res["learning"] if l["agent"] == "ppo"][0]
        self.assertAlmostEqual(learn["poi_large"]["point"],
                               poi([norm[e]["ppo"] for e in envs], [norm[e]["ppo~off"] for e in envs]), places=9)
        self.assertIn(learn["verdict"], ("beats", "not shown", "worse"))
        paper = res["papers"][0]
        ga = [r for r in paper["rows"] if r["baseline"] == "ga"][0]
        self.assertAlmostEqual(ga["poi_large"]["point"], poi([norm[e]["ppo"] for e in envs], [norm[e]["ga"] for e in envs]), places=9)

        md = read(s["md"])
        for part in ("## Best agent per family", "## Where learning helps", "PPO (learning off)", "hwgym leaderboard --from-db"):
            self.assertIn(part, md)
        if learn["verdict"] != "beats":
            self.assertIn("FLAG", md)

        # resume: nothing to run; then two cells removed are run again, and only those
        r = self.lb(TINY, "--quick", "--out", self.out, "--resume")
        self.assertIn("16 already done, 0 to run", r.stderr)
        con = sqlite3.connect(db)
        con.execute("DELETE FROM leaderboard_cells WHERE key IN ('diag-4x8/ga/1', 'diag-6x6/ppo~off/0')")
        con.commit()
        con.close()
        r = self.lb(TINY, "--quick", "--out", self.out, "--resume")
        self.assertIn("14 already done, 2 to run", r.stderr)
        self.assertIn("diag-4x8/ga/1", r.stderr)
        self.assertIn("diag-6x6/ppo~off/0", r.stderr)
        res2 = load(s["json"])
        # same seeds, same trials: the statistics are unchanged
        self.assertEqual(json.dumps(res2["families"], sort_keys=True), json.dumps(res["families"], sort_keys=True))

        # an existing file without --resume is refused; --from-db recomputes the same results
        r = self.lb(TINY, "--quick", "--out", self.out, check=False)
        self.assertEqual(r.returncode, 2)
        self.assertIn("--resume", r.stderr)
        out2 = os.path.join(self.tmp, "again")
        self.lb("--from-db", db, "--out", out2, "--md", os.path.join(self.tmp, "lb.md"))
        res3 = load(os.path.join(out2, "leaderboard.json"))
        self.assertEqual(json.dumps(res3["families"], sort_keys=True), json.dumps(res2["families"], sort_keys=True))
        self.assertTrue(os.path.exists(os.path.join(self.tmp, "lb.md")))
        # the slim copy (to commit beside a page) gives the same results, and is smaller
        slim = os.path.join(self.tmp, "slim.db")
        self.lb("--from-db", db, "--out", os.path.join(self.tmp, "x"), "--slim", slim)
        self.lb("--from-db", slim, "--out", os.path.join(self.tmp, "y"))
        res4 = load(os.path.join(self.tmp, "y", "leaderboard.json"))
        self.assertEqual(json.dumps(res4["families"], sort_keys=True), json.dumps(res2["families"], sort_keys=True))
        self.assertLess(os.path.getsize(slim), os.path.getsize(db))
        # the curves copy (no trials, each run's curve) gives the same pages, byte for byte
        curves = os.path.join(self.tmp, "curves.db")
        self.lb("--from-db", db, "--out", os.path.join(self.tmp, "x2"), "--curves", curves)
        self.lb("--from-db", curves, "--out", os.path.join(self.tmp, "y2"))
        for f in ("leaderboard.json", "leaderboard.md"):
            self.assertEqual(read(os.path.join(self.tmp, "x2", f)).replace("x2", "y2").replace(db, curves),
                             read(os.path.join(self.tmp, "y2", f)), f)
        self.assertLess(os.path.getsize(curves), os.path.getsize(slim))
        r = self.lb("--from-db", db, "--out", os.path.join(self.tmp, "x3"), "--curves", curves, check=False)
        self.assertEqual(r.returncode, 1)
        self.assertIn("--curves", r.stderr)
        self.assertIn("exists", r.stderr)

        html = read(s["html"])
        self.assertNotIn("<script", html)
        for part in ("<svg", "against evaluations", "against agent CPU seconds", "performance profile", "Where learning helps"):
            self.assertIn(part, html)
        check_renders(self, s["html"], self.tmp)

    def test_two_given_endpoints_spread_the_cells(self):
        a, b = ServerProcess(workers=1), ServerProcess(workers=1)
        try:
            s = self.run_tiny("--endpoint", a.endpoint, "--endpoint", b.endpoint)
        finally:
            a.stop()
            b.stop()
        con = sqlite3.connect(s["db"])
        eps = dict(con.execute("SELECT endpoint, count(*) FROM leaderboard_cells GROUP BY endpoint").fetchall())
        con.close()
        self.assertEqual(eps, {a.endpoint: 8, b.endpoint: 8})

    def test_cpu_cap_stops_a_run_and_keeps_its_trials(self):
        suite = load(TINY)
        suite.update(seeds=1, budget={"evals": 10000000, "small": 100, "cpu_s": 0.5})
        suite["envs"] = [dict(suite["envs"][0], agents=["random", "ppo"])]
        suite["agents"]["random"]["args"] = ["--algo", "random", "--batch", "4"]
        suite["papers"] = []
        path = os.path.join(self.tmp, "cap.json")
        with open(path, "w", encoding="utf-8") as f:
            json.dump(suite, f)
        r = self.lb(path, "--out", self.out, "--local")
        self.assertIn("stopped at the CPU cap", r.stderr)
        con = sqlite3.connect(os.path.join(self.out, "leaderboard.db"))
        rows = con.execute("SELECT key, cut, cpu_s, evals, status FROM leaderboard_cells").fetchall()
        con.close()
        self.assertEqual(len(rows), 3)
        for key, cut, cpu, evals, status in rows:
            self.assertEqual((cut, status), ("cpu", 0), key)
            self.assertGreaterEqual(cpu, 0.5, key)
            self.assertLess(cpu, 5, key)
            self.assertGreater(evals, 0, key)  # the trial logger flushed on the runner's SIGTERM

    def test_bad_suites_are_refused_naming_the_field(self):
        suite = load(TINY)
        cases = [
            (lambda s: s["envs"][0]["agents"].append("nope"), "envs[0].agents[3]"),
            (lambda s: s["envs"][1].update(random="ga2"), "envs[1].random"),
            (lambda s: s["agents"]["ga"].update(bin="/bin/sh"), "agents.ga.bin"),
            (lambda s: s.update(seeds=0), "seeds"),
            (lambda s: s["budget"].update(cpu_s=-1), "budget.cpu_s"),
            (lambda s: s["envs"][0].update(score="median"), "envs[0].score"),
            (lambda s: s["papers"][0].update(baselines=["zz"]), "papers[0].baselines[0]"),
        ]
        for i, (edit, field) in enumerate(cases):
            bad = json.loads(json.dumps(suite))
            edit(bad)
            path = os.path.join(self.tmp, "bad%d.json" % i)
            with open(path, "w", encoding="utf-8") as f:
                json.dump(bad, f)
            r = self.lb(path, "--out", os.path.join(self.tmp, "b%d" % i), check=False)
            self.assertEqual(r.returncode, 2, field)
            self.assertIn(field, r.stderr)
        r = self.lb(os.path.join(self.tmp, "missing.json"), "--out", self.out, check=False)
        self.assertEqual(r.returncode, 2)
        r = self.lb("--from-db", os.path.join(self.tmp, "missing.db"), "--out", self.out, check=False)
        self.assertEqual(r.returncode, 1)


    def test_slurm_array_path_with_a_stand_in_sbatch(self):
        """--slurm end to end without a cluster: a stand-in sbatch runs each array task's script at
        once (SLURM_ARRAY_TASK_ID set, its log where --output says) except index 3, which it
        drops as a node failure would; a stand-in squeue lists nothing. The real Slurm run is in
        tests/cluster/slurm.sh (the cluster group)."""
        fake = os.path.join(self.tmp, "fakebin")
        os.makedirs(fake)
        with open(os.path.join(fake, "sbatch"), "w", encoding="utf-8") as f:
            f.write("#!/bin/sh\n"
                    "for a in \"$@\"; do case \"$a\" in --array=*) arr=${a#--array=}; arr=${arr%%%*};; "
                    "--output=*) out=${a#--output=};; esac; script=$a; done\n"
                    "echo \"$@\" > \"$(dirname \"$script\")/sbatch.args\"\n"
                    "i=${arr%-*}; while [ $i -le ${arr#*-} ]; do [ $i = 3 ] || "
                    "SLURM_ARRAY_TASK_ID=$i sh \"$script\" > \"$(echo \"$out\" | sed \"s/%a/$i/\")\" 2>&1; i=$((i+1)); done\n"
                    "echo 4242\n")
        with open(os.path.join(fake, "squeue"), "w", encoding="utf-8") as f:
            f.write("#!/bin/sh\nexit 0\n")
        for b in ("sbatch", "squeue"):
            os.chmod(os.path.join(fake, b), 0o755)
        env = dict(os.environ, PATH=fake + os.pathsep + os.environ["PATH"])
        r = subprocess.run([self.hw, "leaderboard", TINY, "--quick", "--slurm", "--jobs", "3", "--sbatch", "--partition=x --time=5",
                            "--out", self.out], capture_output=True, text=True, timeout=600, env=env)
        self.assertEqual(r.returncode, 0, r.stderr[-3000:])
        self.assertIn("submitted Slurm job 4242 (16 array tasks", r.stderr)
        con = sqlite3.connect(os.path.join(self.out, "leaderboard.db"))
        rows = {k: (st, ev, ep, err) for k, st, ev, ep, err in con.execute("SELECT key, status, evals, endpoint, error FROM leaderboard_cells")}
        con.close()
        self.assertEqual(len(rows), 16)
        dropped = "diag-4x8/ppo~off/0"  # the fourth cell: array index 3
        st, ev, ep, err = rows.pop(dropped)
        self.assertEqual((st, ev, ep), (1, 0, "slurm 4242_3"))
        self.assertIn("Slurm array task 4242_3 left no result", err)
        for key, (st2, ev2, ep2, _) in rows.items():
            self.assertEqual((st2, ev2), (0, 64), key)
            self.assertTrue(ep2.startswith("slurm 4242_"), ep2)
        # sbatch got the throttle and the extra options; the task files are gone (the dropped task
        # never wrote its log: its error says so); --resume --retry-failed runs that cell again
        slurm = os.path.join(self.out, "work", "slurm")
        args = read(os.path.join(slurm, "sbatch.args")).split()
        for a in ("--array=0-15%3", "--partition=x", "--time=5", "--job-name=hwgym-leaderboard"):
            self.assertIn(a, args)
        self.assertEqual(os.listdir(slurm), ["sbatch.args"])
        self.assertIn(os.path.join("work", "slurm", "task-3.out") + ": empty log", err)
        r = subprocess.run([self.hw, "leaderboard", TINY, "--quick", "--slurm", "--resume", "--retry-failed", "--out", self.out],
                           capture_output=True, text=True, timeout=600, env=env)
        self.assertEqual(r.returncode, 0, r.stderr[-3000:])
        self.assertIn("15 already done, 1 to run as a Slurm job array", r.stderr)

    def test_one_cell_and_the_slurm_options(self):
        r = self.lb(TINY, "--quick", "--cell", "diag-6x6/ga/1", "--out", self.out, "--quiet")
        self.assertEqual(json.loads(r.stdout)["cell"], "diag-6x6/ga/1")
        con = sqlite3.connect(os.path.join(self.out, "leaderboard.db"))
        self.assertEqual(con.execute("SELECT key, status, evals FROM leaderboard_cells").fetchall(), [("diag-6x6/ga/1", 0, 64)])
        con.close()
        self.assertFalse(os.path.exists(os.path.join(self.out, "index.html")), "--cell writes no pages")
        r = self.lb(TINY, "--quick", "--cell", "nope/ga/1", "--out", self.out, "--fresh", check=False)
        self.assertEqual(r.returncode, 1)
        self.assertIn("--cell nope/ga/1: the suite has no such cell", r.stderr)
        for args, msg in ((["--slurm", "--cell", "x"], "not with --slurm"), (["--sbatch", "-p x"], "--sbatch needs --slurm"),
                          (["--slurm", "--servers", "2"], "every array task starts its own server")):
            r = self.lb(TINY, "--quick", "--out", self.out, "--fresh", *args, check=False)
            self.assertEqual(r.returncode, 2, args)
            self.assertIn(msg, r.stderr)
        r = subprocess.run([self.hw, "leaderboard", TINY, "--quick", "--slurm", "--out", self.out, "--fresh"], capture_output=True,
                           text=True, timeout=60, env=dict(os.environ, PATH=os.path.join(self.tmp, "nowhere")))
        self.assertEqual(r.returncode, 1)
        self.assertIn("cannot run sbatch", r.stderr)


    def recompute_committed(self, dirname, dbname, md):
        """a committed page and its json from its committed data (DIR/DB.gz), with the command the
        page prints, run from a copy of the same relative paths."""
        import gzip
        rel = os.path.join("docs", "results", dirname)
        os.makedirs(os.path.join(self.tmp, rel))
        with gzip.open(os.path.join(REPO, rel, dbname + ".gz"), "rb") as f, open(os.path.join(self.tmp, rel, dbname), "wb") as g:
            shutil.copyfileobj(f, g)
        shutil.copy(os.path.join(REPO, rel, "note.md"), os.path.join(self.tmp, rel, "note.md"))
        mdp = os.path.join("docs", "results", md)
        r = subprocess.run([self.hw, "leaderboard", "--from-db", os.path.join(rel, dbname), "--out", rel, "--md", mdp, "--note",
                            os.path.join(rel, "note.md")], capture_output=True, text=True, timeout=300, cwd=self.tmp)
        self.assertEqual(r.returncode, 0, r.stderr[-2000:])
        self.assertIn("--from-db " + os.path.join(rel, dbname), read(os.path.join(REPO, mdp)), "the page prints this command")
        for f in (mdp, os.path.join(rel, "leaderboard.json"), os.path.join(rel, "index.html")):
            self.assertEqual(read(os.path.join(self.tmp, f)), read(os.path.join(REPO, f)), f)

    def test_committed_quick_page_recomputes_byte_for_byte(self):
        self.recompute_committed("leaderboard", "quick.db", "leaderboard.md")

    def test_committed_headline_page_recomputes_byte_for_byte(self):
        """the headline page is computed from its curves copy (--curves: no trials)"""
        self.recompute_committed("leaderboard-headline", "headline-curves.db", "leaderboard-headline.md")

if __name__ == "__main__":
    unittest.main()
