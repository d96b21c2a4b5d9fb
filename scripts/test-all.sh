#!/usr/bin/env bash
# scripts/test-all.sh - the body of `make test` (run it through make, which installs the deps
# first). Phases: the ASan build (-j$JOBS); the Criterion groups (scripts/run-tests.sh,
# $TEST_PAR at once, slowest first) while the Python suite and the fuzz build run beside them
# (the Python log is printed after the C groups); then the libFuzzer harnesses, all at once. Prints the time of each
# phase and of each group, and last the closing "tests: N passed, N failed, N skipped" line.
set -u
cd "$(dirname "$0")/.."
A=${ASAN_BUILD:-build/asan}
MK=(make --no-print-directory JOBS="${JOBS:-2}")
now() { date +%s.%N; }
dt() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }
t0=$(now)

"${MK[@]}" asan-build
brc=$?
t1=$(now)
if [ $brc -ne 0 ]; then echo "tests: 0 passed, 1 failed, 0 skipped (the ASan build failed)"; exit 1; fi

rm -f "$A/test-c.counts" "$A/test-py.counts"
# The fuzz harnesses build (clang) beside the groups: the groups mostly wait on servers and pipes
# (make test used about a third of two cores), so the build costs them little.
fz=
if [ -n "$("${MK[@]}" -s print-fuzz-cc)" ]; then
    nice -n 5 "${MK[@]}" fuzz-build >"$A/fuzz-build.log" 2>&1 &
    fz=$!
fi
"${MK[@]}" asan-test-py >"$A/test-py.log" 2>&1 &
py=$!
TIMES_FILE="$A/group-times" "${MK[@]}" asan-test-c
crc=$?
t2=$(now)
wait $py
prc=$?
t3=$(now)
echo "---- Python suite (ran beside the C groups) ----"
cat "$A/test-py.log"

if [ -n "$fz" ] && ! wait $fz; then cat "$A/fuzz-build.log"; fi
"${MK[@]}" fuzz-test
frc=$?
t4=$(now)

set -- $(cat "$A/test-c.counts" 2>/dev/null || echo 0 1 0) $(cat "$A/test-py.counts" 2>/dev/null || echo 0 1 0)
echo "time per phase (s): build $(dt "$t0" "$t1"), C groups $(dt "$t1" "$t2"), Python $(dt "$t1" "$t3") (beside the C groups), fuzz $(dt "$t3" "$t4"), total $(dt "$t0" "$t4")"
[ -s "$A/group-times" ] && echo "slowest C groups (s): $(sort -rn "$A/group-times" | head -6 | awk '{ printf "%s %s  ", $2, $1 }')"
[ $frc -ne 0 ] && echo "fuzz: a harness found a problem (see above)"
echo "tests: $(($1 + $4)) passed, $(($2 + $5)) failed, $(($3 + $6)) skipped"
[ $crc -eq 0 ] && [ $prc -eq 0 ] && [ $frc -eq 0 ]
