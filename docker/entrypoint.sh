#!/bin/sh
# Runs the given hwgym command; agents wait until the server named by HWGYM_ENDPOINT answers.
set -e
if [ -n "${HWGYM_ENDPOINT:-}" ] && [ "$1" != "hwgym-server" ]; then
    i=0
    until hwgym envs --endpoint "$HWGYM_ENDPOINT" >/dev/null 2>&1; do
        i=$((i + 1)); [ $i -gt 100 ] && { echo "server $HWGYM_ENDPOINT not reachable" >&2; exit 1; }
        sleep 0.2
    done
fi
exec "$@"
