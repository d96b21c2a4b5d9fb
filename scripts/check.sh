#!/usr/bin/env bash
# scripts/check.sh [BASE] - `make check`: the tests a change touches, under ASan, fast.
# The change is every file that differs from BASE (default: the merge base with main, else
# HEAD) plus untracked files. A changed C file maps to the Criterion groups whose sources
# include its header (read from the ASan build's .d files), or, when it has no header of its
# own, any header of its folder; a file under tests/c/G maps to G; a change under
# clients/python, tests/python or protocol/ runs the Python tests it names (all of them for a
# library change). Prints the groups it picked and why, then runs them like `make test` does.
set -u
cd "$(dirname "$0")/.."
B=${BUILD:-build/asan}
base=${1:-$(git merge-base HEAD main 2>/dev/null || echo HEAD)}
mapfile -t changed < <( { git diff --name-only "$base" --; git ls-files --others --exclude-standard; } | sort -u)
if [ ${#changed[@]} -eq 0 ]; then echo "check: nothing changed against $base"; exit 0; fi

declare -A groups=() why=()
all_groups=$(ls -d tests/c/*/ | xargs -n1 basename | grep -vx common)
add() { groups[$1]=1; why[$1]="${why[$1]:-}${why[$1]:+, }$2"; }
users_of() { # header -> groups whose objects depend on it
    local h=$1
    grep -l -F -- " $h" "$B"/obj/tests/c/*/*.d 2>/dev/null | sed 's#.*/obj/tests/c/\([^/]*\)/.*#\1#' | sort -u
}
py=()
for f in "${changed[@]}"; do
    case "$f" in
    tests/c/common/*) for g in $all_groups; do add "$g" "$f"; done ;;
    tests/c/*/*) g=${f#tests/c/}; g=${g%%/*}; [ -d "tests/c/$g" ] && add "$g" "$f" ;;
    tests/python/*.py) py+=("$f") ;;
    clients/python/*|protocol/*) py+=(all) ;;
    esac
    case "$f" in
    *.c|*.h)
        [[ "$f" == tests/* ]] && continue
        h=${f%.*}.h
        hs=()
        if [ -f "$h" ] && [ -n "$(users_of "$h")" ]; then hs=("$h"); else mapfile -t hs < <(ls "$(dirname "$f")"/*.h 2>/dev/null); fi
        for hh in "${hs[@]}"; do for g in $(users_of "$hh"); do add "$g" "$f"; done; done ;;
    esac
done

sel=("${!groups[@]}")
if [ ${#sel[@]} -eq 0 ] && [ ${#py[@]} -eq 0 ]; then echo "check: no test depends on the changed files (${changed[*]})"; exit 0; fi
echo "check: ${#changed[@]} changed file(s) against $(git rev-parse --short "$base")"
for g in "${sel[@]}"; do echo "  $g  <- ${why[$g]}" | cut -c1-160; done
rc=0
if [ ${#sel[@]} -gt 0 ]; then
    make --no-print-directory -s -j"$(nproc)" ASAN_ONLY=1 asan-build TEST_GROUPS="${sel[*]}" || exit 1
    scripts/run-tests.sh c "$B" "${sel[@]}" || rc=1
fi
if [ ${#py[@]} -gt 0 ]; then
    make --no-print-directory -s -j"$(nproc)" asan-build TEST_GROUPS= >/dev/null || exit 1
    PY=$(make --no-print-directory -s print-python)
    if printf '%s\n' "${py[@]}" | grep -qx all; then mods=(discover -s tests/python -t .)
    else mods=(); for p in "${py[@]}"; do [ -f "$p" ] && [[ "$(basename "$p")" == test_* ]] && { m=${p%.py}; mods+=("${m//\//.}"); }; done; fi
    if [ ${#mods[@]} -gt 0 ]; then
        HWGYM_BIN=$PWD/$B/bin PYTHONPATH=$PWD/clients/python "$PY" -m unittest "${mods[@]}" || rc=1
    fi
fi
exit $rc
