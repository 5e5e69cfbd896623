#!/usr/bin/env bash
# Runs every test of Cascade: formatting, vet, generated code is current, Go
# tests with the race detector (on SQLite, and on PostgreSQL when
# CASCADE_TEST_POSTGRES_DSN is set), and the web UI's unit and browser
# tests. It installs what the tests need (Node, Chromium) when missing.
set -euo pipefail
cd "$(dirname "$0")/.."
export GOFLAGS="${GOFLAGS:--mod=readonly}"

# Each step's name and the second it started: the summary at the end, pass
# or fail, gives each step's duration.
steps=()
starts=()
step() {
  steps+=("$*")
  starts+=("$SECONDS")
  printf '\n==> %s (%s, %ss in)\n' "$*" "$(date +%T)" "$SECONDS"
}
summary() {
  local rc=$? i end
  if [ -n "${fuzz_pid:-}" ]; then kill "$fuzz_pid" 2>/dev/null || true; fi
  # A failure before the web UI's step leaves npm ci running: let it end.
  if [ -n "${ui_install:-}" ]; then wait "$ui_install" 2>/dev/null || true; fi
  if [ -n "${ui_log:-}" ]; then rm -f "$ui_log"; fi
  if [ -n "${ui_test_pid:-}" ]; then kill "$ui_test_pid" 2>/dev/null || true; fi
  if [ -n "${ui_test_log:-}" ]; then rm -f "$ui_test_log"; fi
  [ ${#steps[@]} -gt 0 ] || return "$rc"
  if [ "$rc" -eq 0 ]; then
    printf '\n==> passed in %ss; time by step:\n' "$SECONDS"
  else
    printf '\n==> FAILED (exit %s) after %ss, in step "%s"; time by step:\n' "$rc" "$SECONDS" "${steps[-1]}"
  fi
  for i in "${!steps[@]}"; do
    end=${starts[i + 1]:-$SECONDS}
    printf '%6ss  %s\n' "$((end - starts[i]))" "${steps[i]}"
  done
  return "$rc"
}
trap summary EXIT

step "dependencies"
scripts/deps.sh

# npm ci (downloading and unpacking the web UI's packages: network and disk
# more than CPU) runs beside gofmt, the generated-code check and go vet; the
# web UI's step waits for it and shows its output.
ui_install="" ui_log=""
if [ -d frontend ] && [ -f frontend/package.json ]; then
  ui_log=$(mktemp)
  (cd frontend && t0=$SECONDS && npm ci --no-audit --no-fund &&
    echo "(npm ci took $((SECONDS - t0)) s, beside the steps before this one)") >"$ui_log" 2>&1 &
  ui_install=$!
fi

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

# servertests/ is a module of its own (the full tier's tests that start a
# server: go test -short ./... at the root does not link them); its
# go.work puts it beside the root module, so that one go command vets and
# tests both.
with_servertests() { GOWORK="$PWD/servertests/go.work" "$@"; }

step "go vet"
with_servertests go vet ./... ./servertests/...

# The web UI is built before the Go tests (they embed frontend/dist, which
# must not change while they compile); its unit tests run beside the Go
# tests (below).
ui_test_pid="" ui_test_log=""
if [ -n "$ui_install" ]; then
  step "web UI: install (begun after the dependencies), build"
  ui_status=0
  wait "$ui_install" || ui_status=$?
  ui_install=""
  cat "$ui_log"
  if [ "$ui_status" -ne 0 ]; then
    echo "npm ci failed (exit $ui_status)"
    exit 1
  fi
  (cd frontend && npm run build)
  ui_test_log=$(mktemp)
fi

step "Slurm"
if command -v slurmctld >/dev/null && command -v munged >/dev/null; then
  echo "$(slurmctld -V): the tests in slurm/, servertests/runs and cmd/cascade (TestCrashRecoverySlurm; and e2e/slurm.test.mjs) start a one-node cluster with scripts/slurm.sh"
else
  echo "SKIPPING the Slurm cluster tests in slurm/, servertests/runs and cmd/cascade: Slurm's packages are not installed and cannot be"
fi

step "go test -race, and beside it the web UI's unit tests"
# go test starts the packages' test binaries in the order they are named,
# two at a time (2 cores): the longest start first, so that no long one is
# left running alone at the end: cmd/cascade (the real Accel-Sim's tests,
# about 9 minutes here), servertests/runs (runs' and sampled runs' server
# tests; its Slurm tests wait on a real controller stopped and started
# again) and slurm/, instead of after the packages before them in the
# alphabet. -vet=off: go vet ./... ran every analyzer (a superset of the
# ten go test runs) on the same packages and test files above; go test's
# own pass re-type-checked every package against the race-built ones, a
# minute and a half of CPU on a cold cache.
#
# Three packages at a time on 2 cores: the Slurm tests wait on a real
# controller (slurm/ used half a core over its 2.5 minutes, the Slurm
# tests of servertests/runs three quarters), and a third package fills
# what they leave. The web UI's unit tests (vitest, about 40 s) run beside
# them for the same reason; their output is shown after.
if [ -n "$ui_test_log" ]; then
  (cd frontend && t0=$SECONDS && npm test &&
    echo "(the web UI's unit tests took $((SECONDS - t0)) s, beside go test -race)") >"$ui_test_log" 2>&1 &
  ui_test_pid=$!
fi
go_status=0
# modernc.org's SQLite (C translated to Go) is built without the race
# detector's instrumentation and without checkptr (which -race turns on,
# and which checks every unsafe.Pointer conversion: SQLite makes them by
# the million). Instrumented, SQLite's own code was most of what the race
# detector cost: db's tests took 11.7 CPU-s with it, 7.1 without, and 13 %
# of servertests/runs' CPU profile was checkptr in SQLite alone. Every
# Cascade package, GORM, gqlgen and the standard library (database/sql,
# which hands SQLite one goroutine a connection) stay instrumented; what
# goes unseen is a race inside SQLite's own code, which is not ours.
with_servertests go test -race '-gcflags=modernc.org/...=-race=false -d=checkptr=0' -vet=off -count=1 -p 3 -timeout 20m \
  ./cmd/cascade ./servertests/runs ./slurm ./... ./servertests/... || go_status=$?
if [ -n "$ui_test_pid" ]; then
  ui_status=0
  wait "$ui_test_pid" || ui_status=$?
  ui_test_pid=""
  printf '\n--- the web UI'"'"'s unit tests, run beside go test -race:\n'
  cat "$ui_test_log"
  if [ "$ui_status" -ne 0 ]; then
    echo "the web UI's unit tests failed (exit $ui_status)"
    exit 1
  fi
fi
[ "$go_status" -eq 0 ] || exit "$go_status"

step "GraphQL over HTTP: graphql-http's server audits against cascade serve"
go build -buildvcs=auto -o bin/cascade ./cmd/cascade
(cd frontend && CASCADE_BIN="$PWD/../bin/cascade" npm run graphql-audit)

# Fuzzing: coverage guidance from Cascade's own packages (instrumenting
# every dependency for fuzzing compiled them all again, minutes for 5 s a
# target). The Chromium tests mostly wait (on the browser, the server, the
# stand-in simulator; one at a time, 311 s here), so they run two test
# files at a time (251 s with the fuzz targets beside them; three at a
# time gained 9 s more) and the fuzz targets beside them rather than
# after, two targets at a time with one worker each: each target still
# gets its 5 s (116 s for the 22, with their builds).
fuzz() { FUZZTIME=5s FUZZ_PARALLEL=1 FUZZ_JOBS=2 FUZZ_INSTRUMENT=module scripts/fuzz.sh; }
if [ -d frontend ] && [ -f frontend/package.json ] && grep -q '"e2e"' frontend/package.json; then
  step "web UI: end-to-end tests in Chromium, and beside them every fuzz target for 5 s (make fuzz runs a longer campaign)"
  go build -o bin/accel-sim.out ./testkit/fakesim/cmd/fakesim
  fuzz_log=$(mktemp)
  fuzz >"$fuzz_log" 2>&1 &
  fuzz_pid=$!
  e2e_status=0
  (cd frontend && CASCADE_BIN="$PWD/../bin/cascade" CASCADE_SIM_CMD="$PWD/../bin/accel-sim.out" npm run e2e) || e2e_status=$?
  fuzz_status=0
  wait "$fuzz_pid" || fuzz_status=$?
  fuzz_pid=""
  printf '\n--- the fuzz targets, run beside the Chromium tests:\n'
  cat "$fuzz_log"
  rm -f "$fuzz_log"
  if [ "$e2e_status" -ne 0 ] || [ "$fuzz_status" -ne 0 ]; then
    echo "Chromium tests exit $e2e_status, fuzz targets exit $fuzz_status"
    exit 1
  fi
else
  step "fuzz targets, 5 s each (make fuzz runs a longer campaign)"
  fuzz
fi
