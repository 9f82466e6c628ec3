#!/usr/bin/env bash
# live-vs-pgbench.sh: the live path measured like a user. The real `discs serve` under wrk
# playing moves over HTTP, next to pgbench doing single-row INSERTs on the same PostgreSQL at the
# same time, at 1, 8 and 32 clients; then what a move costs the database, and what 1,000 open
# event streams cost the moves.
#
# Usage: bench/live-vs-pgbench.sh [seconds]   (default 10 s per run; run from the repository root)
#
# Environment:
#   DATABASE_URL  admin connection (default postgres://postgres@127.0.0.1:5432/postgres)
#   LIVE_RATE     the most moves/s expected (default 2000): each run gets a fresh slice of
#                 2 x LIVE_RATE x seconds / 3 matches (three moves per match), all prepared
#                 before the first run. A run that runs out says so (exhausted=..): raise it.
#   MATCHES_PER_RUN  overrides that slice size
#   STREAMS       event streams held open in the streams experiment (default 1000; 0 skips it)
#   CLIENTS       the paired runs' client counts (default "1 8 32")
#   SOLO_CLIENTS  the runs without pgbench (default "1 8"; "" skips them)
#   SETTLE        seconds waited before reading the statistics (default 11; see below)
#   CARGO_TARGET_DIR is honoured.
#
# What runs, in order, against a fresh database discs_live_<pid> and a pgbench scratch database
# discs_pgbench_<pid> (both dropped at exit):
#  1. build, start `discs serve` on a free port (rate limits and presence timers off, a match
#     cache that holds every prepared match), prepare
#     all matches (live-bench prepare), measure the server's idle database activity;
#  2. for 1, 8, 32 clients: wrk (bench/live-moves.lua) and pgbench (one-row INSERT) together;
#  3. solo wrk runs at 1 and 8 clients (no pgbench): transactions, SQL statements and WAL syncs
#     per move (wal_sync is cluster-wide, so only here);
#  4. pgbench alone at the same client counts as step 3;
#  5. wrk at 8 clients with 0, then with STREAMS open event streams on one other match.
# Steps 3 and 4 also say what one move and one INSERT cost the machine's CPU (user + system,
# from /proc): the server's process, PostgreSQL's (every process of the cluster, and the
# backends that exited during the run through the postmaster's children), the client (wrk or
# pgbench) and the cores left idle, in microseconds of CPU per move or per INSERT; and the ratio
# those costs predict for the paired runs if each side gets half of the busy cores (an INSERT's
# busy CPU over a move's).
# Per-move counts come from pg_stat_database / pg_stat_wal / pg_stat_statements read before and
# after each run. Backends publish their statistics up to 10 s late when idle, so each reading
# waits SETTLE seconds after the run, and the server's idle activity over the same time (its
# background workers, measured in step 1) is subtracted. Other load on the PostgreSQL server
# (other databases) shows in pgbench's figure and in WAL syncs. The discs database gets a
# VACUUM ANALYZE after the preparation and before each run, as autovacuum would on a live server
# (autovacuum may be off on a bench machine: without statistics the server runs at half speed).
set -euo pipefail

# The tools it runs, before anything is built or prepared (Debian: apt-get install wrk).
for tool in wrk psql pgbench; do
    command -v "$tool" >/dev/null 2>&1 || { echo "$0: needs $tool (Debian: apt-get install wrk postgresql-client)"; exit 1; }
done

SECONDS_PER_RUN="${1:-10}"
ADMIN_URL="${DATABASE_URL:-postgres://postgres@127.0.0.1:5432/postgres}"
LIVE_RATE="${LIVE_RATE:-2000}"
STREAMS="${STREAMS:-1000}"
SETTLE="${SETTLE:-11}"
read -r -a CLIENTS <<<"${CLIENTS:-1 8 32}"
read -r -a SOLO_CLIENTS <<<"${SOLO_CLIENTS-1 8}"
BIN="${CARGO_TARGET_DIR:-target}/release"
PSQL=(psql -X -q -v ON_ERROR_STOP=1)
LIVE_DB="discs_live_$$"
PGBENCH_DB="discs_pgbench_$$"

# The admin URL with another database name in place of its own.
url_for() {
    local base="${ADMIN_URL%%\?*}" query=""
    [[ "$ADMIN_URL" == *\?* ]] && query="?${ADMIN_URL#*\?}"
    local rest="${base#*://}"
    echo "${base%%://*}://${rest%%/*}/$1${query}"
}
LIVE_URL="$(url_for "$LIVE_DB")"
PGBENCH_URL="$(url_for "$PGBENCH_DB")"

workdir="$(mktemp -d)"
server_pid="" streams_pid="" pgbench_pid=""
cleanup() {
    for pid in $streams_pid $pgbench_pid $server_pid; do
        kill "$pid" 2>/dev/null || true
        wait "$pid" 2>/dev/null || true
    done
    for db in "$LIVE_DB" "$PGBENCH_DB"; do
        "${PSQL[@]}" "$ADMIN_URL" -c "DROP DATABASE IF EXISTS \"$db\" WITH (FORCE)" >/dev/null 2>&1 || true
    done
    rm -rf "$workdir"
}
trap cleanup EXIT

echo "# live-vs-pgbench $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "command: $0 $*  (LIVE_RATE=$LIVE_RATE STREAMS=$STREAMS SETTLE=$SETTLE)"
changed="$(git status --porcelain --untracked-files=no -- . ':(exclude)bench' 2>/dev/null | wc -l)"
echo "commit: $(git rev-parse HEAD 2>/dev/null || echo unknown), $changed uncommitted changed files outside bench/"

echo "machine: $(nproc) cores, $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1), load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "postgres: $("${PSQL[@]}" -tA "$ADMIN_URL" -c 'SHOW server_version') (autovacuum $("${PSQL[@]}" -tA "$ADMIN_URL" -c 'SHOW autovacuum'))  wrk: $(wrk -v 2>&1 | head -1 | cut -d' ' -f2)  pgbench: $(pgbench --version | cut -d' ' -f3)"
echo

cargo build --release -q -p discs -p bench

# --- the server ---------------------------------------------------------------------------
free_port() {
    local port
    while :; do
        port=$(( 20000 + RANDOM % 40000 ))
        (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null || { echo "$port"; return; }
    done
}
PORT="$(free_port)"
BASE="http://127.0.0.1:$PORT"
"${PSQL[@]}" "$ADMIN_URL" -c "CREATE DATABASE \"$LIVE_DB\""
# The matches the runs play: one fresh slice per wrk run, and one more for the streams.
RUNS=$(( ${#CLIENTS[@]} + ${#SOLO_CLIENTS[@]} + 2 ))
PER_RUN="${MATCHES_PER_RUN:-$(( 2 * LIVE_RATE * SECONDS_PER_RUN / 3 + 256 ))}"
TOTAL=$(( RUNS * PER_RUN + 1 ))
# The match cache keeps its entries in two generations of half its size each, so it surely
# holds only the last half of its capacity: sized for every prepared match, as a live server's
# cache is for the matches being played, so that no run reloads its matches from the log.
MATCH_CACHE=$(( 2 * TOTAL + 1024 ))
DATABASE_URL="$LIVE_URL" DISCS_ADDR="127.0.0.1:$PORT" DISCS_MATCH_CACHE="$MATCH_CACHE" \
    DISCS_RATE_PER_SECOND=1000000000 DISCS_RATE_BURST=1000000000 DISCS_SIGNUPS_PER_MINUTE=1000000000 \
    DISCS_PRESENCE_SECONDS=86400 DISCS_RETURN_SECONDS=86400 \
    "$BIN/discs" serve >"$workdir/server.log" 2>&1 &
server_pid=$!
for _ in $(seq 1 120); do
    curl -fsS -o /dev/null "$BASE/healthz" 2>/dev/null && break
    kill -0 "$server_pid" 2>/dev/null || { echo "the server exited:"; tail -20 "$workdir/server.log"; exit 1; }
    sleep 0.5
done
curl -fsS -o /dev/null "$BASE/healthz" || { echo "no /healthz after 60 s"; tail -20 "$workdir/server.log"; exit 1; }
echo "server: $BIN/discs serve on $BASE, database $LIVE_DB"

# --- matches -------------------------------------------------------------------------------------
DATA="$workdir/matches.lua"
echo "matches: $TOTAL prepared, $PER_RUN per run; match cache $MATCH_CACHE entries (DISCS_MATCH_CACHE)"
# Autovacuum's part while the tables grow from empty (it may be off on a bench machine): plans
# made on empty tables scan whole tables, and the preparation would slow down as it goes.
( while sleep 5; do "${PSQL[@]}" "$LIVE_URL" -c "ANALYZE" >/dev/null 2>&1 || true; done ) &
analyze_pid=$!
"$BIN/live-bench" prepare --base "$BASE" --matches "$TOTAL" --out "$DATA"
kill "$analyze_pid" 2>/dev/null || true
wait "$analyze_pid" 2>/dev/null || true
STREAM_MATCH="$(awk 'NF == 2 { id = $2 } END { print id }' "$DATA")"   # the last pair
next_slice=0

# --- pgbench's scratch database: one single-row INSERT per transaction ----------------------
"${PSQL[@]}" "$ADMIN_URL" -c "CREATE DATABASE \"$PGBENCH_DB\""
"${PSQL[@]}" "$PGBENCH_URL" -c "CREATE TABLE scratch (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    stream_id text NOT NULL,
    data jsonb NOT NULL,
    recorded_at timestamptz NOT NULL DEFAULT now())"
cat >"$workdir/insert.sql" <<'SQL'
\set m random(1, 1000000000)
INSERT INTO scratch (stream_id, data) VALUES ('match-' || :m, '{"seat":1,"move":"d3","by":"human"}');
SQL

# --- database counters ------------------------------------------------------------------------
LIVE_OID="(SELECT oid FROM pg_database WHERE datname = '$LIVE_DB')"
if [[ "$("${PSQL[@]}" -tA "$ADMIN_URL" -c 'SHOW shared_preload_libraries')" == *pg_stat_statements* ]]; then
    HAVE_PGSS=1
    "${PSQL[@]}" "$LIVE_URL" -c 'CREATE EXTENSION IF NOT EXISTS pg_stat_statements'
    STMT_SQL="(SELECT coalesce(sum(calls), 0) FROM pg_stat_statements WHERE dbid = $LIVE_OID)"
else
    HAVE_PGSS=0
    STMT_SQL="0"
fi
# Forgets the discs database's statements (only those), so that none is evicted during a run.
reset_statements() {
    (( ! HAVE_PGSS )) || "${PSQL[@]}" -tA "$LIVE_URL" -c "SELECT pg_stat_statements_reset(0, $LIVE_OID, 0)" >/dev/null
}
# "seconds xact_commit wal_sync statements" for the discs database, once the statistics settled.
counters() {
    "${PSQL[@]}" -tA -F' ' "$LIVE_URL" -c "SELECT extract(epoch FROM clock_timestamp()),
        (SELECT xact_commit FROM pg_stat_database WHERE datname = '$LIVE_DB'),
        (SELECT wal_sync FROM pg_stat_wal), $STMT_SQL"
}
# The server's own idle activity (background workers) per second: subtracted from every run.
"${PSQL[@]}" "$LIVE_URL" -c 'VACUUM ANALYZE'
sleep "$SETTLE"
read -r t0 x0 w0 s0 <<<"$(counters)"
sleep "$SETTLE"
read -r t1 x1 w1 s1 <<<"$(counters)"
IDLE_X="$(awk -v a="$x0" -v b="$x1" -v t="$t0" -v u="$t1" 'BEGIN { print (b - a) / (u - t) }')"
IDLE_W="$(awk -v a="$w0" -v b="$w1" -v t="$t0" -v u="$t1" 'BEGIN { print (b - a) / (u - t) }')"
IDLE_S="$(awk -v a="$s0" -v b="$s1" -v t="$t0" -v u="$t1" 'BEGIN { print (b - a) / (u - t) }')"
printf 'idle server: %.1f transactions/s, %.1f WAL syncs/s (cluster), %.1f statements/s\n\n' "$IDLE_X" "$IDLE_W" "$IDLE_S"

# --- one measured run ---------------------------------------------------------------------------
field() { sed -n "s/.*[[:space:]]$1=\([0-9.]*\).*/\1/p" | head -1; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "n/a" }'; }
# per_move DELTA IDLE_RATE SECONDS MOVES: (DELTA - IDLE_RATE * SECONDS) / MOVES
per_move() { awk -v d="$1" -v i="$2" -v s="$3" -v m="$4" 'BEGIN { if (m > 0) printf "%.2f", (d - i * s) / m; else print "n/a" }'; }

# CPU in clock ticks so far (user + system): `cpu_server`, the server's process; `cpu_postgres`,
# every process named postgres with its reaped children (the backends that exited); `cpu_idle`,
# the machine's idle and I/O-wait time over all cores (/proc/stat).
HZ="$(getconf CLK_TCK)"
cpu_server() { awk '{ sub(/^.*\) /, ""); print $12 + $13 }' "/proc/$server_pid/stat"; }
cpu_postgres() {
    local pids
    pids="$(pgrep -x postgres | sed 's|.*|/proc/&/stat|')"
    [[ -n "$pids" ]] || { echo 0; return; }
    # shellcheck disable=SC2086 # one path per process
    cat $pids 2>/dev/null | awk '{ sub(/^.*\) /, ""); t += $12 + $13 + $14 + $15 } END { print t + 0 }'
}
cpu_idle() { awk '$1 == "cpu" { print $5 + $6 }' /proc/stat; }
# The CPU a command's `time` reported (TIMEFORMAT='%U %S', seconds) in clock ticks.
timed_ticks() { awk -v hz="$HZ" '{ printf "%.0f", ($1 + $2) * hz }' "$1"; }
# us_per TICKS COUNT: microseconds of CPU per item.
us_per() { awk -v t="$1" -v n="$2" -v hz="$HZ" 'BEGIN { if (n > 0) printf "%.0f", t / hz * 1e6 / n; else print "n/a" }'; }
TIMEFORMAT='%U %S'

# run CLIENTS WITH_PGBENCH(0|1): sets WRK (its live-moves line), TPS, XACT, WALS, STMTS, and the
# CPU per move of the run (CPU_SERVER, CPU_PG, CPU_CLIENT, CPU_IDLE: microseconds; meaningful
# without pgbench only, since PostgreSQL's processes then serve the moves alone).
run() {
    local c="$1" with_pgbench="$2" t=$(( $1 < 2 ? $1 : 2 ))
    local first=$(( next_slice * PER_RUN ))
    next_slice=$(( next_slice + 1 ))
    local ta xa wa sa tb xb wb sb
    "${PSQL[@]}" "$LIVE_URL" -c 'VACUUM ANALYZE'
    reset_statements
    read -r ta xa wa sa <<<"$(counters)"
    if (( with_pgbench )); then
        pgbench -n -c "$c" -j "$t" -T "$SECONDS_PER_RUN" -f "$workdir/insert.sql" "$PGBENCH_URL" \
            >"$workdir/pgbench.out" 2>&1 &
        pgbench_pid=$!
    fi
    local s0 p0 i0 s1 p1 i1
    s0="$(cpu_server)" p0="$(cpu_postgres)" i0="$(cpu_idle)"
    { time wrk -t"$t" -c"$c" -d"${SECONDS_PER_RUN}s" --timeout 30s -s bench/live-moves.lua "$BASE" \
        -- "$DATA" "$first" "$PER_RUN" "$t" >"$workdir/wrk.out" 2>&1; } 2>"$workdir/wrk.time" \
        || { cat "$workdir/wrk.out"; exit 1; }
    s1="$(cpu_server)" p1="$(cpu_postgres)" i1="$(cpu_idle)"
    TPS="-"
    if (( with_pgbench )); then
        wait "$pgbench_pid" || { cat "$workdir/pgbench.out"; exit 1; }
        pgbench_pid=""
        TPS="$(sed -n 's/^tps = \([0-9.]*\).*/\1/p' "$workdir/pgbench.out")"
    fi
    WRK="$(grep '^live-moves moves=' "$workdir/wrk.out")" || { cat "$workdir/wrk.out"; exit 1; }
    grep -E '^live-moves first|Non-2xx|Socket errors' "$workdir/wrk.out" | sed "s/^/  [$c clients] /" || true
    if (( $(field exhausted <<<"$WRK") > 0 )); then
        echo "  [$c clients] WARNING: wrk ran out of prepared matches; the rate is understated (raise LIVE_RATE)"
    fi
    [[ -n "${STREAMS_HOOK:-}" ]] && "$STREAMS_HOOK"
    sleep "$SETTLE"
    read -r tb xb wb sb <<<"$(counters)"
    local moves secs
    moves="$(field moves <<<"$WRK")"
    secs="$(awk -v a="$ta" -v b="$tb" 'BEGIN { print b - a }')"
    XACT="$(per_move $(( xb - xa )) "$IDLE_X" "$secs" "$moves")"
    WALS="$(per_move $(( wb - wa )) "$IDLE_W" "$secs" "$moves")"
    STMTS="$(per_move $(( sb - sa )) "$IDLE_S" "$secs" "$moves")"
    (( HAVE_PGSS )) || STMTS="-"
    (( ! with_pgbench )) || WALS="-"   # cluster-wide: pgbench's syncs would count
    CPU_SERVER="$(us_per $(( s1 - s0 )) "$moves")" CPU_PG="$(us_per $(( p1 - p0 )) "$moves")"
    CPU_CLIENT="$(us_per "$(timed_ticks "$workdir/wrk.time")" "$moves")"
    CPU_IDLE="$(us_per $(( i1 - i0 )) "$moves")"
    local cpu=" cpu_us_per_move=server:$CPU_SERVER,postgres:$CPU_PG,wrk:$CPU_CLIENT,idle:$CPU_IDLE"
    (( ! with_pgbench )) || cpu=""   # PostgreSQL's processes serve pgbench too
    echo "  run clients=$c pgbench_tps=$TPS ${WRK#live-moves } xacts_per_move=$XACT statements_per_move=$STMTS wal_syncs_per_move=$WALS${cpu} load=$(cut -d' ' -f1 /proc/loadavg)"
}

# run_pgbench CLIENTS: pgbench alone; sets TPS and its CPU per INSERT (CPU_PG, CPU_CLIENT,
# CPU_IDLE: microseconds).
run_pgbench() {
    local c="$1" t=$(( $1 < 2 ? $1 : 2 )) p0 i0 p1 i1 inserts
    p0="$(cpu_postgres)" i0="$(cpu_idle)"
    { time pgbench -n -c "$c" -j "$t" -T "$SECONDS_PER_RUN" -f "$workdir/insert.sql" "$PGBENCH_URL" \
        >"$workdir/pgbench.out" 2>&1; } 2>"$workdir/pgbench.time" || { cat "$workdir/pgbench.out"; exit 1; }
    p1="$(cpu_postgres)" i1="$(cpu_idle)"
    TPS="$(sed -n 's/^tps = \([0-9.]*\).*/\1/p' "$workdir/pgbench.out")"
    inserts="$(sed -n 's/^number of transactions actually processed: \([0-9]*\).*/\1/p' "$workdir/pgbench.out")"
    CPU_PG="$(us_per $(( p1 - p0 )) "$inserts")"
    CPU_CLIENT="$(us_per "$(timed_ticks "$workdir/pgbench.time")" "$inserts")"
    CPU_IDLE="$(us_per $(( i1 - i0 )) "$inserts")"
    echo "  pgbench clients=$c tps=$TPS inserts=$inserts cpu_us_per_insert=postgres:$CPU_PG,pgbench:$CPU_CLIENT,idle:$CPU_IDLE load=$(cut -d' ' -f1 /proc/loadavg)"
}
# busy A B C: their sum (microseconds of busy CPU per item).
busy() { awk -v a="$1" -v b="$2" -v c="$3" 'BEGIN { printf "%.0f", a + b + c }'; }

# --- 1. moves next to pgbench -----------------------------------------------------------------
echo "## HTTP moves (wrk, bench/live-moves.lua) and pgbench one-row INSERTs at the same time, ${SECONDS_PER_RUN}s each"
declare -a ROWS
for c in "${CLIENTS[@]}"; do
    run "$c" 1
    ROWS+=("$(printf '| %d | %.0f | %.0f | %s | %s ms | %s ms | %s | %s |' "$c" "$TPS" \
        "$(field moves_per_s <<<"$WRK")" "$(ratio "$(field moves_per_s <<<"$WRK")" "$TPS")" \
        "$(field p50_ms <<<"$WRK")" "$(field p99_ms <<<"$WRK")" "$(field non2xx <<<"$WRK")" "$XACT")")
done
echo
echo "| clients | pgbench INSERT tps | HTTP moves/s | ratio | move p50 | move p99 | non-2xx | xacts/move |"
echo "|---|---|---|---|---|---|---|---|"
printf '%s\n' "${ROWS[@]}"
echo

# --- 2. what a move costs the database, without pgbench ------------------------------------------
echo "## Per move, wrk alone (${SECONDS_PER_RUN}s each; idle server activity subtracted)"
ROWS=()
declare -A MOVE_CPU
for c in "${SOLO_CLIENTS[@]}"; do
    run "$c" 0
    ROWS+=("$(printf '| %d | %.0f | %s ms | %s ms | %s | %s | %s | %s |' "$c" \
        "$(field moves_per_s <<<"$WRK")" "$(field p50_ms <<<"$WRK")" "$(field p99_ms <<<"$WRK")" \
        "$(field non2xx <<<"$WRK")" "$XACT" "$STMTS" "$WALS")")
    MOVE_CPU[$c]="$(field moves_per_s <<<"$WRK") $CPU_SERVER $CPU_PG $CPU_CLIENT $CPU_IDLE"
done
echo
echo "| clients | HTTP moves/s | move p50 | move p99 | non-2xx | xacts/move | SQL statements/move | WAL syncs/move |"
echo "|---|---|---|---|---|---|---|---|"
printf '%s\n' "${ROWS[@]}"
if (( ! HAVE_PGSS )); then
    echo
    echo "SQL statements/move: pg_stat_statements is not loaded on this PostgreSQL server. To enable it, add"
    echo "shared_preload_libraries = 'pg_stat_statements' to postgresql.conf (or ALTER SYSTEM SET"
    echo "shared_preload_libraries = 'pg_stat_statements') and restart PostgreSQL; this script never restarts it."
fi
echo

# --- 3. what an INSERT costs the machine, pgbench alone, and what a move costs it ------------
if (( ${#SOLO_CLIENTS[@]} > 0 )); then
echo "## pgbench alone (${SECONDS_PER_RUN}s each), and the CPU of one move and of one INSERT"
ROWS=()
for c in "${SOLO_CLIENTS[@]}"; do
    run_pgbench "$c"
    read -r rate server pg client idle <<<"${MOVE_CPU[$c]}"
    move_busy="$(busy "$server" "$pg" "$client")" insert_busy="$(busy 0 "$CPU_PG" "$CPU_CLIENT")"
    ROWS+=("$(printf '| %d | %.0f | %.0f | %s + %s + %s = %s (idle %s) | %s + %s = %s (idle %s) | %s |' "$c" \
        "$rate" "$TPS" "$server" "$pg" "$client" "$move_busy" "$idle" \
        "$CPU_PG" "$CPU_CLIENT" "$insert_busy" "$CPU_IDLE" "$(ratio "$insert_busy" "$move_busy")")")
done
echo
echo "| clients | HTTP moves/s alone | pgbench INSERT tps alone | µs of CPU per move: server + PostgreSQL + wrk | per INSERT: PostgreSQL + pgbench | ratio the busy CPU predicts |"
echo "|---|---|---|---|---|---|"
printf '%s\n' "${ROWS[@]}"
echo
fi

# --- 4. moves with event streams open on another match --------------------------------------------
if [[ "$STREAMS" -gt 0 ]]; then
echo "## wrk at 8 clients with 0 and $STREAMS open event streams (on one other match)"
run 8 0
WRK0="$WRK" XACT0="$XACT"
"$BIN/live-bench" streams --base "$BASE" --match-id "$STREAM_MATCH" --count "$STREAMS" \
    >"$workdir/streams.out" 2>&1 &
streams_pid=$!
for _ in $(seq 1 600); do
    grep -q '^ready' "$workdir/streams.out" && break
    kill -0 "$streams_pid" 2>/dev/null || break
    sleep 0.5
done
if ! grep -q '^ready' "$workdir/streams.out"; then
    echo "live-bench streams did not get ready:"; cat "$workdir/streams.out"; exit 1
fi
grep -v '^streams: open=' "$workdir/streams.out" | sed 's/^/  /'
stop_streams() {
    echo "  while the run: $(grep '^streams: open=' "$workdir/streams.out" | tail -1)"
    kill "$streams_pid" 2>/dev/null || true
    wait "$streams_pid" 2>/dev/null || true
    streams_pid=""
}
STREAMS_HOOK=stop_streams run 8 0
echo
echo "| open streams | HTTP moves/s | move p50 | move p99 | non-2xx | xacts/move |"
echo "|---|---|---|---|---|---|"
stream_row() {
    printf '| %s | %.0f | %s ms | %s ms | %s | %s |\n' "$1" "$(field moves_per_s <<<"$2")" \
        "$(field p50_ms <<<"$2")" "$(field p99_ms <<<"$2")" "$(field non2xx <<<"$2")" "$3"
}
stream_row 0 "$WRK0" "$XACT0"
stream_row "$STREAMS" "$WRK" "$XACT"
echo
echo "moves/s with $STREAMS streams / without: $(ratio "$(field moves_per_s <<<"$WRK")" "$(field moves_per_s <<<"$WRK0")")"
echo "(xacts/move with streams includes the streams' own queries during the run.)"
fi

echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
errors="$(grep -ci 'error' "$workdir/server.log" || true)"
echo "server log: $errors lines mentioning an error"
grep -i 'error' "$workdir/server.log" | head -5 | sed 's/^/  /' || true
