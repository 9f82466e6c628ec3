#!/usr/bin/env bash
# The failover drill (issue 30), run by .ci/run: the local topology (deploy/local-cluster.sh),
# two discs instances behind HAProxy, players and 100 event streams through it; the primary's
# machine killed (Patroni and postmaster, SIGKILL) in the middle; Patroni promotes the
# standby; the old primary rejoins as a standby (pg_rewind) and a switchover brings it back.
# The checks and figures are bench/src/failover_drill.rs's. Everything it started is removed at
# the end, whatever the outcome.
#
#   deploy/failover-drill.sh [failover-drill options]
#   DISCS_CLUSTER_URL=hosts deploy/failover-drill.sh    the instances list both nodes instead
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

cluster=deploy/local-cluster.sh
trap '$cluster stop >/dev/null 2>&1 || true' EXIT
cargo build --release -q -p discs -p bench --bin discs --bin failover-drill
$cluster stop >/dev/null 2>&1 || true
# The drill's players play as fast as the server answers: no per-player rate limit in the way.
DISCS_RATE_PER_SECOND=100000 DISCS_RATE_BURST=100000 DISCS_INSTANCES=2 $cluster start
set -a
. deploy/local/cluster.env
set +a
target/release/failover-drill \
    --kill "$cluster kill-primary && $cluster wait-promoted" \
    --rejoin "$cluster start >/dev/null && $cluster wait-healthy" \
    --switchover "$cluster switchover back" \
    "$@"
# Where each instance's reads went (the standby serves the read-backs when it holds them).
for port in 8091 8092; do
    routes="$(curl -fs "http://127.0.0.1:$port/metrics" | sed -n 's/^discs_replica_reads_total{route="\(.*\)"} /\1=/p' | paste -sd' ')"
    echo "failover-drill instance :$port reads: ${routes:-none}"
done
