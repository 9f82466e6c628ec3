#!/usr/bin/env bash
# The whole high-availability topology on one machine, on 127.0.0.1: etcd, two PostgreSQL nodes
# managed by Patroni in synchronous mode, HAProxy in front of them (a primary port and a replica
# port, health from Patroni's REST API) and in front of N `discs serve` instances (health from
# /readyz). Debian's packages (patroni, etcd-server, haproxy) are installed when missing.
#
#   deploy/local-cluster.sh start    idempotent; returns when every part answers, prints the
#                                    KEY=value lines it writes to deploy/local/cluster.env
#   deploy/local-cluster.sh status   the nodes' roles and what answers
#   deploy/local-cluster.sh stop     stops and removes everything it started
#   deploy/local-cluster.sh kill-primary | wait-promoted | switchover N|back | wait-healthy
#                                    [seconds]
#                                    the failover drill's steps (deploy/failover-drill.sh)
#
# Ports and sizes come from the environment (defaults below); DISCS_CLUSTER_URL=hosts gives the
# instances a DATABASE_URL listing both nodes instead of HAProxy's primary port. PostgreSQL refuses to run as root:
# run as root, the nodes run as the `postgres` user, their data under $DISCS_CLUSTER_DATA.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(dirname "$here")"
state="$here/local"
data="${DISCS_CLUSTER_DATA:-/var/tmp/discs-cluster}"

etcd_port="${DISCS_ETCD_PORT:-23790}"
etcd_peer_port="${DISCS_ETCD_PEER_PORT:-23800}"
pg_ports=(${DISCS_PG_PORTS:-5441 5442})
rest_ports=(${DISCS_PATRONI_PORTS:-8008 8009})
primary_port="${DISCS_PRIMARY_PORT:-5440}"
replica_port="${DISCS_REPLICA_PORT:-5439}"
lb_port="${DISCS_LB_PORT:-8090}"
instances="${DISCS_INSTANCES:-2}"
first_instance_port="${DISCS_FIRST_INSTANCE_PORT:-8091}"
# Patroni's leader key lives `ttl` seconds; the issue's drill wants a failover within ttl + 5 s.
ttl="${DISCS_PATRONI_TTL:-10}"
pg_bin="${DISCS_PG_BIN:-$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)}"
discs_bin="${DISCS_BIN:-$repo/target/release/discs}"
database="${DISCS_DATABASE:-discs}"

log() { echo "local-cluster: $*" >&2; }

# Runs a command as the user PostgreSQL runs as (postgres when we are root).
as_pg() {
    if [ "$(id -u)" = 0 ]; then
        runuser -u postgres -- "$@"
    else
        "$@"
    fi
}

# Waits until `$@` succeeds, at most $1 seconds ($2 names it); exit code 99 ends it at once.
wait_for() {
    local seconds="$1" what="$2"
    shift 2
    local deadline=$((SECONDS + seconds))
    local code
    while true; do
        code=0
        "$@" >/dev/null 2>&1 || code=$?
        [ "$code" = 0 ] && return 0
        if [ "$code" = 99 ] || [ "$SECONDS" -ge "$deadline" ]; then
            log "gave up waiting for $what after ${seconds}s"
            return 1
        fi
        sleep 0.2
    done
}

alive() { [ -f "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }

http_ok() { curl -fs -o /dev/null --max-time 2 "$1"; }

install_packages() {
    local missing=()
    command -v patroni >/dev/null || missing+=(patroni)
    command -v etcd >/dev/null || missing+=(etcd-server)
    command -v haproxy >/dev/null || missing+=(haproxy)
    command -v curl >/dev/null || missing+=(curl)
    if [ "${#missing[@]}" -gt 0 ]; then
        if [ "$(id -u)" != 0 ]; then
            log "missing ${missing[*]}: install them (Debian: apt-get install ${missing[*]})"
            exit 1
        fi
        log "installing ${missing[*]}"
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
    fi
    if [ -z "$pg_bin" ] || [ ! -x "$pg_bin/postgres" ]; then
        log "no PostgreSQL server binaries under /usr/lib/postgresql (set DISCS_PG_BIN)"
        exit 1
    fi
}

start_etcd() {
    if alive "$state/etcd.pid"; then return; fi
    mkdir -p "$data/etcd"
    # Patroni's etcd3 client talks to the v3 JSON gateway.
    nohup etcd --name discs --data-dir "$data/etcd" \
        --listen-client-urls "http://127.0.0.1:$etcd_port" \
        --advertise-client-urls "http://127.0.0.1:$etcd_port" \
        --listen-peer-urls "http://127.0.0.1:$etcd_peer_port" \
        --initial-advertise-peer-urls "http://127.0.0.1:$etcd_peer_port" \
        --initial-cluster "discs=http://127.0.0.1:$etcd_peer_port" \
        >"$state/etcd.log" 2>&1 &
    echo $! >"$state/etcd.pid"
    wait_for 30 etcd http_ok "http://127.0.0.1:$etcd_port/health"
}

# The Patroni configuration of node $1 (1-based).
patroni_config() {
    local n="$1" pg_port="${pg_ports[$(($1 - 1))]}" rest_port="${rest_ports[$(($1 - 1))]}"
    cat <<EOF
scope: discs
namespace: /discs/
name: node$n
log:
  level: WARNING
restapi:
  listen: 127.0.0.1:$rest_port
  connect_address: 127.0.0.1:$rest_port
etcd3:
  host: 127.0.0.1:$etcd_port
bootstrap:
  dcs:
    ttl: $ttl
    loop_wait: 2
    retry_timeout: 3
    maximum_lag_on_failover: 1048576
    # A commit is acknowledged only once the synchronous standby has it: the node promoted
    # after a failover holds every acknowledged move.
    synchronous_mode: true
    postgresql:
      use_pg_rewind: true
      use_slots: true
      parameters:
        wal_level: replica
        hot_standby: "on"
        wal_log_hints: "on"
        max_wal_senders: 10
        max_replication_slots: 10
        max_connections: 300
        hot_standby_feedback: "on"
  initdb:
    - encoding: UTF8
    - data-checksums
  pg_hba:
    - local all all trust
    - host replication replicator 127.0.0.1/32 trust
    - host all all 127.0.0.1/32 trust
postgresql:
  listen: 127.0.0.1:$pg_port
  connect_address: 127.0.0.1:$pg_port
  data_dir: $data/node$n/data
  bin_dir: $pg_bin
  pgpass: $data/node$n/pgpass
  authentication:
    superuser:
      username: postgres
      password: postgres
    replication:
      username: replicator
      password: replicator
    rewind:
      username: postgres
      password: postgres
  parameters:
    unix_socket_directories: $data/node$n
    shared_buffers: 128MB
tags:
  nofailover: false
  noloadbalance: false
  clonefrom: false
  nosync: false
EOF
}

start_patroni() {
    local n
    for n in 1 2; do
        if alive "$state/patroni$n.pid"; then continue; fi
        mkdir -p "$data/node$n"
        patroni_config "$n" >"$data/node$n/patroni.yml"
        chmod 700 "$data/node$n"
        if [ "$(id -u)" = 0 ]; then chown -R postgres:postgres "$data/node$n"; fi
        as_pg bash -c "nohup patroni '$data/node$n/patroni.yml' >'$data/node$n/patroni.log' 2>&1 & echo \$!" \
            >"$state/patroni$n.pid"
    done
    wait_for 120 "a primary" primary_rest
    wait_for 120 "a synchronous standby" sync_standby
}

# The REST URL of the node that is primary now.
primary_rest() {
    local p
    for p in "${rest_ports[@]}"; do
        if http_ok "http://127.0.0.1:$p/primary"; then
            echo "http://127.0.0.1:$p"
            return 0
        fi
    done
    return 1
}

sync_standby() {
    local p
    for p in "${rest_ports[@]}"; do
        http_ok "http://127.0.0.1:$p/sync" && return 0
    done
    return 1
}

haproxy_config() {
    cat <<EOF
global
    maxconn 4096
    pidfile $state/haproxy.pid

defaults
    timeout connect 2s
    timeout client 1h
    timeout server 1h
    timeout check 1s

# The primary: whichever node Patroni's REST API calls primary. A node that stops being it is
# marked down within two checks, and its sessions are cut.
listen postgres_primary
    mode tcp
    bind 127.0.0.1:$primary_port
    option httpchk GET /primary
    http-check expect status 200
    default-server inter 500ms fall 2 rise 2 on-marked-down shutdown-sessions
EOF
    local i
    for i in 0 1; do
        echo "    server node$((i + 1)) 127.0.0.1:${pg_ports[$i]} check port ${rest_ports[$i]}"
    done
    cat <<EOF

# The replicas: every running standby.
listen postgres_replicas
    mode tcp
    bind 127.0.0.1:$replica_port
    balance roundrobin
    option httpchk GET /replica
    http-check expect status 200
    default-server inter 500ms fall 2 rise 2 on-marked-down shutdown-sessions
EOF
    for i in 0 1; do
        echo "    server node$((i + 1)) 127.0.0.1:${pg_ports[$i]} check port ${rest_ports[$i]}"
    done
    cat <<EOF

# The discs instances, ready when their database answers with every migration applied. While
# none is (the database switching over), the balancer answers as an instance would: 503
# unavailable with Retry-After.
listen discs
    mode http
    bind 127.0.0.1:$lb_port
    balance roundrobin
    option httpchk GET /readyz
    http-check expect status 200
    default-server inter 1s fall 2 rise 1
    errorfile 503 $state/unavailable.http
EOF
    for ((i = 0; i < instances; i++)); do
        echo "    server discs$((i + 1)) 127.0.0.1:$((first_instance_port + i)) check"
    done
}

start_haproxy() {
    haproxy_config >"$state/haproxy.cfg"
    printf '%s\r\n' "HTTP/1.1 503 Service Unavailable" "content-type: application/problem+json" \
        "retry-after: 2" "cache-control: no-store" "connection: close" "" \
        '{"type":"https://discs.dev/problems/unavailable","title":"Service Unavailable","status":503,"detail":"no discs instance is ready: the database is switching over; retry","code":"unavailable"}' \
        >"$state/unavailable.http"
    if alive "$state/haproxy.pid"; then
        # Running: reloaded in place when its configuration changed, left alone otherwise.
        if ! cmp -s "$state/haproxy.cfg" "$state/haproxy.cfg.running"; then
            haproxy -D -f "$state/haproxy.cfg" -sf "$(cat "$state/haproxy.pid")"
        fi
    else
        haproxy -D -f "$state/haproxy.cfg"
    fi
    cp "$state/haproxy.cfg" "$state/haproxy.cfg.running"
    # A freshly started HAProxy deems every server up until its checks say otherwise: wait until
    # the primary port leads to the primary only, and the replica port to the standby.
    wait_for 30 "HAProxy's primary port" pg_recovery "$primary_port" f
    wait_for 30 "HAProxy's replica port" pg_recovery "$replica_port" t
    local i
    for i in 1 2 3 4 5; do
        wait_for 10 "HAProxy's primary port" pg_recovery "$primary_port" f
    done
}

# Whether the server behind port $1 answers pg_is_in_recovery() with $2 (t or f).
pg_recovery() {
    [ "$(as_pg "$pg_bin/psql" -h 127.0.0.1 -p "$1" -U postgres -d postgres -Atc "SELECT pg_is_in_recovery()")" = "$2" ]
}

start_discs() {
    if [ ! -x "$discs_bin" ]; then
        log "building discs (cargo build --release -p discs)"
        (cd "$repo" && cargo build --release -p discs)
    fi
    local i
    for ((i = 0; i < instances; i++)); do
        local port=$((first_instance_port + i))
        if alive "$state/discs$((i + 1)).pid"; then continue; fi
        DATABASE_URL="$(database_url)" DATABASE_READ_URL="$(read_url)" \
            DISCS_ADDR="127.0.0.1:$port" \
            nohup "$discs_bin" serve >"$state/discs$((i + 1)).log" 2>&1 &
        echo $! >"$state/discs$((i + 1)).pid"
    done
    for ((i = 0; i < instances; i++)); do
        if ! wait_for 120 "discs instance $((i + 1))" instance_ready $((i + 1)); then
            tail -5 "$state/discs$((i + 1)).log" >&2
            exit 1
        fi
    done
    # With no instance (DISCS_INSTANCES=0: the database side only) nothing can answer there.
    if [ "$instances" -gt 0 ]; then
        wait_for 30 "the discs load balancer" http_ok "http://127.0.0.1:$lb_port/readyz"
    fi
}

# Instance $1 answers ready; fails at once (the wait ends) when its process has died.
instance_ready() {
    if ! alive "$state/discs$1.pid"; then
        log "discs instance $1 exited"
        return 99
    fi
    http_ok "http://127.0.0.1:$((first_instance_port + $1 - 1))/readyz"
}

# The instances reach the primary through HAProxy's primary port, or (DISCS_CLUSTER_URL=hosts)
# by listing both nodes and letting each new connection find the one that takes writes.
database_url() {
    if [ "${DISCS_CLUSTER_URL:-haproxy}" = hosts ]; then
        echo "postgres://postgres@127.0.0.1:${pg_ports[0]},127.0.0.1:${pg_ports[1]}/$database?target_session_attrs=read-write"
    else
        echo "postgres://postgres@127.0.0.1:$primary_port/$database"
    fi
}
# Every node by itself (discs reads from whichever is a standby within the lag limits, and from
# none while it is the primary): unlike HAProxy's replica port, a role change needs no restart
# and each pool's connections all reach one server.
read_url() {
    local urls=() p
    for p in "${pg_ports[@]}"; do urls+=("postgres://postgres@127.0.0.1:$p/$database"); done
    echo "${urls[*]}"
}

write_env() {
    local urls=()
    local p
    for p in "${rest_ports[@]}"; do urls+=("http://127.0.0.1:$p"); done
    cat >"$state/cluster.env" <<EOF
DISCS_URL=http://127.0.0.1:$lb_port
DATABASE_URL=$(database_url)
DATABASE_READ_URL="$(read_url)"
PATRONI_URLS="${urls[*]}"
EOF
    cat "$state/cluster.env"
}

start() {
    install_packages
    mkdir -p "$state" "$data"
    if [ "$(id -u)" = 0 ]; then chown postgres:postgres "$data"; fi
    start_etcd
    start_patroni
    start_haproxy
    start_discs
    write_env
}

stop_pid() {
    local file="$1"
    if alive "$file"; then
        local pid
        pid="$(cat "$file")"
        kill "$pid" 2>/dev/null || true
        local deadline=$((SECONDS + 30))
        while kill -0 "$pid" 2>/dev/null && [ "$SECONDS" -lt "$deadline" ]; do sleep 0.2; done
        kill -9 "$pid" 2>/dev/null || true
    fi
    rm -f "$file"
}

stop() {
    local f
    for f in "$state"/discs*.pid; do [ -e "$f" ] && stop_pid "$f"; done
    [ -e "$state/haproxy.pid" ] && stop_pid "$state/haproxy.pid"
    for f in "$state"/patroni*.pid; do [ -e "$f" ] && stop_pid "$f"; done
    # A postmaster Patroni left behind (Patroni killed hard) goes too.
    local n
    for n in 1 2; do
        if [ -f "$data/node$n/data/postmaster.pid" ]; then
            as_pg "$pg_bin/pg_ctl" -D "$data/node$n/data" -m immediate stop >/dev/null 2>&1 || true
        fi
    done
    [ -e "$state/etcd.pid" ] && stop_pid "$state/etcd.pid"
    rm -rf "$data" "$state"
    log "stopped and removed"
}

status() {
    local i
    for i in 0 1; do
        local url="http://127.0.0.1:${rest_ports[$i]}/patroni"
        local role
        role="$(curl -fsS --max-time 2 "$url" 2>/dev/null | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d.get("role","?"), d.get("state","?"), "sync" if d.get("sync_standby") else "")' 2>/dev/null || echo "down")"
        echo "node$((i + 1)) postgres=127.0.0.1:${pg_ports[$i]} patroni=127.0.0.1:${rest_ports[$i]} $role"
    done
    for ((i = 0; i < instances; i++)); do
        local port=$((first_instance_port + i))
        if http_ok "http://127.0.0.1:$port/readyz"; then r=ready; else r=down; fi
        echo "discs$((i + 1)) http://127.0.0.1:$port $r"
    done
    if http_ok "http://127.0.0.1:$lb_port/readyz"; then r=ready; else r=down; fi
    echo "load-balancer http://127.0.0.1:$lb_port $r"
}

# The failover drill's fault: the primary's machine dies. Its Patroni and its postmaster are
# killed with SIGKILL (a postmaster killed alone is restarted in place by its Patroni, which
# still holds the leader key: a crash, not a failover); the standby is promoted once the key
# expires (`ttl`). `start` brings the node back, rewound (pg_rewind) into a standby.
kill_primary() {
    local n i
    for i in 0 1; do
        if http_ok "http://127.0.0.1:${rest_ports[$i]}/primary"; then n=$((i + 1)); fi
    done
    if [ -z "${n:-}" ]; then
        log "no primary to kill"
        exit 1
    fi
    local postmaster
    postmaster="$(head -1 "$data/node$n/data/postmaster.pid")"
    kill -9 "$(cat "$state/patroni$n.pid")" "$postmaster"
    rm -f "$state/patroni$n.pid"
    echo "$n" >"$state/killed"
    echo "killed=node$n"
}

# A planned switchover to node $1 (or `back` to the node kill-primary killed): the current
# primary steps down for it once it is the synchronous standby; returns when it is primary.
switchover() {
    local to="$1" leader="" i
    # `back`: to the node the last kill-primary killed.
    if [ "$to" = back ]; then to="$(cat "$state/killed")"; fi
    for i in 0 1; do
        if http_ok "http://127.0.0.1:${rest_ports[$i]}/primary"; then leader="node$((i + 1))"; fi
    done
    if [ "$leader" = "node$to" ]; then return; fi
    local rest="http://127.0.0.1:${rest_ports[$((to - 1))]}"
    wait_for 120 "node$to as a synchronous standby" http_ok "$rest/sync"
    curl -fsS -X POST -H 'content-type: application/json' \
        -d "{\"leader\":\"$leader\",\"candidate\":\"node$to\"}" \
        "http://127.0.0.1:${rest_ports[$(( ${leader#node} - 1 ))]}/switchover" >/dev/null
    wait_for 60 "node$to as primary" http_ok "$rest/primary"
    echo "primary=node$to"
}

# Waits until Patroni has promoted a node other than the one kill-primary killed.
wait_promoted() {
    local killed other
    killed="$(cat "$state/killed")"
    other=$((3 - killed))
    wait_for "${1:-120}" "node$other promoted" http_ok "http://127.0.0.1:${rest_ports[$((other - 1))]}/primary"
    echo "promoted=node$other"
}

# Waits until both nodes run, one primary and one synchronous standby.
wait_healthy() {
    wait_for "${1:-120}" "a primary" primary_rest
    wait_for "${1:-120}" "a synchronous standby" sync_standby
}

case "${1:-}" in
start) start ;;
stop) stop ;;
status) status ;;
kill-primary) kill_primary ;;
switchover) switchover "${2:?node number or back}" ;;
wait-healthy) wait_healthy "${2:-120}" ;;
wait-promoted) wait_promoted "${2:-120}" ;;
*)
    echo "usage: $0 start|stop|status|kill-primary|wait-promoted|switchover N|back|wait-healthy [seconds]" >&2
    exit 2
    ;;
esac
