#!/usr/bin/env bash
# Starts Cascade on its embedded defaults (./cascade-data, 127.0.0.1:8080),
# building the web UI first when it is missing or older than its sources
# and Node is available (CASCADE_UI_BUILD=0 skips that). Extra arguments
# go to `cascade serve`. The server runs in the directory this script is
# started from, so relative paths (./cascade-data, --data-dir, CASCADE_*)
# mean there, as they do for `cascade upload`.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
export GOFLAGS="${GOFLAGS:--mod=readonly}"
(
  cd "$root"
  if [ -f frontend/package.json ] && [ "${CASCADE_UI_BUILD:-1}" != 0 ]; then
    stale=$(find frontend/src frontend/package.json frontend/*.html graph/schema -newer frontend/dist/index.html 2>/dev/null | head -1 || true)
    if [ ! -f frontend/dist/index.html ] || [ -n "$stale" ]; then
      node_major=$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)
      if command -v npm >/dev/null && [ "$node_major" -ge 20 ]; then
        echo "building the web UI..." >&2
        (cd frontend && npm ci --no-audit --no-fund --loglevel=error && npm run build) >&2
      else
        echo "Node 20+ and npm not found: serving the API and playground without the web UI" >&2
        echo "(install Node 20 or newer, or run scripts/deps.sh, then start again)" >&2
      fi
    fi
  fi
  mkdir -p bin
  # The first build downloads and compiles every module: minutes of silence
  # unless we say what it is.
  if [ -x bin/cascade ]; then
    echo "building the server (bin/cascade)..." >&2
  else
    echo "building the server (bin/cascade; the first time takes a few minutes: Go downloads and compiles its modules)..." >&2
  fi
  start=$SECONDS
  go build -buildvcs=auto -o bin/cascade ./cmd/cascade
  echo "built the server in $((SECONDS - start))s; starting it" >&2
)
exec "$root/bin/cascade" serve "$@"
