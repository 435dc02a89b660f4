# syntax=docker/dockerfile:1
# placement_server in a container.
#   docker build -t placement:0.1.0 .                                   the server with the learned policy (default)
#   docker build -t placement:0.1.0-classic --target runtime-classic .  without LibTorch: classical placers and AUTO
#   docker build -t placement-balancer:0.1.0 --target balancer .        nginx routing by x-graph-hash (compose)
#   docker build -t placement:0.1.0-cuda --build-arg LIBTORCH_URL=https://download.pytorch.org/libtorch/cu121/libtorch-cxx11-abi-shared-with-deps-2.1.2%2Bcu121.zip .
#                                                                       the learned policy on a GPU (docs/deploy.md)
# The build stage installs the Debian packages and builds with the project's own scripts. The runtime stages
# hold the programs and exactly the shared libraries they load (deploy/docker/runtime-root.sh: ldd's closure,
# nothing else of the packages they come from), models/, and run as a non-root user.

FROM debian:bookworm AS build
WORKDIR /src
# The package layer first, so that a source change does not reinstall the toolchain.
COPY scripts/deps.sh scripts/deps.sh
ENV PLACEMENT_DEPS=build
RUN scripts/deps.sh && rm -rf /var/lib/apt/lists/*
# A GPU build: LibTorch with CUDA from its upstream archive (the cxx11 ABI build, "shared-with-deps") in place of
# Debian's CPU-only one. Empty: Debian's.
ARG LIBTORCH_URL=""
RUN if [ -n "$LIBTORCH_URL" ]; then \
      apt-get update -qq && apt-get install -y -qq --no-install-recommends curl unzip \
      && curl -fsSL "$LIBTORCH_URL" -o /tmp/libtorch.zip && unzip -q /tmp/libtorch.zip -d /opt \
      && rm /tmp/libtorch.zip && rm -rf /var/lib/apt/lists/*; \
    fi
COPY . .
# Configured without tests and benchmarks (./placement build configures only when build/ has no build.ninja).
RUN --mount=type=cache,target=/root/.cache/ccache \
    rm -rf build \
    && cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release \
         -DPLACEMENT_BUILD_TESTS=OFF -DPLACEMENT_BUILD_BENCHMARKS=OFF \
         ${LIBTORCH_URL:+-DTorch_DIR=/opt/libtorch/share/cmake/Torch} \
    && ./placement build \
    && mkdir -p models \
    && deploy/docker/runtime-root.sh /runtime-root build/server/placement_server build/client/placectl \
         build/client/placectl-torch \
    && deploy/docker/runtime-root.sh /runtime-root-classic build/server/placement_server_classic build/client/placectl \
    && mv /runtime-root-classic/usr/local/bin/placement_server_classic /runtime-root-classic/usr/local/bin/placement_server

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

# What both server images share: the user, the data volume, the flags, the ports and the health check.
FROM debian:bookworm-slim AS server-base
RUN groupadd --system --gid 10001 placement \
    && useradd --system --uid 10001 --gid placement --home-dir /var/lib/placement --shell /usr/sbin/nologin \
         placement \
    && mkdir -p /var/lib/placement \
    && chown placement:placement /var/lib/placement
COPY deploy/docker/server.flags /etc/placement/server.flags
WORKDIR /opt/placement
VOLUME ["/var/lib/placement"]
# gRPC, Prometheus /metrics
EXPOSE 50051 9464
HEALTHCHECK --interval=10s --timeout=5s --start-period=60s --retries=3 \
    CMD ["placectl", "health", "--server", "127.0.0.1:50051"]
# SIGTERM drains: readiness turns NOT_SERVING, calls in flight get --grace_period.
STOPSIGNAL SIGTERM
ENTRYPOINT ["placement_server", "--config=/etc/placement/server.flags"]

# The server without LibTorch: a tenth of the default image (docs/deploy.md lists both).
FROM server-base AS runtime-classic
COPY --from=build /runtime-root-classic/ /
RUN ldconfig
USER 10001:10001

# The server with the learned policy: the last stage, so a plain `docker build .` builds it.
FROM server-base AS runtime
COPY --from=build /runtime-root/ /
RUN ldconfig
# The learned policy's weights; the server finds them under its working directory.
COPY --from=build /src/models /opt/placement/models
USER 10001:10001
