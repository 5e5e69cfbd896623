#!/usr/bin/env bash
# Starts and stops a single-node Slurm cluster on this machine, for Cascade's
# Slurm tests and for trying the Slurm executor by hand. No systemd: munged,
# slurmctld, slurmd and (for sacct) slurmdbd with a MariaDB of its own run as
# daemons on loopback, every file, socket and port belonging to one directory,
# so two clusters never meet and "down" stops exactly what "up" started.
#
#   scripts/slurm.sh install                  install Debian's packages when missing
#   scripts/slurm.sh up [DIR] [--no-accounting] [--no-cgroups] [--min-job-age=SECONDS]
#                                             install, write configs into DIR (default: a new
#                                             temporary directory), start, wait until the node is
#                                             idle, print the environment (export SLURM_CONF=…)
#   scripts/slurm.sh env DIR                  print that environment again
#   scripts/slurm.sh down DIR                 cancel every job, stop every daemon of DIR
#   scripts/slurm.sh stop-ctld DIR            stop the controller alone (jobs keep running)
#   scripts/slurm.sh start-ctld DIR           start it again from its saved state
#
# The cluster: one node "c<port>" on this host (CPUs and memory set by the
# config, not probed, so short test jobs run side by side), partitions "debug"
# (default) and "long", room for 20,000 jobs. Where cgroup v1's memory and
# freezer hierarchies are writable (as here), jobs run in cgroups
# (proctrack/cgroup, task/cgroup) and one over its memory ends OUT_OF_MEMORY as
# on real clusters; elsewhere processes are tracked by parentage
# (proctrack/linuxproc, task/none) and memory is enforced by sampling RSS every
# second (jobacct_gather/linux with OverMemoryKill), which ends such a job
# FAILED by signal 9 (--no-cgroups chooses this where cgroups work). With accounting (the default) jobs are recorded by
# slurmdbd in MariaDB, associations are enforced and sacct works;
# --no-accounting leaves squeue alone, as on clusters without slurmdbd.
# DIR/cluster.env says which: SLURM_CONF, node, accounting, memory (cgroup|rss).
# Ended jobs leave squeue after 30 s (MinJobAge; --min-job-age changes it),
# so the tests exercise sacct's part.
#
# Exit status 3 means the packages are missing and cannot be installed here;
# the tests skip, saying so, on it and fail on any other error.
set -euo pipefail

log() { printf 'slurm.sh: %s\n' "$*" >&2; }
die() { log "$*"; exit 1; }

packages=(slurm-wlm munge slurmdbd mariadb-server)

install() {
  local need=()
  command -v slurmctld >/dev/null || need+=(slurm-wlm)
  command -v munged >/dev/null || need+=(munge)
  command -v slurmdbd >/dev/null || need+=(slurmdbd)
  command -v mariadbd >/dev/null || [ -x /usr/sbin/mariadbd ] || need+=(mariadb-server)
  [ ${#need[@]} -eq 0 ] && return 0
  log "installing ${need[*]}"
  local sudo=""
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || { log "not root and no sudo: cannot install ${need[*]}"; exit 3; }
    sudo=sudo
  fi
  # Debian's maintainer scripts would start the packaged services; policy-rc.d
  # usually forbids it on machines without an init, and this cluster starts its own.
  if ! { $sudo apt-get update -qq &&
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${need[@]}"; } >&2; then
    log "cannot install ${need[*]}"
    exit 3
  fi
}

# free_port prints a TCP port no socket uses, not among the ones in $taken.
# It picks below the kernel's ephemeral range (ip_local_port_range): a port
# in that range can be taken at any moment as the local end of someone's
# outgoing connection (a test suite makes thousands), and the daemon's
# bind, which comes later, would then fail.
taken=""
free_port() {
  local p lo=10000 hi
  hi=$(awk '{ print $1 }' /proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || echo 32768)
  [ "$hi" -gt $((lo + 1000)) ] || lo=1024
  for _ in $(seq 200); do
    p=$((lo + RANDOM % (hi - lo)))
    case " $taken " in *" $p "*) continue ;; esac
    if ! ss -Htan "sport = :$p" | grep -q .; then
      taken="$taken $p"
      echo "$p"
      return
    fi
  done
  die "no free port found"
}

# wait_for CMD… retries CMD for up to $wait_secs seconds (default 60).
wait_for() {
  local deadline=$((SECONDS + ${wait_secs:-60}))
  until "$@" >/dev/null 2>&1; do
    [ $SECONDS -lt $deadline ] || return 1
    sleep 0.2
  done
}

pid_of() { [ -s "$1" ] && cat "$1" 2>/dev/null || true; }
alive() { [ -n "$1" ] && kill -0 "$1" 2>/dev/null; }

# stop_pid PIDFILE NAME: TERM, wait up to 20 s, then KILL.
stop_pid() {
  local pid
  pid=$(pid_of "$1")
  alive "$pid" || return 0
  kill -TERM "$pid" 2>/dev/null || true
  wait_secs=20 wait_for bash -c "! kill -0 $pid" || {
    log "$2 ($pid) did not stop on TERM; killing it"
    kill -KILL "$pid" 2>/dev/null || true
  }
}

# cgroup_v1_usable succeeds when Slurm's cgroup/v1 plugin can make its
# directories in the memory and freezer hierarchies.
cgroup_v1_usable() {
  local c probe
  for c in memory freezer; do
    [ -d "/sys/fs/cgroup/$c" ] && [ "$(stat -f -c %T "/sys/fs/cgroup/$c")" = cgroupfs ] || return 1
    probe=/sys/fs/cgroup/$c/cascade-probe-$$
    mkdir "$probe" 2>/dev/null || return 1
    rmdir "$probe"
  done
}

write_configs() {
  local dir=$1 accounting=$2 min_job_age=$3 cgroups=$4 host memory=rss
  host=$(hostname -s)
  if [ "$cgroups" = yes ] && cgroup_v1_usable; then memory=cgroup; fi
  mkdir -p "$dir"/{munge,state,spool,log,tmp}
  chmod 700 "$dir" "$dir/munge"

  local ctld_port slurmd_port dbd_port db_port
  ctld_port=$(free_port)
  slurmd_port=$(free_port)
  dbd_port=$(free_port)
  db_port=$(free_port)
  # The node is named for the cluster, not the host: slurmd's cgroups are
  # named after it, so two clusters on one machine keep apart.
  local node=c$ctld_port
  cat >"$dir/ports" <<EOF
ctld=$ctld_port
slurmd=$slurmd_port
dbd=$dbd_port
db=$db_port
EOF
  cat >"$dir/cluster.env" <<EOF
SLURM_CONF=$dir/slurm.conf
CASCADE_SLURM_NODE=$node
CASCADE_SLURM_PARTITIONS=debug,long
CASCADE_SLURM_ACCOUNTING=$accounting
CASCADE_SLURM_MEMORY=$memory
EOF

  dd if=/dev/urandom of="$dir/munge/munge.key" bs=1024 count=1 status=none
  chmod 400 "$dir/munge/munge.key"

  # AccountingStoragePass names the munge socket for connections to slurmdbd
  # (AuthInfo's socket is not used for them).
  local acct="AccountingStorageType=accounting_storage/none"
  if [ "$accounting" = yes ]; then
    acct="AccountingStorageType=accounting_storage/slurmdbd
AccountingStorageHost=127.0.0.1
AccountingStoragePort=$dbd_port
AccountingStoragePass=$dir/munge/munge.sock
AccountingStorageEnforce=associations"
  fi

  local track="ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherParams=OverMemoryKill"
  if [ $memory = cgroup ]; then
    track="ProctrackType=proctrack/cgroup
TaskPlugin=task/cgroup"
  fi

  cat >"$dir/slurm.conf" <<EOF
# Written by scripts/slurm.sh: a single-node test cluster on loopback.
ClusterName=cascade
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$dir/munge/munge.sock
CredType=cred/munge
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
TmpFS=$dir/tmp
PlugStackConfig=$dir/plugstack.conf
MpiDefault=none
SwitchType=switch/none
$track
JobAcctGatherType=jobacct_gather/linux
JobAcctGatherFrequency=task=1
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
DefMemPerCPU=128
SchedulerType=sched/backfill
MaxJobCount=20000
MaxArraySize=20001
MinJobAge=$min_job_age
KillWait=2
InactiveLimit=0
ReturnToService=2
SlurmdParameters=config_overrides
SlurmctldTimeout=60
SlurmdTimeout=60
MessageTimeout=10
JobCompType=jobcomp/none
$acct
NodeName=$node NodeHostname=$host NodeAddr=127.0.0.1 CPUs=8 RealMemory=8192 State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
PartitionName=long Nodes=ALL MaxTime=INFINITE State=UP
EOF
  : >"$dir/plugstack.conf"
  cat >"$dir/cgroup.conf" <<EOF
CgroupPlugin=cgroup/v1
CgroupMountpoint=/sys/fs/cgroup
IgnoreSystemd=yes
ConstrainRAMSpace=yes
ConstrainSwapSpace=yes
EOF

  if [ "$accounting" = yes ]; then
    openssl rand -hex 16 >"$dir/db.pass" 2>/dev/null || head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$dir/db.pass"
    chmod 600 "$dir/db.pass"
    cat >"$dir/slurmdbd.conf" <<EOF
AuthType=auth/munge
AuthInfo=socket=$dir/munge/munge.sock
DbdHost=$host
DbdAddr=127.0.0.1
DbdPort=$dbd_port
SlurmUser=root
PidFile=$dir/slurmdbd.pid
LogFile=$dir/log/slurmdbd.log
DebugLevel=info
StorageType=accounting_storage/mysql
StorageHost=127.0.0.1
StoragePort=$db_port
StorageUser=slurm
StoragePass=$(cat "$dir/db.pass")
StorageLoc=slurm_acct_db
EOF
    chmod 600 "$dir/slurmdbd.conf"
  fi
}

start_munge() {
  local dir=$1
  munged --force --num-threads=10 --socket="$dir/munge/munge.sock" --key-file="$dir/munge/munge.key" \
    --pid-file="$dir/munge/munged.pid" --log-file="$dir/log/munged.log" \
    --seed-file="$dir/munge/munged.seed" ||
    die "munged did not start; see $dir/log/munged.log"
  wait_for munge --socket="$dir/munge/munge.sock" -n </dev/null || die "munged does not answer on $dir/munge/munge.sock"
}

# install_mariadb DIR makes MariaDB's system tables in DIR/mysql/data.
# mariadb-install-db runs the server in bootstrap mode, which writes Aria
# tables: the same code that has segfaulted under a loaded test run (see
# start_slurmdbd). Its failure has been seen once, with its log lost in a
# test's temporary directory; so its log is printed, and it runs once more
# on an empty directory, as start_slurmdbd restarts a crashed server. A
# second failure fails.
install_mariadb() {
  local dir=$1 attempt
  for attempt in 1 2; do
    rm -rf "$dir/mysql/data"
    mkdir -p "$dir/mysql/tmp"
    mariadb-install-db --no-defaults --datadir="$dir/mysql/data" --tmpdir="$dir/mysql/tmp" --user=root \
      --auth-root-authentication-method=socket --skip-test-db >"$dir/log/mariadb-install.log" 2>&1 && return 0
    tail_log "$dir/log/mariadb-install.log"
    df -h "$dir" >&2 || true
    [ $attempt = 1 ] && log "mariadb-install-db failed (its log and the disk's free space above); once more on an empty data directory"
  done
  die "mariadb-install-db failed twice; see $dir/log/mariadb-install.log"
}

start_mariadb() {
  local dir=$1 db_port
  db_port=$(sed -n 's/^db=//p' "$dir/ports")
  mkdir -p "$dir/mysql"
  [ -d "$dir/mysql/data/mysql" ] || install_mariadb "$dir"
  # setsid: MariaDB's own process group, so a signal to the caller's group
  # does not reach it before "down" stops it in order.
  # --tmpdir: its temporary files (Aria's on-disk internal tables among
  # them) in the cluster's directory, apart from /tmp, which a test run
  # churns and the other clusters' servers share, and gone with the cluster.
  mkdir -p "$dir/mysql/tmp"
  setsid /usr/sbin/mariadbd --no-defaults --user=root --datadir="$dir/mysql/data" --tmpdir="$dir/mysql/tmp" \
    --socket="$dir/mysql/mysql.sock" --pid-file="$dir/mysql/mariadbd.pid" \
    --port="$db_port" --bind-address=127.0.0.1 --skip-name-resolve \
    --log-error="$dir/log/mariadbd.log" --innodb-buffer-pool-size=32M \
    --innodb-lock-wait-timeout=900 </dev/null >/dev/null 2>&1 &
  wait_for mariadb-admin --no-defaults --socket="$dir/mysql/mysql.sock" -uroot ping || {
    tail_log "$dir/log/mariadbd.log"
    die "MariaDB did not start; see $dir/log/mariadbd.log"
  }
  mariadb --no-defaults --socket="$dir/mysql/mysql.sock" -uroot <<EOF || die "cannot create MariaDB user slurm"
CREATE USER IF NOT EXISTS 'slurm'@'127.0.0.1' IDENTIFIED BY '$(cat "$dir/db.pass")';
GRANT ALL ON slurm_acct_db.* TO 'slurm'@'127.0.0.1';
EOF
}

# dbd_ready DIR succeeds when slurmdbd answers, or when MariaDB has died
# (so that the caller stops waiting at once and sees which).
dbd_ready() {
  SLURM_CONF=$1/slurm.conf sacctmgr -n list cluster >/dev/null 2>&1 || ! alive "$(pid_of "$1/mysql/mariadbd.pid")"
}

# tail_log FILE prints a log's last lines to stderr, so that a failure's
# cause is in the caller's output (a test's temporary directory is gone
# once it ends).
tail_log() {
  [ -s "$1" ] || return 0
  log "last lines of $1:"
  tail -n 25 "$1" | sed 's/^/  /' >&2
}

start_slurmdbd() {
  local dir=$1 restarted=no
  SLURM_CONF=$dir/slurm.conf slurmdbd || die "slurmdbd did not start; see $dir/log/slurmdbd.log"
  while :; do
    wait_for dbd_ready "$dir" || { tail_log "$dir/log/slurmdbd.log"; die "slurmdbd does not answer; see $dir/log/slurmdbd.log"; }
    alive "$(pid_of "$dir/mysql/mariadbd.pid")" && break
    # MariaDB 10.11 (Debian 12's) has died here under a loaded test run:
    # a segfault in ha_maria::drop_table (an Aria internal temporary
    # table) while slurmdbd created its tables. Not ours to fix: start it
    # again once, as the packaged service's Restart=on-abort would, and
    # slurmdbd with it (it gives up on a database that went away); say so
    # with its log; a second death fails.
    tail_log "$dir/log/mariadbd.log"
    [ "$restarted" = no ] || die "MariaDB died again while slurmdbd set up; see $dir/log/mariadbd.log"
    restarted=yes
    log "MariaDB died while slurmdbd set up its tables (its log above); starting both once more"
    stop_pid "$dir/slurmdbd.pid" slurmdbd # it gives up on a database that went away
    start_mariadb "$dir"
    SLURM_CONF=$dir/slurm.conf slurmdbd || die "slurmdbd did not start; see $dir/log/slurmdbd.log"
  done
  if ! SLURM_CONF=$dir/slurm.conf sacctmgr -n -P list cluster format=cluster | grep -qx cascade; then
    SLURM_CONF=$dir/slurm.conf sacctmgr -i add cluster cascade >&2
  fi
  # An account for the tests' --account option; root may use it.
  if ! SLURM_CONF=$dir/slurm.conf sacctmgr -n -P list account format=account | grep -qx cascade; then
    SLURM_CONF=$dir/slurm.conf sacctmgr -i add account cascade cluster=cascade >&2
    SLURM_CONF=$dir/slurm.conf sacctmgr -i add user root account=cascade cluster=cascade >&2
  fi
}

start_ctld() {
  local dir=$1
  SLURM_CONF=$dir/slurm.conf slurmctld || die "slurmctld did not start; see $dir/log/slurmctld.log"
  wait_for env SLURM_CONF="$dir/slurm.conf" scontrol ping ||
    die "slurmctld does not answer; see $dir/log/slurmctld.log"
  SLURM_CONF=$dir/slurm.conf scontrol ping | grep -q UP || die "slurmctld is not UP; see $dir/log/slurmctld.log"
}

node_idle() {
  local state
  state=$(SLURM_CONF=$1/slurm.conf sinfo -h -N -o %T 2>/dev/null | head -1)
  [ "$state" = idle ] || [ "$state" = mixed ] || [ "$state" = allocated ]
}

up() {
  local dir="" accounting=yes min_job_age=30 cgroups=yes
  for a in "$@"; do
    case $a in
      --no-accounting) accounting=no ;;
      --no-cgroups) cgroups=no ;;
      --min-job-age=*) min_job_age=${a#*=} ;;
      -*) die "unknown option $a" ;;
      *) dir=$a ;;
    esac
  done
  install
  [ -n "$dir" ] || dir=$(mktemp -d /tmp/cascade-slurm.XXXXXX)
  mkdir -p "$dir"
  dir=$(cd "$dir" && pwd)
  # A Unix socket path must fit in 108 bytes.
  [ ${#dir} -le 80 ] || die "directory path too long for a socket: $dir"
  [ ! -e "$dir/slurm.conf" ] || die "$dir already holds a cluster; use start-ctld, or down first"
  write_configs "$dir" "$accounting" "$min_job_age" "$cgroups"
  start_munge "$dir"
  if [ "$accounting" = yes ]; then
    start_mariadb "$dir"
    start_slurmdbd "$dir"
  fi
  start_ctld "$dir"
  SLURM_CONF=$dir/slurm.conf slurmd -N "$(node_of "$dir")" || die "slurmd did not start; see $dir/log/slurmd.log"
  # Minutes on a machine loaded many times over (test runs in parallel).
  wait_secs=240 wait_for node_idle "$dir" || {
    SLURM_CONF=$dir/slurm.conf sinfo -N -l >&2 || true
    die "the node did not become idle; see $dir/log/slurmd.log and slurmctld.log"
  }
  log "cluster up in $dir (accounting: $accounting, memory limits: $(sed -n 's/^CASCADE_SLURM_MEMORY=//p' "$dir/cluster.env"))"
  env_of "$dir"
}

node_of() { sed -n 's/^CASCADE_SLURM_NODE=//p' "$1/cluster.env"; }

env_of() {
  [ -f "$1/cluster.env" ] || die "$1 holds no cluster"
  sed 's/^/export /' "$1/cluster.env"
}

stop_ctld() {
  local dir=$1 pid
  pid=$(pid_of "$dir/slurmctld.pid")
  alive "$pid" || return 0
  SLURM_CONF=$dir/slurm.conf scontrol shutdown slurmctld >/dev/null 2>&1 || true
  wait_secs=30 wait_for bash -c "! kill -0 $pid" || stop_pid "$dir/slurmctld.pid" slurmctld
}

# stepds prints the pids of slurmstepd processes of this cluster's jobs:
# they outlive slurmd by design, and carry its SLURM_CONF.
stepds() {
  local dir=$1 p
  for p in /proc/[0-9]*; do
    [ "$(cat "$p/comm" 2>/dev/null)" = slurmstepd ] || continue
    tr '\0' '\n' <"$p/environ" 2>/dev/null | grep -qx "SLURM_CONF=$dir/slurm.conf" && echo "${p#/proc/}"
  done
  return 0
}

descendants() {
  local c
  for c in $(ps -o pid= --ppid "$1"); do
    echo "$c"
    descendants "$c"
  done
}

down() {
  local dir=${1:?usage: slurm.sh down DIR} pid
  [ -f "$dir/slurm.conf" ] || die "$dir holds no cluster"
  dir=$(cd "$dir" && pwd)
  export SLURM_CONF=$dir/slurm.conf
  if alive "$(pid_of "$dir/slurmctld.pid")"; then
    scancel --user="$(id -un)" >/dev/null 2>&1 || true
    wait_secs=30 wait_for bash -c '[ -z "$(squeue -h -t R,CG,S -o %i 2>/dev/null)" ]' ||
      log "jobs still running after scancel; stopping anyway"
    scontrol shutdown >/dev/null 2>&1 || true
  fi
  stop_ctld "$dir"
  stop_pid "$dir/slurmd.pid" slurmd
  # Left only when the controller could not cancel the jobs: take each
  # step daemon down with the job processes under it.
  for pid in $(stepds "$dir"); do
    log "killing job step daemon $pid and its processes"
    kill -KILL "$pid" $(descendants "$pid") 2>/dev/null || true
  done
  stop_pid "$dir/slurmdbd.pid" slurmdbd
  stop_pid "$dir/mysql/mariadbd.pid" mariadbd
  stop_pid "$dir/munge/munged.pid" munged
  # slurmd leaves its (empty) cgroup directories behind.
  local node cg
  node=$(node_of "$dir")
  for cg in /sys/fs/cgroup/*/slurm_"$node"; do
    if [ -d "$cg" ]; then find "$cg" -depth -type d -exec rmdir {} + 2>/dev/null || true; fi
  done
  log "cluster in $dir stopped"
}

cmd=${1:-}
shift || true
case $cmd in
  install) install ;;
  up) up "$@" ;;
  env) env_of "${1:?usage: slurm.sh env DIR}" ;;
  down) down "$@" ;;
  stop-ctld) stop_ctld "$(cd "${1:?usage: slurm.sh stop-ctld DIR}" && pwd)" ;;
  start-ctld) start_ctld "$(cd "${1:?usage: slurm.sh start-ctld DIR}" && pwd)" ;;
  *)
    sed -n '2,/^set -e/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//' >&2
    exit 2
    ;;
esac
