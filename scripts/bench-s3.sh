#!/usr/bin/env bash
# Benchmarks uploads to the S3 endpoint of `cascade serve` over loopback: a
# 2 GiB file with the AWS CLI (as installed, and with the settings
# docs/s3.md suggests) and with `cascade upload --endpoint`, beside
# `cp` of the same file on the same disk, with the server's peak RSS during
# each upload, and the ceiling of any upload over a socket here: the same
# bytes sent over loopback TCP from memory to nothing. Everything stays on
# this machine; the source file is in the page cache for every run, and
# each destination is flushed (untimed) and removed before the next run.
#
# Every copy writes into memory the kernel has just freed: a file the size
# of the source is written and removed before each one. On a virtual
# machine a page the guest has never used costs a fault on the host, and
# the first copies after boot ran several times slower than the same ones
# later (cp: 620 against 5,600 MiB/s); a server that has been up a while
# writes into recycled memory. BENCH_S3_FRESH=1 skips that step, so each
# copy may write into never-used memory as after boot. BENCH_S3_MIB changes
# the size.
set -euo pipefail
cd "$(dirname "$0")/.."
mib=${BENCH_S3_MIB:-2048}
work=$(mktemp -d "${TMPDIR:-/tmp}/cascade-bench-s3.XXXXXX")
server=""
cleanup() {
  if [ -n "$server" ]; then kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

command -v aws >/dev/null || { echo "bench-s3: the AWS CLI is missing; run scripts/deps.sh" >&2; exit 1; }
go build -o "$work/cascade" ./cmd/cascade
mkdir -p "$work/src/traces"
dd if=/dev/urandom of="$work/src/traces/kernel-1.trace" bs=1M count="$mib" status=none
# The source is flushed before anything is timed, so no copy competes with
# the write-back of dd's output, and is read into the page cache.
sync "$work/src/traces/kernel-1.trace"
cat "$work/src/traces/kernel-1.trace" >/dev/null

# recycle: writes and removes a file the size of the source, whose pages
# the next copy reuses (see above).
recycle() {
  [ -n "${BENCH_S3_FRESH:-}" ] && return
  cat "$work/src/traces/kernel-1.trace" >"$work/recycle"
  rm "$work/recycle"
}

# timed CMD...: runs CMD; sets wall to its wall time and cpu to its user +
# system CPU time, in seconds.
timed() {
  local TIMEFORMAT='%R %U %S' out
  out=$({ time "$@" >/dev/null 2>"$work/last.err"; } 2>&1) || { cat "$work/last.err" >&2; return 1; }
  read -r wall u s <<<"$out"
  cpu=$(echo "$u + $s" | bc)
}
rate() { echo "scale=1; $mib / $1" | bc; }
# flushed FILE: syncs FILE (written by the copy just timed) and sets disk to
# that copy's wall time plus the sync's: the time until its data is on disk.
flushed() {
  local TIMEFORMAT='%R' s
  s=$({ time sync "$1"; } 2>&1)
  disk=$(echo "$wall + $s" | bc)
}
# server_cpu: the server's user + system CPU seconds so far.
server_cpu() { awk -v hz="$(getconf CLK_TCK)" '{ printf "%.2f", ($14 + $15) / hz }' "/proc/$server/stat"; }

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
addr=127.0.0.1:$(free_port)
s3=127.0.0.1:$(free_port)
export CASCADE_S3_ACCESS_KEY=BENCHACCESSKEY CASCADE_S3_SECRET_KEY=bench-secret-key-0123456789
CASCADE_DATA_DIR="$work/data" CASCADE_ADDR=$addr CASCADE_S3_ADDR=$s3 CASCADE_LOG_LEVEL=warn \
  "$work/cascade" serve >"$work/serve.log" 2>&1 &
server=$!
for _ in $(seq 100); do curl -sf "http://$addr/healthz" >/dev/null && break; sleep 0.1; done
curl -sf "http://$addr/healthz" >/dev/null || { cat "$work/serve.log"; exit 1; }

# peak_rss: the server's peak RSS in MiB since the last reset_peak.
reset_peak() { echo 5 >"/proc/$server/clear_refs"; }
peak_rss() { awk '/VmHWM/ { printf "%d", $2 / 1024 }' "/proc/$server/status"; }

recycle
timed cp "$work/src/traces/kernel-1.trace" "$work/cp-copy"
t_cp=$wall cpu_cp=$cpu
flushed "$work/cp-copy"; d_cp=$disk
rm "$work/cp-copy"

# upload NAME FILE CMD...: runs the upload CMD into recycled memory and
# sets t_NAME and cpu_NAME (see timed), the server's peak RSS (rss_NAME) and
# CPU seconds (srv_NAME) during it, and d_NAME once FILE, what it wrote, is
# flushed (see flushed).
upload() {
  local name=$1 file=$2 c0
  shift 2
  recycle
  reset_peak
  c0=$(server_cpu)
  timed "$@"
  printf -v "t_$name" %s "$wall"
  printf -v "cpu_$name" %s "$cpu"
  printf -v "rss_$name" %s "$(peak_rss)"
  printf -v "srv_$name" %s "$(echo "$(server_cpu) - $c0" | bc)"
  flushed "$file"
  printf -v "d_$name" %s "$disk"
}

export AWS_ACCESS_KEY_ID=$CASCADE_S3_ACCESS_KEY AWS_SECRET_ACCESS_KEY=$CASCADE_S3_SECRET_KEY AWS_DEFAULT_REGION=us-east-1
export AWS_CONFIG_FILE=/dev/null AWS_SHARED_CREDENTIALS_FILE=/dev/null AWS_EC2_METADATA_DISABLED=true
upload aws "$work/data/s3/cascade/bench/aws.trace" \
  aws --only-show-errors --endpoint-url "http://$s3" s3 cp "$work/src/traces/kernel-1.trace" s3://cascade/bench/aws.trace
rm "$work/data/s3/cascade/bench/aws.trace"

# The same with the settings docs/s3.md suggests for the CLI.
printf '[default]\nrequest_checksum_calculation = when_required\ns3 =\n  multipart_chunksize = 64MB\n  max_concurrent_requests = 4\n' >"$work/aws-config"
upload awsset "$work/data/s3/cascade/bench/aws-set.trace" \
  env AWS_CONFIG_FILE="$work/aws-config" aws --only-show-errors --endpoint-url "http://$s3" s3 cp "$work/src/traces/kernel-1.trace" s3://cascade/bench/aws-set.trace
rm "$work/data/s3/cascade/bench/aws-set.trace"

upload cascade "$work/data/s3/cascade/traces/bench-cascade/traces/kernel-1.trace" \
  "$work/cascade" upload "$work/src" --run-name bench-cascade --endpoint "http://$s3"
cmp -s "$work/src/traces/kernel-1.trace" "$work/data/s3/cascade/traces/bench-cascade/traces/kernel-1.trace" ||
  { echo "bench-s3: the uploaded file differs from the source" >&2; exit 1; }

# The ceiling: the same number of bytes over loopback TCP, from a buffer
# to nothing, with no file and no HTTP.
t_tcp=$(GOWORK="$PWD/servertests/go.work" go test ./servertests -run '^$' -bench LoopbackTCP -benchtime "${mib}x" | awk '/BenchmarkLoopbackTCP/ { print $3 / 1e9 * $2 }')

mem="recycled memory"; [ -n "${BENCH_S3_FRESH:-}" ] && mem="memory as it comes (BENCH_S3_FRESH)"
echo "S3 upload of $mib MiB over loopback, copies into $mem ($(nproc) cores; load average:$(uptime | sed 's/.*load average://'))"
echo "  wall: until the copy returns (its data in the page cache); on disk: until a sync of the copy returns"
printf '  %-26s %6s %9s %8s %9s %11s %11s %9s\n' "" wall MiB/s "on disk" MiB/s "client CPU" "server CPU" "peak RSS"
row() { # label wall disk client-cpu server-cpu rss
  printf '  %-26s %5.1fs %9s %7.1fs %9s %10.1fs %11s %9s\n' "$1" "$2" "$(rate "$2")" "$3" "$(rate "$3")" "$4" "$5" "$6"
}
row "cp on the same disk" "$t_cp" "$d_cp" "$cpu_cp" - -
row "aws s3 cp" "$t_aws" "$d_aws" "$cpu_aws" "$(printf %.1fs "$srv_aws")" "$rss_aws MiB"
row "aws s3 cp, suggested settings" "$t_awsset" "$d_awsset" "$cpu_awsset" "$(printf %.1fs "$srv_awsset")" "$rss_awsset MiB"
row "cascade upload --endpoint" "$t_cascade" "$d_cascade" "$cpu_cascade" "$(printf %.1fs "$srv_cascade")" "$rss_cascade MiB"
printf '  %-26s %5.1fs %9s\n' "loopback TCP, no files" "$t_tcp" "$(rate "$t_tcp")"
ratio() { echo "scale=2; $1 / $2" | bc; }
echo "  ratio to cp, wall: aws $(ratio "$t_cp" "$t_aws"), aws with settings $(ratio "$t_cp" "$t_awsset"), cascade $(ratio "$t_cp" "$t_cascade")"
echo "  ratio to cp, on disk: aws $(ratio "$d_cp" "$d_aws"), aws with settings $(ratio "$d_cp" "$d_awsset"), cascade $(ratio "$d_cp" "$d_cascade")"
