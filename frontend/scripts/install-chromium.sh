#!/bin/sh
# Installs Debian's Chromium for the end-to-end tests (npm run e2e), unless it is there already.
# Playwright's own browser downloads do not work here; playwright-core drives this one.
# Idempotent; needs root (or sudo) the first time.
set -eu
CHROMIUM="${CHROMIUM_BIN:-/usr/bin/chromium}"
if [ -x "$CHROMIUM" ]; then
	echo "chromium: $("$CHROMIUM" --version 2>/dev/null || echo "$CHROMIUM")"
	exit 0
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
	command -v sudo >/dev/null 2>&1 || { echo "install-chromium: run as root (apt-get install chromium)" >&2; exit 1; }
	SUDO=sudo
fi
$SUDO apt-get update
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y chromium
"$CHROMIUM" --version
