#!/usr/bin/env bash
# Install Debian's chromium for the annotation-page test
# (tests/kovaleva/patterns/test_annotate.py, marked `browser`), which drives it headless
# through Playwright at /usr/bin/chromium. Without it that test skips. Needs root (CI
# containers run as root) and the Debian mirrors.
set -euo pipefail
if [ -x /usr/bin/chromium ]; then
  echo "chromium already installed: $(/usr/bin/chromium --version)"
  exit 0
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq chromium
/usr/bin/chromium --version
