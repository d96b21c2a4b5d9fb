"""`hwgym report DB --out DIR` in a real browser: Debian's headless chromium renders the page to a
PNG; the page must log nothing to the console, reference nothing on the network, and the PNG must
not be blank. Skipped (with the reason) when chromium or the hwgym binaries are absent."""

import json
import os
import re
import shutil
import struct
import subprocess
import tempfile
import unittest
import zlib


def chromium():
    for p in ("/usr/bin/chromium", "/usr/bin/chromium-browser", shutil.which("chromium") or ""):
        if p and os.access(p, os.X_OK):
            return p
    return None


def png_pixels_vary(path):
    """Decodes the PNG's IDAT stream (zlib) and returns how many distinct byte values the
    filtered scanlines hold: a blank (single-colour) page gives very few."""
    with open(path, "rb") as f:
        data = f.read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, width, height = 8, b"", 0, 0
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            width, height = struct.unpack(">II", body[:8])
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    raw = zlib.decompress(idat)
    return width, height, len(set(raw))


def screenshot(exe, html, png, cwd):
    """Renders file `html` with headless chromium `exe` into `png` (1100x2000, no network);
    returns the CompletedProcess (its stderr has the page's console lines)."""
    return subprocess.run([exe, "--headless", "--no-sandbox", "--disable-gpu", "--enable-logging=stderr", "--v=0",
                           "--host-resolver-rules=MAP * ~NOTFOUND", "--window-size=1100,2000",
                           "--screenshot=" + png, "file://" + os.path.abspath(html)],
                          capture_output=True, text=True, timeout=120, cwd=cwd)


def check_renders(tc, html, tmp):
    """Renders `html` in headless chromium (skips `tc` without chromium), checks that it logs
    nothing to the console and is not blank; returns the PNG's (width, height, distinct bytes)."""
    exe = chromium()
    if exe is None:
        tc.skipTest("chromium is not installed: the page was written but not rendered (apt-get install chromium)")
    png = os.path.join(tmp, "page.png")
    p = screenshot(exe, html, png, tmp)
    tc.assertEqual(p.returncode, 0, p.stderr[-2000:])
    console = [l for l in p.stderr.splitlines() if ":CONSOLE" in l]
    tc.assertEqual(console, [], "console messages: %s" % console)
    w, h, distinct = png_pixels_vary(png)
    tc.assertGreater(distinct, 16, "the screenshot looks blank")
    return w, h, distinct


class ReportHtml(unittest.TestCase):
    def setUp(self):
        d = os.environ.get("HWGYM_BIN")
        if not d or not os.access(os.path.join(d, "hwgym"), os.X_OK):
            self.skipTest("HWGYM_BIN with hwgym and hwgym-search is required (run via make test-py)")
        self.bin = d
        self.tmp = tempfile.mkdtemp(prefix="hwgym-report-")

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def make_db(self):
        db = os.path.join(self.tmp, "t.db")
        for algo in ("ga", "random"):
            for seed in (1, 2):
                subprocess.run([os.path.join(self.bin, "hwgym-search"), "--endpoint", "local", "--env", "maestro-v0",
                                "--config", '{"model":"mobilenet_v2","layer":2}', "--algo", algo, "--budget", "400",
                                "--seed", str(seed), "--db", db, "--quiet"], check=True, stdout=subprocess.DEVNULL)
        return db

    def test_page_renders_without_console_errors(self):
        db = self.make_db()
        out = os.path.join(self.tmp, "out")
        r = subprocess.run([os.path.join(self.bin, "hwgym"), "report", db, "--out", out], check=True, capture_output=True, text=True)
        summary = json.loads(r.stdout)
        self.assertEqual(summary["runs"], 4)
        self.assertEqual(summary["trials"], 1600)
        with open(summary["html"], encoding="utf-8") as f:
            html = f.read()
        # self-contained: no script, no external reference (the SVG namespace is not a fetch)
        self.assertNotIn("<script", html)
        refs = [u for u in re.findall(r"https?://[^\s\"'<>)]+", html) if u != "http://www.w3.org/2000/svg"]
        self.assertEqual(refs, [])
        for part in ("best reward so far", "MAESTRO directives", "TemporalMap", "Parameter correlation", "hwgym-search --algo ga (2 runs)",
                     "<h2>Runs</h2>"):
            self.assertIn(part, html)
        w, h, _ = check_renders(self, summary["html"], self.tmp)
        self.assertEqual((w, h), (1100, 2000))

    def test_blank_png_is_detected(self):
        # the PNG check itself can fail: a single-colour image (as a blank page renders)
        w, h = 64, 32
        raw = b"".join(b"\x00" + b"\xff\xff\xff" * w for _ in range(h))
        def chunk(kind, body):
            return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))
        png = os.path.join(self.tmp, "blank.png")
        with open(png, "wb") as f:
            f.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0)) +
                    chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))
        self.assertEqual(png_pixels_vary(png), (w, h, 2))

if __name__ == "__main__":
    unittest.main()
