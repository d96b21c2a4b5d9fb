#!/usr/bin/env bash
# Runs the Python suite (tests/python, plain unittest) with $PYTHON against the binaries in
# $HWGYM_BIN; prints "python: N passed, N failed, N skipped" and writes the counts to $1.
set -uo pipefail
counts=${1:-/dev/null}
out=$(mktemp)
"$PYTHON" -m unittest discover -s tests/python -t . -v 2>&1 | tee "$out"
rc=${PIPESTATUS[0]}
ran=$(sed -n 's/^Ran \([0-9]*\) tests\{0,1\}.*/\1/p' "$out" | tail -1)
fails=$(sed -n 's/.*failures=\([0-9]*\).*/\1/p' "$out" | tail -1)
errs=$(sed -n 's/.*errors=\([0-9]*\).*/\1/p' "$out" | tail -1)
skips=$(sed -n 's/.*skipped=\([0-9]*\).*/\1/p' "$out" | tail -1)
ran=${ran:-0}; fails=${fails:-0}; errs=${errs:-0}; skips=${skips:-0}
failed=$((fails + errs))
[ "$rc" -ne 0 ] && [ "$failed" -eq 0 ] && failed=1
passed=$((ran - fails - errs - skips))
echo "python: ${passed} passed, ${failed} failed, ${skips} skipped"
echo "$passed $failed $skips" > "$counts"
rm -f "$out"
exit $rc
