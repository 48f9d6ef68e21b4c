#!/usr/bin/env bash
# Runs docs/sweeps.md's Slurm job-array recipe for real: a one-node Slurm
# cluster (munged, slurmctld, slurmd) on this machine, the docs' sbatch
# script with a smaller array and shorter runs, the docs' dependent merge
# job, then a byte-for-byte comparison with a one-machine `qsim sweep` of
# the same grid.
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
NodeName=localhost NodeAddr=127.0.0.1 CPUs=2 State=UNKNOWN
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
submit=$(awk '/^```sh$/ {inblock = 1; next} /^```$/ {inblock = 0; next}
              inblock && /sbatch/ && !/^#/' "$repo/docs/sweeps.md")
grep -q -- '--array=0-15' sweep.docs.sbatch || { echo "slurm-test: no --array=0-15 in the docs' script" >&2; exit 1; }
grep -q '^N=16$' sweep.docs.sbatch || { echo "slurm-test: no N=16 in the docs' script" >&2; exit 1; }
grep -q -- '--no-charts$' sweep.docs.sbatch || { echo "slurm-test: the docs' qsim line does not end in --no-charts" >&2; exit 1; }
grep -q 'sbatch --parsable sweep.sbatch' <<<"$submit" || { echo "slurm-test: no submit commands found" >&2; exit 1; }

# Smaller: 4 shards on 1 CPU each, short runs. Everything else as documented.
sed -e 's/--array=0-15/--array=0-3/' -e 's/^N=16$/N=4/' \
    -e 's/--cpus-per-task=8/--cpus-per-task=1/' \
    -e 's/--no-charts$/--no-charts --jobs 5000 --replications 2/' \
    sweep.docs.sbatch >sweep.sbatch
model=$(grep -o 'models/[A-Za-z0-9_]*\.toml' sweep.sbatch | head -n 1)
mapfile -t vary < <(grep -o -- '--vary [^ ]*' sweep.sbatch | sed 's/^--vary //')
merged=$(grep -o -- "--output [^ ']*" <<<"$submit" | head -n 1 | sed 's/^--output //')

bash -euo pipefail -c "$submit"
wait_for 240 "the array and the merge job to finish" bash -c '[[ -z $(squeue -h -o %i) ]]'

for i in 0 1 2 3; do
    [[ -s "shards/$i/points.jsonl" ]] || { echo "slurm-test: shard $i wrote nothing" >&2; exit 1; }
done
[[ -s "$merged/summary.json" ]] || { echo "slurm-test: the merge job wrote no $merged/summary.json" >&2; exit 1; }

# The same grid on one machine, one thread: the merged bytes must match.
vary_args=()
for v in "${vary[@]}"; do vary_args+=(--vary "$v"); done
qsim sweep "$model" "${vary_args[@]}" --threads 1 --jobs 5000 --replications 2 \
    --output one-machine --no-charts >/dev/null
for f in points.csv points.jsonl summary.json; do
    if ! cmp "one-machine/$f" "$merged/$f"; then
        echo "slurm-test: $merged/$f differs from a one-machine sweep" >&2
        exit 1
    fi
done
# A 1-based array's last task is refused, naming the fix.
if qsim sweep "$model" "${vary_args[@]}" --shard 4/4 --output bad 2>err.txt; then
    echo "slurm-test: --shard 4/4 was accepted" >&2
    exit 1
fi
grep -q -- '--array=0-3' err.txt
points=$(($(wc -l <"$merged/points.csv") - 1))
echo "slurm-test: ok: 4 array tasks + merge job on Slurm, $points points identical to one machine, $(($(date +%s) - started)) s"
