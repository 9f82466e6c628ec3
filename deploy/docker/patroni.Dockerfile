# A PostgreSQL node managed by Patroni, for docker-compose.yml's `cluster` profile: Debian's
# PostgreSQL image with Debian's patroni (and its etcd client) and pgbackrest added.
FROM postgres:16-bookworm
# Debian's versions, unpinned: the base image fixes the release, whose mirror keeps only the
# latest (security) version of each package, so a pinned one would break the build.
# hadolint ignore=DL3008
RUN apt-get update \
    && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends patroni python3-etcd curl pgbackrest \
    && rm -rf /var/lib/apt/lists/*
COPY patroni.yml /etc/patroni.yml
COPY patroni-entrypoint.sh /usr/local/bin/patroni-entrypoint.sh
# pgBackRest: its configuration (the repository is the `pgbackrest` volume, mounted at
# /var/lib/pgbackrest, a folder the package gives to postgres) and the operators' command.
COPY --chown=postgres:postgres pgbackrest.conf /etc/pgbackrest/pgbackrest.conf
COPY discs-pgbackrest.sh /usr/local/bin/discs-pgbackrest
RUN chmod 0600 /etc/pgbackrest/pgbackrest.conf && chmod 0755 /usr/local/bin/discs-pgbackrest
# postgres (uid and gid 999 in the base image; docker-compose.yml's `secrets` service gives it
# its passwords).
USER 999:999
# The node's name and addresses come from PATRONI_* variables (docker-compose.yml), its passwords
# from the `secrets` volume (patroni-entrypoint.sh).
ENTRYPOINT ["/bin/sh", "/usr/local/bin/patroni-entrypoint.sh"]
