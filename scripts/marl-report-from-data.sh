#!/usr/bin/env bash
# scripts/marl-report-from-data.sh DATA_DIR OUT.md [SVG_DIR]
# Recomputes docs/results/marl.md from the committed trial data alone (written by
# scripts/paper-marl.sh into docs/results/marl-data/): rebuilds a trial DB from trials.csv.xz and
# runs.csv.xz with the sqlite3 CLI, then runs `hwgym-marl report` with the saved manifest and
# header. The tables and curves come out identical to the committed marl.md (the header with
# the run date and Figure 4's dendrogram is copied as it was). SVGs go to SVG_DIR (default: a
# temporary directory, discarded). Env: BUILD (default build) for bin/hwgym-marl.
# The rebuilt DB also serves `hwgym cluster DB --run ID` on the clustering run (its actions are kept).
set -euo pipefail
case "${1:-}" in -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0;; esac
[ $# -ge 2 ] || { echo "usage: $0 DATA_DIR OUT.md [SVG_DIR]" >&2; exit 2; }
abs() { case $1 in /*) echo "$1";; *) echo "$PWD/$1";; esac; }
DATA=$(abs "$1") OUTMD=$(abs "$2") SVGARG=${3:+$(abs "$3")}
BIN=$(abs "${BUILD:-build}")/bin
cd "$(dirname "$0")/.."
[ -x "$BIN/hwgym-marl" ] || { echo "$0: $BIN/hwgym-marl is not built (make all)" >&2; exit 1; }
command -v sqlite3 > /dev/null || { echo "$0: needs the sqlite3 CLI (scripts/install-deps.sh)" >&2; exit 1; }
# the CSVs are xz-compressed (scripts/paper-marl.sh) or, in older exports, gzip-compressed
unpack() { # NAME OUT
    if [ -f "$DATA/$1.xz" ]; then xz -dc "$DATA/$1.xz" > "$2"
    elif [ -f "$DATA/$1.gz" ]; then gzip -dc "$DATA/$1.gz" > "$2"
    else echo "$0: $DATA/$1.xz is missing" >&2; exit 1; fi
}
for f in manifest.tsv header.md; do
    [ -f "$DATA/$f" ] || { echo "$0: $DATA/$f is missing" >&2; exit 1; }
done
W=$(mktemp -d /tmp/hwgym-marl-data.XXXXXX)
trap 'rm -rf "$W"' EXIT
SVG=${SVGARG:-$W/svg}
mkdir -p "$SVG"
DB=$W/trials.db
unpack runs.csv "$W/runs.csv"
unpack trials.csv "$W/trials.csv"
sqlite3 "$DB" < schemas/trials.sql
sqlite3 "$DB" <<SQL
.mode csv
.import $W/runs.csv runs_in
.import $W/trials.csv trials_in
INSERT INTO runs (id, agent, env, env_config, seed, started_at) SELECT id, agent, env, env_config, seed, 0 FROM runs_in;
INSERT INTO trials (run_id, worker, episode, step, action, reward, time)
    SELECT run_id, worker, episode, 0, CASE WHEN action = '' THEN '[]' ELSE action END,
           CASE WHEN reward = '' THEN NULL ELSE CAST(reward AS REAL) END, 0 FROM trials_in;
DROP TABLE runs_in;
DROP TABLE trials_in;
SQL
"$BIN/hwgym-marl" report --db "$DB" --manifest "$DATA/manifest.tsv" --out "$OUTMD" --svg-dir "$SVG" --svg-ref marl \
    --header "$DATA/header.md"
notes=$(dirname "$DATA")/marl-notes.md
if [ -f "$notes" ]; then { echo; cat "$notes"; } >> "$OUTMD"; fi
echo "wrote $OUTMD from $DATA" >&2
