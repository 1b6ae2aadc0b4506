#!/usr/bin/env bash
# A real Slurm cluster on this machine, for contrib/slurm/dlenv-fleet.sbatch:
#   tests/slurm/slurm_fleet_test.sh DLENV_BINARY SOURCE_DIR
# munged, slurmctld and three slurmd (nodes gpu001-gpu003, all on 127.0.0.1, one port each:
# Debian's slurmd is built without multiple-slurmd support, but `slurmd -N NAME` with a
# NodeName line per node and its own Port= works) run from a temporary directory with their
# own munge key, state and spool; the recipe is submitted with `sbatch --wait`, and
# `dlenv fleet` must see every node. The daemons are stopped on exit. Exit 77 (skipped) with
# the reason when not root or the packages are missing (scripts/install-deps.sh --fleet).
set -uo pipefail
dlenv="$(realpath "$1")"
src="$(realpath "$2")"
skip() { echo "SKIP: $*"; exit 77; }
[[ $(id -u) -eq 0 ]] || skip "needs root (slurmd and munged run as root here)"
for cmd in munged slurmctld slurmd sbatch srun sinfo; do
  command -v "$cmd" >/dev/null ||
    skip "$cmd not installed (Debian packages munge slurmctld slurmd slurm-client: scripts/install-deps.sh --fleet)"
done

tmp="$(mktemp -d "${DLENV_TEST_TMP:-/tmp}/slurm.XXXXXX")"
chmod 700 "$tmp"
pids=()
cleanup() {
  for f in "$tmp"/run/*.pid; do
    [[ -f "$f" ]] && kill "$(cat "$f")" 2>/dev/null
  done
  sleep 0.3
  for f in "$tmp"/run/*.pid; do
    [[ -f "$f" ]] && kill -9 "$(cat "$f")" 2>/dev/null
  done
  if [[ "${KEEP_SLURM_TMP:-}" != 1 ]]; then rm -rf "$tmp"; fi
}
trap cleanup EXIT
fail() {
  echo "FAIL: $*"
  for log in "$tmp"/log/*; do echo "--- $log"; tail -n 20 "$log"; done
  exit 1
}

# Four free TCP ports on 127.0.0.1: slurmctld and one per slurmd.
free_port() {
  local p
  for ((i = 0; i < 200; i++)); do
    p=$((20000 + (RANDOM % 20000)))
    if ! (echo >"/dev/tcp/127.0.0.1/$p") 2>/dev/null && [[ " ${ports[*]:-} " != *" $p "* ]]; then
      echo "$p"
      return
    fi
  done
  return 1
}
ports=()
for _ in 1 2 3 4; do ports+=("$(free_port)") || fail "no free port"; done

mkdir -p "$tmp"/{munge,run,log,state,spool/gpu001,spool/gpu002,spool/gpu003,work}
chmod 700 "$tmp/munge"
head -c 1024 /dev/urandom >"$tmp/munge/munge.key"
chmod 400 "$tmp/munge/munge.key"
munged --force --key-file="$tmp/munge/munge.key" --socket="$tmp/munge/socket" \
  --pid-file="$tmp/run/munged.pid" --log-file="$tmp/log/munged.log" \
  --seed-file="$tmp/munge/seed" || fail "munged did not start"

host="$(hostname -s)"
cat >"$tmp/slurm.conf" <<CONF
ClusterName=dlenvtest
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=${ports[0]}
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$tmp/munge/socket
StateSaveLocation=$tmp/state
SlurmdSpoolDir=$tmp/spool/%n
SlurmctldPidFile=$tmp/run/slurmctld.pid
SlurmdPidFile=$tmp/run/slurmd-%n.pid
SlurmctldLogFile=$tmp/log/slurmctld.log
SlurmdLogFile=$tmp/log/slurmd-%n.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
SchedulerType=sched/builtin
SelectType=select/linear
ReturnToService=2
SlurmdTimeout=30
InactiveLimit=0
NodeName=gpu001 NodeHostname=$host NodeAddr=127.0.0.1 Port=${ports[1]} CPUs=1 State=UNKNOWN
NodeName=gpu002 NodeHostname=$host NodeAddr=127.0.0.1 Port=${ports[2]} CPUs=1 State=UNKNOWN
NodeName=gpu003 NodeHostname=$host NodeAddr=127.0.0.1 Port=${ports[3]} CPUs=1 State=UNKNOWN
PartitionName=test Nodes=gpu[001-003] Default=YES MaxTime=10 State=UP
CONF
export SLURM_CONF="$tmp/slurm.conf"
slurmctld -i || fail "slurmctld did not start"
for node in gpu001 gpu002 gpu003; do
  slurmd -N "$node" || fail "slurmd -N $node did not start"
done
# Up to 20 s for the three nodes to register.
for ((i = 0; i < 100; i++)); do
  idle="$(sinfo -h -N -t idle -o '%N' 2>/dev/null | sort -u | wc -l)"
  [[ "$idle" == 3 ]] && break
  sleep 0.2
done
[[ "$idle" == 3 ]] || fail "the nodes did not become idle: $(sinfo -N 2>&1)"

cd "$tmp/work"
DLENV="$dlenv" REPORTS="$tmp/work/reports" timeout 120 sbatch --wait --nodes=3 \
  --output="$tmp/work/job.out" "$src/contrib/slurm/dlenv-fleet.sbatch" ||
  echo "(sbatch --wait: the job exited non-zero: dlenv fleet found errors or drift on this machine)"
echo "--- the job's output (dlenv fleet reports/):"
cat job.out
ls reports
for node in gpu001 gpu002 gpu003; do
  [[ -s "reports/$node.json" ]] || fail "no report from $node"
done
grep -q "^1 stack across 3 nodes" job.out || fail "dlenv fleet did not see the 3 nodes as one stack"
grep -q "gpu\[001-003\]" job.out || fail "the hostlist gpu[001-003] is missing"
"$dlenv" fleet --json reports >fleet.json
grep -q '"nodes": 3,' fleet.json || fail "dlenv fleet --json: not 3 nodes"
echo "PASS: dlenv fleet saw gpu001, gpu002 and gpu003 through a real Slurm job"
