#!/usr/bin/env bash
# Installs Debian's chromium for the HTML report test (tests/report_browser.rs), if missing.
# Idempotent. The test skips with a note when /usr/bin/chromium is absent.
set -euo pipefail

if [ -x /usr/bin/chromium ]; then
  echo "browser: chromium present ($(/usr/bin/chromium --version 2>/dev/null || echo unknown version))"
  exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "browser: apt-get not found, the report browser test will be skipped" >&2
  exit 0
fi
sudo=""
if [ "$(id -u)" != 0 ]; then
  sudo="sudo"
fi
echo "browser: installing chromium with apt-get"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends chromium fonts-dejavu-core
/usr/bin/chromium --version
