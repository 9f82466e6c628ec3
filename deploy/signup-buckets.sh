#!/usr/bin/env bash
# Two clients, two buckets (issue 42), through the local cluster's HAProxy: a client at 127.0.0.2
# signs up (POST /v1/players) until every discs instance refuses it (429), then a client at
# 127.0.0.3 signs up once per instance and must be accepted each time (201), and the first client,
# forging an X-Forwarded-For, must still be refused. HAProxy names each client in X-Forwarded-For
# and the instances read it from that proxy alone (DISCS_TRUSTED_PROXIES): without that, every
# client shares HAProxy's address and one bucket. Exits non-zero, saying why, when the clients
# share a bucket or the first one is never refused. Run by deploy/failover-drill.sh.
#
#   DISCS_SIGNUPS_PER_MINUTE=3 deploy/local-cluster.sh start && deploy/signup-buckets.sh
#
# Reads DISCS_URL and DISCS_INSTANCE_URLS (each instance's own address, for its /metrics) from the
# environment, else from deploy/local/cluster.env. Each instance keeps its own buckets, so the
# first client is done once every instance's count of refused sign-ups has grown.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

if [ -z "${DISCS_URL:-}" ] || [ -z "${DISCS_INSTANCE_URLS:-}" ]; then
    set -a
    # shellcheck disable=SC1091
    . deploy/local/cluster.env
    set +a
fi
read -r -a instance_urls <<<"$DISCS_INSTANCE_URLS"
first=127.0.0.2
second=127.0.0.3

fail() {
    echo "signup-buckets: FAILED: $*" >&2
    exit 1
}

# A value of instance $1's /metrics: the line starting with $2.
metric() {
    curl -fsS --max-time 5 "$1/metrics" | awk -v name="$2" 'index($0, name " ") == 1 { print $2 }'
}
refused() { metric "$1" 'discs_rate_limited_total{limit="signup"}'; }

# One sign-up from address $1 through HAProxy (more curl arguments after it); prints the status.
signup() {
    local from="$1"
    shift
    curl -sS -o /dev/null -w '%{http_code}' --max-time 10 --interface "$from" \
        -X POST -H 'content-type: application/json' \
        -d "{\"name\":\"bucket-${from//./-}-$RANDOM\"}" "$@" "$DISCS_URL/v1/players" || true
}

n="${#instance_urls[@]}"
[ "$n" -gt 0 ] || fail "no instances in DISCS_INSTANCE_URLS"
burst="$(metric "${instance_urls[0]}" 'discs_rate_limit_burst{limit="signup"}')" ||
    fail "no /metrics at ${instance_urls[0]}"
burst="${burst%.*}"
# The second client's sign-ups (one per instance, wherever HAProxy sends them) must fit its bucket.
[ "$burst" -ge "$n" ] || fail "the sign-up limit ($burst a minute) is below the instance count ($n)"

declare -A before
for url in "${instance_urls[@]}"; do
    before[$url]="$(refused "$url")" || fail "no /metrics at $url"
done
# Every instance refused the first client once its refusal count has grown.
all_refused() {
    local url
    for url in "${instance_urls[@]}"; do
        [ "$(refused "$url")" -gt "${before[$url]}" ] || return 1
    done
}

# The first client, until every instance refuses it (at most its buckets' worth and a few more).
accepted=0
tries=0
while true; do
    tries=$((tries + 1))
    [ "$tries" -le $((burst * n * 2 + n + 4)) ] ||
        fail "$first was never refused by every instance after $((tries - 1)) sign-ups ($accepted accepted)"
    code="$(signup "$first")"
    case "$code" in
    201) accepted=$((accepted + 1)) ;;
    429) all_refused && break ;;
    *) fail "$first: HTTP $code" ;;
    esac
done

# The second client: its own bucket on every instance.
second_accepted=0
for ((i = 0; i < n; i++)); do
    code="$(signup "$second")"
    [ "$code" = 201 ] || fail "$second got HTTP $code right after $first was refused: the two clients share a bucket (is X-Forwarded-For sent and DISCS_TRUSTED_PROXIES set?)"
    second_accepted=$((second_accepted + 1))
done

# The first client naming another address itself gains nothing.
for ((i = 0; i < n; i++)); do
    code="$(signup "$first" -H 'X-Forwarded-For: 203.0.113.7')"
    [ "$code" = 429 ] || fail "$first with a forged X-Forwarded-For got HTTP $code, not 429"
done

echo "signup-buckets: ok: $n instances, $burst sign-ups a minute per address each; $first: $accepted accepted (201), then refused (429) by every instance ($tries sign-ups); $second: $second_accepted of $n accepted (201); $first with a forged X-Forwarded-For: $n of $n refused (429)"
