#!/usr/bin/env bash
# Install the headless browser the dashboard's tests drive (tests/server/test_dashboard_browser.py):
# the Debian package `chromium`, driven over the DevTools pipe (no browser download, no driver).
# Installs only when it is missing and apt-get can run without a password (root, or sudo -n);
# otherwise says so and exits 0: those tests then skip with the same hint.
set -uo pipefail

say() { printf 'install-test-browser: %s\n' "$*" >&2; }

for name in chromium chromium-browser google-chrome google-chrome-stable; do
    if command -v "$name" >/dev/null 2>&1; then
        say "$name is installed"
        exit 0
    fi
done
if ! command -v apt-get >/dev/null 2>&1; then
    say "no chromium and no apt-get: install Chromium yourself to run the dashboard's browser tests (they skip meanwhile)"
    exit 0
fi
if [[ "$(id -u)" == 0 ]]; then
    sudo=()
elif sudo -n true 2>/dev/null; then
    sudo=(sudo -n)
else
    say "no chromium, and apt-get needs root: run 'sudo apt-get install chromium' to run the dashboard's browser tests (they skip meanwhile)"
    exit 0
fi
say "installing chromium with apt-get"
if "${sudo[@]}" apt-get update -qq >&2 && DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq chromium >&2; then
    say "chromium installed: $(chromium --version 2>/dev/null || echo '?')"
else
    say "apt-get could not install chromium (see above); the dashboard's browser tests will skip"
fi
exit 0
