# scripts/paper-server.sh - sourced by the paper-egrl scripts (needs BIN set): a work directory
# and a private hwgym-server on an ipc socket inside it.
#   paper_server_start NAME [DIR]   WORK = DIR (kept) or a new /tmp/hwgym-NAME.XXXXXX (removed at
#                                   exit); sets WORK, KEEP, EP, SERVER; stops the server at exit;
#                                   returns once the server answers (5 s at most).
paper_server_stop() {
    kill "$SERVER" 2>/dev/null || true
    wait "$SERVER" 2>/dev/null || true
    [ "$KEEP" = 1 ] || rm -rf "$WORK"
}

paper_server_start() {
    if [ -n "${2:-}" ]; then
        WORK=$2 KEEP=1
        mkdir -p "$WORK"
    else
        WORK=$(mktemp -d "/tmp/hwgym-$1.XXXXXX") KEEP=0
    fi
    EP="ipc://$WORK/server.sock"
    "$BIN/hwgym-server" --bind "$EP" --workers 2 > "$WORK/server.log" 2>&1 &
    SERVER=$!
    trap paper_server_stop EXIT
    for _ in $(seq 50); do "$BIN/hwgym" envs --endpoint "$EP" > /dev/null 2>&1 && break; sleep 0.1; done
}
