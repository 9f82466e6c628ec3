#!/usr/bin/env bash
# replica-reads.sh: replays of finished matches read like a user, wrk over HTTP against one real
# `discs serve`, once with every read on the primary and once with DATABASE_READ_URL (both
# Patroni nodes: the standby answers), alternating, at each client count. Beside each run's
# reads/s: where discs sent the reads (its /metrics) and the CPU time each PostgreSQL node spent
# (its postmaster and backends, from /proc), per 1,000 reads.
#
# Usage: bench/replica-reads.sh [seconds]   (default 10 s per run; from the repository root)
#
# Needs the local cluster: `deploy/local-cluster.sh start` (DISCS_INSTANCES=0 is enough); reads
# deploy/local/cluster.env, and the nodes' data under $DISCS_CLUSTER_DATA (/var/tmp/discs-cluster).
#
# Environment:
#   MATCHES   finished matches prepared before the runs (default 2000, in the cluster's database)
#   CLIENTS   wrk connection counts (default "8 32"); wrk runs 2 threads
#   ROUNDS    how many times each pair of runs is repeated (default 2)
#   MIXED     matches per mixed run (default 6000; 0 skips them): then, per round and mode, wrk
#             playing moves (bench/live-moves.lua, 8 connections, three moves in each of MIXED
#             fresh solo matches) at the same time as wrk reading replays (8 connections): the
#             moves per second the primary keeps while the replays read on it or on the standby
#   CARGO_TARGET_DIR is honoured.
set -euo pipefail

SECONDS_PER_RUN="${1:-10}"
MATCHES="${MATCHES:-2000}"
ROUNDS="${ROUNDS:-2}"
MIXED="${MIXED:-6000}"
read -r -a CLIENTS <<<"${CLIENTS:-8 32}"
BIN="${CARGO_TARGET_DIR:-target}/release"
DATA="${DISCS_CLUSTER_DATA:-/var/tmp/discs-cluster}"
PORT="${PORT:-8099}"

[ -f deploy/local/cluster.env ] || {
    echo "start the cluster first: deploy/local-cluster.sh start" >&2
    exit 1
}
# shellcheck disable=SC1091
. deploy/local/cluster.env

workdir="$(mktemp -d)"
server_pid=""
cleanup() {
    if [ -n "$server_pid" ]; then
        kill "$server_pid" 2>/dev/null || true
        wait "$server_pid" 2>/dev/null || true
    fi
    rm -rf "$workdir"
}
trap cleanup EXIT

echo "# replica-reads $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "command: $0 $*  (MATCHES=$MATCHES CLIENTS=\"${CLIENTS[*]}\" ROUNDS=$ROUNDS)"
changed="$(git status --porcelain --untracked-files=no -- . ':(exclude)bench' 2>/dev/null | wc -l)"
echo "commit: $(git rev-parse HEAD 2>/dev/null || echo unknown), $changed uncommitted changed files outside bench/"
echo "machine: $(nproc) cores, $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1), load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
# The cluster's URLs carry its generated password: printed without it.
masked() { sed -E 's#(://[^:/@ ]+):[^@ ]*@#\1:***@#g' <<<"$1"; }
echo "DATABASE_URL=$(masked "$DATABASE_URL")"
echo "DATABASE_READ_URL=$(masked "$DATABASE_READ_URL")"

cargo build --release --locked -q -p discs -p bench --bin discs --bin live-bench

# Starts discs on $PORT, reading from "$1" (empty: the primary alone).
start_server() {
    DATABASE_URL="$DATABASE_URL" DATABASE_READ_URL="$1" DISCS_ADDR="127.0.0.1:$PORT" \
        DISCS_RATE_PER_SECOND=1000000 DISCS_RATE_BURST=1000000 DISCS_SIGNUPS_PER_MINUTE=1000000000 \
        DISCS_PRESENCE_SECONDS=86400 DISCS_RETURN_SECONDS=86400 DISCS_REPLICA_POLL_MS=200 RUST_LOG=warn \
        "$BIN/discs" serve >"$workdir/server.log" 2>&1 &
    server_pid=$!
    for _ in $(seq 1 300); do
        curl -fs "http://127.0.0.1:$PORT/readyz" >/dev/null 2>&1 && break
        kill -0 "$server_pid" 2>/dev/null || {
            tail -20 "$workdir/server.log" >&2
            exit 1
        }
        sleep 0.2
    done
    # Past the first measurement of the replicas (every 200 ms here).
    sleep 1
}

stop_server() {
    kill "$server_pid"
    wait "$server_pid" 2>/dev/null || true
    server_pid=""
}

# CPU seconds (user + system) used so far by node $1's postmaster and its children.
node_cpu() {
    local pid
    pid="$(head -1 "$DATA/node$1/data/postmaster.pid")"
    local ticks=0 p stat
    for p in $pid $(pgrep -P "$pid" || true); do
        stat="$(cat "/proc/$p/stat" 2>/dev/null)" || continue
        stat="${stat##*) }"
        # Fields 14 and 15 of stat (utime, stime) are the 12th and 13th after the command.
        read -r -a f <<<"$stat"
        ticks=$((ticks + f[11] + f[12]))
    done
    echo "$ticks"
}

role() {
    local urls
    read -r -a urls <<<"$PATRONI_URLS"
    if curl -fs "${urls[$(($1 - 1))]}/primary" >/dev/null 2>&1; then echo primary; else echo standby; fi
}

# The reads routed so far, from /metrics: "replica primary_behind primary_no_replica primary_failed".
routes() {
    local text
    text="$(curl -fs "http://127.0.0.1:$PORT/metrics")"
    local r
    for r in replica primary_replica_behind primary_no_replica primary_replica_failed; do
        echo "$text" | sed -n "s/^discs_replica_reads_total{route=\"$r\"} //p" | grep . || echo 0
    done | paste -sd' '
}

start_server ""
"$BIN/live-bench" prepare --base "http://127.0.0.1:$PORT" --matches "$MATCHES" --players 200 \
    --finished --out "$workdir/data.lua"
mixed_runs=$((2 * ROUNDS))
if [ "$MIXED" -gt 0 ]; then
    "$BIN/live-bench" prepare --base "http://127.0.0.1:$PORT" --matches $((MIXED * mixed_runs)) \
        --players 300 --out "$workdir/live.lua"
fi
stop_server
echo "nodes: 1=$(role 1) 2=$(role 2)"
hz="$(getconf CLK_TCK)"

run() {
    local mode="$1" clients="$2" read_url=""
    [ "$mode" = replica ] && read_url="$DATABASE_READ_URL"
    start_server "$read_url"
    local before_routes="0 0 0 0"
    [ "$mode" = replica ] && before_routes="$(routes)"
    local c1 c2
    c1="$(node_cpu 1)"
    c2="$(node_cpu 2)"
    local out
    out="$(wrk -t2 -c"$clients" -d"${SECONDS_PER_RUN}s" -s bench/replays.lua "http://127.0.0.1:$PORT" -- "$workdir/data.lua" 2)"
    local d1=$(($(node_cpu 1) - c1)) d2=$(($(node_cpu 2) - c2))
    local after_routes="0 0 0 0"
    [ "$mode" = replica ] && after_routes="$(routes)"
    stop_server
    local line reads
    line="$(echo "$out" | grep '^replays ')"
    reads="$(echo "$line" | sed -n 's/.*reads=\([0-9]*\).*/\1/p')"
    read -r -a b <<<"$before_routes"
    read -r -a a <<<"$after_routes"
    echo "$mode clients=$clients $line node1_cpu_s=$(echo "scale=2; $d1 / $hz" | bc) node2_cpu_s=$(echo "scale=2; $d2 / $hz" | bc) node1_cpu_ms_per_1000_reads=$(echo "scale=1; $d1 * 1000000 / $hz / $reads" | bc) node2_cpu_ms_per_1000_reads=$(echo "scale=1; $d2 * 1000000 / $hz / $reads" | bc) routed_replica=$((a[0] - b[0])) routed_primary=$((a[1] + a[2] + a[3] - b[1] - b[2] - b[3]))"
    echo "$out" | grep 'first non-2xx' || true
}

for clients in "${CLIENTS[@]}"; do
    for _ in $(seq 1 "$ROUNDS"); do
        run primary "$clients"
        run replica "$clients"
    done
done

# One mixed run: moves in the $2-th slice of the prepared live matches and replays, together.
mixed() {
    local mode="$1" slice="$2" read_url=""
    [ "$mode" = replica ] && read_url="$DATABASE_READ_URL"
    start_server "$read_url"
    local moves_out="$workdir/moves.out"
    wrk -t2 -c8 -d"${SECONDS_PER_RUN}s" -s bench/live-moves.lua "http://127.0.0.1:$PORT" \
        -- "$workdir/live.lua" $((slice * MIXED)) "$MIXED" 2 >"$moves_out" &
    local moves_pid=$!
    local reads
    reads="$(wrk -t2 -c8 -d"${SECONDS_PER_RUN}s" -s bench/replays.lua "http://127.0.0.1:$PORT" -- "$workdir/data.lua" 2 | grep '^replays ')"
    wait "$moves_pid"
    stop_server
    echo "mixed $mode $(grep '^live-moves ' "$moves_out") | $reads"
    grep 'first non-2xx' "$moves_out" || true
}

if [ "$MIXED" -gt 0 ]; then
    slice=0
    for _ in $(seq 1 "$ROUNDS"); do
        mixed primary "$slice"
        mixed replica $((slice + 1))
        slice=$((slice + 2))
    done
fi
