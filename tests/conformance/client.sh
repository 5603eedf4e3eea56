#!/usr/bin/env bash
# The client command the conformance harness drives: it appends the mock server's URL as the
# last argument. Our egress policy refuses the name `localhost` (a local-only name is never a
# target, even with --allow-private-targets), so the adapter rewrites it to 127.0.0.1, where
# the mock listens, and runs a read-only snapshot of the server.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
bin="${LEDGER_BIN:-$here/../../target/debug/mcp-surface-ledger}"
url="${!#}"
url="${url/#http:\/\/localhost:/http://127.0.0.1:}"
url="${url/#http:\/\/localhost\//http://127.0.0.1/}"
exec "$bin" snapshot --allow-private-targets "$url"
