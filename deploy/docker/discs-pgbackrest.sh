#!/bin/sh
# pgBackRest on a node of docker-compose.yml's `cluster` profile (installed in the Patroni image
# as discs-pgbackrest), with the postgres role's password (the `secrets` volume) in a pgpass file
# of its own for the connections it opens:
#
#   docker compose exec pg1 discs-pgbackrest backup [full|diff|incr]
#       a backup (incr by default: a full one when there is none), on the primary only (the
#       other node says so); the stanza is created first when missing
#   docker compose exec pg1 discs-pgbackrest info | check | verify | ...
#       any other pgbackrest command, on the stanza
#
# Patroni runs `discs-pgbackrest post-bootstrap` once it has created the cluster: the stanza,
# never failing the bootstrap (a backup creates it later if this could not).
set -eu
umask 077
pgpass="$(mktemp)"
trap 'rm -f "$pgpass"' EXIT
printf '*:*:*:postgres:%s\n' "$(cat /run/discs-secrets/postgres.password)" >"$pgpass"
export PGPASSFILE="$pgpass"

case "${1:-}" in
backup)
    if ! curl -fs -o /dev/null http://127.0.0.1:8008/primary; then
        echo "discs-pgbackrest: this node is not the primary: run the backup on the other one" >&2
        exit 1
    fi
    pgbackrest --stanza=discs stanza-create
    pgbackrest --stanza=discs --type="${2:-incr}" backup
    pgbackrest --stanza=discs info
    ;;
post-bootstrap)
    pgbackrest --stanza=discs stanza-create ||
        echo "discs-pgbackrest: the stanza could not be created now; the first backup creates it" >&2
    ;;
'')
    echo "usage: discs-pgbackrest backup [full|diff|incr] | <pgbackrest command>" >&2
    exit 2
    ;;
*)
    pgbackrest --stanza=discs "$@"
    ;;
esac
