#!/bin/sh
# The Patroni nodes' entrypoint (docker-compose.yml's `cluster` profile): the passwords the
# `secrets` service generated (/run/discs-secrets, mode 0600, this user's), handed to Patroni in
# its own variables (it reads them and keeps them out of PostgreSQL's environment), then Patroni.
set -eu
secrets=/run/discs-secrets
PATRONI_SUPERUSER_USERNAME=postgres
PATRONI_SUPERUSER_PASSWORD="$(cat "$secrets/postgres.password")"
PATRONI_REWIND_USERNAME=postgres
PATRONI_REWIND_PASSWORD="$PATRONI_SUPERUSER_PASSWORD"
PATRONI_REPLICATION_USERNAME=replicator
PATRONI_REPLICATION_PASSWORD="$(cat "$secrets/replicator.password")"
PATRONI_RESTAPI_USERNAME=patroni
PATRONI_RESTAPI_PASSWORD="$(cat "$secrets/patroni.password")"
export PATRONI_SUPERUSER_USERNAME PATRONI_SUPERUSER_PASSWORD PATRONI_REWIND_USERNAME \
    PATRONI_REWIND_PASSWORD PATRONI_REPLICATION_USERNAME PATRONI_REPLICATION_PASSWORD \
    PATRONI_RESTAPI_USERNAME PATRONI_RESTAPI_PASSWORD
exec patroni /etc/patroni.yml
