#!/usr/bin/env bash
# profile-round.sh: where a live move's round spends PostgreSQL's time. The real `discs serve`
# (release) on a fresh database, solo Four in a Row matches prepared (`live-bench prepare`),
# then wrk at CLIENTS connections for SECONDS (bench/live-moves.lua: each HTTP move brings the
# CPU's reply, two events in one round), alone on the server; then, from pg_stat_statements
# (`track = all`, so the statements inside `live_commit_round` count on their own), pg_stat_wal
# and pg_stat_user_indexes / pg_statio_user_tables: execution time per statement and per event,
# WAL records, full-page images and bytes per event, and the pages each table and index touched.
#
# Usage: bench/profile-round.sh [seconds] [clients]   (default 10 s, 8 clients; from the repository root)
# PROFILE_SQL=file.sql applies that file to the database once the matches are prepared (an
# experiment: a function redefined, an index dropped) before the measured run. PERF=file
# records the machine's CPU samples during the run (perf record -a -g) into that file.
# Needs: shared_preload_libraries including pg_stat_statements, pg_stat_statements.track = all
# (and track_io_timing = on for read and write times); wrk; DATABASE_URL as in live-vs-pgbench.sh.
set -euo pipefail

# The tools it runs, before anything is built or prepared (Debian: apt-get install wrk).
for tool in wrk psql; do
    command -v "$tool" >/dev/null 2>&1 || { echo "$0: needs $tool (Debian: apt-get install wrk postgresql-client)"; exit 1; }
done

SECONDS_PER_RUN="${1:-10}"
CLIENTS="${2:-8}"
ADMIN_URL="${DATABASE_URL:-postgres://postgres@127.0.0.1:5432/postgres}"
BIN="${CARGO_TARGET_DIR:-target}/release"
PSQL=(psql -X -q -v ON_ERROR_STOP=1)
DB="discs_profile_$$"
base="${ADMIN_URL%%\?*}"; rest="${base#*://}"
URL="${base%%://*}://${rest%%/*}/$DB"
workdir="$(mktemp -d)"
server_pid=""
cleanup() {
    [[ -n "$server_pid" ]] && { kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; }
    "${PSQL[@]}" "$ADMIN_URL" -c "DROP DATABASE IF EXISTS \"$DB\" WITH (FORCE)" >/dev/null 2>&1 || true
    rm -rf "$workdir"
}
trap cleanup EXIT

[[ "$("${PSQL[@]}" -tA "$ADMIN_URL" -c 'SHOW shared_preload_libraries')" == *pg_stat_statements* ]] \
    || { echo "pg_stat_statements is not loaded (shared_preload_libraries)"; exit 1; }
echo "# profile-round $(date -u '+%Y-%m-%d %H:%M UTC'), commit $(git rev-parse --short HEAD), $(nproc) cores, ${SECONDS_PER_RUN}s at $CLIENTS clients"
cargo build --release -q -p discs -p bench
"${PSQL[@]}" "$ADMIN_URL" -c "CREATE DATABASE \"$DB\""
PORT=$(( 20000 + RANDOM % 40000 ))
MATCHES=$(( 2000 * SECONDS_PER_RUN + 512 ))
DATABASE_URL="$URL" DISCS_ADDR="127.0.0.1:$PORT" DISCS_MATCH_CACHE=$(( 2 * MATCHES + 1024 )) \
    DISCS_RATE_PER_SECOND=1000000000 DISCS_RATE_BURST=1000000000 DISCS_SIGNUPS_PER_MINUTE=1000000000 \
    DISCS_PRESENCE_SECONDS=86400 DISCS_RETURN_SECONDS=86400 \
    "$BIN/discs" serve >"$workdir/server.log" 2>&1 &
server_pid=$!
for _ in $(seq 1 120); do
    curl -fsS -o /dev/null "http://127.0.0.1:$PORT/healthz" 2>/dev/null && break
    sleep 0.5
done
( while sleep 5; do "${PSQL[@]}" "$URL" -c "ANALYZE" >/dev/null 2>&1 || true; done ) &
analyze_pid=$!
"$BIN/live-bench" prepare --base "http://127.0.0.1:$PORT" --matches "$MATCHES" --out "$workdir/m.lua"
kill "$analyze_pid"; wait "$analyze_pid" 2>/dev/null || true
if [[ -n "${PROFILE_SQL:-}" ]]; then
    echo "applied before the run: $PROFILE_SQL"
    "${PSQL[@]}" "$URL" -f "$PROFILE_SQL"
fi
"${PSQL[@]}" "$URL" -c 'CREATE EXTENSION IF NOT EXISTS pg_stat_statements' -c 'VACUUM ANALYZE' -c 'CHECKPOINT'
# Counters from here: statements of this database, WAL of the cluster (nothing else runs).
"${PSQL[@]}" "$URL" -tA -c "SELECT pg_stat_statements_reset(0, (SELECT oid FROM pg_database WHERE datname = '$DB'), 0)" \
    -c "SELECT pg_stat_reset_shared('wal')" -c "SELECT pg_stat_reset()" >/dev/null
events0="$("${PSQL[@]}" "$URL" -tA -c 'SELECT count(*) FROM events')"
t=$(( CLIENTS < 2 ? CLIENTS : 2 ))
if [[ -n "${PERF:-}" ]]; then
    # CPU samples of the whole machine during the run (after a second of warm-up), for
    # `perf report -i "$PERF" --sort comm,dso,sym`.
    ( sleep 1; perf record -a -g -F 499 -o "$PERF" -- sleep $(( SECONDS_PER_RUN - 2 )) >/dev/null 2>&1 ) &
fi
wrk -t"$t" -c"$CLIENTS" -d"${SECONDS_PER_RUN}s" --timeout 30s -s bench/live-moves.lua "http://127.0.0.1:$PORT" \
    -- "$workdir/m.lua" 0 "$MATCHES" "$t" | grep '^live-moves'
sleep 11   # backends publish their statistics up to 10 s late
events="$("${PSQL[@]}" "$URL" -tA -c "SELECT count(*) - $events0 FROM events")"
echo "events appended: $events"
"${PSQL[@]}" "$URL" -c "
SELECT round(total_exec_time::numeric / $events * 1000, 1) AS us_per_event,
       calls, round((calls::numeric / $events), 2) AS calls_per_event,
       round(mean_exec_time::numeric * 1000, 1) AS us_per_call,
       round((shared_blks_hit + shared_blks_read)::numeric / calls, 1) AS blks_per_call,
       round(shared_blks_dirtied::numeric / calls, 2) AS dirtied_per_call,
       round(wal_fpi::numeric / calls, 2) AS fpi_per_call,
       round(wal_bytes::numeric / calls) AS wal_bytes_per_call,
       toplevel AS top, left(regexp_replace(query, '\s+', ' ', 'g'), 110) AS statement
  FROM pg_stat_statements
 WHERE dbid = (SELECT oid FROM pg_database WHERE datname = '$DB')
 ORDER BY total_exec_time DESC LIMIT 14"
"${PSQL[@]}" "$URL" -c "
SELECT round(wal_records::numeric / $events, 2) AS records_per_event,
       round(wal_fpi::numeric / $events, 3) AS fpi_per_event,
       round(wal_bytes::numeric / $events) AS wal_bytes_per_event, wal_buffers_full, wal_write, wal_sync
  FROM pg_stat_wal"
"${PSQL[@]}" "$URL" -c "
SELECT relname, indexrelname, idx_scan, idx_blks_read + idx_blks_hit AS blks,
       round((idx_blks_read + idx_blks_hit)::numeric / greatest($events, 1), 2) AS blks_per_event,
       pg_size_pretty(pg_relation_size(indexrelid)) AS size
  FROM pg_stat_user_indexes JOIN pg_statio_user_indexes USING (indexrelid, relid, relname, schemaname, indexrelname)
 WHERE idx_scan > 0 OR idx_blks_hit > 0 ORDER BY blks DESC LIMIT 14"
"${PSQL[@]}" "$URL" -c "
SELECT relname, n_tup_ins AS ins, n_tup_upd AS upd, n_tup_hot_upd AS hot, n_tup_del AS del,
       round((heap_blks_hit + heap_blks_read)::numeric / greatest($events, 1), 2) AS heap_blks_per_event
  FROM pg_stat_user_tables JOIN pg_statio_user_tables USING (relid, relname, schemaname)
 WHERE n_tup_ins + n_tup_upd + n_tup_del > 0 ORDER BY relname"
