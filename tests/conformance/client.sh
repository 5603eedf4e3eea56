#!/usr/bin/env bash
# The client command the conformance harness drives: it appends the mock server's URL as the
# last argument (usually http://localhost:<port>/...). With the operator override, the name
# `localhost` is accepted when it resolves to loopback only, so the URL is used as given for a
# read-only snapshot of the server.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
bin="${LEDGER_BIN:-$here/../../target/debug/mcp-surface-ledger}"
exec "$bin" snapshot --allow-private-targets "${!#}"
