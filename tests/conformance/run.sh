#!/usr/bin/env bash
# Runs the official MCP conformance suite (client mode) against `mcp-surface-ledger snapshot`.
#
# Installs, under target/conformance/ and only when missing:
#   node/   Node.js 22 from npm (`node@22`): the suite crashes on Node 20
#   suite/  @modelcontextprotocol/conformance, pinned below
# then builds the debug binary and runs each client scenario. The harness starts a scripted
# mock server per scenario on 127.0.0.1 and appends its URL to our command line; results land
# in target/conformance/results/. Exits non-zero when a scenario fails.
# See docs/conformance.md for what each scenario checks and what is out of scope (tools_call).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
dest="${CONFORMANCE_DIR:-$root/target/conformance}"
scenarios=(initialize request-metadata http-standard-headers http-custom-headers
  http-invalid-tool-headers sse-retry json-schema-ref-no-deref json-schema-2020-12-preservation)
# shellcheck source=install.sh
source "$here/install.sh"

(cd "$root" && cargo build --quiet --bin mcp-surface-ledger)
cli="$dest/suite/node_modules/@modelcontextprotocol/conformance/dist/index.js"
results="$dest/results/$(date -u +%Y%m%dT%H%M%SZ)"

mkdir -p "$results"
failed=()
for scenario in "${scenarios[@]}"; do
  echo "--- conformance client scenario: $scenario"
  if ! RUST_LOG=warn node "$cli" client --command "$here/client.sh" --scenario "$scenario" \
      --expected-failures "$here/baseline.yml" -o "$results"; then
    failed+=("$scenario")
  fi
done
for scenario in "${surface_checked[@]}"; do
  echo "--- $scenario, checked on the printed snapshot"
  if ! node "$here/surface.mjs" "$scenario" "$(ls -d "$results/$scenario"-* | tail -1)"; then
    failed+=("$scenario (snapshot check)")
  fi
done
echo "--- schema preservation, checked on the printed snapshot"
if ! node "$here/preserved.mjs" "$(ls -d "$results"/json-schema-2020-12-preservation-* | tail -1)"; then
  failed+=("json-schema-2020-12-preservation (snapshot check)")
fi
if [ "${#failed[@]}" -gt 0 ]; then
  echo "conformance: FAILED scenarios: ${failed[*]}" >&2
  exit 1
fi
echo "conformance: all ${#scenarios[@]} scenarios passed"
