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
node_spec='node@22.23.3'
suite_spec='@modelcontextprotocol/conformance@0.2.0-alpha.12'
# Every client scenario of the pinned suite a read-only client can meet (docs/conformance.md
# lists the others and why); checks that need a tools/call are in baseline.yml.
scenarios=(initialize request-metadata http-standard-headers http-custom-headers
  http-invalid-tool-headers sse-retry json-schema-ref-no-deref json-schema-2020-12-preservation)
# Scenarios whose printed snapshot surface.mjs checks.
surface_checked=(http-invalid-tool-headers http-custom-headers sse-retry)

install_once() { # dir spec
  local dir="$1" spec="$2"
  local stamp="$dir/.installed-$(echo "$spec" | tr -c 'A-Za-z0-9.' '_')"
  if [ -f "$stamp" ]; then
    return
  fi
  echo "conformance: installing $spec into $dir"
  rm -rf "$dir"
  mkdir -p "$dir"
  (cd "$dir" && npm init -y >/dev/null && npm install --no-audit --no-fund --loglevel=error "$spec")
  touch "$stamp"
}

install_once "$dest/node" "$node_spec"
install_once "$dest/suite" "$suite_spec"
node_bin="$dest/node/node_modules/node/bin"
export PATH="$node_bin:$PATH"
echo "conformance: node $(node --version)"

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
