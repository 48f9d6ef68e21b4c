#!/usr/bin/env bash
# Runs docs/sweeps.md's Slurm job-array recipe for real, byte for byte: a
# one-node Slurm cluster (munged, slurmctld, slurmd) sized from this machine,
# the docs' sbatch script and submit commands exactly as printed (the submit
# command sizes --cpus-per-task from the node), then a byte-for-byte
# comparison of the merged sweep with a one-machine `qsim sweep` of the same
# grid. The wait is bounded: an array that stays pending (a task asking for
# more CPUs than a node has) fails with the queue's state and reasons shown.
#
# Needs root. The daemons run in a private network namespace, so they can
# listen only on its loopback; they are stopped on exit, whatever happens.
# Usage: .ci/slurm-test.sh [QSIM_BINARY]   (default target/debug/qsim)
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
qsim_bin=$(realpath "${1:-target/debug/qsim}")

if [[ "${QSIM_SLURM_INSIDE:-}" != 1 ]]; then
    if [[ $EUID -ne 0 ]]; then
        echo "slurm-test: needs root (starts munged, slurmctld and slurmd)" >&2
        exit 1
    fi
    if ! dpkg -s slurmctld slurmd slurm-client munge iproute2 >/dev/null 2>&1; then
        apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq slurmctld slurmd slurm-client munge iproute2 >/dev/null
    fi
    QSIM_SLURM_INSIDE=1 exec unshare --net "$0" "$qsim_bin"
fi

ip link set lo up
# getaddrinfo(AI_ADDRCONFIG), which the daemons use to bind, ignores
# 127.0.0.1 itself; a second loopback address makes IPv4 count as configured.
ip addr add 127.0.0.2/8 dev lo
work=$(mktemp -d /tmp/qsim-slurm.XXXXXX)
chmod 700 "$work"
started=$(date +%s)

stop_daemons() {
    local status=$?
    for p in slurmd slurmctld munged; do
        if [[ -s "$work/$p.pid" ]]; then
            kill "$(cat "$work/$p.pid")" 2>/dev/null || true
        fi
    done
    # Give them a moment to exit before removing their files.
    for _ in 1 2 3 4 5 6 7 8 9 10; do
        local alive=0
        for p in slurmd slurmctld munged; do
            if [[ -s "$work/$p.pid" ]] && kill -0 "$(cat "$work/$p.pid")" 2>/dev/null; then
                alive=1
            fi
        done
        [[ $alive == 0 ]] && break
        sleep 0.5
    done
    if [[ $status -ne 0 ]]; then
        echo "slurm-test: FAILED; logs follow" >&2
        tail -n 30 "$work"/*.log "$work"/run/*.out >&2 2>/dev/null || true
    fi
    rm -rf "$work"
}
trap stop_daemons EXIT

# munge: own key, socket and files, so nothing in /etc or /run is touched.
mungekey --create --keyfile="$work/munge.key" --force
chmod 600 "$work/munge.key"
munged --force --key-file="$work/munge.key" --socket="$work/munge.sock" \
    --pid-file="$work/munged.pid" --log-file="$work/munged.log" --seed-file="$work/munge.seed"

mkdir -p "$work/state" "$work/spool" "$work/bin" "$work/run"
export SLURM_CONF=$work/slurm.conf
cat >"$SLURM_CONF" <<EOF
ClusterName=qsimci
SlurmctldHost=localhost(127.0.0.1)
SlurmUser=root
AuthType=auth/munge
AuthInfo=socket=$work/munge.sock
CredType=cred/munge
StateSaveLocation=$work/state
SlurmdSpoolDir=$work/spool
SlurmctldPidFile=$work/slurmctld.pid
SlurmdPidFile=$work/slurmd.pid
SlurmctldLogFile=$work/slurmctld.log
SlurmdLogFile=$work/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SwitchType=switch/none
MpiDefault=none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/none
ReturnToService=2
NodeName=localhost NodeAddr=127.0.0.1 CPUs=$(nproc) State=UNKNOWN
PartitionName=ci Nodes=localhost Default=YES MaxTime=INFINITE State=UP
EOF
slurmctld -f "$SLURM_CONF"
slurmd -f "$SLURM_CONF" -N localhost

wait_for() { # seconds, description, command...
    local limit=$1 what=$2
    shift 2
    local t0=$SECONDS
    until "$@" >/dev/null 2>&1; do
        if ((SECONDS - t0 > limit)); then
            echo "slurm-test: timed out after ${limit}s waiting for $what" >&2
            return 1
        fi
        sleep 0.5
    done
}
wait_for 20 "the node to be idle" bash -c 'sinfo -h -N -o %t | grep -qx idle'
echo "slurm-test: cluster up in $(($(date +%s) - started)) s"

# The docs' recipe, in a copy of the models, with `qsim` on the PATH.
ln -s "$qsim_bin" "$work/bin/qsim"
export PATH=$work/bin:$PATH
cp -r "$repo/models" "$work/run/"
cd "$work/run"
awk '/^```sh$/ {inblock = 1; n = 0; next}
     /^```$/   {inblock = 0; next}
     inblock && n++ == 0 && /^#!\/bin\/bash/ {take = 1}
     inblock && take {print}
     !inblock {take = 0}' "$repo/docs/sweeps.md" >sweep.docs.sbatch
# The submit commands: the whole sh block that runs `sbatch --parsable`.
submit=$(awk '/^```sh$/ {inblock = 1; buf = ""; next}
              /^```$/   {if (inblock && buf ~ /sbatch --parsable/) printf "%s", buf; inblock = 0; next}
              inblock   {buf = buf $0 "\n"}' "$repo/docs/sweeps.md")
grep -q 'sbatch --parsable' <<<"$submit" || { echo "slurm-test: no submit commands found" >&2; exit 1; }
# The script is submitted as the docs print it: the file name the submit
# command uses, the docs' text unchanged.
script=$(grep -o 'sbatch --parsable[^)]* \([A-Za-z0-9_.]*\.sbatch\)' <<<"$submit" | grep -o '[A-Za-z0-9_.]*\.sbatch$' | head -n 1)
cp sweep.docs.sbatch "$script"
array=$(sed -n 's/^#SBATCH --array=0-\([0-9]*\)$/\1/p' "$script")
n=$(sed -n 's/^N=\([0-9]*\)$/\1/p' "$script")
[[ -n $array && -n $n && $((array + 1)) == "$n" ]] || { echo "slurm-test: the docs' script has no matching --array=0-(N-1) and N=" >&2; exit 1; }
model=$(grep -o 'models/[A-Za-z0-9_]*\.toml' "$script" | head -n 1)
mapfile -t vary < <(grep -o -- '--vary [^ ]*' "$script" | sed 's/^--vary //')
mapfile -t length < <(grep -oE -- '--(replications|jobs|time) [^ ]*' "$script" | tr ' ' '\n')
merged=$(grep -o -- "--output [^ ']*" <<<"$submit" | head -n 1 | sed 's/^--output //')

# What a user sees of a stuck array: every job's state and the reason it
# waits, and what Slurm recorded of the finished ones.
show_queue() {
    echo "slurm-test: squeue:" >&2
    squeue -a -o '%.14i %.9T %.6C %.10M %R' >&2 || true
    echo "slurm-test: sacct:" >&2
    sacct -a -X -o JobID,State,ExitCode,AllocCPUS,Reason 2>&1 | head -n 40 >&2 || true
    scontrol show job 2>/dev/null | grep -E 'JobId=|JobState=|NumCPUs=' | head -n 60 >&2 || true
}

bash -euo pipefail -c "$submit"
limit=${QSIM_SLURM_WAIT_S:-600}
if ! wait_for "$limit" "the array and the merge job to finish" bash -c '[[ -z $(squeue -h -o %i) ]]'; then
    show_queue
    exit 1
fi

for ((i = 0; i < n; i++)); do
    [[ -s "shards/$i/points.jsonl" ]] || { echo "slurm-test: shard $i wrote nothing" >&2; show_queue; exit 1; }
done
[[ -s "$merged/summary.json" ]] || { echo "slurm-test: the merge job wrote no $merged/summary.json" >&2; show_queue; exit 1; }

# The same grid on one machine, one thread: the merged bytes must match.
vary_args=()
for v in "${vary[@]}"; do vary_args+=(--vary "$v"); done
qsim sweep "$model" "${vary_args[@]}" "${length[@]}" --threads 1 \
    --output one-machine --no-charts >/dev/null
for f in points.csv points.jsonl summary.json; do
    if ! cmp "one-machine/$f" "$merged/$f"; then
        echo "slurm-test: $merged/$f differs from a one-machine sweep" >&2
        exit 1
    fi
done
# A 1-based array's last task is refused, naming the fix.
if qsim sweep "$model" "${vary_args[@]}" --shard "$n/$n" --output bad 2>err.txt; then
    echo "slurm-test: --shard $n/$n was accepted" >&2
    exit 1
fi
grep -q -- "--array=0-$((n - 1))" err.txt
points=$(($(wc -l <"$merged/points.csv") - 1))
echo "slurm-test: ok: the docs' script verbatim, $n array tasks on $(nproc) CPUs + merge job on Slurm, $points points identical to one machine, $(($(date +%s) - started)) s"
