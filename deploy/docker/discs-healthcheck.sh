#!/bin/bash
# The discs image's HEALTHCHECK (Dockerfile): healthy when `GET /readyz` answers 200 (the
# database answers and is migrated). No curl in the image: bash's /dev/tcp, on the address
# DISCS_ADDR names (0.0.0.0 or [::] ask 127.0.0.1). Exit 0 healthy, 1 not.
set -u
addr="${DISCS_ADDR:-127.0.0.1:8080}"
port="${addr##*:}"
host="${addr%:*}"
host="${host#[}"
host="${host%]}"
case "$host" in
'' | 0.0.0.0 | ::) host=127.0.0.1 ;;
esac
exec 3<>"/dev/tcp/$host/$port" || exit 1
printf 'GET /readyz HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n' "$host" >&3 || exit 1
IFS=' ' read -r -t 5 _ status _ <&3 || exit 1
[ "$status" = 200 ] || exit 1
