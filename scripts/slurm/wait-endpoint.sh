#!/usr/bin/env bash
# Prints the endpoint published by serve.sh in DIR (waits up to T seconds, default 60).
#   wait-endpoint.sh DIR [T]
set -euo pipefail
dir=$1; t=${2:-60}
for _ in $(seq 1 $((t * 10))); do
  [ -s "$dir/endpoint" ] && { cat "$dir/endpoint"; exit 0; }
  sleep 0.1
done
echo "wait-endpoint.sh: no endpoint in $dir after ${t}s" >&2; exit 1
