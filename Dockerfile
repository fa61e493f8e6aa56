# A release image of flagserver (SPEC §7).
#   docker build -t flagserver .
#   docker run -p 8080:8080 -v flagdata:/data flagserver
#   docker run --rm -v flagdata:/data --entrypoint cat flagserver /data/admin-token   # the first admin token
# Or pass FLAGSERVER_ADMIN_TOKEN=... with -e to use a token of your own.
# Several replicas on one PostgreSQL: pass FLAGSERVER_POSTGRES=postgresql://USER:PASSWORD@HOST/DB with -e (the image
# is built with the Postgres trait); docker-compose.yml and docs/deploy.md show three behind nginx.

# ---- build: the same command proven on the development machine (Swift 6.3.1, Debian) ----
FROM swift:6.3-bookworm AS build
RUN export DEBIAN_FRONTEND=noninteractive \
    && apt-get update -qq \
    && apt-get install -y -qq --no-install-recommends libsqlite3-dev libpq-dev libssl-dev \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /src
# Manifest first, so that a source change does not invalidate the dependency-free resolve layer.
COPY Package.swift ./
COPY Sources ./Sources
COPY Tests ./Tests
# The linker prints one warning from the toolchain's static FoundationEssentials ("the use of `mktemp' is dangerous");
# it is in Foundation's code, not ours, and harmless here.
# The Postgres trait adds the PostgreSQL store (libpq); without FLAGSERVER_POSTGRES the server keeps using SQLite.
RUN swift build -c release --static-swift-stdlib --traits Postgres --product flagserver \
    && install -D -m 0755 "$(swift build -c release --traits Postgres --show-bin-path)/flagserver" /out/flagserver \
    && cp -R "$(swift build -c release --traits Postgres --show-bin-path)/Flagstaff_FlagServer.resources" /out/

# ---- run: slim Debian with only what the binary links dynamically (see `ldd` in the comment below) ----
# `ldd` of the binary this command builds (Swift 6.3.1): libsqlite3.so.0, libpq.so.5, libcrypto.so.3 (signing, issue
# 19), libm, libstdc++.so.6,
# libgcc_s.so.1, libc, and nothing else: the Swift runtime and Foundation (ICU data included) are linked statically,
# and FoundationNetworking is not used, so no libcurl or libxml2. tzdata is for TimeZone; the server logs in UTC.
FROM debian:bookworm-slim
RUN export DEBIAN_FRONTEND=noninteractive \
    && apt-get update -qq \
    && apt-get install -y -qq --no-install-recommends libsqlite3-0 libpq5 libssl3 libstdc++6 tzdata \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --system --uid 10001 --home-dir /data flagserver \
    && mkdir -p /data && chown flagserver /data
WORKDIR /app
COPY --from=build /out/flagserver /usr/local/bin/flagserver
# The dashboard's files, which flagserver serves under /ui/ from beside its executable.
COPY --from=build /out/Flagstaff_FlagServer.resources /usr/local/bin/Flagstaff_FlagServer.resources
COPY config ./config
USER flagserver
VOLUME ["/data"]
EXPOSE 8080
# bash's /dev/tcp keeps curl out of the image: healthy when /healthz answers 200.
HEALTHCHECK --interval=10s --timeout=3s --start-period=5s --retries=3 \
    CMD ["bash", "-c", "exec 3<>/dev/tcp/127.0.0.1/8080 && printf 'GET /healthz HTTP/1.1\\r\\nHost: localhost\\r\\nConnection: close\\r\\n\\r\\n' >&3 && head -n 1 <&3 | grep -q ' 200 '"]
STOPSIGNAL SIGTERM
ENTRYPOINT ["flagserver", "--config", "config/flagserver.json", "--listen", "0.0.0.0:8080", "--data", "/data"]
