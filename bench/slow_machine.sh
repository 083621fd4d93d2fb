#!/usr/bin/env bash
# Runs a command as on a machine SLOWDOWN times slower than this one (default 2.5: a newcomer's
# machine of our kind compiled that much slower): the command and every process it starts run
# on CORES of this machine's cores (default all) and share a CPU quota of CORES / SLOWDOWN, set
# on a cgroup of their own (the kernel's CFS bandwidth control, cgroup v1 or v2; needs root).
#
# The quota is shared, not per core: work that keeps every core busy (a build, the test suite)
# runs SLOWDOWN times slower, but one busy thread beside idle ones gets up to the whole quota
# (0.8 of a core for 2 cores at 2.5x: only 1.25x slower). For one thread's pace, give --cores 1
# (0.4 of one core). Only the CPU is slowed: the disk and the memory's bandwidth stay as they
# are, so a time measured so is a floor for the slow machine, not its exact figure.
#
# The quota is given per period of PERIOD_MS (default 100, the kernel's own default). Shorter
# periods spread it more evenly but cost work of their own where two processes share it: two
# compilations side by side took 2.9-3.0 times as long as at full pace with 10 ms periods (and
# 15% more CPU), 2.6 times with 100 ms (docs/building.md, 2026-12-07), against the 2.5 asked.
#
# --per-core slows each core instead, as a machine with slower cores is: a spinning process is
# pinned to each core, and the command runs at `nice` NICE beside them (default 1), so that on
# a core it shares it gets the share the scheduler's weights give it, whether one of its threads
# is busy or every core. Here one compilation and two side by side both took 2.45-2.6 times as
# long, but three on two cores only 2.0 times (together they outweigh a spinner), a process
# the command starts at a lower priority (nice 19) next to nothing, and installing packages 5
# times (docs/building.md, 2026-12-07): a second view beside the quota's, not a calibrated one.
# The weights differ by kernel (nice 1 against 0 is 2.25x on Linux's own table): measure one
# compilation as there first. --slowdown and --period-ms do not apply to it.
#
#   bench/slow_machine.sh [--slowdown X] [--cores N] [--period-ms MS] COMMAND [ARGS...]
#   bench/slow_machine.sh --per-core [--nice NICE] [--cores N] COMMAND [ARGS...]
#
# e.g. bench/slow_machine.sh --cores 1 /usr/bin/time -v build/app/oomlab-cli snapshot show FILE
set -euo pipefail

slowdown=2.5
cores=$(nproc)
period_ms=100
quota_options=false  # --slowdown or --period-ms given, which --per-core does not take
per_core=false
nice_level=1
usage() {
    echo "usage: $0 [--slowdown X | --per-core [--nice NICE]] [--cores N] [--period-ms MS]" \
         "COMMAND [ARGS...]" >&2
    exit 2
}
while [[ $# -gt 0 ]]; do
    case "$1" in
        --slowdown | --cores | --period-ms | --nice) [[ $# -ge 2 ]] || usage ;;&
        --slowdown | --period-ms) quota_options=true ;;&
        --slowdown) slowdown="$2"; shift 2 ;;
        --per-core) per_core=true; shift ;;
        --nice) nice_level="$2"; shift 2 ;;
        --cores) cores="$2"; shift 2 ;;
        --period-ms) period_ms="$2"; shift 2 ;;
        -*) usage ;;
        *) break ;;
    esac
done
[[ $# -gt 0 ]] || usage
if ! [[ "$cores" =~ ^[0-9]+$ ]] || ((cores < 1 || cores > $(nproc))); then
    echo "$0: --cores $cores: give a whole number from 1 to $(nproc)" >&2
    exit 2
fi

if ! [[ "$period_ms" =~ ^[0-9]+$ ]] || ((period_ms < 1 || period_ms > 1000)); then
    echo "$0: --period-ms $period_ms: give a whole number from 1 to 1000" >&2
    exit 2
fi

if $per_core; then
    if $quota_options; then
        echo "$0: --per-core slows each core by --nice, not by --slowdown or --period-ms:" \
             "give one or the other" >&2
        exit 2
    fi
    if ! [[ "$nice_level" =~ ^[0-9]+$ ]] || ((nice_level < 1 || nice_level > 19)); then
        echo "$0: --nice $nice_level: give a whole number from 1 to 19" >&2
        exit 2
    fi
    spinners=()
    trap 'kill "${spinners[@]}" 2>/dev/null || true' EXIT
    for ((core = 0; core < cores; core++)); do
        taskset -c "$core" awk 'BEGIN { for (;;); }' &
        spinners+=("$!")
    done
    status=0
    taskset -c "0-$((cores - 1))" nice -n "$nice_level" "$@" || status=$?
    exit "$status"
fi

period_us=$((period_ms * 1000))
quota_us=$(awk -v cores="$cores" -v slowdown="$slowdown" -v period="$period_us" \
    'BEGIN { if (slowdown < 1) exit 1; printf "%d", cores * period / slowdown }') || {
    echo "$0: --slowdown $slowdown: give a number of at least 1" >&2
    exit 2
}

cannot_make() {
    echo "$0: cannot make the cgroup $1: run as root, on a system with the cpu controller" \
         "(cgroup v1's /sys/fs/cgroup/cpu or v2's cpu.max)" >&2
    exit 2
}
if [[ -f /sys/fs/cgroup/cgroup.controllers ]]; then  # cgroup v2
    group="/sys/fs/cgroup/oomlab-slow-$$"
    mkdir "$group" 2>/dev/null || cannot_make "$group"
    echo "$quota_us $period_us" >"$group/cpu.max"
else
    group="/sys/fs/cgroup/cpu/oomlab-slow-$$"
    mkdir "$group" 2>/dev/null || cannot_make "$group"
    echo "$period_us" >"$group/cpu.cfs_period_us"
    echo "$quota_us" >"$group/cpu.cfs_quota_us"
fi
# Removed when the command is done; a process it left behind keeps it until it ends.
trap 'rmdir "$group" 2>/dev/null || true' EXIT

status=0
(
    echo "$BASHPID" >"$group/cgroup.procs"
    exec taskset -c "0-$((cores - 1))" "$@"
) || status=$?
exit "$status"
