#!/usr/bin/env bash
# Runs Criterion suites: scripts/run-tests.sh c BUILD GROUP...  Prints a closing
# "N passed, N failed" line and exits non-zero when any suite fails.
set -u
kind=$1; build=$2; shift 2
pass=0; fail=0; failed_groups=()
for g in "$@"; do
  bin="$build/tests/$g"
  out=$(mktemp)
  "$bin" --jobs 2 >"$out" 2>&1; rc=$?
  syn=$(grep -a "Synthesis" "$out" | tail -1)
  cat "$out"
  t=$(echo "$syn" | sed -n 's/.*Tested: *\([0-9]*\).*/\1/p'); p=$(echo "$syn" | sed -n 's/.*Passing: *\([0-9]*\).*/\1/p')
  t=${t:-0}; p=${p:-0}
  pass=$((pass + p)); fail=$((fail + t - p))
  if [ $rc -ne 0 ] || [ -z "$syn" ]; then failed_groups+=("$g"); [ "$t" = "$p" ] && fail=$((fail + 1)); fi
  rm -f "$out"
done
echo "criterion: ${pass} passed, ${fail} failed"
[ -n "${COUNTS_FILE:-}" ] && echo "$pass $fail 0" > "$COUNTS_FILE"
[ ${#failed_groups[@]} -eq 0 ] || { echo "failing suites: ${failed_groups[*]}"; exit 1; }
