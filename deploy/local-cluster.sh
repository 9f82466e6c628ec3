#!/usr/bin/env bash
# The whole high-availability topology on one machine, on 127.0.0.1: etcd, two PostgreSQL nodes
# managed by Patroni in synchronous mode, HAProxy in front of them (a primary port and a replica
# port, health from Patroni's REST API) and in front of N `discs serve` instances (health from
# /readyz). Debian's packages (patroni, etcd-server, haproxy) are installed when missing.
#
#   deploy/local-cluster.sh start    idempotent; returns when every part answers, prints the
#                                    KEY=value lines it writes to deploy/local/cluster.env
#                                    (passwords masked)
#   deploy/local-cluster.sh status   the nodes' roles and what answers
#   deploy/local-cluster.sh stop     stops and removes everything it started
#   deploy/local-cluster.sh restart-discs
#                                    the discs instances again, with the environment's settings
#   deploy/local-cluster.sh kill-primary | wait-promoted | switchover N|back | wait-healthy
#                                    [seconds]
#                                    the failover drill's steps (deploy/failover-drill.sh)
#
# Ports and sizes come from the environment (defaults below); DISCS_CLUSTER_URL=hosts gives the
# instances a DATABASE_URL listing both nodes instead of HAProxy's primary port.
#
# Nothing is open without a password: the PostgreSQL roles (postgres, replicator) and Patroni's
# REST API (its calls that change something) have passwords generated at the first start, kept in
# deploy/local/*.password (mode 0600, in a folder of mode 0700); pg_hba.conf asks every
# connection, local ones too, for one (scram-sha-256). The instances get theirs in their
# DATABASE_URL; deploy/local/pgpass serves psql (PGPASSFILE, written to cluster.env).
# PostgreSQL, Patroni's REST API and HAProxy's database ports listen on DISCS_BIND_ADDRESS
# (127.0.0.1; 0.0.0.0 for every interface), HAProxy's discs port on DISCS_HTTP_BIND_ADDRESS
# (127.0.0.1); etcd, which asks for no password, and the instances (behind HAProxy) stay on
# 127.0.0.1. HAProxy names each client in X-Forwarded-For and the instances trust it alone
# (DISCS_TRUSTED_PROXIES=127.0.0.1/32) for their per-address limits.
#
# PostgreSQL refuses to run as root: run as root, the nodes and etcd run as the `postgres` user,
# their data under $DISCS_CLUSTER_DATA (/var/tmp/discs-cluster), a folder that must be that
# user's own: an existing one that is a symlink or someone else's is refused, a missing one is
# created (mode 0700, never through a symlink) and given to that user; everything inside it is
# written by that user, never by root.
set -euo pipefail
# Every file and folder this script makes is its owner's alone.
umask 077

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(dirname "$here")"
state="$here/local"
data="${DISCS_CLUSTER_DATA:-/var/tmp/discs-cluster}"

bind="${DISCS_BIND_ADDRESS:-127.0.0.1}"
http_bind="${DISCS_HTTP_BIND_ADDRESS:-127.0.0.1}"
# Where what listens on those addresses is reached from this machine.
reach() { case "$1" in 0.0.0.0 | '*') echo 127.0.0.1 ;; *) echo "$1" ;; esac; }
host="$(reach "$bind")"
http_host="$(reach "$http_bind")"
# Who may connect to PostgreSQL (always with a password): this machine, or anyone once the nodes
# listen beyond it.
if [ "$bind" = 127.0.0.1 ]; then hba_from=127.0.0.1/32; else hba_from=all; fi

etcd_port="${DISCS_ETCD_PORT:-23790}"
etcd_peer_port="${DISCS_ETCD_PEER_PORT:-23800}"
read -r -a pg_ports <<<"${DISCS_PG_PORTS:-5441 5442}"
read -r -a rest_ports <<<"${DISCS_PATRONI_PORTS:-8008 8009}"
primary_port="${DISCS_PRIMARY_PORT:-5440}"
replica_port="${DISCS_REPLICA_PORT:-5439}"
lb_port="${DISCS_LB_PORT:-8090}"
instances="${DISCS_INSTANCES:-2}"
first_instance_port="${DISCS_FIRST_INSTANCE_PORT:-8091}"
# Patroni's leader key lives `ttl` seconds; the issue's drill wants a failover within ttl + 5 s.
ttl="${DISCS_PATRONI_TTL:-10}"
pg_bin="${DISCS_PG_BIN:-$(find /usr/lib/postgresql -mindepth 2 -maxdepth 2 -name bin 2>/dev/null | sort -V | tail -1)}"
discs_bin="${DISCS_BIN:-$repo/target/release/discs}"
database="${DISCS_DATABASE:-discs}"

log() { echo "local-cluster: $*" >&2; }

# The user PostgreSQL (and etcd) run as: postgres when we are root, else ourselves.
pg_user() {
    if [ "$(id -u)" = 0 ]; then echo postgres; else id -un; fi
}

# Runs a command as that user.
as_pg() {
    if [ "$(id -u)" = 0 ]; then
        runuser -u postgres -- "$@"
    else
        "$@"
    fi
}

# Starts `$3...` in the background as that user, its output appended to $2 (a file that user
# writes, in the data folder), its pid written to $1.
spawn_pg() {
    local pidfile="$1" logfile="$2"
    shift 2
    # shellcheck disable=SC2016 # expanded by the inner shell
    as_pg bash -c 'log="$1"; shift; nohup "$@" >>"$log" 2>&1 </dev/null & echo $!' spawn "$logfile" "$@" >"$pidfile"
}

# Writes standard input to $1 as that user (mode 0600).
write_pg() {
    # shellcheck disable=SC2016 # expanded by the inner shell
    as_pg sh -c 'umask 077 && cat >"$1"' write "$1"
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

# deploy/local (pid files, HAProxy's configuration, the passwords, cluster.env, the instances'
# logs): a folder of ours, mode 0700.
state_is_ours() { [ -d "$state" ] && [ ! -L "$state" ] && [ -O "$state" ]; }

prepare_state() {
    if { [ -e "$state" ] || [ -L "$state" ]; } && ! state_is_ours; then
        log "$state is a symlink or not $(id -un)'s: refusing to use it (remove it)"
        exit 1
    fi
    mkdir -p "$state"
    chmod 0700 "$state"
}

# The data folder is ours when it is a folder (not a symlink) owned by the user the nodes run as.
data_is_ours() { [ -d "$data" ] && [ ! -L "$data" ] && [ "$(stat -c %U -- "$data")" = "$(pg_user)" ]; }

prepare_data() {
    if [ -e "$data" ] || [ -L "$data" ]; then
        if ! data_is_ours; then
            log "$data is a symlink, not a folder or not $(pg_user)'s: refusing to use it (remove it, or set DISCS_CLUSTER_DATA)"
            exit 1
        fi
        as_pg chmod 0700 -- "$data"
        return
    fi
    # mkdir without -p: it fails, rather than follow it, if anything appears there meanwhile; the
    # folder made is root's until it is given away (chown -h follows nothing), so nobody can swap
    # it in between in a sticky folder such as /var/tmp.
    if ! mkdir -m 0700 -- "$data"; then
        log "could not create $data (its parent folder must exist)"
        exit 1
    fi
    if [ "$(id -u)" = 0 ]; then chown -h postgres:postgres -- "$data"; fi
}

# The password named $1 (postgres, replicator, patroni): generated at the first start (24 random
# bytes, hex) into deploy/local/$1.password, mode 0600.
secret() {
    local file="$state/$1.password"
    if [ ! -s "$file" ]; then
        od -An -tx1 -N24 /dev/urandom | tr -d ' \n' >"$file"
    fi
    cat "$file"
}

prepare_secrets() {
    if [ ! -s "$state/postgres.password" ] && [ -d "$data/node1" ]; then
        log "$data holds a cluster but deploy/local has no password for it: run stop first"
        exit 1
    fi
    local p
    for p in postgres replicator patroni; do secret "$p" >/dev/null; done
    # For psql (this script's own checks, and operators: PGPASSFILE in cluster.env).
    printf '*:*:*:postgres:%s\n' "$(secret postgres)" >"$state/pgpass"
}

start_etcd() {
    if alive "$state/etcd.pid"; then return; fi
    # No password here: it listens on 127.0.0.1 only, whatever DISCS_BIND_ADDRESS says. Patroni's
    # etcd3 client talks to the v3 JSON gateway.
    spawn_pg "$state/etcd.pid" "$data/etcd.log" etcd --name discs --data-dir "$data/etcd" \
        --listen-client-urls "http://127.0.0.1:$etcd_port" \
        --advertise-client-urls "http://127.0.0.1:$etcd_port" \
        --listen-peer-urls "http://127.0.0.1:$etcd_peer_port" \
        --initial-advertise-peer-urls "http://127.0.0.1:$etcd_peer_port" \
        --initial-cluster "discs=http://127.0.0.1:$etcd_peer_port"
    wait_for 30 etcd http_ok "http://127.0.0.1:$etcd_port/health"
}

# The Patroni configuration of node $1 (1-based).
patroni_config() {
    local n="$1" pg_port="${pg_ports[$(($1 - 1))]}" rest_port="${rest_ports[$(($1 - 1))]}"
    cat <<YAML
scope: discs
namespace: /discs/
name: node$n
log:
  level: WARNING
restapi:
  listen: $bind:$rest_port
  connect_address: $host:$rest_port
  # Asked of the calls that change something (switchover, restart, ...), not of the health checks.
  authentication:
    username: patroni
    password: $(secret patroni)
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
        password_encryption: scram-sha-256
  # initdb sets the superuser's password (Patroni passes it in a file) and trusts nobody.
  initdb:
    - encoding: UTF8
    - data-checksums
    - auth-local: scram-sha-256
    - auth-host: scram-sha-256
  # A password for every connection, local ones too.
  pg_hba:
    - local all all scram-sha-256
    - host replication replicator $hba_from scram-sha-256
    - host all all $hba_from scram-sha-256
postgresql:
  listen: $bind:$pg_port
  connect_address: $host:$pg_port
  data_dir: $data/node$n/data
  bin_dir: $pg_bin
  pgpass: $data/node$n/pgpass
  authentication:
    superuser:
      username: postgres
      password: $(secret postgres)
    replication:
      username: replicator
      password: $(secret replicator)
    rewind:
      username: postgres
      password: $(secret postgres)
  parameters:
    unix_socket_directories: $data/node$n
    shared_buffers: 128MB
tags:
  nofailover: false
  noloadbalance: false
  clonefrom: false
  nosync: false
YAML
}

start_patroni() {
    local n
    for n in 1 2; do
        if alive "$state/patroni$n.pid"; then continue; fi
        as_pg mkdir -p -m 0700 -- "$data/node$n"
        patroni_config "$n" | write_pg "$data/node$n/patroni.yml"
        spawn_pg "$state/patroni$n.pid" "$data/node$n/patroni.log" patroni "$data/node$n/patroni.yml"
    done
    wait_for 120 "a primary" primary_rest
    wait_for 120 "a synchronous standby" sync_standby
}

# The REST URL of the node that is primary now.
primary_rest() {
    local p
    for p in "${rest_ports[@]}"; do
        if http_ok "http://$host:$p/primary"; then
            echo "http://$host:$p"
            return 0
        fi
    done
    return 1
}

sync_standby() {
    local p
    for p in "${rest_ports[@]}"; do
        http_ok "http://$host:$p/sync" && return 0
    done
    return 1
}

haproxy_config() {
    cat <<CFG
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
    bind $bind:$primary_port
    option httpchk GET /primary
    http-check expect status 200
    default-server inter 500ms fall 2 rise 2 on-marked-down shutdown-sessions
CFG
    local i
    for i in 0 1; do
        echo "    server node$((i + 1)) $host:${pg_ports[$i]} check port ${rest_ports[$i]}"
    done
    cat <<CFG

# The replicas: every running standby.
listen postgres_replicas
    mode tcp
    bind $bind:$replica_port
    balance roundrobin
    option httpchk GET /replica
    http-check expect status 200
    default-server inter 500ms fall 2 rise 2 on-marked-down shutdown-sessions
CFG
    for i in 0 1; do
        echo "    server node$((i + 1)) $host:${pg_ports[$i]} check port ${rest_ports[$i]}"
    done
    cat <<CFG

# The discs instances, ready when their database answers with every migration applied. While
# none is (the database switching over), the balancer answers as an instance would: 503
# unavailable with Retry-After.
listen discs
    mode http
    bind $http_bind:$lb_port
    balance roundrobin
    # The client's address, for the instances' per-address limits (they trust this proxy alone,
    # DISCS_TRUSTED_PROXIES=127.0.0.1/32): set, not appended, so an X-Forwarded-For the client
    # sent itself is dropped and nobody can pass for another address.
    http-request set-header X-Forwarded-For %[src]
    option httpchk GET /readyz
    http-check expect status 200
    default-server inter 1s fall 2 rise 1
    errorfile 503 $state/unavailable.http
CFG
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
    [ "$(PGPASSFILE="$state/pgpass" PGCONNECT_TIMEOUT=2 "$pg_bin/psql" -X -h "$host" -p "$1" -U postgres -d postgres -Atc "SELECT pg_is_in_recovery()")" = "$2" ]
}

start_discs() {
    if [ "$instances" -gt 0 ] && [ ! -x "$discs_bin" ]; then
        log "building discs (cargo build --release -p discs)"
        (cd "$repo" && cargo build --release -p discs)
    fi
    local i
    for ((i = 0; i < instances; i++)); do
        local port=$((first_instance_port + i))
        if alive "$state/discs$((i + 1)).pid"; then continue; fi
        # HAProxy reaches them from 127.0.0.1: that address alone may name the client.
        DATABASE_URL="$(database_url)" DATABASE_READ_URL="$(read_url)" \
            DISCS_ADDR="127.0.0.1:$port" DISCS_TRUSTED_PROXIES=127.0.0.1/32 \
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
        wait_for 30 "the discs load balancer" http_ok "http://$http_host:$lb_port/readyz"
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
# by listing both nodes and letting each new connection find the one that takes writes. The
# password is in the URL (hex: nothing to escape).
database_url() {
    local user
    user="postgres:$(secret postgres)"
    if [ "${DISCS_CLUSTER_URL:-haproxy}" = hosts ]; then
        echo "postgres://$user@$host:${pg_ports[0]},$host:${pg_ports[1]}/$database?target_session_attrs=read-write"
    else
        echo "postgres://$user@$host:$primary_port/$database"
    fi
}
# Every node by itself (discs reads from whichever is a standby within the lag limits, and from
# none while it is the primary): unlike HAProxy's replica port, a role change needs no restart
# and each pool's connections all reach one server.
read_url() {
    local urls=() p user
    user="postgres:$(secret postgres)"
    for p in "${pg_ports[@]}"; do urls+=("postgres://$user@$host:$p/$database"); done
    echo "${urls[*]}"
}

# cluster.env (mode 0600: it holds the password), printed with the passwords masked.
write_env() {
    local urls=() instance_urls=() p i
    for p in "${rest_ports[@]}"; do urls+=("http://$host:$p"); done
    for ((i = 0; i < instances; i++)); do instance_urls+=("http://127.0.0.1:$((first_instance_port + i))"); done
    cat >"$state/cluster.env" <<ENV
DISCS_URL=http://$http_host:$lb_port
DISCS_INSTANCE_URLS="${instance_urls[*]}"
DATABASE_URL=$(database_url)
DATABASE_READ_URL="$(read_url)"
PATRONI_URLS="${urls[*]}"
PGPASSFILE=$state/pgpass
ENV
    sed 's/postgres:[0-9a-f]*@/postgres:***@/g' "$state/cluster.env"
}

start() {
    install_packages
    prepare_state
    prepare_data
    prepare_secrets
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

stop_discs() {
    local f
    for f in "$state"/discs*.pid; do [ -e "$f" ] && stop_pid "$f"; done
    return 0
}

stop() {
    local f n
    if state_is_ours; then
        stop_discs
        [ -e "$state/haproxy.pid" ] && stop_pid "$state/haproxy.pid"
        for f in "$state"/patroni*.pid; do [ -e "$f" ] && stop_pid "$f"; done
    fi
    if data_is_ours; then
        # A postmaster Patroni left behind (Patroni killed hard) goes too.
        for n in 1 2; do
            if [ -f "$data/node$n/data/postmaster.pid" ]; then
                as_pg "$pg_bin/pg_ctl" -D "$data/node$n/data" -m immediate stop >/dev/null 2>&1 || true
            fi
        done
    fi
    if state_is_ours; then
        [ -e "$state/etcd.pid" ] && stop_pid "$state/etcd.pid"
    fi
    if data_is_ours; then
        rm -rf -- "$data"
    elif [ -e "$data" ] || [ -L "$data" ]; then
        log "left $data alone: a symlink, not a folder or not $(pg_user)'s"
    fi
    rm -rf -- "$state"
    log "stopped and removed"
}

# The instances stopped and started again (with this environment's DISCS_* settings).
restart_discs() {
    if ! state_is_ours || [ ! -f "$state/cluster.env" ]; then
        log "no cluster here: start it first"
        exit 1
    fi
    stop_discs
    start_discs
}

status() {
    local i r
    for i in 0 1; do
        local url="http://$host:${rest_ports[$i]}/patroni"
        local role
        role="$(curl -fsS --max-time 2 "$url" 2>/dev/null | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d.get("role","?"), d.get("state","?"), "sync" if d.get("sync_standby") else "")' 2>/dev/null || echo "down")"
        echo "node$((i + 1)) postgres=$host:${pg_ports[$i]} patroni=$host:${rest_ports[$i]} $role"
    done
    for ((i = 0; i < instances; i++)); do
        local port=$((first_instance_port + i))
        if http_ok "http://127.0.0.1:$port/readyz"; then r=ready; else r=down; fi
        echo "discs$((i + 1)) http://127.0.0.1:$port $r"
    done
    if http_ok "http://$http_host:$lb_port/readyz"; then r=ready; else r=down; fi
    echo "load-balancer http://$http_host:$lb_port $r"
}

# The failover drill's fault: the primary's machine dies. Its Patroni and its postmaster are
# killed with SIGKILL (a postmaster killed alone is restarted in place by its Patroni, which
# still holds the leader key: a crash, not a failover); the standby is promoted once the key
# expires (`ttl`). `start` brings the node back, rewound (pg_rewind) into a standby.
kill_primary() {
    local n i
    for i in 0 1; do
        if http_ok "http://$host:${rest_ports[$i]}/primary"; then n=$((i + 1)); fi
    done
    if [ -z "${n:-}" ]; then
        log "no primary to kill"
        exit 1
    fi
    local postmaster
    postmaster="$(head -1 "$data/node$n/data/postmaster.pid")"
    # As the nodes' user: a pid read from their folder can only reach their processes.
    as_pg kill -9 "$(cat "$state/patroni$n.pid")" "$postmaster"
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
        if http_ok "http://$host:${rest_ports[$i]}/primary"; then leader="node$((i + 1))"; fi
    done
    if [ "$leader" = "node$to" ]; then return; fi
    local rest="http://$host:${rest_ports[$((to - 1))]}"
    wait_for 120 "node$to as a synchronous standby" http_ok "$rest/sync"
    # The REST API's password goes to curl on its standard input, not on a command line.
    printf 'user = "patroni:%s"\n' "$(cat "$state/patroni.password")" |
        curl -fsS -K - -X POST -H 'content-type: application/json' \
            -d "{\"leader\":\"$leader\",\"candidate\":\"node$to\"}" \
            "http://$host:${rest_ports[$((${leader#node} - 1))]}/switchover" >/dev/null
    wait_for 60 "node$to as primary" http_ok "$rest/primary"
    echo "primary=node$to"
}

# Waits until Patroni has promoted a node other than the one kill-primary killed.
wait_promoted() {
    local killed other
    killed="$(cat "$state/killed")"
    other=$((3 - killed))
    wait_for "${1:-120}" "node$other promoted" http_ok "http://$host:${rest_ports[$((other - 1))]}/primary"
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
restart-discs) restart_discs ;;
kill-primary) kill_primary ;;
switchover) switchover "${2:?node number or back}" ;;
wait-healthy) wait_healthy "${2:-120}" ;;
wait-promoted) wait_promoted "${2:-120}" ;;
*)
    echo "usage: $0 start|stop|status|restart-discs|kill-primary|wait-promoted|switchover N|back|wait-healthy [seconds]" >&2
    exit 2
    ;;
esac
