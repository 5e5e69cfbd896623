#!/usr/bin/env bash
# Records the squeue/sacct JSON fixtures in this directory from a real cluster
# (scripts/slurm.sh up): one job in each state the parser maps, then the same
# commands with the controller stopped. Run from the repository root:
#   slurm/testdata/record.sh
# Takes about two minutes (a time limit is at least one minute).
set -euo pipefail
out=$(cd "$(dirname "$0")" && pwd)
slurm_sh=$(cd "$out/../.." && pwd)/scripts/slurm.sh
dir=$(mktemp -d /tmp/cascade-slurm-rec.XXXXXX)
work=$(mktemp -d)
trap '"$slurm_sh" down "$dir" || true; rm -rf "$dir" "$work"' EXIT
eval "$("$slurm_sh" up "$dir" --min-job-age=900)"
cd "$work"
sub() { sbatch --parsable -o "$work/%j.out" "$@"; }
# state ID prints the job's state; -t all: finished jobs too.
state() { squeue -h -t all -j "$1" -o %T; }
# await ID STATE… waits (at most 3 minutes) until the job is in one of the states.
await() {
  local id=$1 deadline=$((SECONDS + 180)) s
  shift
  while s=$(state "$id"); ! printf '%s\n' "$@" | grep -qx "$s"; do
    [ $SECONDS -lt $deadline ] || { echo "job $id still $s, not $*" >&2; exit 1; }
    sleep 0.5
  done
}
printf '#!/bin/sh\necho ok\n' >ok.sh
printf '#!/bin/sh\nexit 3\n' >fail.sh
printf '#!/bin/sh\nsleep 600\n' >long.sh
printf '#!/bin/sh\n(head -c 400000000 /dev/zero; sleep 3) | tail >/dev/null\n' >mem.sh
ok=$(sub -J ok ok.sh)
fail=$(sub -J fail fail.sh)
oom=$(sub -J oom --mem=64M mem.sh)
timeout=$(sub -J timeout --time=1 long.sh)
cancelled=$(sub -J cancelled long.sh)
nodefail=$(sub -J nodefail -p long --no-requeue long.sh)
held=$(sub -J held --hold ok.sh)
big=$(sub -J big --mem=6000 long.sh)
resources=$(sub -J resources --mem=6000 ok.sh)
priority=$(sub -J priority --mem=6000 ok.sh)
await "$cancelled" RUNNING
await "$nodefail" RUNNING
await "$big" RUNNING
scancel "$cancelled"
# Setting the node down fails the jobs on it; take away the big one first so
# only the "nodefail" job is running then.
await "$oom" OUT_OF_MEMORY FAILED
await "$timeout" TIMEOUT
await "$cancelled" CANCELLED
squeue --json >"$out/squeue.json"
sacct --json -j "$ok,$fail,$oom,$timeout,$cancelled" >"$out/sacct.json"
scancel "$big" "$resources" "$priority" "$held"
node=$CASCADE_SLURM_NODE
scontrol update nodename="$node" state=down reason=recorded
await "$nodefail" NODE_FAIL
scontrol update nodename="$node" state=resume 2>/dev/null || true # ReturnToService may have resumed it
squeue --json >"$out/squeue-nodefail.json"
sacct --json -j "$nodefail" >"$out/sacct-nodefail.json"
"$slurm_sh" stop-ctld "$dir"
rc=0
squeue --json >"$out/squeue-ctld-down.json" 2>"$out/squeue-ctld-down.stderr" || rc=$?
echo "squeue exit $rc" >>"$out/squeue-ctld-down.stderr"
rc=0
sbatch --parsable ok.sh >/dev/null 2>"$out/sbatch-ctld-down.stderr" || rc=$?
echo "sbatch exit $rc" >>"$out/sbatch-ctld-down.stderr"
echo "recorded in $out"
