#!/usr/bin/env bash
# Runs every Go fuzz target (func FuzzXxx in a _test.go file) for FUZZTIME
# each, FUZZ_JOBS at a time. Each package with a target is built once, as a
# fuzzing-instrumented test binary (go test -c -fuzz), and each of its
# targets is run from that binary: go test -fuzz would link a binary per
# target, which took longer than 5 s of fuzzing. The targets are listed by
# the binary (-test.list), so a new one is picked up without editing this
# file. CI runs it with a few seconds each (scripts/test.sh); `make fuzz`
# runs a longer campaign. A failing input is written under the package's
# testdata/fuzz/<Target>/, as go test -fuzz writes it: commit it with the
# fix, as a regression seed.
#
#   FUZZTIME=5s       time per target (a duration, or Nx for N executions)
#   FUZZ_PARALLEL=2   fuzzing workers per target
#   FUZZ_JOBS=1       targets fuzzed at once (each for FUZZTIME)
#   FUZZ_MATCH=.      only targets whose "package Target" matches this regexp
#   FUZZ_INSTRUMENT=all  coverage guidance from every package the binary
#                     holds, as go test -fuzz builds it; "module": from
#                     Cascade's packages alone, the others built as go vet
#                     and go build already did (so cached): CI's choice, where
#                     instrumenting the dependencies (the S3 gateway's among
#                     them) cost minutes of compiling for seconds of fuzzing
set -euo pipefail
cd "$(dirname "$0")/.."
fuzztime="${FUZZTIME:-5s}"
parallel="${FUZZ_PARALLEL:-2}"
jobs="${FUZZ_JOBS:-1}"
match="${FUZZ_MATCH:-.}"
case "${FUZZ_INSTRUMENT:-all}" in
  all) instrument=(-fuzz=.) ;;
  module) instrument=("-gcflags=$(go list -m)/...=-d=libfuzzer") ;;
  *) echo "FUZZ_INSTRUMENT is all or module, not $FUZZ_INSTRUMENT" >&2; exit 2 ;;
esac
# Where go test -fuzz keeps the inputs that widened coverage, per package:
# a binary run by hand is given the same directory, so campaigns add up.
fuzzcache="$(go env GOCACHE)/fuzz"

bin=$(mktemp -d)
out=$(mktemp -d)
trap 'rm -rf "$bin" "$out"' EXIT

# Packages with a fuzz target, built once, by one go command (which builds
# them side by side and each dependency once). go vet ran in its own step;
# vet here would only repeat it.
start=$SECONDS
pkgs=()
for dir in $(grep -rl --include='*_test.go' -E '^func Fuzz[A-Z0-9_]' . | grep -v node_modules | xargs -n1 dirname | sort -u); do
  # A package none of whose targets FUZZ_MATCH picks is not built.
  if grep -ho -E '^func Fuzz[A-Za-z0-9_]*' "$dir"/*_test.go | sed "s|^func |$dir |" | grep -E -- "$match" >/dev/null; then
    pkgs+=("$dir")
  fi
done
[ ${#pkgs[@]} -gt 0 ] || { echo "no fuzz target matches $match"; exit 0; }
# go test -c -o DIR/ names each binary after its package's last element.
dup=$(printf '%s\n' "${pkgs[@]}" | xargs -n1 basename | sort | uniq -d)
if [ -n "$dup" ]; then
  echo "packages with fuzz targets share a last path element ($dup): go test -c -o $bin/ cannot name their binaries apart" >&2
  exit 2
fi
go test -c -vet=off "${instrument[@]}" -o "$bin/" "${pkgs[@]}"
targets=()
for dir in "${pkgs[@]}"; do
  exe="$bin/$(basename "$dir").test"
  importpath=$(go list -f '{{.ImportPath}}' "$dir")
  for name in $(cd "$dir" && "$exe" -test.list '^Fuzz' | grep '^Fuzz' || true); do
    if printf '%s %s\n' "$dir" "$name" | grep -Eq -- "$match"; then
      targets+=("$dir $name $exe $importpath")
    fi
  done
done
echo "built ${#pkgs[@]} packages' fuzzing binaries in $((SECONDS - start)) s; fuzzing ${#targets[@]} targets for $fuzztime each, $jobs at a time"

# fuzz_one runs target i and writes its result line to $out/i.result
# (with the fuzzer's output on failure).
fuzz_one() {
  local i=$1 dir name exe importpath log="$out/$1.log"
  read -r dir name exe importpath <<<"${targets[i]}"
  # As go test runs it: in the package's directory, so testdata/fuzz holds
  # the seeds and receives a failing input.
  if (cd "$dir" && "$exe" -test.run='^$' -test.fuzz="^${name}\$" -test.fuzztime="$fuzztime" \
    -test.parallel="$parallel" -test.fuzzcachedir="$fuzzcache/$importpath" -test.paniconexit0) >"$log" 2>&1; then
    # The last progress line: executions in all, and the corpus size.
    last=$(grep -E '^fuzz: elapsed:' "$log" | tail -n 1 || true)
    echo "ok   $dir $name: ${last#fuzz: }" >"$out/$i.result"
  elif grep -q 'context deadline exceeded' "$log" && ! grep -q 'Failing input written' "$log"; then
    # Fuzzing can give up when a worker answers after -fuzztime ran out
    # (on a loaded machine): no input failed, so this is no failure.
    echo "ok   $dir $name: no input failed (context deadline exceeded at the end)" >"$out/$i.result"
  else
    { cat "$log"; echo "FAIL $dir $name"; } >"$out/$i.result"
  fi
}

start=$SECONDS
for i in "${!targets[@]}"; do
  while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n || true; done
  fuzz_one "$i" &
done
wait
failed=()
for i in "${!targets[@]}"; do
  cat "$out/$i.result"
  if tail -n 1 "$out/$i.result" | grep -q '^FAIL '; then failed+=("$(tail -n 1 "$out/$i.result" | cut -c6-)"); fi
done
echo "fuzzed ${#targets[@]} targets in $((SECONDS - start)) s"
if [ ${#failed[@]} -gt 0 ]; then
  printf 'FAILED: %s\n' "${failed[@]}"
  exit 1
fi
