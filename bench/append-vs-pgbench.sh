#!/usr/bin/env bash
# append-vs-pgbench.sh: event-log appends/s next to pgbench's single-row INSERTs on the same
# server, at 1, 8 and 32 concurrent clients.
#
# Usage: bench/append-vs-pgbench.sh [seconds]   (default 10; DATABASE_URL = admin connection,
#        default postgres://postgres@127.0.0.1:5432/postgres). Run from the repository root.
# pgbench gets its own scratch database (discs_pgbench_<pid>), dropped at the end; the Rust
# bench creates and drops its own too.
set -euo pipefail

SECONDS_PER_RUN="${1:-10}"
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
# A scratch table shaped like an event row (identity key, text, jsonb, timestamp), one
# single-row INSERT per transaction: the floor an append cannot beat on this server.
"$PSQL" -X -q "$SCRATCH_URL" -c "CREATE TABLE scratch (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    stream_id text NOT NULL,
    data jsonb NOT NULL,
    recorded_at timestamptz NOT NULL DEFAULT now())"
cat > "$workdir/insert.sql" <<'SQL'
\set m random(1, 1000000)
INSERT INTO scratch (stream_id, data) VALUES ('match-' || :m, '{"seat":1,"move":"d3","by":"human"}');
SQL

cargo build --release -q -p bench --bin eventlog-bench

# pgbench and the Rust bench take turns at each concurrency, so that load from anything else on
# the machine hits both sides of a row alike.
declare -A PGB_TPS RUST_LINE
for c in "${CLIENTS[@]}"; do
    j=$(( c < 2 ? c : 2 ))
    out="$("$PGBENCH" -n -f "$workdir/insert.sql" -c "$c" -j "$j" -T "$SECONDS_PER_RUN" "$SCRATCH_URL" 2>&1)"
    PGB_TPS[$c]="$(sed -n 's/^tps = \([0-9.]*\).*/\1/p' <<<"$out")"
    echo "pgbench clients=$c threads=$j tps=${PGB_TPS[$c]}"
    rust_out="$(DATABASE_URL="$ADMIN_URL" ./target/release/eventlog-bench append \
        --writers "$c" --seconds "$SECONDS_PER_RUN")"
    RUST_LINE[$c]="$(grep "^append writers=$c " <<<"$rust_out")"
    echo "${RUST_LINE[$c]}"
done

echo
printf '%-8s %12s %15s %7s %12s %12s\n' clients pgbench_tps eventlog_aps ratio append_p50 append_p99
for c in "${CLIENTS[@]}"; do
    line="${RUST_LINE[$c]}"
    aps="$(sed -n 's/.*appends_per_s=\([0-9.]*\).*/\1/p' <<<"$line")"
    p50="$(sed -n 's/.*p50_ms=\([0-9.]*\).*/\1/p' <<<"$line")"
    p99="$(sed -n 's/.*p99_ms=\([0-9.]*\).*/\1/p' <<<"$line")"
    ratio="$(awk -v a="$aps" -v b="${PGB_TPS[$c]}" 'BEGIN { if (b > 0) printf "%.0f%%", 100 * a / b; else print "n/a" }')"
    printf '%-8s %12.0f %15s %7s %10s ms %10s ms\n' "$c" "${PGB_TPS[$c]}" "$aps" "$ratio" "$p50" "$p99"
done
