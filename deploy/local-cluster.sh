#!/usr/bin/env bash
# The whole high-availability topology on one machine, on 127.0.0.1: etcd, two PostgreSQL nodes
# managed by Patroni in synchronous mode, HAProxy in front of them (a primary port and a replica
# port, health from Patroni's REST API) and in front of N `discs serve` instances (health from
# /readyz), and pgBackRest's backups of the cluster. Debian's packages (patroni, etcd-server,
# haproxy, pgbackrest) are installed when missing.
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
#   deploy/local-cluster.sh backup [full|diff|incr]
#                                    a pgBackRest backup (incr by default: a full one when there
#                                    is none), taken from the standby when one is streaming
#   deploy/local-cluster.sh restore --to <time|latest>
#                                    point-in-time restore (a PostgreSQL timestamp, e.g.
#                                    '2026-12-05 01:02:03.456+00') or to the end of the archive:
#                                    the instances and both nodes stopped, the primary restored,
#                                    the standby rebuilt from it, everything started again;
#                                    returns when everything answers, with the time it took
#   deploy/local-cluster.sh check-backups
#                                    pgbackrest check (the primary's WAL reaches the archive) and
#                                    verify (every file in the repository is whole)
#
# Ports and sizes come from the environment (defaults below); DISCS_CLUSTER_URL=hosts gives the
# instances a DATABASE_URL listing both nodes instead of HAProxy's primary port.
#
# Nothing is open without a password: the PostgreSQL roles (postgres, replicator) and Patroni's
# REST API (its calls that change something) have passwords generated at the first start, kept in
# deploy/local/*.password (mode 0600, in a folder of mode 0700); pg_hba.conf asks every
# connection, local ones too, for one (scram-sha-256). The instances get theirs in their
# DATABASE_URL; deploy/local/pgpass serves psql (PGPASSFILE, written to cluster.env).
# The instances connect as the role `discs_instance` (its password generated the same way), which
# may read and write what they keep but only read and append to the event log (no UPDATE, DELETE
# or TRUNCATE of `events`: database/src/instance_role.sql); `discs migrate`, run as the owner
# (postgres) before the instances start, applies the migrations and gives that role its rights.
# cluster.env's DATABASE_URL is the owner's, for the operator's tools and the drills.
# PostgreSQL, Patroni's REST API and HAProxy's database ports listen on DISCS_BIND_ADDRESS
# (127.0.0.1; 0.0.0.0 for every interface), HAProxy's discs port on DISCS_HTTP_BIND_ADDRESS
# (127.0.0.1); etcd, which asks for no password, and the instances (behind HAProxy) stay on
# 127.0.0.1. HAProxy names each client in X-Forwarded-For and the instances trust it alone
# (DISCS_TRUSTED_PROXIES=127.0.0.1/32) for their per-address limits. HAProxy's statistics
# (CSV at /stats;csv) answer on 127.0.0.1:DISCS_LB_STATS_PORT (8089): start returns once they
# show every instance in rotation.
#
# PostgreSQL refuses to run as root: run as root, the nodes and etcd run as the `postgres` user,
# their data under $DISCS_CLUSTER_DATA (/var/tmp/discs-cluster), a folder that must be that
# user's own: an existing one that is a symlink or someone else's is refused, a missing one is
# created (mode 0700, never through a symlink) and given to that user; everything inside it is
# written by that user, never by root.
#
# Backups (pgBackRest, stanza `discs`): the repository is $DISCS_CLUSTER_DATA/backup, its
# configuration $DISCS_CLUSTER_DATA/pgbackrest.conf (the postgres user's, mode 0600, both nodes
# listed so that a backup reads the standby's files). Whichever node is primary archives its WAL
# there (archive_mode on, a segment at least every DISCS_ARCHIVE_TIMEOUT, 10s), replicas fetch
# from it (restore_command); a node coming back after a crash first pushes the segments it had
# not archived. DISCS_BACKUP_RETENTION_FULL (2) full backups are kept, with the WAL that follows
# the oldest of them.
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
# HAProxy's own view of its servers (CSV at /stats;csv), on this machine only.
lb_stats_port="${DISCS_LB_STATS_PORT:-8089}"
# Patroni's leader key lives `ttl` seconds; the issue's drill wants a failover within ttl + 5 s.
ttl="${DISCS_PATRONI_TTL:-10}"
pg_bin="${DISCS_PG_BIN:-$(find /usr/lib/postgresql -mindepth 2 -maxdepth 2 -name bin 2>/dev/null | sort -V | tail -1)}"
discs_bin="${DISCS_BIN:-$repo/target/release/discs}"
database="${DISCS_DATABASE:-discs}"
# pgBackRest: the stanza, its configuration and repository (in the data folder), the WAL switch
# interval (PostgreSQL's archive_timeout: the most a lost cluster loses) and the full backups kept.
stanza=discs
backrest_conf="$data/pgbackrest.conf"
archive_timeout="${DISCS_ARCHIVE_TIMEOUT:-10s}"
retention_full="${DISCS_BACKUP_RETENTION_FULL:-2}"
# Where the instances keep what must outlive a restore of the database (signed checkpoints of the
# log, their key, the ledger of closed accounts): outside the database, in deploy/local/history.
history="$state/history"

log() { echo "local-cluster: $*" >&2; }

# The data folder's path goes into YAML, PostgreSQL's settings and shell commands (archive_command):
# plain characters only.
if ! [[ "$data" =~ ^/[A-Za-z0-9._/+-]+$ ]]; then
    log "DISCS_CLUSTER_DATA must be an absolute path of letters, digits and ._/+- (is: $data)"
    exit 1
fi
if ! [[ "$archive_timeout" =~ ^[1-9][0-9]*(ms|s|min|h)?$ ]]; then
    log "DISCS_ARCHIVE_TIMEOUT must be a PostgreSQL duration such as 10s or 1min (is: $archive_timeout)"
    exit 1
fi
if ! [[ "$retention_full" =~ ^[1-9][0-9]{0,6}$ ]]; then
    log "DISCS_BACKUP_RETENTION_FULL must be a whole number from 1 (is: $retention_full)"
    exit 1
fi

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
    command -v pgbackrest >/dev/null || missing+=(pgbackrest)
    if [ "${#missing[@]}" -gt 0 ]; then
        if [ "$(id -u)" != 0 ]; then
            log "missing ${missing[*]}: install them (Debian: apt-get install ${missing[*]})"
            exit 1
        fi
        log "installing ${missing[*]}"
        # With package lists that are too old (or none yet), once more after an update.
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null 2>&1 ||
            { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null; }
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

# The password named $1 (postgres, replicator, patroni, discs-instance): generated at the first start (24 random
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
    for p in postgres replicator patroni discs-instance; do secret "$p" >/dev/null; done
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
    # Whichever node is primary archives its WAL into pgBackRest's repository (a standby does
    # not: archive_mode on), a segment at least every archive_timeout while anything is written.
    archive_mode: "on"
    archive_command: $(backrest_command "$n") archive-push %p
    archive_timeout: $archive_timeout
  # A replica fetches from the archive what streaming cannot give it any more.
  recovery_conf:
    restore_command: $(backrest_command "$n") archive-get %f %p
tags:
  nofailover: false
  noloadbalance: false
  clonefrom: false
  nosync: false
YAML
}

start_patroni() {
    local n
    for n in 1 2; do start_node "$n"; done
    wait_for 120 "a primary" primary_rest
    wait_for 120 "a synchronous standby" sync_standby
}

# Patroni on node $1, unless it runs.
start_node() {
    local n="$1"
    if alive "$state/patroni$n.pid"; then return; fi
    as_pg mkdir -p -m 0700 -- "$data/node$n"
    push_leftover_wal "$n"
    patroni_config "$n" | write_pg "$data/node$n/patroni.yml"
    spawn_pg "$state/patroni$n.pid" "$data/node$n/patroni.log" patroni "$data/node$n/patroni.yml"
}

# pgBackRest as that user, on the stanza, with the postgres role's password for its connections
# (backup, check, stanza-create) in a pgpass file of that user's.
backrest() {
    as_pg env PGPASSFILE="$data/pgbackrest.pgpass" pgbackrest --config="$backrest_conf" --stanza="$stanza" "$@"
}

# The command PostgreSQL's archive_command and restore_command run on node $1: pgBackRest wants
# its pg1-path to be the folder the command runs in, that node's.
backrest_command() {
    echo "pgbackrest --config=$backrest_conf --stanza=$stanza --pg1-path=$data/node$1/data"
}

# pgBackRest's configuration: the repository in the data folder, both nodes (reached on their
# sockets), the retention; its logs, locks and spool in the data folder too.
backrest_config() {
    cat <<CONF
[global]
repo1-path=$data/backup
repo1-retention-full=$retention_full
log-path=$data/pgbackrest/log
lock-path=$data/pgbackrest/lock
spool-path=$data/pgbackrest/spool
log-level-console=warn
log-level-file=info
compress-type=lz4
process-max=2
# Files and folders of the postgres user's alone (0600, 0700), as everything in the data folder.
neutral-umask=n
# A backup starts with an immediate checkpoint, and reads the standby's files when there is one
# (the command line says --no-backup-standby when there is none).
start-fast=y
backup-standby=y

[$stanza]
CONF
    local i
    for i in 1 2; do
        cat <<CONF
pg$i-path=$data/node$i/data
pg$i-port=${pg_ports[$((i - 1))]}
pg$i-socket-path=$data/node$i
pg$i-user=postgres
CONF
    done
}

prepare_backrest() {
    backrest_config | write_pg "$backrest_conf"
    printf '*:*:*:postgres:%s\n' "$(secret postgres)" | write_pg "$data/pgbackrest.pgpass"
    as_pg mkdir -p -m 0700 -- "$data/backup" "$data/pgbackrest" "$data/pgbackrest/log" "$data/pgbackrest/lock" "$data/pgbackrest/spool"
}

# The stanza (idempotent), then a check that the primary's WAL reaches the archive.
create_stanza() {
    backrest stanza-create
    backrest check
}

stanza_exists() { as_pg test -s "$data/backup/archive/$stanza/archive.info"; }

# A node that died as primary (kill-primary) may hold completed WAL segments it had not archived
# yet: with archive_mode on, the standby promoted in its place never archives them, and a
# point-in-time restore across that moment would find a hole. Pushed before the node comes back
# (identical copies already there are accepted; one that differs is refused and named).
push_leftover_wal() {
    local n="$1" dir="$data/node$1/data"
    if ! stanza_exists || as_pg test ! -d "$dir/pg_wal/archive_status"; then return; fi
    local ready seg
    for ready in $(as_pg find "$dir/pg_wal/archive_status" -maxdepth 1 -name '*.ready' -printf '%f\n' | sort); do
        seg="${ready%.ready}"
        if backrest --pg1-path="$dir" archive-push "$dir/pg_wal/$seg" >/dev/null 2>&1; then
            as_pg mv -- "$dir/pg_wal/archive_status/$ready" "$dir/pg_wal/archive_status/$seg.done"
            log "node$n: pushed $seg, which it had not archived"
        else
            log "node$n: could not push $seg to the archive (see $data/pgbackrest/log)"
        fi
    done
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

# HAProxy's view of its servers, on this machine only: start reads it to wait until every discs
# instance is in rotation (a server checked down before its instance was up stays out until the
# next check says otherwise).
listen stats
    mode http
    bind 127.0.0.1:$lb_stats_port
    stats enable
    stats uri /stats

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
    # The schema and the instances' role, as the owner (the instances may not change the schema).
    if [ "$instances" -gt 0 ] && ! env DATABASE_URL="$(database_url)" \
        DISCS_INSTANCE_ROLE=discs_instance \
        DISCS_INSTANCE_PASSWORD_FILE="$state/discs-instance.password" \
        "$discs_bin" migrate >>"$state/migrate.log" 2>&1; then
        tail -5 "$state/migrate.log" >&2
        log "discs migrate failed"
        exit 1
    fi
    for ((i = 0; i < instances; i++)); do
        local port=$((first_instance_port + i))
        if alive "$state/discs$((i + 1)).pid"; then continue; fi
        # HAProxy reaches them from 127.0.0.1: that address alone may name the client. What
        # must outlive a restore of the database is kept in deploy/local/history (history_env);
        # DISCS_CHECKPOINT_INTERVAL, when set, comes from this environment.
        local history_vars
        mapfile -t history_vars < <(history_env)
        env DATABASE_URL="$(database_url discs_instance)" \
            DATABASE_READ_URL="$(read_url discs_instance)" \
            DISCS_ADDR="127.0.0.1:$port" DISCS_TRUSTED_PROXIES=127.0.0.1/32 \
            "${history_vars[@]}" \
            nohup "$discs_bin" serve >>"$state/discs$((i + 1)).log" 2>&1 &
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
        wait_for 30 "HAProxy to put every discs instance in rotation" lb_all_up
    fi
}

# Whether HAProxy deems every discs instance up: as many servers of `discs` as instances, each UP
# (the status is the CSV's 18th field).
lb_all_up() {
    curl -fsS --max-time 2 "http://127.0.0.1:$lb_stats_port/stats;csv" |
        awk -F, -v want="$instances" '$1 == "discs" && $2 ~ /^discs[0-9]+$/ { n++; if ($18 == "UP") up++ }
            END { exit !(n == want && up == want) }'
}

# The instances' signed checkpoints of the log, the key they sign with, and the ledger of closed
# accounts, one KEY=value a line.
history_env() {
    echo "DISCS_CHECKPOINT_DIR=$history/checkpoints"
    echo "DISCS_CHECKPOINT_KEY_FILE=$history/checkpoint.key"
    echo "DISCS_CLOSINGS_FILE=$history/closings.jsonl"
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
# by listing both nodes and letting each new connection find the one that takes writes; as the
# role $1 (postgres, the owner, by default; discs_instance for the instances). The password is in
# the URL (hex: nothing to escape).
database_url() {
    local user
    user="$(role_password "${1:-postgres}")"
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
    user="$(role_password "${1:-postgres}")"
    for p in "${pg_ports[@]}"; do urls+=("postgres://$user@$host:$p/$database"); done
    echo "${urls[*]}"
}

# `role:password` of the PostgreSQL role $1 (postgres or discs_instance).
role_password() {
    case "$1" in
    postgres) echo "postgres:$(secret postgres)" ;;
    discs_instance) echo "discs_instance:$(secret discs-instance)" ;;
    esac
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
PG_PRIMARY="host=$host port=$primary_port user=postgres dbname=$database"
$(history_env)
ENV
    if [ -n "${DISCS_CHECKPOINT_INTERVAL:-}" ]; then
        echo "DISCS_CHECKPOINT_INTERVAL=$DISCS_CHECKPOINT_INTERVAL" >>"$state/cluster.env"
    fi
    sed 's/postgres:[0-9a-f]*@/postgres:***@/g' "$state/cluster.env"
}

prepare_history() {
    mkdir -p "$history"
    chmod 0700 "$history"
}

start() {
    install_packages
    prepare_state
    prepare_data
    prepare_secrets
    prepare_history
    start_etcd
    prepare_backrest
    start_patroni
    create_stanza >/dev/null
    start_haproxy
    start_discs
    write_env
}

stop_pid() {
    local file="$1"
    if alive "$file"; then kill "$(cat "$file")" 2>/dev/null || true; fi
    reap_pid "$file"
}

# Waits (30 s at most, then SIGKILL) for the process of pid file $1, already signalled, to end.
reap_pid() {
    local file="$1"
    if alive "$file"; then
        local pid
        pid="$(cat "$file")"
        local deadline=$((SECONDS + 30))
        while kill -0 "$pid" 2>/dev/null && [ "$SECONDS" -lt "$deadline" ]; do sleep 0.2; done
        kill -9 "$pid" 2>/dev/null || true
    fi
    rm -f "$file"
}

# Every instance signalled at once, then waited for.
stop_discs() {
    local f
    for f in "$state"/discs*.pid; do
        if alive "$f"; then kill "$(cat "$f")" 2>/dev/null || true; fi
    done
    for f in "$state"/discs*.pid; do [ -e "$f" ] && reap_pid "$f"; done
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
    if data_is_ours && as_pg test -f "$backrest_conf"; then
        echo "backups ($data/backup):"
        backrest info 2>&1 | sed 's/^/  /'
    fi
}

# The cluster runs (this script started it) and its stanza exists.
require_cluster() {
    if ! state_is_ours || [ ! -f "$state/cluster.env" ] || ! data_is_ours || ! as_pg test -f "$backrest_conf"; then
        log "no cluster here: start it first"
        exit 1
    fi
}

# Node $1 (1 or 2) is a running replica (Patroni's GET /replica).
node_is_replica() { http_ok "http://$host:${rest_ports[$(($1 - 1))]}/replica"; }

# The node number of the primary now, or nothing.
primary_node() {
    local i
    for i in 1 2; do
        if http_ok "http://$host:${rest_ports[$((i - 1))]}/primary"; then echo "$i" && return 0; fi
    done
    return 1
}

# A backup of type $1 (full, diff or incr, the default: pgBackRest makes it a full one when there
# is none), its files read from the standby when one streams, then the retention applied
# (pgBackRest expires older backups and their WAL after each backup).
backup() {
    local type="${1:-incr}"
    case "$type" in
    full | diff | incr) ;;
    *)
        log "backup type must be full, diff or incr (is: $type)"
        exit 2
        ;;
    esac
    require_cluster
    local primary from=--no-backup-standby
    if ! primary="$(primary_node)"; then
        log "no primary: a backup needs one"
        exit 1
    fi
    if node_is_replica $((3 - primary)); then from=--backup-standby; fi
    local started=$SECONDS
    backrest --type="$type" "$from" backup
    # The newest backup: its label, type and how long it took.
    backrest --output=json info | python3 -c '
import json, sys
backup = json.load(sys.stdin)[0]["backup"][-1]
print("backup=%s type=%s from=%s" % (backup["label"], backup["type"], sys.argv[1]))
' "$([ "$from" = --backup-standby ] && echo "standby node$((3 - primary))" || echo "primary node$primary")"
    echo "backup_s=$((SECONDS - started))"
}

# pgbackrest check (the primary's current WAL segment reaches the archive) and verify (every
# backup and WAL file in the repository reads back whole).
check_backups() {
    require_cluster
    backrest check
    backrest verify
    echo "backups=ok"
}

# Point-in-time restore. $1 is a PostgreSQL timestamp (the database's clock, e.g. from
# `SELECT now()`) or `latest` (the end of the archive).
#
# PostgreSQL's recovery is run here, not through Patroni's custom bootstrap: that one opens
# `trust` to the superuser on the node's address while it runs, and nothing in this cluster is
# ever open without a password. So: the current WAL archived when a primary still answers (the
# target must be in the archive); the instances and both Patroni nodes stopped; the cluster's
# state removed from etcd (patronictl remove); pgBackRest restores the former primary's folder
# from the newest backup before the target; PostgreSQL replays the archive up to the target,
# listening on its socket only (in a folder of the postgres user's alone), and promotes, which
# starts a new timeline; it is stopped and Patroni takes it over as the primary of a new cluster
# state; the other node, emptied, is cloned from it (pg_basebackup) as the synchronous standby;
# HAProxy's ports follow; the instances start again. Prints the last commit recovered and the
# time it took.
restore() {
    local target="${1:-}"
    local time_re='^[0-9]{4}-[0-9]{2}-[0-9]{2}[ T][0-9]{2}:[0-9]{2}(:[0-9]{2}([.][0-9]{1,6})?)?( ?([+-][0-9]{2}(:?[0-9]{2})?|Z|UTC))?$'
    if [ "$target" != latest ] && ! [[ "$target" =~ $time_re ]]; then
        log "restore --to wants a timestamp such as '2026-12-05 01:02:03.456+00', or latest (is: $target)"
        exit 2
    fi
    require_cluster
    local info=""
    if stanza_exists; then info="$(backrest info --output=json)"; fi
    if [[ "$info" != *'"label"'* ]]; then
        log "no backup to restore from: run backup first"
        exit 1
    fi
    # A point-in-time restore starts from a backup that ended before its target: said now, before
    # anything is stopped (a target date cannot read is left to pgBackRest to judge).
    local epoch
    if [ "$target" != latest ] && epoch="$(date -d "$target" +%s 2>/dev/null)" &&
        ! python3 -c 'import json, sys; sys.exit(0 if any(b["timestamp"]["stop"] < int(sys.argv[1]) for b in json.load(sys.stdin)[0]["backup"]) else 1)' "$epoch" <<<"$info"; then
        log "no backup ended before $target (deploy/local-cluster.sh status lists them): nothing to restore from"
        exit 1
    fi
    local started
    started="$(date +%s.%N)"
    # Each step's end, in seconds since the start, on standard error.
    step() { log "$(awk -v a="$started" -v b="$(date +%s.%N)" 'BEGIN { printf "%5.1f s", b - a }') $*"; }
    local n
    n="$(primary_node)" || n=1
    log "restoring node$n to $target (the instances and both nodes stop)"
    # 1. The instances stopped: nothing writes any more, and nothing keeps a state the restore
    # takes back.
    stop_discs
    # 2. What the primary wrote until now, archived (check switches to a new segment and waits
    # until the last one is in the archive): the target must be in the archive. A lost cluster
    # has nothing more to give.
    if primary_node >/dev/null; then
        backrest check >/dev/null || log "could not archive the primary's last WAL: restoring from what the archive holds"
    fi
    step "the instances stopped, the primary's WAL archived"
    # 3. Both nodes stopped at once (Patroni killed, then its postmaster: a graceful stop would
    # take seconds, have the standby promoted, and everything here is replaced), and the
    # cluster's state removed from etcd (its leader, members, system id, timeline): the restored
    # node will initialize it anew.
    local i
    for i in 1 2; do
        if alive "$state/patroni$i.pid"; then as_pg kill -9 "$(cat "$state/patroni$i.pid")" || true; fi
        rm -f "$state/patroni$i.pid"
        if as_pg test -f "$data/node$i/data/postmaster.pid"; then
            as_pg "$pg_bin/pg_ctl" -D "$data/node$i/data" -m immediate stop >/dev/null 2>&1 || true
        fi
    done
    remove_cluster_state
    step "both nodes stopped, the cluster's state removed from etcd"
    # 4. Both folders moved aside (removed once the restore has succeeded; a restore that fails
    # leaves them there, as data.before-restore), and pgBackRest restores the primary's, with
    # the recovery target, from the newest backup that ends before it.
    trap 'if [ $? != 0 ]; then log "the restore failed: each node'"'"'s former folder is $data/nodeN/data.before-restore"; fi' EXIT
    for i in 1 2; do
        as_pg rm -rf -- "$data/node$i/data.before-restore"
        if as_pg test -e "$data/node$i/data"; then
            as_pg mv -- "$data/node$i/data" "$data/node$i/data.before-restore"
        fi
    done
    local dir="$data/node$n/data"
    local recovery=(--type=default)
    if [ "$target" != latest ]; then
        recovery=(--type=time "--target=$target" --target-action=promote)
    fi
    backrest --pg1-path="$dir" "${recovery[@]}" restore
    step "node$n's files restored"
    # 5. The archive replayed up to the target, then promoted, by PostgreSQL alone: no TCP
    # address, its socket in the node's folder (mode 0700), no synchronous standby to wait for,
    # its own archive_command (the restored configuration may be the other node's).
    local rlog="$data/node$n/restore.log"
    as_pg rm -f -- "$rlog"
    # (pg_ctl's wait ends once the recovery has begun.)
    if ! as_pg "$pg_bin/pg_ctl" -D "$dir" -l "$rlog" -w -t 3600 start -o "-c listen_addresses='' \
        -c port=${pg_ports[$((n - 1))]} -c unix_socket_directories='$data/node$n' \
        -c hba_file='$dir/pg_hba.conf' -c ident_file='$dir/pg_ident.conf' -c hot_standby=off \
        -c synchronous_standby_names='' -c archive_mode=on \
        -c archive_command='$(backrest_command "$n") archive-push %p'" >/dev/null ||
        ! wait_for 3600 "the recovery of node$n" recovered "$dir"; then
        as_pg tail -20 "$rlog" >&2
        log "the recovery failed (the target may be before the oldest backup, or past the end of the archive: 'latest' restores all it holds)"
        exit 1
    fi
    as_pg "$pg_bin/pg_ctl" -D "$dir" -m fast -w stop >/dev/null
    step "node$n recovered and promoted"
    # The last transaction recovered, as PostgreSQL logs it at the end of recovery.
    local last
    last="$(as_pg sed -n 's/.*last completed transaction was at log time \(.*\)$/\1/p' "$rlog" | tail -1)"
    # 6. Patroni takes the restored node over (a new cluster state with its system id), the other
    # node is cloned from it, HAProxy's ports follow, then the instances.
    start_node "$n"
    wait_for 300 "node$n as primary" http_ok "http://$host:${rest_ports[$((n - 1))]}/primary"
    step "node$n primary under Patroni"
    start_node $((3 - n))
    wait_for 600 "a synchronous standby" sync_standby
    step "node$((3 - n)) cloned, the synchronous standby"
    start_haproxy
    start_discs
    step "HAProxy's ports and the instances ready"
    local took
    took="$(awk -v a="$started" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')"
    write_env >/dev/null
    as_pg rm -rf -- "$data/node1/data.before-restore" "$data/node2/data.before-restore"
    trap - EXIT
    echo "restored=node$n target=$target"
    # Unknown when nothing was committed between the backup and the target.
    echo "last_commit=${last:-unknown}"
    echo "restore_s=$took"
}

# The PostgreSQL of folder $1 has ended its recovery (promoted); fails at once (the wait ends)
# when it has stopped.
recovered() {
    if ! as_pg "$pg_bin/pg_ctl" -D "$1" status >/dev/null 2>&1; then
        log "PostgreSQL stopped during the recovery"
        return 99
    fi
    as_pg "$pg_bin/pg_controldata" -D "$1" | grep -q '^Database cluster state: *in production$'
}

# Patroni's cluster state in etcd removed (patronictl remove, which asks for the cluster's name,
# then for a confirmation, then for the leader's name while a leader key lives).
remove_cluster_state() {
    local leader
    leader="$(as_pg patronictl -c "$data/node1/patroni.yml" list -f json 2>/dev/null | python3 -c '
import json, sys
print(next((m["Member"] for m in json.load(sys.stdin) if m.get("Role") == "Leader"), ""))' 2>/dev/null || true)"
    printf '%s\n' discs "Yes I am aware" "$leader" |
        as_pg patronictl -c "$data/node1/patroni.yml" remove discs >/dev/null
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
backup) backup "${2:-incr}" ;;
restore)
    if [ "${2:-}" != --to ] || [ -z "${3:-}" ]; then
        echo "usage: $0 restore --to <time|latest>" >&2
        exit 2
    fi
    restore "$3"
    ;;
check-backups) check_backups ;;
*)
    echo "usage: $0 start|stop|status|restart-discs|kill-primary|wait-promoted|switchover N|back|wait-healthy [seconds]|backup [full|diff|incr]|restore --to <time|latest>|check-backups" >&2
    exit 2
    ;;
esac
