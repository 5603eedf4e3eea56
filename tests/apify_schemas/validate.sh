#!/usr/bin/env bash
# Validates .actor/actor.json, input_schema.json, dataset_schema.json (fields and views),
# .actor/output_schema.json with Apify's own validators (@apify/json_schemas,
# @apify/input_schema, pinned in package.json + package-lock.json), and the dataset rows the
# tests wrote under target/tmp/sample-rows/ against dataset_schema.json `fields`; and
# .actor/web_server_schema.json (webServerSchema) with an OpenAPI validator (validate_openapi.mjs).
# Run it after `cargo test` (the budget and platform tests write the sample rows).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
rows="${1:-${CARGO_TARGET_DIR:-$root/target}/tmp/sample-rows}"
cd "$here"
if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
    npm ci --no-audit --no-fund --loglevel=error
fi
node validate.mjs "$root" "$rows"
