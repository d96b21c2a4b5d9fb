#!/usr/bin/env bash
# make bench: runs every benchmark of $BUILD (built -O2) in turn; each prints its own figures
# and ratios measured in the same run. Copy the figures into bench/README.md with this command.
set -uo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build/bench-O2}
echo "# make bench on $(uname -srm), $(nproc) cores, $(date -u +%Y-%m-%dT%H:%MZ), commit $(git rev-parse --short HEAD 2>/dev/null)"
fail=0
for b in "$BUILD"/bench/*; do
  [ -x "$b" ] || continue
  echo; echo "## $(basename "$b")"
  "$b" || { echo "($(basename "$b") exited non-zero)"; fail=1; }
done
for s in bench/*.sh; do
  [ -x "$s" ] || continue
  echo; echo "## $(basename "$s")"
  BUILD="$BUILD" "$s" || { echo "($(basename "$s") exited non-zero)"; fail=1; }
done
exit $fail
