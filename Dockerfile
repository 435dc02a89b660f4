# syntax=docker/dockerfile:1
# placement_server in a container.
#   docker build -t placement:0.1.0 .                                  the server (runtime stage, the default)
#   docker build -t placement-balancer:0.1.0 --target balancer .       nginx hashing on x-graph-hash (compose)
# The build stage installs the Debian packages and builds with the project's own scripts; the runtime stage has
# the two binaries, the shared libraries they load (and nothing else), models/, and runs as a non-root user.

FROM debian:bookworm AS build
WORKDIR /src
# The package layer first, so that a source change does not reinstall the toolchain.
COPY scripts/deps.sh scripts/deps.sh
ENV PLACEMENT_DEPS=build
RUN scripts/deps.sh && rm -rf /var/lib/apt/lists/*
COPY . .
# Configured without tests and benchmarks (./placement build configures only when build/ has no build.ninja).
RUN --mount=type=cache,target=/root/.cache/ccache \
    rm -rf build \
    && cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release \
         -DPLACEMENT_BUILD_TESTS=OFF -DPLACEMENT_BUILD_BENCHMARKS=OFF \
    && ./placement build \
    && mkdir -p models \
    && deploy/docker/runtime-packages.sh build/server/placement_server build/client/placectl build/client/placectl-torch \
         > /runtime-packages.txt \
    && cat /runtime-packages.txt

# The gRPC balancer for docker compose: Debian's nginx (the one deploy/tests/balancer_test.py checks) with
# deploy/nginx, as a non-root user. PLACEMENT_UPSTREAMS: the replicas, HOST:PORT separated by spaces, resolved
# again every PLACEMENT_RESOLVE_SECONDS, so that a recreated replica at a new address is found without a restart.
FROM debian:bookworm-slim AS balancer
RUN apt-get update \
    && apt-get install -y --no-install-recommends nginx \
    && rm -rf /var/lib/apt/lists/*
COPY deploy/nginx/ /usr/share/placement-balancer/
ENV PLACEMENT_LISTEN=8080 \
    PLACEMENT_UPSTREAMS="placement-1:50051 placement-2:50051 placement-3:50051"
USER www-data
EXPOSE 8080
ENTRYPOINT ["/bin/sh", "-c", "exec /usr/share/placement-balancer/balancer.sh /tmp/nginx \"$PLACEMENT_LISTEN\" $PLACEMENT_UPSTREAMS"]

# The server: the last stage, so a plain `docker build .` builds it.
FROM debian:bookworm-slim AS runtime
COPY --from=build /runtime-packages.txt /tmp/runtime-packages.txt
RUN apt-get update \
    && xargs -a /tmp/runtime-packages.txt apt-get install -y --no-install-recommends \
    && rm -rf /var/lib/apt/lists/* /tmp/runtime-packages.txt \
    && groupadd --system --gid 10001 placement \
    && useradd --system --uid 10001 --gid placement --home-dir /var/lib/placement --shell /usr/sbin/nologin \
         placement \
    && mkdir -p /var/lib/placement \
    && chown placement:placement /var/lib/placement
COPY --from=build /src/build/server/placement_server /src/build/client/placectl /src/build/client/placectl-torch \
     /usr/local/bin/
# The learned policy's weights; the server finds them under its working directory.
COPY --from=build /src/models /opt/placement/models
COPY deploy/docker/server.flags /etc/placement/server.flags
WORKDIR /opt/placement
USER 10001:10001
VOLUME ["/var/lib/placement"]
# gRPC, Prometheus /metrics
EXPOSE 50051 9464
HEALTHCHECK --interval=10s --timeout=5s --start-period=60s --retries=3 \
    CMD ["placectl", "health", "--server", "127.0.0.1:50051"]
# SIGTERM drains: readiness turns NOT_SERVING, calls in flight get --grace_period.
STOPSIGNAL SIGTERM
ENTRYPOINT ["placement_server", "--config=/etc/placement/server.flags"]
