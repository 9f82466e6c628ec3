# syntax=docker/dockerfile:1
# The discs image: `docker build -t discs .`, then `docker run -e DATABASE_URL=... discs`
# (docs/operators.md, "Container image"); docker-compose.yml builds and runs this one too.
# BuildKit (Docker's builder since 23.0) for the cache mounts.

# The build: the cargo registry and the target folder are cache mounts, kept between builds, so
# a change to the sources rebuilds the workspace's crates and not the dependencies.
# .cargo/config.toml comes along: x86-64-v2 on x86-64 (README.md).
FROM rust:1.95-bookworm AS builder
WORKDIR /src
COPY . .
RUN --mount=type=cache,id=discs-cargo-registry,target=/usr/local/cargo/registry,sharing=locked \
    --mount=type=cache,id=discs-cargo-git,target=/usr/local/cargo/git,sharing=locked \
    --mount=type=cache,id=discs-target,target=/src/target,sharing=locked \
    cargo build --release --locked -p discs --bin discs \
    && install -D -m 0755 target/release/discs /out/discs

# The run time: the binary, which links only libc, libm and libgcc_s. Nothing else is needed:
# the site, the texts, the migrations and the openings are embedded in it; it speaks to
# PostgreSQL without TLS (no TLS library in the build, so no CA certificates); and DATABASE_URL
# must name a server (no PostgreSQL binaries: no private cluster, which is for a 127.0.0.1 URL).
FROM debian:bookworm-slim
# A fixed uid/gid (docker-compose.yml's `secrets` service gives the discs secrets to 10001).
# /var/lib/discs is its state: the generated token secret and checkpoint signing key (unless
# DISCS_JWT_SECRET_FILE / DISCS_CHECKPOINT_KEY_FILE say elsewhere) and, in history/, the signed
# checkpoints and the ledger of closed accounts. Mount a volume there to keep them.
RUN groupadd --gid 10001 discs \
    && useradd --no-log-init --uid 10001 --gid 10001 --home-dir /var/lib/discs --no-create-home \
        --shell /usr/sbin/nologin discs \
    && install -d -o 10001 -g 10001 -m 0700 /var/lib/discs /var/lib/discs/history
COPY --from=builder /out/discs /usr/local/bin/discs
# docker-compose.yml's entrypoint (the generated password into DATABASE_URL), and the health
# check (bash's /dev/tcp: no curl in the image).
COPY --chmod=0755 deploy/docker/discs-entrypoint.sh /usr/local/bin/discs-entrypoint.sh
COPY --chmod=0755 deploy/docker/discs-healthcheck.sh /usr/local/bin/discs-healthcheck
# Where the state goes (paths, not secrets: DL3064 takes *_SECRET_FILE and *_KEY_FILE for secrets).
# hadolint ignore=DL3064
ENV DISCS_ADDR=0.0.0.0:8080 \
    DISCS_JWT_SECRET_FILE=/var/lib/discs/jwt-secret \
    DISCS_CHECKPOINT_KEY_FILE=/var/lib/discs/checkpoint-key \
    DISCS_CHECKPOINT_DIR=/var/lib/discs/history/checkpoints \
    DISCS_CLOSINGS_FILE=/var/lib/discs/history/closed-accounts
USER 10001:10001
WORKDIR /var/lib/discs
EXPOSE 8080
# /readyz: 200 once the database answers and is migrated. The start period covers migrations.
HEALTHCHECK --interval=10s --timeout=5s --start-period=60s --retries=3 CMD ["discs-healthcheck"]
ENTRYPOINT ["discs"]
CMD ["serve"]
