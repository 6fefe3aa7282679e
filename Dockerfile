# The echolab image: the release binary on a slim Debian base, run as a non-root user.
#
#   docker build -t REGISTRY/echolab:TAG .
#   docker run --rm REGISTRY/echolab:TAG serve --model epoll --addr 0.0.0.0:7000
#
# deploy/kubernetes/ runs it in a cluster (docs/distributed.md). tests/deploy.rs checks
# that the build stage builds the binary with the README's cargo invocation.

# Build stage: the official Rust image, on the same Debian release as the runtime stage
# so the binary links against the glibc it will find there.
FROM rust:1-bookworm AS build
WORKDIR /src
COPY . .
RUN cargo build --release

# Runtime stage: the binary only. It links libc, libm and libgcc_s, all in the base.
# Namespace scenarios (`echolab run` with [hosts]) also need iproute2 (`ip netns`, `tc`)
# and root; the cluster manifests only serve, load and merge, so it is not installed.
FROM debian:bookworm-slim
RUN useradd --system --uid 10001 --user-group --no-create-home \
        --home-dir /nonexistent --shell /usr/sbin/nologin echolab \
    && mkdir /results && chown 10001:10001 /results
COPY --from=build /src/target/release/echolab /usr/local/bin/echolab
# Numeric, so that Kubernetes' runAsNonRoot can verify it.
USER 10001:10001
WORKDIR /results
ENTRYPOINT ["echolab"]
CMD ["--help"]
