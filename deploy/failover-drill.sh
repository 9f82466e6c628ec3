#!/usr/bin/env bash
# The failover drill (issue 30), run by .ci/run: the local topology (deploy/local-cluster.sh),
# two discs instances behind HAProxy, players and 100 event streams through it; the primary's
# machine killed (Patroni and postmaster, SIGKILL) in the middle; Patroni promotes the
# standby; the old primary rejoins as a standby (pg_rewind) and a switchover brings it back.
# The checks and figures are bench/src/failover_drill.rs's. Before it, with the sign-up limit at
# 3 a minute, two clients through HAProxy must get two buckets (deploy/signup-buckets.sh, issue
# 42). Everything it started is removed at the end, whatever the outcome.
#
#   deploy/failover-drill.sh [failover-drill options]
#   DISCS_CLUSTER_URL=hosts deploy/failover-drill.sh    the instances list both nodes instead
#   DISCS_DRILL_NO_BUILD=1 deploy/failover-drill.sh     uses the binaries as they are
#   DISCS_DRILL_PROFILE=dev deploy/failover-drill.sh    the dev build (.ci/run: the one `cargo
#                                                       test` made; release by default)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

cluster=deploy/local-cluster.sh
trap '$cluster stop >/dev/null 2>&1 || true' EXIT
profile="${DISCS_DRILL_PROFILE:-release}"
bin="target/$([ "$profile" = dev ] && echo debug || echo "$profile")"
export DISCS_BIN="${DISCS_BIN:-$PWD/$bin/discs}"
if [ -z "${DISCS_DRILL_NO_BUILD:-}" ]; then
    if [ "$profile" = dev ]; then
        # As `cargo test` builds (its profile and features, the dev-dependencies' included):
        # after the tests only the bench's binaries are compiled, not the server a second time.
        cargo build -q --profile test --workspace --bins --tests
    else
        cargo build --profile "$profile" -q -p discs -p bench --bin discs --bin failover-drill
    fi
fi
$cluster stop >/dev/null 2>&1 || true
# The drill's players play as fast as the server answers: no per-player rate limit in the way.
export DISCS_RATE_PER_SECOND=100000 DISCS_RATE_BURST=100000 DISCS_INSTANCES=2
# Two clients, two buckets: sign-ups at 3 a minute per address (and instance).
DISCS_SIGNUPS_PER_MINUTE=3 $cluster start
deploy/signup-buckets.sh
# The drill's players all sign up from 127.0.0.1: the instances again, at the default limit.
$cluster restart-discs
set -a
# shellcheck disable=SC1091 # written by local-cluster.sh start
. deploy/local/cluster.env
set +a
"$bin/failover-drill" \
    --kill "$cluster kill-primary && $cluster wait-promoted" \
    --rejoin "$cluster start >/dev/null && $cluster wait-healthy" \
    --switchover "$cluster switchover back" \
    "$@"
# Where each instance's reads went (the standby serves the read-backs when it holds them).
for url in $DISCS_INSTANCE_URLS; do
    routes="$(curl -fs "$url/metrics" | sed -n 's/^discs_replica_reads_total{route="\(.*\)"} /\1=/p' | paste -sd' ')"
    echo "failover-drill instance ${url#http://127.0.0.1} reads: ${routes:-none}"
done
