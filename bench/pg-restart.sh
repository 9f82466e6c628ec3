#!/usr/bin/env bash
# pg-restart.sh: PostgreSQL restarted under load. The real `discs serve` (release) plays moves
# for wrk at 8 clients (bench/live-moves.lua); six seconds in, the machine's PostgreSQL cluster
# is restarted (pg_ctlcluster, Debian). Prints the moves and the 500s and 503s wrk got, what the
# server logged (unexpected errors, outage lines, backtraces) and /readyz afterwards: the server
# must answer 503 `unavailable` (never 500) while the database is away and recover by itself.
#
# Usage: bench/pg-restart.sh   (run from the repository root; restarts the local cluster!)
set -euo pipefail
ADMIN_URL="${DATABASE_URL:-postgres://postgres@127.0.0.1:5432/postgres}"
BIN="${CARGO_TARGET_DIR:-target}/release"
DB="discs_restart_$$"
PORT=$(( 20000 + RANDOM % 30000 ))
W="$(mktemp -d)"
server_pid=""
cleanup() {
    [[ -n "$server_pid" ]] && { kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; }
    psql -X -q "$ADMIN_URL" -c "DROP DATABASE IF EXISTS \"$DB\" WITH (FORCE)" >/dev/null 2>&1 || true
    rm -rf "$W"
}
trap cleanup EXIT

cargo build --release -q -p discs -p bench
psql -X -q "$ADMIN_URL" -c "CREATE DATABASE \"$DB\""
DATABASE_URL="${ADMIN_URL%/*}/$DB" DISCS_ADDR="127.0.0.1:$PORT" DISCS_LOG_FORMAT=json \
    DISCS_RATE_PER_SECOND=1000000000 DISCS_RATE_BURST=1000000000 DISCS_SIGNUPS_PER_MINUTE=1000000000 \
    "$BIN/discs" serve >"$W/server.log" 2>&1 &
server_pid=$!
for _ in $(seq 1 120); do curl -fsS -o /dev/null "http://127.0.0.1:$PORT/healthz" 2>/dev/null && break; sleep 0.5; done
"$BIN/live-bench" prepare --base "http://127.0.0.1:$PORT" --matches 12000 --out "$W/matches.lua" >/dev/null
wrk -t2 -c8 -d20s --timeout 30s -s bench/live-moves.lua "http://127.0.0.1:$PORT" \
    -- "$W/matches.lua" 0 12000 2 >"$W/wrk.out" 2>&1 &
wrk_pid=$!
sleep 6
echo "restarting PostgreSQL at $(date -u +%T)"
pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | head -1)" main restart
echo "PostgreSQL back at $(date -u +%T)"
wait "$wrk_pid"
grep -E '^live-moves|^statuses' "$W/wrk.out"
echo "server log: $(grep -c 'unexpected error' "$W/server.log" || true) unexpected errors, $(grep -c 'out of reach' "$W/server.log" || true) outage lines, $(grep -c 'backtrace' "$W/server.log" || true) backtraces"
curl -s -o /dev/null -w "afterwards: /readyz %{http_code}\n" "http://127.0.0.1:$PORT/readyz"
