#!/usr/bin/env bash
# local-cluster.sh: a single-node Slurm cluster on this machine, for tests and trying the
# job-array scripts (specs/cluster.md, "Testing on one Debian 12 box"). Needs root and the
# Debian packages slurmctld slurmd slurm-client munge (scripts/setup.sh --slurm installs them).
#   scripts/slurm/local-cluster.sh start   # munge, slurm.conf, slurmctld, slurmd; waits for idle
#   scripts/slurm/local-cluster.sh stop    # stops the daemons it started
#   scripts/slurm/local-cluster.sh status
# State lives under $KVARENA_SLURM_DIR (default /tmp/kvarena-slurm); slurm.conf goes to
# /etc/slurm/slurm.conf (where the client tools look), and an existing one is kept aside.
set -euo pipefail

DIR=${KVARENA_SLURM_DIR:-/tmp/kvarena-slurm}
CONF=/etc/slurm/slurm.conf

die() { echo "local-cluster: $*" >&2; exit 1; }

start() {
  [[ $(id -u) == 0 ]] || die "needs root (it starts munged, slurmctld and slurmd)"
  for b in munged slurmctld slurmd sinfo; do
    command -v "$b" >/dev/null || die "$b not found: install slurmctld slurmd slurm-client munge (scripts/setup.sh --slurm)"
  done
  mkdir -p "$DIR"/{ctld,d,log}
  # munge: key once, runtime dir readable by all, daemon as user munge.
  if [[ ! -s /etc/munge/munge.key ]]; then
    dd if=/dev/urandom of=/etc/munge/munge.key bs=1024 count=1 status=none
    chown munge:munge /etc/munge/munge.key && chmod 0400 /etc/munge/munge.key
  fi
  install -d -o munge -g munge -m 0755 /run/munge
  if ! pgrep -x munged >/dev/null; then su -s /bin/sh munge -c /usr/sbin/munged; fi

  local host cpus mem
  host=$(hostname -s)
  cpus=$(nproc)
  mem=$(( $(awk '/MemTotal/ {print int($2/1024)}' /proc/meminfo) - 1024 ))
  mkdir -p /etc/slurm
  if [[ -f $CONF && ! -f $DIR/slurm.conf.orig ]] && ! grep -q "^# kvarena local-cluster" "$CONF"; then
    cp "$CONF" "$DIR/slurm.conf.orig"
  fi
  cat >"$CONF" <<CONF
# kvarena local-cluster (scripts/slurm/local-cluster.sh)
ClusterName=kvarena
SlurmctldHost=${host}(127.0.0.1)
SlurmUser=root
AuthType=auth/munge
CredType=cred/munge
StateSaveLocation=$DIR/ctld
SlurmdSpoolDir=$DIR/d
SlurmctldPidFile=$DIR/slurmctld.pid
SlurmdPidFile=$DIR/slurmd.pid
SlurmctldLogFile=$DIR/log/slurmctld.log
SlurmdLogFile=$DIR/log/slurmd.log
ProctrackType=proctrack/pgid
TaskPlugin=task/none
MpiDefault=none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
JobAcctGatherType=jobacct_gather/none
ReturnToService=2
MaxArraySize=1001
NodeName=${host} NodeAddr=127.0.0.1 CPUs=${cpus} RealMemory=${mem} State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
CONF
  pgrep -x slurmctld >/dev/null || slurmctld -c
  pgrep -x slurmd >/dev/null || slurmd
  for _ in $(seq 1 60); do
    state=$(sinfo -h -o %t 2>/dev/null | head -1 || true)
    if [[ $state == idle* || $state == mix* || $state == alloc* ]]; then
      echo "local-cluster: node $host $state ($cpus CPUs)" >&2
      return 0
    fi
    sleep 0.5
  done
  die "the node did not become idle in 30 s (state '${state:-none}'); logs: $DIR/log"
}

stop() {
  pkill -x slurmd 2>/dev/null || true
  pkill -x slurmctld 2>/dev/null || true
  for _ in $(seq 1 20); do
    pgrep -x slurmd >/dev/null || pgrep -x slurmctld >/dev/null || break
    sleep 0.25
  done
  if [[ -f $DIR/slurm.conf.orig ]]; then cp "$DIR/slurm.conf.orig" "$CONF"; fi
}

case ${1:-} in
  start) start ;;
  stop) stop ;;
  status) sinfo 2>&1; squeue 2>&1 ;;
  *) echo "usage: $0 start|stop|status" >&2; exit 2 ;;
esac
