#!/usr/bin/env bash
# The container image (Dockerfile), checked where a Docker daemon answers (.ci/run runs it after
# the Dockerfiles' lint): it builds, `discs migrate` runs in it against a PostgreSQL container,
# and `discs serve` (its default command) starts as uid 10001, answers 200 on /readyz through
# the published port, writes its generated secrets in /var/lib/discs (a volume) and is reported
# healthy by the image's HEALTHCHECK. Everything it made is removed afterwards, whatever the
# outcome. Without a daemon it says that it skipped and exits 0.
#
# Usage: deploy/image-check.sh   (from the repository root or anywhere)
# Environment: DISCS_IMAGE_CHECK_POSTGRES (the server's image, default postgres:16-bookworm).
set -euo pipefail
cd "$(dirname "$0")/.."

if ! docker info >/dev/null 2>&1; then
    echo "image check skipped: no Docker daemon (docker info failed)"
    exit 0
fi

postgres_image="${DISCS_IMAGE_CHECK_POSTGRES:-postgres:16-bookworm}"
name="discs-image-check-$$"
tag="$name:latest"
# Handed to docker through its environment (-e NAME without a value): on no command line.
POSTGRES_PASSWORD="$(od -An -tx1 -N16 /dev/urandom | tr -d ' \n')"
DATABASE_URL="postgres://postgres:$POSTGRES_PASSWORD@db:5432/discs"
export POSTGRES_PASSWORD DATABASE_URL

fail() {
    echo "image check: $*" >&2
    exit 1
}

cleanup() {
    status=$?
    if [ "$status" -ne 0 ]; then
        echo "image check failed; the instance's last log lines:" >&2
        docker logs --tail 40 "$name-api" >&2 2>&1 || true
    fi
    docker rm -f "$name-api" "$name-db" >/dev/null 2>&1 || true
    docker volume rm "$name-state" >/dev/null 2>&1 || true
    docker network rm "$name" >/dev/null 2>&1 || true
    docker image rm "$tag" >/dev/null 2>&1 || true
    exit "$status"
}
trap cleanup EXIT

echo "image check: docker build"
DOCKER_BUILDKIT=1 docker build -t "$tag" .

if docker run --rm --entrypoint /bin/sh "$tag" -c 'command -v cargo || command -v rustc'; then
    fail "the image holds a Rust toolchain"
fi

docker network create "$name" >/dev/null
docker run -d --name "$name-db" --network "$name" --network-alias db \
    -e POSTGRES_PASSWORD -e POSTGRES_DB=discs "$postgres_image" >/dev/null
# Over TCP: while the image initialises its cluster, its server listens on the socket only.
for _ in $(seq 1 60); do
    docker exec "$name-db" pg_isready -q -h 127.0.0.1 -U postgres -d discs && break
    sleep 1
done
docker exec "$name-db" pg_isready -h 127.0.0.1 -U postgres -d discs >/dev/null ||
    fail "PostgreSQL did not start within 60 s"

echo "image check: discs migrate"
docker run --rm --network "$name" -e DATABASE_URL "$tag" migrate

echo "image check: discs serve"
docker run -d --name "$name-api" --network "$name" -e DATABASE_URL \
    -v "$name-state:/var/lib/discs" -p 127.0.0.1::8080 "$tag" >/dev/null
address="$(docker port "$name-api" 8080/tcp | head -n 1)"
[ -n "$address" ] || fail "port 8080 is not published"

code=""
for _ in $(seq 1 90); do
    [ "$(docker inspect -f '{{.State.Running}}' "$name-api")" = true ] || fail "discs serve exited"
    code="$(curl -s -o /dev/null -w '%{http_code}' "http://$address/readyz" || true)"
    [ "$code" = 200 ] && break
    sleep 1
done
[ "$code" = 200 ] || fail "/readyz answered ${code:-nothing} within 90 s (expected 200)"
echo "image check: /readyz answered 200 on $address"

uid="$(docker exec "$name-api" id -u)"
[ "$uid" = 10001 ] || fail "discs runs as uid $uid (expected 10001)"
docker exec "$name-api" test -s /var/lib/discs/jwt-secret ||
    fail "no token secret generated in /var/lib/discs"

health=""
for _ in $(seq 1 60); do
    health="$(docker inspect -f '{{.State.Health.Status}}' "$name-api")"
    [ "$health" = healthy ] && break
    sleep 1
done
[ "$health" = healthy ] || fail "the image's HEALTHCHECK says ${health:-nothing} after 60 s (expected healthy)"

echo "image check: ok (built, migrated, served /readyz 200 as uid 10001, healthy)"
