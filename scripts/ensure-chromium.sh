#!/usr/bin/env bash
# Makes sure Debian's Chromium is installed at /usr/bin/chromium, for the console's browser test
# (test/console/browser.test.ts). Does nothing when it is already there; otherwise installs it with apt-get
# (through sudo when not root and sudo exists). The test skips itself with a notice when Chromium is missing,
# unless AGENTAUTH_REQUIRE_BROWSER=1 (what CI sets).
set -euo pipefail

CHROMIUM=/usr/bin/chromium

if [ -x "$CHROMIUM" ]; then
  echo "ensure-chromium: $CHROMIUM is installed; nothing to do."
  exit 0
fi

if ! command -v apt-get >/dev/null 2>&1; then
  echo "ensure-chromium: $CHROMIUM is missing and apt-get is not available here." >&2
  echo "ensure-chromium: install Chromium so that $CHROMIUM exists, then run the tests again." >&2
  exit 1
fi

SUDO=()
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then
    SUDO=(sudo)
  else
    echo "ensure-chromium: $CHROMIUM is missing; installing it needs root, and sudo is not available." >&2
    echo "ensure-chromium: as root run: apt-get update && apt-get install -y chromium" >&2
    exit 1
  fi
fi

echo "ensure-chromium: $CHROMIUM is missing; installing Debian's chromium package with apt-get…"
export DEBIAN_FRONTEND=noninteractive
"${SUDO[@]}" apt-get update
"${SUDO[@]}" apt-get install -y chromium

if [ ! -x "$CHROMIUM" ]; then
  echo "ensure-chromium: apt-get finished but $CHROMIUM still does not exist." >&2
  exit 1
fi
echo "ensure-chromium: installed $("$CHROMIUM" --version 2>/dev/null || echo "$CHROMIUM")."
