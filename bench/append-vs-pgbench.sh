#!/usr/bin/env bash
# append-vs-pgbench.sh: event-log appends/s next to pgbench's single-row INSERTs on the same
# server, at 1, 8 and 32 concurrent clients.
#
# Three workloads take turns at each concurrency:
#  * pgbench_scratch: one single-row INSERT into a scratch table per transaction (the aim is
#    eventlog >= 60% of this);
#  * pgbench_rows: the rows an append writes (one events row with its four indexes and one
#    streams row), as one plain INSERT statement with no checks: the floor of the schema;
#  * eventlog: the Rust bench, one-event appends through EventLog::append.
#
# Usage: bench/append-vs-pgbench.sh [seconds] [rounds]   (defaults 10 and 3; DATABASE_URL =
#        admin connection, default postgres://postgres@127.0.0.1:5432/postgres). Run from the
#        repository root. Each workload runs `rounds` times per concurrency, the three taking
#        turns, and the table shows medians: on a shared machine the load of other processes
#        changes within seconds, and back-to-back turns keep the comparison fair.
# pgbench gets its own scratch database (discs_pgbench_<pid>), dropped at the end; the Rust
# bench creates and drops its own too.
set -euo pipefail

SECONDS_PER_RUN="${1:-10}"
ROUNDS="${2:-3}"
ADMIN_URL="${DATABASE_URL:-postgres://postgres@127.0.0.1:5432/postgres}"
PGBENCH="${PGBENCH:-pgbench}"
PSQL="${PSQL:-psql}"
CLIENTS=(1 8 32)
SCRATCH="discs_pgbench_$$"
# The admin URL with the scratch database in place of its database name.
base="${ADMIN_URL%%\?*}"
query=""
[[ "$ADMIN_URL" == *\?* ]] && query="?${ADMIN_URL#*\?}"
scheme_rest="${base#*://}"
hostpart="${scheme_rest%%/*}"
SCRATCH_URL="${base%%://*}://${hostpart}/${SCRATCH}${query}"

workdir="$(mktemp -d)"
cleanup() {
    "$PSQL" -X -q "$ADMIN_URL" -c "DROP DATABASE IF EXISTS \"$SCRATCH\" WITH (FORCE)" >/dev/null 2>&1 || true
    rm -rf "$workdir"
}
trap cleanup EXIT

"$PSQL" -X -q "$ADMIN_URL" -c "CREATE DATABASE \"$SCRATCH\""
"$PSQL" -X -q -v ON_ERROR_STOP=1 "$SCRATCH_URL" -f migrations/V1__event_log.sql
# A scratch table shaped like a small event row (identity key, text, jsonb, timestamp).
"$PSQL" -X -q "$SCRATCH_URL" -c "CREATE TABLE scratch (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    stream_id text NOT NULL,
    data jsonb NOT NULL,
    recorded_at timestamptz NOT NULL DEFAULT now())"
cat > "$workdir/scratch.sql" <<'SQL'
\set m random(1, 1000000000)
INSERT INTO scratch (stream_id, data) VALUES ('match-' || :m, '{"seat":1,"move":"d3","by":"human"}');
SQL
cat > "$workdir/rows.sql" <<'SQL'
WITH s AS (INSERT INTO streams VALUES (gen_random_uuid()::text, 1, sha256('\x00'::bytea)) RETURNING stream_id)
INSERT INTO events (stream_id, version, event_id, event_type, schema_version, data, actor, recorded_at, prev_hash, hash)
SELECT s.stream_id, 1, gen_random_uuid(), 'move_played', 1, '{"seat":1,"move":"d3","by":"human"}', gen_random_uuid(), now(), sha256('\x01'::bytea), sha256('\x02'::bytea) FROM s;
SQL

cargo build --release -q -p bench --bin eventlog-bench

# pgbench and the Rust bench take turns at each concurrency, so that load from anything else on
# the machine hits both sides of a row alike.
tps() { sed -n 's/^tps = \([0-9.]*\).*/\1/p'; }
field() { sed -n "s/.*$1=\([0-9.]*\).*/\1/p"; }
median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
pct() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.0f%%", 100 * a / b; else print "n/a" }'; }

declare -A SCRATCH ROWS APS P50 P99
for c in "${CLIENTS[@]}"; do
    j=$(( c < 2 ? c : 2 ))
    for round in $(seq 1 "$ROUNDS"); do
        t="$("$PGBENCH" -n -f "$workdir/scratch.sql" -c "$c" -j "$j" -T "$SECONDS_PER_RUN" "$SCRATCH_URL" 2>&1 | tps)"
        echo "pgbench workload=scratch clients=$c threads=$j round=$round tps=$t"
        SCRATCH[$c]+=" $t"
        t="$("$PGBENCH" -n -f "$workdir/rows.sql" -c "$c" -j "$j" -T "$SECONDS_PER_RUN" "$SCRATCH_URL" 2>&1 | tps)"
        echo "pgbench workload=rows clients=$c threads=$j round=$round tps=$t"
        ROWS[$c]+=" $t"
        line="$(DATABASE_URL="$ADMIN_URL" ./target/release/eventlog-bench append \
            --writers "$c" --seconds "$SECONDS_PER_RUN" | grep "^append writers=$c ")"
        echo "$line round=$round"
        APS[$c]+=" $(field appends_per_s <<<"$line")"
        P50[$c]+=" $(field p50_ms <<<"$line")"
        P99[$c]+=" $(field p99_ms <<<"$line")"
    done
done

echo
echo "medians of $ROUNDS rounds of ${SECONDS_PER_RUN}s"
printf '%-8s %16s %13s %13s %11s %10s %12s %12s\n' clients pgbench_scratch pgbench_rows eventlog_aps vs_scratch vs_rows append_p50 append_p99
for c in "${CLIENTS[@]}"; do
    s="$(median <<<"${SCRATCH[$c]}")"; r="$(median <<<"${ROWS[$c]}")"; a="$(median <<<"${APS[$c]}")"
    printf '%-8s %16.0f %13.0f %13.0f %11s %10s %9s ms %9s ms\n' "$c" "$s" "$r" "$a" \
        "$(pct "$a" "$s")" "$(pct "$a" "$r")" "$(median <<<"${P50[$c]}")" "$(median <<<"${P99[$c]}")"
done
