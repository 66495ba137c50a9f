#!/usr/bin/env bash
# Make sure Debian's `chromium` is on PATH for the real-browser tests (Playwright drives it
# through executable_path; `playwright install` is never used: it downloads browsers).
set -euo pipefail

if command -v chromium >/dev/null 2>&1; then
  exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "ensure-chromium: chromium is not installed and apt-get is not available;" \
    "install Chromium so that 'chromium' is on PATH" >&2
  exit 1
fi
if [ "$(id -u)" -ne 0 ]; then
  echo "ensure-chromium: chromium is not installed; installing it needs root:" \
    "run 'sudo apt-get update && sudo apt-get install -y chromium'" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
apt-get install -y -q --no-install-recommends chromium
command -v chromium >/dev/null 2>&1 || {
  echo "ensure-chromium: apt-get finished but 'chromium' is still not on PATH" >&2
  exit 1
}
