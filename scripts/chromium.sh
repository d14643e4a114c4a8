#!/usr/bin/env bash
# Browser tests drive Debian's Chromium; Playwright cannot download a browser here.
set -euo pipefail
if [ ! -x /usr/bin/chromium ]; then
  echo "Installing Debian's chromium for the browser tests"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq chromium >/dev/null
fi
[ -x /usr/bin/chromium ] || { echo "FATAL: /usr/bin/chromium is missing and could not be installed." >&2; exit 1; }
