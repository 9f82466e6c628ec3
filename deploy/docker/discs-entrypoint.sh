#!/bin/sh
# The discs containers' entrypoint in docker-compose.yml (in the image as
# /usr/local/bin/discs-entrypoint.sh): every URL in DATABASE_URL and DATABASE_READ_URL
# (space-separated, each `scheme://user@host...`) gets the password kept in
# DATABASE_PASSWORD_FILE, by default the discs instances' copy of the one the `secrets` service
# generated (postgres://postgres@h becomes postgres://postgres:<password>@h), then its arguments
# run. Shell built-ins only (and POSIX sh: the image's is dash): the password is on no command
# line (and no globbing: a URL may hold a `?`).
set -euf
password="$(cat "${DATABASE_PASSWORD_FILE:-/run/discs-secrets/discs-postgres.password}")"

with_password() {
    out=""
    for url in $1; do
        scheme="${url%%://*}"
        rest="${url#*://}"
        out="$out${out:+ }$scheme://${rest%%@*}:$password@${rest#*@}"
    done
    printf '%s' "$out"
}

DATABASE_URL="$(with_password "$DATABASE_URL")"
export DATABASE_URL
if [ -n "${DATABASE_READ_URL:-}" ]; then
    DATABASE_READ_URL="$(with_password "$DATABASE_READ_URL")"
    export DATABASE_READ_URL
fi
exec "$@"
