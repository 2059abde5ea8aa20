#!/usr/bin/env bash
# Installs what the browser check needs, once: Chromium and its driver from Debian, Selenium from PyPI.
set -euo pipefail
if ! command -v chromium >/dev/null || ! command -v chromedriver >/dev/null; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver >/dev/null
fi
python3 -c "import selenium" 2>/dev/null || pip install -q selenium
