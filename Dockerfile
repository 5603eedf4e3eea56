# Multi-stage build of the mcp-surface-ledger Actor.
# The runtime image holds only the binary, the shared libraries it links (taken from the builder,
# so the glibc always matches) and the unprivileged user's home: no shell, no package manager.
# `.ci/image` builds this file and runs the image against a local MCP server.

# ---- build ----------------------------------------------------------------------------------
FROM rust:1.95-slim-trixie AS builder
WORKDIR /build

# make builds the allocator the binary links (jemalloc, through tikv-jemalloc-sys); the slim
# image has a C compiler but no make.
RUN apt-get update \
    && apt-get install -y --no-install-recommends make \
    && rm -rf /var/lib/apt/lists/*

# Download the locked dependencies in their own layer; it is reused while Cargo.lock is unchanged.
# (The manifest declares a bench target, whose file must exist for cargo to read the manifest.)
COPY Cargo.toml Cargo.lock ./
COPY benches ./benches
RUN cargo fetch --locked

COPY . .
RUN cargo build --release --locked

# The runtime file tree: every library the binary loads (ldd names them), the user and group
# files of the unprivileged user (uid/gid 10001) and its home, where local storage lives.
RUN mkdir -p /runtime/etc /runtime/actor/storage \
    && ldd target/release/mcp-surface-ledger | grep -o '/[^ ]*' | xargs -I{} cp --parents -L {} /runtime \
    && echo 'actor:x:10001:10001::/actor:/sbin/nologin' > /runtime/etc/passwd \
    && echo 'actor:x:10001:' > /runtime/etc/group \
    && echo 'hosts: files dns' > /runtime/etc/nsswitch.conf

# ---- runtime --------------------------------------------------------------------------------
FROM scratch AS runtime

# TLS roots are compiled into the binary, so no CA bundle is needed.
COPY --from=builder /runtime/ /
COPY --from=builder --chown=10001:10001 /runtime/actor /actor
COPY --from=builder /build/target/release/mcp-surface-ledger /usr/local/bin/mcp-surface-ledger

# The allocator's settings are built into the binary (.cargo/config.toml, copied with the
# sources): no environment is needed for them.

# Run as the unprivileged user; local storage (./storage) lives in its home directory.
USER 10001:10001
WORKDIR /actor

CMD ["/usr/local/bin/mcp-surface-ledger"]
