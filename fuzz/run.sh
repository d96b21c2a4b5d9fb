#!/usr/bin/env bash
# run.sh BUILD - runs every libFuzzer harness in BUILD/fuzz for $FUZZ_SECONDS (default 30) on a
# scratch copy of its seed corpus (fuzz/corpus/<name minus fuzz_>); exits 1 on any finding
# (crash, sanitizer report, hang), leaving the reproducer in BUILD/artifacts/.
set -u
B=${1:-build/fuzz}
S=${FUZZ_SECONDS:-30}
# FUZZ_SEED=N: libFuzzer's -seed (the same mutation sequence on every run; make test pins it);
# unset: a random seed, printed in the log.
SEED_ARG=${FUZZ_SEED:+-seed=$FUZZ_SEED}
mkdir -p "$B/artifacts"
# FUZZ_PAR=N runs N harnesses at once (make passes its JOBS; each harness is one process).
PAR=${FUZZ_PAR:-1}
one() { # one harness; returns 1 on a finding
    h=$1
    name=$(basename "$h")
    seeds="fuzz/corpus/${name#fuzz_}"
    work=$(mktemp -d)
    leaks=1
    [ "$name" = fuzz_request ] && leaks=0 # the server keeps sessions between inputs; ASan server tests check leaks
    echo "fuzz: $name for ${S}s on $seeds" >&2
    if ! "$h" $SEED_ARG -max_total_time="$S" -timeout=30 -rss_limit_mb=4096 -detect_leaks=$leaks -print_final_stats=1 \
        -artifact_prefix="$B/artifacts/$name-" "$work" "$seeds" >"$B/fuzz/$name.log" 2>&1; then
        echo "fuzz: $name FOUND A PROBLEM (log $B/fuzz/$name.log, reproducer in $B/artifacts/)" >&2
        tail -30 "$B/fuzz/$name.log" >&2
        return 1
    else
        grep -E "stat::number_of_executed_units|stat::peak_rss_mb" "$B/fuzz/$name.log" | sed "s/^/fuzz: $name /" >&2
    fi
    rm -rf "$work"
    return 0
}
fail=0; pids=()
for h in "$B"/fuzz/fuzz_*; do
    [ -x "$h" ] || continue
    one "$h" & pids+=($!)
    if [ ${#pids[@]} -ge "$PAR" ]; then wait "${pids[0]}" || fail=1; pids=("${pids[@]:1}"); fi
done
for p in "${pids[@]}"; do wait "$p" || fail=1; done
exit $fail
