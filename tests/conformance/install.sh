# Sourced by run.sh (client scenarios) and server.sh (server scenarios): installs, under $dest
# and only when missing, Node.js 22 (`node@22`, the suite crashes on Node 20) and the pinned
# @modelcontextprotocol/conformance suite, then puts that node first on PATH.
# Expects $dest to be set by the caller.

node_spec='node@22.23.3'
suite_spec='@modelcontextprotocol/conformance@0.2.0-alpha.12'

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
export PATH="$dest/node/node_modules/node/bin:$PATH"
echo "conformance: node $(node --version)"
