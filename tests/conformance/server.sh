#!/usr/bin/env bash
# Runs the official MCP conformance suite (server mode) against `mcp-surface-ledger serve`.
#
# Uses the suite run.sh pins (installed under target/conformance/ when missing, on Node 22),
# starts the debug binary on a free 127.0.0.1 port over an empty storage folder (the scenarios
# only need the tool list, and every tool is read-only), then runs each server scenario that
# applies to a tools-only, read-only, stateless server. Checks that cannot apply are listed in
# baseline.yml (`server:`); docs/conformance.md lists the scenarios left out and why.
# Results land in target/conformance/results/. Exits non-zero when a scenario fails.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
dest="${CONFORMANCE_DIR:-$root/target/conformance}"
scenarios=(server-initialize server-session-lifecycle server-stateless ping tools-list
  caching http-header-validation dns-rebinding-protection)
# shellcheck source=install.sh
source "$here/install.sh"

(cd "$root" && cargo build --quiet --bin mcp-surface-ledger)
bin="${LEDGER_BIN:-$root/target/debug/mcp-surface-ledger}"
cli="$dest/suite/node_modules/@modelcontextprotocol/conformance/dist/index.js"
results="$dest/results/server-$(date -u +%Y%m%dT%H%M%SZ)"
mkdir -p "$results"

storage="$(mktemp -d)"
log="$results/serve.log"
RUST_LOG=info "$bin" serve --port 0 --storage-dir "$storage" </dev/null 2>"$log" &
server_pid=$!
cleanup() {
  kill "$server_pid" 2>/dev/null || true
  wait "$server_pid" 2>/dev/null || true
  rm -rf "$storage"
}
trap cleanup EXIT

port=''
for _ in $(seq 1 100); do
  port="$(sed -n 's/.*serving the ledger read-only on http:\/\/127\.0\.0\.1:\([0-9]*\).*/\1/p' "$log" | head -1)"
  [ -n "$port" ] && break
  kill -0 "$server_pid" 2>/dev/null || { cat "$log" >&2; echo "conformance: the server did not start" >&2; exit 1; }
  sleep 0.1
done
[ -n "$port" ] || { cat "$log" >&2; echo "conformance: no port announced" >&2; exit 1; }
# `localhost`, not 127.0.0.1: the DNS-rebinding scenario compares it with a foreign Host.
url="http://localhost:$port/mcp"
echo "conformance: serving on $url"

failed=()
for scenario in "${scenarios[@]}"; do
  echo "--- conformance server scenario: $scenario"
  if ! node "$cli" server --url "$url" --scenario "$scenario" \
      --expected-failures "$here/baseline.yml" -o "$results"; then
    failed+=("$scenario")
  fi
done
if [ "${#failed[@]}" -gt 0 ]; then
  echo "conformance: FAILED server scenarios: ${failed[*]}" >&2
  exit 1
fi
echo "conformance: all ${#scenarios[@]} server scenarios passed"
