#!/usr/bin/env bash
# Runs Criterion suites: scripts/run-tests.sh c BUILD GROUP...  Prints a closing
# "N passed, N failed" line and exits non-zero when any suite fails.
# TEST_PAR=N runs N groups at once (default 4: most tests wait on servers and pipes, not the CPU;
# each group runs its own tests with --jobs 2);
# a group's output is printed whole when it ends. TIMES_FILE=F appends "seconds group" lines.
set -u
kind=$1; build=$2; shift 2
par=${TEST_PAR:-4}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

run_group() { # group -> $tmp/$g.out, $tmp/$g.rc, $tmp/$g.sec
    local g=$1 t0 t1
    t0=$(date +%s.%N)
    "$build/tests/$g" --jobs 2 >"$tmp/$g.out" 2>&1
    echo $? >"$tmp/$g.rc"
    t1=$(date +%s.%N)
    awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f\n", b - a }' >"$tmp/$g.sec"
}

# Longest groups first (from the last run's times, when there is one), so the slow ones overlap.
# A clean clone has no last run: tests/c/group-times.txt holds committed times (refresh it with
# a copy of build/asan/group-times when groups change a lot; a missing group counts as slow).
order=("$@")
hint=tests/c/group-times.txt
[ -n "${TIMES_FILE:-}" ] && [ -s "${TIMES_FILE}.last" ] && hint=${TIMES_FILE}.last
if [ -s "$hint" ]; then
    mapfile -t order < <(for g in "$@"; do
        s=$(awk -v g="$g" '$2 == g { print $1 }' "$hint" | tail -1)
        echo "${s:-999} $g"; done | sort -rn | awk '{ print $2 }')
fi

pass=0; fail=0; failed_groups=()
collect() { # prints a finished group's output and adds up its counts
    local g=$1 rc syn t p
    rc=$(cat "$tmp/$g.rc")
    cat "$tmp/$g.out"
    syn=$(grep -a "Synthesis" "$tmp/$g.out" | tail -1)
    t=$(echo "$syn" | sed -n 's/.*Tested: *\([0-9]*\).*/\1/p'); p=$(echo "$syn" | sed -n 's/.*Passing: *\([0-9]*\).*/\1/p')
    t=${t:-0}; p=${p:-0}
    pass=$((pass + p)); fail=$((fail + t - p))
    if [ "$rc" -ne 0 ] || [ -z "$syn" ]; then failed_groups+=("$g"); [ "$t" = "$p" ] && fail=$((fail + 1)); fi
}

running=()
for g in "${order[@]}"; do
    run_group "$g" &
    running+=("$g:$!")
    while [ ${#running[@]} -ge "$par" ]; do
        wait -n 2>/dev/null || true
        still=()
        for r in "${running[@]}"; do
            if [ -f "$tmp/${r%%:*}.sec" ]; then wait "${r##*:}" 2>/dev/null; collect "${r%%:*}"; else still+=("$r"); fi
        done
        running=("${still[@]+"${still[@]}"}")
    done
done
for r in "${running[@]+"${running[@]}"}"; do wait "${r##*:}" 2>/dev/null; collect "${r%%:*}"; done

echo "time per group (s, $par at once):"
for g in "$@"; do echo "$(cat "$tmp/$g.sec") $g"; done | sort -rn | awk '{ printf "  %7.1f  %s\n", $1, $2 }'
if [ -n "${TIMES_FILE:-}" ]; then
    for g in "$@"; do echo "$(cat "$tmp/$g.sec") $g"; done >"${TIMES_FILE}"
    cp "${TIMES_FILE}" "${TIMES_FILE}.last"
fi
echo "criterion: ${pass} passed, ${fail} failed"
[ -n "${COUNTS_FILE:-}" ] && echo "$pass $fail 0" > "$COUNTS_FILE"
[ ${#failed_groups[@]} -eq 0 ] || { echo "failing suites: ${failed_groups[*]}"; exit 1; }
