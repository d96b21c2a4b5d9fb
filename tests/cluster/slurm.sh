#!/usr/bin/env bash
# A real single-node Slurm (munged, slurmctld, slurmd as root, in a temporary directory with its
# own slurm.conf, loopback only), running scripts/slurm's jobs: a server job, a seed-sweep job
# array of hwgym-search runs into one shared DB (checkpointing, --resume on the command line as a
# requeue would run it), a MARL run whose two workers are srun steps, `hwgym report` + `hwgym replay` over the
# results, and `hwgym leaderboard --slurm` (a suite's cells as one job array). Checks trial counts, replay matches and exit codes.
#   tests/cluster/slurm.sh BUILD_BIN      exit 0 pass, 1 fail, 77 skipped (reason on stdout)
# Bounded: every wait has a deadline; everything is removed at exit (daemons by their pids).
set -uo pipefail
BIN=$(readlink -f "${1:-build/bin}")
REPO=$(cd "$(dirname "$0")/../.." && pwd)
skip() { echo "SKIP: $*"; exit 77; }
[ "$(id -u)" = 0 ] || skip "not root (slurmd and munged need root)"
for b in munged slurmctld slurmd sbatch srun scontrol; do command -v $b >/dev/null || skip "$b not installed (slurm-wlm, munge)"; done
[ -x "$BIN/hwgym-server" ] || skip "$BIN/hwgym-server not built"
T=$(mktemp -d /tmp/hwgym-slurm.XXXXXX)
chmod 755 "$T"
PIDS=()
cleanup() {
  [ -n "${SLURM_CONF:-}" ] && scancel --quiet --full -u root >/dev/null 2>&1
  for f in "$T/d.pid" "$T/ctld.pid" "$T/munge/pid"; do
    [ -s "$f" ] && kill -TERM "$(cat "$f")" 2>/dev/null
  done
  sleep 0.5
  for f in "$T/d.pid" "$T/ctld.pid" "$T/munge/pid"; do
    [ -s "$f" ] && kill -KILL "$(cat "$f")" 2>/dev/null
  done
  rm -rf "$T"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; for l in "$T"/*.log "$T"/job/*.out; do [ -f "$l" ] && { echo "== $l"; tail -20 "$l"; }; done; exit 1; }
mkdir -p "$T/state" "$T/spool" "$T/munge" "$T/job"
chmod 700 "$T/munge"
head -c 1024 /dev/urandom > "$T/munge/key"; chmod 400 "$T/munge/key"
munged --socket="$T/munge/sock" --key-file="$T/munge/key" --pid-file="$T/munge/pid" --log-file="$T/munge.log" \
  --seed-file="$T/munge/seed" --force || fail "munged did not start"
H=$(hostname -s)
# free ports for slurmctld/slurmd on loopback
P1=$(( 30000 + RANDOM % 20000 )); P2=$((P1 + 1))
cat > "$T/slurm.conf" <<CONF
ClusterName=hwtest
SlurmctldHost=$H(127.0.0.1)
AuthType=auth/munge
AuthInfo=socket=$T/munge/sock
CredType=cred/munge
SlurmctldPort=$P1
SlurmdPort=$P2
StateSaveLocation=$T/state
SlurmdSpoolDir=$T/spool
SlurmctldPidFile=$T/ctld.pid
SlurmdPidFile=$T/d.pid
SlurmctldLogFile=$T/ctld.log
SlurmdLogFile=$T/d.log
ProctrackType=proctrack/pgid
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/builtin
ReturnToService=2
MpiDefault=none
SlurmUser=root
SlurmdUser=root
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
PlugStackConfig=/dev/null
NodeName=$H NodeAddr=127.0.0.1 CPUs=$(nproc) State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=10 State=UP OverSubscribe=FORCE:16
CONF
export SLURM_CONF=$T/slurm.conf
slurmctld -f "$SLURM_CONF" -i || fail "slurmctld did not start"
slurmd -f "$SLURM_CONF" || fail "slurmd did not start"
for _ in $(seq 1 100); do sinfo -h -o %t 2>/dev/null | grep -q idle && break; sleep 0.1; done
sinfo -h -o %t | grep -q idle || fail "the node did not come up: $(sinfo 2>&1)"

export HWGYM_JOB_DIR=$T/job HWGYM_BIN=$BIN HWGYM_SLURM_DIR=$REPO/scripts/slurm HWGYM_HOST=127.0.0.1
cd "$T/job"
state() { scontrol show job "$1" 2>/dev/null | sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p' | head -1; }
exitcode() { scontrol show job "$1" 2>/dev/null | sed -n 's/.* ExitCode=\([0-9:]*\).*/\1/p' | head -1; }
wait_done() { # job, seconds
  for _ in $(seq 1 $(($2 * 5))); do
    case "$(state "$1")" in COMPLETED|FAILED|CANCELLED|TIMEOUT|NODE_FAIL|OUT_OF_MEMORY) return 0;; esac
    sleep 0.2
  done
  return 1
}
CFG='{"model":"mobilenet_v2","layer":2}'

# 1. the server job; agents find its endpoint file
srv=$(sbatch --parsable -o "$T/job/server.out" -c 1 "$REPO/scripts/slurm/server.sbatch") || fail "sbatch server"
EP=$("$REPO/scripts/slurm/wait-endpoint.sh" "$T/job" 30) || fail "the server job published no endpoint"
echo "server job $srv at $EP"

# 2. a seed sweep: 3 array tasks of hwgym-search (GA, 400 samples) into one shared DB
arr=$(HWGYM_CKPT_EVERY=100 sbatch --parsable --array=0-2 -o "$T/job/sweep-%a.out" "$REPO/scripts/slurm/sweep.sbatch" \
  hwgym-search --env maestro-v0 --config "$CFG" --algo ga --budget 400 --quiet) || fail "sbatch sweep"
# 3. MARL: two agents (an assignment file), each an srun step, on a server step of its own job
cat > "$T/job/two.json" <<J
{"agents":[{"name":"pe","dims":[0,1,2,3,4]},{"name":"tile","dims":[5,6,7,8,9]}]}
J
mj=$(sbatch --parsable -n 3 --overcommit -o "$T/job/marl.sbatch.out" --export=ALL,HWGYM_JOB_DIR="$T/job/marl" \
  "$REPO/scripts/slurm/marl.sbatch" --env maestro-v0 --config "$CFG" --agents "$T/job/two.json" --budget 300 \
  --seed 2 --policy-config '{"rollout":64}' --quiet) || fail "sbatch marl"
mkdir -p "$T/job/marl"
# 3b. preemption: array task 5 is killed with SIGKILL at sample 250 (HWGYM_TEST_KILL_AT: the first
#     attempt only), fails, and is requeued with `scontrol requeue`; the requeued job resumes.
pre=$(HWGYM_CKPT_EVERY=100 HWGYM_DB_PER_TASK=1 sbatch --parsable --array=5 --export=ALL,HWGYM_TEST_KILL_AT=250 \
  -o "$T/job/pre-%a-%j.out" "$REPO/scripts/slurm/sweep.sbatch" \
  hwgym-search --env maestro-v0 --config "$CFG" --algo ga --budget 400 --quiet) || fail "sbatch preempted task"
for t in 0 1 2; do wait_done "${arr}_$t" 40 || fail "sweep task $t did not finish: $(state "${arr}_$t")"; done
wait_done "$mj" 40 || fail "the MARL job did not finish: $(state "$mj")"
for t in 0 1 2; do
  [ "$(state "${arr}_$t")" = COMPLETED ] && [ "$(exitcode "${arr}_$t")" = 0:0 ] || fail "sweep task $t: $(state "${arr}_$t") exit $(exitcode "${arr}_$t")"
done
[ "$(state "$mj")" = COMPLETED ] && [ "$(exitcode "$mj")" = 0:0 ] || fail "MARL job: $(state "$mj") exit $(exitcode "$mj")"
echo "sweep and MARL jobs completed (exit 0:0)"
wait_done "${pre}_5" 40 || fail "the task to be preempted did not end: $(state "${pre}_5")"
[ "$(state "${pre}_5")" = FAILED ] || fail "the preempted task is $(state "${pre}_5") (exit $(exitcode "${pre}_5")), expected FAILED"
echo "task ${pre}_5 killed at sample 250: $(state "${pre}_5") exit $(exitcode "${pre}_5"); requeueing"
scontrol requeue "${pre}_5" || fail "scontrol requeue"
# a requeued job waits for a begin time; make it eligible now (a preempting cluster would too)
for _ in $(seq 1 20); do [ "$(state "${pre}_5")" = PENDING ] && break; sleep 0.2; done
scontrol update JobId="${pre}_5" StartTime=now >/dev/null 2>&1
wait_done "${pre}_5" 40 || fail "the requeued task did not finish: $(state "${pre}_5")"
[ "$(state "${pre}_5")" = COMPLETED ] && [ "$(exitcode "${pre}_5")" = 0:0 ] || fail "requeued task: $(state "${pre}_5") exit $(exitcode "${pre}_5")"
grep -q "resuming run" "$T"/job/pre-5-*.out || true
# the same trials as an uninterrupted run of seed 5 against the same server
"$BIN/hwgym-search" --endpoint "$EP" --env maestro-v0 --config "$CFG" --algo ga --budget 400 --seed 5 \
  --db "$T/job/ref.db" --quiet > /dev/null || fail "reference run"
q="SELECT episode, action, quote(reward) FROM trials ORDER BY id"
[ "$(sqlite3 "$T/job/sweep-5.db" "$q" | md5sum)" = "$(sqlite3 "$T/job/ref.db" "$q" | md5sum)" ] || \
  fail "the requeued task's trials differ from an uninterrupted run ($(sqlite3 "$T/job/sweep-5.db" "SELECT COUNT(*) FROM trials") trials)"
[ "$(sqlite3 "$T/job/sweep-5.db" "SELECT COUNT(*) FROM runs")" = 1 ] || fail "the requeued task made a second run"
echo "preempted + requeued task: same 400 trials as an uninterrupted run, one run"

# 4. the results: trial counts, hwgym report, replay against the server job
n=$(sqlite3 "$T/job/sweep.db" "SELECT COUNT(*) FROM runs") ; [ "$n" = 3 ] || fail "sweep.db has $n runs, expected 3"
for t in 0 1 2; do
  c=$(sqlite3 "$T/job/sweep.db" "SELECT COUNT(*) FROM trials JOIN runs ON runs.id = trials.run_id WHERE runs.seed = $t")
  [ "$c" = 400 ] || fail "sweep task $t logged $c trials, expected 400"
done
"$BIN/hwgym" report "$T/job/sweep.db" > "$T/job/report.json" || fail "hwgym report exited $?"
[ "$(grep -o '"trials": *[0-9]*' "$T/job/report.json" | grep -c 400)" -ge 3 ] || grep -q '"trials":400' "$T/job/report.json" || fail "report: $(head -c 400 "$T/job/report.json")"
for r in 1 2 3; do
  "$BIN/hwgym" replay "$T/job/sweep.db" --run $r --endpoint "$EP" > "$T/job/replay-$r.json" || fail "replay of sweep run $r: $(head -c 300 "$T/job/replay-$r.json")"
done
m=$(sqlite3 "$T/job/marl/marl.db" "SELECT COUNT(*) FROM trials") ; [ "$m" = 300 ] || fail "marl.db has $m trials, expected 300"
"$BIN/hwgym" replay "$T/job/marl/marl.db" --endpoint "$EP" > "$T/job/replay-marl.json" || fail "replay of the MARL run: $(head -c 300 "$T/job/replay-marl.json")"
# the MARL workers ran as srun steps of the MARL job (steps 0 = server, then one per agent)
echo "report + replay ok: 3 x 400 sweep trials, 300 MARL trials, every trial replays bit-identically"
scancel "$srv"
wait_done "$srv" 20 || fail "the server job did not stop on scancel"

# 5. the one-command form: submit.sh = server job + sweep array + report job (stops the server)
ids=$(HWGYM_CKPT_EVERY=50 HWGYM_SERVER_CPUS=1 "$REPO/scripts/slurm/submit.sh" "$T/job2" 0-1   hwgym-search --env maestro-v0 --config "$CFG" --algo random --budget 100 --quiet) || fail "submit.sh"
set -- $ids
wait_done "$3" 60 || fail "the report job did not finish: $(state "$3")"
[ "$(state "$3")" = COMPLETED ] || fail "report job: $(state "$3") exit $(exitcode "$3")"
wait_done "$1" 20 || fail "the report job did not stop the server job: $(state "$1")"
grep -q '"trials"' "$T/job2/report-sweep.json" || fail "no report: $(cat "$T/job2/report-sweep.json")"
[ "$(sqlite3 "$T/job2/sweep.db" "SELECT COUNT(*) FROM trials")" = 200 ] || fail "submit.sh sweep: wrong trial count"
echo "submit.sh: server $1, sweep $2, report $3 completed"

# 6. hwgym leaderboard --slurm: the tiny suite's quick cells (2 envs x 4 variants x 2 seeds) as one
#    job array, each task one cell with a server of its own, merged into one leaderboard file; the
#    search cells' trials equal a local run's
cd "$REPO"
"$BIN/hwgym" leaderboard leaderboard/tiny.json --quick --slurm --jobs 4 --out "$T/lb" > "$T/lb.json" 2> "$T/lb.log" || fail "leaderboard --slurm exited $?"
q="SELECT count(*) FROM leaderboard_cells WHERE status = 0 AND evals = 64 AND endpoint LIKE 'slurm %'"
[ "$(sqlite3 "$T/lb/leaderboard.db" "$q")" = 16 ] || fail "leaderboard --slurm: $(sqlite3 "$T/lb/leaderboard.db" "SELECT key, status, evals, endpoint, error FROM leaderboard_cells")"
[ "$(sqlite3 "$T/lb/leaderboard.db" "SELECT count(*) FROM runs")" = 16 ] || fail "leaderboard --slurm: not one run per cell"
grep -q '"html"' "$T/lb.json" && [ -s "$T/lb/index.html" ] || fail "leaderboard --slurm wrote no pages: $(cat "$T/lb.json")"
[ ! -e "$T/lb/work" ] || fail "leaderboard --slurm left its work files: $(ls -R "$T/lb/work" | head)"
"$BIN/hwgym" leaderboard leaderboard/tiny.json --quick --out "$T/lbl" --quiet > /dev/null 2>&1 || fail "the local leaderboard run"
q="SELECT c.key, group_concat(quote(t.reward)) FROM leaderboard_cells c JOIN trials t ON t.run_id = c.run_id WHERE c.variant IN ('random', 'ga') GROUP BY c.key ORDER BY c.key"
[ "$(sqlite3 "$T/lb/leaderboard.db" "$q" | md5sum)" = "$(sqlite3 "$T/lbl/leaderboard.db" "$q" | md5sum)" ] || fail "the Slurm run's search cells differ from the local run's"
echo "leaderboard --slurm: 16 cells as one job array, merged; search cells equal a local run's"
echo PASS
