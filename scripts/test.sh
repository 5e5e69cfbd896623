#!/usr/bin/env bash
# Runs every test of Cascade: formatting, vet, generated code is current, Go
# tests with the race detector (on SQLite, and on PostgreSQL when
# CASCADE_TEST_POSTGRES_DSN is set), and the web UI's unit and browser
# tests. It installs what the tests need (Node, Chromium) when missing.
set -euo pipefail
cd "$(dirname "$0")/.."
export GOFLAGS="${GOFLAGS:--mod=readonly}"

step() { printf '\n==> %s (%s, %ss in)\n' "$*" "$(date +%T)" "$SECONDS"; }

step "dependencies"
scripts/deps.sh

step "gofmt"
unformatted=$(gofmt -l $(git ls-files '*.go' | grep -v node_modules) 2>/dev/null || true)
if [ -n "$unformatted" ]; then
  echo "gofmt would change:"; echo "$unformatted"; exit 1
fi

step "generated code is current"
go tool gqlgen generate
if [ -n "$(git status --porcelain -- graph resolvers)" ]; then
  echo "gqlgen output differs from what is committed; run 'go generate ./graph' and commit:"
  git status --short -- graph resolvers
  git --no-pager diff --stat -- graph resolvers
  exit 1
fi

step "go vet"
go vet ./...

if [ -d frontend ] && [ -f frontend/package.json ]; then
  step "web UI: install, unit tests, build"
  (cd frontend && npm ci --no-audit --no-fund && npm test && npm run build)
fi

step "Slurm"
if command -v slurmctld >/dev/null && command -v munged >/dev/null; then
  echo "$(slurmctld -V): the tests in slurm/, runs/ and cmd/cascade (TestCrashRecoverySlurm; and e2e/slurm.test.mjs) start a one-node cluster with scripts/slurm.sh"
else
  echo "SKIPPING the Slurm cluster tests in slurm/, runs/ and cmd/cascade: Slurm's packages are not installed and cannot be"
fi

step "go test -race"
go test -race -count=1 -timeout 20m ./...

step "fuzz targets, 5 s each (make fuzz runs a longer campaign)"
# Coverage guidance from Cascade's own packages: instrumenting every
# dependency for fuzzing compiled them all again, minutes for 5 s a target.
FUZZTIME=5s FUZZ_INSTRUMENT=module scripts/fuzz.sh

step "GraphQL over HTTP: graphql-http's server audits against cascade serve"
go build -buildvcs=auto -o bin/cascade ./cmd/cascade
(cd frontend && CASCADE_BIN="$PWD/../bin/cascade" npm run graphql-audit)

if [ -d frontend ] && [ -f frontend/package.json ] && grep -q '"e2e"' frontend/package.json; then
  step "web UI: end-to-end tests in Chromium"
  go build -buildvcs=auto -o bin/cascade ./cmd/cascade
  go build -o bin/accel-sim.out ./testkit/fakesim/cmd/fakesim
  (cd frontend && CASCADE_BIN="$PWD/../bin/cascade" CASCADE_SIM_CMD="$PWD/../bin/accel-sim.out" npm run e2e)
fi
