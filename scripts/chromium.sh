#!/usr/bin/env bash
# Browser tests drive Debian's Chromium; Playwright cannot download a browser here.
# Screenshots of the Chinese pages need a CJK font (Debian's fonts-noto-cjk), or every glyph is a box.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
missing=()
[ -x /usr/bin/chromium ] || missing+=(chromium)
dpkg-query -W -f='${Status}' fonts-noto-cjk 2>/dev/null | grep -q "install ok installed" || missing+=(fonts-noto-cjk)
if [ ${#missing[@]} -gt 0 ]; then
  echo "Installing Debian's ${missing[*]} for the browser tests"
  apt-get update -qq
  apt-get install -y -qq "${missing[@]}" >/dev/null
fi
[ -x /usr/bin/chromium ] || { echo "FATAL: /usr/bin/chromium is missing and could not be installed." >&2; exit 1; }
fc-list :lang=zh | grep -q . || { echo "FATAL: no Chinese font (fonts-noto-cjk) for the screenshots." >&2; exit 1; }
