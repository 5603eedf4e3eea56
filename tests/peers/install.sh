#!/usr/bin/env bash
# Installs the real MCP servers the integration tests talk to, into target/peers/.
# Idempotent: a second run only checks stamps and returns.
#   target/peers/venv/          Python venv with the official SDK (mcp 2.3.x), feedparser
#                               (the Atom parser of tests/serve_pages.rs) and standardwebhooks
#                               (the signature checker of tests/notify.rs)
#   target/peers/sarif-venv/    Python venv with the SARIF schema and a SARIF reader (sarif-requirements.txt)
#   target/peers/node/          npm install of @modelcontextprotocol/server-everything, the official
#                               TypeScript SDK client @modelcontextprotocol/sdk (ask_ledger.mjs) and
#                               @microsoft/sarif-multitool (GitHub's SARIF rules; pinned by package-lock.json)
# Tests skip a peer that is not installed, so this script is optional for `cargo test`.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
dest="${PEERS_DIR:-$root/target/peers}"
mkdir -p "$dest"

python_spec='mcp==2.3.*'
venv="$dest/venv"
py_stamp="$venv/.installed-$(echo "$python_spec" | tr -c 'A-Za-z0-9.' '_')"
if [ -f "$py_stamp" ]; then
  echo "peers: python venv up to date ($python_spec)"
elif command -v python3 >/dev/null 2>&1; then
  echo "peers: installing $python_spec into $venv"
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check "$python_spec"
  touch "$py_stamp"
else
  echo "peers: python3 not found, Python peer tests will be skipped" >&2
fi

tools_spec='feedparser==6.0.14 standardwebhooks==1.1.0'
tools_stamp="$venv/.installed-$(echo "$tools_spec" | tr -c 'A-Za-z0-9.' '_')"
if [ -f "$tools_stamp" ]; then
  echo "peers: python test tools up to date ($tools_spec)"
elif [ -x "$venv/bin/python" ]; then
  echo "peers: installing $tools_spec into $venv"
  # shellcheck disable=SC2086 # one word per package
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check $tools_spec
  touch "$tools_stamp"
fi

sarif_venv="$dest/sarif-venv"
sarif_sum="$(sha256sum "$here/sarif-requirements.txt" | cut -c1-16)"
sarif_stamp="$sarif_venv/.installed-$sarif_sum"
if [ -f "$sarif_stamp" ]; then
  echo "peers: SARIF tooling up to date"
elif command -v python3 >/dev/null 2>&1; then
  echo "peers: installing the SARIF tooling into $sarif_venv"
  python3 -m venv "$sarif_venv"
  "$sarif_venv/bin/pip" install --quiet --disable-pip-version-check --no-deps -r "$here/sarif-requirements.txt"
  rm -f "$sarif_venv"/.installed-*
  touch "$sarif_stamp"
else
  echo "peers: python3 not found, SARIF validation tests will be skipped" >&2
fi

node_dir="$dest/node"
lock_sum="$(sha256sum "$here/package.json" "$here/package-lock.json" 2>/dev/null | sha256sum | cut -c1-16)"
node_stamp="$node_dir/.installed-$lock_sum"
if [ -f "$node_stamp" ]; then
  echo "peers: node modules up to date"
elif command -v npm >/dev/null 2>&1; then
  echo "peers: installing npm peers into $node_dir"
  mkdir -p "$node_dir"
  cp "$here/package.json" "$node_dir/"
  if [ -f "$here/package-lock.json" ]; then
    cp "$here/package-lock.json" "$node_dir/"
    (cd "$node_dir" && npm ci --no-audit --no-fund --loglevel=error)
  else
    (cd "$node_dir" && npm install --no-audit --no-fund --loglevel=error)
  fi
  # The Multitool's own postinstall makes its native binary executable; npm may skip install
  # scripts, so do it here too.
  for binary in "$node_dir"/node_modules/@microsoft/sarif-multitool-*/Sarif.Multitool; do
    if [ -f "$binary" ]; then chmod u+x "$binary"; fi
  done
  rm -f "$node_dir"/.installed-*
  touch "$node_stamp"
else
  echo "peers: npm not found, server-everything, TypeScript SDK client and SARIF Multitool tests will be skipped" >&2
fi
