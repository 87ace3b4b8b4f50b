#!/usr/bin/env bash
# Runs fp4sim regress under Slurm on this machine and compares it with mpirun (docs/scale-out.md):
# starts a one-node cluster from Debian's packages (munge, slurmctld, slurmd; scripts/setup.sh
# installs them), runs `srun -n 2 --mpi=pmix fp4sim regress ...`, then `mpirun -n 2 fp4sim regress
# ...` with the same options, and checks that both print the same summary and write the same bytes.
# Then it submits the three examples of scripts/slurm/ with `sbatch --wait -n 2` (small sizes) and
# compares their outputs with one-process runs. Everything it starts is stopped again; the
# cluster's files live in a temporary directory.
#
#   scripts/slurm_check.sh [FP4SIM] [CASES] [SEED]     defaults: build/bin/fp4sim 200000 7
#
# Needs root (the daemons, and a munged if none runs). Not part of CI: starting the daemons takes
# a few seconds, and CI machines may not allow them.
set -euo pipefail
cd "$(dirname "$0")/.."
F=$(realpath "${1:-build/bin/fp4sim}")
CASES=${2:-200000}
SEED=${3:-7}
[ -x "$F" ] || { echo "slurm_check: no fp4sim at $F (build it first)" >&2; exit 1; }
[ "$(id -u)" = 0 ] || { echo "slurm_check: run as root (it starts slurmctld, slurmd and munged)" >&2; exit 1; }
for t in slurmctld slurmd srun sinfo munged mpirun; do
  command -v "$t" >/dev/null || { echo "slurm_check: $t missing (run scripts/setup.sh)" >&2; exit 1; }
done

D=$(mktemp -d /tmp/fp4sim-slurm.XXXXXX)
pids=()
munged_pid=""
cleanup() {
  local rc=$?
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  if [ -n "$munged_pid" ]; then kill "$munged_pid" 2>/dev/null || true; fi
  if [ "$rc" = 0 ]; then rm -rf "$D"; else echo "slurm_check: failed; logs kept in $D" >&2; fi
}
trap cleanup EXIT

# ---- munge: authentication between srun, slurmctld and slurmd ----
if ! munge -n </dev/null >/dev/null 2>&1; then
  mkdir -p /run/munge && chown munge:munge /run/munge && chmod 0755 /run/munge
  mkdir -p /var/log/munge /var/lib/munge && chown munge:munge /var/log/munge /var/lib/munge
  runuser -u munge -- /usr/sbin/munged
  for _ in $(seq 50); do munge -n </dev/null >/dev/null 2>&1 && break; sleep 0.1; done
  munged_pid=$(cat /run/munge/munged.pid 2>/dev/null || true)
fi
munge -n </dev/null | unmunge >/dev/null || { echo "slurm_check: munge does not work" >&2; exit 1; }

# ---- a one-node cluster: this machine as it describes itself (slurmd -C) ----
node=$(slurmd -C | head -n 1)
node_name=$(echo "$node" | sed -n 's/^NodeName=\([^ ]*\).*/\1/p')
mkdir -p "$D/state" "$D/spool"
cat > "$D/slurm.conf" <<EOF
ClusterName=fp4sim
SlurmctldHost=$node_name
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
StateSaveLocation=$D/state
SlurmdSpoolDir=$D/spool
SlurmctldPidFile=$D/slurmctld.pid
SlurmdPidFile=$D/slurmd.pid
SlurmctldLogFile=$D/slurmctld.log
SlurmdLogFile=$D/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=pmix
ReturnToService=2
$node State=UNKNOWN
PartitionName=check Nodes=ALL Default=YES MaxTime=INFINITE State=UP
EOF
export SLURM_CONF="$D/slurm.conf"
slurmctld -D -f "$SLURM_CONF" >"$D/slurmctld.out" 2>&1 & pids+=($!)
slurmd -D -f "$SLURM_CONF" >"$D/slurmd.out" 2>&1 & pids+=($!)
state=""
for _ in $(seq 100); do
  state=$(sinfo -h -o %T 2>/dev/null || true)
  [ "$state" = idle ] && break
  sleep 0.2
done
[ "$state" = idle ] || { echo "slurm_check: the node did not come up (state '$state'); see $D/*.log" >&2; exit 1; }
echo "slurm_check: one-node Slurm up ($(sinfo -h -o '%N %c CPUs %T'), $(srun --version))"

# ---- the same regression under srun and under mpirun ----
args=(regress --cases "$CASES" --seed "$SEED")
t0=$(date +%s.%N)
srun -n 2 --mpi=pmix "$F" "${args[@]}" --out "$D/srun" >"$D/srun.out" 2>"$D/srun.err"
t1=$(date +%s.%N)
OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
  mpirun -n 2 "$F" "${args[@]}" --out "$D/mpirun" >"$D/mpirun.out" 2>"$D/mpirun.err"
t2=$(date +%s.%N)
grep -q "regress: timing ranks=2 " "$D/srun.err" || { echo "slurm_check: srun did not run 2 MPI ranks:" >&2; cat "$D/srun.err" >&2; exit 1; }
grep -q "regress: timing ranks=2 " "$D/mpirun.err" || { echo "slurm_check: mpirun did not run 2 ranks" >&2; exit 1; }
cmp "$D/srun.out" "$D/mpirun.out" || { echo "slurm_check: the summaries differ" >&2; exit 1; }
diff -r "$D/srun" "$D/mpirun" >/dev/null || { echo "slurm_check: the outputs differ" >&2; exit 1; }
cat "$D/srun.out"
grep "regress: timing" "$D/srun.err" | sed 's/^/srun:   /'
grep "regress: timing" "$D/mpirun.err" | sed 's/^/mpirun: /'
printf 'slurm_check: srun -n 2 --mpi=pmix and mpirun -n 2 agree byte for byte (summary, report.json%s); %.1f s vs %.1f s\n' \
  "$([ -d "$D/srun/mismatches" ] && echo ', mismatches/' || true)" "$(echo "$t1 - $t0" | bc)" "$(echo "$t2 - $t1" | bc)"

# ---- the sbatch examples, small, on 2 tasks, each against a one-process run ----
sb() { sbatch --wait --parsable -N 1 -n 2 --ntasks-per-node=2 -o "$D/%x-%j.out" "$@" >/dev/null; }
sb --export=ALL,FP4SIM="$F",OUT="$D/sbatch-regress",CASES="$CASES",SEED="$SEED",SHARD=4096 \
  scripts/slurm/regress.sbatch
diff -r "$D/sbatch-regress" "$D/mpirun" >/dev/null || { echo "slurm_check: regress.sbatch differs from mpirun" >&2; exit 1; }
sb --export=ALL,FP4SIM="$F",OUT="$D/sbatch-whatif.csv",SHAPE="--m 128 --n 256 --k 512" \
  scripts/slurm/whatif.sbatch
"$F" whatif --timing cycle --m 128 --n 256 --k 512 --sweep smem_bytes=65536,131072,196608,229376 \
  --sweep l0a_bytes=32768,65536,98304,131072 --sweep dram_bytes_per_cycle=32,64,128,256 --sweep cores=16,32,64 \
  --out "$D/one-whatif.csv" >/dev/null 2>"$D/one-whatif.err"
cmp "$D/sbatch-whatif.csv" "$D/one-whatif.csv" || { echo "slurm_check: whatif.sbatch differs from one process" >&2; exit 1; }
sb --export=ALL,FP4SIM="$F",OUT="$D/sbatch-study.csv",MODEL=tiny,TOKENS=256,TIMING=cycle \
  scripts/slurm/study.sbatch
"$F" study --model tiny --tokens 256 --timing cycle --out "$D/one-study.csv" >/dev/null 2>"$D/one-study.err"
cmp "$D/sbatch-study.csv" "$D/one-study.csv" || { echo "slurm_check: study.sbatch differs from one process" >&2; exit 1; }
echo "slurm_check: scripts/slurm/{regress,whatif,study}.sbatch under sbatch -n 2: the same bytes as mpirun / one process"
