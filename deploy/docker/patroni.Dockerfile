# A PostgreSQL node managed by Patroni, for docker-compose.yml's `cluster` profile: Debian's
# PostgreSQL image with Debian's patroni (and its etcd client) added.
FROM postgres:16-bookworm
RUN apt-get update \
    && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends patroni python3-etcd curl \
    && rm -rf /var/lib/apt/lists/*
COPY patroni.yml /etc/patroni.yml
COPY patroni-entrypoint.sh /usr/local/bin/patroni-entrypoint.sh
USER postgres
# The node's name and addresses come from PATRONI_* variables (docker-compose.yml), its passwords
# from the `secrets` volume (patroni-entrypoint.sh).
ENTRYPOINT ["/bin/sh", "/usr/local/bin/patroni-entrypoint.sh"]
