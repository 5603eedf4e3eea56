# Multi-stage build of the mcp-surface-ledger Actor.
# Builder and runtime use the same Debian release (trixie), so the binary's glibc matches.

# ---- build ----------------------------------------------------------------------------------
FROM rust:1.95-slim-trixie AS builder
WORKDIR /build

# Download the locked dependencies in their own layer; it is reused while Cargo.lock is unchanged.
# (The manifest declares a bench target, whose file must exist for cargo to read the manifest.)
COPY Cargo.toml Cargo.lock ./
COPY benches ./benches
RUN cargo fetch --locked

COPY . .
RUN cargo build --release --locked

# ---- runtime --------------------------------------------------------------------------------
FROM debian:trixie-slim AS runtime

# TLS roots are compiled into the binary, so no ca-certificates package is needed.
RUN groupadd --gid 10001 myuser \
    && useradd --uid 10001 --gid 10001 --create-home --home-dir /home/myuser myuser
COPY --from=builder /build/target/release/mcp-surface-ledger /usr/local/bin/mcp-surface-ledger

# Run as the unprivileged user; local storage (./storage) lives in its home directory.
USER 10001:10001
WORKDIR /home/myuser

CMD ["/usr/local/bin/mcp-surface-ledger"]
