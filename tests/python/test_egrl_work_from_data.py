"""scripts/egrl-work-from-data.py rebuilds a paper-egrl work directory from a page's committed
data; `make paper-egrl`'s report step (EGRL_REPORT_ONLY) over that directory writes the same data
files back byte for byte, so a reproduction can be extended with more seeds."""

import filecmp
import json
import os
import sqlite3
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DATA = os.path.join(ROOT, "docs", "results", "egrl-nnpi")
SCRIPT = os.path.join(ROOT, "scripts", "egrl-work-from-data.py")


class EgrlWorkFromData(unittest.TestCase):
    def test_round_trip_through_paper_egrl(self):
        b = os.environ.get("HWGYM_BIN")
        if not b or not os.access(os.path.join(b, "hwgym-server"), os.X_OK):
            self.skipTest("HWGYM_BIN with hwgym-server is required (run via make test-py)")
        meta = json.load(open(os.path.join(DATA, "meta.json")))
        with tempfile.TemporaryDirectory() as tmp:
            work, out = os.path.join(tmp, "work"), os.path.join(tmp, "out")
            p = subprocess.run([sys.executable, SCRIPT, DATA, work], capture_output=True, text=True, timeout=120)
            self.assertEqual(p.returncode, 0, p.stderr)
            env = dict(os.environ, BUILD=os.path.dirname(b), EGRL_HW=meta["hw"], EGRL_MODES=" ".join(meta["modes"]),
                       EGRL_SEARCH=" ".join(meta["search"]), EGRL_SEEDS=" ".join(meta["seeds"]), EGRL_JOBS="1",
                       EGRL_WORK=work, EGRL_DATA=os.path.join(out, "d"), EGRL_OUT=out, EGRL_PAGE="p.md",
                       EGRL_REPORT_ONLY="1", EGRL_TRAIN_SECONDS=str(meta["train_s"]), OPENBLAS_NUM_THREADS="1")
            p = subprocess.run(["bash", os.path.join(ROOT, "scripts", "paper-egrl.sh")], cwd=ROOT, env=env,
                               capture_output=True, text=True, timeout=600)
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertIn("0 runs", p.stderr)  # nothing was rerun
            for f in ("runs.csv.gz", "summaries.jsonl.gz", "transfer.tsv.gz", "maps.json", "bounds.json"):
                self.assertTrue(filecmp.cmp(os.path.join(out, "d", f), os.path.join(DATA, f), shallow=False),
                                "%s differs after the round trip" % f)

    def test_files_and_no_overwrite(self):
        with tempfile.TemporaryDirectory() as work:
            keep = os.path.join(work, "resnet50.sa.1.json")
            with open(keep, "w") as f:
                f.write("{}\n")
            p = subprocess.run([sys.executable, SCRIPT, DATA, work], capture_output=True, text=True, timeout=120)
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertEqual(open(keep).read(), "{}\n", "an existing run was overwritten")
            self.assertFalse(os.path.exists(os.path.join(work, "resnet50.sa.1.db")))
            # a search run's trials, in evaluation order, with the speedup in the metrics
            db = sqlite3.connect(os.path.join(work, "resnet50.sa.2.db"))
            rows = db.execute("SELECT id, metrics FROM trials ORDER BY id").fetchall()
            db.close()
            self.assertEqual(len(rows), 4000)
            self.assertEqual(rows[0][0], 1)
            self.assertIn("speedup", json.loads(rows[0][1]))
            # a learning run's curve and its Figure 5 rows (both decodings, one per target), and the
            # untrained control's
            with open(os.path.join(work, "bert_base.egrl.1.csv")) as f:
                self.assertEqual(f.readline(), "sample,worker,reward,speedup\n")
            for src in ("bert_base", "untrained"):
                for dec in ("argmax", "capacity"):
                    with open(os.path.join(work, "%s.egrl.1.transfer.%s" % (src, dec))) as f:
                        rows = [r.split("\t") for r in f.read().splitlines()]
                    self.assertEqual(len(rows), 3)
                    self.assertEqual({(r[0], r[3]) for r in rows}, {(src, dec)})

    def test_missing_data_names_the_file(self):
        with tempfile.TemporaryDirectory() as tmp:
            p = subprocess.run([sys.executable, SCRIPT, tmp, os.path.join(tmp, "w")], capture_output=True, text=True,
                               timeout=60)
            self.assertNotEqual(p.returncode, 0)
            self.assertIn("no meta.json", p.stderr)


if __name__ == "__main__":
    unittest.main()
