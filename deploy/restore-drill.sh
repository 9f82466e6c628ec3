#!/usr/bin/env bash
# The restore drill (issue 45), run by .ci/run beside schemathesis, before the failover drill: the local topology
# (deploy/local-cluster.sh) with pgBackRest archiving the primary's WAL; players play through
# HAProxy, a full backup is taken in the middle, the projections are snapshotted, the restore
# target is read from the database's clock, then one account is closed (after the target: the
# restore loses it, and discs must apply it again from its ledger kept outside the database) and
# a superuser makes the destructive mistake (every finished match's events deleted, the match
# history dropped). `local-cluster.sh restore --to <target>` brings the cluster back to the
# target; then `discs verify` checks the log against the signed checkpoints kept outside the
# database, `discs rebuild` rebuilds the projections from the log, and the `restore-drill`
# client checks every acknowledged move, the chains, the projections against the snapshot, the
# closed account's name gone, and a move played.
# It prints the recovery time and the data lost (the target less the last commit recovered).
# Everything it started is removed at the end, whatever the outcome.
#
#   deploy/restore-drill.sh
#   DISCS_DRILL_NO_BUILD=1 deploy/restore-drill.sh    uses the binaries as they are
#   DISCS_DRILL_PROFILE=dev deploy/restore-drill.sh   the dev build (.ci/run: the one `cargo
#                                                     test` made; release by default)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

cluster=deploy/local-cluster.sh
profile="${DISCS_DRILL_PROFILE:-release}"
bin="target/$([ "$profile" = dev ] && echo debug || echo "$profile")"
drill="${DISCS_RESTORE_DRILL_BIN:-$bin/restore-drill}"
discs="${DISCS_BIN:-$PWD/$bin/discs}"
export DISCS_BIN="$discs"
trap '$cluster stop >/dev/null 2>&1 || true' EXIT
if [ -z "${DISCS_DRILL_NO_BUILD:-}" ]; then
    if [ "$profile" = dev ]; then
        # As `cargo test` builds (its profile and features, the dev-dependencies' included):
        # after the tests only the bench's binaries are compiled, not the server a second time.
        cargo build -q --profile test --workspace --bins --tests
    else
        cargo build --profile "$profile" -q -p discs -p bench --bin discs --bin restore-drill
    fi
fi
$cluster stop >/dev/null 2>&1 || true
# The players play as fast as the server answers; the instances sign a checkpoint of the log
# every second (DISCS_CHECKPOINT_INTERVAL), kept in deploy/local/history with the ledger of closed
# accounts (local-cluster.sh gives them DISCS_CHECKPOINT_DIR, DISCS_CHECKPOINT_KEY_FILE and
# DISCS_CLOSINGS_FILE).
export DISCS_RATE_PER_SECOND=100000 DISCS_RATE_BURST=100000 DISCS_INSTANCES=2 DISCS_CHECKPOINT_INTERVAL=1
$cluster start >/dev/null
set -a
# shellcheck disable=SC1091 # written by local-cluster.sh start
. deploy/local/cluster.env
set +a
# The drill's files, removed with the cluster.
work=deploy/local/restore-drill
mkdir -p "$work"
chmod 0700 "$work"
# psql on HAProxy's primary port, as the superuser (its password in PGPASSFILE).
primary_psql() { psql -X -q -v ON_ERROR_STOP=1 "$PG_PRIMARY" "$@"; }
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

"$drill" load --secs 6 --record "$work/acked-1.jsonl"
$cluster backup full
"$drill" load --secs 6 --record "$work/acked-2.jsonl"
"$drill" snapshot --out "$work/before.json"
# The restore target: the database's clock, after every acknowledged move and before the closing.
target="$(primary_psql -Atc 'SELECT now()')"
echo "restore-drill target=$target"
# The checkpoints published by then: what the restored log must extend. One signed later may
# cover an event committed after the target (a ticket closed by the last wave, say), which the
# restore drops on purpose; verify says so plainly, and the signer stops until an operator looks.
cp -r "$DISCS_CHECKPOINT_DIR" "$work/checkpoints-at-target"
"$drill" close --out "$work/closed.json"
# The mistake: a superuser deletes every finished match's events (the append-only trigger
# disabled for it) and drops the match history.
primary_psql <<'SQL'
ALTER TABLE events DISABLE TRIGGER events_append_only;
DELETE FROM events WHERE stream_id IN (SELECT stream_id FROM events WHERE event_type = 'match_ended');
ALTER TABLE events ENABLE TRIGGER events_append_only;
DROP TABLE match_history CASCADE;
SQL
echo "restore-drill mistake: finished matches' events deleted, match_history dropped"

started="$(now)"
$cluster restore --to "$target" | tee "$work/restore.out"
recovery_s="$(since "$started")"
last_commit="$(sed -n 's/^last_commit=//p' "$work/restore.out")"

# The log against the checkpoints signed before the mistake; the projections rebuilt from the
# log; then the client's checks.
"$discs" verify --checkpoints "$work/checkpoints-at-target"
"$discs" rebuild
"$drill" check --record "$work/acked-1.jsonl" --record "$work/acked-2.jsonl" \
    --snapshot "$work/before.json" --closed "$work/closed.json"
# The repository itself: the new primary archives, every file reads back whole.
$cluster check-backups

# What the restore lost: the commits between the last one recovered and the target (none may be
# acknowledged ones: the client's check says so), as the span between the two.
loss_ms=unknown
if [ -n "$last_commit" ] && [ "$last_commit" != unknown ]; then
    loss_ms="$(primary_psql -Atc "SELECT round(extract(epoch FROM timestamptz '$target' - timestamptz '$last_commit') * 1000)")"
fi
echo "restore-drill recovery_s=$recovery_s data_loss_ms=$loss_ms target='$target' last_commit='$last_commit'"
