#!/usr/bin/env bash
# One command for a seed sweep on Slurm: a server job, the sweep as a job array against it, and
# a report job that runs `hwgym report` when every task has ended and then stops the server.
#   scripts/slurm/submit.sh DIR ARRAY [sbatch options --] AGENT ARGS...
#   e.g. scripts/slurm/submit.sh out/ga 0-9 hwgym-search --env maestro-v0 --algo ga --budget 20000
# Prints the three job ids ("server SWEEP report") on stdout. Environment: HWGYM_BIN,
# HWGYM_CKPT_EVERY (default 1000), HWGYM_SERVER_CPUS (default 4), HWGYM_DB_PER_TASK.
set -euo pipefail
[ $# -ge 3 ] || { sed -n '2,7p' "$0"; exit 2; }
dir=$(mkdir -p "$1" && cd "$1" && pwd); arr=$2; shift 2
extra=()
if printf '%s\n' "$@" | grep -qx -- '--'; then
  while [ "$1" != "--" ]; do extra+=("$1"); shift; done
  shift
fi
sd=$(cd "$(dirname "$0")" && pwd)
export HWGYM_JOB_DIR=$dir HWGYM_SLURM_DIR=$sd
rm -f "$dir/endpoint"
srv=$(sbatch --parsable -c "${HWGYM_SERVER_CPUS:-4}" -o "$dir/server-%j.out" "${extra[@]}" "$sd/server.sbatch")
sw=$(sbatch --parsable --array="$arr" --dependency="after:$srv" -o "$dir/sweep-%a.out" "${extra[@]}" "$sd/sweep.sbatch" "$@")
rp=$(HWGYM_SERVER_JOB=$srv sbatch --parsable --dependency="afterany:$sw" -o "$dir/report-%j.out" "${extra[@]}" "$sd/report.sbatch")
echo "$srv $sw $rp"
