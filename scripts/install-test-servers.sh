#!/usr/bin/env bash
# Install the real reference MCP servers that votr-mcp's tests and scripts/capture_registry.py start:
#   npm  (tests/servers/node_modules, pinned by package-lock.json): server-everything,
#        server-filesystem, server-memory, server-sequential-thinking, @playwright/mcp,
#        @upstash/context7-mcp and the MCP Inspector CLI (no browser is downloaded: none is needed
#        to list playwright's tools);
#   PyPI (tests/servers/.venv, requirements.txt): mcp-server-time, mcp-server-git, mcp-server-fetch,
#        excel-mcp-server;
#   PyPI (tests/servers/mcp1/.venv, requirements-mcp1.txt): mcp-server-sqlite, mcp-server-calculator,
#        which still pin mcp 1.x;
#   Debian: redis-server, for the scale-out tests (apt-get, as root or through sudo).
# The Python servers get venvs of their own because they pin an mcp other than the project's.
# Idempotent: a part whose lock file has not changed since it was installed is skipped.
# Needs node >= 18 with npm, and python >= 3.10 (PYTHON=... to choose one). Reaches only npm, PyPI and Debian (redis-server).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
servers="$root/tests/servers"
python="${PYTHON:-python3}"

say() { printf 'install-test-servers: %s\n' "$*" >&2; }
die() { say "error: $*"; exit 1; }

command -v node >/dev/null || die "node is not on PATH; install Node.js 18 or newer (e.g. apt-get install nodejs npm)"
command -v npm >/dev/null || die "npm is not on PATH; install it with Node.js"
command -v "$python" >/dev/null || die "'$python' is not on PATH; set PYTHON to a Python 3.10+ interpreter"
"$python" -c 'import sys; sys.exit(sys.version_info < (3, 10))' || die "'$python' is older than Python 3.10"

# A stamp beside the installed files records the hash of the lock it was installed from.
fingerprint() { cat "$@" | sha256sum | cut -d' ' -f1; }
is_current() { [[ -f "$1" && "$(cat "$1")" == "$2" ]]; }

install_npm() {
    local stamp="$servers/node_modules/.votr-installed" want
    want="$(fingerprint "$servers/package.json" "$servers/package-lock.json")"
    if is_current "$stamp" "$want"; then
        say "npm servers are up to date"
        return
    fi
    say "installing npm servers (npm ci in tests/servers)"
    # The Inspector's postinstall only installs its clients in a source checkout; it no-ops here.
    (cd "$servers" && npm ci --no-audit --no-fund --loglevel=error >&2)
    echo "$want" > "$stamp"
}

install_venv() {
    local venv="$1" requirements="$2" stamp want
    stamp="$venv/.votr-installed"
    want="$(fingerprint "$requirements")"
    if is_current "$stamp" "$want" && [[ -x "$venv/bin/python" ]]; then
        say "${venv#"$root"/} is up to date"
        return
    fi
    say "installing ${requirements#"$root"/} into ${venv#"$root"/}"
    [[ -x "$venv/bin/python" ]] || "$python" -m venv "$venv"
    # With pipefail the pipeline fails when pip does; the grep only drops pip's notes about
    # local index folders that this machine lacks.
    if ! "$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$requirements" 2>&1 \
        | { grep -v "^WARNING: Location 'file://" >&2 || true; }; then
        die "pip install -r ${requirements#"$root"/} failed; see above"
    fi
    "$venv/bin/python" -m pip check >&2 || die "conflicting packages in ${venv#"$root"/}; see above"
    echo "$want" > "$stamp"
}

# Redis for the scale-out tests (tests/services.py; eval/scaleout.py): Debian's redis-server. PostgreSQL
# comes from the pgserver wheel that `make setup` installs into the project's venv.
install_redis() {
    if command -v redis-server >/dev/null; then
        say "redis-server is installed"
        return
    fi
    command -v apt-get >/dev/null || die "redis-server is not installed and there is no apt-get; install Redis 6+ so that redis-server is on PATH"
    local sudo=()
    ((EUID == 0)) || sudo=(sudo)
    say "installing redis-server (apt-get)"
    "${sudo[@]}" apt-get update -qq >&2 || die "apt-get update failed; see above"
    DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq redis-server >&2 || die "apt-get install redis-server failed; see above"
    # The package starts a system-wide Redis on port 6379; the tests start their own on free ports.
}
install_redis

# The three installs mostly wait on downloads, so they run side by side.
install_npm & npm_job=$!
install_venv "$servers/.venv" "$servers/requirements.txt" & venv_job=$!
install_venv "$servers/mcp1/.venv" "$servers/requirements-mcp1.txt" & mcp1_job=$!
failed=0
wait "$npm_job" || { say "error: npm ci in tests/servers failed; see above"; failed=1; }
wait "$venv_job" || failed=1
wait "$mcp1_job" || failed=1
((failed == 0)) || die "some servers did not install; see above"

missing=()
for bin in node_modules/.bin/mcp-server-everything node_modules/.bin/mcp-server-filesystem \
    node_modules/.bin/mcp-server-memory node_modules/.bin/mcp-server-sequential-thinking \
    node_modules/.bin/playwright-mcp node_modules/.bin/context7-mcp node_modules/.bin/mcp-inspector \
    .venv/bin/mcp-server-time .venv/bin/mcp-server-git .venv/bin/mcp-server-fetch .venv/bin/excel-mcp-server \
    mcp1/.venv/bin/mcp-server-sqlite mcp1/.venv/bin/mcp-server-calculator; do
    [[ -e "$servers/$bin" ]] || missing+=("tests/servers/$bin")
done
((${#missing[@]} == 0)) || die "not installed: ${missing[*]}"
say "ready: real MCP servers in tests/servers (see tests/upstream_servers.py)"
