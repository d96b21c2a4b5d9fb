#!/usr/bin/env bash
# One hwgym-server for a Slurm job (or job step); docs/cluster.md.
#   HWGYM_JOB_DIR   where the endpoint file goes (default: $SLURM_SUBMIT_DIR)
#   HWGYM_BIN       directory of the hwgym binaries (default: on PATH)
#   HWGYM_HOST      address to bind and publish (default: this node's hostname)
#   HWGYM_PORT      port (default: 20000 + SLURM_JOB_ID % 20000)
#   HWGYM_SERVER_ARGS  more hwgym-server flags (e.g. --curve-secret FILE --curve-allow FILE)
# --workers is the job's CPUs on this node (SLURM_CPUS_ON_NODE). Once the server answers, the
# endpoint (tcp://HOST:PORT) is written to $HWGYM_JOB_DIR/endpoint (and endpoint.$SLURM_JOB_ID)
# atomically, and the server runs until the job ends (scancel/time limit: SIGTERM, clean exit).
set -euo pipefail
dir=${HWGYM_JOB_DIR:-${SLURM_SUBMIT_DIR:-$PWD}}
bin=${HWGYM_BIN:+$HWGYM_BIN/}
host=${HWGYM_HOST:-$(hostname)}
port=${HWGYM_PORT:-$((20000 + ${SLURM_JOB_ID:-$$} % 20000))}
workers=${SLURM_CPUS_ON_NODE:-2}
ep="tcp://$host:$port"
# shellcheck disable=SC2086
"${bin}hwgym-server" --bind "$ep" --workers "$workers" ${HWGYM_SERVER_ARGS:-} &
pid=$!
trap 'kill -TERM $pid 2>/dev/null; wait $pid' TERM INT
for _ in $(seq 1 100); do
  "${bin}hwgym" envs --endpoint "$ep" >/dev/null 2>&1 && break
  kill -0 $pid 2>/dev/null || { echo "serve.sh: hwgym-server exited" >&2; exit 1; }
  sleep 0.1
done
echo "$ep" > "$dir/.endpoint.$$" && mv "$dir/.endpoint.$$" "$dir/endpoint"
[ -n "${SLURM_JOB_ID:-}" ] && cp "$dir/endpoint" "$dir/endpoint.$SLURM_JOB_ID"
echo "serve.sh: $ep, $workers workers (job ${SLURM_JOB_ID:-none})" >&2
wait $pid
