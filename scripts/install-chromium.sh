#!/bin/sh
# A browser for the report page test (tests/reports/test_report_browser.py): keep any Chromium or
# Chrome already installed; otherwise install Debian's chromium where apt-get exists.  Run by .ci/run before
# `make test` (which installs no system package); run it yourself to get the test on your machine.  Elsewhere
# (macOS, other Linux) say so in one line and go on: the test then skips, saying why (not on CI).
set -eu
for name in chromium chromium-browser google-chrome google-chrome-stable chrome; do
    command -v "$name" >/dev/null 2>&1 && exit 0
done
for app in "/Applications/Chromium.app" "/Applications/Google Chrome.app"; do
    [ -d "$app" ] && exit 0
done
if ! command -v apt-get >/dev/null 2>&1; then
    echo "install-chromium.sh: no Chromium or Chrome and no apt-get; the report page test will be skipped" >&2
    [ "${CI:-}" = "true" ] && exit 1
    exit 0
fi
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q
$SUDO apt-get install -y -q --no-install-recommends chromium fonts-dejavu-core
