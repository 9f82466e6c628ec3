#!/bin/sh
# The discs containers' entrypoint (docker-compose.yml): every URL in DATABASE_URL and
# DATABASE_READ_URL (space-separated, each `scheme://user@host...`) gets the password the
# `secrets` service generated (postgres://postgres@h becomes postgres://postgres:<password>@h),
# then its arguments run. Shell built-ins only: the password is on no command line (and no
# globbing: a URL may hold a `?`).
set -euf
password="$(cat /run/discs-secrets/postgres.password)"

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
