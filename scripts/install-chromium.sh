#!/bin/sh
# Install Debian's chromium for the report page test, unless it is already there.
set -eu
[ -x /usr/bin/chromium ] && exit 0
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q
$SUDO apt-get install -y -q --no-install-recommends chromium fonts-dejavu-core
