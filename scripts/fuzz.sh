#!/usr/bin/env bash
# Runs every Go fuzz target (func FuzzXxx in a _test.go file) for FUZZTIME
# each, one after another: go test -fuzz takes one target at a time. The
# targets are listed with `go test -list`, so a new one is picked up without
# editing this file. CI runs it with a few seconds each (scripts/test.sh);
# `make fuzz` runs a longer campaign. A failing input is written by go test
# under the package's testdata/fuzz/<Target>/: commit it with the fix, as
# a regression seed.
#
#   FUZZTIME=5s       time per target (a duration, or Nx for N executions)
#   FUZZ_PARALLEL=2   fuzzing workers per target
#   FUZZ_MATCH=.      only targets whose "package Target" matches this regexp
set -euo pipefail
cd "$(dirname "$0")/.."
fuzztime="${FUZZTIME:-5s}"
parallel="${FUZZ_PARALLEL:-2}"
match="${FUZZ_MATCH:-.}"

# Packages with a fuzz target; go test -list gives their targets' names.
pkgs=$(grep -rl --include='*_test.go' -E '^func Fuzz[A-Z0-9_]' . | grep -v node_modules | xargs -n1 dirname | sort -u)
targets=()
for dir in $pkgs; do
  for name in $(go test -list '^Fuzz' "$dir" | grep '^Fuzz' || true); do
    if printf '%s %s\n' "$dir" "$name" | grep -Eq -- "$match"; then
      targets+=("$dir $name")
    fi
  done
done
echo "fuzzing ${#targets[@]} targets for $fuzztime each"

failed=()
log=$(mktemp)
trap 'rm -f "$log"' EXIT
start=$SECONDS
for t in "${targets[@]}"; do
  read -r dir name <<<"$t"
  if go test -run '^$' -fuzz "^${name}\$" -fuzztime "$fuzztime" -parallel "$parallel" "$dir" >"$log" 2>&1; then
    # The last progress line: executions in all, and the corpus size.
    last=$(grep -E '^fuzz: elapsed:' "$log" | tail -n 1 || true)
    echo "ok   $dir $name: ${last#fuzz: }"
  elif grep -q 'context deadline exceeded' "$log" && ! grep -q 'Failing input written' "$log"; then
    # go test -fuzz can give up when a worker answers after -fuzztime ran
    # out (on a loaded machine): no input failed, so this is no failure.
    echo "ok   $dir $name: no input failed (go test: context deadline exceeded at the end)"
  else
    cat "$log"
    echo "FAIL $dir $name"
    failed+=("$dir $name")
  fi
done
echo "fuzzed ${#targets[@]} targets in $((SECONDS - start)) s"
if [ ${#failed[@]} -gt 0 ]; then
  printf 'FAILED: %s\n' "${failed[@]}"
  exit 1
fi
